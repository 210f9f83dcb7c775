//! Reverse mode inside the language (`grad_rev`, `vjp_rev`; docs/forward.md,
//! "Reverse mode inside the language"): nesting with forward mode in every
//! combination, Hessians by forward over reverse against forward over
//! forward on every fixture that has one, `vjp_rev` against `vjp`, and the
//! positioned errors.
//!
//! Oracles: exact values worked out by hand (seeds/002 Example 182.15 gives
//! 1 in every combination), forward mode's own constructs (a different
//! implementation: dual numbers, no UNF), and central differences.

use crate::common::{close, reals, workspace};
use adrev::{Inputs, Kind, Program, Request};
use semantics::{Expectations, Value};

fn program(text: &str) -> Program {
    Program::from_text("inlang.ad", text).unwrap_or_else(|e| panic!("{}\n{text}", e.message()))
}

fn value_at(p: &Program, inputs: &Inputs<'_>) -> adrev::Result<Value> {
    Ok(p.compile(&Request::new(Kind::Value))?.call(inputs)?.value)
}

fn value(text: &str) -> Value {
    let p = program(text);
    value_at(&p, &Inputs::new()).unwrap_or_else(|e| panic!("{}\n{text}", e.message()))
}

/// The error of evaluating `text`.
fn error(text: &str) -> adrev::Error {
    match Program::from_text("inlang.ad", text) {
        Err(e) => e,
        Ok(p) => value_at(&p, &p.default_inputs()).expect_err(text),
    }
}

#[test]
fn example_182_15_is_1_in_every_combination() {
    // diff/grad_rev as the outer (o) and inner (i) derivative: ff, fr, rf, rr.
    for outer in ["diff", "grad_rev"] {
        for inner in ["diff", "grad_rev"] {
            let text =
                format!("def confusion : R = {outer} (fun x -> x * {inner} (fun y -> x + y) 1) 1");
            assert_eq!(value(&text), Value::Real(1.0), "{outer} over {inner}");
        }
    }
}

#[test]
fn second_derivatives_in_every_combination() {
    // d²/dx² (x³ sin x) at x = 0.7, by the four combinations of one-real
    // derivatives, against the closed form 6x sin x + 6x² cos x - x³ sin x.
    let x: f64 = 0.7;
    let exact = 6.0 * x * x.sin() + 6.0 * x * x * x.cos() - x.powi(3) * x.sin();
    for outer in ["diff", "grad_rev", "grad"] {
        for inner in ["diff", "grad_rev", "grad"] {
            let text = format!(
                "def h (x : R) : R = {outer} (fun u -> {inner} (fun v -> v * v * v * sin v) u) x"
            );
            let got = value_at(&program(&text), &Inputs::new().with("x", Value::Real(x)))
                .unwrap_or_else(|e| panic!("{}", e.message()));
            let got = got.as_real().expect("a real");
            assert!(
                (got - exact).abs() <= 1e-12 * exact.abs(),
                "{outer} over {inner}: {got} vs {exact}"
            );
        }
    }
}

#[test]
fn the_inner_derivative_does_not_see_the_outer_variable() {
    // Free variables of the inner function are constants of it, however
    // deep: d/dx [x * d/dy (x * y * z)] with z = x is d/dx (x * x * x) = 3x².
    let text = "def f (a : R) : R =
        grad_rev (fun x -> let z = x in x * grad_rev (fun y -> x * y * z) 2) a";
    let got = value_at(&program(text), &Inputs::new().with("a", Value::Real(1.5)))
        .unwrap_or_else(|e| panic!("{}", e.message()));
    assert_eq!(got, Value::Real(3.0 * 1.5 * 1.5));
}

#[test]
fn let_bound_functions_are_free_variables_of_the_closed_definition() {
    // `g` is re-bound inside the closed definition from its `let`, and its
    // own free variable `c` becomes a parameter.
    let text = "def f (x : [n]R) (c : R) : [n]R =
        let g = fun (v : R) -> c * v * v in
        grad_rev (fun y -> sum (map g y)) x";
    let inputs = Inputs::new()
        .with("x", Value::reals(&[1.0, -2.0, 0.5]))
        .with("c", Value::Real(3.0));
    let got = value_at(&program(text), &inputs).unwrap_or_else(|e| panic!("{}", e.message()));
    assert_eq!(got, Value::reals(&[6.0, -12.0, 3.0]));
}

