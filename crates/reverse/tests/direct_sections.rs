//! The direct macro where seeds/000 gives a rule beyond Fig. 5: free
//! variables in the function of `reduce` (Fig. 13, Section 7.1) and of
//! `map`/`map2`, `foldl` and `map` (Appendix A.3, Fig. 16), and
//! conditionals (Section 7.2, "Solution").
//! Each program's gradient by the direct macro is checked against the UNF
//! path (an independent implementation of the same derivatives) at several
//! points, and against central finite differences where the program is
//! smooth; the branch not taken never reaches the gradient; a chain of
//! conditionals gives an output linear in its depth.

use semantics::Value;

fn compile(text: &str) -> syntax::Module {
    syntax::compile(syntax::SourceFile {
        name: "t.ad".into(),
        text: text.into(),
    })
    .expect("compiles")
}

/// `(value, g_1, ..., g_k)` by the direct macro and by the UNF path, both
/// verified, at `at`.
fn both(text: &str, at: &[(String, Value)]) -> (Vec<Value>, Vec<Value>) {
    let m = compile(text);
    let def = m.defs.last().expect("an entry").clone();
    let cfg = reverse::Config::default();
    let direct = reverse::reverse_direct(&m, &def, &cfg)
        .unwrap_or_else(|e| panic!("direct refuses {text}: {e}"));
    syntax::verify(&direct).expect("the direct output verifies");
    let unf = reverse::gradient(&m, &def, &cfg).expect("the UNF path");
    let run = |g: &syntax::Module| -> Vec<Value> {
        semantics::eval_entry(g, None, at)
            .unwrap_or_else(|e| panic!("{text}: {e}"))
            .as_tuple()
            .expect("a tuple")
            .to_vec()
    };
    (run(&direct), run(&unf))
}

fn reals(name: &str, xs: &[f64]) -> (String, Value) {
    (name.to_string(), Value::reals(xs))
}

fn real(name: &str, x: f64) -> (String, Value) {
    (name.to_string(), Value::Real(x))
}

/// The value of the Source program at `at`.
fn value(text: &str, at: &[(String, Value)]) -> f64 {
    let m = compile(text);
    semantics::eval_entry(&m, None, at)
        .expect("the program runs")
        .as_real()
        .expect("a real")
}

/// Central differences of the program in every real of every input.
fn central(text: &str, at: &[(String, Value)]) -> Vec<f64> {
    let h = 1e-6;
    let mut out = Vec::new();
    for (i, (_, v)) in at.iter().enumerate() {
        let n = match v {
            Value::Real(_) => 1,
            Value::Array(items) => items.len(),
            _ => 0,
        };
        for j in 0..n {
            let shifted = |d: f64| -> Vec<(String, Value)> {
                let mut at = at.to_vec();
                at[i].1 = match &at[i].1 {
                    Value::Real(x) => Value::Real(x + d),
                    Value::Array(items) => Value::array(
                        items
                            .iter()
                            .enumerate()
                            .map(|(k, x)| {
                                let x = x.as_real().expect("a real");
                                Value::Real(if k == j { x + d } else { x })
                            })
                            .collect(),
                    ),
                    other => other.clone(),
                };
                at
            };
            out.push((value(text, &shifted(h)) - value(text, &shifted(-h))) / (2.0 * h));
        }
    }
    out
}

fn flat(vs: &[Value]) -> Vec<f64> {
    let mut out = Vec::new();
    for v in vs {
        match v {
            Value::Real(x) => out.push(*x),
            Value::Array(items) => out.extend(items.iter().map(|x| x.as_real().expect("real"))),
            other => panic!("unexpected gradient {other}"),
        }
    }
    out
}

