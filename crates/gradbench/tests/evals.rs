//! Every eval through the tool, each output against an independent oracle:
//! ADBench's expected outputs converted to GradBench's conventions, the
//! reference primals written again in Rust (tests/oracle.rs), closed forms,
//! and central finite differences of the tool's own primal.

use serde_json::{Value as Json, json};

use crate::oracle::{self, assert_all, close, rel_close};
use crate::tool::Tool;

/// The tests' one random number generator, with `n` draws in [0, 1).
struct Draws(testkit::Rng);

impl Draws {
    fn new(seed: u64) -> Draws {
        Draws(testkit::Rng::new(seed))
    }
    fn next(&mut self) -> f64 {
        self.0.unit()
    }
    fn reals(&mut self, n: usize) -> Vec<f64> {
        (0..n).map(|_| self.next()).collect()
    }
}

/// Central differences of a scalar function of the tool at `x`, the input
/// built from x by `make`.
fn fd(
    t: &mut Tool,
    module: &str,
    function: &str,
    x: &[f64],
    make: &dyn Fn(&[f64]) -> Json,
) -> Vec<f64> {
    let h = 1e-6;
    (0..x.len())
        .map(|i| {
            let mut at = |d: f64| {
                let mut y = x.to_vec();
                y[i] += d;
                t.evaluate(module, function, make(&y))
                    .as_f64()
                    .expect("a number")
            };
            (at(h) - at(-h)) / (2.0 * h)
        })
        .collect()
}

#[test]
fn lse_primal_and_gradient() {
    let mut t = Tool::start("lse");
    t.define("lse");
    let x = [0.3, -1.2, 2.5, 0.0, 1.25];
    let make = |x: &[f64]| json!({"x": x});
    let v = t
        .evaluate("lse", "primal", make(&x))
        .as_f64()
        .expect("a number");
    assert!(close(v, oracle::lse(&x), 1e-14), "{v}");
    let g = oracle::reals(&t.evaluate("lse", "gradient", make(&x)));
    // The gradient is softmax x, exactly.
    let softmax: Vec<f64> = x.iter().map(|xi| (xi - oracle::lse(&x)).exp()).collect();
    assert_all("lse gradient", &g, &softmax, 1e-14, close);
    assert_all(
        "lse gradient vs fd",
        &g,
        &fd(&mut t, "lse", "primal", &x, &make),
        1e-7,
        close,
    );
}

#[test]
fn llsq_primal_and_gradient() {
    let mut t = Tool::start("llsq");
    t.define("llsq");
    let x = Draws::new(7).reals(5);
    // n odd puts a t at exactly 0, where s = 0.
    let make = |x: &[f64]| json!({"x": x, "n": 33});
    let v = t
        .evaluate("llsq", "primal", make(&x))
        .as_f64()
        .expect("a number");
    assert!(
        close(v, oracle::llsq(&x, 33), 1e-12),
        "{v} vs {}",
        oracle::llsq(&x, 33)
    );
    let g = oracle::reals(&t.evaluate("llsq", "gradient", make(&x)));
    assert_all(
        "llsq gradient vs fd",
        &g,
        &fd(&mut t, "llsq", "primal", &x, &make),
        1e-6,
        close,
    );
}

#[test]
fn ode_primal_and_gradient_of_the_last_element() {
    let mut t = Tool::start("ode");
    t.define("ode");
    let x = Draws::new(11).reals(6);
    let s = 4;
    let y = oracle::reals(&t.evaluate("ode", "primal", json!({"x": x, "s": s})));
    assert_all("ode primal", &y, &oracle::ode(&x, s), 1e-13, close);
    let g = oracle::reals(&t.evaluate("ode", "gradient", json!({"x": x, "s": s})));
    let h = 1e-6;
    let want: Vec<f64> = (0..x.len())
        .map(|i| {
            let at = |d: f64| {
                let mut z = x.clone();
                z[i] += d;
                *oracle::ode(&z, s).last().expect("n > 0")
            };
            (at(h) - at(-h)) / (2.0 * h)
        })
        .collect();
    assert_all("ode gradient vs fd", &g, &want, 1e-7, close);
}

