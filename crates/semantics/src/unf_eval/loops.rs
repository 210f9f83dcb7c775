//! Evaluation of the UNF primitives beyond the paper's core: the loops
//! (`foldl`, general `reduce`, the scans, `ifold`, `build`), indexing and
//! the shifts, with their transposed Jacobians applied numerically.
//!
//! This is the second implementation of these transposes (`unf::raise`
//! writes them as Target terms with scans that carry cotangents). Here
//! each is the plain backward loop over the unrolled program (Section 7.3's
//! recipe): the body's reverse derivative is run on each element, last to
//! first for a left fold, with the cotangent of the accumulator carried
//! from one element to the next.

use syntax::{Prim as P, Span};
use unf::LoopKind;

use super::scalar::{add, zeros_like};
use super::{Eval, Slot, internal, room, type_error};
use crate::error::Error;
use crate::value::Value;

/// `a[i]`, with the run-time bounds check.
pub(super) fn index(a: &Value, i: &Value, span: Span) -> Result<Value, Error> {
    let (items, k) = array_and_index(a, i, span)?;
    Ok(items[k].clone())
}

fn array_and_index<'v>(a: &'v Value, i: &Value, span: Span) -> Result<(&'v [Value], usize), Error> {
    let items = a
        .as_array()
        .ok_or_else(|| type_error(span, format!("indexing {}", a.kind())))?;
    let k = i
        .as_int()
        .ok_or_else(|| type_error(span, format!("an index that is {}", i.kind())))?;
    match usize::try_from(k) {
        Ok(u) if u < items.len() => Ok((items, u)),
        _ => Err(Error::IndexOutOfBounds {
            span,
            index: k,
            len: items.len(),
        }),
    }
}

/// The transpose of `a[i]`: z at position i of a zero array shaped as `a`.
pub(super) fn jt_index(a: &Value, i: &Value, z: &Value, span: Span) -> Result<Value, Error> {
    let (items, k) = array_and_index(a, i, span)?;
    let out: Vec<Value> = items
        .iter()
        .enumerate()
        .map(|(j, x)| if j == k { z.clone() } else { zeros_like(x) })
        .collect();
    Ok(Value::array(out))
}

/// The transpose of a shift at the cotangent `z` of its result.
pub(super) fn jt_shift(op: P, a: &Value, z: &Value) -> Result<Value, Error> {
    let items = a
        .as_array()
        .ok_or_else(|| internal("a shift of a value that is not an array"))?;
    let zs = z
        .as_array()
        .ok_or_else(|| internal("the cotangent of an array is not an array"))?;
    if items.is_empty() {
        return Ok(Value::array(Vec::new()));
    }
    let mut out = Vec::with_capacity(items.len());
    if op == P::Shift1L {
        out.push(zeros_like(&items[0]));
        out.extend(zs.iter().cloned());
    } else {
        out.extend(zs.iter().cloned());
        out.push(zeros_like(&items[items.len() - 1]));
    }
    if out.len() != items.len() {
        return Err(internal("a shift's cotangent of the wrong length"));
    }
    Ok(Value::array(out))
}

/// A count of `build` or `ifold`.
fn count(op: P, v: &Value, span: Span) -> Result<usize, Error> {
    let n = v
        .as_int()
        .ok_or_else(|| type_error(span, format!("a count that is {}", v.kind())))?;
    usize::try_from(n).map_err(|_| Error::NegativeCount { span, op, count: n })
}

