//! Development aid: times the pipeline's GMM gradient through C.
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
    // GMMTIME_PARALLEL=1: the `Config::parallel` build.
    let c = codegen::Config {
        extra_flags: vec!["-g".into()],
        parallel: std::env::var("GMMTIME_PARALLEL").is_ok_and(|v| v == "1"),
        ..codegen::Config::default()
    };
    let built = codegen::build(
        &codegen::emit(&o, &c).expect("emit"),
        &std::env::temp_dir().join("gmmtime"),
        &c,
    )
    .expect("build");
    let args = codegen::bench::gmm_inputs(10, 25, 10_000);
    let (v, t) = codegen::time(&built, "gmm_grad", &args, 3).expect("run");
    let cpu: Vec<f64> = t.cpu_ns.iter().map(|x| x / 1e6).collect();
    println!(
        "value {} cpu ms {:?}",
        v.as_tuple().map(|t| t[0].to_string()).unwrap_or_default(),
        cpu
    );
}