/// ADBench's `gmm_test` converted to GradBench's convention: ADBench adds
/// the prior P = sum_k (gamma^2 / 2 |Q_k|_F^2 - m sum q_k) and subtracts
/// k C; GradBench subtracts P and adds k C. So its value is ADBench's
/// minus 2 P plus 2 k C, its q gradient ADBench's minus
/// 2 (gamma^2 exp(2 q) - m) and its l gradient ADBench's minus
/// 2 gamma^2 l; alpha and mu are unchanged.
#[test]
fn gmm_matches_adbench_converted_to_gradbench() {
    let text = oracle::data("gmm_test.txt");
    let nums: Vec<f64> = text
        .split_whitespace()
        .map(|w| w.parse().expect("a number"))
        .collect();
    let (d, k) = (2, 3);
    let alpha = nums[3..6].to_vec();
    let mu: Vec<Vec<f64>> = (0..k)
        .map(|i| nums[6 + d * i..8 + d * i].to_vec())
        .collect();
    let icf: Vec<Vec<f64>> = (0..k)
        .map(|i| nums[12 + 3 * i..15 + 3 * i].to_vec())
        .collect();
    let x = vec![nums[21..23].to_vec()];
    let (gamma, m) = (nums[23], nums[24]);
    assert_eq!((gamma, m), (1.0, 0.0));
    let q: Vec<Vec<f64>> = icf.iter().map(|r| r[..2].to_vec()).collect();
    let l: Vec<Vec<f64>> = icf.iter().map(|r| r[2..].to_vec()).collect();
    let input = json!({"d": d, "k": k, "n": 1, "x": x, "m": 0, "gamma": gamma,
                       "mu": mu, "q": q, "l": l, "alpha": alpha});
    let exp = oracle::data("gmm_test.expected.txt");
    let ad_value = oracle::expected_line(&exp, "objective")[0];
    let ad_grad = oracle::expected(&exp, "gradient");
    let prior: f64 = (0..k)
        .map(|i| 0.5 * (q[i].iter().map(|v| (2.0 * v).exp()).sum::<f64>() + l[i][0] * l[i][0]))
        .sum();
    // C for d = 2, m = 0, gamma = 1: N = 3, C = -log Gamma_2(3/2)
    // = -(log(pi) / 2 + log Gamma(3/2) + log Gamma(1)), Gamma(3/2) = sqrt(pi) / 2.
    let pi = std::f64::consts::PI;
    let c = 3.0 * 2.0 * (0.0 - 0.5 * 2f64.ln()) - (0.5 * pi.ln() + (pi.sqrt() / 2.0).ln());
    let value = ad_value - 2.0 * prior + 2.0 * k as f64 * c;
    let mut t = Tool::start("gmm");
    t.define("gmm");
    let v = t
        .evaluate("gmm", "objective", input.clone())
        .as_f64()
        .expect("a number");
    assert!(close(v, value, 1e-12), "{v} vs {value}");
    let g = t.evaluate("gmm", "jacobian", input);
    assert_all(
        "alpha",
        &oracle::reals(&g["alpha"]),
        &ad_grad[0..3],
        1e-12,
        close,
    );
    assert_all("mu", &oracle::reals(&g["mu"]), &ad_grad[3..9], 1e-12, close);
    let want_q: Vec<f64> = (0..k)
        .flat_map(|i| (0..2).map(move |j| (i, j)))
        .map(|(i, j)| ad_grad[9 + 3 * i + j] - 2.0 * (2.0 * q[i][j]).exp())
        .collect();
    assert_all("q", &oracle::reals(&g["q"]), &want_q, 1e-12, close);
    let want_l: Vec<f64> = (0..k)
        .map(|i| ad_grad[9 + 3 * i + 2] - 2.0 * l[i][0])
        .collect();
    assert_all("l", &oracle::reals(&g["l"]), &want_l, 1e-12, close);
}

