//! Walks over ground types that move values between primal, tangent and
//! dual form, and that build the one-hot seeds of gradients and Jacobians.
//!
//! - `lift`: a primal value as a dual with zero tangent (dF~'s treatment of
//!   free variables in `deriv`);
//! - `zip` / `primal` / `tangent`: between a dual and its two halves;
//! - `assemble`: one forward pass per scalar of an input, the seeds built
//!   with `build` over the index so that the loop is in the program (dF~);
//! - `count` / `seed` / `gather`: the flat numbering of an input's scalars
//!   used by the vectorised mode (`Rep::Vector`), which pushes all seeds
//!   through one pass;
//! - `transpose` / `rebuild`: from "input-shaped of output-shaped" columns to
//!   "output-shaped of input-shaped" Jacobians.
//!
//! Every function consumes the `ExprId`s it is given exactly once and takes
//! values it needs several times as [`Atom`]s. `Int` and `Bool` leaves have
//! no tangent: their tangent and gradient slots hold `0` and `false`.

use syntax::{Pat, Prim, Size, Ty, stack};

use crate::build::{Atom, Builder, Res, show_ty};
use crate::dual::Rep;

/// The value `e : ty` as a dual with zero tangent.
pub(crate) fn lift(cx: &mut Builder, rep: &Rep, ty: &Ty, e: syntax::ExprId) -> Res<syntax::ExprId> {
    stack::guard(|| {
        if rep.dual_ty(ty) == *ty {
            return Ok(e);
        }
        match ty {
            Ty::Real => {
                let z = rep.zero(cx);
                cx.tuple(vec![e, z])
            }
            Ty::Tuple(items) => cx.bind_tuple("c", e, |cx, atoms| {
                let mut out = Vec::with_capacity(items.len());
                for (t, a) in items.iter().zip(&atoms) {
                    let v = cx.emit(a);
                    out.push(lift(cx, rep, t, v)?);
                }
                cx.tuple(out)
            }),
            Ty::Array(_, elem) => cx.map(e, "v", |cx, a| {
                let v = cx.emit(&a);
                lift(cx, rep, elem, v)
            }),
            _ => Err(cx.internal(format!("lifting a value of type {}", show_ty(ty)))),
        }
    })
}

/// The primal half of a dual `d : D ty`.
pub(crate) fn primal(
    cx: &mut Builder,
    rep: &Rep,
    ty: &Ty,
    d: syntax::ExprId,
) -> Res<syntax::ExprId> {
    stack::guard(|| {
        if rep.dual_ty(ty) == *ty {
            return Ok(d);
        }
        match ty {
            Ty::Real => cx.proj(d, 1),
            Ty::Tuple(items) => cx.bind_tuple("d", d, |cx, atoms| {
                let mut out = Vec::with_capacity(items.len());
                for (t, a) in items.iter().zip(&atoms) {
                    let v = cx.emit(a);
                    out.push(primal(cx, rep, t, v)?);
                }
                cx.tuple(out)
            }),
            Ty::Array(_, elem) => cx.map(d, "d", |cx, a| {
                let v = cx.emit(&a);
                primal(cx, rep, elem, v)
            }),
            _ => Err(cx.internal(format!("the primal of a value of type {}", show_ty(ty)))),
        }
    })
}

/// The tangent half of a dual `d : D ty` (under either representation).
pub(crate) fn tangent(cx: &mut Builder, ty: &Ty, d: syntax::ExprId) -> Res<syntax::ExprId> {
    stack::guard(|| match ty {
        Ty::Real => cx.proj(d, 2),
        Ty::Int => Ok(cx.int(0)),
        Ty::Bool => Ok(cx.add(syntax::Expr::Bool(false), Ty::Bool)),
        Ty::Tuple(items) => cx.bind_tuple("d", d, |cx, atoms| {
            let mut out = Vec::with_capacity(items.len());
            for (t, a) in items.iter().zip(&atoms) {
                let v = cx.emit(a);
                out.push(tangent(cx, t, v)?);
            }
            cx.tuple(out)
        }),
        Ty::Array(_, elem) => cx.map(d, "d", |cx, a| {
            let v = cx.emit(&a);
            tangent(cx, elem, v)
        }),
        Ty::Func(..) => Err(cx.internal(format!("the tangent of a value of type {}", show_ty(ty)))),
    })
}

