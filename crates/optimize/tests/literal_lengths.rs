//! A gradient whose sized parameters meet a fixed-size literal: `map2 f h
//! L` with `h : [m][k]R` and `L : [3][2]R` has both lengths at run time,
//! but a rule that keeps only `L` (`map2-unused`, `map2-const`) or builds
//! a constant over it (`const-shape`) must not type the result `[m]`
//! while it is `[3]`: the optimized gradient failed the verifier ("stored
//! type `[m][k]R` but inference gives `[3][2]R`").

use crate::common::{eval, gradient, same, verified};
use optimize::{Config, optimize};
use semantics::Value;

const TEXT: &str = "def f (d : [m][k]R) (v : [n][k]R) : R =\n\
    \x20 let h = map2 (fun a b -> map2 (fun x y -> x + y) a b) d v in\n\
    \x20 sum (map2 (fun r b -> sum (map2 (fun x y -> x * y) r b)) h [[1, 2], [3, 4], [5, 6]])\n";

fn rows(xs: &[[f64; 2]]) -> Value {
    Value::array(xs.iter().map(|r| Value::reals(r)).collect())
}

#[test]
fn the_gradient_of_a_parameter_meeting_a_literal_verifies() {
    let target = gradient(TEXT);
    let out = optimize(&target, &Config::default()).expect("the optimized gradient verifies");
    verified(&out, "the optimized gradient");
    let inputs = vec![
        ("d".to_string(), rows(&[[1.0, 2.0], [3.0, 4.0], [5.0, 6.0]])),
        (
            "v".to_string(),
            rows(&[[0.5, -1.0], [2.0, 0.25], [-3.0, 1.5]]),
        ),
    ];
    let before = eval(&target, &inputs).expect("the gradient runs");
    let after = eval(&out, &inputs).expect("the optimized gradient runs");
    assert!(same(&before, &after), "{before:?} against {after:?}");
    // f = sum of (d + v) * L elementwise, so both gradients are L exactly.
    let l = rows(&[[1.0, 2.0], [3.0, 4.0], [5.0, 6.0]]);
    let parts = after.as_tuple().expect("(value, grad d, grad v)");
    assert!(same(&parts[1], &l) && same(&parts[2], &l), "{after:?}");
}
