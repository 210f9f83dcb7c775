//! The builder of the Target program `raise` writes: typed expression nodes
//! in a `syntax::Module` arena, `let` bindings collected per block (a
//! definition's body or a lambda's), fresh names, and the values those
//! bindings name.
//!
//! Every value `raise` computes is bound to a fresh variable as soon as it
//! is computed (ANF), so a value is a name (or a real constant) that can be
//! referenced any number of times; `end` turns a block's bindings into a
//! chain of `let`s around its result. Nodes are typed as they are made, so
//! the module leaves here in core form.

use syntax::fxhash::{FxHashMap, FxHashSet};
use syntax::ir::NameGen;
use syntax::{Expr, ExprId, Name, Param, Pat, Prim, Size, Span, Ty};

/// A value the program has computed: an index into [`Builder::vals`].
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ValId(pub u32);

/// What a value is in the program text.
#[derive(Debug, Clone)]
enum ValKind {
    /// A variable in scope.
    Var(Name),
    /// A real constant, written where it is used.
    Real(f64),
    /// An integer constant, written where it is used.
    Int(i64),
    /// A boolean constant, written where it is used.
    Bool(bool),
}

#[derive(Debug, Clone)]
struct Val {
    kind: ValKind,
    ty: Ty,
}

struct Binding {
    pat: Pat,
    value: ExprId,
    span: Span,
}

/// A block taken off the stack by [`Builder::suspend`], to be finished
/// later with [`Builder::resume`].
pub struct Suspended(Vec<Binding>);

/// The Target program under construction.
pub struct Builder {
    /// The module the nodes go into.
    pub out: syntax::Module,
    names: NameGen,
    vals: Vec<Val>,
    blocks: Vec<Vec<Binding>>,
    /// The variables a finished block (the `let` chain `end` returns)
    /// refers to, so that the liveness of an enclosing block does not walk
    /// it again: nested blocks (the branches of nested `if`s) would
    /// otherwise be walked once per enclosing block.
    free: FxHashMap<ExprId, Vec<Name>>,
    /// The span new nodes get: the one of the UNF term being raised.
    pub span: Span,
    /// Whether the program holds nodes whose array sizes were not
    /// computed exactly (the constructs beyond the paper's core): `raise`
    /// then types the finished module with `syntax::infer`.
    pub retype: bool,
}

impl Builder {
    /// A builder over the given program text, with `reserved` names taken.
    pub fn new(file: syntax::SourceFile, reserved: &[Name]) -> Builder {
        let mut names = NameGen::default();
        for n in reserved {
            names.reserve(n.as_str());
        }
        Builder {
            out: syntax::Module::new(file),
            names,
            vals: Vec::new(),
            blocks: vec![Vec::new()],
            free: FxHashMap::default(),
            span: Span::GENERATED,
            retype: false,
        }
    }

    /// The type of a value.
    pub fn ty(&self, v: ValId) -> &Ty {
        &self.vals[v.0 as usize].ty
    }

    /// Whether a value is the constant `c`.
    pub fn is_const(&self, v: ValId, c: f64) -> bool {
        matches!(self.vals[v.0 as usize].kind, ValKind::Real(x) if x == c)
    }

    fn push_val(&mut self, kind: ValKind, ty: Ty) -> ValId {
        let id = ValId(self.vals.len() as u32);
        self.vals.push(Val { kind, ty });
        id
    }

    /// A variable already in scope (a parameter).
    pub fn var_val(&mut self, name: Name, ty: Ty) -> ValId {
        self.push_val(ValKind::Var(name), ty)
    }

    /// A real constant.
    pub fn real(&mut self, c: f64) -> ValId {
        self.push_val(ValKind::Real(c), Ty::Real)
    }

    /// An integer constant.
    pub fn int(&mut self, k: i64) -> ValId {
        self.push_val(ValKind::Int(k), Ty::Int)
    }

    /// A boolean constant.
    pub fn boolean(&mut self, b: bool) -> ValId {
        self.push_val(ValKind::Bool(b), Ty::Bool)
    }

    /// A fresh name.
    pub fn fresh(&mut self, base: &str) -> Name {
        self.names.fresh(base)
    }

    /// Adds a typed node.
    pub fn node(&mut self, expr: Expr, ty: Ty) -> ExprId {
        let id = self.out.add(expr, self.span);
        self.out.types.push(ty);
        id
    }

    /// The type of a node.
    pub fn node_ty(&self, e: ExprId) -> &Ty {
        &self.out.types[e.index()]
    }

