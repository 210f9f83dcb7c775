//! The macro D (seeds/002 Definition 182.6; seeds/001 Figure 6).
//!
//! `Macro::apply` maps a term `Γ ⊢ t : τ` of the arena to a new term
//! `D Γ ⊢ D t : D τ` appended to the same arena. D is the identity on
//! variables and commutes with every constructor (let, tuples, projections,
//! conditionals, lambdas, application, array literals, indexing and every
//! array builtin: dF~'s D-Build, D-IFold, D-Get, D-Length and their
//! siblings), except at the real-valued scalar operations, where the
//! operation clause
//!
//! ```text
//! D (op (t1, ..., tn)) = let (x1, dx1) = D t1 in ... let (xn, dxn) = D tn in
//!                        (op (x1, ..., xn), Σ_i ∂_i op (x1, ..., xn) * dx_i)
//! ```
//!
//! takes the partials from `crate::table`. Comparisons compare primal
//! values, so a conditional takes the branch the primal program takes, and
//! `Int`/`Bool` values are their own duals. No other node inspects a tangent
//! (the invariant of Exercise 182.8).
//!
//! Invariants: every binder of the transformed term is renamed to a fresh
//! name (so D can be applied to the same term, or a term can be transformed
//! in two places, without breaking binder uniqueness); the input nodes are
//! only read, never made children of new nodes.
//!
//! Free variables of the transformed term that are not bound inside it get
//! a dual on demand, placed in `pending` for the caller to bind around the
//! result: ground ones are lifted with a zero tangent (they are constants
//! with respect to the differentiation, as in dF~'s `deriv`); function-typed
//! ones are re-derived from the `let` that bound them (`Scope`).

use std::collections::HashMap;

use syntax::{Expr, ExprId, Name, Param, Pat, Prim, Size, Ty, stack};

use crate::Error;
use crate::build::{Atom, Builder, Res};
use crate::shape;
use crate::table::{self, Partial};
use syntax::derivatives::{self, Sig};

/// How tangents are represented.
#[derive(Debug, Clone, PartialEq)]
pub(crate) enum Rep {
    /// One direction at a time: `D R = (R, R)` (Definition 182.6).
    Scalar,
    /// k directions at once: `D R = (R, [k]R)`, the `D^(k,1)` of
    /// Theorem 182.14. `zeros` names the shared zero tangent
    /// `build k (fun _ -> 0.0)`, bound by the caller around everything.
    Vector {
        /// A variable of type `[_]R` holding k zeros.
        zeros: Atom,
    },
}

impl Rep {
    /// The tangent type of `R`.
    pub(crate) fn tangent_real(&self) -> Ty {
        match self {
            Rep::Scalar => Ty::Real,
            Rep::Vector { .. } => Ty::array(Size::Dyn, Ty::Real),
        }
    }

    /// `D τ`.
    pub(crate) fn dual_ty(&self, ty: &Ty) -> Ty {
        match ty {
            Ty::Real => Ty::Tuple(vec![Ty::Real, self.tangent_real()]),
            Ty::Int | Ty::Bool => ty.clone(),
            Ty::Array(size, elem) => Ty::array(size.clone(), self.dual_ty(elem)),
            Ty::Tuple(items) => Ty::Tuple(items.iter().map(|t| self.dual_ty(t)).collect()),
            Ty::Func(params, ret) => Ty::Func(
                params.iter().map(|t| self.dual_ty(t)).collect(),
                Box::new(self.dual_ty(ret)),
            ),
        }
    }

    /// A new node holding the zero tangent of `R`.
    pub(crate) fn zero(&self, cx: &mut Builder) -> ExprId {
        match self {
            Rep::Scalar => cx.real(0.0),
            Rep::Vector { zeros } => cx.emit(zeros),
        }
    }

    /// Whether the atom is statically the zero tangent.
    pub(crate) fn is_zero(&self, atom: &Atom) -> bool {
        match self {
            Rep::Scalar => atom.is_zero_real(),
            Rep::Vector { zeros } => atom == zeros,
        }
    }
}

