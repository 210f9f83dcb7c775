//! Scatter, the histograms and their Target-only partials on values: the
//! operands unpacked and handed to `syntax::hist`, the one definition of
//! what each computes (docs/semantics.md, "Scatter and histograms").
//!
//! Invariants: never panics; index and value arrays of different lengths
//! are `Error::SizeMismatch` at the builtin; an `Int` histogram that
//! overflows is `Error::Overflow`.

use syntax::{Prim, Span, hist};

use crate::error::Error;
use crate::prims::{arith, wrong};
use crate::value::Value;

/// `op` applied to its operands, or `None` when `op` is not one of these.
pub(crate) fn apply(op: Prim, args: &[Value], span: Span) -> Option<Result<Value, Error>> {
    let r = match (op, args) {
        (Prim::Scatter, [d, is, vs]) => values(op, d, span).and_then(|d| {
            let (is, vs) = indexed(op, is, vs, span)?;
            Ok(Value::array(hist::scatter(d, &is, vs)))
        }),
        (Prim::HistAdd | Prim::HistMul | Prim::HistMin | Prim::HistMax, [d, is, vs]) => {
            values(op, d, span).and_then(|d| {
                let (is, vs) = indexed(op, is, vs, span)?;
                let scalar = hist::operator(op).unwrap_or(op);
                let out = hist::fold(d, &is, vs, |a, b| {
                    arith(scalar, a, b, span).map_err(|e| match e {
                        Error::Overflow { span, .. } => Error::Overflow { span, op },
                        e => e,
                    })
                })?;
                Ok(Value::array(out))
            })
        }
        (Prim::HistAddRows, [d, is, vs]) => values(op, d, span).and_then(|d| {
            let (is, vs) = indexed(op, is, vs, span)?;
            let out = hist::fold(d, &is, vs, |a, b| add_rows(a, b, span))?;
            Ok(Value::array(out))
        }),
        (Prim::WinnerScatter, [d, is]) => values(op, d, span).and_then(|d| {
            let is = ints(op, is, span)?;
            Ok(int_array(hist::winner_scatter(d.len(), &is)))
        }),
        (Prim::WinnerMin | Prim::WinnerMax, [d, is, vs]) => reals(op, d, span).and_then(|d| {
            let is = ints(op, is, span)?;
            let vs = reals(op, vs, span)?;
            same(op, is.len(), vs.len(), span)?;
            Ok(int_array(hist::winner_select(
                &d,
                &is,
                &vs,
                op == Prim::WinnerMax,
            )))
        }),
        (Prim::Gather, [a, is]) => reals(op, a, span).and_then(|a| {
            let is = ints(op, is, span)?;
            Ok(real_array(hist::gather(&a, &is)))
        }),
        (Prim::GatherWon, [a, is, w]) => reals(op, a, span).and_then(|a| {
            let is = ints(op, is, span)?;
            let w = ints(op, w, span)?;
            same(op, a.len(), w.len(), span)?;
            Ok(real_array(hist::gather_won(&a, &is, &w)))
        }),
        (Prim::PickDest, [a, w]) => reals(op, a, span).and_then(|a| {
            let w = ints(op, w, span)?;
            same(op, a.len(), w.len(), span)?;
            Ok(real_array(hist::pick_dest(&a, &w)))
        }),
        (Prim::DHistMulDest | Prim::DHistMulVals, [d, is, vs]) => {
            reals(op, d, span).and_then(|d| {
                let is = ints(op, is, span)?;
                let vs = reals(op, vs, span)?;
                same(op, is.len(), vs.len(), span)?;
                Ok(real_array(if op == Prim::DHistMulDest {
                    hist::dhist_mul_dest(&d, &is, &vs)
                } else {
                    hist::dhist_mul_vals(&d, &is, &vs)
                }))
            })
        }
        _ => return None,
    };
    Some(r)
}

