//! The term language: one IR for the Source and the Target programs.
//!
//! Source (seeds/000 Fig. 2) is the first-order subset that reverse mode
//! accepts; Target (Fig. 3) adds lambdas, application and the scans and
//! shifts; the forward-mode language of seeds/002 (Def. 182.4) is the same
//! language again. They share this one definition so that every stage that
//! consumes or produces "a program" speaks the same types, and the verifier,
//! the printer and the evaluator exist once.
//!
//! Layout (see `docs/ir.md`):
//! - Expressions live in an arena, `Module::exprs`, indexed by [`ExprId`].
//!   Operands always have smaller ids than the node that uses them, so a
//!   module is a tree stored in post-order and every traversal can be written
//!   as a loop over ids when recursion would be too deep.
//! - Side tables run parallel to the arena: `spans` (always) and `types`
//!   (filled by type inference; empty in an untyped module).
//! - A module carries the program text it came from, so that a diagnostic
//!   raised by any later stage can still show the line it is about.
//!
//! Two forms of the same types are in use:
//! - *surface* form, straight out of the parser: builtins are still
//!   applications of variables (`App(Var "map", ..)`), operator sections are
//!   `Section`, literals written as integers are `Int`;
//! - *core* form, after elaboration (`crate::elaborate`): every builtin is a
//!   `Prim`, every section is a lambda, a definition reads only its
//!   parameters and earlier definitions (`Var f`, `App(Var f, args)`: a
//!   call kept by `elaborate_calls`; `crate::inline` inlines them), every
//!   binder has a name unique in its definition, and `types` is filled.
//!   Every stage after the parser consumes and produces core form, and
//!   every stage after the Source module takes self-contained definitions.

use serde::{Deserialize, Serialize};
use std::fmt;
use std::sync::Arc;

/// Index of an expression in [`Module::exprs`].
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize)]
#[serde(transparent)]
pub struct ExprId(pub u32);

impl ExprId {
    /// The arena index.
    pub fn index(self) -> usize {
        self.0 as usize
    }
}

impl fmt::Display for ExprId {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "e{}", self.0)
    }
}

/// A half-open byte range `lo..hi` into the program text.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default, Serialize, Deserialize)]
pub struct Span {
    /// First byte.
    pub lo: u32,
    /// One past the last byte.
    pub hi: u32,
}

impl Span {
    /// The span of nodes a pass made up that derive from no primal node.
    pub const GENERATED: Span = Span {
        lo: u32::MAX,
        hi: u32::MAX,
    };

    /// A span from byte offsets.
    pub fn new(lo: usize, hi: usize) -> Span {
        Span {
            lo: lo as u32,
            hi: hi as u32,
        }
    }

    /// Whether this span points into the text.
    pub fn is_generated(self) -> bool {
        self == Span::GENERATED
    }

    /// The smallest span covering both.
    pub fn to(self, other: Span) -> Span {
        if self.is_generated() {
            return other;
        }
        if other.is_generated() {
            return self;
        }
        Span {
            lo: self.lo.min(other.lo),
            hi: self.hi.max(other.hi),
        }
    }
}

/// A name the user wrote, or one a pass made fresh (`x_12`).
///
/// The text is shared: every pass copies names (into the nodes it builds,
/// its environments, its censuses), and a copy is a reference count, not
/// an allocation and a `memcpy` (allocating and freeing copied names was
/// a large part of the optimizer's and `raise`'s time on a long `let`
/// chain, docs/scale.md). Equality, ordering, hashing and the serialized
/// form are those of the text (equal `Arc`s compare by pointer first), so
/// every map keyed by names iterates as with a `String`.
#[derive(Debug, Clone, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize)]
#[serde(transparent)]
pub struct Name(Arc<str>);

impl Name {
    /// A name from a string (its text copied once, into the shared
    /// allocation).
    pub fn new(s: impl AsRef<str>) -> Name {
        Name(Arc::from(s.as_ref()))
    }

    /// The name as written.
    pub fn as_str(&self) -> &str {
        &self.0
    }
}

impl fmt::Display for Name {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.0)
    }
}

/// The size of an array dimension.
#[derive(Debug, Clone, PartialEq, Eq, Hash, Serialize, Deserialize)]
pub enum Size {
    /// A size known statically: `[3]R`.
    Lit(u64),
    /// A size variable plus a constant offset: `[n]R`, `[n+1]R`, `[n-1]R`.
    Var(Name, i64),
    /// A size that is only known at run time (`build n f` with a computed
    /// `n`, or sizes that inference could not relate); checked dynamically.
    /// Printed and parsed as `_`.
    Dyn,
}

/// A type (language.md, "Types").
#[derive(Debug, Clone, PartialEq, Eq, Hash, Serialize, Deserialize)]
pub enum Ty {
    /// `R`, IEEE f64.
    Real,
    /// `Int`, indices and sizes.
    Int,
    /// `Bool`, conditions.
    Bool,
    /// `[n]T`. The element type is shared: the type of `[e]` reuses the
    /// type of `e` (one allocation, not a copy), so a nested literal of
    /// depth d holds d type nodes, not d² (docs/scale.md, "Shared types").
    /// Equality of two shared elements is a pointer comparison first.
    Array(Size, Arc<Ty>),
    /// `(T1, ..., Tk)`; k = 0 is the unit type `()`, k = 1 never occurs.
    Tuple(Vec<Ty>),
    /// `(T1, ..., Tk) -> T`: a k-ary function, applied to all k arguments at once.
    Func(Vec<Ty>, Box<Ty>),
}

