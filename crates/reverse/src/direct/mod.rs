//! The direct reverse-mode macro of seeds/000 Figure 5: a first-order Source
//! definition in core form → its gradient program (Target, core form),
//! without going through UNF (the top arrow of Figure 1).
//!
//! `D^ρ_{Γ;Y}(e)` returns a pair: the primal value of `e` and a
//! continuation `Γ × A → ρ` that, given the cotangent X of the context and
//! the cotangent z of `e`'s result, adds what `e` contributes into X and
//! hands the result to Y (`Γ → ρ`). Each clause below is the clause of
//! Figure 5 of the same construct, with the notations of Figure 4 (module
//! [`ground`]). The gradient is `π2 D^ρ_{Γ;Id}(e)(0_Γ, 1)`, returned with the
//! value as `(value, g_1, ..., g_k)` by one definition `<entry>_grad` with
//! the entry's parameters: the calling convention of the UNF path.
//!
//! Continuations are meta-level (Rust `FnOnce` closures) rather than Target
//! lambdas: the macro performs the partial evaluation of Section 5.1 (the
//! beta-reduction of every continuation, each used exactly once, which
//! `FnOnce` enforces) while it writes the program. The context's cotangent
//! X is one map from the names in scope to symbolic cotangents, updated at
//! one position by each clause (Example 3.1's `fun (X, z) -> Y (X +^ [i]z)`),
//! so the output is a straight-line program linear in the size of the input
//! rather than the lambda-heavy program of Example 3.1, whose every
//! continuation's type spells out the whole context. Within that output,
//! the forward pass comes first (every binder renamed fresh), then the
//! backward pass, in the order the continuations run.
//!
//! Beyond the core of Section 3, as in the UNF path: k-ary tuples and tuple
//! patterns; `map` with one array (Fig. 4 defines it as `map2` of the same
//! array twice, which would compute it twice); free variables of any ground
//! type in the functions of `map` and `map2`; and arrays of any ground type
//! in `map` and `map2`. Section 7.1 (Fig. 13): the function of `reduce` may
//! have free variables and its initial value may depend on the parameters.
//! Appendix A.3 (Fig. 16): `foldl` with a real accumulator. Section 7.2:
//! conditionals (`cond.rs`). An entry without parameters gets a gradient
//! program returning its value alone (docs/direct.md).
//!
//! Invariants: the output is typed by `syntax::infer`, compacted, and passes
//! `syntax::verify` (a failure is [`Error::Internal`]); every binder of the
//! output is fresh; no recursion is deeper than the program, and every
//! recursion is under `stack::guard`.

mod array;
mod cond;
mod emit;
mod ground;
mod rules;

use crate::{Config, Error};
use emit::{Atom, Emit};
use ground::{Cot, components, is_op1, is_op2, materialize, partials, plus, times};
use std::collections::HashMap;
use syntax::stack::guard;
use syntax::{Def, Expr, ExprId, Module, Name, Pat, Prim, Span, Ty};

/// Source names in scope → the names of the output that hold them.
type Env = rpds::HashTrieMap<Name, Name>;

/// The cotangent X of a context: absent names are `0`.
type Cots = HashMap<Name, Cot>;

/// A continuation `Γ → ρ` (the paper's Y).
type Y = Box<dyn FnOnce(&mut Emit, Cots) -> Cots>;

/// A continuation `Γ × A → ρ`, the second half of `D^ρ_{Γ;Y}(e)`.
type K = Box<dyn FnOnce(&mut Emit, Cots, Cot) -> Cots>;

/// Runs a continuation `Γ → ρ`.
fn call_y(y: Y, b: &mut Emit, x: Cots) -> Cots {
    guard(move || y(b, x))
}

/// Runs a continuation `Γ × A → ρ`.
fn call_k(k: K, b: &mut Emit, x: Cots, z: Cot) -> Cots {
    guard(move || k(b, x, z))
}

