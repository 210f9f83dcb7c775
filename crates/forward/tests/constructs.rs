//! The derivative constructs `diff`, `grad`, `jvp`, `vjp`, `jacob` inside
//! programs, against finite differences of the differentiated function
//! written as its own program, and against each other (`vjp` against the
//! transpose of `jacob`); free variables of the differentiated function
//! (ground ones and let-bound functions, and lambdas passed to lambdas);
//! the errors; very deep programs.

use crate::common;

use common::{central, compile, fd_close, inputs, reals, run, verified};
use forward::{Config, Error, Mode};
use syntax::Module;

fn expanded(text: &str, cfg: &Config) -> Module {
    let m = compile(text);
    let out = forward::expand_with(&m, cfg).unwrap_or_else(|e| panic!("expand: {e}"));
    verified(&out);
    // A Source program stays one (reverse mode may differentiate it next):
    // no Target-only primitive.
    if let Err(es) = syntax::verify_source(&out) {
        panic!("the expansion is not a Source program: {es:?}");
    }
    for e in &out.exprs {
        if let syntax::Expr::Prim { op, .. } = e {
            assert!(!op.is_derivative_construct(), "`{op}` left after expansion");
        }
    }
    out
}

fn both_modes() -> [Config; 2] {
    [
        Config::default(),
        Config {
            mode: Mode::Vectorised,
            ..Config::default()
        },
    ]
}

#[test]
fn grad_of_a_function_of_a_pair() {
    let g = compile("def g (a : R) (b : R) : R =\n  a * sin b + exp (a * b)\n");
    for cfg in both_modes() {
        let f = expanded(
            "def f (a : R) (b : R) : (R, R) =\n  grad (fun (p : (R, R)) -> p.1 * sin p.2 + exp (p.1 * p.2)) (a, b)\n",
            &cfg,
        );
        for (a, b) in [("0.5", "-1.25"), ("2", "0.1"), ("-1", "3")] {
            let got = reals(&run(&f, None, &[("a", a), ("b", b)]));
            let at = inputs(&g, None, &[("a", a), ("b", b)]);
            let da = central(&g, &at, "a")[0][0];
            let db = central(&g, &at, "b")[0][0];
            assert!(
                fd_close(got[0], da) && fd_close(got[1], db),
                "{got:?} vs ({da}, {db})"
            );
        }
    }
}

#[test]
fn grad_of_a_function_of_an_array() {
    let g = compile("def g (w : [n]R) : R =\n  reduce (+) 0 (map (fun v -> v * v * v) w) * w[0]\n");
    for cfg in both_modes() {
        let f = expanded(
            "def f (A : [n]R) : [n]R =\n  grad (fun (w : [n]R) -> reduce (+) 0 (map (fun v -> v * v * v) w) * w[0]) A\n",
            &cfg,
        );
        let got = reals(&run(&f, None, &[("A", "[0.5, -1, 2, 0.25]")]));
        let rows = central(&g, &inputs(&g, None, &[("w", "[0.5, -1, 2, 0.25]")]), "w");
        assert_eq!(got.len(), 4);
        for (k, row) in rows.iter().enumerate() {
            assert!(fd_close(got[k], row[0]), "{k}: {} vs {}", got[k], row[0]);
        }
    }
}

#[test]
fn jvp_is_the_directional_derivative() {
    let g = compile("def g (p : (R, R)) : (R, R) =\n  (p.1 * p.2, sin p.1)\n");
    let f = expanded(
        "def f (a : R) (b : R) (da : R) (db : R) : ((R, R), (R, R)) =\n  jvp (fun (p : (R, R)) -> (p.1 * p.2, sin p.1)) (a, b) (da, db)\n",
        &Config::default(),
    );
    let got = reals(&run(
        &f,
        None,
        &[("a", "0.7"), ("b", "-2"), ("da", "0.3"), ("db", "1.5")],
    ));
    let at = inputs(&g, None, &[("p", "(0.7, -2)")]);
    let rows = central(&g, &at, "p");
    let value = reals(&run(&g, None, &[("p", "(0.7, -2)")]));
    assert!(common::close(got[0], value[0]) && common::close(got[1], value[1]));
    for out in 0..2 {
        let dd = 0.3 * rows[0][out] + 1.5 * rows[1][out];
        assert!(
            fd_close(got[2 + out], dd),
            "output {out}: {} vs {dd}",
            got[2 + out]
        );
    }
}