    /// A reference to a value.
    pub fn use_val(&mut self, v: ValId) -> ExprId {
        let val = self.vals[v.0 as usize].clone();
        match val.kind {
            ValKind::Var(n) => self.node(Expr::Var(n), val.ty),
            ValKind::Real(c) => self.node(Expr::Real(c), Ty::Real),
            ValKind::Int(k) => self.node(Expr::Int(k), Ty::Int),
            ValKind::Bool(b) => self.node(Expr::Bool(b), Ty::Bool),
        }
    }

    /// A real constant node.
    pub fn real_node(&mut self, c: f64) -> ExprId {
        self.node(Expr::Real(c), Ty::Real)
    }

    /// Binds a node to a fresh variable in the current block (a variable or
    /// a constant is not bound again: it is its own value).
    pub fn bind(&mut self, value: ExprId, base: &str) -> ValId {
        match &self.out.exprs[value.index()] {
            Expr::Var(n) => {
                let (n, ty) = (n.clone(), self.node_ty(value).clone());
                return self.push_val(ValKind::Var(n), ty);
            }
            Expr::Real(c) => return self.real(*c),
            Expr::Int(k) => return self.int(*k),
            Expr::Bool(b) => return self.boolean(*b),
            _ => {}
        }
        let name = self.fresh(base);
        let ty = self.node_ty(value).clone();
        let span = self.span;
        self.blocks
            .last_mut()
            .expect("invariant: there is always an open block")
            .push(Binding {
                pat: Pat::Var(name.clone()),
                value,
                span,
            });
        self.push_val(ValKind::Var(name), ty)
    }

    /// Binds a node to a fresh variable named after `base` even when it is
    /// a variable or a constant, and returns the name: what a copy of code
    /// that refers to a parameter by name needs.
    pub fn bind_name(&mut self, value: ExprId, base: &str) -> Name {
        let name = self.fresh(base);
        let span = self.span;
        self.blocks
            .last_mut()
            .expect("invariant: there is always an open block")
            .push(Binding {
                pat: Pat::Var(name.clone()),
                value,
                span,
            });
        name
    }

    /// A copy of the subtree `root` of `src` (a rule or the body of a
    /// function with derivative rules, `syntax::rules`) with fresh binders
    /// and the free variables renamed by `subst`.
    pub fn paste(
        &mut self,
        src: &syntax::Module,
        root: ExprId,
        subst: &FxHashMap<Name, Name>,
    ) -> ExprId {
        syntax::rules::detach(src, root, &mut self.names, subst).paste(&mut self.out, true)
    }

    /// Binds the components of a tuple value: `let (x1, ..., xk) = v`.
    pub fn unpack(&mut self, v: ValId, base: &str) -> Vec<ValId> {
        let Ty::Tuple(items) = self.ty(v).clone() else {
            return vec![v];
        };
        if items.is_empty() {
            return Vec::new();
        }
        let value = self.use_val(v);
        let names: Vec<Name> = items.iter().map(|_| self.fresh(base)).collect();
        let span = self.span;
        self.blocks
            .last_mut()
            .expect("invariant: there is always an open block")
            .push(Binding {
                pat: Pat::Tuple(names.clone()),
                value,
                span,
            });
        names
            .into_iter()
            .zip(items)
            .map(|(n, ty)| self.push_val(ValKind::Var(n), ty))
            .collect()
    }

    /// Opens a block (a lambda's body).
    pub fn begin(&mut self) {
        self.blocks.push(Vec::new());
    }

    /// Closes the current block around its result: `let ... in result`.
    /// Bindings whose names nothing uses are dropped (the language is pure).
    pub fn end(&mut self, result: ExprId) -> ExprId {
        let block = self
            .blocks
            .pop()
            .expect("invariant: begin and end are paired");
        let ty = self.node_ty(result).clone();
        let saved = self.span;
        // Liveness over borrowed names: only the names left free are copied.
        let mut needed = vec![false; block.len()];
        let free: Vec<Name> = {
            let mut used: FxHashSet<&str> = FxHashSet::default();
            self.uses(result, &mut used);
            for (b, keep) in block.iter().zip(&mut needed).rev() {
                *keep = match &b.pat {
                    Pat::Var(x) => used.contains(x.as_str()),
                    Pat::Tuple(xs) => xs.iter().any(|x| used.contains(x.as_str())),
                };
                if *keep {
                    self.uses(b.value, &mut used);
                }
            }
            for (b, _) in block.iter().zip(&needed).filter(|(_, keep)| **keep) {
                match &b.pat {
                    Pat::Var(x) => {
                        used.remove(x.as_str());
                    }
                    Pat::Tuple(xs) => xs.iter().for_each(|x| {
                        used.remove(x.as_str());
                    }),
                }
            }
            used.into_iter().map(Name::new).collect()
        };
        let live: Vec<Binding> = block
            .into_iter()
            .zip(needed)
            .rev()
            .filter_map(|(b, keep)| keep.then_some(b))
            .collect();
        let mut body = result;
        for b in live {
            self.span = b.span;
            body = self.node(
                Expr::Let {
                    pat: b.pat,
                    ty: None,
                    value: b.value,
                    body,
                },
                ty.clone(),
            );
        }
        self.span = saved;
        self.free.insert(body, free);
        body
    }