/// d = 3 (three lower-triangle entries, GradBench's column order) and
/// m = 2 (the prior's m terms and log Gamma at halves of integers): the
/// gradient against central differences of the objective.
#[test]
fn gmm_gradient_matches_finite_differences() {
    let (d, k, n) = (3, 4, 5);
    let mut r = Draws::new(3);
    let rows = |r: &mut Draws, a: usize, b: usize, s: f64| -> Vec<Vec<f64>> {
        (0..a)
            .map(|_| r.reals(b).iter().map(|v| s * (v - 0.5)).collect())
            .collect()
    };
    let x = rows(&mut r, n, d, 4.0);
    let mu = rows(&mut r, k, d, 2.0);
    let q = rows(&mut r, k, d, 1.0);
    let l = rows(&mut r, k, 3, 1.0);
    let alpha = rows(&mut r, 1, k, 1.0).remove(0);
    let flat: Vec<f64> = alpha
        .iter()
        .chain(mu.iter().flatten())
        .chain(q.iter().flatten())
        .chain(l.iter().flatten())
        .copied()
        .collect();
    let make = |v: &[f64]| {
        let split = |off: usize, w: usize| -> Vec<Vec<f64>> {
            (0..k)
                .map(|i| v[off + w * i..off + w * (i + 1)].to_vec())
                .collect()
        };
        json!({"d": d, "k": k, "n": n, "x": x, "m": 2, "gamma": 0.8,
               "alpha": v[..k].to_vec(), "mu": split(k, d), "q": split(k + k * d, d), "l": split(k + 2 * k * d, 3)})
    };
    let mut t = Tool::start("gmm");
    t.define("gmm");
    let g = t.evaluate("gmm", "jacobian", make(&flat));
    let got: Vec<f64> = ["alpha", "mu", "q", "l"]
        .iter()
        .flat_map(|f| oracle::reals(&g[*f]))
        .collect();
    let want = fd(&mut t, "gmm", "objective", &flat, &make);
    assert_all("gmm gradient vs fd", &got, &want, 1e-6, close);
}

#[test]
fn kmeans_cost_and_direction_against_the_closed_form() {
    let mut r = Draws::new(5);
    let points: Vec<Vec<f64>> = (0..40).map(|_| r.reals(3)).collect();
    // GradBench's choice: the last k points are the centroids, so that
    // every centroid has a point.
    let centroids = points[36..].to_vec();
    let input = json!({"points": points, "centroids": centroids});
    let (cost, dir) = oracle::kmeans(&points, &centroids);
    let mut t = Tool::start("kmeans");
    t.define("kmeans");
    let v = t
        .evaluate("kmeans", "cost", input.clone())
        .as_f64()
        .expect("a number");
    assert!(close(v, cost, 1e-13), "{v} vs {cost}");
    let got = oracle::reals(&t.evaluate("kmeans", "dir", input));
    let want: Vec<f64> = dir.into_iter().flatten().collect();
    assert_all("kmeans dir", &got, &want, 1e-12, close);
}

#[test]
fn lstm_matches_adbench() {
    let input: Json = serde_json::from_str(&oracle::data("lstm_l2_c1024.json")).expect("JSON");
    let exp = oracle::data("lstm_l2_c1024.expected.txt");
    let mut t = Tool::start("lstm");
    t.define("lstm");
    let v = t
        .evaluate("lstm", "objective", input.clone())
        .as_f64()
        .expect("a number");
    let want = oracle::expected_line(&exp, "objective")[0];
    assert!(rel_close(v, want, 1e-13), "{v} vs {want}");
    let g = oracle::reals(&t.evaluate("lstm", "jacobian", input));
    let want = oracle::expected(&exp, "gradient");
    // Zeros are exact; the rest to 1e-9 of their size.
    assert_all("lstm gradient", &g, &want, 1e-9, |a, b, tol| {
        (a - b).abs() <= tol * a.abs().max(b.abs()) + 1e-18
    });
}