impl Eval<'_> {
    /// One application of a loop's function: its body, or the value of its
    /// reverse derivative.
    fn apply(
        &mut self,
        body: unf::TermId,
        inputs: Vec<Value>,
        derivative: bool,
    ) -> Result<Value, Error> {
        if derivative {
            self.run_derivative(body, inputs)
        } else {
            self.run(body, inputs)
        }
    }

    /// The elements a loop's function is applied to, and the accumulators
    /// it meets: `r[0] = z, r[i+1] = f(r[i], x_i)` for the left folds,
    /// `r[m] = z, r[i] = f(x_i, r[i+1])` for `scanr`.
    fn trace(
        &mut self,
        kind: LoopKind,
        body: unf::TermId,
        free: &[Value],
        ops: &[Value],
        derivative: bool,
        span: Span,
    ) -> Result<(Vec<Value>, Vec<Value>), Error> {
        let what = format!("`{}`", kind.prim());
        let len = if kind == LoopKind::Ifold {
            count(P::Ifold, &ops[1], span)?
        } else {
            ops[1].as_array().map_or(0, <[Value]>::len)
        };
        // The elements, the accumulators, and the array a scan makes of them.
        room(len, 3, span, &what)?;
        let xs: Vec<Value> = if kind == LoopKind::Ifold {
            let n = count(P::Ifold, &ops[1], span)?;
            (0..n).map(|i| Value::Int(i as i64)).collect()
        } else {
            ops[1]
                .as_array()
                .ok_or_else(|| {
                    type_error(
                        span,
                        format!("an array was expected, found {}", ops[1].kind()),
                    )
                })?
                .to_vec()
        };
        let m = xs.len();
        let mut acc = vec![ops[0].clone(); m + 1];
        if kind == LoopKind::Scanr {
            for i in (0..m).rev() {
                let mut inputs = free.to_vec();
                inputs.push(xs[i].clone());
                inputs.push(acc[i + 1].clone());
                acc[i] = self.apply(body, inputs, derivative)?;
            }
        } else {
            for i in 0..m {
                let mut inputs = free.to_vec();
                inputs.push(acc[i].clone());
                inputs.push(xs[i].clone());
                acc[i + 1] = self.apply(body, inputs, derivative)?;
            }
        }
        Ok((xs, acc))
    }

    /// The value of a loop on its operands.
    pub(super) fn run_loop(
        &mut self,
        kind: LoopKind,
        body: unf::TermId,
        free: &[Value],
        ops: &[Value],
        derivative: bool,
        span: Span,
    ) -> Result<Value, Error> {
        if kind == LoopKind::Build {
            let n = count(P::Build, &ops[0], span)?;
            room(n, 2, span, "`build`")?;
            let mut out = Vec::with_capacity(n);
            for i in 0..n {
                let mut inputs = free.to_vec();
                inputs.push(Value::Int(i as i64));
                out.push(self.apply(body, inputs, derivative)?);
            }
            return Ok(Value::array(out));
        }
        let (xs, acc) = self.trace(kind, body, free, ops, derivative, span)?;
        Ok(match kind {
            LoopKind::Scanl | LoopKind::Scanr => Value::array(acc),
            _ => acc[xs.len()].clone(),
        })
    }

    /// The body's reverse derivative at `inputs` seeded with `seed`.
    fn vjp(
        &mut self,
        body: unf::TermId,
        inputs: Vec<Value>,
        seed: Value,
    ) -> Result<Vec<Value>, Error> {
        let slots = inputs.into_iter().map(Slot::Val).collect();
        Ok(self.grad(body, slots, seed)?.1)
    }

    /// `J^T loop` at the operands `ops` and the cotangent `z` of the
    /// result: the cotangents of the operands and of the free variables.
    pub(super) fn jt_loop(
        &mut self,
        kind: LoopKind,
        body: unf::TermId,
        free: &[Value],
        ops: &[Value],
        z: &Value,
        span: Span,
    ) -> Result<(Vec<Value>, Vec<Value>), Error> {
        let nf = free.len();
        // A copy of the cotangents, those of the elements, and their array.
        let len = z.as_array().map_or(0, <[Value]>::len);
        room(len, 3, span, &format!("`{}`", kind.prim()))?;
        let mut d_free: Vec<Value> = free.iter().map(zeros_like).collect();
        let add_free = |d_free: &mut Vec<Value>, cot: &[Value]| -> Result<(), Error> {
            for j in 0..nf {
                d_free[j] = add(&d_free[j], &cot[j])?;
            }
            Ok(())
        };
        let zs = || {
            z.as_array()
                .map(<[Value]>::to_vec)
                .ok_or_else(|| internal("the cotangent of an array is not an array"))
        };
        if kind == LoopKind::Build {
            let zs = zs()?;
            for (i, zi) in zs.iter().enumerate() {
                let mut inputs = free.to_vec();
                inputs.push(Value::Int(i as i64));
                let cot = self.vjp(body, inputs, zi.clone())?;
                add_free(&mut d_free, &cot)?;
            }
            return Ok((vec![zeros_like(&ops[0])], d_free));
        }
        let (xs, acc) = self.trace(kind, body, free, ops, true, span)?;
        let m = xs.len();
        let mut dx: Vec<Value> = xs.iter().map(zeros_like).collect();
        let ds0 = if kind == LoopKind::Scanr {
            // r[i] = f(x_i, r[i+1]): the cotangent runs left to right.
            let zs = zs()?;
            let mut c = zs[0].clone();
            for i in 0..m {
                let mut inputs = free.to_vec();
                inputs.push(xs[i].clone());
                inputs.push(acc[i + 1].clone());
                let cot = self.vjp(body, inputs, c.clone())?;
                add_free(&mut d_free, &cot)?;
                dx[i] = cot[nf].clone();
                c = add(&zs[i + 1], &cot[nf + 1])?;
            }
            c
        } else {
            let zs = if kind == LoopKind::Scanl {
                Some(zs()?)
            } else {
                None
            };
            let mut c = match &zs {
                Some(zs) => zs[m].clone(),
                None => z.clone(),
            };
            for i in (0..m).rev() {
                let mut inputs = free.to_vec();
                inputs.push(acc[i].clone());
                inputs.push(xs[i].clone());
                let cot = self.vjp(body, inputs, c.clone())?;
                add_free(&mut d_free, &cot)?;
                dx[i] = cot[nf + 1].clone();
                c = match &zs {
                    Some(zs) => add(&zs[i], &cot[nf])?,
                    None => cot[nf].clone(),
                };
            }
            c
        };
        let d_x = if kind == LoopKind::Ifold {
            zeros_like(&ops[1])
        } else {
            Value::array(dx)
        };
        Ok((vec![ds0, d_x], d_free))
    }
}
