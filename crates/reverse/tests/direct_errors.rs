//! What the direct macro refuses, and how: constructs outside the language
//! it covers are named with their span; `wrt` lists naming no parameter,
//! a parameter twice or none are refused; a program whose result is not a
//! real has no gradient. A `wrt` subset gives the matching part of the
//! whole gradient.

use semantics::Value;

fn compile(text: &str) -> syntax::Module {
    syntax::compile(syntax::SourceFile {
        name: "t.ad".into(),
        text: text.into(),
    })
    .expect("compiles")
}

fn direct(text: &str, wrt: Option<&[&str]>) -> Result<syntax::Module, reverse::Error> {
    let m = compile(text);
    let def = m.defs.last().expect("an entry").clone();
    let cfg = reverse::Config {
        wrt: wrt.map(|w| w.iter().map(|s| s.to_string()).collect()),
    };
    reverse::reverse_direct(&m, &def, &cfg)
}

/// The error message and the text its span covers.
fn refusal(text: &str) -> (String, String) {
    let e = direct(text, None).expect_err("refused");
    let span = e.span();
    let covered = text
        .get(span.lo as usize..span.hi as usize)
        .unwrap_or("")
        .to_string();
    (e.to_string(), covered)
}

#[test]
fn constructs_outside_the_language_are_named_at_their_span() {
    let cases = [
        (
            "def f (A : [n]R) : R = let S = scanl (fun (a, b) -> a + b) 0 A in reduce (+) 0 S",
            "`scanl`",
            "scanl (fun (a, b) -> a + b) 0 A",
        ),
        (
            "def f (A : [n]R) (x : R) : R = if length A > 2 then x else 0",
            "`length`",
            "length A",
        ),
        ("def f (A : [n]R) : R = A[0]", "`indexing`", "A[0]"),
        (
            "def f (A : [n]R) : R = let p = foldl (fun (s, a) -> (s.1 + a, s.2 * a)) (0, 1) A in p.1",
            "`foldl`",
            "foldl (fun (s, a) -> (s.1 + a, s.2 * a)) (0, 1) A",
        ),
        (
            "def f (x : R) : R = reduce (+) x [x, x]",
            "`array literal`",
            "[x, x]",
        ),
        ("def f (n : Int) (x : R) : R = x", "`Int`", "n : Int"),
    ];
    for (text, construct, covered) in cases {
        let (message, at) = refusal(text);
        assert!(
            message.contains("not supported yet by reverse mode"),
            "{message}"
        );
        assert!(message.contains(construct), "{text}: {message}");
        assert_eq!(at, covered, "{text}: {message}");
    }
}

#[test]
fn a_result_that_is_not_a_real_has_no_gradient() {
    let (message, at) = refusal("def f (x : R) : (R, R) = (x, x)");
    assert!(message.contains("returns (R, R)"), "{message}");
    assert_eq!(at, "f");
}

#[test]
fn bad_wrt_lists_are_refused() {
    let text = "def f (x : R) (y : R) : R = x * y";
    for (wrt, needle) in [
        (vec!["z"], "`z` is not a parameter of `f`"),
        (vec!["x", "x"], "listed twice"),
        (vec![], "no parameter"),
    ] {
        let e = direct(text, Some(&wrt)).expect_err("refused");
        assert!(e.to_string().contains(needle), "{wrt:?}: {e}");
    }
}

#[test]
fn a_wrt_subset_is_the_matching_part_of_the_gradient() {
    let text =
        "def f (x : R) (A : [n]R) (y : R) : R = reduce (+) 0 (map (fun a -> a * x + y * y) A)";
    let at = vec![
        ("x".to_string(), Value::Real(0.5)),
        ("A".to_string(), Value::reals(&[1.0, 2.0, 3.0])),
        ("y".to_string(), Value::Real(-2.0)),
    ];
    let run = |g: &syntax::Module| {
        semantics::eval_entry(g, None, &at)
            .expect("runs")
            .as_tuple()
            .expect("a tuple")
            .to_vec()
    };
    let all = run(&direct(text, None).expect("direct"));
    // d/dx = sum A = 6, d/dA = x each, d/dy = 2 y n = -12.
    assert!(all[1].approx_eq_default(&Value::Real(6.0)), "{}", all[1]);
    assert!(
        all[2].approx_eq_default(&Value::reals(&[0.5, 0.5, 0.5])),
        "{}",
        all[2]
    );
    assert!(all[3].approx_eq_default(&Value::Real(-12.0)), "{}", all[3]);
    let part = direct(text, Some(&["y", "x"])).expect("direct");
    let some = run(&part);
    assert_eq!(some.len(), 3);
    assert!(some[1].approx_eq_default(&all[3]));
    assert!(some[2].approx_eq_default(&all[1]));
    let ret = part.defs[0].ret.clone().expect("typed");
    assert_eq!(ret, syntax::Ty::Tuple(vec![syntax::Ty::Real; 3]));
}

