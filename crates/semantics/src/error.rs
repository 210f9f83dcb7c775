//! The errors of evaluation. Every variant carries the span of the node (or
//! parameter, or definition) it is about; rendering with the source line
//! happens at the boundary (xtask), never here.

use syntax::{Prim, Span};

use crate::shape::ValueError;

/// A failure to evaluate a program: a run-time error of a well-typed
/// program, a bad input, or a module that is not well formed.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
pub enum Error {
    /// Two arrays whose sizes must agree do not (`map2`).
    #[error("{op} over arrays of sizes {left} and {right}")]
    SizeMismatch {
        /// The builtin.
        span: Span,
        /// Which builtin.
        op: Prim,
        /// The size of the first array.
        left: usize,
        /// The size of the second array.
        right: usize,
    },
    /// `A[i]` with `i < 0` or `i >= length A`.
    #[error("index {index} out of bounds for an array of {len}")]
    IndexOutOfBounds {
        /// The indexing node.
        span: Span,
        /// The index.
        index: i64,
        /// The array's length.
        len: usize,
    },
    /// An `Int` operation whose result does not fit in 64 bits.
    #[error("integer overflow in `{op}`")]
    Overflow {
        /// The operation.
        span: Span,
        /// Which operation.
        op: Prim,
    },
    /// `a / 0` or `mod a 0` on `Int`.
    #[error("division by zero in `{op}`")]
    DivisionByZero {
        /// The operation.
        span: Span,
        /// Which operation.
        op: Prim,
    },
    /// `floor`, `ceil`, `round` or `trunc` of a real with no `Int` value.
    #[error("`{op}` of a real with no Int value (NaN, infinite, or beyond the range of Int)")]
    NotAnInt {
        /// The operation.
        span: Span,
        /// Which operation.
        op: Prim,
    },
    /// `build n f` or `ifold f z n` with a negative `n`.
    #[error("`{op}` with a negative count {count}")]
    NegativeCount {
        /// The builtin.
        span: Span,
        /// Which builtin.
        op: Prim,
        /// The count.
        count: i64,
    },
    /// An array too large to allocate.
    #[error("`{op}` cannot allocate an array of {count} elements")]
    TooLarge {
        /// The builtin.
        span: Span,
        /// Which builtin.
        op: Prim,
        /// The number of elements asked for.
        count: i64,
    },
    /// A compile-time derivative construct reached the evaluator.
    #[error("`{op}` must be expanded before evaluation (run the forward stage)")]
    NotExpanded {
        /// The construct.
        span: Span,
        /// Which construct.
        op: Prim,
    },
    /// A value of the wrong type at run time: the program is not well
    /// typed (`sin true`, applying a real, a projection out of range).
    #[error("{message}")]
    Type {
        /// The node whose operand has the wrong type.
        span: Span,
        /// What was expected and found.
        message: String,
    },
    /// A function applied to the wrong number of arguments.
    #[error("a function of {expected} parameter{} applied to {found} argument{}", plural(*expected), plural(*found))]
    Arity {
        /// The application.
        span: Span,
        /// The number of parameters.
        expected: usize,
        /// The number of arguments.
        found: usize,
    },
    /// The module has no definition of that name, or none at all.
    #[error("{}", match name { Some(n) => format!("no definition named `{n}`"), None => "the module has no definitions".to_string() })]
    NoSuchDef {
        /// `Span::GENERATED`: the name comes from the command line.
        span: Span,
        /// The name asked for, or `None` for the default entry.
        name: Option<String>,
    },
    /// An input of the entry that was not given.
    #[error("missing input `{name}`")]
    MissingInput {
        /// The parameter.
        span: Span,
        /// Its name.
        name: String,
    },
    /// An input given for no parameter of the entry.
    #[error("`{def}` has no parameter `{name}`")]
    UnknownInput {
        /// The definition's name.
        span: Span,
        /// The definition.
        def: String,
        /// The input's name.
        name: String,
    },
    /// An input given twice.
    #[error("input `{name}` given twice")]
    DuplicateInput {
        /// The parameter.
        span: Span,
        /// Its name.
        name: String,
    },
    /// An input (or argument) that does not have its parameter's type.
    #[error("input `{name}`: {source}")]
    Input {
        /// The parameter.
        span: Span,
        /// Its name.
        name: String,
        /// What is wrong with the value.
        #[source]
        source: ValueError,
    },
    /// The evaluation took more steps than `Config::max_steps` allows.
    #[error("evaluation stopped after {limit} steps")]
    StepLimit {
        /// The node being evaluated when the budget ran out.
        span: Span,
        /// The limit.
        limit: u64,
    },
    /// A program outside the restricted Target language of the static cost
    /// model (seeds/000 Fig. 11): a first-class lambda, an application, a
    /// differentiation construct.
    #[error("no static cost: {message}")]
    NotRestricted {
        /// The construct.
        span: Span,
        /// Which one.
        message: String,
    },
    /// An array whose length the types do not give at the input's sizes
    /// (a `_` size), so the static cost cannot be computed.
    #[error("no static cost: the length of this array (`{ty}`) is not known statically")]
    UnknownSize {
        /// The array.
        span: Span,
        /// Its type.
        ty: String,
    },
    /// A module that is not well formed: an id out of range, an unbound
    /// variable, a surface-form node. `syntax::verify` rejects these.
    #[error("internal error: {message}")]
    Internal {
        /// The offending node, or `Span::GENERATED`.
        span: Span,
        /// What is wrong.
        message: String,
    },
}

fn plural(n: usize) -> &'static str {
    if n == 1 { "" } else { "s" }
}

impl Error {
    /// Where the error is.
    pub fn span(&self) -> Span {
        match self {
            Error::SizeMismatch { span, .. }
            | Error::IndexOutOfBounds { span, .. }
            | Error::Overflow { span, .. }
            | Error::DivisionByZero { span, .. }
            | Error::NotAnInt { span, .. }
            | Error::NegativeCount { span, .. }
            | Error::TooLarge { span, .. }
            | Error::NotExpanded { span, .. }
            | Error::Type { span, .. }
            | Error::Arity { span, .. }
            | Error::NoSuchDef { span, .. }
            | Error::MissingInput { span, .. }
            | Error::UnknownInput { span, .. }
            | Error::DuplicateInput { span, .. }
            | Error::Input { span, .. }
            | Error::StepLimit { span, .. }
            | Error::NotRestricted { span, .. }
            | Error::UnknownSize { span, .. }
            | Error::Internal { span, .. } => *span,
        }
    }
}