/// The transposed Jacobian of scatter or a histogram of reals, applied
/// numerically: the cotangents of `dest` and `vs` at the cotangent `z` of
/// the result (`None` for a histogram of integers, whose cotangent is
/// trivial). The same partials as the Target terms `unf::raise` writes.
pub(crate) fn transpose(
    op: Prim,
    d: &Value,
    is: &Value,
    v: &Value,
    z: &Value,
    span: Span,
) -> Result<Option<(Value, Value)>, Error> {
    if op == Prim::HistAddRows {
        // Rows of integers have the trivial cotangent.
        let real_rows = |a: &Value| {
            a.as_array()
                .into_iter()
                .flatten()
                .filter_map(Value::as_array)
                .flatten()
                .next()
                .is_none_or(|x| matches!(x, Value::Real(_)))
        };
        if !(real_rows(d) && real_rows(v)) {
            return Ok(None);
        }
        return transpose_rows(is, v, z, span).map(Some);
    }
    let real = |a: &Value| matches!(a.as_array().and_then(|a| a.first()), Some(Value::Real(_)));
    if !real(d) && !real(v) {
        return Ok(None);
    }
    let zr = reals(op, z, span)?;
    let is = ints(op, is, span)?;
    let (dd, dv) = match op {
        Prim::Scatter => {
            let n = is.len();
            let dd = hist::scatter(&zr, &is, &vec![0.0; n]);
            let w = hist::winner_scatter(zr.len(), &is);
            (dd, hist::gather_won(&zr, &is, &w))
        }
        Prim::HistAdd => (zr.clone(), hist::gather(&zr, &is)),
        Prim::HistMul => {
            let (dr, vr) = (reals(op, d, span)?, reals(op, v, span)?);
            let pd = hist::dhist_mul_dest(&dr, &is, &vr);
            let pv = hist::dhist_mul_vals(&dr, &is, &vr);
            let g = hist::gather(&zr, &is);
            (
                zr.iter().zip(&pd).map(|(a, b)| a * b).collect(),
                g.iter().zip(&pv).map(|(a, b)| a * b).collect(),
            )
        }
        _ => {
            let (dr, vr) = (reals(op, d, span)?, reals(op, v, span)?);
            let w = hist::winner_select(&dr, &is, &vr, op == Prim::HistMax);
            (hist::pick_dest(&zr, &w), hist::gather_won(&zr, &is, &w))
        }
    };
    Ok(Some((real_array(dd), real_array(dv))))
}

/// The transposed Jacobian of a histogram's partial (reverse over an
/// inner `grad_rev`), applied numerically: the cotangents of the operands
/// that are arrays of reals, with their positions, at the cotangent `z` of
/// the result; none for the winners. Written from the definitions
/// directly (a product of the other factors is multiplied out, not
/// divided), a second opinion on the rules `unf::raise` writes
/// (`syntax::hist::rules`).
pub(crate) fn transpose_partial(
    op: Prim,
    args: &[Value],
    z: &Value,
    span: Span,
) -> Result<Vec<(usize, Value)>, Error> {
    let binned = |is: &[i64], m: usize| -> Vec<Vec<usize>> {
        let mut members = vec![Vec::new(); m];
        for (j, b) in hist::bins(is, m) {
            members[b].push(j);
        }
        members
    };
    Ok(match (op, args) {
        (Prim::Gather, [a, is]) => {
            let (m, is, zr) = (
                reals(op, a, span)?.len(),
                ints(op, is, span)?,
                reals(op, z, span)?,
            );
            let mut da = vec![0.0; m];
            for (j, b) in hist::bins(&is, m) {
                da[b] += zr[j];
            }
            vec![(0, real_array(da))]
        }
        (Prim::GatherWon, [a, is, w]) => {
            let (m, is, zr) = (
                reals(op, a, span)?.len(),
                ints(op, is, span)?,
                reals(op, z, span)?,
            );
            let w = ints(op, w, span)?;
            let mut da = vec![0.0; m];
            for (j, b) in hist::bins(&is, m) {
                if w[b] == j as i64 {
                    da[b] += zr[j];
                }
            }
            vec![(0, real_array(da))]
        }
        (Prim::PickDest, [_, w]) => {
            let (w, zr) = (ints(op, w, span)?, reals(op, z, span)?);
            vec![(0, real_array(hist::pick_dest(&zr, &w)))]
        }
        (Prim::DHistMulDest | Prim::DHistMulVals, [d, is, v]) => {
            let (dr, is, vr) = (
                reals(op, d, span)?,
                ints(op, is, span)?,
                reals(op, v, span)?,
            );
            let zr = reals(op, z, span)?;
            let m = dr.len();
            let members = binned(&is, m);
            let mut dd = vec![0.0; m];
            let mut dv = vec![0.0; vr.len()];
            // The product of the elements of `js` but `skip` (in order).
            let product = |js: &[usize], skip: &[usize]| -> f64 {
                js.iter()
                    .filter(|j| !skip.contains(j))
                    .map(|&j| vr[j])
                    .product()
            };
            for (b, js) in members.iter().enumerate() {
                for &k in js {
                    if op == Prim::DHistMulDest {
                        // p[b] = the product of b's elements.
                        dv[k] = zr[b] * product(js, &[k]);
                    } else {
                        // q[j] = d[b] times the product of b's others.
                        dd[b] += zr[k] * product(js, &[k]);
                        dv[k] = js
                            .iter()
                            .filter(|&&j| j != k)
                            .map(|&j| zr[j] * dr[b] * product(js, &[j, k]))
                            .sum();
                    }
                }
            }
            vec![(0, real_array(dd)), (2, real_array(dv))]
        }
        _ => Vec::new(),
    })
}

