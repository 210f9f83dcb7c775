//! A small typed builder over the shared expression arena.
//!
//! Every node a transformation adds goes through [`Builder::add`], which records
//! its type and the current span (the span of the primal node being
//! transformed, or `Span::GENERATED`). Invariants the helpers keep:
//! - every node is used as the child of exactly one node: a value needed
//!   twice is let-bound first and referred to through an [`Atom`], which is
//!   re-emitted as a fresh node at each use;
//! - every binder is a fresh name from the module's [`NameGen`], so binders
//!   stay unique within a definition however often code is duplicated;
//! - children are added before their parents (the arena is post-order).

use syntax::ir::NameGen;
use syntax::{Expr, ExprId, Module, Name, Param, Pat, Prim, Size, Span, Ty};

use crate::Error;

/// Results of this crate.
pub(crate) type Res<T> = Result<T, Error>;

/// A value that can be used any number of times: a variable or a literal.
#[derive(Debug, Clone, PartialEq)]
pub(crate) enum Atom {
    /// A bound variable and its type.
    Var(Name, Ty),
    /// A real literal.
    Real(f64),
    /// An integer literal.
    Int(i64),
    /// A boolean literal.
    Bool(bool),
}

impl Atom {
    /// Whether this is the real literal zero.
    pub(crate) fn is_zero_real(&self) -> bool {
        matches!(self, Atom::Real(c) if *c == 0.0)
    }
}

/// The builder: the module under construction, its name supply and the
/// span new nodes inherit.
pub(crate) struct Builder {
    /// The module; new nodes are appended to its arena.
    pub(crate) m: Module,
    /// Fresh names, clashing with no name of the input.
    pub(crate) names: NameGen,
    /// The span given to new nodes.
    pub(crate) span: Span,
    /// Whether the output must stay a Source program: the derivative table
    /// then writes the Source expansions of the Target-only partials
    /// (`d1pow`, `dabs`, ...; `syntax::derivatives`) instead of the primitives,
    /// so that reverse mode can differentiate the result (construct
    /// expansion, `crate::expand`).
    pub(crate) source_only: bool,
}

impl Builder {
    /// A builder appending to (a copy of) `m`.
    pub(crate) fn new(m: Module) -> Builder {
        let names = m.name_gen();
        Builder {
            m,
            names,
            span: Span::GENERATED,
            source_only: false,
        }
    }

    /// An internal error at the current span.
    pub(crate) fn internal(&self, message: impl Into<String>) -> Error {
        Error::Internal {
            span: self.span,
            message: message.into(),
        }
    }

    /// Appends a node of the given type.
    pub(crate) fn add(&mut self, expr: Expr, ty: Ty) -> ExprId {
        let id = self.m.add(expr, self.span);
        self.m.types.push(ty);
        id
    }

    /// The type of a node.
    pub(crate) fn ty(&self, id: ExprId) -> Res<Ty> {
        self.m
            .types
            .get(id.index())
            .cloned()
            .ok_or_else(|| Error::NotCore {
                span: self
                    .m
                    .spans
                    .get(id.index())
                    .copied()
                    .unwrap_or(Span::GENERATED),
                message: format!("node {id} has no type"),
            })
    }

    /// A copy of a node.
    pub(crate) fn node(&self, id: ExprId) -> Expr {
        self.m.expr(id).clone()
    }

    /// A fresh name derived from `base`.
    pub(crate) fn fresh(&mut self, base: &str) -> Name {
        self.names.fresh(base)
    }

    /// A new node for an atom.
    pub(crate) fn emit(&mut self, atom: &Atom) -> ExprId {
        match atom {
            Atom::Var(name, ty) => self.add(Expr::Var(name.clone()), ty.clone()),
            Atom::Real(c) => self.add(Expr::Real(*c), Ty::Real),
            Atom::Int(i) => self.add(Expr::Int(*i), Ty::Int),
            Atom::Bool(b) => self.add(Expr::Bool(*b), Ty::Bool),
        }
    }

    /// The node as an atom, when it is a variable or a literal.
    pub(crate) fn as_atom(&self, id: ExprId) -> Option<Atom> {
        match self.m.expr(id) {
            Expr::Var(name) => Some(Atom::Var(
                name.clone(),
                self.m.types.get(id.index())?.clone(),
            )),
            Expr::Real(c) => Some(Atom::Real(*c)),
            Expr::Int(i) => Some(Atom::Int(*i)),
            Expr::Bool(b) => Some(Atom::Bool(*b)),
            _ => None,
        }
    }

