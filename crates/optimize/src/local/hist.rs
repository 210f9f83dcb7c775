//! `hist-interchange`: a `build` over the columns of histograms of one
//! pass each becomes one histogram of rows, so the pass over the elements
//! runs once instead of once per column (docs/optimize.md, kmeans, items
//! 3 and 4). Reverse mode writes this shape for the gradient of a loop
//! over points reading whole rows of a matrix: per column c,
//! `hist_add 0 idx (map (fun t -> F t c) G)`.
//!
//! ```text
//! build N (fun c -> E[hist_add Z I (map (fun t -> F) G), ..])
//!   ~> let D = N in
//!      let H = hist_add_rows (map (fun z -> build D (fun _ -> z)) Z) I
//!                (map (fun t -> build D (fun c' -> F[c'/c])) G) in ..
//!      build D (fun c -> E[map (fun r -> r[c]) H, ..])
//! ```
//!
//! with Z, I, G free of c and of the body's own `let`s, F reading c, and
//! each histogram evaluated once per column (not under a lambda or in a
//! branch of the body: kmeans' `map2` pairing two of them). Each bin of H sums its elements in order, as each
//! column's histogram did, so the sums are the original's bit for bit.
//! F is evaluated element by element instead of column by column (of
//! several failing elements another may be reported first), and the
//! check that I and the values have one length runs even when N is 0.

use syntax::{Expr, ExprId, Name, Param, Pat, Prim, Size, Span, Ty};

use crate::rules::RuleName;
use crate::simplify::Round;

/// A histogram of the body to move out: `hist_add Z I (map (fun t -> F) G)`.
struct Col {
    node: ExprId,
    dest: ExprId,
    idx: ExprId,
    /// The `map` lambda's parameter and body.
    t: Param,
    f: ExprId,
    g: ExprId,
}

