//! The transpose of a read `M[i]` of a row of a matrix inside a loop is a
//! scatter-add of the row's cotangent (`unf::raise`'s row pairs,
//! docs/derivatives.md, "Indexing"): the gradient's counted cost grows as
//! the program's, × 2 when the number of rows doubles, where a dense
//! one-hot matrix per read made it × 4.

use semantics::Value;
use semantics::cost;

/// The counted costs of `def f (M : [n][3]R) (x : R) : R = body` and of
/// its gradient (UNF route, raised, not optimized) at n rows; the gradient
/// is checked against central differences in x and in one entry of M.
fn costs(body: &str, n: usize) -> (u64, u64) {
    let text = format!("def f (M : [n][3]R) (x : R) : R =\n  {body}\n");
    let m = syntax::compile(syntax::SourceFile {
        name: "rows.ad".to_string(),
        text: text.clone(),
    })
    .unwrap_or_else(|e| panic!("{text}: {e}"));
    let def = m.defs.last().expect("a definition").clone();
    let g = reverse::gradient(&m, &def, &reverse::Config::default()).expect("reverse mode");
    let gdef = g.defs.last().expect("the gradient").clone();
    let rows = |bump: f64| -> Value {
        let rows: Vec<Value> = (0..n)
            .map(|i| {
                let row: Vec<f64> = (0..3)
                    .map(|j| {
                        ((i * 7 + j * 3) % 11) as f64 / 5.0 - 1.0
                            + if i == 1 && j == 2 { bump } else { 0.0 }
                    })
                    .collect();
                Value::reals(&row)
            })
            .collect();
        Value::array(rows)
    };
    let args = vec![rows(0.0), Value::Real(0.7)];
    let (v, source) = cost::dynamic_cost(&m, &def, &args).expect("the program runs");
    let (out, gradient) = cost::dynamic_cost(&g, &gdef, &args).expect("the gradient runs");
    let out = out.as_tuple().expect("a tuple").to_vec();
    assert!(
        out[0].approx_eq_default(&v),
        "{body}: value {} vs {v}",
        out[0]
    );
    // Central differences: d/dx, and d/dM[1][2].
    let h = 1e-6;
    let at = |args: Vec<Value>| -> f64 {
        let (v, _) = cost::dynamic_cost(&m, &def, &args).expect("the program runs");
        v.as_real().expect("a real")
    };
    let dx = (at(vec![rows(0.0), Value::Real(0.7 + h)])
        - at(vec![rows(0.0), Value::Real(0.7 - h)]))
        / (2.0 * h);
    let dm =
        (at(vec![rows(h), Value::Real(0.7)]) - at(vec![rows(-h), Value::Real(0.7)])) / (2.0 * h);
    let gx = out[2].as_real().expect("grad x");
    let gm = out[1].as_array().expect("grad M")[1]
        .as_array()
        .expect("a row")[2]
        .as_real()
        .expect("a real");
    for (what, g, fd) in [("x", gx, dx), ("M[1][2]", gm, dm)] {
        assert!(
            (g - fd).abs() <= 1e-5 * (1.0 + fd.abs()),
            "{body}: grad {what} {g} vs {fd}"
        );
    }
    (source.total(), gradient.total())
}

/// The gradient's counted cost × 2 (within 5%) per doubling of the rows.
fn linear(body: &str) {
    let sizes = [16, 32, 64];
    let c: Vec<(u64, u64)> = sizes.iter().map(|&n| costs(body, n)).collect();
    for w in c.windows(2) {
        let growth = w[1].1 as f64 / w[0].1 as f64;
        assert!(
            (1.9..=2.1).contains(&growth),
            "{body}: the gradient's cost {} then {} (× {growth:.2}) at doubling sizes",
            w[0].1,
            w[1].1
        );
    }
}

#[test]
fn reading_rows_of_a_free_matrix_in_a_loop_costs_a_row_per_read() {
    // A gather of rows, a row read in one branch only (the other branch's
    // pair padded with a zero row and an index out of range), two reads of
    // one row, and a read in a fold.
    linear(
        "sum (build (length M) (fun i -> sum (map (fun y -> y * x) M[mod (i * 7) (length M)])))",
    );
    linear("sum (build (length M) (fun i -> if i > 0 then sum M[i - 1] * x else x))");
    linear("sum (build (length M) (fun i -> sum (map2 (fun a b -> a * b) M[i] M[i])))");
    linear("ifold (fun (acc, i) -> acc * x + sum M[i]) x (length M)");
}
