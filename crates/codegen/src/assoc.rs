//! Which `reduce`s the fast configurations may rebracket (note
//! [rebracketing]).
//!
//! `reduce f z A` means the left fold (docs/semantics.md), for every `f`.
//! A parallel `reduce` (`Config::parallel`) folds each thread's chunk from
//! `z` and combines the chunks with `f`; a reassociated one
//! (`Config::reassociate`) does the same with four lanes. Both compute the
//! left fold, up to rounding, only when `f` is associative and starting a
//! chunk from `z` changes nothing: `z` is the unit of `f`, or `f` is
//! idempotent. Elsewhere they would compute another number (a `reduce (+)
//! 1 A` in two chunks adds 1 three times), so only the reductions this
//! module recognises are rebracketed, componentwise on tuples:
//!
//! | component of the step | initial value |
//! | --- | --- |
//! | `a + b` | the constant `0` |
//! | `a * b` | the constant `1` |
//! | `max a b`, `min a b` | anything (idempotent) |
//!
//! where `a` and `b` are the accumulator's and the element's component
//! (in either order), read by projections or through `let`s; every other
//! `reduce` runs as the sequential left fold, bit-identical to the
//! evaluator in every configuration. An accumulator holding arrays
//! (`rebracketable_arrays`, parallel only) may also combine its arrays
//! elementwise through `map2`, with `+`, `max` or `min` on the scalars,
//! when `z` is zeros, which is checked at run time.

use std::collections::HashMap;

use syntax::{Expr, ExprId, Module, Name, Pat, Prim};

use crate::imp::Expr as E;
use crate::streams::scalars;
use crate::val::{Func, Val};

/// What a subterm of the step is, as far as the recognizer follows it.
#[derive(Clone, Debug, PartialEq)]
enum Sym {
    /// The accumulator (`0`) or the element (`1`), projected along a path.
    Param(usize, Vec<u32>),
    /// A scalar operator applied to two subterms.
    Op(Prim, Box<Sym>, Box<Sym>),
    Tuple(Vec<Sym>),
    /// `map2 g` over the accumulator's and the element's arrays at this
    /// path, `g`'s step in terms of their elements (`Param(k, [])`).
    Map2(Vec<u32>, Box<Sym>),
    /// Anything else.
    Other,
}

/// The step of `reduce f ..` as a symbolic term of the accumulator
/// (parameter 0) and the element (parameter 1), when `f` is a lambda of
/// two.
fn step_of(m: &Module, f: &Func) -> Option<Sym> {
    let Expr::Lambda { params, body } = m.expr(f.lambda) else {
        return None;
    };
    let [acc, elem] = params.as_slice() else {
        return None;
    };
    let mut env = HashMap::new();
    env.insert(acc.name.clone(), Sym::Param(0, Vec::new()));
    env.insert(elem.name.clone(), Sym::Param(1, Vec::new()));
    Some(sym(m, *body, &mut env))
}

/// Whether `reduce f z` may be computed in chunks folded from `z` and
/// combined with `f` (module docs).
pub(crate) fn rebracketable(m: &Module, f: &Func, z: &Val) -> bool {
    let Some(step) = step_of(m, f) else {
        return false;
    };
    let mut components = Vec::new();
    flatten(&step, &mut Vec::new(), &mut components);
    let mut units = Vec::new();
    scalars(z, &mut units);
    components.len() == units.len()
        && components
            .iter()
            .zip(&units)
            .all(|((path, s), unit)| component_ok(path, s, unit))
}

/// The step's scalar components with their paths (a non-tuple is one
/// component at the empty path).
fn flatten<'s>(s: &'s Sym, path: &mut Vec<u32>, out: &mut Vec<(Vec<u32>, &'s Sym)>) {
    match s {
        Sym::Tuple(items) => {
            for (k, item) in items.iter().enumerate() {
                path.push(k as u32 + 1);
                flatten(item, path, out);
                path.pop();
            }
        }
        other => out.push((path.clone(), other)),
    }
}

/// Whether the component at `path` combines the accumulator's and the
/// element's components at `path` by an operator for which `unit` is
/// allowed as every chunk's start.
fn component_ok(path: &[u32], s: &Sym, unit: &E) -> bool {
    let Sym::Op(op, a, b) = s else {
        return false;
    };
    let here = |k: usize| Sym::Param(k, path.to_vec());
    let operands = (**a == here(0) && **b == here(1)) || (**a == here(1) && **b == here(0));
    // A literal, as the lowering gives a constant's value; `-0.0` is not
    // the unit of `+` (`-0.0 + 0.0` is `0.0`).
    let is = |x: f64, i: i64| match unit {
        E::F64(u) => *u == x && u.is_sign_positive(),
        E::I64(u) => *u == i,
        E::I32(u) => i64::from(*u) == i,
        _ => false,
    };
    operands
        && match op {
            Prim::Add => is(0.0, 0),
            Prim::Mul => is(1.0, 1),
            Prim::Max | Prim::Min => true,
            _ => false,
        }
}