#[test]
fn open_reduce_and_tuple_parameters_are_differentiated() {
    // Beyond the UNF path: the function and the initial value of reduce
    // read a parameter (Section 7.1). f = w^(n+1) + (p.1 * p.2 summed).
    let text = "def f (A : [n]R) (w : R) (p : (R, [n]R)) : R =
      reduce (fun (a, b) -> a * w + b * p.1) w A + reduce (+) 0 p.2";
    let m = compile(text);
    let def = m.defs.last().expect("entry").clone();
    let g = reverse::reverse_direct(&m, &def, &reverse::Config::default()).expect("direct");
    // The UNF path differentiates open reduce too (as a left fold).
    let via_unf = reverse::gradient(&m, &def, &reverse::Config::default()).expect("unf path");
    let (a, w, c) = ([0.5, -1.0, 2.0], 0.7, 1.5);
    let at = vec![
        ("A".to_string(), Value::reals(&a)),
        ("w".to_string(), Value::Real(w)),
        (
            "p".to_string(),
            Value::tuple(vec![Value::Real(c), Value::reals(&[1.0, 1.0, 1.0])]),
        ),
    ];
    let out = semantics::eval_entry(&g, None, &at).expect("runs");
    let unf_out = semantics::eval_entry(&via_unf, None, &at).expect("runs");
    assert!(unf_out.approx_eq_default(&out), "{unf_out} vs {out}");
    let out = out.as_tuple().expect("tuple");
    // acc_0 = w, acc_{i+1} = acc_i * w + a_i * c.
    let f = |a: &[f64], w: f64, c: f64| a.iter().fold(w, |acc, x| acc * w + x * c);
    let h = 1e-6;
    let dw = (f(&a, w + h, c) - f(&a, w - h, c)) / (2.0 * h);
    let dc = (f(&a, w, c + h) - f(&a, w, c - h)) / (2.0 * h);
    assert!(
        (out[2].as_real().expect("real") - dw).abs() < 1e-6,
        "{} vs {dw}",
        out[2]
    );
    let gp = out[3].as_tuple().expect("tuple");
    assert!(
        (gp[0].as_real().expect("real") - dc).abs() < 1e-6,
        "{} vs {dc}",
        gp[0]
    );
    assert!(gp[1].approx_eq_default(&Value::reals(&[1.0, 1.0, 1.0])));
    let ga = out[1].as_array().expect("array");
    for i in 0..3 {
        let mut ap = a;
        ap[i] += h;
        let mut am = a;
        am[i] -= h;
        let want = (f(&ap, w, c) - f(&am, w, c)) / (2.0 * h);
        assert!((ga[i].as_real().expect("real") - want).abs() < 1e-6);
    }
}

#[test]
fn maps_over_arrays_of_arrays_are_differentiated() {
    // f M = Σ_r Σ_c M[r][c]^2 * w, gradient 2 M w and Σ M^2.
    let text = "def f (M : [n][m]R) (w : R) : R =
      reduce (+) 0 (map (fun r -> reduce (+) 0 (map (fun x -> x * x * w) r)) M)";
    let g = direct(text, None).expect("direct");
    let rows = [[1.0, -2.0], [0.5, 3.0]];
    let m = Value::array(rows.iter().map(|r| Value::reals(r)).collect());
    let at = vec![("M".to_string(), m), ("w".to_string(), Value::Real(0.5))];
    let out = semantics::eval_entry(&g, None, &at).expect("runs");
    let out = out.as_tuple().expect("tuple");
    let want_m = Value::array(
        rows.iter()
            .map(|r| Value::reals(&r.map(|x| 2.0 * x * 0.5)))
            .collect(),
    );
    assert!(out[1].approx_eq_default(&want_m), "{}", out[1]);
    assert!(
        out[2].approx_eq_default(&Value::Real(1.0 + 4.0 + 0.25 + 9.0)),
        "{}",
        out[2]
    );
}
