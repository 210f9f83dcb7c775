//! Development aid: reverse-mode gradient of a program through the C backend.
fn main() {
    let path = std::env::args().nth(1).expect("path");
    let text = std::fs::read_to_string(&path).expect("read");
    let m = syntax::compile(syntax::SourceFile {
        name: path.clone(),
        text: text.clone(),
    })
    .expect("compile");
    let def = m.entry(None).expect("a definition");
    let g = reverse::gradient(&m, def, &reverse::Config::default()).expect("gradient");
    println!("{}", syntax::print::module(&g));
    let cfg = codegen::Config::default();
    let c = match codegen::emit(&g, &cfg) {
        Ok(c) => c,
        Err(e) => {
            println!("emit: {e}");
            return;
        }
    };
    if std::env::args().nth(2).is_some() {
        println!("{}", c.source.split("#include \"").nth(1).unwrap_or(""));
    }
    let dir = std::env::temp_dir().join("cg_trygrad");
    let built = codegen::build(&c, &dir, &cfg).expect("build");
    let ex = semantics::Expectations::parse(&text);
    let gdef = g.entry(None).expect("grad def");
    let inputs = ex.inputs(def).expect("inputs");
    let want = semantics::eval_entry(&g, Some(gdef.name.as_str()), &inputs);
    let got = codegen::run_entry(&built, Some(gdef.name.as_str()), &inputs);
    println!(
        "eval: {:?}\nC:    {:?}",
        want.map(|v| v.to_string()),
        got.map(|v| v.to_string())
    );
}