    /// A real literal.
    pub(crate) fn real(&mut self, c: f64) -> ExprId {
        self.add(Expr::Real(c), Ty::Real)
    }

    /// An integer literal.
    pub(crate) fn int(&mut self, i: i64) -> ExprId {
        self.add(Expr::Int(i), Ty::Int)
    }

    /// A variable.
    pub(crate) fn var(&mut self, name: &Name, ty: Ty) -> ExprId {
        self.add(Expr::Var(name.clone()), ty)
    }

    /// `(e1, ..., ek)`; a single item is returned as it is (there are no
    /// 1-tuples).
    pub(crate) fn tuple(&mut self, items: Vec<ExprId>) -> Res<ExprId> {
        if items.len() == 1 {
            return Ok(items[0]);
        }
        let tys = items.iter().map(|&i| self.ty(i)).collect::<Res<Vec<_>>>()?;
        Ok(self.add(Expr::Tuple(items), Ty::Tuple(tys)))
    }

    /// `e.index` (1-based). A projection of a tuple node is resolved at
    /// construction time; the other components are dropped, which is sound
    /// because the language is pure.
    pub(crate) fn proj(&mut self, e: ExprId, index: u32) -> Res<ExprId> {
        if let Expr::Tuple(items) = self.m.expr(e)
            && let Some(&item) = items.get(index as usize - 1)
        {
            return Ok(item);
        }
        let ty = match self.ty(e)? {
            Ty::Tuple(tys) if (1..=tys.len()).contains(&(index as usize)) => {
                tys[index as usize - 1].clone()
            }
            other => {
                return Err(self.internal(format!(
                    "projection .{index} of a value of type {}",
                    show_ty(&other)
                )));
            }
        };
        Ok(self.add(Expr::Proj { tuple: e, index }, ty))
    }

    /// `a[i]`.
    pub(crate) fn index(&mut self, array: ExprId, index: ExprId) -> Res<ExprId> {
        let ty = elem_ty(&self.ty(array)?).ok_or_else(|| self.internal("indexing a non-array"))?;
        Ok(self.add(Expr::Index { array, index }, ty))
    }

    /// `length a`.
    pub(crate) fn length(&mut self, array: ExprId) -> ExprId {
        self.prim(Prim::Length, vec![array], Ty::Int)
    }

    /// `f a1 ... ak`.
    pub(crate) fn app(&mut self, func: ExprId, args: Vec<ExprId>) -> Res<ExprId> {
        let ty = match self.ty(func)? {
            Ty::Func(params, ret) if params.len() == args.len() => *ret,
            other => {
                return Err(self.internal(format!(
                    "applying a value of type {} to {} arguments",
                    show_ty(&other),
                    args.len()
                )));
            }
        };
        Ok(self.add(Expr::App { func, args }, ty))
    }

    /// A builtin applied to its arguments, with its result type.
    pub(crate) fn prim(&mut self, op: Prim, args: Vec<ExprId>, ty: Ty) -> ExprId {
        self.add(Expr::Prim { op, args }, ty)
    }

    /// A real-valued builtin.
    pub(crate) fn prim_r(&mut self, op: Prim, args: Vec<ExprId>) -> ExprId {
        self.prim(op, args, Ty::Real)
    }

    /// `fun (x1 : T1, ..., xk : Tk) -> body`.
    pub(crate) fn lambda(&mut self, params: Vec<(Name, Ty)>, body: ExprId) -> Res<ExprId> {
        let ret = self.ty(body)?;
        let span = self.span;
        let tys = params.iter().map(|(_, t)| t.clone()).collect();
        let params = params
            .into_iter()
            .map(|(name, ty)| Param {
                name,
                ty: Some(ty),
                span,
            })
            .collect();
        Ok(self.add(Expr::Lambda { params, body }, Ty::Func(tys, Box::new(ret))))
    }

    /// `let pat = value in body`.
    pub(crate) fn let_(&mut self, pat: Pat, value: ExprId, body: ExprId) -> Res<ExprId> {
        let ty = self.ty(body)?;
        Ok(self.add(
            Expr::Let {
                pat,
                ty: None,
                value,
                body,
            },
            ty,
        ))
    }

    /// `if c then a else b`.
    pub(crate) fn if_(
        &mut self,
        cond: ExprId,
        then_branch: ExprId,
        else_branch: ExprId,
    ) -> Res<ExprId> {
        let ty = self.ty(then_branch)?;
        Ok(self.add(
            Expr::If {
                cond,
                then_branch,
                else_branch,
            },
            ty,
        ))
    }