impl Ty {
    /// `[size]elem`.
    pub fn array(size: Size, elem: impl Into<Arc<Ty>>) -> Ty {
        Ty::Array(size, elem.into())
    }

    /// Whether this is a ground type (seeds/000 Fig. 4): reals, arrays of
    /// ground types, tuples of ground types. Int and Bool count as ground
    /// (their cotangent space is trivial).
    pub fn is_ground(&self) -> bool {
        match self {
            Ty::Real | Ty::Int | Ty::Bool => true,
            Ty::Array(_, elem) => elem.is_ground(),
            Ty::Tuple(items) => items.iter().all(Ty::is_ground),
            Ty::Func(..) => false,
        }
    }
}

/// A builtin operation. Infix and prefix operators parse straight to
/// `Prim`; named builtins (`sin`, `map`, ...) become `Prim` in elaboration,
/// unless a local binding shadows the name.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize)]
pub enum Prim {
    // Arithmetic on R (and on Int for + - * and neg).
    /// `a + b`
    Add,
    /// `a - b`
    Sub,
    /// `a * b`
    Mul,
    /// `a / b`
    Div,
    /// `-a`
    Neg,
    // Unary real functions.
    /// `sin a`
    Sin,
    /// `cos a`
    Cos,
    /// `tan a`
    Tan,
    /// `exp a`
    Exp,
    /// `log a`, natural logarithm
    Log,
    /// `sqrt a`
    Sqrt,
    /// `tanh a`
    Tanh,
    /// `abs a`
    Abs,
    /// `log1p a`, `log (1 + a)` accurate near 0
    Log1p,
    /// `expm1 a`, `exp a - 1` accurate near 0
    Expm1,
    /// `sigmoid a`, `1 / (1 + exp (-a))`
    Sigmoid,
    /// `atan a`
    Atan,
    /// `sinh a`
    Sinh,
    /// `cosh a`
    Cosh,
    /// `erf a`, the error function
    Erf,
    /// `lgamma a`, `log |Γ(a)|`
    Lgamma,
    /// `sign a`: 1, -1, or `a` itself at 0 and NaN
    Sign,
    // Conversions between `Int` and `R`.
    /// `real n`: an `Int` as an `R`
    Real,
    /// `floor a`: the largest `Int` not above `a`
    Floor,
    /// `ceil a`: the smallest `Int` not below `a`
    Ceil,
    /// `round a`: the nearest `Int`, halves away from zero
    Round,
    /// `trunc a`: `a` without its fraction, as an `Int`
    Trunc,
    // Binary real functions.
    /// `pow a b`
    Pow,
    /// `max a b`
    Max,
    /// `min a b`
    Min,
    /// `atan2 y x`, the angle of the point `(x, y)`
    Atan2,
    /// `hypot x y`, `sqrt (x² + y²)` without overflow or underflow
    Hypot,
    /// `mod a b` on `Int`: the remainder of the flooring division, with the sign of `b`
    Mod,
    // Comparisons and logic.
    /// `a < b`
    Lt,
    /// `a <= b`
    Le,
    /// `a > b`
    Gt,
    /// `a >= b`
    Ge,
    /// `a == b`
    Eq,
    /// `a != b`
    Ne,
    /// `a && b` (both operands are evaluated: the language is pure)
    And,
    /// `a || b`
    Or,
    /// `not a`
    Not,
    // Array builtins (language.md, "Array builtins").
    /// `map f A`
    Map,
    /// `map2 f A B`
    Map2,
    /// `reduce f z A`
    Reduce,
    /// `foldl f z A`
    Foldl,
    /// `scanl f z A`
    Scanl,
    /// `scanr f z A`
    Scanr,
    /// `shift1L A`
    Shift1L,
    /// `shift1R A`
    Shift1R,
    /// `length A`
    Length,
    /// `build n f`
    Build,
    /// `ifold f z n`
    Ifold,
    /// `while cond body z`: `body` applied while `cond` holds
    /// (docs/semantics.md, "Builtins")
    While,
    /// `trips cond body z`: the number of times `while cond body z`
    /// applies `body`
    Trips,
    // Differentiation constructs, expanded at compile time by `forward`.
    /// `diff f x`
    Diff,
    /// `grad f x`
    Grad,
    /// `jvp f x dx`
    Jvp,
    /// `vjp f x dy`
    Vjp,
    /// `jacob f x`
    Jacob,
    /// `grad_rev f x`: `grad` by reverse mode (UNF), expanded at compile
    /// time by `forward::expand_with_reverse` with the driver's pipeline
    /// (docs/forward.md, "Reverse mode inside the language").
    GradRev,
    /// `vjp_rev f x dy`: `vjp` by reverse mode (UNF).
    VjpRev,
    // The partial derivatives of the scalar operators whose derivative is
    // not one cheap operation (seeds/000 Section 2: "we assume given
    // operators ∂₁op2, ∂₂op2"). Target only: reverse mode writes them, a
    // Source program cannot (`Prim::is_target_only`); their meaning on
    // f64 is `crate::derivatives::eval`.
    /// `d1pow x y`, ∂₁pow: `y * pow x (y - 1)`
    D1Pow,
    /// `d2pow x y`, ∂₂pow: `if x > 0 then log x * pow x y else 0`
    D2Pow,
    /// `dtan x`, ∂tan: `1 + tan x * tan x`
    DTan,
    /// `dtanh x`, ∂tanh: `1 - tanh x * tanh x`
    DTanh,
    /// `dabs x`, ∂abs: `if x > 0 then 1 else -1`
    DAbs,
    /// `d2div x y`, ∂₂(/): `-((x / y) / y)`
    D2Div,
    /// `digamma x`, ∂lgamma: ψ(x)
    Digamma,
    /// `trigamma x`, ∂digamma: ψ′(x)
    Trigamma,
    // Scatter and histograms (docs/semantics.md, "Scatter and histograms";
    // `crate::hist` owns their meaning).
    /// `scatter dest is vs`: dest with `dest[is[j]] = vs[j]`, the last write winning
    Scatter,
    /// `hist_add dest is vs`, `reduce_by_index dest (+) is vs`
    HistAdd,
    /// `hist_mul dest is vs`, `reduce_by_index dest (*) is vs`
    HistMul,
    /// `hist_min dest is vs`, `reduce_by_index dest min is vs`
    HistMin,
    /// `hist_max dest is vs`, `reduce_by_index dest max is vs`
    HistMax,
    /// `hist_add_rows dest is vs`: `hist_add` of rows, each in-range
    /// `vs[j]` added elementwise into `dest[is[j]]` (of the same length)
    HistAddRows,
    // Their partial derivatives, Target only (docs/derivatives.md,
    // "Scatter and histograms").
    /// `gather a is`: `a[is[j]]`, 0 where `is[j]` is out of range
    Gather,
    /// `hist_winner_scatter dest is`: per bin, the last j writing it, -1 if none
    WinnerScatter,
    /// `hist_winner_min dest is vs`: per bin, the element the derivative of `min` chooses (-1: dest)
    WinnerMin,
    /// `hist_winner_max dest is vs`: as `hist_winner_min` for `max`
    WinnerMax,
    /// `gather_won a is w`: `a[is[j]]` where `w[is[j]] == j`, else 0
    GatherWon,
    /// `pick_dest a w`: `a[b]` where `w[b] == -1`, else 0
    PickDest,
    /// `dhist_mul_dest dest is vs`: per bin, the product of its elements
    DHistMulDest,
    /// `dhist_mul_vals dest is vs`: per element, the product of the other factors of its bin
    DHistMulVals,
    // Custom derivative rules (docs/derivatives.md, "Custom derivative
    // rules"; `crate::rules`).
    /// `with_rules body jvp vjp point`: `body` applied to the components of
    /// `point`, differentiated by the rules instead of through `body`; a
    /// rule not given is `()`. What `def f .. = e with jvp .. with vjp ..`
    /// elaborates to.
    WithRules,
}