/// `F p_1 .. p_n` as the text of a call of the fixture's entry.
fn call(entry: &str, args: &[String]) -> String {
    format!("{entry} {}", args.join(" "))
}

/// One-hot directions over every real of `v` (zeros elsewhere, `Int` and
/// `Bool` leaves kept, their tangents being ignored).
fn one_hots(v: &Value) -> Vec<Value> {
    match v {
        Value::Real(_) => vec![Value::Real(1.0)],
        Value::Array(items) | Value::Tuple(items) => {
            let zero: Vec<Value> = items.iter().map(zero).collect();
            let mut out = Vec::new();
            for (i, item) in items.iter().enumerate() {
                for hot in one_hots(item) {
                    let mut parts = zero.clone();
                    parts[i] = hot;
                    out.push(match v {
                        Value::Array(_) => Value::array(parts),
                        _ => Value::tuple(parts),
                    });
                }
            }
            out
        }
        _ => Vec::new(),
    }
}

fn zero(v: &Value) -> Value {
    match v {
        Value::Real(_) => Value::Real(0.0),
        Value::Array(items) => Value::array(items.iter().map(zero).collect()),
        Value::Tuple(items) => Value::tuple(items.iter().map(zero).collect()),
        other => other.clone(),
    }
}

/// Columns of the Hessian of a fixture's entry: `jvp` of `grad` (ff) or of
/// `grad_rev` (fr) along every one-hot direction, the directions being
/// parameters of one compiled program.
fn hessian_columns(
    text: &str,
    entry: &str,
    params: &[String],
    at: &[(String, Value)],
    g: &str,
) -> Vec<Value> {
    let n = params.len();
    let p: Vec<String> = (1..=n).map(|i| format!("p__{i}")).collect();
    let v: Vec<String> = (1..=n).map(|i| format!("v__{i}")).collect();
    let a: Vec<String> = (1..=n).map(|i| format!("a__{i}")).collect();
    let b: Vec<String> = (1..=n).map(|i| format!("b__{i}")).collect();
    let tuple = |xs: &[String]| {
        if xs.len() == 1 {
            xs[0].clone()
        } else {
            format!("({})", xs.join(", "))
        }
    };
    // A construct's function is unary: several parameters are one tuple.
    let unary = |name: &str, xs: &[String], body: String| {
        if xs.len() == 1 {
            format!("fun {} -> {body}", xs[0])
        } else {
            format!("fun {name} -> let {} = {name} in {body}", tuple(xs))
        }
    };
    let inner = unary("tb__", &b, call(entry, &b));
    let outer = unary("ta__", &a, format!("{g} ({inner}) {}", tuple(&a)));
    let def = format!(
        "\ndef hess__ {} {} = (jvp ({outer}) {} {}).2\n",
        p.join(" "),
        v.join(" "),
        tuple(&p),
        tuple(&v)
    );
    let prog = program(&format!("{text}{def}"));
    let compiled = prog
        .compile(&Request::new(Kind::Value))
        .unwrap_or_else(|e| panic!("{g}: {}", e.message()));
    let mut cols = Vec::new();
    for (j, (_, xj)) in at.iter().enumerate() {
        for hot in one_hots(xj) {
            let mut inputs = Inputs::new();
            for (i, (_, xi)) in at.iter().enumerate() {
                inputs = inputs.with(&p[i], xi.clone());
                let dir = if i == j { hot.clone() } else { zero(xi) };
                inputs = inputs.with(&v[i], dir);
            }
            let out = compiled
                .call(&inputs)
                .unwrap_or_else(|e| panic!("{g} of {}: {}", params.join(", "), e.message()));
            cols.push(out.value);
        }
    }
    cols
}

