//! Scatter, the histograms and their Target-only partials on hand-computed
//! values (docs/semantics.md, "Scatter and histograms"; docs/derivatives.md,
//! section 4b), and their run-time errors.

use semantics::{Value, eval_entry};
use syntax::{SourceFile, compile_target};

/// Evaluates the last definition of Target text at `inputs` (`name`, value
/// text), each read against its parameter's type.
fn run(text: &str, inputs: &[(&str, &str)]) -> Result<Value, semantics::Error> {
    let m = compile_target(SourceFile {
        name: "hist.ad".into(),
        text: text.into(),
    })
    .expect("the program compiles");
    let def = m.defs.last().expect("a definition");
    let args = inputs
        .iter()
        .map(|(name, v)| {
            let p = def
                .params
                .iter()
                .find(|p| p.name.as_str() == *name)
                .expect("a parameter");
            let ty = p.ty.as_ref().expect("typed");
            (
                name.to_string(),
                semantics::parse_value(v, ty).expect("a value"),
            )
        })
        .collect::<Vec<_>>();
    eval_entry(&m, None, &args)
}

fn shown(text: &str, inputs: &[(&str, &str)]) -> String {
    run(text, inputs).expect("evaluates").to_string()
}

const OPS: &str = "def f (d : [m]R) (is : [n]Int) (v : [n]R) : ([m]R, [m]R, [m]R, [m]R, [m]R) =
  (scatter d is v, hist_add d is v, hist_mul d is v, hist_min d is v, hist_max d is v)";

#[test]
fn duplicates_fold_in_order_and_out_of_range_is_skipped() {
    let at = [
        ("d", "[1, 2, 3]"),
        ("is", "[2, 0, 2, 3, -1]"),
        ("v", "[4, 5, 0.5, 9, 9]"),
    ];
    assert_eq!(
        shown(OPS, &at),
        "([5, 2, 0.5], [6, 2, 7.5], [5, 2, 6], [1, 2, 0.5], [5, 2, 4])"
    );
}

#[test]
fn empty_arrays_and_nan() {
    assert_eq!(
        shown(OPS, &[("d", "[]"), ("is", "[0, 1]"), ("v", "[1, 2]")]),
        "([], [], [], [], [])"
    );
    assert_eq!(
        shown(OPS, &[("d", "[1]"), ("is", "[]"), ("v", "[]")]),
        "([1], [1], [1], [1], [1])"
    );
    // min and max are C's fmin and fmax: a NaN operand gives the other.
    let at = [("d", "[nan]"), ("is", "[0]"), ("v", "[2]")];
    assert_eq!(shown(OPS, &at), "([2], [nan], [nan], [2], [2])");
}

#[test]
fn integer_histograms_overflow_with_an_error() {
    let text = "def f (d : [m]Int) (is : [n]Int) (v : [n]Int) : [m]Int = hist_add d is v";
    assert_eq!(
        shown(
            text,
            &[("d", "[1, 2]"), ("is", "[1, 1]"), ("v", "[10, 20]")]
        ),
        "[1, 32]"
    );
    let err = run(
        text,
        &[("d", "[9223372036854775807]"), ("is", "[0]"), ("v", "[1]")],
    )
    .expect_err("overflows");
    assert_eq!(err.to_string(), "integer overflow in `hist_add`");
}

#[test]
fn index_and_value_arrays_of_different_lengths() {
    // Sizes the types do not relate, so only the builtin can tell.
    let text = "def f (d : [m]R) (is : [n]Int) (v : [k]R) : [m]R = scatter d is v";
    let err = run(text, &[("d", "[1]"), ("is", "[0, 0]"), ("v", "[1]")]).expect_err("sizes differ");
    assert_eq!(err.to_string(), "scatter over arrays of sizes 2 and 1");
}

