//! `triangle-bound`: sums over the rows of a triangular matrix stop where
//! the row's zeros begin.
//!
//! A matrix built as `build n (fun j -> build m (fun i -> if i < j then e
//! else 0))` (GMM's `L`, the strictly lower triangle of each component) is
//! `+0` at every `i >= j`: its row `j` is zero from `j` on. The analysis
//! carries that fact from the `let` that builds the matrix to where it is
//! read, through `let`s, tuples, projections and the elements of `map` and
//! `map2` (GMM's matrix travels inside a tuple per component, zipped with
//! the means, into the map over the points). Where a `map2` runs over the
//! rows of such a matrix and its body sums a row against a vector,
//!
//! ```text
//! map2 (fun (r, p) -> .. reduce (+) 0 (map2 (*) r x) ..) T P
//!   ~> build (length T) (fun j -> let r = T[j] in let p = P[j] in
//!        .. reduce (+) 0 (build (min (j + c) (length r)) (fun i -> r[i] * x[i])) ..)
//! ```
//!
//! (`c = 1` for `i <= j`), the sum visits the row's nonzero prefix only:
//! half the products of a triangle, in the primal and in the reverse
//! pass's recomputation of it.
//!
//! Why the values are the same, bit for bit, when `x` is finite: `reduce
//! (+) 0` is a left fold from `+0` (the evaluator's and the C code's
//! default configuration's), over the same first terms in the same order. Each
//! skipped term is `+0 * x[i]`, which for a finite `x[i]` is `+0` or `-0`.
//! Adding either to an accumulator `s` gives `s` unless `s` is `-0` (then
//! `-0 + +0 = +0`), and the accumulator is never `-0`: it starts at `+0`,
//! and in round-to-nearest `a + b` is `-0` only when `a` and `b` both are
//! (an exact cancellation `a + (-a)` gives `+0`). So the skipped additions
//! change nothing. When some skipped `x[i]` is infinite or NaN the
//! original sum is NaN and the bounded one need not be: the rule is exact
//! on finite values, as `zero-mul` is (docs/optimize.md, "Where the rules
//! are unsound in IEEE arithmetic"). Like the other array rules it drops a
//! length check: `map2 (*) r x` of different lengths is an error, the
//! bounded sum reads `x` at the prefix's indices only (out of bounds there
//! is still an error).

use std::collections::{BTreeMap, HashMap};

use syntax::ir::NameGen;
use syntax::{Expr, ExprId, Module, Name, Param, Pat, Prim, Span, Ty, stack};

use crate::rules::{RuleName, RuleSet};

/// What is known about the zeros of a value.
#[derive(Debug, Clone)]
enum Fact {
    /// A matrix whose row `j` is `+0` at every index `i >= j + extra`.
    Triangle { extra: i64 },
    /// Row `j` of such a matrix, `j` the named index of the loop over it.
    Row { j: Name, extra: i64 },
    /// A tuple, with what is known of each component.
    Tuple(Vec<Option<Fact>>),
    /// An array each of whose elements has the fact.
    Elems(Box<Fact>),
}

/// What is known of an element of an array with fact `f`.
fn element(f: &Option<Fact>) -> Option<Fact> {
    match f {
        Some(Fact::Elems(e)) => Some((**e).clone()),
        _ => None,
    }
}

/// Applies the rule everywhere in `m`; records each bounded sum.
pub(crate) fn run(
    m: &mut Module,
    names: &mut Option<NameGen>,
    rules: RuleSet,
    fired: &mut BTreeMap<RuleName, usize>,
) {
    if !rules.contains(RuleName::TriangleBound) {
        return;
    }
    let mut pass = Pass {
        m,
        names,
        env: HashMap::new(),
        bounded: Vec::new(),
        count: 0,
    };
    for d in 0..pass.m.defs.len() {
        let root = pass.m.defs[d].body;
        let (body, _) = pass.walk(root);
        pass.m.defs[d].body = body;
    }
    if pass.count > 0 {
        *fired.entry(RuleName::TriangleBound).or_insert(0) += pass.count;
    }
}