/// How a primitive is written.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Fixity {
    /// `a op b`, with a binding power (higher binds tighter).
    Infix(u8),
    /// `-a`, `not a` are written as prefix operators.
    Prefix,
    /// `name a b ...`, like a function application.
    Named,
}

impl Prim {
    /// Every primitive, for tables and tests.
    pub const ALL: &'static [Prim] = &[
        Prim::Add,
        Prim::Sub,
        Prim::Mul,
        Prim::Div,
        Prim::Neg,
        Prim::Sin,
        Prim::Cos,
        Prim::Tan,
        Prim::Exp,
        Prim::Log,
        Prim::Sqrt,
        Prim::Tanh,
        Prim::Abs,
        Prim::Log1p,
        Prim::Expm1,
        Prim::Sigmoid,
        Prim::Atan,
        Prim::Sinh,
        Prim::Cosh,
        Prim::Erf,
        Prim::Lgamma,
        Prim::Sign,
        Prim::Real,
        Prim::Floor,
        Prim::Ceil,
        Prim::Round,
        Prim::Trunc,
        Prim::Pow,
        Prim::Max,
        Prim::Min,
        Prim::Atan2,
        Prim::Hypot,
        Prim::Mod,
        Prim::Lt,
        Prim::Le,
        Prim::Gt,
        Prim::Ge,
        Prim::Eq,
        Prim::Ne,
        Prim::And,
        Prim::Or,
        Prim::Not,
        Prim::Map,
        Prim::Map2,
        Prim::Reduce,
        Prim::Foldl,
        Prim::Scanl,
        Prim::Scanr,
        Prim::Shift1L,
        Prim::Shift1R,
        Prim::Length,
        Prim::Build,
        Prim::Ifold,
        Prim::While,
        Prim::Trips,
        Prim::Diff,
        Prim::Grad,
        Prim::Jvp,
        Prim::Vjp,
        Prim::Jacob,
        Prim::GradRev,
        Prim::VjpRev,
        Prim::D1Pow,
        Prim::D2Pow,
        Prim::DTan,
        Prim::DTanh,
        Prim::DAbs,
        Prim::D2Div,
        Prim::Digamma,
        Prim::Trigamma,
        Prim::Scatter,
        Prim::HistAdd,
        Prim::HistMul,
        Prim::HistMin,
        Prim::HistMax,
        Prim::HistAddRows,
        Prim::Gather,
        Prim::WinnerScatter,
        Prim::WinnerMin,
        Prim::WinnerMax,
        Prim::GatherWon,
        Prim::PickDest,
        Prim::DHistMulDest,
        Prim::DHistMulVals,
        Prim::WithRules,
    ];

    /// The name or operator symbol as written in programs.
    pub fn symbol(self) -> &'static str {
        match self {
            Prim::Add => "+",
            Prim::Sub => "-",
            Prim::Mul => "*",
            Prim::Div => "/",
            Prim::Neg => "-",
            Prim::Sin => "sin",
            Prim::Cos => "cos",
            Prim::Tan => "tan",
            Prim::Exp => "exp",
            Prim::Log => "log",
            Prim::Sqrt => "sqrt",
            Prim::Tanh => "tanh",
            Prim::Abs => "abs",
            Prim::Log1p => "log1p",
            Prim::Expm1 => "expm1",
            Prim::Sigmoid => "sigmoid",
            Prim::Atan => "atan",
            Prim::Sinh => "sinh",
            Prim::Cosh => "cosh",
            Prim::Erf => "erf",
            Prim::Lgamma => "lgamma",
            Prim::Sign => "sign",
            Prim::Real => "real",
            Prim::Floor => "floor",
            Prim::Ceil => "ceil",
            Prim::Round => "round",
            Prim::Trunc => "trunc",
            Prim::Atan2 => "atan2",
            Prim::Hypot => "hypot",
            Prim::Mod => "mod",
            Prim::Digamma => "digamma",
            Prim::Trigamma => "trigamma",
            Prim::Pow => "pow",
            Prim::Max => "max",
            Prim::Min => "min",
            Prim::Lt => "<",
            Prim::Le => "<=",
            Prim::Gt => ">",
            Prim::Ge => ">=",
            Prim::Eq => "==",
            Prim::Ne => "!=",
            Prim::And => "&&",
            Prim::Or => "||",
            Prim::Not => "not",
            Prim::Map => "map",
            Prim::Map2 => "map2",
            Prim::Reduce => "reduce",
            Prim::Foldl => "foldl",
            Prim::Scanl => "scanl",
            Prim::Scanr => "scanr",
            Prim::Shift1L => "shift1L",
            Prim::Shift1R => "shift1R",
            Prim::Length => "length",
            Prim::Build => "build",
            Prim::Ifold => "ifold",
            Prim::While => "while",
            Prim::Trips => "trips",
            Prim::Diff => "diff",
            Prim::Grad => "grad",
            Prim::Jvp => "jvp",
            Prim::Vjp => "vjp",
            Prim::Jacob => "jacob",
            Prim::GradRev => "grad_rev",
            Prim::VjpRev => "vjp_rev",
            Prim::D1Pow => "d1pow",
            Prim::D2Pow => "d2pow",
            Prim::DTan => "dtan",
            Prim::DTanh => "dtanh",
            Prim::DAbs => "dabs",
            Prim::D2Div => "d2div",
            Prim::Scatter => "scatter",
            Prim::HistAdd => "hist_add",
            Prim::HistMul => "hist_mul",
            Prim::HistMin => "hist_min",
            Prim::HistMax => "hist_max",
            Prim::HistAddRows => "hist_add_rows",
            Prim::Gather => "gather",
            Prim::WinnerScatter => "hist_winner_scatter",
            Prim::WinnerMin => "hist_winner_min",
            Prim::WinnerMax => "hist_winner_max",
            Prim::GatherWon => "gather_won",
            Prim::PickDest => "pick_dest",
            Prim::DHistMulDest => "dhist_mul_dest",
            Prim::DHistMulVals => "dhist_mul_vals",
            Prim::WithRules => "with_rules",
        }
    }

    /// The primitive a named builtin of Source stands for (`"sin"` →
    /// `Sin`). Operator symbols are not names; `fst` and `snd` elaborate to
    /// projections; the Target-only primitives are not Source builtins.
    pub fn from_name(name: &str) -> Option<Prim> {
        Prim::from_target_name(name).filter(|p| !p.is_target_only())
    }

    /// The primitive a named builtin of Target stands for: those of
    /// Source and the Target-only ones (`"d1pow"` → `D1Pow`).
    pub fn from_target_name(name: &str) -> Option<Prim> {
        Prim::ALL
            .iter()
            .copied()
            .find(|p| p.fixity() == Fixity::Named && p.symbol() == name)
    }

    /// Whether only Target programs may use this primitive: the partial
    /// derivatives reverse mode writes (`d1pow`, `d2pow`, `dtan`, `dtanh`,
    /// `dabs`, `d2div`, `digamma`, `trigamma`). Source programs name them nowhere (`from_name`), and the
    /// first-order check and `verify::verify_source` reject them.
    pub fn is_target_only(self) -> bool {
        matches!(
            self,
            Prim::D1Pow
                | Prim::D2Pow
                | Prim::DTan
                | Prim::DTanh
                | Prim::DAbs
                | Prim::D2Div
                | Prim::Digamma
                | Prim::Trigamma
                | Prim::Gather
                | Prim::WinnerScatter
                | Prim::WinnerMin
                | Prim::WinnerMax
                | Prim::GatherWon
                | Prim::PickDest
                | Prim::DHistMulDest
                | Prim::DHistMulVals
        )
    }

    /// The number of arguments; primitives are always fully applied.
    pub fn arity(self) -> usize {
        match self {
            Prim::Neg
            | Prim::Not
            | Prim::Sin
            | Prim::Cos
            | Prim::Tan
            | Prim::Exp
            | Prim::Log
            | Prim::Sqrt
            | Prim::Tanh
            | Prim::Abs
            | Prim::Log1p
            | Prim::Expm1
            | Prim::Sigmoid
            | Prim::Atan
            | Prim::Sinh
            | Prim::Cosh
            | Prim::Erf
            | Prim::Lgamma
            | Prim::Sign
            | Prim::Real
            | Prim::Floor
            | Prim::Ceil
            | Prim::Round
            | Prim::Trunc
            | Prim::Digamma
            | Prim::Trigamma
            | Prim::DTan
            | Prim::DTanh
            | Prim::DAbs
            | Prim::Shift1L
            | Prim::Shift1R
            | Prim::Length => 1,
            Prim::Add
            | Prim::Sub
            | Prim::Mul
            | Prim::Div
            | Prim::Pow
            | Prim::Atan2
            | Prim::Hypot
            | Prim::Mod
            | Prim::D1Pow
            | Prim::D2Pow
            | Prim::D2Div
            | Prim::Max
            | Prim::Min
            | Prim::Lt
            | Prim::Le
            | Prim::Gt
            | Prim::Ge
            | Prim::Eq
            | Prim::Ne
            | Prim::And
            | Prim::Or
            | Prim::Map
            | Prim::Build
            | Prim::Diff
            | Prim::Grad
            | Prim::GradRev
            | Prim::Jacob
            | Prim::Gather
            | Prim::WinnerScatter
            | Prim::PickDest => 2,
            Prim::Map2
            | Prim::Reduce
            | Prim::Foldl
            | Prim::Scanl
            | Prim::Scanr
            | Prim::Ifold
            | Prim::While
            | Prim::Trips
            | Prim::Jvp
            | Prim::Vjp
            | Prim::VjpRev
            | Prim::Scatter
            | Prim::HistAdd
            | Prim::HistMul
            | Prim::HistMin
            | Prim::HistMax
            | Prim::HistAddRows
            | Prim::WinnerMin
            | Prim::WinnerMax
            | Prim::GatherWon
            | Prim::DHistMulDest
            | Prim::DHistMulVals => 3,
            Prim::WithRules => 4,
        }
    }

    /// How the primitive is written. Binding powers, loosest first:
    /// `||` 1, `&&` 2, comparisons 3 (non-associative), `+ -` 4, `* /` 5;
    /// all arithmetic operators associate to the left.
    pub fn fixity(self) -> Fixity {
        match self {
            Prim::Or => Fixity::Infix(1),
            Prim::And => Fixity::Infix(2),
            Prim::Lt | Prim::Le | Prim::Gt | Prim::Ge | Prim::Eq | Prim::Ne => Fixity::Infix(3),
            Prim::Add | Prim::Sub => Fixity::Infix(4),
            Prim::Mul | Prim::Div => Fixity::Infix(5),
            Prim::Neg => Fixity::Prefix,
            _ => Fixity::Named,
        }
    }

    /// Whether this is one of the compile-time differentiation constructs.
    pub fn is_derivative_construct(self) -> bool {
        matches!(
            self,
            Prim::Diff
                | Prim::Grad
                | Prim::Jvp
                | Prim::Vjp
                | Prim::Jacob
                | Prim::GradRev
                | Prim::VjpRev
        )
    }

    /// The position of the function argument of a second-order builtin
    /// (of the first one for `while` and `trips`, whose condition comes
    /// before their body: [`Prim::function_args`]).
    pub fn function_arg(self) -> Option<usize> {
        match self {
            Prim::While | Prim::Trips => Some(0),
            Prim::Map
            | Prim::Map2
            | Prim::Reduce
            | Prim::Foldl
            | Prim::Scanl
            | Prim::Scanr
            | Prim::Ifold
            | Prim::Diff
            | Prim::Grad
            | Prim::Jvp
            | Prim::Vjp
            | Prim::Jacob
            | Prim::GradRev
            | Prim::VjpRev => Some(0),
            Prim::Build => Some(1),
            _ => None,
        }
    }

    /// The positions of every function argument: the one of
    /// [`Prim::function_arg`], and for `while` and `trips` both the
    /// condition (0) and the body (1).
    pub fn function_args(self) -> &'static [usize] {
        match self {
            Prim::While | Prim::Trips => &[0, 1],
            Prim::Build => &[1],
            p if p.function_arg().is_some() => &[0],
            _ => &[],
        }
    }
}

