//! The hand-written det and ba baselines (baseline/det.c, baseline/ba.c)
//! against the generated code of gradbench/det.ad and gradbench/ba.ad,
//! entry by entry at random inputs (to 1e-9 relative), and against central
//! differences of the evaluator's primal (an oracle that shares no
//! derivative code with either); then through the harness, as `cargo
//! xtask bench codegen` runs them. Nothing here looks at times.

use std::path::{Path, PathBuf};
use std::process::Command;

use bench::{BenchConfig, Kernel, run};
use codegen::{Built, Config};
use semantics::Value;

fn scratch(name: &str) -> PathBuf {
    let dir = PathBuf::from(env!("CARGO_TARGET_TMPDIR"))
        .join(format!("bench-{name}-{}", std::process::id()));
    std::fs::create_dir_all(&dir).expect("a scratch directory");
    dir
}

fn build(m: &syntax::Module, dir: &Path) -> Built {
    let cfg = Config::default();
    codegen::build(&codegen::emit(m, &cfg).expect("emits"), dir, &cfg).expect("builds")
}

/// Runs the baseline's `kernel` on `args` (encoded for `primal`'s entry)
/// and returns what it wrote to OUT.
fn baseline_output(
    exe: &Path,
    kernel: &str,
    primal: &Built,
    entry: &str,
    args: &[Value],
) -> Vec<u8> {
    let dir = exe.parent().expect("a directory");
    let (bytes, _) = codegen::encode_args(primal.program.entry(Some(entry)).expect("entry"), args)
        .expect("encodes");
    let (input, out) = (
        dir.join(format!("{kernel}.in")),
        dir.join(format!("{kernel}.out")),
    );
    std::fs::write(&input, bytes).expect("writes the input");
    let status = Command::new(exe)
        .args([
            kernel,
            &input.display().to_string(),
            "1",
            &out.display().to_string(),
        ])
        .output()
        .expect("the baseline runs");
    assert!(status.status.success(), "{kernel}: {status:?}");
    std::fs::read(&out).expect("the baseline's output")
}

fn f64s(bytes: &[u8]) -> Vec<f64> {
    bytes
        .chunks_exact(8)
        .map(|c| f64::from_le_bytes(c.try_into().expect("8 bytes")))
        .collect()
}

fn i64s(bytes: &[u8]) -> Vec<i64> {
    bytes
        .chunks_exact(8)
        .map(|c| i64::from_le_bytes(c.try_into().expect("8 bytes")))
        .collect()
}

fn flat(v: &Value) -> Vec<f64> {
    let mut out = Vec::new();
    difftest::paths::flatten(v, &mut out);
    out
}

/// `a` and `b` agree entry by entry to `rel` of the larger of |b_i| and
/// `floor` (the scale below which cancellation leaves absolute error).
fn assert_close(what: &str, a: &[f64], b: &[f64], rel: f64, floor: f64) {
    assert_eq!(a.len(), b.len(), "{what}: lengths");
    for (i, (x, y)) in a.iter().zip(b).enumerate() {
        assert!(
            (x - y).abs() <= rel * y.abs().max(floor),
            "{what}: entry {i}: {x} against {y}"
        );
    }
}

/// Runs `kernel` through the harness at its sizes and checks that the
/// generated code's value and gradient sums match the baseline's.
fn harness_agrees(kernel: Kernel, dir: &str) {
    let sizes = kernel.sizes.clone();
    let cfg = BenchConfig {
        reps: 5,
        rounds: 1,
        dir: scratch(dir),
        threads: Vec::new(),
        python: None,
        fast: true,
        ..BenchConfig::default()
    };
    let report = run(&[kernel], &cfg, &mut |_| {}).expect("the harness runs");
    for n in sizes {
        let find = |tool: &str| {
            report
                .rows
                .iter()
                .find(|r| r.tool == tool && r.n == n)
                .and_then(|r| r.check)
                .unwrap_or_else(|| panic!("no checked row for {tool} at {n}"))
        };
        let base = find("baseline-c");
        assert!(base.grad_abs > 0.0, "a gradient that is not zero: {base:?}");
        for tool in ["adrev-c", "adrev-c-fast"] {
            let ours = find(tool);
            for (a, b) in [
                (ours.value, base.value),
                (ours.grad_sum, base.grad_sum),
                (ours.grad_abs, base.grad_abs),
            ] {
                assert!(
                    (a - b).abs() <= 1e-9 * b.abs().max(1e-3 * base.grad_abs),
                    "{tool} at {n}: generated {ours:?}, baseline {base:?}"
                );
            }
        }
    }
    let md = report.markdown();
    assert!(
        md.contains("| baseline-c |") && md.contains("| adrev-c-fast |"),
        "{md}"
    );
}

