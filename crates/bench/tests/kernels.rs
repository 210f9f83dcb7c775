//! The benchmark harness on tiny inputs: it runs end to end, and the
//! generated code and the hand-written baseline (an independent oracle:
//! hand-derived gradients) compute the same values and gradients. Nothing
//! here looks at times.

use bench::{BenchConfig, kernels, run};

#[test]
fn generated_gradients_agree_with_the_hand_written_baseline() {
    let cfg = BenchConfig {
        sizes: vec![1000, 1],
        reps: 5,
        rounds: 1,
        dir: std::path::PathBuf::from(env!("CARGO_TARGET_TMPDIR"))
            .join(format!("bench-{}", std::process::id())),
        threads: Vec::new(),
        python: None,
        fast: false,
        ..BenchConfig::default()
    };
    let ks = kernels().expect("the built-in kernels compile");
    assert_eq!(ks.len(), 5);
    let report = run(&ks, &cfg, &mut |_| {}).expect("the harness runs");
    for k in &ks {
        for n in [1000, 1] {
            let find = |tool: &str| {
                report
                    .rows
                    .iter()
                    .find(|r| r.kernel == k.name && r.n == n && r.tool == tool)
                    .and_then(|r| r.check)
                    .unwrap_or_else(|| panic!("{} at {n}: no checked row for {tool}", k.name))
            };
            let (ours, base) = (find("adrev-c"), find("baseline-c"));
            for (a, b) in [
                (ours.value, base.value),
                (ours.grad_sum, base.grad_sum),
                (ours.grad_abs, base.grad_abs),
            ] {
                assert!(
                    (a - b).abs() <= 1e-12 * b.abs().max(1e-300),
                    "{} at n = {n}: generated {ours:?}, baseline {base:?}",
                    k.name
                );
            }
        }
    }
    let md = report.markdown();
    for k in &ks {
        assert!(md.contains(&format!("| {} | adrev-c |", k.name)), "{md}");
    }
    assert!(report.svg().expect("the plot draws").starts_with("<svg"));
}

#[test]
fn the_gmm_gradient_of_the_pipeline_agrees_with_the_hand_written_one() {
    // fixtures/gmm/program.ad differentiated by reverse mode and the
    // optimizer, compiled to C, against the hand-derived C gradient of
    // baseline/kernels.c (after ADBench's hand-written tool).
    let path =
        std::path::PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../../fixtures/gmm/program.ad");
    let text = std::fs::read_to_string(&path).expect("the GMM fixture");
    let m = syntax::compile(syntax::SourceFile {
        name: "gmm.ad".into(),
        text,
    })
    .expect("compiles");
    let def = m.def("gmm").expect("gmm");
    let wrt = reverse::Config {
        wrt: Some(vec!["alphas".into(), "means".into(), "icf".into()]),
    };
    let g = reverse::gradient(&m, def, &wrt).expect("differentiates");
    let o = optimize::optimize(&g, &optimize::Config::default()).expect("optimizes");
    let entry = o.entry(None).expect("a gradient").name.to_string();
    let kernel = bench::Kernel {
        name: "gmm".into(),
        primal: m.clone(),
        primal_entry: "gmm".into(),
        grad: o,
        grad_entry: entry,
        inputs: bench::Inputs::Gmm { d: 3, k: 4 },
        sizes: vec![25],
        grad_origin: "pipeline".into(),
        variants: Vec::new(),
    };
    agrees_with_the_baseline(kernel, "bench-gmm");
}

/// Runs `kernel` through the harness (in `CARGO_TARGET_TMPDIR/dir`) and
/// checks the generated code's value, gradient sum and sum of absolute
/// values against the hand-written baseline's, to 1e-10 relative.
fn agrees_with_the_baseline(kernel: bench::Kernel, dir: &str) {
    let cfg = BenchConfig {
        reps: 5,
        rounds: 1,
        dir: std::path::PathBuf::from(env!("CARGO_TARGET_TMPDIR")).join(dir),
        threads: Vec::new(),
        python: None,
        fast: false,
        ..BenchConfig::default()
    };
    let report = run(&[kernel], &cfg, &mut |_| {}).expect("the harness runs");
    let find = |tool: &str| {
        report
            .rows
            .iter()
            .find(|r| r.tool == tool)
            .and_then(|r| r.check)
            .unwrap_or_else(|| panic!("no checked row for {tool}"))
    };
    let (ours, base) = (find("adrev-c"), find("baseline-c"));
    assert!(base.grad_abs > 0.0, "a gradient that is not zero: {base:?}");
    for (a, b) in [
        (ours.value, base.value),
        (ours.grad_sum, base.grad_sum),
        (ours.grad_abs, base.grad_abs),
    ] {
        assert!(
            (a - b).abs() <= 1e-10 * b.abs().max(1.0),
            "generated {ours:?}, baseline {base:?}"
        );
    }
}

#[test]
fn the_kmeans_gradient_of_the_pipeline_agrees_with_the_hand_written_one() {
    // gradbench/kmeans.ad differentiated by reverse mode and the optimizer
    // with respect to the centroids, compiled to C, against the
    // hand-derived C gradient of baseline/kernels.c.
    let diff = |m: &syntax::Module, entry: &str, wrt: Option<&[&str]>| {
        let def = m.def(entry).expect("the entry");
        let cfg = reverse::Config {
            wrt: wrt.map(|w| w.iter().map(|s| s.to_string()).collect()),
        };
        let g = reverse::gradient(m, def, &cfg).map_err(|e| e.to_string());
        let o = g.clone().and_then(|g| {
            optimize::optimize(&g, &optimize::Config::default()).map_err(|e| e.to_string())
        });
        (g, o)
    };
    let kernel = bench::kmeans_kernel(&diff, 200, 3, 7).expect("the kmeans kernel");
    agrees_with_the_baseline(kernel, "bench-kmeans");
}