impl fmt::Display for Prim {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.symbol())
    }
}

/// What a `let` binds.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub enum Pat {
    /// `let x = ...`
    Var(Name),
    /// `let (x1, ..., xk) = ...`, k >= 2.
    Tuple(Vec<Name>),
}

impl Pat {
    /// The names bound, in order, borrowed (`visit::pat_names` collects
    /// them into a `Vec`).
    pub fn names(&self) -> &[Name] {
        match self {
            Pat::Var(x) => std::slice::from_ref(x),
            Pat::Tuple(xs) => xs,
        }
    }
}

/// A lambda or definition parameter.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Param {
    /// The bound name.
    pub name: Name,
    /// The annotation, or in core form the inferred type.
    pub ty: Option<Ty>,
    /// Where the parameter is written.
    pub span: Span,
}

/// An expression node. Children are ids of earlier nodes.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub enum Expr {
    /// A variable: a `let`-bound name, a parameter, or (surface form only) a
    /// builtin or an earlier definition.
    Var(Name),
    /// A real constant. The parser reads `-2` as `Neg` of `2`, so negative
    /// constants only come from passes; the printer writes them `(-2)`.
    Real(f64),
    /// An integer constant. In surface form every literal written without a
    /// point or exponent; in core form only those whose type is `Int`.
    Int(i64),
    /// `true` / `false`.
    Bool(bool),
    /// `let pat (: ty)? = value in body`.
    Let {
        /// The bound pattern.
        pat: Pat,
        /// The annotation written, if any.
        ty: Option<Ty>,
        /// The bound expression.
        value: ExprId,
        /// The scope of the binding.
        body: ExprId,
    },
    /// `(e1, ..., ek)`; `()` for k = 0.
    Tuple(Vec<ExprId>),
    /// `e.i`, 1-based (the paper's pi_i). `fst e` and `snd e` elaborate to it.
    Proj {
        /// The tuple.
        tuple: ExprId,
        /// 1-based position.
        index: u32,
    },
    /// `if cond then a else b`.
    If {
        /// A `Bool`.
        cond: ExprId,
        /// Taken when `cond` is true.
        then_branch: ExprId,
        /// Taken when `cond` is false.
        else_branch: ExprId,
    },
    /// `fun (x1, ..., xk) -> body`.
    Lambda {
        /// The parameters, k >= 1 (k = 0 is allowed in core form for thunks).
        params: Vec<Param>,
        /// The body.
        body: ExprId,
    },
    /// `f a1 ... ak`: a call of a k-ary function with all its arguments.
    App {
        /// The function.
        func: ExprId,
        /// The arguments.
        args: Vec<ExprId>,
    },
    /// A builtin applied to all of its arguments (`Prim::arity`).
    Prim {
        /// The builtin.
        op: Prim,
        /// The arguments.
        args: Vec<ExprId>,
    },
    /// An operator section `(+)` (surface form only).
    Section(Prim),
    /// `[e1, ..., ek]`.
    Array(Vec<ExprId>),
    /// An array literal whose elements are all real constants, nested to
    /// any depth (`[1.5, -2]`, `[[1.5, 2], [3, 4]]`): one node holding its
    /// numbers flat, so a literal costs an f64 per number (issue 19).
    Reals(Reals),
    /// `a[i]`.
    Index {
        /// The array.
        array: ExprId,
        /// An `Int`.
        index: ExprId,
    },
}

