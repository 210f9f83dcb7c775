//! Values to and from the driver's file format (see `driver.rs` and
//! `layout.rs`): dims as `int64_t`, then each leaf's scalars, reals as
//! their exact bits, so that what C computed arrives bit for bit.

use std::borrow::Cow;

use data::{Buffer, Data, Dense};
use semantics::{SizeEnv, Value};
use syntax::{Size, Ty};

use crate::layout::{Kind, count};

/// The dims and leaves of one value of type `ty` (`layout.rs`), as typed
/// buffers: what the driver's file holds and what an in-process call
/// passes. Dims of empty arrays' elements are taken from the type's sizes
/// (`sizes`) when known, and are 0 otherwise. Fails on a value that does
/// not have the type or is ragged (rows of different lengths), with a
/// message.
pub(crate) fn flatten_value(
    v: &Value,
    ty: &Ty,
    sizes: &SizeEnv,
) -> Result<(Vec<u64>, Vec<Buffer<'static>>), String> {
    let mut layout = crate::layout::Layout::default();
    leaf_kinds(ty, &mut Vec::new(), &mut layout);
    let mut dims: Vec<Option<u64>> = vec![None; layout.dims];
    let mut leaves: Vec<Buffer<'static>> = layout
        .leaves
        .iter()
        .map(|l| match l.kind {
            Kind::Real => Buffer::Real(Cow::Owned(Vec::new())),
            Kind::Int => Buffer::Int(Cow::Owned(Vec::new())),
            Kind::Bool => Buffer::Bool(Cow::Owned(Vec::new())),
        })
        .collect();
    let (mut di, mut li) = (0, 0);
    flatten(v, ty, &mut di, &mut li, &mut dims, &mut leaves)?;
    let mut type_sizes = Vec::new();
    sizes_of(ty, &mut type_sizes);
    let dims = dims
        .iter()
        .zip(&type_sizes)
        .map(|(d, size)| {
            let from_type = match size {
                Size::Lit(k) => Some(*k),
                Size::Var(name, off) => sizes
                    .get(name)
                    .and_then(|n| u64::try_from(n as i128 + *off as i128).ok()),
                Size::Dyn => None,
            };
            d.or(from_type).unwrap_or(0)
        })
        .collect();
    Ok((dims, leaves))
}

/// Appends one value of type `ty` in the driver's format: its dims as
/// `int64_t`, then each leaf's scalars (see [`flatten_value`]).
pub(crate) fn encode(v: &Value, ty: &Ty, sizes: &SizeEnv, out: &mut Vec<u8>) -> Result<(), String> {
    let (dims, leaves) = flatten_value(v, ty, sizes)?;
    for d in dims {
        out.extend_from_slice(&(d as i64).to_le_bytes());
    }
    for l in &leaves {
        match l {
            Buffer::Real(x) => x
                .iter()
                .for_each(|x| out.extend_from_slice(&x.to_le_bytes())),
            Buffer::Int(x) => x
                .iter()
                .for_each(|x| out.extend_from_slice(&x.to_le_bytes())),
            Buffer::Bool(x) => out.extend(x.iter().map(|&b| u8::from(b))),
        }
    }
    Ok(())
}