/// `X +^ [pos(x)] z`: adds `z` into the slot of `x`.
fn add_into(b: &mut Emit, x: &mut Cots, name: &Name, z: Cot) {
    if z.is_zero() {
        return;
    }
    let ty = b
        .slot_ty
        .get(name)
        .cloned()
        .expect("invariant: every name in scope has a slot type");
    let old = x.remove(name).unwrap_or(Cot::Zero);
    let new = plus(b, &ty, old, z);
    x.insert(name.clone(), new);
}

/// The continuation for the context extended with `t`: passes the slot of
/// `t` as the cotangent `k` expects.
fn pop(t: Name, k: K) -> Y {
    Box::new(move |b, mut x| {
        let s = x.remove(&t).unwrap_or(Cot::Zero);
        call_k(k, b, x, s)
    })
}

/// The direct reverse-mode macro (Figure 5): the gradient program of the
/// definition `entry` of the core-form module `m`, with respect to the
/// parameters `cfg.wrt` (all when `None`).
///
/// The output has one definition `<entry>_grad` with `entry`'s parameters,
/// returning `(value, g_1, ..., g_k)`. Constructs outside the language the
/// macro covers are refused with `unf::Error::Unsupported` (inside
/// [`Error::Unf`]) naming the construct and its span.
pub fn reverse_direct(m: &Module, entry: &Def, cfg: &Config) -> Result<Module, Error> {
    syntax::check_first_order(m, entry).map_err(|source| Error::Unf {
        source: unf::Error::Source { source },
    })?;
    if !m.is_typed() {
        return Err(Error::Unf {
            source: unf::Error::Shape {
                span: entry.name_span,
                message: "the source module is not typed (core form expected)".to_string(),
            },
        });
    }
    let wrt = crate::wrt_positions(entry, cfg)?;
    let ret = m.ty(entry.body).cloned().unwrap_or(Ty::Tuple(Vec::new()));
    if ret != Ty::Real {
        return Err(Error::NotReal {
            span: entry.name_span,
            entry: entry.name.to_string(),
            ty: syntax::print::ty(&ret),
        });
    }
    let mut b = Emit::new(m);
    b.span = entry.name_span;
    let mut env = Env::new();
    for p in &entry.params {
        let ty = p.ty.clone().ok_or_else(|| Error::Unf {
            source: unf::Error::Shape {
                span: p.span,
                message: format!("parameter `{}` has no type", p.name),
            },
        })?;
        if !real_ground(&ty) {
            return Err(unsupported(
                p.span,
                &syntax::print::ty(&ty),
                " as the type of a parameter",
            ));
        }
        b.slot_ty.insert(p.name.clone(), ty);
        env = env.insert(p.name.clone(), p.name.clone());
    }
    let cx = Direct { m };
    cx.check(entry.body)?;
    let identity: Y = Box::new(|_, x| x);
    let (value, k) = cx.d(&mut b, entry.body, &env, identity, None);
    b.span = entry.name_span;
    let mut x = call_k(k, &mut b, Cots::new(), Cot::Val(Atom::Real(1.0)));
    let mut items = vec![b.atom(&value)];
    for &w in &wrt {
        let p = &entry.params[w as usize - 1];
        let ty = b.slot_ty[&p.name].clone();
        let g = x.remove(&p.name).unwrap_or(Cot::Zero);
        items.push(materialize(&mut b, &ty, g, &Atom::Var(p.name.clone())));
    }
    // With no parameter to differentiate, the value alone (the calling
    // convention of the UNF path: a tuple has 0 or at least 2 components).
    let result = match items.as_slice() {
        [only] => *only,
        _ => b.node(Expr::Tuple(items)),
    };
    let body = b.close(result);
    let mut out = std::mem::take(&mut b.out);
    out.defs.push(Def {
        name: Name::new(format!("{}_grad", entry.name)),
        name_span: entry.name_span,
        params: entry.params.clone(),
        ret: None,
        body,
    });
    syntax::infer(&mut out).map_err(|e| internal(e.span(), e.to_string()))?;
    out.compact();
    syntax::verify(&out).map_err(|errors| {
        let first = &errors[0];
        internal(first.span, first.to_string())
    })?;
    Ok(out)
}

