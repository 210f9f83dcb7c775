//! Development aid: times the pipeline's GMM gradient through C.
//!
//! Environment: `GMMTIME_PARALLEL=1` for the `Config::parallel` build
//! (threads: `OMP_NUM_THREADS`); `GMMTIME_ENTRY=gmm` for the primal;
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
    // GMMTIME_ENTRY=gmm times the primal instead.
    let entry = std::env::var("GMMTIME_ENTRY").unwrap_or_else(|_| "gmm_grad".into());
    let (v, t) = codegen::time(&built, &entry, &args, reps).expect("run");
    let ms = |xs: &[f64]| {
        let mut xs: Vec<f64> = xs.iter().map(|x| x / 1e6).collect();
        xs.sort_by(f64::total_cmp);
        (xs[0], xs[xs.len() / 2], xs[xs.len() - 1])
    };
    let (cpu, wall) = (ms(&t.cpu_ns), ms(&t.wall_ns));
    let value = match v.as_tuple() {
        Some(t) => t[0].to_string(),
        None => v.to_string(),
    };
    // Wall-clock too: a parallel build's (OMP_NUM_THREADS) CPU time adds
    // up its threads'.
    println!(
        "value {value} cpu ms min {:.1} median {:.1} max {:.1} wall ms min {:.1} median {:.1} max {:.1}",
        cpu.0, cpu.1, cpu.2, wall.0, wall.1, wall.2
    );
}
