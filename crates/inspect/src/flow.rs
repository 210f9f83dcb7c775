//! A forward dataflow analysis over the term IR (core form), generic in
//! what it tracks: [`crate::activity`] follows the parameters a value
//! depends on, [`crate::hazards`] the singular operations whose result
//! reaches it.
//!
//! The engine owns what is the same for every analysis: names (binders are
//! unique in a definition, so one map serves), `let` and tuple patterns,
//! tuples and projections (facts are shaped like the value's type, see
//! [`Shape`]), arrays (transparent: one fact describes every element),
//! and the functions of the array builtins, whose parameters are bound to
//! the facts of the elements they receive (with a fixpoint for the
//! accumulator of a fold or scan). A [`Domain`] says what the scalar
//! builtins, the control dependences (a length, a trip count, an index,
//! a condition) and the conditionals do to facts.
//!
//! What cannot be followed (a lambda outside an array builtin, the result
//! of applying a function value) gets [`Domain::unknown`]: reverse mode
//! sees first-order programs, so this only concerns programs it would
//! specialise first.

use syntax::fxhash::FxHashMap;
use syntax::stack::guard;
use syntax::{Def, Expr, ExprId, Module, Name, Param, Pat, Prim, Ty};

/// How often a fold's fixpoint is iterated before the analysis gives up
/// on precision and joins in [`Domain::unknown`]. Facts form finite
/// lattices, so this bound is only reached by a domain that is not one.
const MAX_ROUNDS: usize = 64;

/// A join semilattice of facts; `Default` is the bottom (nothing flows).
pub trait Fact: Clone + PartialEq + Default {
    /// `self := self ⊔ other`.
    fn join(&mut self, other: &Self);
}

/// A fact shaped like a value's type: one per component of a tuple,
/// arrays transparent (a fact about every element), a leaf for the rest.
#[derive(Debug, Clone, PartialEq)]
pub enum Shape<F> {
    /// A scalar, a function, or something whose structure was lost.
    Leaf(F),
    /// A tuple, component by component.
    Tuple(Vec<Shape<F>>),
}

impl<F: Fact> Default for Shape<F> {
    fn default() -> Self {
        Shape::Leaf(F::default())
    }
}

impl<F: Fact> Shape<F> {
    /// The join of every leaf.
    pub fn flatten(&self) -> F {
        match self {
            Shape::Leaf(f) => f.clone(),
            Shape::Tuple(items) => {
                let mut out = F::default();
                for i in items {
                    out.join(&i.flatten());
                }
                out
            }
        }
    }

    /// `self := self ⊔ other`, component by component where both are
    /// tuples of one length, else collapsed to a leaf.
    pub fn join(&mut self, other: &Shape<F>) {
        match (&mut *self, other) {
            (Shape::Tuple(a), Shape::Tuple(b)) if a.len() == b.len() => {
                for (x, y) in a.iter_mut().zip(b) {
                    x.join(y);
                }
            }
            (Shape::Leaf(a), Shape::Leaf(b)) => a.join(b),
            _ => {
                let mut f = self.flatten();
                f.join(&other.flatten());
                *self = Shape::Leaf(f);
            }
        }
    }

    /// Joins `f` into every leaf.
    pub fn join_leaves(&mut self, f: &F) {
        match self {
            Shape::Leaf(x) => x.join(f),
            Shape::Tuple(items) => items.iter_mut().for_each(|i| i.join_leaves(f)),
        }
    }

    /// The i-th (1-based) component; a leaf stands for all of them.
    pub fn component(&self, i: u32) -> Shape<F> {
        match self {
            Shape::Tuple(items) => items
                .get(i.wrapping_sub(1) as usize)
                .cloned()
                .unwrap_or_default(),
            leaf => leaf.clone(),
        }
    }
}

/// What an analysis does where values are made.
pub trait Domain {
    /// The fact of one leaf.
    type Fact: Fact;

    /// The fact of a leaf of parameter `index` (0-based) of the entry:
    /// `path` the 1-based components inside its tuple type (empty for a
    /// scalar or an array of scalars), `ty` the leaf's type.
    fn param(&mut self, index: usize, path: &[u32], ty: &Ty) -> Self::Fact;

    /// A scalar builtin `op` at node `id` (arithmetic, comparisons, logic,
    /// the real functions) applied to operands with these facts.
    fn scalar(&mut self, m: &Module, id: ExprId, op: Prim, args: &[Self::Fact]) -> Self::Fact;

    /// What of `f` reaches the value of node `at` only as control or
    /// shape: the length of an array, the trip count of a loop or a
    /// `build`, the index of `a[i]`, the condition of an `if`, the length
    /// of the arrays a `map` walks over.
    fn control(&mut self, m: &Module, at: ExprId, f: &Self::Fact) -> Self::Fact;

