//! The generator's own evaluator of its AST ([`crate::ast`]): the second
//! opinion on a program's value, and the judge of admissible inputs. It
//! refuses to apply a partial or non-smooth operation within [`MARGIN`] of
//! a singular point or kink (`log`/`sqrt` near 0, a division by nearly 0,
//! `pow` of a base near 0, `tan` near a pole, `abs` near 0, `max`/`min`
//! and comparisons near a tie) and to produce a value beyond [`BOUND`], so
//! that finite differences around an admitted point see one smooth piece.
//!
//! Only the taken branch of `if` is evaluated, as in the language; with
//! [`Probe::untaken`] set, the untaken branch is evaluated on the side too,
//! to count the conditionals whose untaken branch is singular there (NaN,
//! infinite, or at a singular point): reverse and forward mode must not
//! let it leak into the derivative.

use crate::ast::{GExpr, GVal};
use syntax::Prim;

/// Why a program may not be run at some inputs.
#[derive(Debug, Clone, PartialEq)]
pub struct Singular(pub String);

/// How far from a singular point a partial operation must be applied.
pub const MARGIN: f64 = 1e-2;
/// The largest magnitude a value may take (keeps finite differences sane).
pub const BOUND: f64 = 1e6;

/// What an evaluation observes besides the value.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Probe {
    /// Whether to evaluate untaken branches on the side.
    pub untaken: bool,
    /// Conditionals evaluated.
    pub ifs: u64,
    /// Of those, the ones whose untaken branch is singular.
    pub singular_untaken: u64,
}

/// Evaluates `e` in `env` (innermost binding last).
pub fn eval(e: &GExpr, env: &mut Vec<(String, GVal)>) -> Result<GVal, Singular> {
    eval_probed(e, env, &mut Probe::default())
}

/// [`eval`], reporting to `probe`.
pub fn eval_probed(
    e: &GExpr,
    env: &mut Vec<(String, GVal)>,
    probe: &mut Probe,
) -> Result<GVal, Singular> {
    let k = env.len();
    let v = eval_in(e, env, probe);
    env.truncate(k);
    v
}

fn real(v: GVal) -> Result<f64, Singular> {
    match v {
        GVal::Real(x) => Ok(x),
        other => Err(Singular(format!("expected a real, got {other:?}"))),
    }
}

fn array(v: GVal) -> Result<Vec<GVal>, Singular> {
    match v {
        GVal::Array(xs) => Ok(xs),
        other => Err(Singular(format!("expected an array, got {other:?}"))),
    }
}

fn int(v: GVal) -> Result<i64, Singular> {
    match v {
        GVal::Int(i) => Ok(i),
        other => Err(Singular(format!("expected an integer, got {other:?}"))),
    }
}

/// The count of `build` or `ifold`: a negative one is an error of the
/// language (docs/semantics.md), so such inputs are not admissible.
fn count(v: GVal) -> Result<i64, Singular> {
    match int(v)? {
        n if n < 0 => Err(Singular(format!("a negative count {n}"))),
        n => Ok(n),
    }
}

fn truth(v: GVal) -> Result<bool, Singular> {
    match v {
        GVal::Bool(b) => Ok(b),
        other => Err(Singular(format!("expected a truth value, got {other:?}"))),
    }
}

/// Applies a lambda of `params` to `args`.
fn apply(
    params: &[String],
    body: &GExpr,
    args: Vec<GVal>,
    env: &mut Vec<(String, GVal)>,
    probe: &mut Probe,
) -> Result<GVal, Singular> {
    let k = env.len();
    env.extend(params.iter().cloned().zip(args));
    let r = eval_in(body, env, probe);
    env.truncate(k);
    r
}

/// Applies `fun x -> body` to `arg` (the function of a derivative
/// construct, `crate::deriv`).
pub(crate) fn apply_fn(
    x: &str,
    body: &GExpr,
    arg: GVal,
    env: &mut Vec<(String, GVal)>,
    probe: &mut Probe,
) -> Result<GVal, Singular> {
    apply(&[x.to_string()], body, vec![arg], env, probe)
}

fn eval_in(e: &GExpr, env: &mut Vec<(String, GVal)>, probe: &mut Probe) -> Result<GVal, Singular> {
    syntax::stack::guard(|| eval_node(e, env, probe))
}

