//! Values to and from the driver's file format (see `driver.rs` and
//! `layout.rs`): dims as `int64_t`, then each leaf's scalars, reals as
//! their exact bits, so that what C computed arrives bit for bit.

use semantics::{SizeEnv, Value};
use syntax::{Size, Ty};

use crate::layout::count;

/// Appends one value of type `ty` in the driver's format. Dims of empty
/// arrays' elements are taken from the type's sizes (`sizes`) when known,
/// and are 0 otherwise. Fails on a value that does not have the type or
/// is ragged (rows of different lengths), with a message.
pub(crate) fn encode(v: &Value, ty: &Ty, sizes: &SizeEnv, out: &mut Vec<u8>) -> Result<(), String> {
    let (nd, nl) = count(ty);
    let mut dims: Vec<Option<u64>> = vec![None; nd];
    let mut leaves: Vec<Vec<u8>> = vec![Vec::new(); nl];
    let (mut di, mut li) = (0, 0);
    flatten(v, ty, &mut di, &mut li, &mut dims, &mut leaves)?;
    let mut type_sizes = Vec::new();
    sizes_of(ty, &mut type_sizes);
    for (d, size) in dims.iter().zip(&type_sizes) {
        let from_type = match size {
            Size::Lit(k) => Some(*k),
            Size::Var(name, off) => sizes
                .get(name)
                .and_then(|n| u64::try_from(n as i128 + *off as i128).ok()),
            Size::Dyn => None,
        };
        let d = d.or(from_type).unwrap_or(0);
        out.extend_from_slice(&(d as i64).to_le_bytes());
    }
    for l in leaves {
        out.extend_from_slice(&l);
    }
    Ok(())
}

fn flatten(
    v: &Value,
    ty: &Ty,
    di: &mut usize,
    li: &mut usize,
    dims: &mut [Option<u64>],
    leaves: &mut [Vec<u8>],
) -> Result<(), String> {
    syntax::stack::guard(|| match (ty, v) {
        (Ty::Real, Value::Real(x)) => {
            leaves[*li].extend_from_slice(&x.to_le_bytes());
            *li += 1;
            Ok(())
        }
        (Ty::Int, Value::Int(i)) => {
            leaves[*li].extend_from_slice(&i.to_le_bytes());
            *li += 1;
            Ok(())
        }
        (Ty::Bool, Value::Bool(b)) => {
            leaves[*li].push(u8::from(*b));
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
    let (nd, nl) = count(ty);
    let mut pos: usize = 0;
    let mut take = |n: usize| -> Option<&[u8]> {
        let s = bytes.get(pos..pos.checked_add(n)?)?;
        pos += n;
        Some(s)
    };
    let mut dims = Vec::with_capacity(nd);
    for _ in 0..nd {
        let d = i64::from_le_bytes(take(8)?.try_into().ok()?);
        dims.push(usize::try_from(d).ok()?);
    }
    let mut layout = crate::layout::Layout::default();
    leaf_kinds(ty, &mut Vec::new(), &mut layout);
    let mut leaves: Vec<&[u8]> = Vec::with_capacity(nl);
    for leaf in &layout.leaves {
        let mut n: usize = 1;
        for &d in &leaf.under {
            n = n.checked_mul(dims[d])?;
        }
        leaves.push(take(n.checked_mul(leaf.kind.wire_size())?)?);
    }
    if pos != bytes.len() {
        return None;
    }
    let mut cursors = vec![0usize; nl];
    let (mut di, mut li) = (0, 0);
    build(ty, &dims, &leaves, &mut cursors, &mut di, &mut li)
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
    leaves: &[&[u8]],
    cursors: &mut [usize],
    di: &mut usize,
    li: &mut usize,
) -> Option<Value> {
    syntax::stack::guard(|| match ty {
        Ty::Real | Ty::Int | Ty::Bool => {
            let kind = crate::layout::Kind::of(ty)?;
            let w = kind.wire_size();
            let at = cursors[*li];
            let b = leaves[*li].get(at..at + w)?;
            cursors[*li] += w;
            *li += 1;
            Some(match kind {
                crate::layout::Kind::Real => Value::Real(f64::from_le_bytes(b.try_into().ok()?)),
                crate::layout::Kind::Int => Value::Int(i64::from_le_bytes(b.try_into().ok()?)),
                crate::layout::Kind::Bool => Value::Bool(b[0] != 0),
            })
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
