//! Forward mode's Jacobian against reverse mode: row r of `jacobian` (jacfwd,
//! one forward pass per input direction, or dF~'s vectorised form) is the
//! gradient of output r computed by reverse mode through UNF. Two
//! independent routes through two different macros, compared on
//! vector-valued programs of several shapes.

use semantics::Value;

fn compile(text: &str) -> syntax::Module {
    syntax::compile(syntax::SourceFile {
        name: "jacobian_rows.ad".to_string(),
        text: text.to_string(),
    })
    .unwrap_or_else(|e| panic!("{e:?}\n{text}"))
}

fn reals(v: &Value) -> Vec<f64> {
    match v {
        Value::Real(x) => vec![*x],
        _ => v
            .as_array()
            .unwrap_or_else(|| panic!("reals expected, got {v}"))
            .iter()
            .flat_map(reals)
            .collect(),
    }
}

fn close(a: f64, b: f64) -> bool {
    semantics::reals_close(a, b, 1e-10, 1e-12)
}

/// A vector-valued entry `F` with parameters `params` (name, type) and a
/// body, checked at `at` (name, literal) for outputs `0..outputs`.
fn check(params: &[(&str, &str)], body: &str, at: &[(&str, &str)], outputs: usize) {
    let sig: String = params
        .iter()
        .map(|(n, t)| format!(" ({n} : {t})"))
        .collect();
    let args: String = params.iter().map(|(n, _)| format!(" {n}")).collect();
    let f_text = format!("def F{sig} : [k]R =\n  {body}\n");
    let m = compile(&f_text);
    let inputs: Vec<(String, Value)> = at
        .iter()
        .zip(&m.defs[0].params)
        .map(|((n, v), p)| {
            let value = semantics::parse_value(v, p.ty.as_ref().expect("typed"))
                .unwrap_or_else(|e| panic!("{v}: {e:?}"));
            (n.to_string(), value)
        })
        .collect();
    for mode in [forward::Mode::Passes, forward::Mode::Vectorised] {
        let cfg = forward::Config {
            mode,
            ..forward::Config::default()
        };
        let j = forward::jacobian_program(&m, &m.defs[0], None, &cfg).expect("jacobian");
        syntax::verify(&j).expect("the jacobian program verifies");
        let out = semantics::eval_entry(&j, None, &inputs).expect("run the jacobian");
        let items = out.as_tuple().expect("(value, J_1, ..., J_k)").to_vec();
        assert_eq!(items.len(), params.len() + 1);
        for r in 0..outputs {
            // Output r alone, a real-valued Source program for reverse mode.
            let g_text = format!("{f_text}def G{sig} : R =\n  (F{args})[{r}]\n");
            let g = compile(&g_text);
            let entry = g.defs.last().expect("G").clone();
            let grad = reverse::gradient(&g, &entry, &reverse::Config::default())
                .unwrap_or_else(|e| panic!("reverse mode: {e:?}\n{g_text}"));
            let got = semantics::eval_entry(&grad, None, &inputs).expect("run the gradient");
            let got = got.as_tuple().expect("(value, g_1, ..., g_k)").to_vec();
            for (p, (name, ty)) in params.iter().enumerate() {
                let row = reals(&got[p + 1]);
                // J_p has the output index first: [k]R for a real
                // parameter, [k][n]R for an array one.
                let column = &items[p + 1];
                let jac_row = if ty.starts_with('[') {
                    reals(&column.as_array().expect("[k][n]R")[r])
                } else {
                    vec![reals(column)[r]]
                };
                assert_eq!(row.len(), jac_row.len(), "{name}, output {r}");
                for (c, (&a, &b)) in row.iter().zip(&jac_row).enumerate() {
                    assert!(
                        close(a, b),
                        "{mode:?}: d F[{r}] / d {name}[{c}]: reverse {a}, jacobian {b}\n{f_text}"
                    );
                }
            }
        }
    }
}

#[test]
fn a_map_with_a_shared_reduction() {
    check(
        &[("x", "[n]R"), ("s", "R")],
        "let t = reduce (+) 0 x in map (fun v -> sin (v * s) * t + v * v) x",
        &[("x", "[0.5, -1, 2, 0.25]"), ("s", "1.5")],
        4,
    );
}

#[test]
fn an_elementwise_product_and_a_scan() {
    check(
        &[("a", "[n]R"), ("b", "[n]R")],
        "scanl (+) 0 (map2 (fun u v -> u * exp v) a b)",
        &[("a", "[1.5, -2, 0.5]"), ("b", "[0.25, 0.5, -1]")],
        3,
    );
}

#[test]
fn a_conditional_and_a_fold_per_output() {
    check(
        &[("x", "[n]R"), ("c", "R")],
        "map (fun v -> if v > c then log v else foldl (fun acc w -> acc * w + v) 1 x) x",
        &[("x", "[2, -0.5, 3, 0.75]"), ("c", "1")],
        4,
    );
}

#[test]
fn nested_arrays_matrix_vector() {
    check(
        &[("M", "[k][n]R"), ("v", "[n]R")],
        "map (fun row -> reduce (+) 0 (map2 (*) row v)) M",
        &[("M", "[[1, 2, 3], [0.5, -1, 4]]"), ("v", "[0.25, -2, 1.5]")],
        2,
    );
}