fn eval_node(
    e: &GExpr,
    env: &mut Vec<(String, GVal)>,
    probe: &mut Probe,
) -> Result<GVal, Singular> {
    let v = match e {
        GExpr::Const(c) => GVal::Real(*c),
        GExpr::Var(n) => env
            .iter()
            .rev()
            .find(|(m, _)| m == n)
            .map(|(_, v)| v.clone())
            .ok_or_else(|| Singular(format!("unbound {n}")))?,
        GExpr::Let(x, v, b) => {
            let v = eval_in(v, env, probe)?;
            apply(std::slice::from_ref(x), b, vec![v], env, probe)?
        }
        GExpr::Apply(a) => {
            let v = eval_in(&a.arg, env, probe)?;
            apply(std::slice::from_ref(&a.x), &a.body, vec![v], env, probe)?
        }
        GExpr::LetTuple(xs, v, b) => match eval_in(v, env, probe)? {
            GVal::Tuple(vs) if vs.len() == xs.len() => apply(xs, b, vs, env, probe)?,
            _ => return Err(Singular("expected a tuple".to_string())),
        },
        GExpr::Tuple(items) => GVal::Tuple(
            items
                .iter()
                .map(|i| eval_in(i, env, probe))
                .collect::<Result<_, _>>()?,
        ),
        GExpr::Proj(t, i) => match eval_in(t, env, probe)? {
            GVal::Tuple(mut vs) if *i >= 1 && *i <= vs.len() => vs.swap_remove(*i - 1),
            _ => return Err(Singular("bad projection".to_string())),
        },
        GExpr::Op1(op, a) => {
            let x = eval_in(a, env, probe)?;
            match op {
                Prim::Not => GVal::Bool(!truth(x)?),
                Prim::Length => GVal::Int(array(x)?.len() as i64),
                Prim::Shift1L | Prim::Shift1R => {
                    let mut xs = array(x)?;
                    if xs.is_empty() {
                        // Sizes could no longer follow the types (`[n-1]`
                        // of an empty array is empty, not of size -1).
                        return Err(Singular("a shift of an empty array".to_string()));
                    }
                    if *op == Prim::Shift1L {
                        xs.remove(0);
                    } else {
                        xs.pop();
                    }
                    GVal::Array(xs)
                }
                Prim::Real => match x {
                    GVal::Int(n) => GVal::Real(syntax::derivatives::to_real(n)),
                    other => return Err(Singular(format!("real of {other:?}"))),
                },
                Prim::Floor | Prim::Ceil | Prim::Round | Prim::Trunc => {
                    let x = real(x)?;
                    // A jump: at the integers (`round`: the halves).
                    let jump = if *op == Prim::Round { x + 0.5 } else { x };
                    if (jump - jump.round()).abs() < MARGIN {
                        return Err(Singular(format!(
                            "{} applied at {x}, near a jump",
                            op.symbol()
                        )));
                    }
                    match syntax::derivatives::to_int(*op, x) {
                        Some(Ok(n)) => GVal::Int(n),
                        _ => return Err(Singular(format!("{} of {x}", op.symbol()))),
                    }
                }
                _ => GVal::Real(op1(*op, real(x)?)?),
            }
        }
        GExpr::Op2(op, a, b) => {
            let x = eval_in(a, env, probe)?;
            let y = eval_in(b, env, probe)?;
            match op {
                Prim::And => GVal::Bool(truth(x)? & truth(y)?),
                Prim::Or => GVal::Bool(truth(x)? | truth(y)?),
                Prim::Lt | Prim::Le | Prim::Gt | Prim::Ge | Prim::Eq | Prim::Ne => {
                    GVal::Bool(compare(*op, x, y)?)
                }
                // `/` and `mod` of an Int by a positive constant.
                Prim::Div | Prim::Mod if matches!(x, GVal::Int(_)) => {
                    let (GVal::Int(a), GVal::Real(d)) = (x, y) else {
                        return Err(Singular("an Int division by a non-constant".to_string()));
                    };
                    match syntax::derivatives::eval_int(*op, a, d as i64) {
                        Some(Ok(q)) => GVal::Int(q),
                        _ => return Err(Singular(format!("{} by {d}", op.symbol()))),
                    }
                }
                _ => GVal::Real(op2(*op, real(x)?, real(y)?)?),
            }
        }
        GExpr::If(c, a, b) => {
            let taken = truth(eval_in(c, env, probe)?)?;
            let (yes, no) = if taken { (a, b) } else { (b, a) };
            if probe.untaken {
                probe.ifs += 1;
                let mut side = Probe::default();
                match eval_in(no, env, &mut side) {
                    Ok(v) if all_finite(&v) => {}
                    _ => probe.singular_untaken += 1,
                }
            }
            eval_in(yes, env, probe)?
        }
        GExpr::Index(a, i) => {
            let xs = array(eval_in(a, env, probe)?)?;
            let i = int(eval_in(i, env, probe)?)?;
            usize::try_from(i)
                .ok()
                .and_then(|i| xs.get(i).cloned())
                .ok_or_else(|| Singular(format!("index {i} out of bounds of {}", xs.len())))?
        }
        GExpr::Hist(op, d, v, k) => {
            // Written out again here, a second opinion on `syntax::hist`:
            // element j goes to bin j / k when that is in range, in order.
            let mut out = reals(eval_in(d, env, probe)?)?;
            let v = reals(eval_in(v, env, probe)?)?;
            for (j, &x) in v.iter().enumerate() {
                let Some(cur) = out.get_mut(j / *k as usize) else {
                    continue;
                };
                // A tie of min or max is a kink: keep a bin's elements apart.
                if matches!(op, Prim::HistMin | Prim::HistMax) && (*cur - x).abs() < MARGIN {
                    return Err(Singular(format!("{} near a tie", op.symbol())));
                }
                *cur = match op {
                    Prim::HistAdd => *cur + x,
                    Prim::HistMul => *cur * x,
                    Prim::HistMin => cur.min(x),
                    Prim::HistMax => cur.max(x),
                    _ => x,
                };
            }
            if out.iter().any(|x| x.is_nan() || x.abs() > BOUND) {
                return Err(Singular(format!("{} beyond the bound", op.symbol())));
            }
            GVal::Array(out.into_iter().map(GVal::Real).collect())
        }
        GExpr::Deriv(d) => crate::deriv::eval(d, env, probe)?,
        GExpr::Loop(l) => {
            let mut args = Vec::with_capacity(l.args.len());
            for a in &l.args {
                args.push(eval_in(a, env, probe)?);
            }
            let mut f = |xs: Vec<GVal>, env: &mut Vec<(String, GVal)>| {
                apply(&l.params, &l.body, xs, env, probe)
            };
            match l.op {
                Prim::Map => {
                    let xs = array(args.swap_remove(0))?;
                    GVal::Array(
                        xs.into_iter()
                            .map(|x| f(vec![x], env))
                            .collect::<Result<_, _>>()?,
                    )
                }
                Prim::Map2 => {
                    let ys = array(args.pop().expect("invariant: map2 has two arrays"))?;
                    let xs = array(args.pop().expect("invariant: map2 has two arrays"))?;
                    if xs.len() != ys.len() {
                        return Err(Singular("map2 of arrays of different lengths".to_string()));
                    }
                    GVal::Array(
                        xs.into_iter()
                            .zip(ys)
                            .map(|(x, y)| f(vec![x, y], env))
                            .collect::<Result<_, _>>()?,
                    )
                }
                Prim::Reduce | Prim::Foldl | Prim::Scanl => {
                    let xs = array(args.pop().expect("invariant: a fold has an array"))?;
                    let mut acc = args.pop().expect("invariant: a fold has an initial value");
                    let mut all = vec![acc.clone()];
                    for x in xs {
                        acc = f(vec![acc, x], env)?;
                        all.push(acc.clone());
                    }
                    if l.op == Prim::Scanl {
                        GVal::Array(all)
                    } else {
                        acc
                    }
                }
                Prim::Scanr => {
                    let xs = array(args.pop().expect("invariant: a scan has an array"))?;
                    let mut acc = args.pop().expect("invariant: a scan has an initial value");
                    let mut all = vec![acc.clone()];
                    for x in xs.into_iter().rev() {
                        acc = f(vec![x, acc], env)?;
                        all.push(acc.clone());
                    }
                    all.reverse();
                    GVal::Array(all)
                }
                Prim::Build => {
                    let n = count(args.swap_remove(0))?;
                    GVal::Array(
                        (0..n)
                            .map(|i| f(vec![GVal::Int(i)], env))
                            .collect::<Result<_, _>>()?,
                    )
                }
                Prim::Ifold => {
                    let n = count(args.pop().expect("invariant: ifold has a count"))?;
                    let mut acc = args.pop().expect("invariant: ifold has an initial value");
                    for i in 0..n {
                        acc = f(vec![acc, GVal::Int(i)], env)?;
                    }
                    acc
                }
                // `args`: the initial state, the bound of the counter and,
                // for a real state, the constant it stays below
                // (`ast::write_while`). Both operands of `&&` are
                // evaluated, as in the language, so a state near the
                // constant is a singular point even at the last check.
                Prim::While => {
                    let bound = int(args[1].clone())?;
                    let below = args.get(2).cloned();
                    let mut acc = args[0].clone();
                    let mut k = 0;
                    loop {
                        let more = k < bound;
                        let under = match &below {
                            Some(c) => compare(Prim::Lt, acc.clone(), c.clone())?,
                            None => true,
                        };
                        if !(more && under) {
                            break;
                        }
                        acc = f(vec![acc, GVal::Int(k)], env)?;
                        k += 1;
                    }
                    acc
                }
                other => return Err(Singular(format!("not a loop: {other}"))),
            }
        }
    };
    Ok(v)
}