/// Direct = UNF exactly in shape and up to rounding in value; and, where
/// `smooth`, both match central differences.
fn agree(text: &str, at: &[(String, Value)], smooth: bool) {
    let (d, u) = both(text, at);
    assert_eq!(d.len(), u.len(), "{text}");
    for (i, (a, b)) in d.iter().zip(&u).enumerate() {
        assert!(
            a.approx_eq_default(b),
            "{text} at {at:?}: component {i}: direct {a}, UNF {b}"
        );
    }
    if smooth {
        let fd = central(text, at);
        let ad = flat(&d[1..]);
        assert_eq!(fd.len(), ad.len());
        for (a, f) in ad.iter().zip(&fd) {
            assert!(
                (a - f).abs() <= 1e-5 * (1.0 + f.abs()),
                "{text} at {at:?}: direct {a}, finite differences {f}"
            );
        }
    }
}

/// A few inputs `A`, `B` (length 4) and `c`, `d`.
fn points() -> Vec<Vec<(String, Value)>> {
    [
        ([0.5, -1.25, 2.0, 0.75], [1.5, 0.25, -0.5, 1.0], 0.7, -0.3),
        ([-0.3, 0.9, 1.1, -2.0], [0.4, -1.5, 2.5, 0.6], -1.2, 0.8),
        ([1.0, 2.0, 3.0, 4.0], [4.0, 3.0, 2.0, 1.0], 0.25, 1.5),
    ]
    .iter()
    .map(|(a, b, c, d)| vec![reals("A", a), reals("B", b), real("c", *c), real("d", *d)])
    .collect()
}

const HEADER: &str = "def f (A : [n]R) (B : [n]R) (c : R) (d : R) : R =\n  ";

#[test]
fn free_variables_in_reduce_and_map2_bodies_fig_13() {
    let bodies = [
        // Fig. 13: the function of reduce reads a free variable.
        "reduce (fun (x, y) -> x + c * y) 0 A",
        "reduce (fun (x, y) -> x * c + sin (y * d)) d A",
        "reduce (fun (x, y) -> x + y * y * c) (c * d) (map2 (fun (a, b) -> a * d - b) A B)",
        // Free variables in map2 and map bodies, and a reduce over them.
        "reduce (+) 0 (map2 (fun (a, b) -> a * c + sin (b * d)) A B)",
        "reduce (+) 0 (map (fun a -> exp (a * c) * d) A) * c",
        "let s = reduce (fun (x, y) -> x + y * d) c A in reduce (fun (x, y) -> x * 0.5 + y * s) s B",
    ];
    for body in bodies {
        let text = format!("{HEADER}{body}\n");
        for at in points() {
            agree(&text, &at, true);
        }
    }
}

#[test]
fn foldl_and_map_fig_16() {
    let bodies = [
        // foldl: an initial value that is not a unit, free variables.
        "foldl (fun (acc, a) -> acc * c + a) d A",
        "foldl (fun (acc, a) -> sin acc * a + d) (c * c) (map (fun b -> b * d) B)",
        // Elements of another ground type: tuples.
        "foldl (fun (acc, p) -> acc * p.1 + p.2 * c) d (map2 (fun (a, b) -> (a, b * b)) A B)",
        // map of a map, free variables in both.
        "reduce (+) 0 (map (fun a -> a * c) (map (fun b -> exp (b * d)) B))",
    ];
    for body in bodies {
        let text = format!("{HEADER}{body}\n");
        for at in points() {
            agree(&text, &at, true);
        }
    }
}