#[test]
fn ba_matches_adbench() {
    let input: Json = serde_json::from_str(&oracle::data("ba_test.json")).expect("JSON");
    let exp = oracle::data("ba_test.expected.txt");
    let (n, m, p) = (2, 10, 10);
    let mut t = Tool::start("ba");
    t.define("ba");
    let out = t.evaluate("ba", "objective", input.clone());
    let e = oracle::reals(&out["reproj_error"]["elements"]);
    assert_all(
        "reprojection error",
        &e,
        &[
            oracle::expected_key(&exp, "reproj_err[2i]="),
            oracle::expected_key(&exp, "reproj_err[2i+1]="),
        ],
        1e-12,
        close,
    );
    assert_eq!(out["reproj_error"]["repeated"], p);
    let w = out["w_err"]["element"].as_f64().expect("a number");
    assert!(close(w, oracle::expected_key(&exp, "w_err[i]="), 1e-12));
    assert_eq!(out["w_err"]["repeated"], p);
    let j = t.evaluate("ba", "jacobian", input);
    let vals = oracle::reals(&j["vals"]);
    let want = oracle::expected(&exp, "vals");
    assert_eq!(want.len(), 310);
    // The first observation's two rows, then the last weight's derivative.
    assert_all("jacobian vals", &vals[..30], &want[..30], 1e-12, close);
    assert!(
        close(vals[30], want[309], 1e-12),
        "{} vs {}",
        vals[30],
        want[309]
    );
    // CSR: 15 entries per reprojection row, one per weight row.
    let rows: Vec<f64> = oracle::reals(&j["rows"]);
    let want_rows: Vec<f64> = (0..30)
        .map(|r| {
            if r <= 2 * p {
                15 * r
            } else {
                30 * p + r - 2 * p
            }
        })
        .chain([31 * p])
        .map(|v| v as f64)
        .collect();
    assert_eq!(rows, want_rows);
    let cols = oracle::reals(&j["cols"]);
    let row: Vec<f64> = (0..11)
        .chain([11 * n, 11 * n + 1, 11 * n + 2, 11 * n + 3 * m])
        .map(|v| v as f64)
        .collect();
    assert_eq!(&cols[..15], &row[..]);
    assert_eq!(&cols[15..30], &row[..]);
    assert_eq!(cols[30], (11 * n + 3 * m + p - 1) as f64);
}

/// ADBench's hand tests: residuals, and the Jacobian given column-major,
/// put in GradBench's rows.
fn ht_case(t: &mut Tool, input: &str, expected: &str, ncols: usize) {
    let input: Json = serde_json::from_str(&oracle::data(input)).expect("JSON");
    let exp = oracle::data(expected);
    let v = oracle::reals(&t.evaluate("ht", "objective", input.clone()));
    assert_all(
        "ht objective",
        &v,
        &oracle::expected(&exp, "objective"),
        1e-12,
        close,
    );
    let j = t.evaluate("ht", "jacobian", input);
    let rows = j.as_array().expect("rows");
    assert_eq!(rows.len(), v.len());
    let colmajor = oracle::expected(&exp, "jacobian_colmajor");
    let nrows = v.len();
    let want: Vec<f64> = (0..nrows)
        .flat_map(|r| (0..ncols).map(move |c| (r, c)))
        .map(|(r, c)| colmajor[c * nrows + r])
        .collect();
    assert_all("ht jacobian", &oracle::reals(&j), &want, 1e-12, close);
}

/// One define for both variants: compiling ht's four entries is the
/// slowest define of all (about 20 s in a dev build).
#[test]
fn ht_simple_and_complicated_match_adbench() {
    let mut t = Tool::start("ht");
    t.define("ht");
    ht_case(&mut t, "ht_test.json", "hand_test.expected.txt", 26);
    ht_case(
        &mut t,
        "ht_complicated.json",
        "hand_complicated.expected.txt",
        28,
    );
}

/// Issue 16: ht's `define` is cc over its four entries' C, and cc's time
/// grows with the C's size (docs/gradbench.md, "Where ht's define goes").
/// The bounds are about 1.3 times the sizes of 2026-12-03; the largest
/// entry was 484 KB before its `us` columns became a per-point `jacob`.
/// `ht_complicated` is 82 KB since its corners are one loop
/// (`corner_vertices`), 90 with a copy of the skinning per corner read:
/// its bound is below that.
/// A `jacob` expanded into one pass per seed (26 copies of the tangent
/// program instead of one loop over the seeds) would be megabytes.
#[test]
fn ht_entries_print_bounded_c() {
    let e = gradbench::evals::eval("ht").expect("the ht eval");
    let program = adrev::Program::from_text(e.file, e.program).expect("the program");
    let cfg = gradbench::engine::default_config();
    let mut sizes = Vec::new();
    for (entry, max_kb) in [
        ("ht_simple", 100),
        ("ht_complicated", 88),
        ("ht_simple_jacobian", 210),
        ("ht_complicated_jacobian", 380),
    ] {
        let m = gradbench::engine::value_module(&program, entry, gradbench::engine::Ask::Value)
            .expect("the value program");
        let c = codegen::emit(&m, &cfg).expect("C");
        let kb = c.source.len() / 1000;
        assert!(kb <= max_kb, "{entry}: {kb} KB of C, more than {max_kb}");
        sizes.push(kb);
    }
    // The complicated Jacobian is the simple one's passes plus the primal
    // skinning of the us columns, not three derivative passes.
    assert!(sizes[3] < 2 * sizes[2] + sizes[1], "{sizes:?}");
}

