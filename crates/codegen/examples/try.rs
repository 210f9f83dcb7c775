//! Development aid: compile a program to C, run it on its `-- at` inputs, compare.
fn main() {
    let path = std::env::args().nth(1).expect("path");
    let text = std::fs::read_to_string(&path).expect("read");
    let m = syntax::compile(syntax::SourceFile {
        name: path.clone(),
        text: text.clone(),
    })
    .expect("compile");
    let cfg = codegen::Config::default();
    let c = codegen::emit(&m, &cfg).expect("emit");
    println!("{}", c.source.split("#include \"").nth(1).unwrap_or(""));
    let dir = std::env::temp_dir().join("cg_try");
    let built = codegen::build(&c, &dir, &cfg).expect("build");
    let ex = semantics::Expectations::parse(&text);
    let def = m.entry(None).expect("a definition");
    let inputs = ex.inputs(def).expect("inputs");
    let want = semantics::eval_entry(&m, None, &inputs);
    let got = codegen::run_entry(&built, None, &inputs);
    println!(
        "eval: {:?}\nC:    {:?}",
        want.map(|v| v.to_string()),
        got.map(|v| v.to_string())
    );
}
