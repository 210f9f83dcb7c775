//! The direct macro's layer over the one term builder (`syntax::build`,
//! docs/ir.md, "Building terms"), used untyped: nodes in a `syntax::Module`
//! arena, `let` bindings collected per block (the definition's body, or
//! the body of a lambda being built), fresh names from the builder.
//!
//! Every value the macro computes is bound to a fresh variable as soon as it
//! is computed (A-normal form), so a value is an [`Atom`]: a name or a real
//! constant, which can be referenced any number of times by making a new
//! `Var` node per use (the arena is a tree: no node has two parents).
//! The builder's `close` turns a block's bindings into a chain of `let`s
//! around the block's result, with a loop, so chains of any length cost no
//! stack.
//!
//! Nodes are left untyped; `syntax::infer` types the finished module.

use std::collections::HashMap;
use std::ops::{Deref, DerefMut};
use syntax::{Expr, ExprId, Name, Param, Pat, Prim, Ty};

/// A value of the program being written: a variable in scope, or a real
/// constant written where it is used.
#[derive(Debug, Clone, PartialEq)]
pub(super) enum Atom {
    /// A variable of the Target program.
    Var(Name),
    /// A real constant.
    Real(f64),
}

/// The Target program under construction.
pub(super) struct Emit {
    /// The term builder (untyped: the module is typed by `infer`); its
    /// span is the one of the Source node being differentiated.
    core: syntax::build::Builder,
    /// The type of every variable of the output that has a cotangent slot
    /// (parameters, `let`-bound names, temporaries): what `+^` and `0_G`
    /// are taken at.
    pub slot_ty: HashMap<Name, Ty>,
}

impl Deref for Emit {
    type Target = syntax::build::Builder;
    fn deref(&self) -> &Self::Target {
        &self.core
    }
}

impl DerefMut for Emit {
    fn deref_mut(&mut self) -> &mut Self::Target {
        &mut self.core
    }
}

impl Emit {
    /// A builder over the text of `source`, whose names are all reserved.
    pub fn new(source: &syntax::Module) -> Emit {
        Emit {
            core: syntax::build::Builder::new(source.file.clone(), source.name_gen(), false),
            slot_ty: HashMap::new(),
        }
    }

    /// Appends a node.
    pub fn node(&mut self, e: Expr) -> ExprId {
        self.add_untyped(e)
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
        self.bind_pat(Pat::Var(name), e);
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
}