/// The dual with primal `p : ty` and tangent `t : ty` (one direction).
pub(crate) fn zip(
    cx: &mut Builder,
    ty: &Ty,
    p: syntax::ExprId,
    t: syntax::ExprId,
) -> Res<syntax::ExprId> {
    stack::guard(|| match ty {
        Ty::Real => cx.tuple(vec![p, t]),
        Ty::Int | Ty::Bool => Ok(p),
        Ty::Tuple(items) => cx.bind_tuple("p", p, |cx, ps| {
            cx.bind_tuple("t", t, |cx, ts| {
                let mut out = Vec::with_capacity(items.len());
                for ((ty, p), t) in items.iter().zip(&ps).zip(&ts) {
                    let p = cx.emit(p);
                    let t = cx.emit(t);
                    out.push(zip(cx, ty, p, t)?);
                }
                cx.tuple(out)
            })
        }),
        Ty::Array(_, elem) => {
            if Rep::Scalar.dual_ty(elem) == **elem {
                return Ok(p);
            }
            cx.map2(p, t, |cx, a, b| {
                let a = cx.emit(&a);
                let b = cx.emit(&b);
                zip(cx, elem, a, b)
            })
        }
        Ty::Func(..) => Err(cx.internal(format!("zipping a value of type {}", show_ty(ty)))),
    })
}

/// The inner product of two tangents of type `ty` (one direction).
pub(crate) fn dot(
    cx: &mut Builder,
    ty: &Ty,
    a: syntax::ExprId,
    b: syntax::ExprId,
) -> Res<syntax::ExprId> {
    stack::guard(|| match ty {
        Ty::Real => Ok(cx.prim_r(Prim::Mul, vec![a, b])),
        Ty::Int | Ty::Bool => Ok(cx.real(0.0)),
        Ty::Tuple(items) => cx.bind_tuple("a", a, |cx, xs| {
            cx.bind_tuple("b", b, |cx, ys| {
                let mut acc = cx.real(0.0);
                for ((ty, x), y) in items.iter().zip(&xs).zip(&ys) {
                    let x = cx.emit(x);
                    let y = cx.emit(y);
                    let d = dot(cx, ty, x, y)?;
                    acc = cx.add_r(acc, d);
                }
                Ok(acc)
            })
        }),
        Ty::Array(_, elem) => {
            let products = cx.map2(a, b, |cx, x, y| {
                let x = cx.emit(&x);
                let y = cx.emit(&y);
                dot(cx, elem, x, y)
            })?;
            cx.sum(products)
        }
        Ty::Func(..) => Err(cx.internal(format!("an inner product at type {}", show_ty(ty)))),
    })
}

/// What to do with one seeded input: receives the dual input and returns
/// the value to put in that scalar's slot.
pub(crate) type Cont<'a> = &'a mut dyn FnMut(&mut Builder, syntax::ExprId) -> Res<syntax::ExprId>;

/// One forward pass per scalar of `x : ty`: a value shaped like `ty`, with
/// every real replaced by a result of `cont`, whose slot for each real of `x` holds
/// `cont (x seeded with tangent 1 at that real, 0 elsewhere)`. Arrays are
/// walked with `build` over the index, so the seed loop is in the program.
pub(crate) fn assemble(cx: &mut Builder, ty: &Ty, x: &Atom, cont: Cont<'_>) -> Res<syntax::ExprId> {
    stack::guard(|| match ty {
        Ty::Real => {
            let p = cx.emit(x);
            let one = cx.real(1.0);
            let d = cx.tuple(vec![p, one])?;
            cont(cx, d)
        }
        Ty::Int => Ok(cx.int(0)),
        Ty::Bool => Ok(cx.add(syntax::Expr::Bool(false), Ty::Bool)),
        Ty::Tuple(items) => {
            let whole = cx.emit(x);
            cx.bind_tuple("x", whole, |cx, atoms| {
                let mut out = Vec::with_capacity(items.len());
                for (i, t) in items.iter().enumerate() {
                    let mut inner = |cx: &mut Builder, d: syntax::ExprId| {
                        let mut comps = Vec::with_capacity(items.len());
                        for (j, (tj, aj)) in items.iter().zip(&atoms).enumerate() {
                            if j == i {
                                comps.push(d);
                            } else {
                                let v = cx.emit(aj);
                                comps.push(lift(cx, &Rep::Scalar, tj, v)?);
                            }
                        }
                        let seeded = cx.tuple(comps)?;
                        cont(cx, seeded)
                    };
                    out.push(assemble(cx, t, &atoms[i], &mut inner)?);
                }
                cx.tuple(out)
            })
        }
        Ty::Array(size, elem) => {
            let arr = cx.emit(x);
            let n = cx.length(arr);
            cx.build(n, size.clone(), |cx, i| {
                let arr = cx.emit(x);
                let ii = cx.emit(&i);
                let xi = cx.index(arr, ii)?;
                cx.bind("x", xi, |cx, xi| {
                    let mut inner = |cx: &mut Builder, d: syntax::ExprId| {
                        // x with element i replaced by the seeded d.
                        let arr = cx.emit(x);
                        let n = cx.length(arr);
                        let seeded = cx.build(n, size.clone(), |cx, k| {
                            let kk = cx.emit(&k);
                            let ii = cx.emit(&i);
                            let here = cx.prim(Prim::Eq, vec![kk, ii], Ty::Bool);
                            let arr = cx.emit(x);
                            let kk = cx.emit(&k);
                            let xk = cx.index(arr, kk)?;
                            let other = lift(cx, &Rep::Scalar, elem, xk)?;
                            cx.if_(here, d, other)
                        })?;
                        cont(cx, seeded)
                    };
                    assemble(cx, elem, &xi, &mut inner)
                })
            })
        }
        Ty::Func(..) => Err(cx.internal(format!("seeding a value of type {}", show_ty(ty)))),
    })
}