#[test]
fn hessians_by_forward_over_reverse_equal_forward_over_forward_on_every_fixture() {
    let mut checked = 0;
    let mut failures = Vec::new();
    for e in std::fs::read_dir(workspace().join("fixtures")).expect("fixtures") {
        let dir = e.expect("an entry").path();
        let file = dir.join("program.ad");
        let Ok(text) = std::fs::read_to_string(&file) else {
            continue;
        };
        let exp = Expectations::parse(&text);
        // The fixtures with a gradient have a Hessian (real-valued, with
        // parameters); a fourth derivative of the in-language ones is
        // their own business.
        if exp.grads.is_empty() {
            continue;
        }
        let name = dir
            .file_name()
            .map(|s| s.to_string_lossy().into_owned())
            .unwrap_or_default();
        let p = program(&text);
        let def = p.entry(None).expect("an entry").clone();
        if matches!(name.as_str(), "hvp_rev" | "vjp_rev_map") {
            continue;
        }
        let at = exp.inputs(&def).expect("the -- at lines read");
        let params: Vec<String> = def.params.iter().map(|q| q.name.to_string()).collect();
        let ff = hessian_columns(&text, def.name.as_str(), &params, &at, "grad");
        let fr = hessian_columns(&text, def.name.as_str(), &params, &at, "grad_rev");
        checked += 1;
        for (k, (a, b)) in ff.iter().zip(&fr).enumerate() {
            if let Err(e) = close(a, b, 1e-9) {
                failures.push(format!("{name}: column {k}: ff vs fr: {e}"));
            }
        }
        if ff.len() != fr.len() {
            failures.push(format!("{name}: {} columns vs {}", ff.len(), fr.len()));
        }
    }
    assert!(checked >= 25, "only {checked} fixtures have a Hessian");
    assert!(failures.is_empty(), "{}", failures.join("\n"));
}

#[test]
fn second_derivatives_through_rules_use_the_rules_in_every_nesting() {
    // fixtures/rules_ste: f w v = ste (w v) * v, whose rules say the
    // derivative of ste is 1 (its body's is 0). By the rules df/dw = v²
    // and df/dv = ste (w v) + w v, so the Hessian is [[0, 2v], [v + v, 2w]]
    // = [[0, 4], [4, 2.6]] at (1.3, 2). The mixed entry is 4 only if the
    // outer derivative uses the rules in the gradient the inner one
    // spliced: with the body there, d/dw ste (w v) would be 0, giving 2.
    let rules = "def ste_round (x : R) : R =\n  real (round x)\n  with jvp (x, dx) -> dx\n  with vjp (x, ct) -> ct\n\n\
                 def f (w : R) (v : R) : R = ste_round (w * v) * v\n";
    let expected = [[0.0, 4.0], [4.0, 2.6]];
    let at = Inputs::new()
        .with("w", Value::Real(1.3))
        .with("v", Value::Real(2.0));
    for outer in ["grad", "grad_rev"] {
        for inner in ["grad", "grad_rev"] {
            for (row, want) in expected.iter().enumerate() {
                let text = format!(
                    "{rules}\ndef h (w : R) (v : R) : (R, R) =\n  \
                     {outer} (fun p -> ({inner} (fun q -> f q.1 q.2) p).{}) (w, v)\n",
                    row + 1
                );
                let got = value_at(&program(&text), &at)
                    .unwrap_or_else(|e| panic!("{outer} over {inner}: {}", e.message()));
                let got = reals(&got);
                for (g, w) in got.iter().zip(want) {
                    assert!(
                        (g - w).abs() <= 1e-12,
                        "{outer} over {inner}, row {row}: {got:?} vs {want:?}"
                    );
                }
            }
            // Forward over the inner derivative by `jvp` too.
            let text = format!(
                "{rules}\ndef h (w : R) (v : R) : (R, R) =\n  \
                 (jvp (fun p -> {inner} (fun q -> f q.1 q.2) p) (w, v) (1, 0)).2\n"
            );
            let got = value_at(&program(&text), &at)
                .unwrap_or_else(|e| panic!("jvp over {inner}: {}", e.message()));
            assert_eq!(reals(&got), vec![0.0, 4.0], "jvp over {inner}");
        }
    }
}

/// Every histogram and `scatter`, differentiated in the destination and
/// the values: its reverse derivative writes every partial primitive
/// (`gather`, `gather_won`, `pick_dest`, the winners, `dhist_mul_*`).
const HISTOGRAMS: &str = "def g (d : [m]R) (is : [n]Int) (z : [n]R) : R =
  sum (reduce_by_index d (*) is z) + sum (reduce_by_index (map (fun y -> y * y) d) min is (map (fun y -> y * y) z))
    + sum (reduce_by_index d max is (map sin z)) + sum (reduce_by_index d (+) is (map (fun y -> y * y * y) z))
    + dot (scatter d is z) (scatter d is z)
