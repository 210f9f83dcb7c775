//! `while c b z` and `trips c b z` as a C loop (docs/codegen.md):
//!
//! ```c
//! int64_t trips = 0;
//! for (;;) {
//!   mark = ad_mark_get(ctx);            // when the loop allocates
//!   ... go = c(state) ...
//!   if (!go) { ad_reset(ctx, mark); break; }
//!   ... state = b(state) ...; trips++;
//!   ad_reset(ctx, mark);
//! }
//! ```
//!
//! A state of scalars lives in mutable variables (as a fold's
//! accumulator); a state holding arrays in two buffer sets, the current
//! and the next, swapped after each step, the sizes checked to stay those
//! of the initial state. Every iteration evaluates the condition and then
//! the body, in the evaluator's order, with the same operations: the
//! result is the evaluator's bit for bit.

use syntax::{Prim, Span, Ty};

use crate::arrays::dims_of;
use crate::error::Error;
use crate::imp::{BinOp, Block, Expr as E, Stmt, UnOp, VarId};
use crate::layout::{Kind, has_array, scalar_kinds};
use crate::lower::{Flags, Lowerer};
use crate::streams::scalars;
use crate::val::{Func, Val};

/// What a `while` loop is compiled from.
#[derive(Clone, Copy)]
struct WhileLoop<'a> {
    op: Prim,
    cond: &'a Func,
    body: &'a Func,
    /// The state's type.
    ty: &'a Ty,
    /// The variable counting the trips.
    trips: VarId,
    span: Span,
}

impl Lowerer<'_> {
    /// `while` (the final state) or `trips` (the number of iterations),
    /// with a state of type `ty`.
    pub(crate) fn while_loop(
        &mut self,
        op: Prim,
        cond: &Func,
        body: &Func,
        z: Val,
        ty: &Ty,
        span: Span,
    ) -> Result<Val, Error> {
        let trips = self.mut_var(Kind::Int, Some(E::I64(0)), "trips");
        let l = WhileLoop {
            op,
            cond,
            body,
            ty,
            trips,
            span,
        };
        let state = if has_array(ty) {
            self.while_arrays(&l, z)?
        } else {
            self.while_scalars(&l, z)?
        };
        Ok(if op == Prim::Trips {
            Val::Scalar(Kind::Int, E::Var(trips))
        } else {
            state
        })
    }

    /// The condition applied to `state`, captured: its lines, what they do
    /// and the C expression of its value.
    fn condition(
        &mut self,
        cond: &Func,
        state: impl FnOnce(&mut Self) -> Val,
        span: Span,
    ) -> Result<(Block, Flags, E, Val), Error> {
        let mut out = None;
        let (lines, flags) = self.capture(|cx| {
            let s = state(cx);
            let go = cx.apply(cond, vec![s.clone()], span)?;
            match go.scalar() {
                Some((Kind::Bool, e)) => {
                    out = Some((e.clone(), s));
                    Ok(())
                }
                _ => Err(Error::core(
                    span,
                    "a `while` condition that is not a boolean",
                )),
            }
        })?;
        let (go, s) = out.ok_or_else(|| Error::core(span, "a `while` without a condition"))?;
        Ok((lines, flags, go, s))
    }

    /// Writes `loop { cond; if !go { break } body; trips += 1 }`, in a
    /// region when it allocates (a `break` releases it too).
    #[allow(clippy::too_many_arguments)]
    fn write_while(
        &mut self,
        cond_lines: Block,
        cond_flags: Flags,
        go: &E,
        body_lines: Block,
        body_flags: Flags,
        trips: VarId,
    ) {
        let mut block = cond_lines;
        block.push(Stmt::If {
            cond: E::Unary(UnOp::Not, Box::new(go.clone())),
            then: vec![Stmt::Break],
            els: Vec::new(),
        });
        block.extend(body_lines);
        block.push(Stmt::Set {
            place: crate::imp::Place::Var(trips),
            value: E::bin(BinOp::Add, E::Var(trips), E::I64(1)),
        });
        let flags = Flags {
            allocs: cond_flags.allocs || body_flags.allocs,
            ..Flags::default()
        };
        let body = self.body_block(block, flags, None);
        self.w.push(Stmt::Loop { body });
    }

    /// A state of scalars, in mutable variables.
    fn while_scalars(&mut self, l: &WhileLoop<'_>, z: Val) -> Result<Val, Error> {
        let WhileLoop {
            op,
            cond,
            body,
            ty,
            trips,
            span,
        } = *l;
        let kinds = scalar_kinds(ty);
        let mut zs = Vec::new();
        scalars(&z, &mut zs);
        if zs.len() != kinds.len() {
            return Err(Error::core(
                span,
                format!("`{op}` with an initial state of another type"),
            ));
        }
        let (vars, state) = self.scalar_vars(&z, &kinds, &zs, "state");
        let (cond_lines, cond_flags, go, s) = self.condition(cond, |_| state.clone(), span)?;
        let (body_lines, body_flags) = self.capture(|cx| {
            let v = cx.apply(body, vec![s], span)?;
            cx.update(&vars, &kinds, &v, span)
        })?;
        self.write_while(cond_lines, cond_flags, &go, body_lines, body_flags, trips);
        Ok(state)
    }

    /// A state holding arrays: two buffer sets swapped after each step.
    fn while_arrays(&mut self, l: &WhileLoop<'_>, z: Val) -> Result<Val, Error> {
        let WhileLoop {
            op,
            cond,
            body,
            ty,
            trips,
            span,
        } = *l;
        let z = self.materialize_val(z)?;
        let mut dims = Vec::new();
        dims_of(&z, &mut dims);
        let dims: Vec<E> = dims
            .into_iter()
            .map(|d| E::Var(self.let_var(Kind::Int, d, "dim")))
            .collect();
        let (one, zero) = (E::I64(1), E::I64(0));
        let cur = self.alloc_leaves_dims(ty, &one, &mut dims.iter(), span, Some(op))?;
        let next = self.alloc_leaves_dims(ty, &one, &mut dims.iter(), span, Some(op))?;
        self.store(&z, &cur, &zero)?;
        // The pointers are swapped, so they must be variables.
        let (cur, next) = (self.pointer_vars(&cur), self.pointer_vars(&next));
        let (cond_lines, cond_flags, go, s) =
            self.condition(cond, |cx| cx.element(&cur, &E::I64(0), true), span)?;
        let (body_lines, body_flags) = self.capture(|cx| {
            let v = cx.apply(body, vec![s], span)?;
            cx.step_buffers(v, &dims, &cur, &next, op, span)
        })?;
        self.write_while(cond_lines, cond_flags, &go, body_lines, body_flags, trips);
        Ok(self.element(&cur, &zero, true))
    }
}