    /// Binds `value` to a fresh variable named after `base` and builds the
    /// scope with it. A variable or literal is passed through unbound.
    pub(crate) fn bind(
        &mut self,
        base: &str,
        value: ExprId,
        scope: impl FnOnce(&mut Builder, Atom) -> Res<ExprId>,
    ) -> Res<ExprId> {
        if let Some(atom) = self.as_atom(value) {
            return scope(self, atom);
        }
        let ty = self.ty(value)?;
        let name = self.fresh(base);
        let body = scope(self, Atom::Var(name.clone(), ty))?;
        self.let_(Pat::Var(name), value, body)
    }

    /// Binds the components of a tuple-typed `value` and builds the scope
    /// with them. A tuple node of atoms is taken apart without a binding.
    pub(crate) fn bind_tuple(
        &mut self,
        base: &str,
        value: ExprId,
        scope: impl FnOnce(&mut Builder, Vec<Atom>) -> Res<ExprId>,
    ) -> Res<ExprId> {
        if let Expr::Tuple(items) = self.m.expr(value) {
            let atoms: Option<Vec<Atom>> = items.iter().map(|&i| self.as_atom(i)).collect();
            if let Some(atoms) = atoms {
                return scope(self, atoms);
            }
        }
        let tys = match self.ty(value)? {
            Ty::Tuple(tys) => tys,
            other => {
                return Err(
                    self.internal(format!("destructuring a value of type {}", show_ty(&other)))
                );
            }
        };
        let names: Vec<Name> = (0..tys.len())
            .map(|i| self.fresh(&format!("{base}{}", i + 1)))
            .collect();
        let atoms = names
            .iter()
            .zip(tys)
            .map(|(n, t)| Atom::Var(n.clone(), t))
            .collect();
        let body = scope(self, atoms)?;
        self.let_(Pat::Tuple(names), value, body)
    }

    /// `build n (fun i -> body)`, typed `[size]T`.
    pub(crate) fn build(
        &mut self,
        n: ExprId,
        size: Size,
        body: impl FnOnce(&mut Builder, Atom) -> Res<ExprId>,
    ) -> Res<ExprId> {
        let i = self.fresh("i");
        let b = body(self, Atom::Var(i.clone(), Ty::Int))?;
        let elem = self.ty(b)?;
        let f = self.lambda(vec![(i, Ty::Int)], b)?;
        Ok(self.prim(Prim::Build, vec![n, f], Ty::Array(size, Box::new(elem))))
    }

    /// `map (fun x -> body) a`.
    pub(crate) fn map(
        &mut self,
        array: ExprId,
        base: &str,
        body: impl FnOnce(&mut Builder, Atom) -> Res<ExprId>,
    ) -> Res<ExprId> {
        let (size, elem) = match self.ty(array)? {
            Ty::Array(size, elem) => (size, *elem),
            other => return Err(self.internal(format!("map over {}", show_ty(&other)))),
        };
        let x = self.fresh(base);
        let b = body(self, Atom::Var(x.clone(), elem.clone()))?;
        let out = self.ty(b)?;
        let f = self.lambda(vec![(x, elem)], b)?;
        Ok(self.prim(Prim::Map, vec![f, array], Ty::Array(size, Box::new(out))))
    }

    /// `map2 (fun (x, y) -> body) a b`.
    pub(crate) fn map2(
        &mut self,
        a: ExprId,
        b: ExprId,
        body: impl FnOnce(&mut Builder, Atom, Atom) -> Res<ExprId>,
    ) -> Res<ExprId> {
        let (size, ea) = match self.ty(a)? {
            Ty::Array(size, elem) => (size, *elem),
            other => return Err(self.internal(format!("map2 over {}", show_ty(&other)))),
        };
        let eb = elem_ty(&self.ty(b)?).ok_or_else(|| self.internal("map2 over a non-array"))?;
        let x = self.fresh("a");
        let y = self.fresh("b");
        let body = body(
            self,
            Atom::Var(x.clone(), ea.clone()),
            Atom::Var(y.clone(), eb.clone()),
        )?;
        let out = self.ty(body)?;
        let f = self.lambda(vec![(x, ea), (y, eb)], body)?;
        Ok(self.prim(Prim::Map2, vec![f, a, b], Ty::Array(size, Box::new(out))))
    }