/// `ht_complicated` skins its corners in one loop over them, gathered:
/// one read of `base_positions` (three reads per point, one per corner,
/// give three copies of the skinning), and no map over all of them
/// (every vertex skinned, not only the 3 nc corners read).
#[test]
fn ht_complicated_skins_its_corners_in_one_gathered_loop() {
    let e = gradbench::evals::eval("ht").expect("the ht eval");
    let program = adrev::Program::from_text(e.file, e.program).expect("the program");
    let m =
        gradbench::engine::value_module(&program, "ht_complicated", gradbench::engine::Ask::Value)
            .expect("the value program");
    let text = syntax::print::module(&m);
    assert_eq!(text.matches("base_positions[").count(), 1, "{text}");
    assert!(!text.contains("base_positions weights"), "{text}");
}

/// GradBench's expected outputs (its evals' run.py: the value every tool
/// must give, from `start` [1, 1] and `w` 0), in every variant: forward
/// or reverse mode (`grad`, `grad_rev`) outside and inside. Each variant
/// also agrees with `ff` to rounding (the descents take the same steps).
#[test]
fn saddle_and_particle_match_gradbench_in_every_variant() {
    let mut t = Tool::start("saddle");
    t.define("saddle");
    let ff = oracle::reals(&t.evaluate("saddle", "ff", json!({"start": [1.0, 1.0]})));
    for variant in ["ff", "fr", "rf", "rr"] {
        let out = oracle::reals(&t.evaluate("saddle", variant, json!({"start": [1.0, 1.0]})));
        let what = format!("saddle {variant}");
        assert_all(&what, &out, &[8.246324826140356e-06; 4], 1e-12, rel_close);
        assert_all(&what, &out, &ff, 1e-12, rel_close);
    }
    t.define("particle");
    let ff = t
        .evaluate("particle", "ff", json!({"w": 0.0}))
        .as_f64()
        .expect("a number");
    for variant in ["ff", "fr", "rf", "rr"] {
        let w = t
            .evaluate("particle", variant, json!({"w": 0.0}))
            .as_f64()
            .expect("a number");
        assert!(
            rel_close(w, 0.2071918746486116, 1e-12),
            "particle {variant}: {w}"
        );
        assert!(
            rel_close(w, ff, 1e-12),
            "particle {variant}: {w} vs ff {ff}"
        );
    }
}

/// A flat row-major matrix as GradBench sends it.
fn det_input(a: &[Vec<f64>]) -> Json {
    let flat: Vec<f64> = a.iter().flatten().copied().collect();
    json!({"A": flat, "ell": a.len()})
}

/// `A G^T = det(A) I` for the gradient G = det(A) A^-T: the closed form
/// checked without inverting A.
fn assert_adjugate(what: &str, a: &[Vec<f64>], g: &[f64], det: f64) {
    let n = a.len();
    for (i, row) in a.iter().enumerate() {
        for j in 0..n {
            let s: f64 = row.iter().zip(&g[j * n..]).map(|(a, g)| a * g).sum();
            let want = if i == j { det } else { 0.0 };
            assert!(
                close(s, want, 1e-12),
                "{what}: (A G^T)[{i}][{j}] = {s}, not {want}"
            );
        }
    }
}

