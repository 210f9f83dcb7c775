//! The one builder of Target terms (Cranelift's `InstBuilder`, Futhark's
//! `MonadBuilder`): every route that writes a program (forward mode, UNF's
//! raise, the direct macro) appends its nodes through a [`Builder`].
//!
//! A builder owns the module under construction, the module's supply of
//! fresh names, and the span new nodes get (the one of the node being
//! transformed, or `Span::GENERATED`). Invariants its helpers keep:
//! - children are added before their parents (the arena is post-order);
//! - every node is the child of exactly one node: a value needed twice is
//!   let-bound first and referred to through an [`Atom`], re-emitted as a
//!   new node at each use;
//! - every binder is a fresh name from the module's [`NameGen`], so binders
//!   stay unique within a definition however often code is duplicated;
//! - in a typed builder every node gets its type as it is made (the module
//!   leaves in core form); an untyped one leaves typing to `syntax::infer`.
//!
//! `let`s are written in one of two styles, both here: in scope-passing
//! style ([`Builder::bind`]: the scope is built by a closure and wrapped),
//! or by blocks ([`Builder::open`], [`Builder::bind_pat`],
//! [`Builder::close`]): bindings are collected per block (a definition's
//! body, the body of a lambda being built) and a block's bindings become a
//! chain of `let`s around its result, with a loop, so chains of any length
//! cost no stack. docs/ir.md, "Building terms".
//!
//! The fallible helpers (a projection of a non-tuple, ...) return the
//! route's own error type `E`, made from a [`BuildError`].

use std::marker::PhantomData;

use crate::fxhash::{FxHashMap, FxHashSet};
use crate::ir::{
    Expr, ExprId, Module, Name, NameGen, Param, Pat, Prim, Size, SourceFile, Span, Ty,
};
use crate::print;
use crate::visit::{Detached, detach};

/// A broken invariant met while building: a bug of the route, never a
/// user error.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
pub enum BuildError {
    /// A node the builder reads has no type: the input was not in core
    /// form.
    #[error("node {node} has no type")]
    Untyped {
        /// The node's span.
        span: Span,
        /// The node.
        node: ExprId,
    },
    /// A helper applied to a value of the wrong shape.
    #[error("{message}")]
    Internal {
        /// The span the builder was at.
        span: Span,
        /// What went wrong.
        message: String,
    },
}

/// A value that can be used any number of times: a variable or a literal.
#[derive(Debug, Clone, PartialEq)]
pub enum Atom {
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
    pub fn is_zero_real(&self) -> bool {
        matches!(self, Atom::Real(c) if *c == 0.0)
    }

    /// The atom's type.
    pub fn ty(&self) -> Ty {
        match self {
            Atom::Var(_, ty) => ty.clone(),
            Atom::Real(_) => Ty::Real,
            Atom::Int(_) => Ty::Int,
            Atom::Bool(_) => Ty::Bool,
        }
    }
}

/// One `let` of a block, waiting for the block's result.
struct Binding {
    pat: Pat,
    value: ExprId,
    span: Span,
}

/// A block taken off the stack by [`Builder::suspend`], to be finished
/// later with [`Builder::resume`].
pub struct Suspended(Vec<Binding>);

/// The builder: the module under construction, its name supply, the span
/// new nodes inherit, and the open blocks.
pub struct Builder<E = BuildError> {
    /// The module; new nodes are appended to its arena.
    pub out: Module,
    names: NameGen,
    /// The span given to new nodes.
    pub span: Span,
    /// Whether the output must stay a Source program: the derivative table
    /// then writes the Source expansions of the Target-only partials
    /// (`d1pow`, `dabs`, ...; `syntax::derivatives`) instead of the
    /// primitives, so that reverse mode can differentiate the result.
    pub source_only: bool,
    typed: bool,
    blocks: Vec<Vec<Binding>>,
    /// The variables each block finished by [`Builder::close_pruned`]
    /// refers to, so that the liveness of an enclosing block does not walk
    /// it again (the branches of nested `if`s would otherwise be walked
    /// once per enclosing block).
    closed: FxHashMap<ExprId, Vec<Name>>,
    error: PhantomData<fn() -> E>,
}