    /// The conditional `id` whose condition has fact `cond` and whose
    /// branches give these shapes; the default joins both branches and
    /// the condition as control.
    fn branch(
        &mut self,
        m: &Module,
        id: ExprId,
        cond: &Self::Fact,
        then: Shape<Self::Fact>,
        otherwise: Shape<Self::Fact>,
    ) -> Shape<Self::Fact> {
        let mut out = then;
        out.join(&otherwise);
        let c = self.control(m, id, cond);
        out.join_leaves(&c);
        out
    }

    /// The fact of a value the analysis cannot follow.
    fn unknown(&mut self) -> Self::Fact;
}

/// The fact of the result of `def` in `m`, its parameters described by
/// [`Domain::param`].
pub fn analyze<D: Domain>(m: &Module, def: &Def, d: &mut D) -> Shape<D::Fact> {
    let mut e = Engine {
        m,
        d,
        env: FxHashMap::default(),
    };
    for (i, p) in def.params.iter().enumerate() {
        let shape = match &p.ty {
            Some(ty) => e.param_shape(i, &mut Vec::new(), ty),
            None => Shape::Leaf(e.d.unknown()),
        };
        e.env.insert(p.name.clone(), shape);
    }
    e.eval(def.body)
}

struct Engine<'a, D: Domain> {
    m: &'a Module,
    d: &'a mut D,
    env: FxHashMap<Name, Shape<D::Fact>>,
}

