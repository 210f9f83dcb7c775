//! How a value of a ground type is laid out in memory and on the wire:
//! its *dims* and its *leaves* (structure of arrays).
//!
//! Walking the type in preorder, every array node `[n]T` contributes one
//! dim (its length, an `int64_t`) and every scalar node one leaf. A leaf
//! under no array is one scalar; a leaf under arrays is one buffer holding
//! its scalars for all enclosing indices in row-major order. So
//! `(R, [n]([m]R, Int))` has dims `n, m` and leaves `R` (a scalar),
//! `R` (n*m reals), `Int` (n integers).
//!
//! Invariant: all elements of an array have the same dims below it (no
//! ragged arrays); the transfer code and the generated code check this.
//! The C function signature (`abi.rs`), the driver's file format and
//! `transfer.rs` are all derived from this one layout.

use syntax::{Span, Ty};

use crate::error::Error;

/// A scalar type.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Kind {
    /// `R`: `double`.
    Real,
    /// `Int`: `int64_t`.
    Int,
    /// `Bool`: C99 `bool`, one byte on the wire.
    Bool,
}

impl Kind {
    /// The C type.
    pub fn c_type(self) -> &'static str {
        crate::imp::print::c_scalar(self.scalar())
    }

    /// The loop IR's scalar type.
    pub fn scalar(self) -> crate::imp::Scalar {
        match self {
            Kind::Real => crate::imp::Scalar::F64,
            Kind::Int => crate::imp::Scalar::I64,
            Kind::Bool => crate::imp::Scalar::Bool,
        }
    }

    /// Bytes per scalar in the driver's file format.
    pub fn wire_size(self) -> usize {
        match self {
            Kind::Real | Kind::Int => 8,
            Kind::Bool => 1,
        }
    }

    /// The kind of a scalar type.
    pub fn of(ty: &Ty) -> Option<Kind> {
        match ty {
            Ty::Real => Some(Kind::Real),
            Ty::Int => Some(Kind::Int),
            Ty::Bool => Some(Kind::Bool),
            _ => None,
        }
    }
}

/// One scalar leaf of a layout.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Leaf {
    /// Its scalar type.
    pub kind: Kind,
    /// The dims enclosing it, outermost first (indices into
    /// [`Layout::dims`]); empty for a single scalar.
    pub under: Vec<usize>,
}

/// The dims and leaves of a ground type (see the module doc).
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct Layout {
    /// The number of dims; dim `d` is the length of the `d`-th array node
    /// in preorder.
    pub dims: usize,
    /// The leaves in preorder.
    pub leaves: Vec<Leaf>,
}

impl Layout {
    /// The layout of `ty`, or an error naming `what` (a parameter or the
    /// result) if `ty` contains a function type.
    pub fn of(ty: &Ty, span: Span, what: &str) -> Result<Layout, Error> {
        let mut layout = Layout::default();
        layout.walk(ty, &mut Vec::new(), span, what)?;
        Ok(layout)
    }

    fn walk(
        &mut self,
        ty: &Ty,
        under: &mut Vec<usize>,
        span: Span,
        what: &str,
    ) -> Result<(), Error> {
        syntax::stack::guard(|| match ty {
            Ty::Real | Ty::Int | Ty::Bool => {
                let kind = Kind::of(ty).expect("invariant: a scalar type");
                self.leaves.push(Leaf {
                    kind,
                    under: under.clone(),
                });
                Ok(())
            }
            Ty::Array(_, elem) => {
                under.push(self.dims);
                self.dims += 1;
                let res = self.walk(elem, under, span, what);
                under.pop();
                res
            }
            Ty::Tuple(items) => items
                .iter()
                .try_for_each(|t| self.walk(t, under, span, what)),
            Ty::Func(..) => Err(Error::unsupported(
                span,
                format!("{what} of a function type (only ground types cross the C boundary)"),
            )),
        })
    }
}

/// The number of dims and of leaves in `ty` (functions count as nothing).
pub fn count(ty: &Ty) -> (usize, usize) {
    syntax::stack::guard(|| match ty {
        Ty::Real | Ty::Int | Ty::Bool => (0, 1),
        Ty::Array(_, elem) => {
            let (d, l) = count(elem);
            (d + 1, l)
        }
        Ty::Tuple(items) => items
            .iter()
            .map(count)
            .fold((0, 0), |a, b| (a.0 + b.0, a.1 + b.1)),
        Ty::Func(..) => (0, 0),
    })
}

/// Whether a type contains an array.
pub fn has_array(ty: &Ty) -> bool {
    count(ty).0 > 0
}

/// The scalar kinds of a type without arrays, in preorder.
pub fn scalar_kinds(ty: &Ty) -> Vec<Kind> {
    fn go(ty: &Ty, out: &mut Vec<Kind>) {
        syntax::stack::guard(|| match ty {
            Ty::Tuple(items) => items.iter().for_each(|t| go(t, out)),
            _ => out.extend(Kind::of(ty)),
        })
    }
    let mut out = Vec::new();
    go(ty, &mut out);
    out
}
