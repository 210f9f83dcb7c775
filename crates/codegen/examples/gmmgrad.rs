//! Development aid: prints the optimized GMM gradient program.
fn main() {
    let text = std::fs::read_to_string("fixtures/gmm/program.ad").expect("read");
    let m = syntax::compile(syntax::SourceFile {
        name: "gmm.ad".into(),
        text,
    })
    .expect("compile");
    let def = m.def("gmm").expect("gmm");
    let cfg = reverse::Config {
        wrt: Some(vec!["alphas".into(), "means".into(), "icf".into()]),
    };
    let g = reverse::gradient(&m, def, &cfg).expect("grad");
    let o = optimize::optimize(&g, &optimize::Config::default()).expect("opt");
    println!("{}", syntax::print::module(&o));
}
