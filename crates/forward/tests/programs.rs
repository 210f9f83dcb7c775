//! `jacobian_program` and `hessian_program`: their calling conventions,
//! against central differences, against the rows of the gradients of each
//! output (another path), and the vectorised against the n-pass form.

use crate::common;

use common::{central, compile, fd_close, inputs, reals, verified};
use forward::{Config, Mode};
use semantics::Value;
use syntax::Module;

fn vectorised() -> Config {
    Config {
        mode: Mode::Vectorised,
        ..Config::default()
    }
}

fn eval(m: &Module, at: &[(String, Value)]) -> Value {
    semantics::eval_entry(m, None, at)
        .unwrap_or_else(|e| panic!("{e}\n{}", syntax::print::module(m)))
}

const F: &str = "def F (x : [n]R) (s : R) : [n]R =
  let t = reduce (+) 0 x in
  map (fun v -> sin (v * s) * t + v * v) x
";

#[test]
fn jacobian_rows_are_the_gradients_of_the_outputs() {
    let m = compile(F);
    let at = inputs(&m, None, &[("x", "[0.5, -1, 2, 0.25]"), ("s", "1.5")]);
    let mut results = Vec::new();
    for cfg in [Config::default(), vectorised()] {
        let j = forward::jacobian_program(&m, &m.defs[0], None, &cfg).expect("jacobian");
        verified(&j);
        assert_eq!(j.defs[0].name.as_str(), "F_jacobian");
        let out = eval(&j, &at);
        let items = out.as_tuple().expect("(value, J_x, J_s)").to_vec();
        assert_eq!(items.len(), 3);
        assert!(items[0].approx_eq_default(&eval(&m, &at)));
        results.push(out);
    }
    assert!(
        results[0].approx_eq_default(&results[1]),
        "{} vs {}",
        results[0],
        results[1]
    );
    let items = results[0].as_tuple().expect("a tuple").to_vec();
    let jx: Vec<Vec<f64>> = items[1]
        .as_array()
        .expect("[n][n]R")
        .iter()
        .map(reals)
        .collect();
    let js = reals(&items[2]);
    for r in 0..4 {
        // Output r alone, differentiated by grad_program.
        let text = format!(
            "def G (x : [n]R) (s : R) : R =\n  let t = reduce (+) 0 x in\n  (map (fun v -> sin (v * s) * t + v * v) x)[{r}]\n"
        );
        let g = compile(&text);
        let gp = forward::grad_program(&g, &g.defs[0], None).expect("grad");
        let got = eval(&gp, &at);
        let got = got.as_tuple().expect("(value, gx, gs)").to_vec();
        let gx = reals(&got[1]);
        let gs = reals(&got[2])[0];
        for c in 0..4 {
            assert!(
                common::close(jx[r][c], gx[c]),
                "J_x[{r}][{c}] = {} vs {}",
                jx[r][c],
                gx[c]
            );
        }
        assert!(common::close(js[r], gs), "J_s[{r}] = {} vs {gs}", js[r]);
    }
    // And against central differences.
    let rows = central(&m, &at, "x");
    for r in 0..4 {
        for c in 0..4 {
            assert!(fd_close(jx[r][c], rows[c][r]));
        }
    }
}