impl Expr {
    /// The direct children, in evaluation order.
    pub fn children(&self) -> Vec<ExprId> {
        let mut out = Vec::new();
        self.for_each_child(|c| out.push(c));
        out
    }

    /// Calls `f` on each direct child, in evaluation order.
    pub fn for_each_child(&self, mut f: impl FnMut(ExprId)) {
        match self {
            Expr::Var(_)
            | Expr::Real(_)
            | Expr::Int(_)
            | Expr::Bool(_)
            | Expr::Section(_)
            | Expr::Reals(_) => {}
            Expr::Let { value, body, .. } => {
                f(*value);
                f(*body);
            }
            Expr::Tuple(items) | Expr::Array(items) => items.iter().copied().for_each(f),
            Expr::Proj { tuple, .. } => f(*tuple),
            Expr::If {
                cond,
                then_branch,
                else_branch,
            } => {
                f(*cond);
                f(*then_branch);
                f(*else_branch);
            }
            Expr::Lambda { body, .. } => f(*body),
            Expr::App { func, args } => {
                f(*func);
                args.iter().copied().for_each(f);
            }
            Expr::Prim { args, .. } => args.iter().copied().for_each(f),
            Expr::Index { array, index } => {
                f(*array);
                f(*index);
            }
        }
    }