#[test]
fn the_partials() {
    let text = "def f (d : [m]R) (is : [n]Int) (v : [n]R) : ([n]R, [m]Int, [m]Int, [m]Int, [m]R, [n]R) =
  let w = hist_winner_min d is v in
  (gather d is, hist_winner_scatter d is, w, hist_winner_max d is v, pick_dest d w, gather_won d is w)";
    // Bin 0: dest 1, then 1 (a tie goes to the later), then 3; bin 1:
    // nothing; bin 2: dest 0 and 5 (dest stays the minimum, 5 the maximum).
    let at = [
        ("d", "[1, 7, 0]"),
        ("is", "[0, 0, 2, 0, 4]"),
        ("v", "[1, 3, 5, 1, 9]"),
    ];
    assert_eq!(
        shown(text, &at),
        "([1, 1, 0, 1, 0], [3, -1, 2], [3, -1, -1], [1, -1, 2], [0, 7, 0], [0, 0, 0, 1, 0])"
    );
}

#[test]
fn the_product_partials_count_zeros() {
    let text = "def f (d : [m]R) (is : [n]Int) (v : [n]R) : ([m]R, [n]R) =
  (dhist_mul_dest d is v, dhist_mul_vals d is v)";
    // Bin 0: 2 · 0 · 5 (one zero), bin 1: 3 · 0 · 0 (two), bin 2: 2 · 4 (none).
    let at = [
        ("d", "[2, 3, 2]"),
        ("is", "[0, 0, 1, 1, 2, 7]"),
        ("v", "[0, 5, 0, 0, 4, 1]"),
    ];
    assert_eq!(shown(text, &at), "([0, 0, 4], [10, 0, 0, 0, 2, 0])");
}

const ROWS: &str =
    "def f (d : [m][k]R) (is : [n]Int) (v : [n][k]R) : [m][k]R = hist_add_rows d is v";

#[test]
fn rows_fold_elementwise_in_order_and_out_of_range_is_skipped() {
    let at = [
        ("d", "[[1, 2], [3, 4]]"),
        ("is", "[1, -1, 1, 2, 0]"),
        ("v", "[[10, 20], [9, 9], [0.5, 0.25], [7, 7], [100, 200]]"),
    ];
    assert_eq!(shown(ROWS, &at), "[[101, 202], [13.5, 24.25]]");
    assert_eq!(
        shown(ROWS, &[("d", "[]"), ("is", "[0]"), ("v", "[[1]]")]),
        "[]"
    );
}

#[test]
fn rows_of_another_length_are_an_error_at_the_first_in_range_one() {
    let text = "def f (d : [m][k]R) (is : [n]Int) (v : [n][j]R) : [m][k]R = hist_add_rows d is v";
    // Out of range: skipped without looking at the row.
    assert_eq!(
        shown(
            text,
            &[("d", "[[1, 2]]"), ("is", "[3]"), ("v", "[[1, 2, 3]]")]
        ),
        "[[1, 2]]"
    );
    let err = run(
        text,
        &[("d", "[[1, 2]]"), ("is", "[0]"), ("v", "[[1, 2, 3]]")],
    )
    .expect_err("rows differ");
    assert_eq!(
        err.to_string(),
        "hist_add_rows over arrays of sizes 2 and 3"
    );
    // Sizes the types do not relate, so only the builtin can tell.
    let text = "def f (d : [m][k]R) (is : [n]Int) (v : [p][k]R) : [m][k]R = hist_add_rows d is v";
    let err =
        run(text, &[("d", "[[1]]"), ("is", "[0, 0]"), ("v", "[[1]]")]).expect_err("sizes differ");
    assert_eq!(
        err.to_string(),
        "hist_add_rows over arrays of sizes 2 and 1"
    );
}

#[test]
fn integer_rows_overflow_with_an_error() {
    let text =
        "def f (d : [m][k]Int) (is : [n]Int) (v : [n][k]Int) : [m][k]Int = hist_add_rows d is v";
    assert_eq!(
        shown(
            text,
            &[
                ("d", "[[1, 2]]"),
                ("is", "[0, 0]"),
                ("v", "[[10, 20], [1, 1]]")
            ]
        ),
        "[[12, 23]]"
    );
    let err = run(
        text,
        &[
            ("d", "[[0, 9223372036854775807]]"),
            ("is", "[0]"),
            ("v", "[[0, 1]]"),
        ],
    )
    .expect_err("overflows");
    assert_eq!(err.to_string(), "integer overflow in `hist_add_rows`");
}