def hvp (d : [m]R) (is : [n]Int) (x : [n]R) (td : [m]R) (tx : [n]R) : ([m]R, [n]R) =
  (jvp (fun p -> GRAD (fun q -> let (e, z) = q in g e is z) p) (d, x) (td, tx)).2
";

fn hvp(grad: &str, d: &[f64], is: &[i64], x: &[f64], td: &[f64], tx: &[f64]) -> Value {
    let p = program(&HISTOGRAMS.replace("GRAD", grad));
    hvp_in(&p, &adrev::Backend::Eval, d, is, x, td, tx)
}

/// `hvp` of `p` on `backend`.
fn hvp_in(
    p: &Program,
    backend: &adrev::Backend,
    d: &[f64],
    is: &[i64],
    x: &[f64],
    td: &[f64],
    tx: &[f64],
) -> Value {
    let inputs = Inputs::new()
        .with("d", Value::reals(d))
        .with(
            "is",
            Value::array(is.iter().map(|&i| Value::Int(i)).collect()),
        )
        .with("x", Value::reals(x))
        .with("td", Value::reals(td))
        .with("tx", Value::reals(tx));
    p.compile(&Request::new(Kind::Value).backend(backend.clone()))
        .and_then(|c| c.call(&inputs))
        .unwrap_or_else(|e| panic!("{backend:?}: {}", e.message()))
        .value
}

/// The indices and the direction of the histograms' Hessian-vector
/// products, and their points: a zero in a product's bin, two zeros in
/// one, a zero destination, ties of min and max, an index out of range,
/// and an empty bin.
const HIST_IS: [i64; 10] = [0, 0, 0, 1, 1, 2, 5, -1, 3, 3];
const HIST_TD: [f64; 5] = [0.5, -1.0, 2.0, 0.25, 1.5];
const HIST_TX: [f64; 10] = [1.0, -0.5, 2.0, 1.0, 0.75, -1.0, 1.0, 0.5, -2.0, 1.25];
const HIST_POINTS: [([f64; 5], [f64; 10]); 4] = [
    (
        [2.0, 3.0, 2.0, 1.5, 0.5],
        [1.0, 2.0, 0.5, 0.3, 3.0, 1.5, 4.0, 2.0, 0.7, 1.1],
    ),
    (
        [2.0, 3.0, 2.0, 1.5, 0.5],
        [1.0, 0.0, 0.5, 0.0, 0.0, 1.5, 4.0, 2.0, 0.0, 1.1],
    ),
    (
        [0.0, 3.0, 0.0, 1.5, 0.0],
        [1.0, 2.0, 0.0, 0.3, 3.0, 1.5, 0.0, 2.0, 0.7, 0.7],
    ),
    (
        [1.0, 1.0, 2.0, 1.0, 0.5],
        [1.0, 1.0, 1.0, 1.0, 1.0, 2.0, 4.0, 2.0, 1.0, 1.0],
    ),
];

#[test]
fn forward_over_reverse_of_histograms_equals_forward_over_forward() {
    // Hessian-vector products through every histogram's reverse
    // derivative (the tangents of its partials, syntax::hist::rules)
    // against forward over forward (dual numbers through the histograms
    // themselves), at [`HIST_POINTS`].
    for (d, x) in &HIST_POINTS {
        let fr = hvp("grad_rev", d, &HIST_IS, x, &HIST_TD, &HIST_TX);
        let ff = hvp("grad", d, &HIST_IS, x, &HIST_TD, &HIST_TX);
        close(&fr, &ff, 1e-12).unwrap_or_else(|e| panic!("at d = {d:?}, x = {x:?}: fr vs ff: {e}"));
    }
}

/// The point of the Hessian-vector products worked out by hand: d, is
/// (index 5 out of range), x and the direction t.
fn hand_point() -> Inputs<'static> {
    Inputs::new()
        .with("d", Value::reals(&[2.0, 3.0, 2.0]))
        .with(
            "is",
            Value::array([0, 0, 0, 1, 1, 2, 5].map(Value::Int).to_vec()),
        )
        .with("x", Value::reals(&[1.0, 2.0, 0.5, 0.0, 3.0, 1.5, 4.0]))
        .with("t", Value::reals(&[1.0, 1.0, 2.0, 1.0, 0.0, 1.0, 1.0]))
}