fn all_finite(v: &GVal) -> bool {
    match v {
        GVal::Real(x) => x.is_finite(),
        GVal::Array(xs) | GVal::Tuple(xs) => xs.iter().all(all_finite),
        GVal::Int(_) | GVal::Bool(_) => true,
    }
}

/// A comparison: of reals away from a tie (so that a small perturbation
/// does not change the branch), of integers exactly.
fn compare(op: Prim, x: GVal, y: GVal) -> Result<bool, Singular> {
    let num = |v: &GVal| match v {
        GVal::Int(i) => Some((*i as f64, true)),
        GVal::Real(r) => Some((*r, false)),
        _ => None,
    };
    let (Some((a, ai)), Some((b, bi))) = (num(&x), num(&y)) else {
        return Err(Singular(format!("cannot compare {x:?} and {y:?}")));
    };
    // Integers (an index against an integer literal) compare exactly.
    if !(ai || bi) && (a - b).abs() < MARGIN {
        return Err(Singular(format!(
            "{} applied at ({a}, {b}), near a tie",
            op.symbol()
        )));
    }
    Ok(cmp(op, a, b))
}

fn cmp(op: Prim, a: f64, b: f64) -> bool {
    match op {
        Prim::Lt => a < b,
        Prim::Le => a <= b,
        Prim::Gt => a > b,
        Prim::Ge => a >= b,
        Prim::Eq => a == b,
        _ => a != b,
    }
}