#[test]
fn jacobian_of_a_tuple_valued_entry_with_respect_to_some_parameters() {
    let m = compile(
        "def F (a : R) (b : [2]R) (k : Int) : (R, [2]R) =\n  (a * b[k] + pow a 3, map (fun v -> v * a * b[1 - k]) b)\n",
    );
    let at = inputs(&m, None, &[("a", "1.5"), ("b", "[2, -0.5]"), ("k", "0")]);
    for cfg in [Config::default(), vectorised()] {
        let j = forward::jacobian_program(&m, &m.defs[0], Some(&["b".to_string()]), &cfg)
            .expect("jacobian");
        verified(&j);
        let out = eval(&j, &at);
        let items = out.as_tuple().expect("(value, J_b)").to_vec();
        assert_eq!(items.len(), 2);
        // J_b : ([2]R, [2][2]R), the output's shape with each real replaced
        // by the gradient with respect to b.
        let flat = reals(&items[1]);
        let rows = central(&m, &at, "b");
        // Output reals in order: y0, y1[0], y1[1]; J_b flattened is
        // dy0/db, dy1[0]/db, dy1[1]/db.
        for out_k in 0..3 {
            for c in 0..2 {
                let got = flat[out_k * 2 + c];
                assert!(
                    fd_close(got, rows[c][out_k]),
                    "{out_k},{c}: {got} vs {}",
                    rows[c][out_k]
                );
            }
        }
    }
}

const H: &str = "def f (x : [n]R) (s : R) : R =
  reduce (+) 0 (map (fun v -> sin (v * s) * v) x) * s + s * s * s
";

#[test]
fn hessian_blocks_agree_with_differences_of_the_gradient() {
    let m = compile(H);
    let at = inputs(&m, None, &[("x", "[0.5, -1, 2]"), ("s", "0.75")]);
    let g = forward::grad_program(&m, &m.defs[0], None).expect("grad");
    for cfg in [Config::default(), vectorised()] {
        let h = forward::hessian_program(&m, &m.defs[0], None, &cfg).expect("hessian");
        verified(&h);
        assert_eq!(h.defs[0].name.as_str(), "f_hessian");
        let out = eval(&h, &at);
        let items = out.as_tuple().expect("a tuple").to_vec();
        // (value, g_x, g_s, H_xx, H_xs, H_sx, H_ss)
        assert_eq!(items.len(), 7);
        let grads = eval(&g, &at);
        let grads = grads.as_tuple().expect("a tuple").to_vec();
        for k in 0..3 {
            assert!(items[k].approx_eq_default(&grads[k]));
        }
        let hxx: Vec<Vec<f64>> = items[3]
            .as_array()
            .expect("[n][n]R")
            .iter()
            .map(reals)
            .collect();
        let hxs = reals(&items[4]);
        let hsx = reals(&items[5]);
        let hss = reals(&items[6])[0];
        // Central differences of the gradient program: rows per input real,
        // each (value, g_x..., g_s).
        let dx = central(&g, &at, "x");
        let ds = central(&g, &at, "s");
        for a in 0..3 {
            for b in 0..3 {
                assert!(fd_close(hxx[a][b], dx[a][1 + b]), "H_xx[{a}][{b}]");
                assert!(common::close(hxx[a][b], hxx[b][a]), "symmetry");
            }
            assert!(fd_close(hxs[a], dx[a][4]), "H_xs[{a}]");
            assert!(fd_close(hsx[a], ds[0][1 + a]), "H_sx[{a}]");
            assert!(common::close(hxs[a], hsx[a]), "symmetry");
        }
        assert!(fd_close(hss, ds[0][4]), "H_ss");
    }
}

#[test]
fn hessian_of_x_times_x_is_2_everywhere() {
    let m = compile("def t (x : R) : R =\n  x * x\n");
    let h = forward::hessian_program(&m, &m.defs[0], None, &Config::default()).expect("hessian");
    verified(&h);
    for x in ["-3", "0", "0.5", "100"] {
        let v = reals(&eval(&h, &inputs(&m, None, &[("x", x)])));
        assert!(common::close(v[2], 2.0), "{v:?}");
    }
}

#[test]
fn unknown_parameters_and_non_real_results_are_errors() {
    let m = compile(F);
    let e = forward::grad_program(&m, &m.defs[0], None).expect_err("F is vector-valued");
    assert!(matches!(e, forward::Error::UnsupportedType { .. }), "{e}");
    assert!(e.to_string().contains("[n]R"), "{e}");
    let m = compile(H);
    let e = forward::grad_program(&m, &m.defs[0], Some(&["z".to_string()])).expect_err("no z");
    assert!(matches!(e, forward::Error::NotFound { .. }), "{e}");
}