const F_ARRAY: &str = "fun (w : [n]R) -> [w[0] * w[1], sin w[2] * w[0], exp w[1]]";

#[test]
fn vjp_is_the_transposed_jacobian_applied() {
    for cfg in both_modes() {
        let v = expanded(
            &format!("def v (x : [n]R) (dy : [3]R) : ([3]R, [n]R) =\n  vjp ({F_ARRAY}) x dy\n"),
            &cfg,
        );
        let j = expanded(
            &format!("def j (x : [n]R) : [3][n]R =\n  jacob ({F_ARRAY}) x\n"),
            &cfg,
        );
        let x = "[0.5, -1.5, 2]";
        let dy = [0.25, -2.0, 1.0];
        let got = run(&v, None, &[("x", x), ("dy", "[0.25, -2, 1]")]);
        let items = got.as_tuple().expect("a pair").to_vec();
        let jac = run(&j, None, &[("x", x)]);
        let rows: Vec<Vec<f64>> = jac.as_array().expect("rows").iter().map(reals).collect();
        assert_eq!(rows.len(), 3);
        let vjp = reals(&items[1]);
        for c in 0..3 {
            let want: f64 = (0..3).map(|r| dy[r] * rows[r][c]).sum();
            assert!(common::close(vjp[c], want), "{c}: {} vs {want}", vjp[c]);
        }
        // The value is the function's.
        let value = reals(&items[0]);
        assert!(common::close(value[0], 0.5 * -1.5));
        assert!(common::close(value[2], (-1.5f64).exp()));
    }
}

#[test]
fn jacob_agrees_with_central_differences_in_both_modes() {
    let g = compile(&format!("def g (x : [n]R) : [3]R =\n  ({F_ARRAY}) x\n"));
    let x = "[0.5, -1.5, 2]";
    let rows = central(&g, &inputs(&g, None, &[("x", x)]), "x");
    for cfg in both_modes() {
        let j = expanded(
            &format!("def j (x : [n]R) : [3][n]R =\n  jacob ({F_ARRAY}) x\n"),
            &cfg,
        );
        let jac = run(&j, None, &[("x", x)]);
        let jac: Vec<Vec<f64>> = jac.as_array().expect("rows").iter().map(reals).collect();
        for (r, row) in jac.iter().enumerate() {
            for (c, &d) in row.iter().enumerate() {
                assert!(
                    fd_close(d, rows[c][r]),
                    "J[{r}][{c}] = {d} vs {}",
                    rows[c][r]
                );
            }
        }
    }
}

#[test]
fn free_variables_ground_and_let_bound_functions() {
    let text = "def f (x : R) (y : R) : R =
  let c = x * y in
  let g = fun (u : R) -> u * c + x in
  diff (fun z -> g (z * z) + c * z) y
";
    let oracle = compile(
        "def h (x : R) (y : R) (z : R) : R =\n  let c = x * y in (z * z) * c + x + c * z\n",
    );
    let f = expanded(text, &Config::default());
    for (x, y) in [("1.5", "-0.5"), ("-2", "3")] {
        let got = reals(&run(&f, None, &[("x", x), ("y", y)]))[0];
        let want = central(
            &oracle,
            &inputs(&oracle, None, &[("x", x), ("y", y), ("z", y)]),
            "z",
        )[0][0];
        assert!(fd_close(got, want), "{got} vs {want}");
    }
    // And the outer gradient through it (forward over forward).
    let m = compile(text);
    let g = forward::grad_program(&m, &m.defs[0], None).expect("grad");
    verified(&g);
    let at = inputs(&m, None, &[("x", "1.5"), ("y", "-0.5")]);
    let got = reals(&semantics::eval_entry(&g, None, &at).expect("evaluates"));
    let fx = central(&f, &at, "x")[0][0];
    let fy = central(&f, &at, "y")[0][0];
    assert!(
        fd_close(got[1], fx) && fd_close(got[2], fy),
        "{got:?} vs {fx}, {fy}"
    );
}