/// A `let` in scope at a derivative construct, whose value can be
/// transformed again when the construct's function uses one of its names.
#[derive(Debug, Clone)]
pub(crate) struct Binding {
    /// The pattern as written.
    pub(crate) pat: Pat,
    /// The bound value (a node of the arena).
    pub(crate) value: ExprId,
}

/// Function-typed `let` bindings in scope, by bound name.
pub(crate) type Scope = HashMap<Name, Binding>;

/// One application of D.
pub(crate) struct Macro<'a> {
    /// The arena.
    pub(crate) cx: &'a mut Builder,
    pub(crate) rep: Rep,
    scope: &'a Scope,
    /// Primal binder → its dual's name.
    env: HashMap<Name, Name>,
    /// Duals of free variables, to be bound around the result, in order.
    pending: Vec<(Pat, ExprId)>,
    /// The deliberately broken variant of Exercise 182.8 (tests only).
    mutant: bool,
}

impl<'a> Macro<'a> {
    /// A macro over `cx` with the given tangent representation.
    pub(crate) fn new(cx: &'a mut Builder, rep: Rep, scope: &'a Scope, mutant: bool) -> Macro<'a> {
        Macro {
            cx,
            rep,
            scope,
            env: HashMap::new(),
            pending: Vec::new(),
            mutant,
        }
    }

    /// Declares that the primal variable `primal` has its dual in `dual`.
    pub(crate) fn bind_var(&mut self, primal: Name, dual: Name) {
        self.env.insert(primal, dual);
    }

    /// The bindings of the duals of free variables created so far, which
    /// the caller must wrap around everything it built with this macro.
    pub(crate) fn take_pending(&mut self) -> Vec<(Pat, ExprId)> {
        std::mem::take(&mut self.pending)
    }

    /// `D e`.
    pub(crate) fn apply(&mut self, e: ExprId) -> Res<ExprId> {
        stack::guard(|| {
            let saved = self.cx.span;
            self.cx.span = self.cx.out.span(e);
            let res = self.apply_node(e);
            self.cx.span = saved;
            res
        })
    }

    fn apply_node(&mut self, e: ExprId) -> Res<ExprId> {
        let ty = self.cx.ty(e)?;
        let dty = self.rep.dual_ty(&ty);
        match self.cx.node(e) {
            Expr::Var(x) => {
                let name = self.lookup(&x, &ty)?;
                Ok(self.cx.var(&name, dty))
            }
            Expr::Real(c) => {
                let p = self.cx.real(c);
                let t = self.rep.zero(self.cx);
                self.cx.tuple(vec![p, t])
            }
            Expr::Int(i) => Ok(self.cx.int(i)),
            Expr::Bool(b) => Ok(self.cx.add(Expr::Bool(b), Ty::Bool)),
            Expr::Reals(literal) => {
                let depth = literal.shape.len();
                let lit = self.cx.add(Expr::Reals(literal), ty);
                dual_reals(self.cx, &self.rep, lit, depth)
            }
            Expr::Let {
                pat,
                ty: ann,
                value,
                body,
            } => {
                let value = self.apply(value)?;
                let pat = self.rename_pat(&pat);
                let body = self.apply(body)?;
                let ty = ann.map(|t| self.rep.dual_ty(&t));
                Ok(self.cx.add(
                    Expr::Let {
                        pat,
                        ty,
                        value,
                        body,
                    },
                    dty,
                ))
            }
            Expr::Tuple(items) => {
                let items = self.apply_all(&items)?;
                Ok(self.cx.add(Expr::Tuple(items), dty))
            }
            Expr::Array(items) => {
                let items = self.apply_all(&items)?;
                Ok(self.cx.add(Expr::Array(items), dty))
            }
            Expr::Proj { tuple, index } => {
                let tuple = self.apply(tuple)?;
                Ok(self.cx.add(Expr::Proj { tuple, index }, dty))
            }
            Expr::Index { array, index } => {
                let array = self.apply(array)?;
                let index = self.apply(index)?;
                Ok(self.cx.add(Expr::Index { array, index }, dty))
            }
            Expr::If {
                cond,
                then_branch,
                else_branch,
            } => {
                // The condition is a Bool: its dual is itself, computed from
                // primal values, so the branch is the primal program's.
                let cond = self.apply(cond)?;
                let then_branch = self.apply(then_branch)?;
                let else_branch = self.apply(else_branch)?;
                Ok(self.cx.add(
                    Expr::If {
                        cond,
                        then_branch,
                        else_branch,
                    },
                    dty,
                ))
            }
            Expr::Lambda { params, body } => {
                let Ty::Func(param_tys, _) = &ty else {
                    return Err(self
                        .cx
                        .internal("a lambda whose type is not a function type"));
                };
                if param_tys.len() != params.len() {
                    return Err(self.cx.internal("a lambda whose type has another arity"));
                }
                let params = params
                    .iter()
                    .zip(param_tys)
                    .map(|(p, t)| {
                        let name = self.rename(&p.name);
                        Param {
                            name,
                            ty: Some(self.rep.dual_ty(t)),
                            span: p.span,
                        }
                    })
                    .collect();
                let body = self.apply(body)?;
                Ok(self.cx.add(Expr::Lambda { params, body }, dty))
            }
            Expr::App { func, args } => {
                let func = self.apply(func)?;
                let args = self.apply_all(&args)?;
                Ok(self.cx.add(Expr::App { func, args }, dty))
            }
            Expr::Prim {
                op: Prim::WithRules,
                ..
            } => self.with_rules(e, self.rep.clone()),
            Expr::Prim { op, args } => self.apply_prim(op, &args, &ty, dty),
            Expr::Section(op) => Err(Error::NotCore {
                span: self.cx.span,
                message: format!("operator section `({op})` was not elaborated"),
            }),
        }
    }

    fn apply_all(&mut self, items: &[ExprId]) -> Res<Vec<ExprId>> {
        items.iter().map(|&i| self.apply(i)).collect()
    }

    fn apply_prim(&mut self, op: Prim, args: &[ExprId], ty: &Ty, dty: Ty) -> Res<ExprId> {
        if op.is_derivative_construct() {
            return Err(self.cx.internal(format!(
                "derivative construct `{op}` reached the macro unexpanded"
            )));
        }
        if table::has_entry(op) && *ty == Ty::Real {
            return self.operation(op, args);
        }
        let sig = derivatives::sig(op);
        if sig == Some(Sig::Real) && !table::has_entry(op) {
            // `trigamma`, the end of `lgamma`'s chain (docs/derivatives.md).
            return Err(Error::NoDerivative {
                span: self.cx.span,
                op,
            });
        }
        if sig == Some(Sig::IntToReal) {
            // `real n`: an Int has no tangent, the result's is zero.
            let args = self.apply_all(args)?;
            let p = self.cx.prim_r(op, args);
            let t = self.rep.zero(self.cx);
            return self.cx.tuple(vec![p, t]);
        }
        if sig == Some(Sig::RealToInt)
            || matches!(
                op,
                Prim::Lt | Prim::Le | Prim::Gt | Prim::Ge | Prim::Eq | Prim::Ne
            )
        {
            // Compare (or round) primal values.
            let mut out = Vec::with_capacity(args.len());
            for &a in args {
                let aty = self.cx.ty(a)?;
                let da = self.apply(a)?;
                out.push(shape::primal(self.cx, &self.rep, &aty, da)?);
            }
            return Ok(self.cx.prim(op, out, dty));
        }
        if let Some(e) = self.hist(op, args, ty)? {
            return Ok(e);
        }
        // Everything else commutes with D: Int arithmetic, logic, and the
        // array builtins, whose function arguments become dual functions.
        let args = self.apply_all(args)?;
        Ok(self.cx.prim(op, args, dty))
    }

    /// The operation clause of Definition 182.6.
    fn operation(&mut self, op: Prim, args: &[ExprId]) -> Res<ExprId> {
        let mut binds: Vec<(Pat, ExprId)> = Vec::new();
        let mut xs = Vec::with_capacity(args.len());
        let mut dxs = Vec::with_capacity(args.len());
        for &a in args {
            let base = match self.cx.out.expr(a) {
                Expr::Var(n) => n.as_str().to_string(),
                _ => "x".to_string(),
            };
            let da = self.apply(a)?;
            let (x, dx) = self.split(da, &base, &mut binds)?;
            xs.push(x);
            dxs.push(dx);
        }
        let primal_args: Vec<ExprId> = xs.iter().map(|x| self.cx.emit(x)).collect();
        let primal = self.cx.prim_r(op, primal_args);
        let (r, primal) = if table::uses_result(op) {
            let name = self.cx.fresh("r");
            binds.push((Pat::Var(name.clone()), primal));
            let r = Atom::Var(name, Ty::Real);
            let again = self.cx.emit(&r);
            (r, again)
        } else {
            (Atom::Real(f64::NAN), primal)
        };
        let partials = table::partials(self.cx, op, &xs, &r)?;
        let mut summands: Vec<(Partial, Atom)> = Vec::new();
        for (i, (p, dx)) in partials.into_iter().zip(dxs).enumerate() {
            // See note [mutant] in lib.rs: the broken variant keeps only the
            // summand of the first argument.
            if self.mutant && i > 0 {
                continue;
            }
            if !self.rep.is_zero(&dx) {
                summands.push((p, dx));
            }
        }
        let tangent = match self.rep.clone() {
            Rep::Scalar => {
                let mut acc: Option<ExprId> = None;
                for (p, dx) in summands {
                    let dx = self.cx.emit(&dx);
                    let term = match p {
                        Partial::One => dx,
                        Partial::MinusOne => self.cx.prim_r(Prim::Neg, vec![dx]),
                        Partial::Term(t) => self.cx.mul_r(t, dx),
                    };
                    acc = Some(match acc {
                        None => term,
                        Some(a) => self.cx.prim_r(Prim::Add, vec![a, term]),
                    });
                }
                match acc {
                    Some(t) => t,
                    None => self.cx.real(0.0),
                }
            }
            Rep::Vector { zeros } => self.vector_tangent(summands, &zeros, &mut binds)?,
        };
        let pair = self.cx.tuple(vec![primal, tangent])?;
        self.cx.wrap(binds, pair)
    }

    /// `build k (fun j -> Σ_i p_i * dx_i[j])`, the partials bound outside
    /// the loop over the k directions (they do not depend on j).
    fn vector_tangent(
        &mut self,
        summands: Vec<(Partial, Atom)>,
        zeros: &Atom,
        binds: &mut Vec<(Pat, ExprId)>,
    ) -> Res<ExprId> {
        if summands.is_empty() {
            return Ok(self.cx.emit(zeros));
        }
        if let [(Partial::One, dx)] = summands.as_slice() {
            return Ok(self.cx.emit(dx));
        }
        let mut hoisted = Vec::with_capacity(summands.len());
        for (p, dx) in summands {
            let p = match p {
                Partial::Term(t) => match self.cx.as_atom(t) {
                    Some(a) => Some(a),
                    None => {
                        let name = self.cx.fresh("p");
                        binds.push((Pat::Var(name.clone()), t));
                        Some(Atom::Var(name, Ty::Real))
                    }
                },
                Partial::One => None,
                Partial::MinusOne => Some(Atom::Real(-1.0)),
            };
            hoisted.push((p, dx));
        }
        let k = self.cx.emit(zeros);
        let n = self.cx.length(k);
        self.cx.build(n, Size::Dyn, |cx, j| {
            let mut acc: Option<ExprId> = None;
            for (p, dx) in &hoisted {
                let arr = cx.emit(dx);
                let jj = cx.emit(&j);
                let e = cx.index(arr, jj)?;
                let term = match p {
                    None => e,
                    Some(p) => {
                        let p = cx.emit(p);
                        cx.mul_r(p, e)
                    }
                };
                acc = Some(match acc {
                    None => term,
                    Some(a) => cx.prim_r(Prim::Add, vec![a, term]),
                });
            }
            acc.ok_or_else(|| cx.internal("an empty sum of tangents"))
        })
    }

    /// The primal and tangent of a dual scalar, as atoms: taken apart
    /// directly when `da` is a pair of atoms, else bound by a pattern.
    fn split(
        &mut self,
        da: ExprId,
        base: &str,
        binds: &mut Vec<(Pat, ExprId)>,
    ) -> Res<(Atom, Atom)> {
        if let Expr::Tuple(items) = self.cx.out.expr(da)
            && let [p, t] = items.as_slice()
            && let (Some(p), Some(t)) = (self.cx.as_atom(*p), self.cx.as_atom(*t))
        {
            return Ok((p, t));
        }
        let x = self.cx.fresh(base);
        let dx = self.cx.fresh(&format!("d{base}"));
        binds.push((Pat::Tuple(vec![x.clone(), dx.clone()]), da));
        Ok((
            Atom::Var(x, Ty::Real),
            Atom::Var(dx, self.rep.tangent_real()),
        ))
    }

    /// A fresh dual name for a binder of the transformed term.
    fn rename(&mut self, name: &Name) -> Name {
        let fresh = self.cx.fresh(name.as_str());
        self.env.insert(name.clone(), fresh.clone());
        fresh
    }

    fn rename_pat(&mut self, pat: &Pat) -> Pat {
        match pat {
            Pat::Var(n) => Pat::Var(self.rename(n)),
            Pat::Tuple(ns) => Pat::Tuple(ns.iter().map(|n| self.rename(n)).collect()),
        }
    }

    /// The dual of variable `x` (of primal type `ty`), creating one for a
    /// free variable of the transformed term.
    fn lookup(&mut self, x: &Name, ty: &Ty) -> Res<Name> {
        if let Some(n) = self.env.get(x) {
            return Ok(n.clone());
        }
        if self.rep.dual_ty(ty) == *ty {
            // No reals inside: the variable is its own dual.
            self.env.insert(x.clone(), x.clone());
            return Ok(x.clone());
        }
        if ty.is_ground() {
            // A constant of the differentiation: zero tangent.
            let v = self.cx.var(x, ty.clone());
            let lifted = shape::lift(self.cx, &self.rep, ty, v)?;
            let name = self.cx.fresh(x.as_str());
            self.pending.push((Pat::Var(name.clone()), lifted));
            self.env.insert(x.clone(), name.clone());
            return Ok(name);
        }
        // A function (or a value holding one): transform its definition.
        let binding = match self.scope.get(x) {
            Some(b) => b.clone(),
            None => {
                return Err(Error::FunctionFreeVariable {
                    span: self.cx.span,
                    name: x.to_string(),
                });
            }
        };
        let value = self.apply(binding.value)?;
        let pat = self.rename_pat(&binding.pat);
        self.pending.push((pat, value));
        self.env.get(x).cloned().ok_or_else(|| {
            self.cx
                .internal(format!("`{x}` is not bound by its own binding"))
        })
    }
}

/// The dual of a compact literal `depth` dimensions deep: each number `c`
/// becomes `(c, 0)`, as `Expr::Real` does, by `map` over each dimension
/// (so the literal itself stays one node).
fn dual_reals(cx: &mut Builder, rep: &Rep, array: ExprId, depth: usize) -> Res<ExprId> {
    stack::guard(|| {
        if depth == 1 {
            cx.map(array, "c", |cx, c| {
                let p = cx.emit(&c);
                let t = rep.zero(cx);
                cx.tuple(vec![p, t])
            })
        } else {
            cx.map(array, "row", |cx, row| {
                let row = cx.emit(&row);
                dual_reals(cx, rep, row, depth - 1)
            })
        }
    })
}
