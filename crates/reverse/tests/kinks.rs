//! The derivatives at the points where an operator is not differentiable
//! or not defined (docs/derivatives.md): reverse mode through UNF (raw and
//! optimized) and the direct macro (where it takes the program) give the
//! documented value, and the same as forward mode, at each of them; the
//! three ways of writing ReLU agree everywhere, 0 included; a branch that
//! is not taken never reaches the gradient.

use semantics::Value;

fn compile(text: &str) -> syntax::Module {
    syntax::compile(syntax::SourceFile {
        name: "kinks.ad".to_string(),
        text: text.to_string(),
    })
    .expect("compiles")
}

/// The gradient of the last definition of `text` at `at` (one real per
/// parameter), by every reverse route (UNF, UNF optimized, and the direct
/// macro where it takes the program), and by forward mode.
fn grads(text: &str, at: &[f64]) -> (Vec<(&'static str, Vec<f64>)>, Vec<f64>) {
    let m = compile(text);
    let def = m.defs.last().expect("a definition").clone();
    let inputs: Vec<(String, Value)> = def
        .params
        .iter()
        .zip(at)
        .map(|(p, &x)| (p.name.to_string(), Value::Real(x)))
        .collect();
    let g = reverse::gradient(&m, &def, &reverse::Config::default()).expect("reverse mode");
    syntax::verify(&g).expect("the gradient program verifies");
    let f = forward::grad_program(&m, &def, None).expect("forward mode");
    let reals = |out: Value| -> Vec<f64> {
        out.as_tuple().expect("a tuple")[1..]
            .iter()
            .map(|v| v.as_real().expect("a real"))
            .collect()
    };
    let opt = optimize::optimize(&g, &optimize::Config::default()).expect("optimize");
    let mut routes = vec![("unf", g), ("unf optimized", opt)];
    if let Ok(d) = reverse::reverse_direct(&m, &def, &reverse::Config::default()) {
        syntax::verify(&d).expect("the direct gradient program verifies");
        routes.push(("direct", d));
    }
    let rev = routes
        .into_iter()
        .map(|(name, g)| {
            let out = semantics::eval_entry(&g, None, &inputs).expect("run reverse");
            (name, reals(out))
        })
        .collect();
    let fwd = reals(semantics::eval_entry(&f, None, &inputs).expect("run forward"));
    (rev, fwd)
}

/// Equal as IEEE values, NaN equal to NaN.
fn same(a: f64, b: f64) -> bool {
    a == b || (a.is_nan() && b.is_nan())
}

fn check(text: &str, at: &[f64], expected: &[f64]) {
    check_routes(text, at, expected, expected);
}

/// As [`check`], where forward mode's IEEE arithmetic differs: it multiplies
/// every partial by the tangent of its argument, and an infinite partial
/// times a zero tangent is NaN, where reverse mode keeps the partials apart.
fn check_routes(text: &str, at: &[f64], expected: &[f64], forward: &[f64]) {
    let (rev, fwd) = grads(text, at);
    for (i, &e) in expected.iter().enumerate() {
        for (route, g) in &rev {
            assert!(
                same(g[i], e),
                "{text} at {at:?}: reverse ({route}) gives {} for parameter {i}, documented {e}",
                g[i]
            );
        }
        assert!(
            same(fwd[i], forward[i]),
            "{text} at {at:?}: forward gives {} for parameter {i}, not {}",
            fwd[i],
            forward[i]
        );
    }
}

#[test]
fn each_operator_at_its_kink() {
    let inf = f64::INFINITY;
    // abs at 0: -1 (`abs x` is `max x (-x)`, a tie goes to `-x`).
    check("def f (x : R) : R = abs x", &[0.0], &[-1.0]);
    check("def f (x : R) : R = abs x", &[-0.0], &[-1.0]);
    check("def f (x : R) : R = abs x", &[-3.0], &[-1.0]);
    check("def f (x : R) : R = abs x", &[1e-300], &[1.0]);
    check("def f (x : R) : R = max x (-x)", &[0.0], &[-1.0]);
    // max and min on a tie: all to the second argument.
    check(
        "def f (x : R) (y : R) : R = max x y",
        &[2.0, 2.0],
        &[0.0, 1.0],
    );
    check(
        "def f (x : R) (y : R) : R = min x y",
        &[2.0, 2.0],
        &[0.0, 1.0],
    );
    check(
        "def f (x : R) (y : R) : R = max x y",
        &[3.0, 2.0],
        &[1.0, 0.0],
    );
    check(
        "def f (x : R) (y : R) : R = min x y",
        &[3.0, 2.0],
        &[0.0, 1.0],
    );
    // sqrt and log at 0: IEEE's 1 / 0.
    check("def f (x : R) : R = sqrt x", &[0.0], &[inf]);
    check("def f (x : R) : R = log x", &[0.0], &[inf]);
    // Division by 0: 1 / y and -((x / y) / y) as IEEE gives them. Forward
    // mode adds -((x / y) / y) * 0 = NaN to the derivative in x, and
    // 0 / y = NaN to the one in y.
    let nan = f64::NAN;
    check_routes(
        "def f (x : R) (y : R) : R = x / y",
        &[1.0, 0.0],
        &[inf, -inf],
        &[nan, nan],
    );
    // pow: y x^(y-1) in x everywhere; in y, x^y log x where x > 0, else 0.
    check(
        "def f (x : R) (y : R) : R = pow x y",
        &[-2.0, 3.0],
        &[12.0, 0.0],
    );
    check(
        "def f (x : R) (y : R) : R = pow x y",
        &[0.0, 2.0],
        &[0.0, 0.0],
    );
    // At 0^0 the partial in x is 0 * 0^(-1) = 0 * inf = NaN (IEEE), which
    // forward mode carries into the derivative in y too.
    check_routes(
        "def f (x : R) (y : R) : R = pow x y",
        &[0.0, 0.0],
        &[nan, 0.0],
        &[nan, nan],
    );
    check(
        "def f (x : R) (y : R) : R = pow x y",
        &[2.0, 3.0],
        &[12.0, 8.0 * 2f64.ln()],
    );
    // A comparison is not differentiated: the branch taken is.
    check("def f (x : R) : R = if x > 0 then x else 0", &[0.0], &[0.0]);
    check(
        "def f (x : R) : R = if x >= 0 then x else 0",
        &[0.0],
        &[1.0],
    );
}

#[test]
fn relu_forms_at_zero() {
    let relu_max = "def f (x : R) : R = max x 0";
    let relu_if = "def f (x : R) : R = if x > 0 then x else 0";
    let relu_abs = "def f (x : R) : R = (x + abs x) / 2";
    // `max x 0` is `if x > 0 then x else 0`: 0 at 0, by every route; with
    // abs' 0 = -1 the abs form has (1 - 1) / 2 = 0 there too
    // (docs/derivatives.md, "ReLU at 0").
    check(relu_max, &[0.0], &[0.0]);
    check(relu_if, &[0.0], &[0.0]);
    check(relu_abs, &[0.0], &[0.0]);
    // And everywhere else.
    for x in [-2.0, -0.25, 0.25, 3.0] {
        let want = if x > 0.0 { 1.0 } else { 0.0 };
        for text in [relu_max, relu_if, relu_abs] {
            check(text, &[x], &[want]);
        }
    }
}

#[test]
fn the_branch_not_taken_never_reaches_the_gradient() {
    // log x at -2 and its derivative 1 / x are never computed.
    check(
        "def f (x : R) : R = if x > 0 then log x else x * x",
        &[-2.0],
        &[-4.0],
    );
    // An infinite derivative (sqrt at 0) and a NaN value (0 * log 0, log
    // of a negative) in the branch not taken, inside a loop: at y = 0 the
    // taken branch adds x * 0, at y = x = -3 it adds x * x.
    check(
        "def f (x : R) : R = foldl (fun (acc, y) -> if y > 0 then acc + sqrt y * log y else acc + x * y) 0 [0, x]",
        &[-3.0],
        &[-6.0],
    );
    // The cotangent of a variable used only in the branch not taken is 0.
    check(
        "def f (x : R) (y : R) : R = if x < 1 then 2 * x else log (y - 5)",
        &[0.5, 1.0],
        &[2.0, 0.0],
    );
}

/// The gradient of `f (z : R) (x : [n]R)` at `(z, x)`, flattened to
/// `[dz, dx_0, ..., dx_{n-1}]`.
fn grad_z_x(g: &syntax::Module, z: f64, x: &[f64]) -> Vec<f64> {
    let inputs = vec![
        ("z".to_string(), Value::Real(z)),
        ("x".to_string(), Value::reals(x)),
    ];
    let out = semantics::eval_entry(g, None, &inputs).expect("the gradient runs");
    let parts = out.as_tuple().expect("(value, dz, dx)");
    let mut flat = vec![parts[1].as_real().expect("dz")];
    flat.extend(
        parts[2]
            .as_array()
            .expect("dx")
            .iter()
            .map(|v| v.as_real().expect("a real")),
    );
    flat
}

/// The documented winner of `reduce (fun (a, b) -> op ..) z x` (`a` the
/// accumulator): the element that won the last comparison it took part in,
/// the held value replaced by `e` unless `held op e` (`acc_first`) or
/// where `e op held` (the element first), or -1 for the initial value; as
/// `[dz, dx_0, ...]`, a one-hot vector.
fn fold_winner(gt: bool, acc_first: bool, z: f64, x: &[f64]) -> Vec<f64> {
    let wins = |p: f64, q: f64| if gt { p > q } else { p < q };
    let (mut held, mut w) = (z, None);
    for (i, &e) in x.iter().enumerate() {
        let take = if acc_first {
            !wins(held, e)
        } else {
            wins(e, held)
        };
        if take {
            held = e;
            w = Some(i);
        }
    }
    let mut g = vec![0.0; x.len() + 1];
    g[w.map_or(0, |i| i + 1)] = 1.0;
    g
}

/// A `max` or `min` reduction passes its cotangent to the element that won
/// the last comparison it took part in, or to the initial value: reverse
/// mode finds it by two scans where no NaN is present (note [winner by
/// scans], crates/unf/src/raise/select.rs) and by the fold's own
/// comparisons otherwise. On every array of up to three elements over
/// values that tie, signed zeros, infinities and NaN, with every initial
/// value among them, at the top of the gradient and inside a `map`'s
/// function, reverse mode raw and optimized give the winner of
/// [`fold_winner`] bit for bit, and forward mode, which carries the
/// tangents through the same comparisons, agrees where no NaN is present.
/// (With a NaN it does not: its held value is `max`'s, which skips the
/// NaN, where the fold's is the NaN element itself.)
#[test]
fn reductions_pass_the_cotangent_to_the_fold_s_winner() {
    let vals = [
        f64::NEG_INFINITY,
        -1.0,
        -0.0,
        0.0,
        2.0,
        f64::INFINITY,
        f64::NAN,
    ];
    let mut arrays: Vec<Vec<f64>> = vec![vec![]];
    for len in 1..=3 {
        let mut next = Vec::new();
        for a in arrays.iter().filter(|a| a.len() == len - 1) {
            for &v in &vals {
                let mut b = a.clone();
                b.push(v);
                next.push(b);
            }
        }
        arrays.extend(next);
    }
    for (op, acc_first) in [("max", true), ("min", true), ("max", false), ("min", false)] {
        let order = if acc_first { "a b" } else { "b a" };
        // At the top of the gradient (the scans) and inside a loop's
        // function (the fold's comparisons alone).
        for (fold, nested) in [("reduce", false), ("foldl", false), ("reduce", true)] {
            let red = format!("{fold} (fun (a, b) -> {op} {order}) z x");
            let body = if nested {
                format!("sum (map (fun w -> w + {red}) [0])")
            } else {
                red
            };
            let text = format!("def f (z : R) (x : [n]R) : R = {body}");
            let m = compile(&text);
            let def = m.defs.last().expect("a definition").clone();
            let g = reverse::gradient(&m, &def, &reverse::Config::default()).expect("reverse");
            let opt = optimize::optimize(&g, &optimize::Config::default()).expect("optimize");
            let fwd = forward::grad_program(&m, &def, None).expect("forward mode");
            for x in &arrays {
                for &z in &vals {
                    let want = fold_winner(op == "max", acc_first, z, x);
                    let mut routes = vec![("unf", &g), ("unf optimized", &opt)];
                    if !z.is_nan() && !x.iter().any(|v| v.is_nan()) {
                        routes.push(("forward", &fwd));
                    }
                    for (route, prog) in routes {
                        let got = grad_z_x(prog, z, x);
                        assert!(
                            got == want,
                            "{text} at z = {z:?}, x = {x:?}: {route} gives {got:?}, the fold's winner {want:?}"
                        );
                    }
                }
            }
        }
    }
}