fn sym(m: &Module, e: ExprId, env: &mut HashMap<Name, Sym>) -> Sym {
    match m.expr(e) {
        Expr::Var(x) => env.get(x).cloned().unwrap_or(Sym::Other),
        Expr::Proj { tuple, index } => match sym(m, *tuple, env) {
            Sym::Param(k, mut path) => {
                path.push(*index);
                Sym::Param(k, path)
            }
            Sym::Tuple(items) => items
                .get(*index as usize - 1)
                .cloned()
                .unwrap_or(Sym::Other),
            _ => Sym::Other,
        },
        Expr::Tuple(items) => Sym::Tuple(items.iter().map(|x| sym(m, *x, env)).collect()),
        Expr::Prim { op, args } => match (op, args.as_slice()) {
            (Prim::Add | Prim::Mul | Prim::Max | Prim::Min, [a, b]) => {
                Sym::Op(*op, Box::new(sym(m, *a, env)), Box::new(sym(m, *b, env)))
            }
            (Prim::Map2, [g, a, b]) => map2(m, *g, sym(m, *a, env), sym(m, *b, env)),
            _ => Sym::Other,
        },
        Expr::Let {
            pat, value, body, ..
        } => {
            let v = sym(m, *value, env);
            let bound = bind(pat, v);
            let saved: Vec<(Name, Option<Sym>)> = bound
                .into_iter()
                .map(|(x, s)| {
                    let old = env.insert(x.clone(), s);
                    (x, old)
                })
                .collect();
            let out = sym(m, *body, env);
            for (x, old) in saved.into_iter().rev() {
                match old {
                    Some(s) => env.insert(x, s),
                    None => env.remove(&x),
                };
            }
            out
        }
        _ => Sym::Other,
    }
}

/// `map2 g a b` where `a` and `b` are the accumulator's and the element's
/// arrays at one path (in either order).
fn map2(m: &Module, g: ExprId, a: Sym, b: Sym) -> Sym {
    let (Sym::Param(ka, pa), Sym::Param(kb, pb)) = (a, b) else {
        return Sym::Other;
    };
    let Expr::Lambda { params, body } = m.expr(g) else {
        return Sym::Other;
    };
    let [p, q] = params.as_slice() else {
        return Sym::Other;
    };
    if pa != pb || ka == kb {
        return Sym::Other;
    }
    let mut inner = HashMap::new();
    inner.insert(p.name.clone(), Sym::Param(ka, Vec::new()));
    inner.insert(q.name.clone(), Sym::Param(kb, Vec::new()));
    Sym::Map2(pa, Box::new(sym(m, *body, &mut inner)))
}

/// Whether `reduce f z` with an accumulator holding arrays may be computed
/// in chunks folded from `z` and combined with `f` when every scalar of
/// `z` is zero (which the caller checks at run time: such a `z` is
/// computed, GMM's `map (fun _ -> 0) ..`): every scalar component of the
/// step is `a + b`, `max a b` or `min a b` of the accumulator's and the
/// element's, directly or inside `map2`s over their arrays at the same
/// path.
pub(crate) fn rebracketable_arrays(m: &Module, f: &Func) -> bool {
    step_of(m, f).is_some_and(|step| zero_ok(&step, &mut Vec::new()))
}

/// [`rebracketable_arrays`] for the component of the step at `path`.
fn zero_ok(s: &Sym, path: &mut Vec<u32>) -> bool {
    match s {
        Sym::Tuple(items) => items.iter().enumerate().all(|(k, item)| {
            path.push(k as u32 + 1);
            let ok = zero_ok(item, path);
            path.pop();
            ok
        }),
        Sym::Map2(at, inner) => at == path && zero_ok(inner, &mut Vec::new()),
        Sym::Op(op, a, b) => {
            let here = |k: usize| Sym::Param(k, path.to_vec());
            let operands = (**a == here(0) && **b == here(1)) || (**a == here(1) && **b == here(0));
            operands && matches!(op, Prim::Add | Prim::Max | Prim::Min)
        }
        _ => false,
    }
}

/// The names a pattern binds, with what each is.
fn bind(pat: &Pat, v: Sym) -> Vec<(Name, Sym)> {
    match pat {
        Pat::Var(x) => vec![(x.clone(), v)],
        Pat::Tuple(xs) => xs
            .iter()
            .enumerate()
            .map(|(k, x)| {
                let s = match &v {
                    Sym::Param(p, path) => {
                        let mut path = path.clone();
                        path.push(k as u32 + 1);
                        Sym::Param(*p, path)
                    }
                    Sym::Tuple(items) => items.get(k).cloned().unwrap_or(Sym::Other),
                    _ => Sym::Other,
                };
                (x.clone(), s)
            })
            .collect(),
    }
}