fn flatten(
    v: &Value,
    ty: &Ty,
    di: &mut usize,
    li: &mut usize,
    dims: &mut [Option<u64>],
    leaves: &mut [Buffer<'static>],
) -> Result<(), String> {
    syntax::stack::guard(|| match (ty, v) {
        (Ty::Real | Ty::Int | Ty::Bool, Value::Real(_) | Value::Int(_) | Value::Bool(_)) => {
            match (&mut leaves[*li], v) {
                (Buffer::Real(b), Value::Real(x)) => b.to_mut().push(*x),
                (Buffer::Int(b), Value::Int(x)) => b.to_mut().push(*x),
                (Buffer::Bool(b), Value::Bool(x)) => b.to_mut().push(*x),
                _ => {
                    return Err(format!(
                        "{} where {} was expected",
                        v.kind(),
                        syntax::print::ty(ty)
                    ));
                }
            }
            *li += 1;
            Ok(())
        }
        (Ty::Tuple(tys), Value::Tuple(items)) if tys.len() == items.len() => {
            for (t, it) in tys.iter().zip(items.iter()) {
                flatten(it, t, di, li, dims, leaves)?;
            }
            Ok(())
        }
        (Ty::Array(_, elem), Value::Array(items)) => {
            let d = *di;
            let len = items.len() as u64;
            match dims[d] {
                None => dims[d] = Some(len),
                Some(k) if k == len => {}
                Some(k) => {
                    return Err(format!(
                        "a ragged array (rows of {k} and {len} elements), which the C backend cannot represent"
                    ));
                }
            }
            let (d0, l0) = (d + 1, *li);
            for it in items.iter() {
                *di = d0;
                *li = l0;
                flatten(it, elem, di, li, dims, leaves)?;
            }
            let (ed, el) = count(elem);
            *di = d0 + ed;
            *li = l0 + el;
            Ok(())
        }
        _ => Err(format!(
            "{} where {} was expected",
            v.kind(),
            syntax::print::ty(ty)
        )),
    })
}

/// The sizes of the array nodes of a type, in preorder.
fn sizes_of(ty: &Ty, out: &mut Vec<Size>) {
    syntax::stack::guard(|| match ty {
        Ty::Array(size, elem) => {
            out.push(size.clone());
            sizes_of(elem, out);
        }
        Ty::Tuple(items) => items.iter().for_each(|t| sizes_of(t, out)),
        _ => {}
    })
}

/// Reads one value of type `ty` from the driver's output; `None` if the
/// bytes do not fit the type exactly.
pub(crate) fn decode(bytes: &[u8], ty: &Ty) -> Option<Value> {
    let mut layout = crate::layout::Layout::default();
    leaf_kinds(ty, &mut Vec::new(), &mut layout);
    let mut pos: usize = 0;
    let mut take = |n: usize| -> Option<&[u8]> {
        let s = bytes.get(pos..pos.checked_add(n)?)?;
        pos += n;
        Some(s)
    };
    let mut dims = Vec::with_capacity(layout.dims);
    for _ in 0..layout.dims {
        let d = i64::from_le_bytes(take(8)?.try_into().ok()?);
        dims.push(usize::try_from(d).ok()?);
    }
    let mut leaves: Vec<Buffer<'static>> = Vec::with_capacity(layout.leaves.len());
    for leaf in &layout.leaves {
        let n = leaf_len(&leaf.under, &dims)?;
        let b = take(n.checked_mul(leaf.kind.wire_size())?)?;
        let words = || b.chunks_exact(8).map(|c| <[u8; 8]>::try_from(c).ok());
        leaves.push(match leaf.kind {
            Kind::Real => Buffer::Real(Cow::Owned(
                words()
                    .map(|w| w.map(f64::from_le_bytes))
                    .collect::<Option<_>>()?,
            )),
            Kind::Int => Buffer::Int(Cow::Owned(
                words()
                    .map(|w| w.map(i64::from_le_bytes))
                    .collect::<Option<_>>()?,
            )),
            Kind::Bool => Buffer::Bool(Cow::Owned(b.iter().map(|&x| x != 0).collect())),
        });
    }
    if pos != bytes.len() {
        return None;
    }
    assemble(ty, &dims, leaves).map(|d| d.to_value())
}

/// The number of scalars of a leaf under the given dims (`None` on overflow).
pub(crate) fn leaf_len(under: &[usize], dims: &[usize]) -> Option<usize> {
    under
        .iter()
        .try_fold(1usize, |n, &d| n.checked_mul(*dims.get(d)?))
}

/// A value of type `ty` from its dims and leaves (`layout.rs` order),
/// dense wherever the type is arrays of a scalar; `None` if they do not
/// fit the type.
pub(crate) fn assemble(
    ty: &Ty,
    dims: &[usize],
    leaves: Vec<Buffer<'static>>,
) -> Option<Data<'static>> {
    let mut leaves = leaves.into_iter().map(Some).collect::<Vec<_>>();
    let (mut di, mut li) = (0, 0);
    let d = assemble_at(ty, dims, &mut leaves, &mut di, &mut li)?;
    (di == dims.len() && li == leaves.len()).then_some(d)
}