#[test]
fn a_lambda_passed_to_a_lambda_that_differentiates_it() {
    let f = expanded(
        "def f (x : R) : R =\n  (fun (h : R -> R) -> diff h x + h x) (fun (u : R) -> u * u * u)\n",
        &Config::default(),
    );
    for x in [-1.5, 0.5, 2.0] {
        let got = reals(&run(&f, None, &[("x", &format!("{x}"))]))[0];
        assert!(common::close(got, 3.0 * x * x + x * x * x), "{got} at {x}");
    }
}

#[test]
fn a_function_parameter_reaching_a_construct_is_specialised_away() {
    // `h` is a parameter of a lambda called twice elsewhere: its code is
    // not known where `diff` is, so the module is specialised first.
    let f = expanded(
        "def f (x : R) : R =\n  let k = fun (h : R -> R) -> diff h x in\n  k (fun (u : R) -> u * u) + k (fun (u : R) -> sin u)\n",
        &Config::default(),
    );
    for x in [-1.5f64, 0.5, 2.0] {
        let got = reals(&run(&f, None, &[("x", &format!("{x}"))]))[0];
        assert!(common::close(got, 2.0 * x + x.cos()), "{got} at {x}");
    }
}

#[test]
fn a_function_only_known_at_run_time_is_an_error() {
    // The function reaching `diff` through `h` is chosen by a run-time
    // test: neither its definition nor a specialisation is available.
    let text = "def f (x : R) : R =\n  let k = fun (h : R -> R) -> diff h x in\n  k (if x > 0 then (fun (u : R) -> u * u) else (fun (u : R) -> u))\n";
    let m = compile(text);
    match forward::expand(&m) {
        Err(Error::FunctionFreeVariable { span, name }) => {
            assert!(name.starts_with('h'), "{name}");
            let at = &text[span.lo as usize..span.hi as usize];
            assert_eq!(at, "h", "the error points at the use of h");
        }
        other => panic!("expected a function free variable error, got {other:?}"),
    }
    // A function chosen at run time and bound by a let is fine: D applies
    // to the conditional itself.
    let f = expanded(
        "def f (x : R) : R =\n  let g = if x > 0 then (fun (u : R) -> u * u) else (fun (u : R) -> u) in\n  diff g x\n",
        &Config::default(),
    );
    assert!(common::close(
        reals(&run(&f, None, &[("x", "1.5")]))[0],
        3.0
    ));
    assert!(common::close(
        reals(&run(&f, None, &[("x", "-1.5")]))[0],
        1.0
    ));
}

#[test]
fn constructs_nest_without_confusion() {
    // d/dx [x * d/dy (x * y) at y = 1] = d/dx [x * x] = 2x, and the Hessian
    // of x^2 y through grad of grad.
    let f = expanded(
        "def f (x : R) : R =\n  diff (fun u -> u * diff (fun v -> u * v) 1) x\n",
        &Config::default(),
    );
    let got = reals(&run(&f, None, &[("x", "1.75")]))[0];
    assert!(common::close(got, 3.5), "{got}");
    for cfg in both_modes() {
        let h = expanded(
            "def h (x : R) (y : R) : ((R, R), (R, R)) =\n  let g = fun (p : (R, R)) -> grad (fun (q : (R, R)) -> q.1 * q.1 * q.2) p in\n  (grad (fun (p : (R, R)) -> (g p).1) (x, y), grad (fun (p : (R, R)) -> (g p).2) (x, y))\n",
            &cfg,
        );
        let got = reals(&run(&h, None, &[("x", "3"), ("y", "-2")]));
        // [[2y, 2x], [2x, 0]]
        let want = [-4.0, 6.0, 6.0, 0.0];
        for (a, b) in got.iter().zip(want) {
            assert!(common::close(*a, b), "{got:?}");
        }
    }
}

#[test]
fn deep_programs_do_not_overflow_the_stack() {
    let depth = 20_000;
    let mut text = String::from("def f (x : R) : R =\n");
    for i in 0..depth {
        let prev = if i == 0 {
            "x".to_string()
        } else {
            format!("x{}", i - 1)
        };
        text.push_str(&format!("  let x{i} = {prev} * 1.0001 + 0.00001 in\n"));
    }
    text.push_str(&format!("  x{}\n", depth - 1));
    let m = compile(&text);
    let g = forward::grad_program(&m, &m.defs[0], None).expect("grad of a deep program");
    verified(&g);
    let got = reals(&run(&g, None, &[("x", "0.5")]));
    let want = 1.0001f64.powi(depth);
    assert!((got[1] - want).abs() < 1e-9 * want, "{} vs {want}", got[1]);
    // And a construct around the deep body.
    let text = text.replacen(
        "def f (x : R) : R =\n",
        "def f (y : R) : R =\n  diff (fun x ->\n",
        1,
    ) + "  ) y\n";
    let d = expanded(&text, &Config::default());
    let got = reals(&run(&d, None, &[("y", "0.5")]))[0];
    assert!((got - want).abs() < 1e-9 * want, "{got} vs {want}");
}