/// The number of reals in a value of type `ty` known from the type alone.
pub(crate) fn static_count(ty: &Ty) -> Option<i64> {
    match ty {
        Ty::Real => Some(1),
        Ty::Int | Ty::Bool => Some(0),
        Ty::Tuple(items) => items.iter().map(static_count).sum(),
        Ty::Array(..) | Ty::Func(..) => None,
    }
}

/// Binds `value` unless it is an atom, recording the binding in `binds`.
pub(crate) fn let_atom(
    cx: &mut Builder,
    binds: &mut Vec<(Pat, syntax::ExprId)>,
    base: &str,
    value: syntax::ExprId,
) -> Res<Atom> {
    if let Some(a) = cx.as_atom(value) {
        return Ok(a);
    }
    let ty = cx.ty(value)?;
    let name = cx.fresh(base);
    binds.push((Pat::Var(name.clone()), value));
    Ok(Atom::Var(name, ty))
}

/// The number of reals in `x : ty`, as an `Int` expression. Arrays of
/// arrays are taken to be rectangular, as their types `[n][m]T` say: the
/// count of an array is its length times the count of its first element.
pub(crate) fn count(cx: &mut Builder, ty: &Ty, x: &Atom) -> Res<syntax::ExprId> {
    stack::guard(|| {
        if let Some(c) = static_count(ty) {
            return Ok(cx.int(c));
        }
        match ty {
            Ty::Tuple(items) => {
                let whole = cx.emit(x);
                cx.bind_tuple("x", whole, |cx, atoms| {
                    let mut acc = cx.int(0);
                    for (t, a) in items.iter().zip(&atoms) {
                        let c = count(cx, t, a)?;
                        acc = cx.add_i(acc, c);
                    }
                    Ok(acc)
                })
            }
            Ty::Array(_, elem) => {
                let arr = cx.emit(x);
                let n = cx.length(arr);
                let c = elem_count(cx, elem, x)?;
                Ok(cx.mul_i(n, c))
            }
            _ => Err(cx.internal(format!("counting the reals of {}", show_ty(ty)))),
        }
    })
}

/// The number of reals in one element of the array `x : [n]elem`.
fn elem_count(cx: &mut Builder, elem: &Ty, x: &Atom) -> Res<syntax::ExprId> {
    if let Some(c) = static_count(elem) {
        return Ok(cx.int(c));
    }
    // if length x == 0 then 0 else count x[0]
    let arr = cx.emit(x);
    let n = cx.length(arr);
    let zero = cx.int(0);
    let empty = cx.prim(Prim::Eq, vec![n, zero], Ty::Bool);
    let z = cx.int(0);
    let arr = cx.emit(x);
    let first = cx.int(0);
    let x0 = cx.index(arr, first)?;
    let c = cx.bind("x", x0, |cx, x0| count(cx, elem, &x0))?;
    cx.if_(empty, z, c)
}