#[test]
fn the_det_baseline_agrees_with_the_generated_gradient_and_finite_differences() {
    let k = bench::det_kernel(&bench::gradient_programs, &[3, 6]).expect("the det kernel");
    let dir = scratch("det");
    let primal = build(&k.primal, &dir.join("primal"));
    let grad = build(&k.grad, &dir.join("grad"));
    let exe = bench::build_baseline(&dir, &Config::default()).expect("the baseline builds");
    let det = k.primal.def("det").expect("det");

    // det.ad's own example: exact in both.
    let example = Value::array(
        [[2.0, -1.0, 0.0], [1.0, 3.0, 2.0], [0.0, 1.0, 4.0]]
            .iter()
            .map(|r| Value::reals(r))
            .collect(),
    );
    let out = f64s(&baseline_output(&exe, "det", &primal, "det", &[example]));
    assert_eq!(
        out,
        [24.0, 10.0, -4.0, 1.0, 4.0, 8.0, -2.0, -2.0, -4.0, 7.0]
    );

    let mut rng = difftest::Rng::new(0xDE7_7E57);
    for ell in [1, 2, 3, 4, 5, 7] {
        let rows: Vec<Vec<f64>> = (0..ell)
            .map(|_| (0..ell).map(|_| rng.range(-1.0, 1.0)).collect())
            .collect();
        let a = Value::array(rows.iter().map(|r| Value::reals(r)).collect());
        let base = f64s(&baseline_output(
            &exe,
            "det",
            &primal,
            "det",
            std::slice::from_ref(&a),
        ));
        let ours = flat(&codegen::run(&grad, &k.grad_entry, &[a]).expect("the gradient runs"));
        let scale = base[1..].iter().fold(0.0_f64, |m, x| m.max(x.abs()));
        assert_close(&format!("det at ell = {ell}"), &ours, &base, 1e-9, scale);
        // Central differences of the evaluator's determinant.
        let h = 1e-6;
        let det_at = |rows: &[Vec<f64>]| {
            let a = Value::array(rows.iter().map(|r| Value::reals(r)).collect());
            semantics::eval_def(&k.primal, det, &[a])
                .expect("the primal evaluates")
                .as_real()
                .expect("a real")
        };
        let fd: Vec<f64> = (0..ell * ell)
            .map(|e| {
                let (mut up, mut down) = (rows.clone(), rows.clone());
                up[e / ell][e % ell] += h;
                down[e / ell][e % ell] -= h;
                (det_at(&up) - det_at(&down)) / (2.0 * h)
            })
            .collect();
        assert_close(
            &format!("det's FD at ell = {ell}"),
            &fd,
            &base[1..],
            1e-6,
            scale.max(1.0),
        );
        assert!(
            (det_at(&rows) - base[0]).abs() <= 1e-12 * scale.max(1.0),
            "det at ell = {ell}: evaluator {} against {}",
            det_at(&rows),
            base[0]
        );
    }
    harness_agrees(k, "det-harness");
}

/// A random bundle-adjustment problem with `n` cameras (the first with no
/// rotation, the program's other branch), `m` points in front of them and
/// `p` observations: `ba_objective`'s arguments.
fn random_ba(rng: &mut difftest::Rng, n: usize, m: usize, p: usize) -> Vec<Value> {
    let cams: Vec<Value> = (0..n)
        .map(|c| {
            let mut cam = vec![0.0; 11];
            for (j, v) in cam.iter_mut().enumerate() {
                *v = match j {
                    0..=2 if c == 0 => 0.0,
                    0..=2 => rng.range(-0.4, 0.4),
                    3..=5 => rng.range(-1.0, 1.0),
                    6 => rng.range(100.0, 300.0),
                    7 | 8 => rng.range(-5.0, 5.0),
                    _ => rng.range(0.0, 0.1),
                };
            }
            Value::reals(&cam)
        })
        .collect();
    let xs: Vec<Value> = (0..m)
        .map(|_| {
            Value::reals(&[
                rng.range(-1.0, 1.0),
                rng.range(-1.0, 1.0),
                rng.range(5.0, 10.0),
            ])
        })
        .collect();
    let w: Vec<f64> = (0..p).map(|_| rng.range(0.5, 1.5)).collect();
    let cam: Vec<Value> = (0..p)
        .map(|i| Value::Int(if i < n { i } else { rng.below(n) } as i64))
        .collect();
    let pt: Vec<Value> = (0..p).map(|_| Value::Int(rng.below(m) as i64)).collect();
    let feats: Vec<Value> = (0..p)
        .map(|_| Value::reals(&[rng.range(-100.0, 100.0), rng.range(-100.0, 100.0)]))
        .collect();
    vec![
        Value::array(cams),
        Value::array(xs),
        Value::reals(&w),
        Value::array(cam),
        Value::array(pt),
        Value::array(feats),
    ]
}