impl<D: Domain> Engine<'_, D> {
    fn param_shape(&mut self, index: usize, path: &mut Vec<u32>, ty: &Ty) -> Shape<D::Fact> {
        match ty {
            Ty::Tuple(items) => Shape::Tuple(
                items
                    .iter()
                    .enumerate()
                    .map(|(j, t)| {
                        path.push(j as u32 + 1);
                        let s = self.param_shape(index, path, t);
                        path.pop();
                        s
                    })
                    .collect(),
            ),
            Ty::Array(_, elem) => self.param_shape(index, path, elem),
            leaf => Shape::Leaf(self.d.param(index, path, leaf)),
        }
    }

    fn unknown(&mut self) -> Shape<D::Fact> {
        Shape::Leaf(self.d.unknown())
    }

    fn eval(&mut self, id: ExprId) -> Shape<D::Fact> {
        guard(|| self.eval_inner(id))
    }

    fn eval_inner(&mut self, id: ExprId) -> Shape<D::Fact> {
        let m = self.m;
        let Some(expr) = m.exprs.get(id.index()) else {
            return self.unknown();
        };
        match expr {
            Expr::Var(x) => match self.env.get(x) {
                Some(s) => s.clone(),
                None => self.unknown(),
            },
            Expr::Real(_) | Expr::Int(_) | Expr::Bool(_) | Expr::Reals(_) => Shape::default(),
            Expr::Section(_) => self.unknown(),
            Expr::Let {
                pat, value, body, ..
            } => {
                let v = self.eval(*value);
                self.bind(pat, v);
                self.eval(*body)
            }
            Expr::Tuple(items) => Shape::Tuple(items.iter().map(|&i| self.eval(i)).collect()),
            Expr::Proj { tuple, index } => self.eval(*tuple).component(*index),
            Expr::If {
                cond,
                then_branch,
                else_branch,
            } => {
                let c = self.eval(*cond).flatten();
                let t = self.eval(*then_branch);
                let e = self.eval(*else_branch);
                self.d.branch(m, id, &c, t, e)
            }
            Expr::Lambda { params, body } => {
                // A function value outside an array builtin: its
                // parameters cannot be followed.
                for p in params {
                    let u = self.unknown();
                    self.env.insert(p.name.clone(), u);
                }
                Shape::Leaf(self.eval(*body).flatten())
            }
            Expr::App { func, args } => {
                let args: Vec<Shape<D::Fact>> = args.iter().map(|&a| self.eval(a)).collect();
                if let Some(Expr::Lambda { params, body }) = m.exprs.get(func.index()) {
                    return self.apply(params, *body, args);
                }
                let mut out = self.eval(*func);
                for a in &args {
                    out.join(a);
                }
                out.join(&self.unknown());
                Shape::Leaf(out.flatten())
            }
            Expr::Prim { op, args } => self.prim(id, *op, args),
            Expr::Array(items) => {
                let mut out = Shape::default();
                for (k, &i) in items.iter().enumerate() {
                    let s = self.eval(i);
                    if k == 0 {
                        out = s;
                    } else {
                        out.join(&s);
                    }
                }
                out
            }
            Expr::Index { array, index } => {
                let mut a = self.eval(*array);
                let i = self.eval(*index).flatten();
                let c = self.d.control(m, id, &i);
                a.join_leaves(&c);
                a
            }
        }
    }

    fn bind(&mut self, pat: &Pat, v: Shape<D::Fact>) {
        match pat {
            Pat::Var(x) => {
                self.env.insert(x.clone(), v);
            }
            Pat::Tuple(names) => {
                for (j, x) in names.iter().enumerate() {
                    let c = v.component(j as u32 + 1);
                    self.env.insert(x.clone(), c);
                }
            }
        }
    }

    /// The body of a function applied to arguments with these facts.
    fn apply(
        &mut self,
        params: &[Param],
        body: ExprId,
        args: Vec<Shape<D::Fact>>,
    ) -> Shape<D::Fact> {
        let mut args = args.into_iter();
        for p in params {
            let a = args.next().unwrap_or_default();
            self.env.insert(p.name.clone(), a);
        }
        self.eval(body)
    }

    /// The function argument `f` of an array builtin applied to these
    /// facts: its body when it is a lambda, else everything joined with
    /// what cannot be followed.
    fn call(&mut self, f: ExprId, args: Vec<Shape<D::Fact>>) -> Shape<D::Fact> {
        if let Some(Expr::Lambda { params, body }) = self.m.exprs.get(f.index()) {
            return self.apply(params, *body, args);
        }
        let mut out = self.eval(f);
        for a in &args {
            out.join(a);
        }
        out.join(&self.unknown());
        Shape::Leaf(out.flatten())
    }

    /// A fold's accumulator: the least fact `acc ⊒ init` stable under
    /// `acc ⊔ step(acc)`.
    fn fixpoint(
        &mut self,
        init: Shape<D::Fact>,
        mut step: impl FnMut(&mut Self, &Shape<D::Fact>) -> Shape<D::Fact>,
    ) -> Shape<D::Fact> {
        let mut acc = init;
        for _ in 0..MAX_ROUNDS {
            let mut next = acc.clone();
            next.join(&step(self, &acc));
            if next == acc {
                return acc;
            }
            acc = next;
        }
        acc.join(&self.unknown());
        acc
    }

    fn control_into(
        &mut self,
        at: ExprId,
        mut s: Shape<D::Fact>,
        of: &Shape<D::Fact>,
    ) -> Shape<D::Fact> {
        let c = self.d.control(self.m, at, &of.flatten());
        s.join_leaves(&c);
        s
    }

    fn prim(&mut self, id: ExprId, op: Prim, args: &[ExprId]) -> Shape<D::Fact> {
        let m = self.m;
        if args.len() != op.arity() {
            // Not core form (the verifier refuses it): nothing to follow.
            return self.unknown();
        }
        let arg = |k: usize| args[k];
        match op {
            Prim::Map => {
                let a = self.eval(arg(1));
                let r = self.call(arg(0), vec![a.clone()]);
                self.control_into(id, r, &a)
            }
            Prim::Map2 => {
                let a = self.eval(arg(1));
                let b = self.eval(arg(2));
                let r = self.call(arg(0), vec![a.clone(), b.clone()]);
                let mut both = a;
                both.join(&b);
                self.control_into(id, r, &both)
            }
            Prim::Reduce | Prim::Foldl | Prim::Scanl | Prim::Scanr => {
                let z = self.eval(arg(1));
                let a = self.eval(arg(2));
                let f = arg(0);
                let acc = match op {
                    // reduce may combine two partial results: both
                    // parameters are accumulators and elements.
                    Prim::Reduce => {
                        let mut init = z;
                        init.join(&a);
                        self.fixpoint(init, |e, acc| e.call(f, vec![acc.clone(), acc.clone()]))
                    }
                    Prim::Scanr => {
                        self.fixpoint(z, |e, acc| e.call(f, vec![a.clone(), acc.clone()]))
                    }
                    _ => self.fixpoint(z, |e, acc| e.call(f, vec![acc.clone(), a.clone()])),
                };
                self.control_into(id, acc, &a)
            }
            Prim::Ifold => {
                let z = self.eval(arg(1));
                let n = self.eval(arg(2));
                let i = Shape::Leaf(self.d.control(m, id, &n.flatten()));
                let f = arg(0);
                let acc = self.fixpoint(z, |e, acc| e.call(f, vec![acc.clone(), i.clone()]));
                self.control_into(id, acc, &n)
            }
            Prim::Build => {
                let n = self.eval(arg(0));
                let i = Shape::Leaf(self.d.control(m, id, &n.flatten()));
                let r = self.call(arg(1), vec![i]);
                self.control_into(id, r, &n)
            }
            Prim::Shift1L | Prim::Shift1R => self.eval(arg(0)),
            Prim::Length => {
                let a = self.eval(arg(0));
                Shape::Leaf(self.d.control(m, id, &a.flatten()))
            }
            _ if op.is_derivative_construct() => {
                let mut out = self.unknown();
                for &a in args {
                    let s = self.eval(a);
                    out.join(&s);
                }
                Shape::Leaf(out.flatten())
            }
            _ => {
                let facts: Vec<D::Fact> = args.iter().map(|&a| self.eval(a).flatten()).collect();
                Shape::Leaf(self.d.scalar(m, id, op, &facts))
            }
        }
    }
}

/// Whether a type holds a real somewhere (a gradient can flow through it).
pub fn holds_real(ty: &Ty) -> bool {
    match ty {
        Ty::Real => true,
        Ty::Int | Ty::Bool => false,
        Ty::Array(_, elem) => holds_real(elem),
        Ty::Tuple(items) => items.iter().any(holds_real),
        Ty::Func(_, ret) => holds_real(ret),
    }
}
