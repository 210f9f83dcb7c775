//! `cse-alpha` on conditionals and literals: the shape reverse mode inside
//! a program leaves when it writes one primal per sweep (GradBench's ba: a
//! `vjp_rev` per row of each 2 x 15 block, each with its own copy of
//! Rodrigues' `if` and of `[p[0], p[1], p[2]]`). The second copy of each
//! is bound to the first's name, so the conditional's `sqrt`, `sin` and
//! `cos` run once.

use crate::common;

use optimize::{RuleName, RuleSet};

use common::optimized_cost;

/// Two sweeps' primals: equal literals, then equal conditionals reading
/// them, each used twice (so that `inline-once` leaves them bound).
const TWO_SWEEPS: &str = "-- at p = [0.3, 0.4, 0.5]\n\
    def f (p : [3]R) : R =\n\
    \x20 let a = [p[0], p[1] * 2, p[2]] in\n\
    \x20 let b = [p[0], p[1] * 2, p[2]] in\n\
    \x20 let s = if p[0] > 0 then let t = sqrt a[0] in [sin t, cos t] else [0, 0] in\n\
    \x20 let u = if p[0] > 0 then let t2 = sqrt b[0] in [sin t2, cos t2] else [0, 0] in\n\
    \x20 s[0] * u[1] + s[1] * u[0] + a[1] * b[2] + a[2] * b[1]\n";

#[test]
fn a_second_equal_conditional_is_not_computed_again() {
    let (with, fired) = optimized_cost(TWO_SWEEPS, RuleSet::all());
    assert!(fired.contains_key(&RuleName::CseAlpha), "{fired:?}");
    assert_eq!(with.nlops, 3, "one sqrt, one sin, one cos");
    let (without, _) = optimized_cost(TWO_SWEEPS, RuleSet::all().without(RuleName::CseAlpha));
    assert_eq!(without.nlops, 6, "each conditional computes its own");
}