    /// `reduce (fun (a, b) -> a + b) 0 arr` over reals.
    pub(crate) fn sum(&mut self, array: ExprId) -> Res<ExprId> {
        let a = self.fresh("a");
        let b = self.fresh("b");
        let va = self.var(&a, Ty::Real);
        let vb = self.var(&b, Ty::Real);
        let s = self.prim_r(Prim::Add, vec![va, vb]);
        let f = self.lambda(vec![(a, Ty::Real), (b, Ty::Real)], s)?;
        let z = self.real(0.0);
        Ok(self.prim_r(Prim::Reduce, vec![f, z, array]))
    }

    /// `a + b` over reals, with `0 + b = b` and `a + 0 = a` folded for
    /// literal zeros.
    pub(crate) fn add_r(&mut self, a: ExprId, b: ExprId) -> ExprId {
        if self.as_atom(a).is_some_and(|x| x.is_zero_real()) {
            return b;
        }
        if self.as_atom(b).is_some_and(|x| x.is_zero_real()) {
            return a;
        }
        self.prim_r(Prim::Add, vec![a, b])
    }

    /// `a * b` over reals, with a literal one on either side folded.
    pub(crate) fn mul_r(&mut self, a: ExprId, b: ExprId) -> ExprId {
        if matches!(self.as_atom(a), Some(Atom::Real(c)) if c == 1.0) {
            return b;
        }
        if matches!(self.as_atom(b), Some(Atom::Real(c)) if c == 1.0) {
            return a;
        }
        self.prim_r(Prim::Mul, vec![a, b])
    }

    /// An `Int` sum `a + b`, folding literals.
    pub(crate) fn add_i(&mut self, a: ExprId, b: ExprId) -> ExprId {
        match (self.as_atom(a), self.as_atom(b)) {
            (Some(Atom::Int(x)), Some(Atom::Int(y))) => self.int(x.wrapping_add(y)),
            (Some(Atom::Int(0)), _) => b,
            (_, Some(Atom::Int(0))) => a,
            _ => self.prim(Prim::Add, vec![a, b], Ty::Int),
        }
    }

    /// An `Int` product `a * b`, folding literals.
    pub(crate) fn mul_i(&mut self, a: ExprId, b: ExprId) -> ExprId {
        match (self.as_atom(a), self.as_atom(b)) {
            (Some(Atom::Int(x)), Some(Atom::Int(y))) => self.int(x.wrapping_mul(y)),
            (Some(Atom::Int(1)), _) => b,
            (_, Some(Atom::Int(1))) => a,
            _ => self.prim(Prim::Mul, vec![a, b], Ty::Int),
        }
    }

    /// Wraps `body` in the given bindings, the first outermost.
    pub(crate) fn wrap(&mut self, binds: Vec<(Pat, ExprId)>, mut body: ExprId) -> Res<ExprId> {
        for (pat, value) in binds.into_iter().rev() {
            body = self.let_(pat, value, body)?;
        }
        Ok(body)
    }
}

/// The element type of an array type.
pub(crate) fn elem_ty(ty: &Ty) -> Option<Ty> {
    match ty {
        Ty::Array(_, elem) => Some((**elem).clone()),
        _ => None,
    }
}

/// A type in the language's syntax, for messages.
pub(crate) fn show_ty(ty: &Ty) -> String {
    fn size(s: &Size) -> String {
        match s {
            Size::Lit(n) => n.to_string(),
            Size::Var(n, 0) => n.to_string(),
            Size::Var(n, k) if *k > 0 => format!("{n}+{k}"),
            Size::Var(n, k) => format!("{n}{k}"),
            Size::Dyn => "_".to_string(),
        }
    }
    match ty {
        Ty::Real => "R".to_string(),
        Ty::Int => "Int".to_string(),
        Ty::Bool => "Bool".to_string(),
        Ty::Array(s, elem) => format!("[{}]{}", size(s), show_ty(elem)),
        Ty::Tuple(items) => format!(
            "({})",
            items.iter().map(show_ty).collect::<Vec<_>>().join(", ")
        ),
        Ty::Func(params, ret) => {
            let ret = show_ty(ret);
            if params.len() == 1 && !matches!(params[0], Ty::Func(..)) {
                format!("{} -> {ret}", show_ty(&params[0]))
            } else {
                format!(
                    "({}) -> {ret}",
                    params.iter().map(show_ty).collect::<Vec<_>>().join(", ")
                )
            }
        }
    }
}