    /// Adds the variables a node's subtree refers to.
    fn uses<'s>(&'s self, e: ExprId, out: &mut FxHashSet<&'s str>) {
        let mut stack = vec![e];
        while let Some(e) = stack.pop() {
            if let Some(free) = self.free.get(&e) {
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

    /// Takes the current block off the stack, unfinished: its values stay
    /// usable once it is [`resume`](Builder::resume)d.
    pub fn suspend(&mut self) -> Suspended {
        Suspended(
            self.blocks
                .pop()
                .expect("invariant: begin and suspend are paired"),
        )
    }

    /// Puts a suspended block back on the stack, to add to it and `end` it.
    pub fn resume(&mut self, block: Suspended) {
        self.blocks.push(block.0);
    }

    /// `fun (p1, ..., pk) -> body`, where the parameters' values were made
    /// by [`Builder::params`] and `body` built in a block opened after them.
    pub fn lambda(&mut self, params: &[ValId], body: ExprId) -> ExprId {
        let mut ps = Vec::with_capacity(params.len());
        let mut tys = Vec::with_capacity(params.len());
        for &p in params {
            let val = &self.vals[p.0 as usize];
            let ValKind::Var(name) = &val.kind else {
                unreachable!("lambda parameters are variables")
            };
            ps.push(Param {
                name: name.clone(),
                ty: Some(val.ty.clone()),
                span: self.span,
            });
            tys.push(val.ty.clone());
        }
        let ret = self.node_ty(body).clone();
        self.node(
            Expr::Lambda { params: ps, body },
            Ty::Func(tys, Box::new(ret)),
        )
    }

    /// Fresh variables for a lambda's parameters.
    pub fn params(&mut self, tys: &[(Ty, &str)]) -> Vec<ValId> {
        tys.iter()
            .map(|(ty, base)| {
                let n = self.fresh(base);
                self.push_val(ValKind::Var(n), ty.clone())
            })
            .collect()
    }

    /// A primitive applied to nodes, with its result type.
    pub fn prim(&mut self, op: Prim, args: Vec<ExprId>, ty: Ty) -> ExprId {
        self.node(Expr::Prim { op, args }, ty)
    }

    /// A binary real operation on nodes.
    pub fn bin(&mut self, op: Prim, a: ExprId, b: ExprId) -> ExprId {
        self.prim(op, vec![a, b], Ty::Real)
    }

    /// A binary real operation on values.
    pub fn bin_vals(&mut self, op: Prim, a: ValId, b: ValId) -> ExprId {
        let (x, y) = (self.use_val(a), self.use_val(b));
        self.bin(op, x, y)
    }

    /// A unary real operation on a node.
    pub fn un(&mut self, op: Prim, a: ExprId) -> ExprId {
        self.prim(op, vec![a], Ty::Real)
    }

    /// A comparison on values.
    pub fn cmp(&mut self, op: Prim, a: ExprId, b: ExprId) -> ExprId {
        self.prim(op, vec![a, b], Ty::Bool)
    }

    /// `a[i]`, with the element type of `a`.
    pub fn index(&mut self, a: ValId, i: ExprId) -> ExprId {
        let elem = match self.ty(a) {
            Ty::Array(_, e) => (**e).clone(),
            other => other.clone(),
        };
        let ae = self.use_val(a);
        self.node(
            Expr::Index {
                array: ae,
                index: i,
            },
            elem,
        )
    }

    /// `length a`.
    pub fn length(&mut self, a: ValId) -> ExprId {
        let ae = self.use_val(a);
        self.prim(Prim::Length, vec![ae], Ty::Int)
    }

    /// `if c then a else b`.
    pub fn ite(&mut self, c: ExprId, a: ExprId, b: ExprId) -> ExprId {
        let ty = self.node_ty(a).clone();
        self.node(
            Expr::If {
                cond: c,
                then_branch: a,
                else_branch: b,
            },
            ty,
        )
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
