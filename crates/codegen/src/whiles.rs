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
    /// The C variable counting the trips.
    trips: &'a str,
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
        let trips = self.fresh("trips");
        self.w.line(format!("int64_t {trips} = 0;"));
        let l = WhileLoop {
            op,
            cond,
            body,
            ty,
            trips: &trips,
            span,
        };
        let state = if has_array(ty) {
            self.while_arrays(&l, z)?
        } else {
            self.while_scalars(&l, z)?
        };
        Ok(if op == Prim::Trips {
            Val::Scalar(Kind::Int, trips)
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
    ) -> Result<(Vec<String>, Flags, String, Val), Error> {
        let mut out = None;
        let (lines, flags) = self.capture(|cx| {
            let s = state(cx);
            let go = cx.apply(cond, vec![s.clone()], span)?;
            match go.scalar() {
                Some((Kind::Bool, e)) => {
                    out = Some((e.to_string(), s));
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

    /// Writes `for (;;) { cond; if (!go) break; body; trips++; }` with the
    /// arena reset after each iteration when it allocates.
    #[allow(clippy::too_many_arguments)]
    fn write_while(
        &mut self,
        cond_lines: Vec<String>,
        cond_flags: Flags,
        go: &str,
        body_lines: Vec<String>,
        body_flags: Flags,
        trips: &str,
    ) {
        let allocs = cond_flags.allocs || body_flags.allocs;
        self.w.open("for (;;)");
        let mark = allocs.then(|| self.fresh("mark"));
        if let Some(mark) = &mark {
            self.w
                .line(format!("const ad_mark {mark} = ad_mark_get(ctx);"));
        }
        self.w.splice(cond_lines);
        self.w.open(format!("if (!({go}))"));
        if let Some(mark) = &mark {
            self.w.line(format!("ad_reset(ctx, {mark});"));
        }
        self.w.line("break;");
        self.w.close();
        self.w.splice(body_lines);
        self.w.line(format!("{trips}++;"));
        if let Some(mark) = &mark {
            self.w.line(format!("ad_reset(ctx, {mark});"));
        }
        self.w.close();
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
        let dims: Vec<String> = dims
            .into_iter()
            .map(|d| self.let_var(Kind::Int, &d, "dim"))
            .collect();
        let cur = self.alloc_leaves_dims(ty, "1", &mut dims.iter(), span, Some(op))?;
        let next = self.alloc_leaves_dims(ty, "1", &mut dims.iter(), span, Some(op))?;
        self.store(&z, &cur, "0")?;
        // The pointers are swapped, so they must be variables.
        let (cur, next) = (self.pointer_vars(&cur), self.pointer_vars(&next));
        let (cond_lines, cond_flags, go, s) =
            self.condition(cond, |cx| cx.element(&cur, "0", true), span)?;
        let (body_lines, body_flags) = self.capture(|cx| {
            let v = cx.apply(body, vec![s], span)?;
            cx.step_buffers(v, &dims, &cur, &next, op, span)
        })?;
        self.write_while(cond_lines, cond_flags, &go, body_lines, body_flags, trips);
        Ok(self.element(&cur, "0", true))
    }
}
