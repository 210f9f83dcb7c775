//! Development aid: prints the optimized gradient program of a file (default: GMM).
fn main() {
    let path = std::env::args()
        .nth(1)
        .unwrap_or_else(|| "fixtures/gmm/program.ad".into());
    let text = std::fs::read_to_string(&path).expect("read");
    let m = syntax::compile(syntax::SourceFile {
        name: path.clone(),
        text,
    })
    .expect("compile");
    let def = m.entry(None).expect("an entry");
    let wrt =
        (def.name.as_str() == "gmm").then(|| vec!["alphas".into(), "means".into(), "icf".into()]);
    let g = reverse::gradient(&m, def, &reverse::Config { wrt }).expect("grad");
    let o = optimize::optimize(&g, &optimize::Config::default()).expect("opt");
    println!("{}", syntax::print::module(&o));
}