impl<E: From<BuildError>> Builder<E> {
    /// A typed builder appending to `m` (its names reserved).
    pub fn over(m: Module) -> Self {
        let names = m.name_gen();
        Self::with(m, names, true)
    }

    /// A builder of a new module over the text `file`, taking fresh names
    /// from `names`; `typed` says whether nodes get their types as they are
    /// made.
    pub fn new(file: SourceFile, names: NameGen, typed: bool) -> Self {
        Self::with(Module::new(file), names, typed)
    }

    fn with(out: Module, names: NameGen, typed: bool) -> Self {
        Builder {
            out,
            names,
            span: Span::GENERATED,
            source_only: false,
            typed,
            blocks: vec![Vec::new()],
            closed: FxHashMap::default(),
            error: PhantomData,
        }
    }

    /// A broken invariant at the current span.
    pub fn internal(&self, message: impl Into<String>) -> E {
        E::from(BuildError::Internal {
            span: self.span,
            message: message.into(),
        })
    }

    /// Appends a node of the given type (a typed builder).
    pub fn add(&mut self, expr: Expr, ty: Ty) -> ExprId {
        debug_assert!(self.typed, "a typed node in an untyped builder");
        let id = self.out.add(expr, self.span);
        self.out.types.push(ty);
        id
    }

    /// Appends a node without a type (an untyped builder).
    pub fn add_untyped(&mut self, expr: Expr) -> ExprId {
        debug_assert!(!self.typed, "an untyped node in a typed builder");
        self.out.add(expr, self.span)
    }

    /// The type of a node.
    pub fn ty(&self, id: ExprId) -> Result<Ty, E> {
        self.out.types.get(id.index()).cloned().ok_or_else(|| {
            E::from(BuildError::Untyped {
                span: self
                    .out
                    .spans
                    .get(id.index())
                    .copied()
                    .unwrap_or(Span::GENERATED),
                node: id,
            })
        })
    }

    /// The type of a node made by this typed builder.
    pub fn node_ty(&self, id: ExprId) -> &Ty {
        &self.out.types[id.index()]
    }

    /// A copy of a node.
    pub fn node(&self, id: ExprId) -> Expr {
        self.out.expr(id).clone()
    }

    /// A fresh name derived from `base`.
    pub fn fresh(&mut self, base: &str) -> Name {
        self.names.fresh(base)
    }

    /// Takes `name` out of the supply of fresh names (a name the output
    /// will hold, chosen by the caller).
    pub fn reserve(&mut self, name: &str) {
        self.names.reserve(name);
    }

    /// A copy of the subtree `root` of `src` (a derivative rule, the body
    /// of a function, Source code the route copies) with fresh binders and
    /// the free variables renamed by `subst`, detached: to paste into the
    /// output later with [`Builder::paste_detached`].
    pub fn detach(
        &mut self,
        src: &Module,
        root: ExprId,
        subst: impl Fn(&Name) -> Option<Name>,
    ) -> Detached {
        crate::visit::detach_with(src, root, &mut self.names, subst)
    }

    /// Appends a detached copy (typed as this builder is).
    pub fn paste_detached(&mut self, copy: Detached) -> ExprId {
        copy.paste(&mut self.out, self.typed)
    }

    /// A copy of the subtree `root` of `src` appended to the output, with
    /// fresh binders and the free variables renamed by `subst`.
    pub fn paste(&mut self, src: &Module, root: ExprId, subst: &FxHashMap<Name, Name>) -> ExprId {
        let copy = detach(src, root, &mut self.names, subst);
        self.paste_detached(copy)
    }