/// `build k (fun l -> if l == at then 1.0 else 0.0)`, k the length of
/// `zeros`.
fn onehot(cx: &mut Builder, zeros: &Atom, at: &Atom) -> Res<syntax::ExprId> {
    let z = cx.emit(zeros);
    let k = cx.length(z);
    cx.build(k, Size::Dyn, |cx, l| {
        let ll = cx.emit(&l);
        let aa = cx.emit(at);
        let here = cx.prim(Prim::Eq, vec![ll, aa], Ty::Bool);
        let one = cx.real(1.0);
        let zero = cx.real(0.0);
        cx.if_(here, one, zero)
    })
}

/// The vectorised dual of `x : ty` whose reals, numbered from `off`, carry
/// the unit tangents `e_off, e_off+1, ...` of length k.
pub(crate) fn seed(
    cx: &mut Builder,
    ty: &Ty,
    x: &Atom,
    off: &Atom,
    zeros: &Atom,
) -> Res<syntax::ExprId> {
    numbered(
        cx,
        ty,
        x,
        off,
        "seeding",
        &mut |cx, leaf, x, at| match leaf {
            Leaf::Real => {
                let p = cx.emit(x);
                let t = onehot(cx, zeros, at)?;
                cx.tuple(vec![p, t])
            }
            Leaf::Int | Leaf::Bool => Ok(cx.emit(x)),
        },
    )
}

/// The value of type `ty` (shaped like `x`) whose reals are read from the
/// k-array `t`, numbered from `off` as in [`seed`]: the gradient with
/// respect to `x` when `t` is the tangent of a real result.
pub(crate) fn gather(
    cx: &mut Builder,
    ty: &Ty,
    x: &Atom,
    t: &Atom,
    off: &Atom,
) -> Res<syntax::ExprId> {
    numbered(
        cx,
        ty,
        x,
        off,
        "a gradient of",
        &mut |cx, leaf, _, at| match leaf {
            Leaf::Real => {
                let arr = cx.emit(t);
                let at = cx.emit(at);
                cx.index(arr, at)
            }
            Leaf::Int => Ok(cx.int(0)),
            Leaf::Bool => Ok(cx.add(syntax::Expr::Bool(false), Ty::Bool)),
        },
    )
}

/// The ground leaves a [`numbered`] walk stops at.
enum Leaf {
    Real,
    Int,
    Bool,
}

/// What [`numbered`] puts at a leaf: given the leaf's kind, its value and
/// the number of its (first) real.
type LeafFn<'a> = &'a mut dyn FnMut(&mut Builder, Leaf, &Atom, &Atom) -> Res<syntax::ExprId>;

/// A value shaped like `x : ty` with `leaf` applied at every ground leaf,
/// the reals numbered from `off` in order (tuples left to right, arrays by
/// index, `count` reals per element) — the flat numbering shared by
/// [`seed`] and [`gather`]. `what` names the walk in internal errors.
fn numbered(
    cx: &mut Builder,
    ty: &Ty,
    x: &Atom,
    off: &Atom,
    what: &str,
    leaf: LeafFn<'_>,
) -> Res<syntax::ExprId> {
    stack::guard(|| match ty {
        Ty::Real => leaf(cx, Leaf::Real, x, off),
        Ty::Int => leaf(cx, Leaf::Int, x, off),
        Ty::Bool => leaf(cx, Leaf::Bool, x, off),
        Ty::Tuple(items) => {
            let whole = cx.emit(x);
            cx.bind_tuple("x", whole, |cx, atoms| {
                let mut binds = Vec::new();
                let mut at = off.clone();
                let mut out = Vec::with_capacity(items.len());
                for (t, a) in items.iter().zip(&atoms) {
                    out.push(numbered(cx, t, a, &at, what, leaf)?);
                    let c = count(cx, t, a)?;
                    let here = cx.emit(&at);
                    let next = cx.add_i(here, c);
                    at = let_atom(cx, &mut binds, "o", next)?;
                }
                let res = cx.tuple(out)?;
                cx.wrap(binds, res)
            })
        }
        Ty::Array(size, elem) => {
            let mut binds = Vec::new();
            let c = elem_count(cx, elem, x)?;
            let c = let_atom(cx, &mut binds, "c", c)?;
            let arr = cx.emit(x);
            let n = cx.length(arr);
            let res = cx.build(n, size.clone(), |cx, i| {
                let arr = cx.emit(x);
                let ii = cx.emit(&i);
                let xi = cx.index(arr, ii)?;
                cx.bind("x", xi, |cx, xi| {
                    let mut binds = Vec::new();
                    let at = elem_offset(cx, off, &i, &c);
                    let at = let_atom(cx, &mut binds, "o", at)?;
                    let res = numbered(cx, elem, &xi, &at, what, leaf)?;
                    cx.wrap(binds, res)
                })
            })?;
            cx.wrap(binds, res)
        }
        Ty::Func(..) => Err(cx.internal(format!("{what} a value of type {}", show_ty(ty)))),
    })
}