/// The primal against expansion by minors (det.hpp's algorithm), the
/// gradient against the cofactors, `A G^T = det I` and central
/// differences of the primal, on random matrices, singular ones (rank
/// n - 1 with a zero column, rank 1, all zero), ties and the empty matrix;
/// GradBench's largest ell; and inputs of the wrong size (one define for
/// all).
#[test]
fn det_primal_and_gradient_against_minors_and_cofactors() {
    let mut t = Tool::start("det");
    t.define("det");
    let mut r = Draws::new(13);
    let mut cases: Vec<Vec<Vec<f64>>> = [1, 2, 5, 7]
        .iter()
        .map(|&n| (0..n).map(|_| r.reals(n)).collect())
        .collect();
    let m = |rows: &[&[f64]]| rows.iter().map(|r| r.to_vec()).collect::<Vec<_>>();
    cases.push(m(&[&[0.0, 1.0, 2.0], &[0.0, 3.0, 4.0], &[0.0, 5.0, 7.0]]));
    cases.push(m(&[&[1.0, 2.0, 3.0], &[4.0, 5.0, 6.0], &[7.0, 8.0, 9.0]]));
    cases.push(m(&[&[1.0, 2.0, 3.0], &[2.0, 4.0, 6.0], &[3.0, 6.0, 9.0]]));
    cases.push(m(&[&[0.0, 1.0], &[0.0, 2.0]]));
    cases.push(vec![vec![0.0; 3]; 3]);
    cases.push(m(&[&[1.0, 1.0], &[1.0, -1.0]]));
    cases.push(
        (0..4)
            .map(|i| (0..4).map(|j| f64::from(u8::from(i == j))).collect())
            .collect(),
    );
    cases.push(Vec::new());
    det_refuses_a_matrix_of_the_wrong_size(&mut t);
    det_at_ell_11_against_a_known_factorisation(&mut t);
    for a in &cases {
        let what = format!("det of {a:?}");
        let v = t
            .evaluate("det", "primal", det_input(a))
            .as_f64()
            .expect("a number");
        assert!(
            close(v, oracle::det(a), 1e-12),
            "{what}: {v} vs {}",
            oracle::det(a)
        );
        let g = oracle::reals(&t.evaluate("det", "gradient", det_input(a)));
        let want: Vec<f64> = oracle::cofactors(a).into_iter().flatten().collect();
        assert_all(&what, &g, &want, 1e-12, close);
        assert_adjugate(&what, a, &g, v);
        if a.len() == 5 {
            let n = a.len();
            let flat: Vec<f64> = a.iter().flatten().copied().collect();
            let make = |x: &[f64]| json!({"A": x, "ell": n});
            assert_all(
                &what,
                &g,
                &fd(&mut t, "det", "primal", &flat, &make),
                1e-7,
                close,
            );
        }
    }
}

/// GradBench's largest default, ell = 11 (expansion by minors is 40
/// million products there): A = P L U with L unit lower triangular, U
/// upper triangular and P the row reversal, so det A = sign(P) prod
/// diag(U) exactly; the gradient against `A G^T = det I`.
fn det_at_ell_11_against_a_known_factorisation(t: &mut Tool) {
    let n = 11;
    let mut r = Draws::new(17);
    let l: Vec<Vec<f64>> = (0..n)
        .map(|i| {
            (0..n)
                .map(|j| {
                    if j < i {
                        r.next() - 0.5
                    } else {
                        f64::from(u8::from(i == j))
                    }
                })
                .collect()
        })
        .collect();
    let u: Vec<Vec<f64>> = (0..n)
        .map(|i| {
            (0..n)
                .map(|j| if j >= i { 0.5 + r.next() } else { 0.0 })
                .collect()
        })
        .collect();
    let lu: Vec<Vec<f64>> = (0..n)
        .map(|i| {
            (0..n)
                .map(|j| (0..n).map(|k| l[i][k] * u[k][j]).sum())
                .collect()
        })
        .collect();
    let a: Vec<Vec<f64>> = lu.into_iter().rev().collect();
    // Reversing 11 rows is 5 swaps.
    let want = -(0..n).map(|i| u[i][i]).product::<f64>();
    let v = t
        .evaluate("det", "primal", det_input(&a))
        .as_f64()
        .expect("a number");
    assert!(close(v, want, 1e-12), "{v} vs {want}");
    let g = oracle::reals(&t.evaluate("det", "gradient", det_input(&a)));
    assert_eq!(g.len(), n * n);
    assert_adjugate("ell = 11", &a, &g, v);
}

/// Inputs that do not make a square matrix: an error naming the field.
fn det_refuses_a_matrix_of_the_wrong_size(t: &mut Tool) {
    for (input, says) in [
        (
            json!({"A": [1, 2, 3], "ell": 2}),
            "input.A has 3 elements, but an ell x ell matrix with ell = 2 has 4",
        ),
        (
            json!({"A": [1], "ell": -1}),
            "input.ell must be a non-negative integer, not -1",
        ),
        (json!({"ell": 1}), "input.A is missing"),
    ] {
        let r = t.evaluate_raw("det", "gradient", input.clone());
        assert_eq!(r["success"], false, "{input}: {r}");
        let error = r["error"].as_str().expect("an error message");
        assert!(
            error.contains(says),
            "{input}: `{error}` does not say `{says}`"
        );
    }
}