/// A bin's row plus an element's row, elementwise (`hist_add_rows`): rows
/// of different lengths are `Error::SizeMismatch`, an `Int` overflow
/// `Error::Overflow` at the builtin.
fn add_rows(a: &Value, b: &Value, span: Span) -> Result<Value, Error> {
    let op = Prim::HistAddRows;
    let (x, y) = (values(op, a, span)?, values(op, b, span)?);
    same(op, x.len(), y.len(), span)?;
    x.iter()
        .zip(y)
        .map(|(p, q)| {
            arith(Prim::Add, p, q, span).map_err(|e| match e {
                Error::Overflow { span, .. } => Error::Overflow { span, op },
                e => e,
            })
        })
        .collect::<Result<Vec<_>, _>>()
        .map(Value::array)
}

/// `hist_add_rows`'s transposed Jacobian at `z`: `z` for `dest`, and for
/// element j the row `z[is[j]]`, or a row of zeros (of `vs[j]`'s length)
/// out of range: the scalar form's `gather`, row by row.
fn transpose_rows(is: &Value, v: &Value, z: &Value, span: Span) -> Result<(Value, Value), Error> {
    let op = Prim::HistAddRows;
    let is = ints(op, is, span)?;
    let (vs, zs) = (values(op, v, span)?, values(op, z, span)?);
    let mut dv = Vec::with_capacity(vs.len());
    for (&i, row) in is.iter().zip(vs) {
        dv.push(match hist::bin(i, zs.len()) {
            Some(b) => zs[b].clone(),
            None => real_array(vec![0.0; values(op, row, span)?.len()]),
        });
    }
    Ok((z.clone(), Value::array(dv)))
}

fn values(op: Prim, a: &Value, span: Span) -> Result<&[Value], Error> {
    a.as_array().ok_or_else(|| wrong(op, "an array", a, span))
}

fn same(op: Prim, left: usize, right: usize, span: Span) -> Result<(), Error> {
    if left == right {
        Ok(())
    } else {
        Err(Error::SizeMismatch {
            span,
            op,
            left,
            right,
        })
    }
}

/// The index array and the value array of the same length.
fn indexed<'a>(
    op: Prim,
    is: &Value,
    vs: &'a Value,
    span: Span,
) -> Result<(Vec<i64>, &'a [Value]), Error> {
    let is = ints(op, is, span)?;
    let vs = values(op, vs, span)?;
    same(op, is.len(), vs.len(), span)?;
    Ok((is, vs))
}

fn ints(op: Prim, a: &Value, span: Span) -> Result<Vec<i64>, Error> {
    values(op, a, span)?
        .iter()
        .map(|v| {
            v.as_int()
                .ok_or_else(|| wrong(op, "an array of integers", a, span))
        })
        .collect()
}

fn reals(op: Prim, a: &Value, span: Span) -> Result<Vec<f64>, Error> {
    values(op, a, span)?
        .iter()
        .map(|v| {
            v.as_real()
                .ok_or_else(|| wrong(op, "an array of reals", a, span))
        })
        .collect()
}

fn int_array(items: Vec<i64>) -> Value {
    Value::array(items.into_iter().map(Value::Int).collect())
}

fn real_array(items: Vec<f64>) -> Value {
    Value::array(items.into_iter().map(Value::Real).collect())
}