struct Pass<'a> {
    m: &'a mut Module,
    names: &'a mut Option<NameGen>,
    /// The facts of the variables in scope (absent: nothing known).
    env: HashMap<Name, Fact>,
    /// The row indices a sum was bounded by, so far.
    bounded: Vec<Name>,
    /// How many sums were bounded.
    count: usize,
}

impl Pass<'_> {
    fn ty(&self, id: ExprId) -> Ty {
        self.m.types[id.index()].clone()
    }

    fn add(&mut self, e: Expr, ty: Ty, span: Span) -> ExprId {
        let id = self.m.add(e, span);
        self.m.types.push(ty);
        id
    }

    fn fresh(&mut self, base: &str) -> Name {
        let m = &*self.m;
        self.names.get_or_insert_with(|| m.name_gen()).fresh(base)
    }

    /// Binds `name` to `fact`, returning what it shadowed.
    fn bind(&mut self, name: &Name, fact: Option<Fact>) -> (Name, Option<Fact>) {
        let old = match fact {
            Some(f) => self.env.insert(name.clone(), f),
            None => self.env.remove(name),
        };
        (name.clone(), old)
    }

    fn restore(&mut self, saved: Vec<(Name, Option<Fact>)>) {
        for (name, old) in saved.into_iter().rev() {
            match old {
                Some(f) => self.env.insert(name, f),
                None => self.env.remove(&name),
            };
        }
    }

    /// The node rewritten, and what is known of its value.
    fn walk(&mut self, id: ExprId) -> (ExprId, Option<Fact>) {
        stack::guard(|| self.walk_node(id))
    }

    fn walk_node(&mut self, id: ExprId) -> (ExprId, Option<Fact>) {
        let e = self.m.expr(id).clone();
        let span = self.m.span(id);
        match e {
            Expr::Var(ref x) => (id, self.env.get(x).cloned()),
            Expr::Let {
                pat,
                ty,
                value,
                body,
            } => {
                let (v, fv) = self.walk(value);
                let saved = match &pat {
                    Pat::Var(x) => vec![self.bind(x, fv)],
                    Pat::Tuple(xs) => {
                        let parts = match fv {
                            Some(Fact::Tuple(fs)) if fs.len() == xs.len() => fs,
                            _ => vec![None; xs.len()],
                        };
                        xs.iter().zip(parts).map(|(x, f)| self.bind(x, f)).collect()
                    }
                };
                let (b, fb) = self.walk(body);
                self.restore(saved);
                let out = if (v, b) == (value, body) {
                    id
                } else {
                    let t = self.ty(id);
                    self.add(
                        Expr::Let {
                            pat,
                            ty,
                            value: v,
                            body: b,
                        },
                        t,
                        span,
                    )
                };
                (out, fb)
            }
            Expr::Tuple(items) => {
                let mut facts = Vec::new();
                let mut out = Vec::new();
                for it in &items {
                    let (n, f) = self.walk(*it);
                    out.push(n);
                    facts.push(f);
                }
                let new = if out == items {
                    id
                } else {
                    let t = self.ty(id);
                    self.add(Expr::Tuple(out), t, span)
                };
                (new, Some(Fact::Tuple(facts)))
            }
            Expr::Proj { tuple, index } => {
                let (t, f) = self.walk(tuple);
                let fact = match f {
                    Some(Fact::Tuple(fs)) => fs.get(index as usize - 1).cloned().flatten(),
                    _ => None,
                };
                let new = if t == tuple {
                    id
                } else {
                    let ty = self.ty(id);
                    self.add(Expr::Proj { tuple: t, index }, ty, span)
                };
                (new, fact)
            }
            Expr::Lambda { params, body } => (self.lambda(id, &params, body, Vec::new()), None),
            Expr::Prim {
                op: op @ (Prim::Map | Prim::Map2),
                ref args,
            } => self.map(id, op, args),
            Expr::Prim {
                op: Prim::Build,
                ref args,
            } => {
                let fact = triangle(self.m, args[1]).map(|extra| Fact::Triangle { extra });
                (self.children(id), fact)
            }
            Expr::Prim {
                op: Prim::Reduce, ..
            } => {
                let new = self.children(id);
                (self.bound_sum(new).unwrap_or(new), None)
            }
            _ => (self.children(id), None),
        }
    }

    /// The node with its children walked (no binders of its own).
    fn children(&mut self, id: ExprId) -> ExprId {
        let e = self.m.expr(id).clone();
        let new = e.map_children(|c| self.walk(c).0);
        if new == e {
            return id;
        }
        let (t, span) = (self.ty(id), self.m.span(id));
        self.add(new, t, span)
    }

    /// A lambda walked with its parameters bound to `facts` (missing ones
    /// unknown).
    fn lambda(&mut self, id: ExprId, params: &[Param], body: ExprId, facts: Vec<Fact>) -> ExprId {
        let mut facts = facts.into_iter().map(Some).collect::<Vec<_>>();
        facts.resize(params.len(), None);
        let saved = params
            .iter()
            .zip(facts)
            .map(|(p, f)| self.bind(&p.name, f))
            .collect();
        let (b, _) = self.walk(body);
        self.restore(saved);
        if b == body {
            return id;
        }
        let (t, span) = (self.ty(id), self.m.span(id));
        let params = params.to_vec();
        self.add(Expr::Lambda { params, body: b }, t, span)
    }

    /// `map f A` or `map2 f A B`: the elements' facts reach `f`'s
    /// parameters; a `map2` over a triangle's rows whose body had a sum
    /// bounded becomes a `build` over the row index.
    fn map(&mut self, id: ExprId, op: Prim, args: &[ExprId]) -> (ExprId, Option<Fact>) {
        let mut arrays = Vec::new();
        let mut facts = Vec::new();
        let mut first = None;
        for &a in &args[1..] {
            let (n, f) = self.walk(a);
            arrays.push(n);
            facts.push(element(&f));
            first.get_or_insert(f);
        }
        let Expr::Lambda { params, body } = self.m.expr(args[0]).clone() else {
            let f = self.walk(args[0]).0;
            return (self.rebuild_prim(id, op, f, arrays), None);
        };
        let span = self.m.span(id);
        let over_rows = match first.flatten() {
            Some(Fact::Triangle { extra }) if op == Prim::Map2 && params.len() == 2 => Some(extra),
            _ => None,
        };
        if let Some(extra) = over_rows {
            let j = self.fresh("j");
            let mark = self.bounded.len();
            let row = Fact::Row {
                j: j.clone(),
                extra,
            };
            let rest = facts[1].take();
            let saved = vec![
                self.bind(&params[0].name, Some(row)),
                self.bind(&params[1].name, rest),
            ];
            let (b, fb) = self.walk(body);
            self.restore(saved);
            let used = self.bounded[mark..].contains(&j);
            self.bounded.truncate(mark);
            if used {
                let out = self.build_over_rows(id, &params, b, &arrays, j, span);
                return (out, fb.map(|f| Fact::Elems(Box::new(f))));
            }
            let f = if b == body {
                args[0]
            } else {
                let t = self.ty(args[0]);
                self.add(Expr::Lambda { params, body: b }, t, span)
            };
            return (self.rebuild_prim(id, op, f, arrays), None);
        }
        let saved = params
            .iter()
            .zip(facts)
            .map(|(p, f)| self.bind(&p.name, f))
            .collect();
        let (b, fb) = self.walk(body);
        self.restore(saved);
        let f = if b == body {
            args[0]
        } else {
            let t = self.ty(args[0]);
            self.add(Expr::Lambda { params, body: b }, t, span)
        };
        (
            self.rebuild_prim(id, op, f, arrays),
            fb.map(|f| Fact::Elems(Box::new(f))),
        )
    }

    fn rebuild_prim(&mut self, id: ExprId, op: Prim, f: ExprId, arrays: Vec<ExprId>) -> ExprId {
        let mut args = vec![f];
        args.extend(arrays);
        let new = Expr::Prim { op, args };
        if &new == self.m.expr(id) {
            return id;
        }
        let (t, span) = (self.ty(id), self.m.span(id));
        self.add(new, t, span)
    }

    /// `build (length T) (fun j -> let r = T[j] in let p = P[j] in body)`
    /// for `map2 (fun (r, p) -> body) T P`. An array that is not a name,
    /// a projection of one or a map of such is bound by a `let` outside
    /// the loop, so that it is computed once; a map of names is indexed
    /// in place, which the next round turns into its body at `j`
    /// (`map-fusion`) instead of writing the array out.
    fn build_over_rows(
        &mut self,
        id: ExprId,
        params: &[Param],
        body: ExprId,
        arrays: &[ExprId],
        j: Name,
        span: Span,
    ) -> ExprId {
        let ty = self.ty(id);
        let elem = match &ty {
            Ty::Array(_, e) => (**e).clone(),
            _ => unreachable!("a map2 is an array"),
        };
        let mut outer = Vec::new();
        let mut reads = Vec::new();
        for (k, &a) in arrays.iter().enumerate() {
            // The rows are read twice (their count, each row): only a
            // name or a projection is copied.
            let in_place = if k == 0 {
                atom(self.m, a)
            } else {
                indexable_in_place(self.m, a)
            };
            if in_place {
                reads.push(a);
            } else {
                let t = self.fresh("t");
                let at = self.ty(a);
                outer.push((t.clone(), a));
                reads.push(self.add(Expr::Var(t), at, span));
            }
        }
        let mut inner = body;
        for (p, &a) in params.iter().zip(&reads).rev() {
            let at = self.ty(a);
            let ety = match at {
                Ty::Array(_, e) => (*e).clone(),
                _ => unreachable!("a map2's argument is an array"),
            };
            let jv = self.add(Expr::Var(j.clone()), Ty::Int, span);
            let at_j = self.add(
                Expr::Index {
                    array: a,
                    index: jv,
                },
                ety,
                span,
            );
            let bty = self.ty(inner);
            inner = self.add(
                Expr::Let {
                    pat: Pat::Var(p.name.clone()),
                    ty: None,
                    value: at_j,
                    body: inner,
                },
                bty,
                span,
            );
        }
        let f = self.add(
            Expr::Lambda {
                params: vec![Param {
                    name: j,
                    ty: Some(Ty::Int),
                    span,
                }],
                body: inner,
            },
            Ty::Func(vec![Ty::Int], Box::new(elem)),
            span,
        );
        let rows = self.copy_atom(reads[0]);
        let len = self.add(
            Expr::Prim {
                op: Prim::Length,
                args: vec![rows],
            },
            Ty::Int,
            span,
        );
        let mut out = self.add(
            Expr::Prim {
                op: Prim::Build,
                args: vec![len, f],
            },
            ty.clone(),
            span,
        );
        for (t, a) in outer.into_iter().rev() {
            out = self.add(
                Expr::Let {
                    pat: Pat::Var(t),
                    ty: None,
                    value: a,
                    body: out,
                },
                ty.clone(),
                span,
            );
        }
        out
    }

    /// `reduce (+) 0 (map2 (*) r x)` with `r` a row of a triangle and `x`
    /// a name ~> `reduce (+) 0 (build (min (j + c) (length r)) (fun i ->
    /// r[i] * x[i]))` (also `x` first, the product in the lambda's order).
    /// Still a `reduce` of `(+)`: the C backend fuses the `build` into it
    /// and, in its `reassociate` configuration, vectorizes it as before.
    fn bound_sum(&mut self, id: ExprId) -> Option<ExprId> {
        let Expr::Prim { args, .. } = self.m.expr(id).clone() else {
            return None;
        };
        let [f, z, a] = args.as_slice() else {
            return None;
        };
        if binop(self.m, *f)? != (Prim::Add, false)
            || !matches!(self.m.expr(*z), Expr::Real(c) if *c == 0.0 && c.is_sign_positive())
            || self.ty(id) != Ty::Real
        {
            return None;
        }
        let Expr::Prim {
            op: Prim::Map2,
            args: margs,
        } = self.m.expr(*a).clone()
        else {
            return None;
        };
        let (mul, swapped) = binop(self.m, margs[0])?;
        if mul != Prim::Mul {
            return None;
        }
        let (Expr::Var(u), Expr::Var(v)) = (self.m.expr(margs[1]), self.m.expr(margs[2])) else {
            return None;
        };
        let row_of = |n: &Name| match self.env.get(n) {
            Some(Fact::Row { j, extra }) => Some((j.clone(), *extra)),
            _ => None,
        };
        let (row, (j, extra)) = match (row_of(u), row_of(v)) {
            (Some(r), _) => (margs[1], r),
            (None, Some(r)) => (margs[2], r),
            (None, None) => return None,
        };
        let span = self.m.span(id);
        let i = self.fresh("i");
        let read = |p: &mut Self, arr: ExprId| {
            let iv = p.add(Expr::Var(i.clone()), Ty::Int, span);
            p.add(
                Expr::Index {
                    array: arr,
                    index: iv,
                },
                Ty::Real,
                span,
            )
        };
        let (first, second) = (self.copy_atom(margs[1]), self.copy_atom(margs[2]));
        let (x, y) = (read(self, first), read(self, second));
        let (x, y) = if swapped { (y, x) } else { (x, y) };
        let prod = self.add(
            Expr::Prim {
                op: Prim::Mul,
                args: vec![x, y],
            },
            Ty::Real,
            span,
        );
        let term = self.add(
            Expr::Lambda {
                params: vec![Param {
                    name: i,
                    ty: Some(Ty::Int),
                    span,
                }],
                body: prod,
            },
            Ty::Func(vec![Ty::Int], Box::new(Ty::Real)),
            span,
        );
        let row = self.copy_atom(row);
        let bound = self.prefix(row, &j, extra, span);
        let terms = self.add(
            Expr::Prim {
                op: Prim::Build,
                args: vec![bound, term],
            },
            Ty::array(syntax::Size::Dyn, Ty::Real),
            span,
        );
        self.bounded.push(j);
        self.count += 1;
        Some(self.add(
            Expr::Prim {
                op: Prim::Reduce,
                args: vec![*f, *z, terms],
            },
            Ty::Real,
            span,
        ))
    }

    /// A new node equal to the atom `a` (a name or projections of one):
    /// every node of the program has one parent.
    fn copy_atom(&mut self, a: ExprId) -> ExprId {
        let (t, span) = (self.ty(a), self.m.span(a));
        let e = match self.m.expr(a).clone() {
            Expr::Proj { tuple, index } => Expr::Proj {
                tuple: self.copy_atom(tuple),
                index,
            },
            e => e,
        };
        self.add(e, t, span)
    }

    /// `if j + extra < length row then j + extra else length row`: where row `j`'s zeros begin, within
    /// the row.
    fn prefix(&mut self, row: ExprId, j: &Name, extra: i64, span: Span) -> ExprId {
        let mut start = self.add(Expr::Var(j.clone()), Ty::Int, span);
        if extra != 0 {
            let c = self.add(Expr::Int(extra), Ty::Int, span);
            start = self.add(
                Expr::Prim {
                    op: Prim::Add,
                    args: vec![start, c],
                },
                Ty::Int,
                span,
            );
        }
        let len = self.add(
            Expr::Prim {
                op: Prim::Length,
                args: vec![row],
            },
            Ty::Int,
            span,
        );
        // `min`, written as a conditional: names and literals only, so
        // each is copied.
        let copy = |p: &mut Self, a: ExprId| -> ExprId {
            let e = p.m.expr(a).clone();
            match e {
                Expr::Prim { op, args } => {
                    let args = args.iter().map(|&x| p.copy_atom(x)).collect();
                    p.add(Expr::Prim { op, args }, Ty::Int, span)
                }
                _ => p.copy_atom(a),
            }
        };
        let (s2, l2) = (copy(self, start), copy(self, len));
        let cond = self.add(
            Expr::Prim {
                op: Prim::Lt,
                args: vec![s2, l2],
            },
            Ty::Bool,
            span,
        );
        self.add(
            Expr::If {
                cond,
                then_branch: start,
                else_branch: len,
            },
            Ty::Int,
            span,
        )
    }
}