    /// A fresh copy of a subtree of the output itself (binders renamed).
    pub fn copy(&mut self, root: ExprId) -> ExprId {
        self.copy_renamed(root, &FxHashMap::default())
    }

    /// A fresh copy of a subtree of the output itself, binders renamed and
    /// free variables renamed by `subst`.
    pub fn copy_renamed(&mut self, root: ExprId, subst: &FxHashMap<Name, Name>) -> ExprId {
        let copy = detach(&self.out, root, &mut self.names, subst);
        self.paste_detached(copy)
    }

    /// A new node for an atom.
    pub fn emit(&mut self, atom: &Atom) -> ExprId {
        match atom {
            Atom::Var(name, ty) => self.add(Expr::Var(name.clone()), ty.clone()),
            Atom::Real(c) => self.add(Expr::Real(*c), Ty::Real),
            Atom::Int(i) => self.add(Expr::Int(*i), Ty::Int),
            Atom::Bool(b) => self.add(Expr::Bool(*b), Ty::Bool),
        }
    }

    /// The node as an atom, when it is a variable or a literal.
    pub fn as_atom(&self, id: ExprId) -> Option<Atom> {
        match self.out.expr(id) {
            Expr::Var(name) => Some(Atom::Var(
                name.clone(),
                self.out.types.get(id.index())?.clone(),
            )),
            Expr::Real(c) => Some(Atom::Real(*c)),
            Expr::Int(i) => Some(Atom::Int(*i)),
            Expr::Bool(b) => Some(Atom::Bool(*b)),
            _ => None,
        }
    }

    /// A boolean literal.
    pub fn boolean(&mut self, b: bool) -> ExprId {
        self.add(Expr::Bool(b), Ty::Bool)
    }

    /// A comparison `a op b`.
    pub fn cmp(&mut self, op: Prim, a: ExprId, b: ExprId) -> ExprId {
        self.prim(op, vec![a, b], Ty::Bool)
    }

    /// How many blocks are open: 1 at the top of the definition being
    /// built, one more inside each lambda (or branch) being built.
    pub fn depth(&self) -> usize {
        self.blocks.len()
    }

    /// Starts a block (the body of a lambda being built).
    pub fn open(&mut self) {
        self.blocks.push(Vec::new());
    }

    /// Binds `value` to `pat` (fresh names) in the current block.
    pub fn bind_pat(&mut self, pat: Pat, value: ExprId) {
        let span = self.span;
        self.blocks
            .last_mut()
            .expect("invariant: the outermost block is never closed")
            .push(Binding { pat, value, span });
    }

    /// Binds `value` to a fresh name derived from `base` in the current
    /// block, and returns the name.
    pub fn bind_fresh(&mut self, base: &str, value: ExprId) -> Name {
        let name = self.fresh(base);
        self.bind_pat(Pat::Var(name.clone()), value);
        name
    }

    /// Ends the innermost block: its bindings as `let`s around `result`,
    /// each with the span it was bound at.
    pub fn close(&mut self, result: ExprId) -> ExprId {
        let block = self.pop_block();
        self.wrap_block(block, result)
    }

    /// [`Builder::close`], dropping the bindings whose names nothing uses
    /// (the language is pure).
    pub fn close_pruned(&mut self, result: ExprId) -> ExprId {
        let block = self.pop_block();
        // Liveness over borrowed names: only the names left free are copied.
        // The set is sized for the block's names up front (a long block's
        // set otherwise grows by rehashing), and the walk's stack is
        // allocated once for the block instead of once per binding.
        let mut needed = vec![false; block.len()];
        let free: Vec<Name> = {
            let mut used: FxHashSet<&str> = FxHashSet::default();
            used.reserve(block.len());
            let mut stack = Vec::new();
            self.uses(result, &mut used, &mut stack);
            for (b, keep) in block.iter().zip(&mut needed).rev() {
                *keep = b.pat.names().iter().any(|x| used.contains(x.as_str()));
                if *keep {
                    self.uses(b.value, &mut used, &mut stack);
                }
            }
            for (b, _) in block.iter().zip(&needed).filter(|(_, keep)| **keep) {
                for x in b.pat.names() {
                    used.remove(x.as_str());
                }
            }
            used.into_iter().map(Name::new).collect()
        };
        let live: Vec<Binding> = block
            .into_iter()
            .zip(needed)
            .filter_map(|(b, keep)| keep.then_some(b))
            .collect();
        let body = self.wrap_block(live, result);
        self.closed.insert(body, free);
        body
    }

