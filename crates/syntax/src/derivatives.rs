//! The one table of scalar primitives: what each computes on f64 and its
//! partial derivatives, for every route (docs/primitives.md).
//!
//! Forward mode (`forward::table`), reverse mode through UNF
//! (`unf::raise::calculus`), the direct macro (`reverse::direct::ground`)
//! and the evaluators (`semantics`) all read their derivatives here; none
//! of them knows that `sin` has derivative `cos`. The shape follows
//! Futhark's `Futhark.AD.Derivatives` (`pdBuiltin`, `pdBinOp`): one
//! function from a primitive to its partials, used by both modes.
//!
//! A partial is written in a tiny language over the primitive's arguments
//! and its primal result ([`Term`]), static data that each route turns
//! into its own terms through [`Instantiate`], and that [`eval_term`]
//! evaluates on f64 for the evaluators. A route that has the primal result
//! at hand uses it; one that has not (`unf::raise`, which sees only the
//! primal point) recomputes it as `op (x1, ..., xn)`: the same f64.
//!
//! The choices at non-differentiable points (docs/derivatives.md) are
//! here too, decided on primal values only: `abs` has derivative `dabs x`
//! (-1 at 0); `max x y` is `if x > y then x else y` and `min x y` is
//! `if x < y then x else y` (a tie sends the derivative to `y`); `pow x y`
//! has exponent partial 0 where `x <= 0`; IEEE's infinities at poles.
//!
//! The Target-only derivative primitives (`d1pow`, ...; seeds/000 Section
//! 2 assumes every operator's partials are Target operators of one
//! operation each) have entries too, so that a gradient program can be
//! differentiated again.

use crate::ir::Prim;
use crate::special;

/// A term of type `R` over the arguments `x1..xn` and the primal result
/// `r = op (x1, ..., xn)` of the primitive whose partial it is.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum Term {
    /// The argument `x_{i+1}` (0-based index).
    Arg(usize),
    /// The primal result `op (x1, ..., xn)`.
    Res,
    /// A real constant.
    Lit(f64),
    /// A scalar primitive of type `R^k → R` applied to terms.
    App(Prim, &'static [Term]),
    /// `if lhs cmp rhs then yes else no`, `cmp` a comparison on reals.
    If {
        /// The comparison (`Prim::Gt`, `Prim::Lt`).
        cmp: Prim,
        /// Its left operand.
        lhs: &'static Term,
        /// Its right operand.
        rhs: &'static Term,
        /// The value where the comparison holds.
        yes: &'static Term,
        /// The value elsewhere.
        no: &'static Term,
    },
}

/// One partial derivative `∂_i op`, with the two cases that need no
/// multiplication kept apart (every route writes `dx` or `-dx` for them).
/// The table's are over [`Term`]; a route's, over its own terms
/// ([`instantiate_partials`]).
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum Partial<T = Term> {
    /// The constant 1.
    One,
    /// The constant -1.
    MinusOne,
    /// A term over the arguments and the result.
    Term(T),
}

/// The typing class of a scalar primitive: the arguments and result it
/// takes in Source (docs/types.md, "Builtins").
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Sig {
    /// Every argument and the result are `R`; differentiated by every route
    /// through its [`partials`].
    Real,
    /// Arguments and result of one numeric type, `Int` or `R`: the
    /// partials apply where it is `R`, and on `Int` it is discrete
    /// ([`eval_int`]).
    Numeric,
    /// `Int → R` (`real`): not differentiated (an `Int` has no tangent).
    IntToReal,
    /// `R → Int` (`floor`, ...): not differentiated; its derivative is 0
    /// wherever it exists ([`to_int`]).
    RealToInt,
    /// `Int^n → Int` (`mod`): discrete ([`eval_int`]).
    Int,
}

use Partial::{MinusOne, One};
use Term::{App, Arg, Lit, Res};

/// `x1`, `x2`: the arguments, as terms.
const X: Term = Arg(0);
const Y: Term = Arg(1);

