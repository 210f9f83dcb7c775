//! What an expression compiles to: the C-side representation of a value
//! while the generated code is being written.
//!
//! - A scalar is a loop-IR expression that is cheap and pure (a variable,
//!   a literal, or a load `p[i]` bound to a variable right away).
//! - A tuple is its components: tuples never exist in C, they are flattened.
//! - An array is either *manifest*, a length and buffers in the layout of
//!   `layout.rs` (structure of arrays, row-major), or *delayed*: a length
//!   and a recipe for element `i` (a pull array, dF~'s `build`). Delayed
//!   arrays are how fusion happens: `reduce f z (map g A)` never writes the
//!   mapped array, the reduction's loop computes `g A[i]` in place.
//! - A function is a lambda with the environment it was created in; it is
//!   inlined where it is applied (by a builtin or an application).
//!
//! Invariant: a delayed array never outlives the C block it was created in
//! (conditionals materialize their results, loops consume their elements),
//! so the variables its recipe mentions are always in scope where it is
//! forced.

use std::rc::Rc;

use syntax::{ExprId, Name, Span, Ty};

use crate::imp::{BinOp, Expr, VarId};
use crate::layout::Kind;

/// The environment: source names to their compiled values.
pub(crate) type Env = rpds::HashTrieMap<Name, Val>;

/// A compiled value.
#[derive(Clone, Debug)]
pub(crate) enum Val {
    /// A scalar: its kind and a pure expression.
    Scalar(Kind, Expr),
    /// A tuple, flattened.
    Tuple(Rc<[Val]>),
    /// An array.
    Array(Arr),
    /// A function, inlined at each application.
    Func(Rc<Func>),
}

/// A lambda and the environment it closes over.
#[derive(Debug)]
pub(crate) struct Func {
    /// The `Expr::Lambda` node.
    pub lambda: ExprId,
    /// The environment at the lambda.
    pub env: Env,
}

/// An array value.
#[derive(Clone, Debug)]
pub(crate) enum Arr {
    /// Buffers in memory.
    Manifest(Manifest),
    /// A recipe for its elements.
    Delayed(Rc<Delayed>),
}

/// An array in memory.
#[derive(Clone, Debug)]
pub(crate) struct Manifest {
    /// The number of elements, an `I64` expression.
    pub len: Expr,
    /// Where element `i` lives.
    pub elem: Leaves,
    /// Whether the buffers belong to this call's arena (false for views of
    /// the caller's inputs, which results must copy).
    pub owned: bool,
}

/// The buffers of a manifest array's elements: element `i` of the array
/// is found by [`Leaves::element`].
#[derive(Clone, Debug)]
pub(crate) enum Leaves {
    /// Element `i` is `ptr[i]`.
    Scalar {
        /// Its kind.
        kind: Kind,
        /// An address expression.
        ptr: Expr,
    },
    /// Element `i` is the tuple of the components' elements `i`.
    Tuple(Vec<Leaves>),
    /// Element `i` is an array of `len` elements whose own leaves start
    /// `i * len` elements into `elem`.
    Array {
        /// The common length of the element arrays.
        len: Expr,
        /// Their leaves.
        elem: Box<Leaves>,
    },
}

impl Leaves {
    /// The same leaves advanced by `off` elements (an `I64` expression).
    pub fn offset(&self, off: &Expr) -> Leaves {
        if *off == Expr::I64(0) {
            return self.clone();
        }
        match self {
            Leaves::Scalar { kind, ptr } => Leaves::Scalar {
                kind: *kind,
                ptr: Expr::bin(BinOp::Add, ptr.clone(), off.clone()),
            },
            Leaves::Tuple(items) => Leaves::Tuple(items.iter().map(|l| l.offset(off)).collect()),
            Leaves::Array { len, elem } => Leaves::Array {
                len: len.clone(),
                elem: Box::new(elem.offset(&row_start(off, len))),
            },
        }
    }

    /// The dims below this level, in preorder.
    pub fn dims(&self, out: &mut Vec<Expr>) {
        match self {
            Leaves::Scalar { .. } => {}
            Leaves::Tuple(items) => items.iter().for_each(|l| l.dims(out)),
            Leaves::Array { len, elem } => {
                out.push(len.clone());
                elem.dims(out);
            }
        }
    }

    /// The pointers of the scalar leaves, in preorder.
    pub fn ptrs(&self, out: &mut Vec<(Kind, Expr)>) {
        match self {
            Leaves::Scalar { kind, ptr } => out.push((*kind, ptr.clone())),
            Leaves::Tuple(items) => items.iter().for_each(|l| l.ptrs(out)),
            Leaves::Array { elem, .. } => elem.ptrs(out),
        }
    }
}

/// A pull array: a length and a recipe for element `i`.
#[derive(Debug)]
pub(crate) struct Delayed {
    /// The number of elements: an `I64` variable or literal.
    pub len: Expr,
    /// The array's type.
    pub ty: Ty,
    /// The recipe.
    pub recipe: Gen,
    /// The builtin that made it, for messages.
    pub span: Span,
}

/// How element `i` of a delayed array is computed.
#[derive(Debug)]
pub(crate) enum Gen {
    /// `f` applied to element `i` of each source (`map`, `map2`).
    Map {
        /// The function.
        f: Rc<Func>,
        /// The source arrays, all of the same length.
        srcs: Vec<Arr>,
    },
    /// `f i` (`build`).
    Build {
        /// The function.
        f: Rc<Func>,
    },
    /// Element `i + off` of `src` (`shift1L` of a delayed array).
    Offset {
        /// The source.
        src: Arr,
        /// The offset.
        off: i64,
    },
    /// `scanl f z src` or `scanr f z src` with a scalar accumulator,
    /// computed while it is read, in its direction (see `streams.rs`).
    Scan {
        /// `Scanl` or `Scanr`.
        op: syntax::Prim,
        /// The function.
        f: Rc<Func>,
        /// The initial accumulator.
        z: Val,
        /// The scanned array.
        src: Arr,
        /// The scalar kinds of the accumulator.
        kinds: Vec<crate::layout::Kind>,
        /// The accumulator's variables, once the reading loop declared them.
        acc: std::cell::RefCell<Vec<VarId>>,
    },
}

impl Val {
    /// The length of an array value (a C expression).
    pub fn arr(&self) -> Option<&Arr> {
        match self {
            Val::Array(a) => Some(a),
            _ => None,
        }
    }

    /// The expression of a scalar.
    pub fn scalar(&self) -> Option<(Kind, &Expr)> {
        match self {
            Val::Scalar(k, c) => Some((*k, c)),
            _ => None,
        }
    }
}

impl Arr {
    /// The length (an `I64` expression).
    pub fn len(&self) -> &Expr {
        match self {
            Arr::Manifest(m) => &m.len,
            Arr::Delayed(d) => &d.len,
        }
    }
}

/// Where row `i` of rows of `len` elements starts: `i * len` (0 for row 0).
pub(crate) fn row_start(i: &Expr, len: &Expr) -> Expr {
    if *i == Expr::I64(0) {
        Expr::I64(0)
    } else {
        Expr::bin(BinOp::Mul, i.clone(), len.clone())
    }
}