/// `off + i * c`.
fn elem_offset(cx: &mut Builder, off: &Atom, i: &Atom, c: &Atom) -> syntax::ExprId {
    let ii = cx.emit(i);
    let cc = cx.emit(c);
    let prod = cx.mul_i(ii, cc);
    let o = cx.emit(off);
    cx.add_i(o, prod)
}

/// A path from the root of a value to the part being built.
pub(crate) type Access<'a> = &'a dyn Fn(&mut Builder, syntax::ExprId) -> Res<syntax::ExprId>;

/// `cols` (shaped like `t_ty`, each real replaced by a `u_ty`) holds, for
/// each real of the input, the output's tangent; the result (shaped like
/// `u_ty`, each real replaced by a `t_ty`) holds
/// for each real of the output its gradient with respect to the input. `v`
/// is the output value (for the lengths of its arrays); `at` picks, from an
/// output-shaped value, the part at the current position.
pub(crate) fn transpose(
    cx: &mut Builder,
    u_ty: &Ty,
    t_ty: &Ty,
    v: &Atom,
    cols: &Atom,
    at: Access<'_>,
) -> Res<syntax::ExprId> {
    stack::guard(|| match u_ty {
        Ty::Real => {
            let c = cx.emit(cols);
            rebuild(cx, t_ty, c, at)
        }
        Ty::Tuple(items) => {
            let whole = cx.emit(v);
            cx.bind_tuple("y", whole, |cx, atoms| {
                let mut out = Vec::with_capacity(items.len());
                for (i, (ui, vi)) in items.iter().zip(&atoms).enumerate() {
                    let here = |cx: &mut Builder, u: syntax::ExprId| {
                        let inner = at(cx, u)?;
                        cx.proj(inner, i as u32 + 1)
                    };
                    out.push(transpose(cx, ui, t_ty, vi, cols, &here)?);
                }
                cx.tuple(out)
            })
        }
        Ty::Array(size, elem) => {
            let arr = cx.emit(v);
            let n = cx.length(arr);
            cx.build(n, size.clone(), |cx, i| {
                let arr = cx.emit(v);
                let ii = cx.emit(&i);
                let vi = cx.index(arr, ii)?;
                cx.bind("y", vi, |cx, vi| {
                    let here = |cx: &mut Builder, u: syntax::ExprId| {
                        let inner = at(cx, u)?;
                        let ii = cx.emit(&i);
                        cx.index(inner, ii)
                    };
                    transpose(cx, elem, t_ty, &vi, cols, &here)
                })
            })
        }
        Ty::Int => Ok(cx.int(0)),
        Ty::Bool => Ok(cx.add(syntax::Expr::Bool(false), Ty::Bool)),
        Ty::Func(..) => {
            Err(cx.internal(format!("a Jacobian of an output of type {}", show_ty(u_ty))))
        }
    })
}

/// The value of type `t_ty` obtained from `c` (shaped like `t_ty` with an
/// `L` in place of each real) by
/// applying `leaf` at every `L` slot (the `Int` and `Bool` slots become
/// `0` and `false`).
pub(crate) fn rebuild(
    cx: &mut Builder,
    t_ty: &Ty,
    c: syntax::ExprId,
    leaf: Access<'_>,
) -> Res<syntax::ExprId> {
    stack::guard(|| match t_ty {
        Ty::Real => leaf(cx, c),
        Ty::Int => Ok(cx.int(0)),
        Ty::Bool => Ok(cx.add(syntax::Expr::Bool(false), Ty::Bool)),
        Ty::Tuple(items) => cx.bind_tuple("c", c, |cx, atoms| {
            let mut out = Vec::with_capacity(items.len());
            for (t, a) in items.iter().zip(&atoms) {
                let v = cx.emit(a);
                out.push(rebuild(cx, t, v, leaf)?);
            }
            cx.tuple(out)
        }),
        Ty::Array(_, elem) => cx.map(c, "c", |cx, a| {
            let v = cx.emit(&a);
            rebuild(cx, elem, v, leaf)
        }),
        Ty::Func(..) => Err(cx.internal(format!("a Jacobian of type {}", show_ty(t_ty)))),
    })
}