    /// Calls `f` on each direct child id, in evaluation order, letting it
    /// rewrite the id in place.
    pub fn for_each_child_mut(&mut self, mut f: impl FnMut(&mut ExprId)) {
        match self {
            Expr::Var(_)
            | Expr::Real(_)
            | Expr::Int(_)
            | Expr::Bool(_)
            | Expr::Section(_)
            | Expr::Reals(_) => {}
            Expr::Let { value, body, .. } => {
                f(value);
                f(body);
            }
            Expr::Tuple(items) | Expr::Array(items) => items.iter_mut().for_each(f),
            Expr::Proj { tuple, .. } => f(tuple),
            Expr::If {
                cond,
                then_branch,
                else_branch,
            } => {
                f(cond);
                f(then_branch);
                f(else_branch);
            }
            Expr::Lambda { body, .. } => f(body),
            Expr::App { func, args } => {
                f(func);
                args.iter_mut().for_each(f);
            }
            Expr::Prim { args, .. } => args.iter_mut().for_each(f),
            Expr::Index { array, index } => {
                f(array);
                f(index);
            }
        }
    }

    /// The same node with every child id passed through `f`.
    pub fn map_children(&self, mut f: impl FnMut(ExprId) -> ExprId) -> Expr {
        let mut e = self.clone();
        e.for_each_child_mut(|c| *c = f(*c));
        e
    }
}