/// `if x cmp y then yes else no` (a macro, not a `const fn`: only a
/// literal expression is promoted to a `'static` table entry).
macro_rules! pick {
    ($cmp:expr, $yes:expr, $no:expr) => {
        Partial::Term(Term::If {
            cmp: $cmp,
            lhs: &X,
            rhs: &Y,
            yes: &Lit($yes),
            no: &Lit($no),
        })
    };
}

/// `p x1 ... xn` over the arguments themselves.
macro_rules! own {
    ($p:expr, 1) => {
        Partial::Term(App($p, &[X]))
    };
    ($p:expr, 2) => {
        Partial::Term(App($p, &[X, Y]))
    };
}

/// The typing class of a scalar primitive, or `None` for a primitive that
/// is not arithmetic on numbers (comparisons, logic, array builtins,
/// derivative constructs).
pub fn sig(op: Prim) -> Option<Sig> {
    Some(match op {
        Prim::Add | Prim::Sub | Prim::Mul | Prim::Neg | Prim::Div => Sig::Numeric,
        Prim::Real => Sig::IntToReal,
        Prim::Floor | Prim::Ceil | Prim::Round | Prim::Trunc => Sig::RealToInt,
        Prim::Mod => Sig::Int,
        Prim::Log1p
        | Prim::Expm1
        | Prim::Sigmoid
        | Prim::Atan
        | Prim::Atan2
        | Prim::Hypot
        | Prim::Sinh
        | Prim::Cosh
        | Prim::Erf
        | Prim::Lgamma
        | Prim::Sign
        | Prim::Digamma
        | Prim::Trigamma
        | Prim::Sin
        | Prim::Cos
        | Prim::Tan
        | Prim::Exp
        | Prim::Log
        | Prim::Sqrt
        | Prim::Tanh
        | Prim::Abs
        | Prim::Pow
        | Prim::Max
        | Prim::Min
        | Prim::D1Pow
        | Prim::D2Pow
        | Prim::DTan
        | Prim::DTanh
        | Prim::DAbs
        | Prim::D2Div => Sig::Real,
        _ => return None,
    })
}