#[test]
fn a_hessian_vector_product_through_histograms_by_hand() {
    // g z is, per bin b (index 5 is out of range): the product
    // d[b] · Π z_j, the min of d[b] and the z_j², the sum of the z_j³, and
    // the scatter's last write squared; the bins are {x0, x1, x2}, {x3 = 0,
    // x4}, {x5}. H t: the product 2 x0 x1 x2 gives [2 x2 t1 + 2 x1 t2,
    // 2 x2 t0 + 2 x0 t2, 2 x1 t0 + 2 x0 t1] = [9, 5, 6] and 3 x3 x4 gives
    // [3 t4, 3 t3] = [0, 3] (a zero factor); the min's winners x2 (0.25)
    // and x3 (0) give 2 t2 = 4 and 2 t3 = 2 (bin 2's winner is d2 = 2 <
    // 2.25); the cubes 6 x_j t_j = [6, 12, 6, 0, 0, 9]; the scatter's last
    // writers x2, x4, x5 give 2 t_j = [4, 0, 2].
    let text = "def h (d : [m]R) (is : [n]Int) (x : [n]R) (t : [n]R) : [n]R =
  let g = fun (z : [n]R) -> sum (reduce_by_index d (*) is z) + sum (reduce_by_index d min is (map (fun y -> y * y) z))
    + sum (reduce_by_index d (+) is (map (fun y -> y * y * y) z)) + dot (scatter d is z) (scatter d is z) in
  (jvp (fun y -> grad_rev g y) x t).2";
    let inputs = hand_point();
    let p = program(text);
    for backend in [adrev::Backend::Eval, adrev::Backend::C(Default::default())] {
        let got = p
            .compile(&Request::new(Kind::Value).backend(backend.clone()))
            .and_then(|c| c.call(&inputs))
            .unwrap_or_else(|e| panic!("{}", e.message()))
            .value;
        assert_eq!(
            got,
            Value::reals(&[15.0, 17.0, 20.0, 2.0, 3.0, 11.0, 0.0]),
            "{backend:?}"
        );
    }
}

#[test]
fn forward_over_reverse_of_histograms_agrees_with_central_differences() {
    // Away from ties and kinks (the first point above): the derivative of
    // the gradient along (td, tx), by central differences of `grad_rev`.
    let (d, x) = HIST_POINTS[0];
    let (is, td, tx) = (HIST_IS, HIST_TD, HIST_TX);
    let fr = hvp("grad_rev", &d, &is, &x, &td, &tx);
    let grad = program(&HISTOGRAMS.replace(
        "(jvp (fun p -> GRAD (fun q -> let (e, z) = q in g e is z) p) (d, x) (td, tx)).2",
        "grad_rev (fun q -> let (e, z) = q in g e is z) (d, x)",
    ));
    let h = 1e-6;
    let at = |s: f64| {
        let dd: Vec<f64> = d.iter().zip(&td).map(|(a, t)| a + s * t).collect();
        let xx: Vec<f64> = x.iter().zip(&tx).map(|(a, t)| a + s * t).collect();
        let inputs = Inputs::new()
            .with("d", Value::reals(&dd))
            .with(
                "is",
                Value::array(is.iter().map(|&i| Value::Int(i)).collect()),
            )
            .with("x", Value::reals(&xx))
            .with("td", Value::reals(&td))
            .with("tx", Value::reals(&tx));
        value_at(&grad, &inputs).expect("the gradient runs")
    };
    let (up, down) = (at(h), at(-h));
    let diff = |a: &Value, b: &Value| -> Vec<f64> {
        let (a, b) = (reals(a), reals(b));
        a.iter().zip(&b).map(|(u, v)| (u - v) / (2.0 * h)).collect()
    };
    let fd = diff(&up, &down);
    let got = reals(&fr);
    assert_eq!(got.len(), fd.len());
    for (k, (a, b)) in got.iter().zip(&fd).enumerate() {
        assert!(
            (a - b).abs() <= 1e-5 * (1.0 + b.abs()),
            "component {k}: forward over reverse {a} vs differences {b}"
        );
    }
}