#[test]
fn expanded_partials_of_pow_and_abs_have_the_primitives_values() {
    // Expansion spells `d1pow`, `d2pow` and `dabs` out as Source code; at
    // every point, kinks and negative bases included, the code computes
    // what the primitives do (`syntax::derivatives`, their one definition),
    // bit for bit.
    let m = expanded(
        "def p1 (x : R) (y : R) : R =\n  diff (fun u -> pow u y) x\n\n\
         def p2 (x : R) (y : R) : R =\n  diff (fun v -> pow x v) y\n\n\
         def a (x : R) : R =\n  diff (fun u -> abs u) x\n",
        &Config::default(),
    );
    let same = |got: f64, want: f64| got == want || (got.is_nan() && want.is_nan());
    let real = |v: &semantics::Value| v.as_real().expect("a real");
    let pts = [-2.0, -0.5, 0.0, 0.3, 1.0, 2.5];
    for x in pts {
        let xs = format!("{x:?}");
        let want = syntax::derivatives::eval(syntax::Prim::DAbs, &[x]).expect("dabs");
        let got = real(&run(&m, Some("a"), &[("x", &xs)]));
        assert!(same(got, want), "dabs {x}: {got} vs {want}");
        for y in pts {
            let ys = format!("{y:?}");
            let at = [("x", xs.as_str()), ("y", ys.as_str())];
            // The operation clause sums every partial times its argument's
            // tangent, a zero tangent included (NaN * 0 is NaN).
            let d1 = syntax::derivatives::eval(syntax::Prim::D1Pow, &[x, y]).expect("d1pow");
            let d2 = syntax::derivatives::eval(syntax::Prim::D2Pow, &[x, y]).expect("d2pow");
            for (entry, want) in [("p1", d1 * 1.0 + d2 * 0.0), ("p2", d1 * 0.0 + d2 * 1.0)] {
                let got = real(&run(&m, Some(entry), &at));
                assert!(same(got, want), "{entry} {x} {y}: {got} vs {want}");
            }
        }
    }
}

/// `jacob` is one tangent pass inside a loop over the seeds (a `build`
/// over the input's length whose seed is one-hot at the index), not one
/// copy of the pass per seed: the expansions for 4 and for 32 seeds have
/// the same size, and the function's `sin` is there once for the value
/// and once in the pass (issue 16: ht's 26 seeds).
#[test]
fn jacob_is_one_pass_in_a_loop_over_the_seeds() {
    let text = |k: usize| {
        format!(
            "def j (x : [{k}]R) : [2][{k}]R =\n  jacob (fun (w : [{k}]R) -> [sin w[0] * w[1], reduce (+) 0 w]) x\n"
        )
    };
    for cfg in both_modes() {
        let small = expanded(&text(4), &cfg);
        let large = expanded(&text(32), &cfg);
        assert_eq!(small.exprs.len(), large.exprs.len(), "{:?}", cfg.mode);
        let sins = large
            .exprs
            .iter()
            .filter(|e| {
                matches!(
                    e,
                    syntax::Expr::Prim {
                        op: syntax::Prim::Sin,
                        ..
                    }
                )
            })
            .count();
        assert!(sins <= 2, "{:?}: {sins} `sin`s in the expansion", cfg.mode);
        let x: Vec<String> = (0..32).map(|i| format!("{}", 0.1 * i as f64)).collect();
        let jac = run(&large, None, &[("x", &format!("[{}]", x.join(", ")))]);
        let rows: Vec<Vec<f64>> = jac.as_array().expect("rows").iter().map(reals).collect();
        // d (sin w0 * w1) / d w0 = cos 0 * 0.1.
        assert!(common::close(rows[0][0], 0.1), "{:?}", rows[0]);
        assert!(common::close(rows[1][31], 1.0));
    }
}