fn internal(span: Span, message: String) -> Error {
    Error::Internal {
        source: unf::Error::Shape {
            span,
            message: format!("reverse-direct wrote an ill-formed program: {message}"),
        },
    }
}

fn unsupported(span: Span, construct: &str, detail: &str) -> Error {
    Error::Unf {
        source: unf::Error::Unsupported {
            span,
            construct: construct.to_string(),
            detail: detail.to_string(),
        },
    }
}

/// How a node the macro refuses is named in the message.
fn describe(e: &Expr) -> String {
    match e {
        Expr::Prim { op, .. } => op.symbol().to_string(),
        Expr::Var(n) => format!("the variable `{n}`"),
        Expr::Let { .. } => "let".to_string(),
        Expr::If { .. } => "if".to_string(),
        Expr::Int(_) => "Int".to_string(),
        Expr::Bool(_) => "Bool".to_string(),
        _ => "this expression".to_string(),
    }
}

/// Ground types over the reals: `R`, arrays and tuples of them.
fn real_ground(ty: &Ty) -> bool {
    match ty {
        Ty::Real => true,
        Ty::Array(_, e) => real_ground(e),
        Ty::Tuple(ts) => ts.iter().all(real_ground),
        _ => false,
    }
}

struct Direct<'a> {
    m: &'a Module,
}