/// [`HISTOGRAMS`]' Hessian along `(td, tx)` by reverse over reverse: the
/// gradient of `<grad g, (td, tx)>`, which is `H (td, tx)` since H is
/// symmetric. The outer reverse mode differentiates the partials the inner
/// one spliced in, by their adjoints (`syntax::hist::rules`).
const HISTOGRAMS_RR: &str = "def hvp (d : [m]R) (is : [n]Int) (x : [n]R) (td : [m]R) (tx : [n]R) : ([m]R, [n]R) =
  grad_rev (fun p -> let (gd, gz) = grad_rev (fun q -> let (e, z) = q in g e is z) p in dot gd td + dot gz tx) (d, x)
";

#[test]
fn reverse_over_reverse_of_histograms_equals_forward_over_forward() {
    // At [`HIST_POINTS`] in the evaluator and, at the first one, in C.
    let defs = HISTOGRAMS
        .split("def hvp")
        .next()
        .expect("the definition of g");
    let rr = program(&format!("{defs}{HISTOGRAMS_RR}"));
    for (k, (d, x)) in HIST_POINTS.iter().enumerate() {
        let ff = hvp("grad", d, &HIST_IS, x, &HIST_TD, &HIST_TX);
        let mut backends = vec![adrev::Backend::Eval];
        if k == 0 {
            backends.push(adrev::Backend::C(Default::default()));
        }
        for backend in &backends {
            let got = hvp_in(&rr, backend, d, &HIST_IS, x, &HIST_TD, &HIST_TX);
            close(&got, &ff, 1e-12)
                .unwrap_or_else(|e| panic!("{backend:?} at d = {d:?}, x = {x:?}: rr vs ff: {e}"));
        }
    }
}

#[test]
fn reverse_over_reverse_of_a_histogram_by_hand() {
    // The scatter and the product of the hand-computed forward-over-reverse
    // test above, by grad_rev over grad_rev: the gradient of <grad g x, t>
    // in x is H t = [9, 5, 6, 0, 3, 0, 0] for the product 2 x0 x1 x2 and
    // 3 x3 x4 (bins {0, 1, 2}, {3, 4}; index 5 out of range), plus the
    // scatter's last writers x2, x4, x5 squared: 2 t_j = [0, 0, 4, 0, 0, 2,
    // 0], so [9, 5, 10, 0, 3, 2, 0].
    let text = "def h (d : [m]R) (is : [n]Int) (x : [n]R) (t : [n]R) : [n]R =
  let g = fun (z : [n]R) -> sum (reduce_by_index d (*) is z) + dot (scatter d is z) (scatter d is z) in
  grad_rev (fun y -> dot (grad_rev g y) t) x";
    let inputs = hand_point();
    let got = value_at(&program(text), &inputs).unwrap_or_else(|e| panic!("{}", e.message()));
    assert_eq!(got, Value::reals(&[9.0, 5.0, 10.0, 0.0, 3.0, 2.0, 0.0]));
}

#[test]
fn vjp_rev_agrees_with_vjp_and_its_value() {
    let f = "fun (z : [n]R) -> (map (fun a -> sin a * z[1]) z, reduce (*) 1 z)";
    let inputs = Inputs::new()
        .with("x", Value::reals(&[0.3, -1.2, 2.0, 0.7]))
        .with(
            "dy",
            Value::tuple(vec![
                Value::reals(&[1.0, -2.0, 0.5, 3.0]),
                Value::Real(0.25),
            ]),
        );
    let run = |c: &str| {
        let text =
            format!("def f (x : [n]R) (dy : ([n]R, R)) : (([n]R, R), [n]R) = {c} ({f}) x dy");
        value_at(&program(&text), &inputs).unwrap_or_else(|e| panic!("{c}: {}", e.message()))
    };
    let (fwd, rev) = (run("vjp"), run("vjp_rev"));
    close(&fwd, &rev, 1e-12).unwrap_or_else(|e| panic!("vjp vs vjp_rev: {e}"));
}

