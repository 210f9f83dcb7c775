//! The Target-only derivative primitives on f64: the one definition of
//! what `d1pow`, `d2pow`, `d2div`, `dtan`, `dtanh` and `dabs` compute,
//! shared by the
//! evaluator, the optimizer's constant folding and the tests.
//!
//! seeds/000 Section 2 assumes that every operator of Source comes with
//! its partial derivatives as operators of Target, each costing one
//! operation; Theorem 5.4's proof relies on it. Where the derivative is one
//! cheap operation already (`cos x` for `sin`, `1 / x` for `log`, `y` for
//! `x * y`) reverse mode writes that; these five are the ones whose
//! expansion costs several (docs/derivatives.md, "Derivative primitives").
//! Their values are exactly those of the expansions they replace, the
//! choices at kinks included:
//! - `d1pow x y = y * pow x (y - 1)`, NaN at `0^0` as IEEE gives it;
//! - `d2pow x y = if x > 0 then log x * pow x y else 0`;
//! - `d2div x y = -((x / y) / y)`;
//! - `dtan x = 1 + tan x * tan x`, `dtanh x = 1 - tanh x * tanh x`;
//! - `dabs x = if x > 0 then 1 else -1`: `abs x` is `max x (-x)`, and a tie
//!   (`x = 0`, or NaN) sends the derivative to the second argument.

use crate::ir::Prim;

/// The value of a Target-only derivative primitive at real arguments, or
/// `None` for any other primitive or a wrong number of arguments.
pub fn eval(op: Prim, args: &[f64]) -> Option<f64> {
    Some(match (op, args) {
        (Prim::D1Pow, &[x, y]) => y * x.powf(y - 1.0),
        (Prim::D2Pow, &[x, y]) => {
            if x > 0.0 {
                x.ln() * x.powf(y)
            } else {
                0.0
            }
        }
        (Prim::DTan, &[x]) => {
            let t = x.tan();
            1.0 + t * t
        }
        (Prim::DTanh, &[x]) => {
            let t = x.tanh();
            1.0 - t * t
        }
        (Prim::D2Div, &[x, y]) => -((x / y) / y),
        (Prim::DAbs, &[x]) => {
            if x > 0.0 {
                1.0
            } else {
                -1.0
            }
        }
        _ => return None,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_expansions_they_replace() {
        let pts = [-2.0, -0.5, 0.0, 0.3, 1.0, 2.5];
        for &x in &pts {
            for &y in &pts {
                let d1 = eval(Prim::D1Pow, &[x, y]).expect("d1pow");
                let want = y * x.powf(y - 1.0);
                assert!(d1 == want || (d1.is_nan() && want.is_nan()), "{x} {y}");
                let d2 = eval(Prim::D2Pow, &[x, y]).expect("d2pow");
                let want = if x > 0.0 { x.ln() * x.powf(y) } else { 0.0 };
                assert_eq!(d2, want, "{x} {y}");
            }
            let t = x.tan();
            assert_eq!(eval(Prim::DTan, &[x]), Some(1.0 + t * t));
        }
        // Negative base: the exponent's partial is 0, not NaN.
        assert_eq!(eval(Prim::D2Pow, &[-2.0, 3.0]), Some(0.0));
        assert_eq!(eval(Prim::D1Pow, &[-2.0, 3.0]), Some(12.0));
        assert!(eval(Prim::D1Pow, &[0.0, 0.0]).is_some_and(f64::is_nan));
        assert_eq!(eval(Prim::DAbs, &[0.0]), Some(-1.0));
        assert_eq!(eval(Prim::DAbs, &[f64::NAN]), Some(-1.0));
        assert_eq!(eval(Prim::DAbs, &[1e-300]), Some(1.0));
        assert_eq!(eval(Prim::DTanh, &[0.0]), Some(1.0));
        assert_eq!(eval(Prim::D2Div, &[3.0, 2.0]), Some(-0.75));
        assert_eq!(eval(Prim::D2Div, &[1.0, 0.0]), Some(f64::NEG_INFINITY));
        assert_eq!(eval(Prim::Pow, &[2.0, 2.0]), None);
        assert_eq!(eval(Prim::DTan, &[1.0, 2.0]), None);
    }
}
