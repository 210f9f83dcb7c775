//! `raise`'s layer over the one term builder (`syntax::build`, docs/ir.md,
//! "Building terms"): the values a raised program has computed, by id.
//!
//! Every value `raise` computes is bound to a fresh variable as soon as it
//! is computed (ANF), so a value is a name (or a constant) that can be
//! referenced any number of times; the builder's blocks turn the bindings
//! into chains of `let`s (`close_pruned` drops those nothing uses). Nodes
//! are typed as they are made, so the module leaves here in core form.

use std::ops::{Deref, DerefMut};

use syntax::build::Atom;
use syntax::ir::NameGen;
use syntax::{Expr, ExprId, Name, Param, Pat, Prim, Ty};

pub use syntax::build::plus_one;

/// A value the program has computed: an index into the builder's values.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ValId(pub u32);

/// The types of the constants, for [`Builder::ty`].
static REAL: Ty = Ty::Real;
static INT: Ty = Ty::Int;
static BOOL: Ty = Ty::Bool;

/// The Target program under construction: the term builder and the values
/// bound so far.
pub struct Builder {
    core: syntax::build::Builder,
    vals: Vec<Atom>,
    /// Whether the program holds nodes whose array sizes were not
    /// computed exactly (the constructs beyond the paper's core): `raise`
    /// then types the finished module with `syntax::infer`.
    pub retype: bool,
}

impl Deref for Builder {
    type Target = syntax::build::Builder;
    fn deref(&self) -> &Self::Target {
        &self.core
    }
}

impl DerefMut for Builder {
    fn deref_mut(&mut self) -> &mut Self::Target {
        &mut self.core
    }
}

impl Builder {
    /// A builder over the given program text, with `reserved` names taken.
    pub fn new(file: syntax::SourceFile, reserved: &[Name]) -> Builder {
        let mut names = NameGen::default();
        for n in reserved {
            names.reserve(n.as_str());
        }
        Builder {
            core: syntax::build::Builder::new(file, names, true),
            vals: Vec::new(),
            retype: false,
        }
    }

    /// The type of a value.
    pub fn ty(&self, v: ValId) -> &Ty {
        match &self.vals[v.0 as usize] {
            Atom::Var(_, ty) => ty,
            Atom::Real(_) => &REAL,
            Atom::Int(_) => &INT,
            Atom::Bool(_) => &BOOL,
        }
    }

    /// Whether a value is the constant `c`.
    pub fn is_const(&self, v: ValId, c: f64) -> bool {
        matches!(self.vals[v.0 as usize], Atom::Real(x) if x == c)
    }

    /// Whether a value is a constant (a real, an integer or a boolean).
    pub fn is_literal(&self, v: ValId) -> bool {
        !matches!(self.vals[v.0 as usize], Atom::Var(..))
    }

    fn push_val(&mut self, atom: Atom) -> ValId {
        let id = ValId(self.vals.len() as u32);
        self.vals.push(atom);
        id
    }

    /// A variable already in scope (a parameter).
    pub fn var_val(&mut self, name: Name, ty: Ty) -> ValId {
        self.push_val(Atom::Var(name, ty))
    }

    /// A real constant.
    pub fn real(&mut self, c: f64) -> ValId {
        self.push_val(Atom::Real(c))
    }

    /// An integer constant.
    pub fn int(&mut self, k: i64) -> ValId {
        self.push_val(Atom::Int(k))
    }

    /// A boolean constant.
    pub fn boolean(&mut self, b: bool) -> ValId {
        self.push_val(Atom::Bool(b))
    }

    /// A reference to a value.
    pub fn use_val(&mut self, v: ValId) -> ExprId {
        let atom = self.vals[v.0 as usize].clone();
        self.core.emit(&atom)
    }

    /// A real constant node.
    pub fn real_node(&mut self, c: f64) -> ExprId {
        self.core.real(c)
    }

    /// Binds a node to a fresh variable in the current block (a variable or
    /// a constant is not bound again: it is its own value).
    pub fn bind(&mut self, value: ExprId, base: &str) -> ValId {
        if let Some(atom) = self.as_atom(value) {
            return self.push_val(atom);
        }
        let ty = self.node_ty(value).clone();
        let name = self.bind_fresh(base, value);
        self.push_val(Atom::Var(name, ty))
    }

    /// Binds a node to a fresh variable named after `base` even when it is
    /// a variable or a constant, and returns the name: what a copy of code
    /// that refers to a parameter by name needs.
    pub fn bind_name(&mut self, value: ExprId, base: &str) -> Name {
        self.bind_fresh(base, value)
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
        self.bind_pat(Pat::Tuple(names.clone()), value);
        names
            .into_iter()
            .zip(items)
            .map(|(n, ty)| self.push_val(Atom::Var(n, ty)))
            .collect()
    }

    /// `fun (p1, ..., pk) -> body`, where the parameters' values were made
    /// by [`Builder::params`] and `body` built in a block opened after them.
    pub fn lambda(&mut self, params: &[ValId], body: ExprId) -> ExprId {
        let mut ps = Vec::with_capacity(params.len());
        let mut tys = Vec::with_capacity(params.len());
        for &p in params {
            let Atom::Var(name, ty) = &self.vals[p.0 as usize] else {
                unreachable!("lambda parameters are variables")
            };
            ps.push(Param {
                name: name.clone(),
                ty: Some(ty.clone()),
                span: self.span,
            });
            tys.push(ty.clone());
        }
        let ret = self.node_ty(body).clone();
        self.add(
            Expr::Lambda { params: ps, body },
            Ty::Func(tys, Box::new(ret)),
        )
    }

    /// Fresh variables for a lambda's parameters.
    pub fn params(&mut self, tys: &[(Ty, &str)]) -> Vec<ValId> {
        tys.iter()
            .map(|(ty, base)| {
                let n = self.fresh(base);
                self.push_val(Atom::Var(n, ty.clone()))
            })
            .collect()
    }

    /// A binary real operation on nodes.
    pub fn bin(&mut self, op: Prim, a: ExprId, b: ExprId) -> ExprId {
        self.prim_r(op, vec![a, b])
    }

    /// A binary real operation on values.
    pub fn bin_vals(&mut self, op: Prim, a: ValId, b: ValId) -> ExprId {
        let (x, y) = (self.use_val(a), self.use_val(b));
        self.bin(op, x, y)
    }

    /// A unary real operation on a node.
    pub fn un(&mut self, op: Prim, a: ExprId) -> ExprId {
        self.prim_r(op, vec![a])
    }

    /// `a[i]`, with the element type of `a`.
    pub fn index(&mut self, a: ValId, i: ExprId) -> ExprId {
        let elem = match self.ty(a) {
            Ty::Array(_, e) => (**e).clone(),
            other => other.clone(),
        };
        let ae = self.use_val(a);
        self.add(
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
        self.core.length(ae)
    }

    /// `if c then a else b`.
    pub fn ite(&mut self, c: ExprId, a: ExprId, b: ExprId) -> ExprId {
        let ty = self.node_ty(a).clone();
        self.add(
            Expr::If {
                cond: c,
                then_branch: a,
                else_branch: b,
            },
            ty,
        )
    }
}