#[test]
fn grad_rev_agrees_with_central_differences_through_loops_and_conditionals() {
    let text = "def logsumexp (y : [n]R) : R = log (sum (map exp y))
      def g (y : [n]R) : R = foldl (fun acc v -> if v > 0 then acc * v + 1 else acc - sin v) 0.5 (shift1L (scanl (+) 0 y)) + logsumexp y
      def f (x : [n]R) : [n]R = grad_rev (fun y -> g y) x";
    // The prefix sums (0.4, -0.9, 0.3, 2.4) stay away from the kink at 0.
    let x = [0.4, -1.3, 1.2, 2.1];
    let p = program(text);
    let got = value_at(&p, &Inputs::new().with("x", Value::reals(&x)))
        .unwrap_or_else(|e| panic!("{}", e.message()));
    let g = program(&text.replace("def f (x : [n]R) : [n]R = grad_rev (fun y -> g y) x", ""));
    let h = 1e-6;
    let mut fd = Vec::new();
    for i in 0..x.len() {
        let (mut up, mut down) = (x.to_vec(), x.to_vec());
        up[i] += h;
        down[i] -= h;
        let at = |v: &[f64]| {
            value_at(&g, &Inputs::new().with("y", Value::reals(v)))
                .expect("g runs")
                .as_real()
                .expect("a real")
        };
        fd.push((at(&up) - at(&down)) / (2.0 * h));
    }
    close(&got, &Value::reals(&fd), 1e-6)
        .unwrap_or_else(|e| panic!("grad_rev vs differences: {e}"));
}

#[test]
fn refusals_are_positioned_user_errors() {
    let cases = [
        // A derivative with respect to a function.
        (
            "def f (x : R) : R = let k = grad_rev (fun (h : R -> R) -> h x) (fun y -> y) in 0",
            "`grad_rev` needs a point of ground type",
        ),
        // Of a function that is not real-valued.
        (
            "def f (x : [n]R) : [n]R = grad_rev (fun y -> y) x",
            "expected `R`",
        ),
        // A function chosen at run time and passed as an argument.
        (
            "def f (x : R) : R =
               let k = fun (h : R -> R) -> grad_rev h x in
               k (if x > 0 then (fun y -> y * y) else (fun y -> y))",
            "function",
        ),
        // What reverse mode does not take: the derivative of `digamma`,
        // which the inner gradient of `lgamma` leaves, at `lgamma`.
        (
            "def f (x : R) : R = grad_rev (fun y -> grad_rev (fun z -> lgamma z) y) x",
            "digamma",
        ),
        // The same over a forward derivative (found by the fuzzer,
        // docs/testing.md: `fuzz_digamma_reverse`), named as such.
        (
            "def f (x : R) : R = grad_rev (fun y -> diff (fun z -> lgamma z) y) x",
            "an inner derivative of `lgamma` wrote it",
        ),
    ];
    for (text, want) in cases {
        let e = error(text);
        assert!(!e.is_internal(), "{text}: {}", e.message());
        assert!(e.message().contains(want), "{text}: {}", e.message());
        assert!(
            e.message().contains("inlang.ad:"),
            "{text}: no position in {}",
            e.message()
        );
    }
}

#[test]
fn forward_alone_refuses_grad_rev_by_name() {
    let m = syntax::compile(syntax::SourceFile {
        name: "t.ad".into(),
        text: "def f (x : R) : R = grad_rev (fun y -> y * y) x".into(),
    })
    .expect("compiles");
    let e = forward::expand(&m).expect_err("forward has no reverse mode of its own");
    assert!(e.to_string().contains("expand_with_reverse"), "{e}");
}

/// The cost (Fig. 11, counted by the evaluator) of `c (fun y -> F y) x`
/// over the cost of `F x`, at `n` reals.
fn cost_ratio(construct: &str, n: usize) -> f64 {
    let body = "reduce (+) 0 (map (fun a -> sin a * a) y)";
    let x = Value::reals(&(0..n).map(|i| 0.1 * i as f64).collect::<Vec<_>>());
    let cost = |text: String| {
        let p = program(&text);
        let m = p
            .expanded("cost", None)
            .unwrap_or_else(|e| panic!("{}", e.message()));
        let def = m.defs.last().expect("a definition").clone();
        let (_, c) = semantics::cost::dynamic_cost(&m, &def, std::slice::from_ref(&x))
            .unwrap_or_else(|e| panic!("{e}"));
        c.total() as f64
    };
    let f = cost(format!("def f (y : [n]R) : R = {body}"));
    let g = cost(format!(
        "def g (x : [n]R) : [n]R = {construct} (fun (y : [n]R) -> {body}) x"
    ));
    g / f
}