impl Round<'_> {
    /// `hist-interchange` at `build n lam`.
    pub(super) fn hist_interchange(&mut self, id: ExprId, args: &[ExprId]) -> Option<ExprId> {
        if !self.on(RuleName::HistInterchange) {
            return None;
        }
        let &[n, lam] = args else { return None };
        let Expr::Lambda { params, body } = self.node(lam) else {
            return None;
        };
        let [c] = params.as_slice() else { return None };
        let cols = self.columns(body, &c.name)?;
        self.fire(RuleName::HistInterchange);
        let span = self.m.span(id);
        let int = Ty::Int;
        let d = self.fresh("D");
        let dv = |cx: &mut Self| cx.add(Expr::Var(d.clone()), Ty::Int, span);
        let mut lets = Vec::new();
        let mut new_body = body;
        for col in &cols {
            let dty = self.ty(col.dest);
            let Ty::Array(m, elem) = &dty else {
                return None;
            };
            let (m, elem) = (m.clone(), (**elem).clone());
            let row = Ty::array(Size::Dyn, elem.clone());
            // map (fun z -> build D (fun _ -> z)) Z
            let z = self.fresh("z");
            let w = self.fresh("w");
            let zv = self.add(Expr::Var(z.clone()), elem.clone(), span);
            let konst = self.mk_lambda(vec![(w, int.clone())], zv, elem.clone(), span);
            let dn = dv(self);
            let zrow = self.mk_prim(Prim::Build, vec![dn, konst], row.clone(), span);
            let zf = self.mk_lambda(vec![(z, elem.clone())], zrow, row.clone(), span);
            let dest = self.mk_prim(
                Prim::Map,
                vec![zf, col.dest],
                Ty::array(m.clone(), row.clone()),
                span,
            );
            // map (fun t -> build D (fun c' -> F[c'/c])) G
            let c2 = self.fresh(c.name.as_str());
            let f = self.renamed(col.f, &c.name, &c2);
            let fl = self.mk_lambda(vec![(c2, int.clone())], f, elem.clone(), span);
            let dn = dv(self);
            let vrow = self.mk_prim(Prim::Build, vec![dn, fl], row.clone(), span);
            let tty = col.t.ty.clone()?;
            let vf = self.mk_lambda(vec![(col.t.name.clone(), tty)], vrow, row.clone(), span);
            let Ty::Array(gn, _) = self.ty(col.g) else {
                return None;
            };
            let vals = self.mk_prim(Prim::Map, vec![vf, col.g], Ty::array(gn, row.clone()), span);
            let hty = Ty::array(m.clone(), row.clone());
            let h = self.mk_prim(
                Prim::HistAddRows,
                vec![dest, col.idx, vals],
                hty.clone(),
                span,
            );
            let hn = self.fresh("H");
            lets.push((hn.clone(), h));
            // map (fun r -> r[c]) H, where the histogram was.
            let r = self.fresh("r");
            let rv = self.add(Expr::Var(r.clone()), row.clone(), span);
            let cv = self.add(Expr::Var(c.name.clone()), int.clone(), span);
            let read = self.add(
                Expr::Index {
                    array: rv,
                    index: cv,
                },
                elem.clone(),
                span,
            );
            let rf = self.mk_lambda(vec![(r, row)], read, elem.clone(), span);
            let hv = self.add(Expr::Var(hn), hty, span);
            let col_read = self.mk_prim(Prim::Map, vec![rf, hv], Ty::array(m, elem), span);
            new_body = self.with_child(new_body, col.node, col_read);
        }
        let new_lam = self.add(
            Expr::Lambda {
                params: params.clone(),
                body: new_body,
            },
            self.ty(lam),
            self.m.span(lam),
        );
        let dn = dv(self);
        let ty = self.ty(id);
        let mut out = self.mk_prim(Prim::Build, vec![dn, new_lam], ty.clone(), span);
        lets.insert(0, (d, n));
        for (x, v) in lets.into_iter().rev() {
            out = self.add(
                Expr::Let {
                    pat: Pat::Var(x),
                    ty: None,
                    value: v,
                    body: out,
                },
                ty.clone(),
                span,
            );
        }
        Some(out)
    }

    /// The histograms to move out of the body of `build n (fun c ->
    /// body)`: those evaluated once per c (not under a lambda or in a
    /// branch of a conditional) whose other free names are bound outside
    /// the body; `None` if there are none.
    fn columns(&self, body: ExprId, c: &Name) -> Option<Vec<Col>> {
        let mut cols = Vec::new();
        let mut local = Vec::new();
        self.collect_columns(body, c, &mut local, &mut cols);
        (!cols.is_empty()).then_some(cols)
    }

    fn collect_columns(&self, id: ExprId, c: &Name, local: &mut Vec<Name>, out: &mut Vec<Col>) {
        syntax::stack::guard(|| {
            if let Some(col) = self.column(id, c) {
                if !local.iter().any(|x| self.occurs(x, id)) {
                    out.push(col);
                }
                return;
            }
            match self.m.expr(id) {
                Expr::Lambda { .. } => {}
                Expr::If { cond, .. } => self.collect_columns(*cond, c, local, out),
                Expr::Let {
                    pat, value, body, ..
                } => {
                    self.collect_columns(*value, c, local, out);
                    pat_names(pat, local);
                    self.collect_columns(*body, c, local, out);
                }
                e => e.for_each_child(|ch| self.collect_columns(ch, c, local, out)),
            }
        })
    }

    /// `hist_add Z I (map (fun t -> F) G)` with Z, I, G free of c and
    /// scalar bins.
    fn column(&self, id: ExprId, c: &Name) -> Option<Col> {
        let Expr::Prim {
            op: Prim::HistAdd,
            args,
        } = self.m.expr(id)
        else {
            return None;
        };
        let &[dest, idx, vals] = args.as_slice() else {
            return None;
        };
        if !matches!(self.ty(dest), Ty::Array(_, e) if matches!(*e, Ty::Real | Ty::Int)) {
            return None;
        }
        let Expr::Prim {
            op: Prim::Map,
            args: margs,
        } = self.m.expr(vals)
        else {
            return None;
        };
        let Expr::Lambda { params, body } = self.m.expr(margs[0]) else {
            return None;
        };
        let [t] = params.as_slice() else { return None };
        let g = margs[1];
        if self.occurs(c, dest)
            || self.occurs(c, idx)
            || self.occurs(c, g)
            || !self.occurs(c, *body)
        {
            return None;
        }
        Some(Col {
            node: id,
            dest,
            idx,
            t: t.clone(),
            f: *body,
            g,
        })
    }

    /// A copy of the tree under `id` with the variable `from` read as `to`.
    fn renamed(&mut self, id: ExprId, from: &Name, to: &Name) -> ExprId {
        syntax::stack::guard(|| {
            let e = self.node(id);
            let (ty, span) = (self.ty(id), self.m.span(id));
            if matches!(&e, Expr::Var(v) if v == from) {
                return self.add(Expr::Var(to.clone()), ty, span);
            }
            let e = e.map_children(|ch| self.renamed(ch, from, to));
            self.add(e, ty, span)
        })
    }

    /// A copy of the tree `root` with the node `old` (evaluated once per
    /// column, so on a path of lets, conditions and builtins) replaced by
    /// `new`; the nodes off the path are shared, not copied.
    fn with_child(&mut self, root: ExprId, old: ExprId, new: ExprId) -> ExprId {
        if root == old {
            return new;
        }
        if !self.contains(root, old) {
            return root;
        }
        syntax::stack::guard(|| {
            let e = self
                .node(root)
                .map_children(|ch| self.with_child(ch, old, new));
            let (ty, span) = (self.ty(root), self.m.span(root));
            self.add(e, ty, span)
        })
    }

    /// Whether the node `x` is in the tree under `id`.
    fn contains(&self, id: ExprId, x: ExprId) -> bool {
        let mut stack = vec![id];
        while let Some(i) = stack.pop() {
            if i == x {
                return true;
            }
            self.m.expr(i).for_each_child(|ch| stack.push(ch));
        }
        false
    }

    fn mk_prim(&mut self, op: Prim, args: Vec<ExprId>, ty: Ty, span: Span) -> ExprId {
        self.add(Expr::Prim { op, args }, ty, span)
    }

    fn mk_lambda(&mut self, params: Vec<(Name, Ty)>, body: ExprId, ret: Ty, span: Span) -> ExprId {
        let ptys = params.iter().map(|(_, t)| t.clone()).collect();
        let params = params
            .into_iter()
            .map(|(name, ty)| Param {
                name,
                ty: Some(ty),
                span,
            })
            .collect();
        self.add(
            Expr::Lambda { params, body },
            Ty::Func(ptys, Box::new(ret)),
            span,
        )
    }
}

/// The names a pattern binds.
fn pat_names(p: &Pat, out: &mut Vec<Name>) {
    match p {
        Pat::Var(x) => out.push(x.clone()),
        Pat::Tuple(items) => out.extend(items.iter().cloned()),
    }
}