/// The operator of `fun (a, b) -> a op b` and whether the operands are
/// swapped (`b op a`).
fn binop(m: &Module, f: ExprId) -> Option<(Prim, bool)> {
    let Expr::Lambda { params, body } = m.expr(f) else {
        return None;
    };
    let [p, q] = params.as_slice() else {
        return None;
    };
    let Expr::Prim { op, args } = m.expr(*body) else {
        return None;
    };
    let [x, y] = args.as_slice() else {
        return None;
    };
    let (Expr::Var(x), Expr::Var(y)) = (m.expr(*x), m.expr(*y)) else {
        return None;
    };
    if *x == p.name && *y == q.name {
        Some((*op, false))
    } else if *x == q.name && *y == p.name {
        Some((*op, true))
    } else {
        None
    }
}

/// Whether reading `a` at an index inside a loop costs no more than the
/// element: a name, a projection of one, or a map of those (fused into
/// its body at the index by the next round).
fn indexable_in_place(m: &Module, a: ExprId) -> bool {
    match m.expr(a) {
        Expr::Prim {
            op: Prim::Map | Prim::Map2,
            args,
        } => args[1..].iter().all(|&x| atom(m, x)),
        _ => atom(m, a),
    }
}

fn atom(m: &Module, a: ExprId) -> bool {
    match m.expr(a) {
        Expr::Var(_) => true,
        Expr::Proj { tuple, .. } => atom(m, *tuple),
        _ => false,
    }
}