fn assemble_at(
    ty: &Ty,
    dims: &[usize],
    leaves: &mut [Option<Buffer<'static>>],
    di: &mut usize,
    li: &mut usize,
) -> Option<Data<'static>> {
    syntax::stack::guard(|| {
        let (nd, nl) = count(ty);
        let mut elem = ty;
        while let Ty::Array(_, e) = elem {
            elem = e;
        }
        if Kind::of(elem).is_some() {
            let shape = dims.get(*di..*di + nd)?.to_vec();
            let buffer = leaves.get_mut(*li)?.take()?;
            *di += nd;
            *li += 1;
            return Dense::new(shape, buffer).map(Data::Dense);
        }
        if let Ty::Tuple(tys) = ty {
            return tys
                .iter()
                .map(|t| assemble_at(t, dims, leaves, di, li))
                .collect::<Option<Vec<_>>>()
                .map(Data::Tuple);
        }
        // Arrays of tuples: no single dense buffer; build the value.
        let own_dims = dims.get(*di..*di + nd)?;
        let own: Vec<Buffer<'static>> = leaves
            .get_mut(*li..*li + nl)?
            .iter_mut()
            .map(Option::take)
            .collect::<Option<_>>()?;
        let mut cursors = vec![0usize; nl];
        let (mut bd, mut bl) = (0, 0);
        let v = build(ty, own_dims, &own, &mut cursors, &mut bd, &mut bl)?;
        *di += nd;
        *li += nl;
        Some(Data::Value(v))
    })
}

/// The leaves of a type (the layout without the function-type check).
fn leaf_kinds(ty: &Ty, under: &mut Vec<usize>, out: &mut crate::layout::Layout) {
    syntax::stack::guard(|| match ty {
        Ty::Array(_, elem) => {
            under.push(out.dims);
            out.dims += 1;
            leaf_kinds(elem, under, out);
            under.pop();
        }
        Ty::Tuple(items) => items.iter().for_each(|t| leaf_kinds(t, under, out)),
        _ => {
            if let Some(kind) = crate::layout::Kind::of(ty) {
                out.leaves.push(crate::layout::Leaf {
                    kind,
                    under: under.clone(),
                });
            }
        }
    })
}

fn build(
    ty: &Ty,
    dims: &[usize],
    leaves: &[Buffer<'static>],
    cursors: &mut [usize],
    di: &mut usize,
    li: &mut usize,
) -> Option<Value> {
    syntax::stack::guard(|| match ty {
        Ty::Real | Ty::Int | Ty::Bool => {
            let at = cursors[*li];
            let v = match &leaves[*li] {
                Buffer::Real(x) => Value::Real(*x.get(at)?),
                Buffer::Int(x) => Value::Int(*x.get(at)?),
                Buffer::Bool(x) => Value::Bool(*x.get(at)?),
            };
            cursors[*li] += 1;
            *li += 1;
            Some(v)
        }
        Ty::Tuple(items) => {
            let vals = items
                .iter()
                .map(|t| build(t, dims, leaves, cursors, di, li))
                .collect::<Option<Vec<_>>>()?;
            Some(Value::tuple(vals))
        }
        Ty::Array(_, elem) => {
            let n = dims[*di];
            let (d0, l0) = (*di + 1, *li);
            let mut items = Vec::with_capacity(n.min(1 << 24));
            for _ in 0..n {
                *di = d0;
                *li = l0;
                items.push(build(elem, dims, leaves, cursors, di, li)?);
            }
            let (ed, el) = count(elem);
            *di = d0 + ed;
            *li = l0 + el;
            Some(Value::array(items))
        }
        Ty::Func(..) => None,
    })
}