#[test]
fn the_ba_baseline_agrees_with_the_generated_jacobian_and_finite_differences() {
    let k =
        bench::ba_kernel(include_str!("../data/ba1_n49_m7776_p31843.txt")).expect("the ba kernel");
    let dir = scratch("ba");
    let primal = build(&k.primal, &dir.join("primal"));
    let jac = build(&k.grad, &dir.join("grad"));
    let exe = bench::build_baseline(&dir, &Config::default()).expect("the baseline builds");
    let source = {
        let eval = gradbench::evals::eval("ba").expect("the ba eval");
        syntax::compile(syntax::SourceFile {
            name: eval.file.into(),
            text: eval.program.to_string(),
        })
        .expect("compiles")
    };
    let reproj = source.def("reproj").expect("reproj");
    let mut rng = difftest::Rng::new(0xBA_7E57);
    for (n, m, p) in [(1, 1, 1), (2, 3, 5), (3, 4, 12), (4, 6, 20)] {
        let args = random_ba(&mut rng, n, m, p);
        let out = baseline_output(&exe, "ba", &primal, "ba_objective", &args);
        let nnz = 31 * p;
        assert_eq!(out.len(), 8 * (3 * p + 1 + 2 * nnz), "the CSR's size");
        let rows = i64s(&out[..8 * (3 * p + 1)]);
        let cols = i64s(&out[8 * (3 * p + 1)..8 * (3 * p + 1 + nnz)]);
        let vals = f64s(&out[8 * (3 * p + 1 + nnz)..]);
        // GradBench's structure: 15 entries per reprojection row (the
        // camera's 11 columns, the point's 3, the weight's), then one per
        // weight row.
        let index =
            |v: &Value, i: usize| v.as_array().expect("an array")[i].as_int().expect("an int");
        let (wcol, xcol) = (11 * n as i64 + 3 * m as i64, 11 * n as i64);
        for i in 0..p {
            let (c, x) = (index(&args[3], i), index(&args[4], i));
            for r in 0..2 {
                assert_eq!(rows[2 * i + r], (30 * i + 15 * r) as i64);
                let want: Vec<i64> = (0..11)
                    .map(|j| 11 * c + j)
                    .chain((0..3).map(|j| xcol + 3 * x + j))
                    .chain([wcol + i as i64])
                    .collect();
                assert_eq!(&cols[30 * i + 15 * r..30 * i + 15 * r + 15], &want[..]);
            }
            assert_eq!(rows[2 * p + i], (30 * p + i) as i64);
            assert_eq!(cols[30 * p + i], wcol + i as i64);
        }
        assert_eq!(rows[3 * p], nnz as i64);
        // The generated Jacobian: the dense blocks, then the weight
        // derivatives, in the CSR's order.
        let ours = flat(&codegen::run(&jac, &k.grad_entry, &args).expect("the Jacobian runs"));
        let scale = vals.iter().fold(0.0_f64, |s, v| s.max(v.abs()));
        assert_close(&format!("ba at p = {p}"), &ours, &vals, 1e-9, 1e-6 * scale);
        // Central differences of the evaluator's reprojection error of
        // each observation, with respect to its 15 parameters.
        for i in 0..p {
            let (c, x) = (index(&args[3], i) as usize, index(&args[4], i) as usize);
            let row = |v: &Value, j: usize| flat(&v.as_array().expect("an array")[j]);
            let prm: Vec<f64> = row(&args[0], c)
                .into_iter()
                .chain(row(&args[1], x))
                .chain([flat(&args[2])[i]])
                .collect();
            let feat = Value::reals(&row(&args[5], i));
            let err = |prm: &[f64]| {
                flat(
                    &semantics::eval_def(&source, reproj, &[Value::reals(prm), feat.clone()])
                        .expect("reproj evaluates"),
                )
            };
            for j in 0..15 {
                let h = 1e-6 * prm[j].abs().max(1.0);
                let (mut up, mut down) = (prm.clone(), prm.clone());
                up[j] += h;
                down[j] -= h;
                let (eu, ed) = (err(&up), err(&down));
                for r in 0..2 {
                    let fd = (eu[r] - ed[r]) / (2.0 * h);
                    let b = vals[30 * i + 15 * r + j];
                    assert!(
                        (fd - b).abs() <= 1e-6 * b.abs().max(1.0),
                        "ba at p = {p}: observation {i}, row {r}, column {j}: FD {fd} against {b}"
                    );
                }
            }
            assert_eq!(vals[30 * p + i], -2.0 * prm[14]);
        }
    }
    harness_agrees(k, "ba-harness");
}