/// The partial derivatives of a real scalar primitive, one per argument in
/// order, or `None` for a primitive without: one not of [`sig`] `Real` or
/// `Numeric`, and `trigamma`, the last of the chain `lgamma` → `digamma` →
/// `trigamma` (a third derivative of `lgamma` is refused by name). The one
/// place that knows a derivative.
pub fn partials(op: Prim) -> Option<&'static [Partial]> {
    Some(match op {
        Prim::Add => &[One, One],
        Prim::Sub => &[One, MinusOne],
        Prim::Neg => &[MinusOne],
        // d(x * y) = y dx + x dy
        Prim::Mul => &[Partial::Term(Y), Partial::Term(X)],
        // d(x / y) = dx / y + d2div x y dy
        Prim::Div => &[
            Partial::Term(App(Prim::Div, &[Lit(1.0), Y])),
            own!(Prim::D2Div, 2),
        ],
        Prim::Sin => &[Partial::Term(App(Prim::Cos, &[X]))],
        Prim::Cos => &[Partial::Term(App(Prim::Neg, &[App(Prim::Sin, &[X])]))],
        Prim::Tan => &[own!(Prim::DTan, 1)],
        Prim::Exp => &[Partial::Term(Res)],
        Prim::Log => &[Partial::Term(App(Prim::Div, &[Lit(1.0), X]))],
        // 1 / (2 sqrt x): +inf at 0, as IEEE says
        Prim::Sqrt => &[Partial::Term(App(Prim::Div, &[Lit(0.5), Res]))],
        Prim::Tanh => &[own!(Prim::DTanh, 1)],
        // 1 where x > 0, -1 elsewhere (0 and NaN included)
        Prim::Abs => &[own!(Prim::DAbs, 1)],
        Prim::Pow => &[own!(Prim::D1Pow, 2), own!(Prim::D2Pow, 2)],
        // max x y = if x > y then x else y: a tie goes to y
        Prim::Max => &[pick!(Prim::Gt, 1.0, 0.0), pick!(Prim::Gt, 0.0, 1.0)],
        // min x y = if x < y then x else y: a tie goes to y
        Prim::Min => &[pick!(Prim::Lt, 1.0, 0.0), pick!(Prim::Lt, 0.0, 1.0)],
        // d1pow x y = y * pow x (y - 1):
        //   ∂x = y * d1pow x (y - 1), ∂y = pow x (y - 1) + y * d2pow x (y - 1)
        Prim::D1Pow => &[
            Partial::Term(App(
                Prim::Mul,
                &[Y, App(Prim::D1Pow, &[X, App(Prim::Sub, &[Y, Lit(1.0)])])],
            )),
            Partial::Term(EXPONENT_PARTIAL),
        ],
        // d2pow x y = if x > 0 then log x * pow x y else 0:
        //   ∂x = if x > 0 then pow x (y - 1) + y * d2pow x (y - 1) else 0,
        //   ∂y = if x > 0 then log x * d2pow x y else 0
        Prim::D2Pow => &[
            Partial::Term(Term::If {
                cmp: Prim::Gt,
                lhs: &X,
                rhs: &Lit(0.0),
                yes: &EXPONENT_PARTIAL,
                no: &Lit(0.0),
            }),
            Partial::Term(Term::If {
                cmp: Prim::Gt,
                lhs: &X,
                rhs: &Lit(0.0),
                yes: &App(Prim::Mul, &[App(Prim::Log, &[X]), Res]),
                no: &Lit(0.0),
            }),
        ],
        // d2div x y = -x / y²: ∂x = -((1 / y) / y), ∂y = -2 r / y
        Prim::D2Div => &[
            Partial::Term(App(
                Prim::Neg,
                &[App(Prim::Div, &[App(Prim::Div, &[Lit(1.0), Y]), Y])],
            )),
            Partial::Term(App(Prim::Div, &[App(Prim::Mul, &[Lit(-2.0), Res]), Y])),
        ],
        // dtan x = 1 + tan² x: 2 tan x * dtan x
        Prim::DTan => &[Partial::Term(App(
            Prim::Mul,
            &[Lit(2.0), App(Prim::Mul, &[App(Prim::Tan, &[X]), Res])],
        ))],
        // dtanh x = 1 - tanh² x: -2 tanh x * dtanh x
        Prim::DTanh => &[Partial::Term(App(
            Prim::Mul,
            &[Lit(-2.0), App(Prim::Mul, &[App(Prim::Tanh, &[X]), Res])],
        ))],
        // dabs is constant where it is differentiable
        Prim::DAbs => &[Partial::Term(Lit(0.0))],
        // 1 / (1 + x)
        Prim::Log1p => &[Partial::Term(App(
            Prim::Div,
            &[Lit(1.0), App(Prim::Add, &[Lit(1.0), X])],
        ))],
        // exp x (not r + 1, which loses the digits expm1 keeps)
        Prim::Expm1 => &[Partial::Term(App(Prim::Exp, &[X]))],
        // r (1 - r)
        Prim::Sigmoid => &[Partial::Term(App(
            Prim::Mul,
            &[Res, App(Prim::Sub, &[Lit(1.0), Res])],
        ))],
        // 1 / (1 + x²)
        Prim::Atan => &[Partial::Term(App(
            Prim::Div,
            &[
                Lit(1.0),
                App(Prim::Add, &[Lit(1.0), App(Prim::Mul, &[X, X])]),
            ],
        ))],
        // atan2 y x: ∂y = x / (x² + y²), ∂x = -y / (x² + y²); NaN at the
        // origin (0 / 0), where the angle is not continuous
        Prim::Atan2 => &[
            Partial::Term(App(Prim::Div, &[Y, RADIUS2])),
            Partial::Term(App(Prim::Div, &[App(Prim::Neg, &[X]), RADIUS2])),
        ],
        // hypot x y = r: ∂x = x / r, ∂y = y / r; 0 at the origin (r = 0),
        // the kink of the norm, where 0 is a subgradient (as `abs` at 0)
        Prim::Hypot => &[
            Partial::Term(Term::If {
                cmp: Prim::Gt,
                lhs: &Res,
                rhs: &Lit(0.0),
                yes: &App(Prim::Div, &[X, Res]),
                no: &Lit(0.0),
            }),
            Partial::Term(Term::If {
                cmp: Prim::Gt,
                lhs: &Res,
                rhs: &Lit(0.0),
                yes: &App(Prim::Div, &[Y, Res]),
                no: &Lit(0.0),
            }),
        ],
        Prim::Sinh => &[Partial::Term(App(Prim::Cosh, &[X]))],
        Prim::Cosh => &[Partial::Term(App(Prim::Sinh, &[X]))],
        // 2 / sqrt π * exp (-x²)
        Prim::Erf => &[Partial::Term(App(
            Prim::Mul,
            &[
                Lit(std::f64::consts::FRAC_2_SQRT_PI),
                App(Prim::Exp, &[App(Prim::Neg, &[App(Prim::Mul, &[X, X])])]),
            ],
        ))],
        Prim::Lgamma => &[own!(Prim::Digamma, 1)],
        Prim::Digamma => &[own!(Prim::Trigamma, 1)],
        // sign is constant where it is differentiable; 0 at 0 too
        Prim::Sign => &[Partial::Term(Lit(0.0))],
        _ => return None,
    })
}