/// The numbers of an [`Expr::Reals`] literal: `data` in row-major order,
/// `shape` its sizes from the outermost in. Invariants (checked by the
/// verifier): `shape` is not empty, no size is 0, and `data` has the
/// product of the sizes. The type is `[shape[0]]...[shape[k-1]]R`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Reals {
    /// The sizes, outermost first.
    pub shape: Vec<u64>,
    /// The numbers, row-major; shared, so copying the node is O(1).
    pub data: Arc<[f64]>,
}

impl Reals {
    /// The literal's type: `[shape[0]]...[shape[k-1]]R`.
    pub fn ty(&self) -> Ty {
        self.shape
            .iter()
            .rev()
            .fold(Ty::Real, |t, &n| Ty::array(Size::Lit(n), t))
    }

    /// How many numbers one element of the outermost dimension holds.
    pub fn row_len(&self) -> usize {
        self.shape[1..].iter().map(|&n| n as usize).product()
    }

    /// Whether the shape and the data agree (the verifier's check).
    pub fn is_well_formed(&self) -> bool {
        !self.shape.is_empty()
            && self.shape.iter().all(|&n| n > 0)
            && self
                .shape
                .iter()
                .try_fold(1u64, |acc, &n| acc.checked_mul(n))
                .is_some_and(|total| total == self.data.len() as u64)
    }
}

/// `def name (x1 : T1) ... : T = body`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Def {
    /// The definition's name.
    pub name: Name,
    /// Where the name is written.
    pub name_span: Span,
    /// The parameters: the context Gamma of the paper when this is the entry.
    pub params: Vec<Param>,
    /// The declared (in core form: inferred) result type.
    pub ret: Option<Ty>,
    /// The body, the root of this definition's tree in the arena.
    pub body: ExprId,
}

/// The program text a module came from, carried along so that any stage can
/// render a diagnostic with the line it is about.
#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct SourceFile {
    /// The path as the user gave it.
    pub name: String,
    /// The whole text.
    pub text: String,
}

/// A program: definitions over one expression arena.
#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Module {
    /// The text the module was parsed from.
    pub file: SourceFile,
    /// The definitions, in order; each may call only earlier ones. The
    /// entry point is the last unless a tool is told otherwise.
    pub defs: Vec<Def>,
    /// The expression arena; operands before users.
    pub exprs: Vec<Expr>,
    /// Parallel to `exprs`: where each node comes from.
    pub spans: Vec<Span>,
    /// Parallel to `exprs` in core form; empty in surface form.
    pub types: Vec<Ty>,
}

impl Module {
    /// An empty module over the given text.
    pub fn new(file: SourceFile) -> Module {
        Module {
            file,
            ..Module::default()
        }
    }

    /// Appends a node and returns its id. Its children must already exist.
    pub fn add(&mut self, expr: Expr, span: Span) -> ExprId {
        debug_assert!(expr.children().iter().all(|c| c.index() < self.exprs.len()));
        let id = ExprId(self.exprs.len() as u32);
        self.exprs.push(expr);
        self.spans.push(span);
        id
    }

    /// The node behind an id.
    pub fn expr(&self, id: ExprId) -> &Expr {
        &self.exprs[id.index()]
    }

    /// The span of a node.
    pub fn span(&self, id: ExprId) -> Span {
        self.spans[id.index()]
    }

    /// The inferred type of a node (core form only).
    pub fn ty(&self, id: ExprId) -> Option<&Ty> {
        self.types.get(id.index())
    }

    /// Whether `types` is filled, i.e. the module is in core form.
    pub fn is_typed(&self) -> bool {
        !self.exprs.is_empty() && self.types.len() == self.exprs.len()
    }

    /// The definition named `name`.
    pub fn def(&self, name: &str) -> Option<&Def> {
        self.defs.iter().find(|d| d.name.as_str() == name)
    }

    /// The entry definition: the one named, or the last.
    pub fn entry(&self, name: Option<&str>) -> Option<&Def> {
        match name {
            Some(n) => self.def(n),
            None => self.defs.last(),
        }
    }
}

