//! The builder of the Target program the direct macro writes: untyped
//! expression nodes in a `syntax::Module` arena, `let` bindings collected
//! per block (the definition's body, or the body of a lambda being built),
//! and fresh names.
//!
//! Every value the macro computes is bound to a fresh variable as soon as it
//! is computed (A-normal form), so a value is an [`Atom`]: a name or a real
//! constant, which can be referenced any number of times by making a new
//! `Var` node per use (the arena is a tree: no node has two parents).
//! [`Emit::close`] turns a block's bindings into a chain of `let`s around the
//! block's result, with a loop, so chains of any length cost no stack.
//!
//! Nodes are left untyped; `syntax::infer` types the finished module.

use std::collections::HashMap;
use syntax::ir::NameGen;
use syntax::{Expr, ExprId, Name, Param, Pat, Prim, Span, Ty};

/// A value of the program being written: a variable in scope, or a real
/// constant written where it is used.
#[derive(Debug, Clone, PartialEq)]
pub(super) enum Atom {
    /// A variable of the Target program.
    Var(Name),
    /// A real constant.
    Real(f64),
}

struct Binding {
    pat: Pat,
    value: ExprId,
    span: Span,
}

/// The Target program under construction.
pub(super) struct Emit {
    /// The module the nodes go into (untyped until `infer`).
    pub out: syntax::Module,
    names: NameGen,
    blocks: Vec<Vec<Binding>>,
    /// The span new nodes get: the one of the Source node being
    /// differentiated.
    pub span: Span,
    /// The type of every variable of the output that has a cotangent slot
    /// (parameters, `let`-bound names, temporaries): what `+^` and `0_G`
    /// are taken at.
    pub slot_ty: HashMap<Name, Ty>,
}

impl Emit {
    /// A builder over the text of `source`, whose names are all reserved.
    pub fn new(source: &syntax::Module) -> Emit {
        Emit {
            out: syntax::Module::new(source.file.clone()),
            names: source.name_gen(),
            blocks: vec![Vec::new()],
            span: Span::GENERATED,
            slot_ty: HashMap::new(),
        }
    }

    /// A name used nowhere else, derived from `base`.
    pub fn fresh(&mut self, base: &str) -> Name {
        self.names.fresh(base)
    }

    /// Appends a node.
    pub fn node(&mut self, e: Expr) -> ExprId {
        self.out.add(e, self.span)
    }

    /// A detached copy of `root` of `src` with fresh binders and `subst`
    /// applied to its free variables (a rule of `with_rules`), to paste
    /// into the output later with `Detached::paste(&mut b.out, false)`.
    pub fn detach(
        &mut self,
        src: &syntax::Module,
        root: ExprId,
        subst: &syntax::fxhash::FxHashMap<Name, Name>,
    ) -> syntax::rules::Detached {
        syntax::rules::detach(src, root, &mut self.names, subst)
    }

    /// A new node reading an atom.
    pub fn atom(&mut self, a: &Atom) -> ExprId {
        match a {
            Atom::Var(n) => self.node(Expr::Var(n.clone())),
            Atom::Real(c) => self.node(Expr::Real(*c)),
        }
    }

    /// A new node reading a variable.
    pub fn var(&mut self, n: &Name) -> ExprId {
        self.node(Expr::Var(n.clone()))
    }

    /// A real constant node.
    pub fn real(&mut self, c: f64) -> ExprId {
        self.node(Expr::Real(c))
    }

    /// A primitive applied to its arguments.
    pub fn prim(&mut self, op: Prim, args: Vec<ExprId>) -> ExprId {
        self.node(Expr::Prim { op, args })
    }

    /// `a op b`.
    pub fn bin(&mut self, op: Prim, a: ExprId, b: ExprId) -> ExprId {
        self.prim(op, vec![a, b])
    }

    /// `op a`.
    pub fn un(&mut self, op: Prim, a: ExprId) -> ExprId {
        self.prim(op, vec![a])
    }

    /// `e.i`, 1-based.
    pub fn proj(&mut self, e: ExprId, index: u32) -> ExprId {
        self.node(Expr::Proj { tuple: e, index })
    }

    /// `if c then a else b`.
    pub fn ite(&mut self, cond: ExprId, a: ExprId, b: ExprId) -> ExprId {
        self.node(Expr::If {
            cond,
            then_branch: a,
            else_branch: b,
        })
    }

    /// `fun (p1, ..., pk) -> body`, the parameters typed later by inference.
    pub fn lambda(&mut self, params: &[Name], body: ExprId) -> ExprId {
        let params = params
            .iter()
            .map(|n| Param {
                name: n.clone(),
                ty: None,
                span: self.span,
            })
            .collect();
        self.node(Expr::Lambda { params, body })
    }

    /// Binds `e` to a fresh name derived from `base` in the current block.
    pub fn bind(&mut self, base: &str, e: ExprId) -> Atom {
        let name = self.fresh(base);
        self.bind_as(name.clone(), e);
        Atom::Var(name)
    }

    /// Binds `e` to `name` (already fresh) in the current block.
    pub fn bind_as(&mut self, name: Name, e: ExprId) {
        let span = self.span;
        self.blocks
            .last_mut()
            .expect("invariant: the definition's block is never closed")
            .push(Binding {
                pat: Pat::Var(name),
                value: e,
                span,
            });
    }

    /// Binds `e` to the hinted name if there is one, else to a fresh one.
    pub fn bind_hint(&mut self, hint: Option<Name>, base: &str, e: ExprId) -> Atom {
        match hint {
            Some(name) => {
                self.bind_as(name.clone(), e);
                Atom::Var(name)
            }
            None => self.bind(base, e),
        }
    }

    /// The i-th component (1-based) of a tuple atom, bound.
    pub fn component(&mut self, a: &Atom, index: u32) -> Atom {
        let t = self.atom(a);
        let e = self.proj(t, index);
        self.bind("c", e)
    }

    /// Starts a block (the body of a lambda being built).
    pub fn open(&mut self) {
        self.blocks.push(Vec::new());
    }

    /// Ends the innermost block: its bindings as `let`s around `result`.
    pub fn close(&mut self, result: ExprId) -> ExprId {
        let block = self
            .blocks
            .pop()
            .expect("invariant: close matches an open or the definition's block");
        let mut body = result;
        for b in block.into_iter().rev() {
            body = self.out.add(
                Expr::Let {
                    pat: b.pat,
                    ty: None,
                    value: b.value,
                    body,
                },
                b.span,
            );
        }
        body
    }
}
