//! The benchmark harness on tiny inputs: it runs end to end, and the
//! generated code and the hand-written baseline (an independent oracle:
//! hand-derived gradients) compute the same values and gradients. Nothing
//! here looks at times.

use codegen::bench::{BenchConfig, kernels, run};

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
    assert!(report.svg().starts_with("<svg"));
}