impl Module {
    /// Drops the nodes no definition reaches and renumbers the rest in
    /// post-order (children before parents), keeping spans and types in
    /// step. Passes that build a new tree inside an old arena call this
    /// before the module is written out (naga's `compact`).
    pub fn compact(&mut self) {
        const UNSEEN: u32 = u32::MAX;
        let mut new_id: Vec<u32> = vec![UNSEEN; self.exprs.len()];
        let mut order: Vec<ExprId> = Vec::new();
        let mut stack: Vec<(ExprId, bool)> = Vec::new();
        let mut children: Vec<ExprId> = Vec::new();
        // Iterative post-order: the tree may be far deeper than the stack.
        for def in &self.defs {
            stack.push((def.body, false));
            while let Some((id, expanded)) = stack.pop() {
                if new_id[id.index()] != UNSEEN {
                    continue;
                }
                if expanded {
                    new_id[id.index()] = order.len() as u32;
                    order.push(id);
                } else {
                    stack.push((id, true));
                    children.clear();
                    self.exprs[id.index()].for_each_child(|c| children.push(c));
                    for &c in children.iter().rev() {
                        if new_id[c.index()] == UNSEEN {
                            stack.push((c, false));
                        }
                    }
                }
            }
        }
        let typed = self.is_typed();
        // Each kept node is moved (not cloned) to its new place.
        let mut old_exprs = std::mem::take(&mut self.exprs);
        let mut old_types = std::mem::take(&mut self.types);
        let exprs = order
            .iter()
            .map(|&old| {
                let mut e = std::mem::replace(&mut old_exprs[old.index()], Expr::Int(0));
                e.for_each_child_mut(|c| *c = ExprId(new_id[c.index()]));
                e
            })
            .collect();
        let spans = order.iter().map(|&old| self.spans[old.index()]).collect();
        let types = if typed {
            order
                .iter()
                .map(|&old| std::mem::replace(&mut old_types[old.index()], Ty::Real))
                .collect()
        } else {
            Vec::new()
        };
        for def in &mut self.defs {
            def.body = ExprId(new_id[def.body.index()]);
        }
        self.exprs = exprs;
        self.spans = spans;
        self.types = types;
    }

    /// A generator of names that occur nowhere in this module yet.
    pub fn name_gen(&self) -> NameGen {
        let mut used = crate::fxhash::FxHashSet::default();
        for def in &self.defs {
            used.insert(def.name.0.clone());
            for p in &def.params {
                used.insert(p.name.0.clone());
            }
        }
        for e in &self.exprs {
            match e {
                Expr::Var(n)
                | Expr::Let {
                    pat: Pat::Var(n), ..
                } => {
                    used.insert(n.0.clone());
                }
                Expr::Let {
                    pat: Pat::Tuple(ns),
                    ..
                } => {
                    used.extend(ns.iter().map(|n| n.0.clone()));
                }
                Expr::Lambda { params, .. } => used.extend(params.iter().map(|p| p.name.0.clone())),
                _ => {}
            }
        }
        NameGen { used, counter: 0 }
    }
}

/// Makes fresh names `base_N` that clash with no name already in use
/// (Futhark's convention: the base says where the variable comes from).
#[derive(Debug, Clone, Default)]
pub struct NameGen {
    /// The texts of the names taken, shared with the names themselves.
    used: crate::fxhash::FxHashSet<Arc<str>>,
    counter: u64,
}

impl NameGen {
    /// Marks a name as taken.
    pub fn reserve(&mut self, name: &str) {
        self.used.insert(Arc::from(name));
    }

    /// A name not used before, derived from `base` (a trailing `_N` of the
    /// base is dropped first, so fresh names do not grow `x_1_2_3`).
    pub fn fresh(&mut self, base: &str) -> Name {
        let stem = match base.rsplit_once('_') {
            Some((stem, digits))
                if !stem.is_empty()
                    && !digits.is_empty()
                    && digits.bytes().all(|b| b.is_ascii_digit()) =>
            {
                stem
            }
            _ => base,
        };
        let stem = if stem.is_empty() { "v" } else { stem };
        loop {
            self.counter += 1;
            // `{stem}_{counter}`, written by hand: `format!` was a tenth of
            // `raise`'s instructions on a long chain (docs/scale.md).
            let mut candidate = String::with_capacity(stem.len() + 8);
            candidate.push_str(stem);
            candidate.push('_');
            push_decimal(&mut candidate, self.counter);
            if !self.used.contains(candidate.as_str()) {
                let text: Arc<str> = Arc::from(candidate);
                self.used.insert(text.clone());
                return Name(text);
            }
        }
    }
}

/// Appends the decimal digits of `n`.
fn push_decimal(out: &mut String, mut n: u64) {
    let mut buf = [0u8; 20];
    let mut i = buf.len();
    loop {
        i -= 1;
        buf[i] = b'0' + (n % 10) as u8;
        n /= 10;
        if n == 0 {
            break;
        }
    }
    out.push_str(std::str::from_utf8(&buf[i..]).expect("invariant: decimal digits are ASCII"));
}
