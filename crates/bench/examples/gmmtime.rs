//! Development aid: times the pipeline's GMM gradient through C.
//!
//! Environment: `GMMTIME_PARALLEL=1` for the `Config::parallel` build;
//! `GMMTIME_WITHOUT=rule,rule` to optimize without these rules;
//! `GMMTIME_REPS=n` times n calls (3 by default);
//! `GMMTIME_DUMP=file.c` writes the generated C; `GMMTIME_SRC=file.c`
//! builds that C instead (an edited dump: the entry's signature must not
//! change).
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
    let mut oc = optimize::Config::default();
    for name in std::env::var("GMMTIME_WITHOUT")
        .unwrap_or_default()
        .split(',')
    {
        if !name.is_empty() {
            let rule = optimize::RuleName::from_name(name).expect("a rule name");
            oc.rules = oc.rules.without(rule);
        }
    }
    let o = optimize::optimize(&g, &oc).expect("opt");
    // GMMTIME_PARALLEL=1: the `Config::parallel` build.
    let c = codegen::Config {
        extra_flags: vec!["-g".into()],
        parallel: std::env::var("GMMTIME_PARALLEL").is_ok_and(|v| v == "1"),
        ..codegen::Config::default()
    };
    let mut prog = codegen::emit(&o, &c).expect("emit");
    if let Ok(p) = std::env::var("GMMTIME_SRC") {
        prog.source = std::fs::read_to_string(p).expect("src");
    }
    if let Ok(p) = std::env::var("GMMTIME_DUMP") {
        std::fs::write(p, &prog.source).expect("dump");
    }
    let built = codegen::build(&prog, &std::env::temp_dir().join("gmmtime"), &c).expect("build");
    let args = bench::gmm_inputs(10, 25, 10_000);
    let reps = std::env::var("GMMTIME_REPS")
        .ok()
        .and_then(|r| r.parse().ok())
        .unwrap_or(3);
    let (v, t) = codegen::time(&built, "gmm_grad", &args, reps).expect("run");
    let mut cpu: Vec<f64> = t.cpu_ns.iter().map(|x| x / 1e6).collect();
    cpu.sort_by(f64::total_cmp);
    println!(
        "value {} cpu ms min {:.1} median {:.1} max {:.1}",
        v.as_tuple().map(|t| t[0].to_string()).unwrap_or_default(),
        cpu[0],
        cpu[cpu.len() / 2],
        cpu[cpu.len() - 1]
    );
}