impl Direct<'_> {
    fn ty(&self, e: ExprId) -> Ty {
        self.m
            .ty(e)
            .cloned()
            .expect("invariant: a core-form module is typed")
    }

    /// Refuses, before anything is written, every construct the macro has
    /// no clause for, so that [`Direct::d`] cannot fail.
    fn check(&self, e: ExprId) -> Result<(), Error> {
        guard(|| {
            let span = self.m.span(e);
            let expr = self.m.expr(e);
            let ty = self.ty(e);
            let construct = match expr {
                Expr::Var(_) | Expr::Real(_) | Expr::Let { .. } | Expr::Tuple(_) => None,
                Expr::Proj { .. } => None,
                Expr::Prim { op, .. } if is_op1(*op) || is_op2(*op) => None,
                Expr::Prim {
                    op: op @ (Prim::Map | Prim::Map2 | Prim::Reduce | Prim::Foldl),
                    args,
                } => {
                    let arity = if *op == Prim::Map { 1 } else { 2 };
                    match self.m.expr(args[0]) {
                        Expr::Lambda { params, body } if params.len() == arity => {
                            for p in params {
                                match &p.ty {
                                    Some(t) if real_ground(t) => {}
                                    _ => {
                                        return Err(unsupported(
                                            p.span,
                                            op.symbol(),
                                            " over an array whose elements are not built from reals",
                                        ));
                                    }
                                }
                            }
                            if matches!(op, Prim::Reduce | Prim::Foldl)
                                && self.ty(args[1]) != Ty::Real
                            {
                                return Err(unsupported(
                                    span,
                                    op.symbol(),
                                    " with an accumulator that is not a real",
                                ));
                            }
                            self.check(*body)?;
                            for &a in &args[1..] {
                                self.check(a)?;
                            }
                            return Ok(());
                        }
                        _ => {
                            return Err(unsupported(
                                self.m.span(args[0]),
                                op.symbol(),
                                " whose function is not a lambda",
                            ));
                        }
                    }
                }
                Expr::Prim {
                    op: Prim::WithRules,
                    ..
                } => {
                    let point = self.check_with_rules(e)?;
                    if !real_ground(&ty) || !real_ground(&self.ty(point)) {
                        return Err(unsupported(
                            span,
                            "with_rules",
                            " of values not built from reals",
                        ));
                    }
                    return self.check(point);
                }
                Expr::If {
                    cond,
                    then_branch,
                    else_branch,
                } => {
                    if let Some(off) = self.cond_offender(*cond) {
                        return Err(unsupported(
                            self.m.span(off),
                            &describe(self.m.expr(off)),
                            " in the condition of an `if` (comparisons of reals, `&&`, `||`, `not`)",
                        ));
                    }
                    if !real_ground(&ty) {
                        return Err(unsupported(
                            span,
                            &syntax::print::ty(&ty),
                            " as the type of a value",
                        ));
                    }
                    let mut operands = Vec::new();
                    self.cond_operands(*cond, &mut operands);
                    for c in operands.into_iter().chain([*then_branch, *else_branch]) {
                        self.check(c)?;
                    }
                    return Ok(());
                }
                Expr::Prim { op, .. } => Some(op.symbol().to_string()),
                Expr::Int(_) => Some("Int".to_string()),
                Expr::Bool(_) => Some("Bool".to_string()),
                Expr::Lambda { .. } => Some("fun".to_string()),
                Expr::App { .. } => Some("application".to_string()),
                Expr::Array(_) | Expr::Reals(_) => Some("array literal".to_string()),
                Expr::Index { .. } => Some("indexing".to_string()),
                Expr::Section(p) => Some(format!("({p})")),
            };
            if let Some(c) = construct {
                return Err(unsupported(span, &c, ""));
            }
            if !real_ground(&ty) {
                return Err(unsupported(
                    span,
                    &syntax::print::ty(&ty),
                    " as the type of a value",
                ));
            }
            for c in expr.children() {
                self.check(c)?;
            }
            Ok(())
        })
    }

    /// `D^ρ_{Γ;Y}(e)`: emits the forward pass of `e` into the current block
    /// and returns its value and its continuation. `hint` is the name the
    /// value should be bound to, if `e` computes something.
    fn d(&self, b: &mut Emit, e: ExprId, env: &Env, y: Y, hint: Option<Name>) -> (Atom, K) {
        guard(|| {
            b.span = self.m.span(e);
            match self.m.expr(e) {
                // D(c) = <c, fun (X, z) -> Y(X)>
                Expr::Real(c) => {
                    let k: K = Box::new(move |b, x, _z| call_y(y, b, x));
                    (Atom::Real(*c), k)
                }
                // D(x) = <x, fun (X, z) -> Y(X +^ [pos(x)] z)>
                Expr::Var(n) => {
                    let out = env
                        .get(n)
                        .cloned()
                        .expect("invariant: core-form programs have no free variables");
                    let k: K = Box::new({
                        let out = out.clone();
                        move |b, mut x, z| {
                            add_into(b, &mut x, &out, z);
                            call_y(y, b, x)
                        }
                    });
                    (Atom::Var(out), k)
                }
                Expr::Let {
                    pat, value, body, ..
                } => self.d_let(b, pat, *value, *body, env, y, hint),
                Expr::Tuple(items) => self.d_tuple(b, e, items, env, y, hint),
                // D(π_i e) = let x, Y1 = D(e) in <π_i x, fun (X, z) -> Y1(X, [i]z)>
                Expr::Proj { tuple, index } => {
                    let k_items = ground::tuple_items(&self.ty(*tuple)).len();
                    let index = *index;
                    let (a, k1) = self.d(b, *tuple, env, y, None);
                    b.span = self.m.span(e);
                    let t = b.atom(&a);
                    let p = b.proj(t, index);
                    let r = b.bind_hint(hint, "c", p);
                    let k: K = Box::new(move |b, x, z| {
                        call_k(k1, b, x, Cot::one_hot(k_items, index as usize, z))
                    });
                    (r, k)
                }
                Expr::Prim { op, args } if args.len() == 1 && is_op1(*op) => {
                    self.d_op1(b, e, *op, args[0], env, y, hint)
                }
                Expr::Prim { op, args } if args.len() == 2 && is_op2(*op) => {
                    self.d_op2(b, e, *op, args[0], args[1], env, y, hint)
                }
                Expr::If {
                    cond,
                    then_branch,
                    else_branch,
                } => self.d_if(b, e, *cond, *then_branch, *else_branch, env, y, hint),
                Expr::Prim {
                    op: Prim::WithRules,
                    ..
                } => self.d_with_rules(b, e, env, y, hint),
                Expr::Prim { op, args } => match op {
                    Prim::Map => self.d_map(b, e, args, env, y, hint),
                    Prim::Map2 => self.d_map2(b, e, args, env, y, hint),
                    _ => self.d_reduce(b, e, *op, args, env, y, hint),
                },
                _ => unreachable!("invariant: `check` refused every other construct"),
            }
        })
    }

    /// `D(let x = e1 in e2) = let x, Y1 = D_{Γ;Y}(e1) in
    /// let y, Y2 = D_{Γ,x;Y1}(e2) in <y, fun (X, z) -> Y2(X, 0, z)>`;
    /// a tuple pattern binds each component, and its continuation passes
    /// the tuple of the components' cotangents to Y1.
    #[allow(clippy::too_many_arguments)]
    fn d_let(
        &self,
        b: &mut Emit,
        pat: &Pat,
        value: ExprId,
        body: ExprId,
        env: &Env,
        y: Y,
        hint: Option<Name>,
    ) -> (Atom, K) {
        let ty = self.ty(value);
        let mut env = env.clone();
        let y1: Y = match pat {
            Pat::Var(x) => {
                let out = b.fresh(x.as_str());
                let (a, k1) = self.d(b, value, &env, y, Some(out.clone()));
                if a != Atom::Var(out.clone()) {
                    let e = b.atom(&a);
                    b.bind_as(out.clone(), e);
                }
                b.slot_ty.insert(out.clone(), ty);
                env = env.insert(x.clone(), out.clone());
                pop(out, k1)
            }
            Pat::Tuple(xs) => {
                let (a, k1) = self.d(b, value, &env, y, None);
                let mut outs = Vec::with_capacity(xs.len());
                for (i, (x, t)) in xs.iter().zip(ground::tuple_items(&ty)).enumerate() {
                    let out = b.fresh(x.as_str());
                    let tuple = b.atom(&a);
                    let e = b.proj(tuple, i as u32 + 1);
                    b.bind_as(out.clone(), e);
                    b.slot_ty.insert(out.clone(), t.clone());
                    env = env.insert(x.clone(), out.clone());
                    outs.push(out);
                }
                Box::new(move |b, mut x| {
                    let cs = outs
                        .iter()
                        .map(|n| x.remove(n).unwrap_or(Cot::Zero))
                        .collect();
                    call_k(k1, b, x, Cot::Tuple(cs))
                })
            }
        };
        // The slot of x starts at 0 (absent) when Y2 is called.
        self.d(b, body, &env, y1, hint)
    }

    /// `D(<e1, ..., ek>)`: each component in the context extended by the
    /// previous ones; the continuation splits z into the temporaries' slots
    /// (`Y_k(X, π1 z, ..., πk z)`).
    fn d_tuple(
        &self,
        b: &mut Emit,
        e: ExprId,
        items: &[ExprId],
        env: &Env,
        y: Y,
        hint: Option<Name>,
    ) -> (Atom, K) {
        let ty = self.ty(e);
        let mut cur = y;
        let mut temps = Vec::new();
        let mut atoms = Vec::new();
        let mut last: Option<K> = None;
        for (i, &item) in items.iter().enumerate() {
            let (a, k) = self.d(b, item, env, cur, None);
            atoms.push(a);
            if i + 1 < items.len() {
                let t = b.fresh("t");
                b.slot_ty.insert(t.clone(), self.ty(item));
                temps.push(t.clone());
                cur = pop(t, k);
            } else {
                last = Some(k);
                cur = Box::new(|_, x| x);
            }
        }
        b.span = self.m.span(e);
        let nodes = atoms.iter().map(|a| b.atom(a)).collect();
        let tuple = b.node(Expr::Tuple(nodes));
        let r = b.bind_hint(hint, "t", tuple);
        let Some(last) = last else {
            // The unit value: a constant.
            return (r, Box::new(move |b, x, _z| call_y(cur, b, x)));
        };
        let k: K = Box::new(move |b, mut x, z| {
            let mut zs = components(b, &ty, z);
            let z_last = zs.pop().unwrap_or(Cot::Zero);
            for (t, zi) in temps.into_iter().zip(zs) {
                if !zi.is_zero() {
                    x.insert(t, zi);
                }
            }
            call_k(last, b, x, z_last)
        });
        (r, k)
    }

    /// `D(op1 e) = let x, Y1 = D(e) in <op1 x, fun (X, z) -> Y1(X, ∂op1(x) * z)>`.
    #[allow(clippy::too_many_arguments)]
    fn d_op1(
        &self,
        b: &mut Emit,
        e: ExprId,
        op: Prim,
        arg: ExprId,
        env: &Env,
        y: Y,
        hint: Option<Name>,
    ) -> (Atom, K) {
        let (a, k1) = self.d(b, arg, env, y, None);
        let span = self.m.span(e);
        b.span = span;
        let ae = b.atom(&a);
        let v = b.un(op, ae);
        let r = b.bind_hint(hint, "v", v);
        let k: K = Box::new({
            let r = r.clone();
            move |b, x, z| {
                let Cot::Val(z) = z else {
                    return call_k(k1, b, x, Cot::Zero);
                };
                b.span = span;
                let Some(&d) = partials(b, op, std::slice::from_ref(&a), &r).first() else {
                    // Unreachable: `is_op1` admits only operators with a partial.
                    return call_k(k1, b, x, Cot::Zero);
                };
                let c = times(b, d, &z);
                call_k(k1, b, x, Cot::Val(c))
            }
        });
        (r, k)
    }

    /// `D(e1 op2 e2) = let x1, Y1 = D_{Γ;Y}(e1) in let x2, Y2 = D_{Γ,x1;Y1}(e2) in
    /// <x1 op2 x2, fun (X, z) -> Y2(X, ∂1 op2(x1, x2) * z, ∂2 op2(x1, x2) * z)>`.
    #[allow(clippy::too_many_arguments)]
    fn d_op2(
        &self,
        b: &mut Emit,
        e: ExprId,
        op: Prim,
        l: ExprId,
        r: ExprId,
        env: &Env,
        y: Y,
        hint: Option<Name>,
    ) -> (Atom, K) {
        let (a1, k1) = self.d(b, l, env, y, None);
        let t = b.fresh("t");
        b.slot_ty.insert(t.clone(), Ty::Real);
        let (a2, k2) = self.d(b, r, env, pop(t.clone(), k1), None);
        let span = self.m.span(e);
        b.span = span;
        let (e1, e2) = (b.atom(&a1), b.atom(&a2));
        let v = b.bin(op, e1, e2);
        let res = b.bind_hint(hint, "v", v);
        let k: K = Box::new({
            let r = res.clone();
            move |b, mut x, z| {
                let Cot::Val(z) = z else {
                    return call_k(k2, b, x, Cot::Zero);
                };
                b.span = span;
                let [d1, d2] = partials(b, op, &[a1.clone(), a2.clone()], &r)[..] else {
                    // Unreachable: `is_op2` admits only operators with two partials.
                    return call_k(k2, b, x, Cot::Zero);
                };
                let c1 = times(b, d1, &z);
                let c2 = times(b, d2, &z);
                x.insert(t, Cot::Val(c1));
                call_k(k2, b, x, Cot::Val(c2))
            }
        });
        (res, k)
    }
}