/// `pow x (y - 1) + y * d2pow x (y - 1)`: the derivative of `d1pow x y` in
/// `y`, and of `d2pow x y` in `x` where `x > 0`.
const EXPONENT_PARTIAL: Term = App(
    Prim::Add,
    &[
        App(Prim::Pow, &[X, App(Prim::Sub, &[Y, Lit(1.0)])]),
        App(
            Prim::Mul,
            &[Y, App(Prim::D2Pow, &[X, App(Prim::Sub, &[Y, Lit(1.0)])])],
        ),
    ],
);

/// `y² + x²` for `atan2 y x` (arguments `y`, `x` in that order).
const RADIUS2: Term = App(
    Prim::Add,
    &[App(Prim::Mul, &[Y, Y]), App(Prim::Mul, &[X, X])],
);

/// Whether some partial of `op` mentions the primal result (a route then
/// binds the result once and reads it).
pub fn uses_result(op: Prim) -> bool {
    fn mentions(t: &Term) -> bool {
        match t {
            Res => true,
            Arg(_) | Lit(_) => false,
            App(_, args) => args.iter().any(mentions),
            Term::If {
                lhs, rhs, yes, no, ..
            } => [lhs, rhs, yes, no].iter().any(|t| mentions(t)),
        }
    }
    partials(op).is_some_and(|ps| {
        ps.iter().any(|p| match p {
            Partial::Term(t) => mentions(t),
            One | MinusOne => false,
        })
    })
}