/// `fun j -> build m (fun i -> if i < j then e else 0)` and its variants:
/// `c` such that row `j` is `+0` at every `i >= j + c`.
fn triangle(m: &Module, f: ExprId) -> Option<i64> {
    let Expr::Lambda { params, body } = m.expr(f) else {
        return None;
    };
    let [jp] = params.as_slice() else {
        return None;
    };
    let Expr::Prim {
        op: Prim::Build,
        args,
    } = m.expr(*body)
    else {
        return None;
    };
    let Expr::Lambda { params, body } = m.expr(args[1]) else {
        return None;
    };
    let [ip] = params.as_slice() else {
        return None;
    };
    let Expr::If {
        cond,
        then_branch,
        else_branch,
    } = m.expr(*body)
    else {
        return None;
    };
    let zero = |e: ExprId| matches!(m.expr(e), Expr::Real(c) if *c == 0.0 && c.is_sign_positive());
    // The relation under which the element is not the literal zero.
    let negate = match (zero(*then_branch), zero(*else_branch)) {
        (false, true) => false,
        (true, false) => true,
        _ => return None,
    };
    let Expr::Prim { op, args } = m.expr(*cond) else {
        return None;
    };
    let [a, b] = args.as_slice() else {
        return None;
    };
    let (Expr::Var(a), Expr::Var(b)) = (m.expr(*a), m.expr(*b)) else {
        return None;
    };
    let (i, j) = (&ip.name, &jp.name);
    if i == j {
        return None;
    }
    // As a relation `i R j`.
    let rel = if a == i && b == j {
        *op
    } else if a == j && b == i {
        match op {
            Prim::Lt => Prim::Gt,
            Prim::Le => Prim::Ge,
            Prim::Gt => Prim::Lt,
            Prim::Ge => Prim::Le,
            _ => return None,
        }
    } else {
        return None;
    };
    let rel = if negate {
        match rel {
            Prim::Lt => Prim::Ge,
            Prim::Le => Prim::Gt,
            Prim::Gt => Prim::Le,
            Prim::Ge => Prim::Lt,
            _ => return None,
        }
    } else {
        rel
    };
    match rel {
        Prim::Lt => Some(0),
        Prim::Le => Some(1),
        _ => None,
    }
}