#[test]
fn grad_rev_costs_a_constant_multiple_of_the_function_and_grad_a_multiple_of_n() {
    // Theorem 5.4 for the spliced gradient: its cost over the function's
    // stays under the bound 4 * 3^p (p = 1 here, the `map`), whatever n;
    // forward mode's `grad` makes n passes.
    let bound = semantics::cost::cheap_gradient_bound(1);
    for n in [8, 64] {
        let r = cost_ratio("grad_rev", n);
        assert!(r <= bound, "grad_rev at n = {n}: {r} > {bound}");
    }
    let (small, large) = (cost_ratio("grad", 8), cost_ratio("grad", 64));
    assert!(
        large > 6.0 * small,
        "grad: {small} at n = 8, {large} at n = 64"
    );
    assert!(cost_ratio("grad_rev", 64) < 1.2 * cost_ratio("grad_rev", 8));
}

#[test]
fn reverse_over_forward_of_a_scatter_by_hand() {
    // Found by the fuzzer (docs/testing.md, "Findings"): forward mode
    // wrote a scatter of dual pairs, which reverse mode refused. With is =
    // i / 2 = [0, 0, 1], v1 wins bin 0 over v0, v2 takes bin 1 and bin 2
    // keeps d2: the function of s is s² (v1² + v2² + d2²) = 29 s², its
    // derivative at s = 1.5 is 87, and that derivative's gradient is
    // 4 s (0, 0, d2) in d and 4 s (0, v1, v2) in v.
    let text = "def f (d : [m]R) (v : [n]R) : R =
  diff (fun s -> sum (map (fun a -> a * a) (scatter (map (fun a -> a * s) d) (build (length v) (fun i -> i / 2)) (map (fun a -> a * s) v)))) 1.5";
    let inputs = Inputs::new()
        .with("d", Value::reals(&[1.0, 2.0, 3.0]))
        .with("v", Value::reals(&[0.5, 4.0, -2.0]));
    let p = program(text);
    for route in [adrev::Route::Unf, adrev::Route::Forward] {
        let out = p
            .compile(&Request::new(Kind::Grad).route(route))
            .and_then(|c| c.call(&inputs))
            .unwrap_or_else(|e| panic!("{route:?}: {}", e.message()));
        assert_eq!(out.value, Value::Real(87.0), "{route:?}");
        assert_eq!(out.gradient("d"), Some(&Value::reals(&[0.0, 0.0, 18.0])));
        assert_eq!(out.gradient("v"), Some(&Value::reals(&[0.0, 24.0, -12.0])));
    }
}

#[test]
fn a_scatter_into_a_longer_destination_in_every_forward_mode() {
    // Found by the fuzzer after scatter got its tangent rule: pasted into
    // the vectorised tangents, the rule's sizes clashed with the
    // program's (`[m+1]R` against `[m]R`); that mode keeps scattering the
    // dual pairs. By hand: dest = scanl (+) 0 A = [0, 1, 3, 6], the
    // scatter writes A into bins 0..2, so the value is 1 + 2 + 3 + 6 = 12
    // and every A_j counts once in the last bin and once as written.
    let p = program(
        "def f (A : [m]R) : R =
  sum (scatter (scanl (fun (a, b) -> a + b) 0 A) (build (length A) (fun i -> i / 1)) A)",
    );
    let inputs = Inputs::new().with("A", Value::reals(&[1.0, 2.0, 3.0]));
    let want = Value::reals(&[2.0, 2.0, 2.0]);
    let jac = Request::new(Kind::Jacobian {
        mode: adrev::JacobianMode::Forward,
    });
    let out = p
        .compile(&jac)
        .and_then(|c| c.call(&inputs))
        .unwrap_or_else(|e| panic!("{}", e.message()));
    assert_eq!(out.value, Value::Real(12.0));
    assert_eq!(out.jacobian_block("A"), Some(&want));
    for route in [adrev::Route::Unf, adrev::Route::Forward] {
        let out = p
            .compile(&Request::new(Kind::Grad).route(route))
            .and_then(|c| c.call(&inputs))
            .unwrap_or_else(|e| panic!("{route:?}: {}", e.message()));
        assert_eq!(out.gradient("A"), Some(&want), "{route:?}");
    }
}