fn bounded(x: f64, what: &str) -> Result<f64, Singular> {
    if x.is_finite() && x.abs() <= BOUND {
        Ok(x)
    } else {
        Err(Singular(format!("{what} gives {x}")))
    }
}

fn op1(op: Prim, x: f64) -> Result<f64, Singular> {
    let near = |what: &str| {
        Err(Singular(format!(
            "{} applied at {x}, near {what}",
            op.symbol()
        )))
    };
    let r = match op {
        Prim::Neg => -x,
        // The body of `ast::RULES`.
        Prim::WithRules => x * x.sin(),
        Prim::Sin => x.sin(),
        Prim::Cos => x.cos(),
        Prim::Tan if x.cos().abs() < MARGIN => return near("a pole"),
        Prim::Tan => x.tan(),
        Prim::Exp => x.exp(),
        Prim::Log | Prim::Sqrt if x < MARGIN => return near("the edge of its domain"),
        Prim::Log => x.ln(),
        Prim::Sqrt => x.sqrt(),
        Prim::Tanh => x.tanh(),
        Prim::Abs if x.abs() < MARGIN => return near("its kink"),
        Prim::Abs => x.abs(),
        Prim::Sign if x.abs() < MARGIN => return near("its kink"),
        Prim::Log1p if x < -1.0 + MARGIN => return near("the edge of its domain"),
        Prim::Lgamma if x < MARGIN && (x - x.round()).abs() < MARGIN => return near("a pole"),
        // Every other unary real function: the table's value.
        other if other.arity() == 1 && syntax::derivatives::partials(other).is_some() => {
            syntax::derivatives::eval(other, &[x]).unwrap_or(f64::NAN)
        }
        other => return Err(Singular(format!("not a unary operator: {other}"))),
    };
    bounded(r, op.symbol())
}

fn op2(op: Prim, x: f64, y: f64) -> Result<f64, Singular> {
    let near = |what: &str| {
        Err(Singular(format!(
            "{} applied at ({x}, {y}), near {what}",
            op.symbol()
        )))
    };
    let r = match op {
        Prim::Add => x + y,
        Prim::Sub => x - y,
        Prim::Mul => x * y,
        Prim::Div if y.abs() < MARGIN => return near("a division by zero"),
        Prim::Div => x / y,
        Prim::Pow if x < MARGIN => return near("a non-positive base"),
        Prim::Pow => x.powf(y),
        Prim::Max | Prim::Min if (x - y).abs() < MARGIN => return near("a tie"),
        Prim::Atan2 if x.hypot(y) < MARGIN => return near("the origin"),
        // The branch cut: at `atan2 (±0) x` for x < 0 the value jumps
        // between π and -π with the sign of the zero, which `0 * e ~> 0`
        // does not keep (docs/optimize.md).
        Prim::Atan2 if x.abs() < MARGIN && y < 0.0 => return near("the branch cut"),
        Prim::Atan2 => x.atan2(y),
        Prim::Hypot if x.hypot(y) < MARGIN => return near("the origin"),
        Prim::Max => x.max(y),
        Prim::Min => x.min(y),
        // Every other binary real function: the table's value.
        other if other.arity() == 2 && syntax::derivatives::partials(other).is_some() => {
            syntax::derivatives::eval(other, &[x, y]).unwrap_or(f64::NAN)
        }
        other => return Err(Singular(format!("not a binary operator: {other}"))),
    };
    bounded(r, op.symbol())
}

/// The reals of an array of reals.
fn reals(v: GVal) -> Result<Vec<f64>, Singular> {
    array(v)?.into_iter().map(real).collect()
}