    fn pop_block(&mut self) -> Vec<Binding> {
        self.blocks
            .pop()
            .expect("invariant: close matches an open or the outermost block")
    }

    /// The bindings, the first outermost, as `let`s around `result`.
    fn wrap_block(&mut self, block: Vec<Binding>, result: ExprId) -> ExprId {
        let ty = self.typed.then(|| self.node_ty(result).clone());
        let saved = self.span;
        let mut body = result;
        for b in block.into_iter().rev() {
            self.span = b.span;
            let e = Expr::Let {
                pat: b.pat,
                ty: None,
                value: b.value,
                body,
            };
            body = match &ty {
                Some(ty) => self.add(e, ty.clone()),
                None => self.add_untyped(e),
            };
        }
        self.span = saved;
        body
    }

    /// Adds the variables a node's subtree refers to (`stack`, empty on
    /// entry and on return, is the walk's).
    fn uses<'s>(&'s self, e: ExprId, out: &mut FxHashSet<&'s str>, stack: &mut Vec<ExprId>) {
        stack.push(e);
        while let Some(e) = stack.pop() {
            if let Some(free) = self.closed.get(&e) {
                out.extend(free.iter().map(Name::as_str));
                continue;
            }
            let expr = &self.out.exprs[e.index()];
            if let Expr::Var(x) = expr {
                out.insert(x.as_str());
            }
            expr.for_each_child(|c| stack.push(c));
        }
    }

    /// Takes the current block off the stack, unfinished: its names stay
    /// usable once it is [`resume`](Builder::resume)d.
    pub fn suspend(&mut self) -> Suspended {
        Suspended(self.pop_block())
    }

    /// Puts a suspended block back on the stack, to add to it and close it.
    pub fn resume(&mut self, block: Suspended) {
        self.blocks.push(block.0);
    }

    /// A real literal.
    pub fn real(&mut self, c: f64) -> ExprId {
        self.add(Expr::Real(c), Ty::Real)
    }

    /// An integer literal.
    pub fn int(&mut self, i: i64) -> ExprId {
        self.add(Expr::Int(i), Ty::Int)
    }

    /// A variable.
    pub fn var(&mut self, name: &Name, ty: Ty) -> ExprId {
        self.add(Expr::Var(name.clone()), ty)
    }

    /// `(e1, ..., ek)`; a single item is returned as it is (there are no
    /// 1-tuples).
    pub fn tuple(&mut self, items: Vec<ExprId>) -> Result<ExprId, E> {
        if items.len() == 1 {
            return Ok(items[0]);
        }
        let tys = items
            .iter()
            .map(|&i| self.ty(i))
            .collect::<Result<Vec<_>, E>>()?;
        Ok(self.add(Expr::Tuple(items), Ty::Tuple(tys)))
    }

    /// `e.index` (1-based). A projection of a tuple node is resolved at
    /// construction time; the other components are dropped, which is sound
    /// because the language is pure.
    pub fn proj(&mut self, e: ExprId, index: u32) -> Result<ExprId, E> {
        if let Expr::Tuple(items) = self.out.expr(e)
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
                    print::ty(&other)
                )));
            }
        };
        Ok(self.add(Expr::Proj { tuple: e, index }, ty))
    }

    /// `a[i]`.
    pub fn index(&mut self, array: ExprId, index: ExprId) -> Result<ExprId, E> {
        let ty = elem_ty(&self.ty(array)?).ok_or_else(|| self.internal("indexing a non-array"))?;
        Ok(self.add(Expr::Index { array, index }, ty))
    }

    /// `length a`.
    pub fn length(&mut self, array: ExprId) -> ExprId {
        self.prim(Prim::Length, vec![array], Ty::Int)
    }

    /// `f a1 ... ak`.
    pub fn app(&mut self, func: ExprId, args: Vec<ExprId>) -> Result<ExprId, E> {
        let ty = match self.ty(func)? {
            Ty::Func(params, ret) if params.len() == args.len() => *ret,
            other => {
                return Err(self.internal(format!(
                    "applying a value of type {} to {} arguments",
                    print::ty(&other),
                    args.len()
                )));
            }
        };
        Ok(self.add(Expr::App { func, args }, ty))
    }

    /// A builtin applied to its arguments, with its result type.
    pub fn prim(&mut self, op: Prim, args: Vec<ExprId>, ty: Ty) -> ExprId {
        self.add(Expr::Prim { op, args }, ty)
    }

    /// A real-valued builtin.
    pub fn prim_r(&mut self, op: Prim, args: Vec<ExprId>) -> ExprId {
        self.prim(op, args, Ty::Real)
    }

    /// `fun (x1 : T1, ..., xk : Tk) -> body`.
    pub fn lambda(&mut self, params: Vec<(Name, Ty)>, body: ExprId) -> Result<ExprId, E> {
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
    pub fn let_(&mut self, pat: Pat, value: ExprId, body: ExprId) -> Result<ExprId, E> {
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
    pub fn if_(
        &mut self,
        cond: ExprId,
        then_branch: ExprId,
        else_branch: ExprId,
    ) -> Result<ExprId, E> {
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
    pub fn bind(
        &mut self,
        base: &str,
        value: ExprId,
        scope: impl FnOnce(&mut Self, Atom) -> Result<ExprId, E>,
    ) -> Result<ExprId, E> {
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
    pub fn bind_tuple(
        &mut self,
        base: &str,
        value: ExprId,
        scope: impl FnOnce(&mut Self, Vec<Atom>) -> Result<ExprId, E>,
    ) -> Result<ExprId, E> {
        if let Expr::Tuple(items) = self.out.expr(value) {
            let atoms: Option<Vec<Atom>> = items.iter().map(|&i| self.as_atom(i)).collect();
            if let Some(atoms) = atoms {
                return scope(self, atoms);
            }
        }
        let tys = match self.ty(value)? {
            Ty::Tuple(tys) => tys,
            other => {
                return Err(self.internal(format!(
                    "destructuring a value of type {}",
                    print::ty(&other)
                )));
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
    pub fn build(
        &mut self,
        n: ExprId,
        size: Size,
        body: impl FnOnce(&mut Self, Atom) -> Result<ExprId, E>,
    ) -> Result<ExprId, E> {
        let i = self.fresh("i");
        let b = body(self, Atom::Var(i.clone(), Ty::Int))?;
        let elem = self.ty(b)?;
        let f = self.lambda(vec![(i, Ty::Int)], b)?;
        Ok(self.prim(Prim::Build, vec![n, f], Ty::array(size, elem)))
    }

    /// `map (fun x -> body) a`.
    pub fn map(
        &mut self,
        array: ExprId,
        base: &str,
        body: impl FnOnce(&mut Self, Atom) -> Result<ExprId, E>,
    ) -> Result<ExprId, E> {
        let (size, elem) = match self.ty(array)? {
            Ty::Array(size, elem) => (size, Ty::clone(&elem)),
            other => return Err(self.internal(format!("map over {}", print::ty(&other)))),
        };
        let x = self.fresh(base);
        let b = body(self, Atom::Var(x.clone(), elem.clone()))?;
        let out = self.ty(b)?;
        let f = self.lambda(vec![(x, elem)], b)?;
        Ok(self.prim(Prim::Map, vec![f, array], Ty::array(size, out)))
    }

    /// `map2 (fun (x, y) -> body) a b`.
    pub fn map2(
        &mut self,
        a: ExprId,
        b: ExprId,
        body: impl FnOnce(&mut Self, Atom, Atom) -> Result<ExprId, E>,
    ) -> Result<ExprId, E> {
        let (size, ea) = match self.ty(a)? {
            Ty::Array(size, elem) => (size, Ty::clone(&elem)),
            other => return Err(self.internal(format!("map2 over {}", print::ty(&other)))),
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
        Ok(self.prim(Prim::Map2, vec![f, a, b], Ty::array(size, out)))
    }

    /// `reduce (fun (a, b) -> a + b) 0 arr` over reals.
    pub fn sum(&mut self, array: ExprId) -> Result<ExprId, E> {
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
    pub fn add_r(&mut self, a: ExprId, b: ExprId) -> ExprId {
        if self.as_atom(a).is_some_and(|x| x.is_zero_real()) {
            return b;
        }
        if self.as_atom(b).is_some_and(|x| x.is_zero_real()) {
            return a;
        }
        self.prim_r(Prim::Add, vec![a, b])
    }

    /// `a * b` over reals, with a literal one on either side folded.
    pub fn mul_r(&mut self, a: ExprId, b: ExprId) -> ExprId {
        if matches!(self.as_atom(a), Some(Atom::Real(c)) if c == 1.0) {
            return b;
        }
        if matches!(self.as_atom(b), Some(Atom::Real(c)) if c == 1.0) {
            return a;
        }
        self.prim_r(Prim::Mul, vec![a, b])
    }

    /// An `Int` sum `a + b`, folding literals.
    pub fn add_i(&mut self, a: ExprId, b: ExprId) -> ExprId {
        match (self.as_atom(a), self.as_atom(b)) {
            (Some(Atom::Int(x)), Some(Atom::Int(y))) => self.int(x.wrapping_add(y)),
            (Some(Atom::Int(0)), _) => b,
            (_, Some(Atom::Int(0))) => a,
            _ => self.prim(Prim::Add, vec![a, b], Ty::Int),
        }
    }

    /// An `Int` product `a * b`, folding literals.
    pub fn mul_i(&mut self, a: ExprId, b: ExprId) -> ExprId {
        match (self.as_atom(a), self.as_atom(b)) {
            (Some(Atom::Int(x)), Some(Atom::Int(y))) => self.int(x.wrapping_mul(y)),
            (Some(Atom::Int(1)), _) => b,
            (_, Some(Atom::Int(1))) => a,
            _ => self.prim(Prim::Mul, vec![a, b], Ty::Int),
        }
    }

    /// Wraps `body` in the given bindings, the first outermost.
    pub fn wrap(&mut self, binds: Vec<(Pat, ExprId)>, mut body: ExprId) -> Result<ExprId, E> {
        for (pat, value) in binds.into_iter().rev() {
            body = self.let_(pat, value, body)?;
        }
        Ok(body)
    }
}

/// The element type of an array type.
pub fn elem_ty(ty: &Ty) -> Option<Ty> {
    match ty {
        Ty::Array(_, elem) => Some((**elem).clone()),
        _ => None,
    }
}

/// `[n]T` → `[n+1]T`: the type of a scan's result.
pub fn plus_one(ty: &Ty) -> Ty {
    match ty {
        Ty::Array(size, elem) => {
            let size = match size {
                Size::Lit(n) => Size::Lit(n + 1),
                Size::Var(n, k) => Size::Var(n.clone(), k + 1),
                Size::Dyn => Size::Dyn,
            };
            Ty::Array(size, elem.clone())
        }
        other => other.clone(),
    }
}