#[test]
fn conditionals_section_7_2() {
    let bodies = [
        // A real-valued conditional on parameters, a chain, nesting.
        "if c > d then c * d else sin c + d",
        "if c > 0 && d < 1 then c * c else if not (c > d) then d * 3 else c - d",
        "if c > 0 then (if d > 0 then c * d else c) else d * d",
        // A tuple- and an array-valued conditional.
        "let p = if c > d then (c, c * d) else (d, sin c) in p.1 * p.2",
        "reduce (+) 0 (if c > d then map (fun a -> a * c) A else B)",
        // Conditionals in the bodies of map, map2 and reduce, reading free
        // variables of the body.
        "reduce (+) 0 (map (fun a -> if a > c then a * d else c * c) A)",
        "reduce (+) 0 (map2 (fun (a, b) -> if a > b then a * c else b * d) A B)",
        "reduce (fun (x, y) -> if y > x then y * c else x + d) 0 A",
        // The condition computes with reals; equality.
        "if sin (c * d) + c > 0.1 then c else d",
        "if c == d || c != 0.5 then c * d else d",
    ];
    for body in bodies {
        let text = format!("{HEADER}{body}\n");
        for at in points() {
            // Smooth at these points: no input sits on a condition's edge.
            agree(&text, &at, true);
        }
    }
}

#[test]
fn relu_forms_agree_at_zero() {
    let bodies = [
        "reduce (+) 0 (map (fun x -> max x 0) A)",
        "reduce (+) 0 (map (fun x -> if x > 0 then x else 0) A)",
        "reduce (+) 0 (map (fun x -> (x + abs x) / 2) A)",
    ];
    let at = vec![
        reals("A", &[-1.5, 0.0, 2.0, 0.0]),
        reals("B", &[0.0; 4]),
        real("c", 0.0),
        real("d", 0.0),
    ];
    for body in bodies {
        let text = format!("{HEADER}{body}\n");
        let (d, _) = both(&text, &at);
        assert!(
            d[1].approx_eq_default(&Value::reals(&[0.0, 0.0, 1.0, 0.0])),
            "{body}: {}",
            d[1]
        );
        agree(&text, &at, false);
    }
}

#[test]
fn the_branch_not_taken_never_reaches_the_gradient() {
    // log c at c = -2 and its derivative are never computed: -4, not NaN.
    let text = format!("{HEADER}if c > 0 then log c else c * c\n");
    let at = vec![
        reals("A", &[1.0]),
        reals("B", &[1.0]),
        real("c", -2.0),
        real("d", 0.0),
    ];
    let (d, _) = both(&text, &at);
    assert_eq!(d[3], Value::Real(-4.0));
    // An infinite derivative (sqrt at 0) in the branch not taken, in a map.
    let text = format!("{HEADER}reduce (+) 0 (map (fun a -> if a > 0 then sqrt a else a * d) A)\n");
    let at = vec![
        reals("A", &[0.0, -1.0]),
        reals("B", &[1.0, 1.0]),
        real("c", 0.0),
        real("d", 3.0),
    ];
    let (d, u) = both(&text, &at);
    assert_eq!(d[1], Value::reals(&[3.0, 3.0]));
    assert_eq!(d[4], Value::Real(-1.0));
    assert_eq!(d, u);
}

#[test]
fn a_chain_of_conditionals_is_written_once() {
    // if c > 1 then c * d else if c > 2 then ... : depth h gives an output
    // of size O(h), the branches' gradients computed with their values.
    let chain = |h: usize| -> String {
        let mut e = "d".to_string();
        for i in (0..h).rev() {
            e = format!("if c > {i} then c * {i} + d else {e}");
        }
        format!("def f (c : R) (d : R) : R =\n  {e}\n")
    };
    let size = |h: usize| -> usize {
        let m = compile(&chain(h));
        let def = m.defs.last().expect("an entry").clone();
        let g = reverse::reverse_direct(&m, &def, &reverse::Config::default()).expect("direct");
        g.exprs.len()
    };
    let (s1, s2) = (size(100), size(200));
    assert!(
        (s2 as f64) < 2.2 * s1 as f64,
        "depth 100: {s1} nodes, depth 200: {s2} nodes"
    );
    let text = chain(30);
    for c in [-1.0, 0.5, 7.5, 40.0] {
        let at = vec![real("c", c), real("d", 0.25)];
        let (d, u) = both(&text, &at);
        assert_eq!(d, u, "c = {c}");
    }
}