/// The value of a real scalar primitive at real arguments (the one
/// definition the evaluators, the optimizer's constant folding and the
/// tests use; the C backend writes the same libm calls), or `None` for a
/// primitive without one or a wrong number of arguments.
pub fn eval(op: Prim, args: &[f64]) -> Option<f64> {
    Some(match (op, args) {
        (Prim::Add, &[x, y]) => x + y,
        (Prim::Sub, &[x, y]) => x - y,
        (Prim::Mul, &[x, y]) => x * y,
        (Prim::Div, &[x, y]) => x / y,
        (Prim::Neg, &[x]) => -x,
        (Prim::Sin, &[x]) => x.sin(),
        (Prim::Log1p, &[x]) => x.ln_1p(),
        (Prim::Expm1, &[x]) => x.exp_m1(),
        // The same formula as the C runtime's `ad_sigmoid`.
        (Prim::Sigmoid, &[x]) => 1.0 / (1.0 + (-x).exp()),
        (Prim::Atan, &[x]) => x.atan(),
        (Prim::Atan2, &[y, x]) => y.atan2(x),
        (Prim::Hypot, &[x, y]) => x.hypot(y),
        (Prim::Sinh, &[x]) => x.sinh(),
        (Prim::Cosh, &[x]) => x.cosh(),
        (Prim::Erf, &[x]) => special::erf(x),
        (Prim::Lgamma, &[x]) => special::lgamma(x),
        (Prim::Digamma, &[x]) => special::digamma(x),
        (Prim::Trigamma, &[x]) => special::trigamma(x),
        // 0 and -0 keep their sign, NaN stays NaN
        (Prim::Sign, &[x]) => {
            if x > 0.0 {
                1.0
            } else if x < 0.0 {
                -1.0
            } else {
                x
            }
        }
        (Prim::Cos, &[x]) => x.cos(),
        (Prim::Tan, &[x]) => x.tan(),
        (Prim::Exp, &[x]) => x.exp(),
        (Prim::Log, &[x]) => x.ln(),
        (Prim::Sqrt, &[x]) => x.sqrt(),
        (Prim::Tanh, &[x]) => x.tanh(),
        (Prim::Abs, &[x]) => x.abs(),
        (Prim::Pow, &[x, y]) => x.powf(y),
        (Prim::Max, &[x, y]) => max(x, y),
        (Prim::Min, &[x, y]) => min(x, y),
        // y * pow x (y - 1), NaN at 0^0 as IEEE gives it
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
        // abs x is max x (-x): a tie (0, or NaN) goes to -x
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

/// `max` of reals: the other operand when one is NaN (C's `fmax`), and of
/// two equal operands their bitwise AND, which is +0 for +0 and -0 (and
/// the value itself otherwise). With the sign of zero decided, `max` is
/// associative and commutative, so a `reduce max` split into lanes (the C
/// backend's, `codegen::assoc`) is bit for bit the left fold; libm's
/// `fmax` returns its first operand on a tie, and Rust's `f64::max`
/// either. The C runtime's `ad_max` computes the same.
pub fn max(x: f64, y: f64) -> f64 {
    if x.is_nan() {
        y
    } else if y.is_nan() || x > y {
        x
    } else if x == y {
        f64::from_bits(x.to_bits() & y.to_bits())
    } else {
        y
    }
}

/// `min` of reals, `max`'s mirror: the other operand when one is NaN, and
/// of two equal operands their bitwise OR (-0 for +0 and -0). The C
/// runtime's `ad_min`.
pub fn min(x: f64, y: f64) -> f64 {
    if x.is_nan() {
        y
    } else if y.is_nan() || x < y {
        x
    } else if x == y {
        f64::from_bits(x.to_bits() | y.to_bits())
    } else {
        y
    }
}

/// Why a discrete operation has no value.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Undefined {
    /// `a / 0` or `mod a 0` on `Int`.
    DivisionByZero,
    /// The result does not fit in an `Int` (`i64::MIN / -1`).
    Overflow,
    /// A real with no `Int` value under `floor`, `ceil`, `round` or
    /// `trunc`: NaN, an infinity, or beyond the range of `Int`.
    NotAnInt,
}

/// An `Int` operation of [`sig`] `Numeric` or `Int` that is not checked
/// arithmetic of the ring (`/` and `mod`), or `None` for another. `/`
/// floors (rounds towards negative infinity) and `mod a b` has the sign of
/// `b`, so that `a == b * (a / b) + mod a b` always (Python, Haskell's
/// `div`/`mod`, Futhark's `/` and `%`). The C runtime's `ad_div_floor` and
/// `ad_mod_floor` compute the same.
pub fn eval_int(op: Prim, a: i64, b: i64) -> Option<Result<i64, Undefined>> {
    if !matches!(op, Prim::Div | Prim::Mod) {
        return None;
    }
    if b == 0 {
        return Some(Err(Undefined::DivisionByZero));
    }
    if b == -1 {
        // Exact, with `i64::MIN / -1` the one overflow (`mod` is 0).
        return Some(match op {
            Prim::Div => a.checked_neg().ok_or(Undefined::Overflow),
            _ => Ok(0),
        });
    }
    let (q, r) = (a / b, a % b);
    // Truncation rounded towards zero; step down where the signs differ.
    let adjust = r != 0 && ((r < 0) != (b < 0));
    Some(Ok(match op {
        Prim::Div => q - i64::from(adjust),
        _ => r + if adjust { b } else { 0 },
    }))
}

/// `floor`, `ceil`, `round` (halves away from zero, C's `round`) and
/// `trunc` as an `Int`, or `None` for another primitive.
pub fn to_int(op: Prim, x: f64) -> Option<Result<i64, Undefined>> {
    let r = match op {
        Prim::Floor => x.floor(),
        Prim::Ceil => x.ceil(),
        Prim::Round => x.round(),
        Prim::Trunc => x.trunc(),
        _ => return None,
    };
    // The reals with an Int value: [-2^63, 2^63). NaN fails both tests.
    const LIMIT: f64 = 9_223_372_036_854_775_808.0;
    Some(if (-LIMIT..LIMIT).contains(&r) {
        Ok(r as i64)
    } else {
        Err(Undefined::NotAnInt)
    })
}

/// `real n`: the nearest f64 to `n` (C's conversion of an `int64_t`).
pub fn to_real(n: i64) -> f64 {
    n as f64
}

/// A term's value at the arguments `x` and the primal result `r`.
pub fn eval_term(t: &Term, x: &[f64], r: f64) -> f64 {
    match *t {
        Arg(i) => x.get(i).copied().unwrap_or(f64::NAN),
        Res => r,
        Lit(c) => c,
        App(op, args) => {
            // Scalar primitives take at most two arguments: no allocation.
            let mut vals = [0.0; 2];
            if args.len() > vals.len() {
                return f64::NAN;
            }
            for (v, a) in vals.iter_mut().zip(args) {
                *v = eval_term(a, x, r);
            }
            eval(op, &vals[..args.len()]).unwrap_or(f64::NAN)
        }
        Term::If {
            cmp,
            lhs,
            rhs,
            yes,
            no,
        } => {
            let (a, b) = (eval_term(lhs, x, r), eval_term(rhs, x, r));
            let holds = match cmp {
                Prim::Gt => a > b,
                Prim::Lt => a < b,
                Prim::Ge => a >= b,
                Prim::Le => a <= b,
                Prim::Eq => a == b,
                _ => a != b,
            };
            eval_term(if holds { yes } else { no }, x, r)
        }
    }
}

/// A partial's value at the arguments `x` and the primal result `r`.
pub fn eval_partial(p: &Partial, x: &[f64], r: f64) -> f64 {
    match p {
        One => 1.0,
        MinusOne => -1.0,
        Partial::Term(t) => eval_term(t, x, r),
    }
}

/// The partial derivatives of `op` at the real arguments `x`, on f64: the
/// table's terms evaluated, with the primal result computed once. `None`
/// where [`partials`] has no entry.
pub fn eval_partials(op: Prim, x: &[f64]) -> Option<Vec<f64>> {
    let ps = partials(op)?;
    let r = eval(op, x)?;
    Some(ps.iter().map(|p| eval_partial(p, x, r)).collect())
}

/// How a route writes the table's terms in its own IR: one method per
/// construct of [`Term`]. Every term is of type `R` except a comparison's.
pub trait Instantiate {
    /// The route's term.
    type Out;
    /// The route's error.
    type Error;
    /// The argument `x_{i+1}`.
    fn arg(&mut self, i: usize) -> Self::Out;
    /// The primal result (a route without it writes `op (x1, ..., xn)`).
    fn result(&mut self) -> Self::Out;
    /// A real literal.
    fn real(&mut self, c: f64) -> Self::Out;
    /// A real primitive applied to real terms.
    fn apply(&mut self, op: Prim, args: Vec<Self::Out>) -> Self::Out;
    /// A comparison of two reals (a `Bool`).
    fn compare(&mut self, cmp: Prim, a: Self::Out, b: Self::Out) -> Self::Out;
    /// `if c then a else b`, both real.
    fn ite(&mut self, c: Self::Out, a: Self::Out, b: Self::Out) -> Result<Self::Out, Self::Error>;
    /// Whether the route must write a Source program: a Target-only
    /// derivative primitive is then written as its [`source_form`] where it
    /// has one (construct expansion, which reverse mode may differentiate
    /// next).
    fn source_only(&self) -> bool {
        false
    }
}

/// The Source expansion of a Target-only derivative primitive, over its
/// arguments (no [`Term::Res`]), with exactly its values (the primitives
/// are defined as these expansions: docs/derivatives.md, "Derivative
/// primitives"); `None` for any other primitive, and for `digamma` and
/// `trigamma`, which Source cannot write.
pub fn source_form(op: Prim) -> Option<Term> {
    Some(match op {
        // y * pow x (y - 1)
        Prim::D1Pow => App(
            Prim::Mul,
            &[Y, App(Prim::Pow, &[X, App(Prim::Sub, &[Y, Lit(1.0)])])],
        ),
        // if x > 0 then log x * pow x y else 0
        Prim::D2Pow => Term::If {
            cmp: Prim::Gt,
            lhs: &X,
            rhs: &Lit(0.0),
            yes: &App(Prim::Mul, &[App(Prim::Log, &[X]), App(Prim::Pow, &[X, Y])]),
            no: &Lit(0.0),
        },
        // -((x / y) / y)
        Prim::D2Div => App(Prim::Neg, &[App(Prim::Div, &[App(Prim::Div, &[X, Y]), Y])]),
        // 1 + tan x * tan x
        Prim::DTan => App(
            Prim::Add,
            &[
                Lit(1.0),
                App(Prim::Mul, &[App(Prim::Tan, &[X]), App(Prim::Tan, &[X])]),
            ],
        ),
        // 1 - tanh x * tanh x
        Prim::DTanh => App(
            Prim::Sub,
            &[
                Lit(1.0),
                App(Prim::Mul, &[App(Prim::Tanh, &[X]), App(Prim::Tanh, &[X])]),
            ],
        ),
        // if x > 0 then 1 else -1
        Prim::DAbs => Term::If {
            cmp: Prim::Gt,
            lhs: &X,
            rhs: &Lit(0.0),
            yes: &Lit(1.0),
            no: &Lit(-1.0),
        },
        _ => return None,
    })
}

/// A term of the table written by a route, operands in order (left to
/// right, each operand before its use).
pub fn instantiate<I: Instantiate>(t: &Term, to: &mut I) -> Result<I::Out, I::Error> {
    instantiate_in(t, &[], to)
}

/// [`instantiate`] of `t` whose arguments stand for the terms `scope` (of
/// the route's own scope); an empty `scope` means the route's arguments.
fn instantiate_in<I: Instantiate>(
    t: &Term,
    scope: &[Term],
    to: &mut I,
) -> Result<I::Out, I::Error> {
    Ok(match *t {
        Arg(i) => match scope.get(i) {
            Some(s) => instantiate_in(s, &[], to)?,
            None => to.arg(i),
        },
        Res => to.result(),
        Lit(c) => to.real(c),
        // A source form is written in Source primitives only, so it is
        // never looked for inside one (where `scope` is not empty).
        App(op, args) => {
            let wanted = scope.is_empty() && to.source_only() && op.is_target_only();
            match source_form(op).filter(|_| wanted) {
                Some(form) => instantiate_in(&form, args, to)?,
                None => {
                    let mut out = Vec::with_capacity(args.len());
                    for a in args {
                        out.push(instantiate_in(a, scope, to)?);
                    }
                    to.apply(op, out)
                }
            }
        }
        Term::If {
            cmp,
            lhs,
            rhs,
            yes,
            no,
        } => {
            let a = instantiate_in(lhs, scope, to)?;
            let b = instantiate_in(rhs, scope, to)?;
            let c = to.compare(cmp, a, b);
            let y = instantiate_in(yes, scope, to)?;
            let n = instantiate_in(no, scope, to)?;
            to.ite(c, y, n)?
        }
    })
}

/// The partials of a primitive written by a route, one per argument.
pub type Partials<I> = Vec<Partial<<I as Instantiate>::Out>>;

/// The partials of `op`, one per argument, written by a route; `None` for
/// a primitive without an entry.
pub fn instantiate_partials<I: Instantiate>(
    op: Prim,
    to: &mut I,
) -> Result<Option<Partials<I>>, I::Error> {
    let Some(ps) = partials(op) else {
        return Ok(None);
    };
    let mut out = Vec::with_capacity(ps.len());
    for p in ps {
        out.push(match p {
            One => One,
            MinusOne => MinusOne,
            Partial::Term(t) => Partial::Term(instantiate(t, to)?),
        });
    }
    Ok(Some(out))
}