const STRUCTURED: &str = "def f (p : (R, [2]R)) (A : [2](R, R)) (M : [2][3]R) (k : Int) : R =
  let q = map (fun (t : (R, R)) -> t.1 * sin t.2) A in
  let s = reduce (+) 0 (map (fun (row : [3]R) -> reduce (*) 1 row) M) in
  p.1 * (p.2)[k] + reduce (+) 0 q * s + (M[1])[k] * (A[0]).2
";

#[test]
fn gradients_of_tuples_arrays_of_tuples_and_nested_arrays() {
    let m = compile(STRUCTURED);
    let at = inputs(
        &m,
        None,
        &[
            ("p", "(1.5, [0.5, -2])"),
            ("A", "[(0.25, 1), (-1.5, 0.75)]"),
            ("M", "[[1, 2, -0.5], [0.25, 3, 1.5]]"),
            ("k", "1"),
        ],
    );
    let mut outs = Vec::new();
    for cfg in [Config::default(), vectorised()] {
        let g = forward::grad_program_with(&m, &m.defs[0], None, &cfg).expect("grad");
        verified(&g);
        let out = eval(&g, &at);
        let items = out.as_tuple().expect("(value, gp, gA, gM, gk)").to_vec();
        assert_eq!(items.len(), 5);
        assert_eq!(
            items[4].as_int(),
            Some(0),
            "the gradient slot of an Int is 0"
        );
        for (slot, name) in [(1, "p"), (2, "A"), (3, "M")] {
            let got = reals(&items[slot]);
            let rows = central(&m, &at, name);
            assert_eq!(got.len(), rows.len());
            for (c, row) in rows.iter().enumerate() {
                assert!(
                    fd_close(got[c], row[0]),
                    "{name}[{c}]: {} vs {}",
                    got[c],
                    row[0]
                );
            }
        }
        outs.push(out);
    }
    assert!(outs[0].approx_eq_default(&outs[1]));
    // jvp with structured tangents: along (p, A, M) = (gp, gA, gM) the
    // tangent is the squared norm of the gradient.
    let j = forward::jvp(&m, &m.defs[0]).expect("jvp");
    verified(&j);
    let items = outs[0].as_tuple().expect("a tuple").to_vec();
    let names: Vec<String> = j.defs[0]
        .params
        .iter()
        .map(|p| p.name.to_string())
        .collect();
    assert_eq!(names[4..], ["dp", "dA", "dM", "dk"]);
    let mut jin = at.clone();
    for (i, name) in names[4..].iter().enumerate() {
        jin.push((name.clone(), items[1 + i].clone()));
    }
    let out = reals(&eval(&j, &jin));
    let norm2: f64 = items[1..4].iter().flat_map(reals).map(|g| g * g).sum();
    assert!(common::close(out[1], norm2), "{} vs {norm2}", out[1]);
    // And the Hessian's diagonal block for p has the shape of p with each
    // real replaced by a p: ((R, [2]R), [2](R, [2]R)).
    let h = forward::hessian_program(&m, &m.defs[0], Some(&["p".to_string()]), &vectorised())
        .expect("hessian");
    verified(&h);
    let out = eval(&h, &at);
    let items = out.as_tuple().expect("(value, g, H)").to_vec();
    assert_eq!(items.len(), 3);
    // f is linear in p.1 and in p.2[k]: the only non-zero entries are the
    // mixed ones, ∂²f/∂p.1∂p.2[1] = 1.
    let flat = reals(&items[2]);
    assert_eq!(flat.len(), 9);
    let expect = [0.0, 0.0, 1.0, 0.0, 0.0, 0.0, 1.0, 0.0, 0.0];
    for (a, b) in flat.iter().zip(expect) {
        assert!(common::close(*a, b), "{flat:?}");
    }
}
