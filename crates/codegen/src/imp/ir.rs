//! The definition of the loop IR (`imp`): typed variables, expressions
//! without side effects, and statements that are blocks, counted loops,
//! conditionals, arena regions and checks. Normative for the verifier
//! (`verify.rs`) and both printers (`print.rs`, `c.rs`).

use serde::{Deserialize, Serialize};

/// The envelope name of a dumped loop-IR program.
pub const IR_NAME: &str = "imp";
/// Its format version (2: a vector loop lists its reductions; 3: tables
/// of constant reals; 4: parallel bodies with workers).
pub const FORMAT: u32 = 4;

/// A scalar type.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
pub enum Scalar {
    /// `R`: C `double`.
    F64,
    /// `Int`, lengths and indices: C `int64_t`.
    I64,
    /// `Bool`: C99 `bool`.
    Bool,
    /// C `int`: OpenMP thread numbers and counts only.
    I32,
}

impl Scalar {
    /// Whether this is an integer type (a loop index, a bound, an index).
    pub fn is_int(self) -> bool {
        matches!(self, Scalar::I64 | Scalar::I32)
    }
}

/// The type of a variable.
#[derive(Debug, Clone, PartialEq, Eq, Hash, Serialize, Deserialize)]
pub enum Ty {
    /// One scalar.
    Scalar(Scalar),
    /// The address of a memory block of scalars (or of a position inside
    /// one): an arena allocation, a view of one, or a caller's buffer.
    /// Stores through it need `writable`.
    Mem {
        /// The element type.
        elem: Scalar,
        /// Whether elements may be stored through it.
        writable: bool,
    },
    /// A result parameter: where the function stores one value of the
    /// inner type, once, before returning.
    Out(Box<Ty>),
    /// An arena mark (the start of a [`Stmt::Region`]).
    Mark,
}

/// A variable's index in its function's table.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize)]
pub struct VarId(pub u32);

/// A variable of a function: the name it is printed with (unique within
/// the function), its type and whether it may be assigned after its
/// declaration.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Var {
    /// The name, a C identifier.
    pub name: String,
    /// Its type.
    pub ty: Ty,
    /// `false`: a constant, initialized where it is declared and never
    /// assigned (the SSA form of the Target program); `true`: a variable
    /// (accumulators, results of conditionals, loop-carried state).
    pub mutable: bool,
}

/// A function the generated code calls: the C library's `sin`, the
/// runtime's `ad_mulc`, ... Calls are pure: they read their arguments
/// only.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Extern {
    /// Its C name.
    pub name: String,
    /// The types of its parameters.
    pub params: Vec<Scalar>,
    /// The type of its result.
    pub ret: Scalar,
}

/// An extern's index in the program's table.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
pub struct ExternId(pub u32);

/// A table of constant reals: read-only memory that holds its numbers
/// before the program runs (C: `static const double ad_table_K[] =
/// {...};`), so that an array literal costs the C compiler one number of
/// an initializer per element and not one statement (docs/codegen.md,
/// "Tables of constants").
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Table {
    /// The sizes of the literal it holds, outermost first; the numbers
    /// are row-major, as many as the product of the sizes (the
    /// verifier's rule), and at least one (C has no empty arrays).
    pub shape: Vec<u64>,
    /// The numbers; shared with the Target program's literal, so building
    /// the table copies none.
    pub data: std::sync::Arc<[f64]>,
}

/// A table's index in the program's list.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
pub struct TableId(pub u32);

impl TableId {
    /// The C name of the table (and its name in the loop IR's notation).
    pub fn name(self) -> String {
        format!("ad_table_{}", self.0)
    }
}

/// A program: the externs it calls, its tables of constants and its
/// functions.
#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize)]
pub struct Program {
    /// Every function called, by id.
    pub externs: Vec<Extern>,
    /// Every table of constants, by id.
    #[serde(default)]
    pub tables: Vec<Table>,
    /// The functions, in order.
    pub funcs: Vec<Func>,
}

/// One exported function: `int NAME(ad_ctx *ctx, params...)`, which
/// returns 0 or the number of the failure site that stopped it.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Func {
    /// Its C name.
    pub name: String,
    /// Every variable of the function.
    pub vars: Vec<Var>,
    /// The parameters, declared on entry, in order.
    pub params: Vec<VarId>,
    /// The statements.
    pub body: Block,
}

impl Func {
    /// The variable `v`.
    pub fn var(&self, v: VarId) -> &Var {
        &self.vars[v.0 as usize]
    }
}

/// A sequence of statements; a scope for the variables declared in it.
pub type Block = Vec<Stmt>;

/// The direction of a counted loop.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub enum Dir {
    /// `lo, lo + step, ...` while `index + step <= hi`.
    Up,
    /// `hi - 1, hi - 2, ..., lo` (step 1).
    Down,
}

/// How a counted loop may be run by the C compiler.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub enum Pragma {
    /// Iterations on several threads when the trip count reaches `min`
    /// (OpenMP `parallel for`): the body neither allocates nor fails.
    ParallelFor {
        /// The least trip count run in parallel.
        min: u32,
    },
    /// Iterations in vector lanes (OpenMP `simd`), with reductions into
    /// accumulators the compiler may reassociate: the body neither
    /// allocates, fails nor breaks, and writes only its own variables,
    /// elements of its own iteration and these accumulators.
    SimdReduction {
        /// The accumulators, each with its operator.
        reductions: Vec<Reduction>,
        /// The vector width in elements (`simdlen`), or `None` for the C
        /// compiler's choice. A reduction nested in another loop gets
        /// [`NESTED_SIMD_WIDTH`]: its trip count is often short (a row
        /// of d = 8 or 16), where the widest vectors' horizontal sum per
        /// trip cost more than the loop.
        width: Option<u32>,
    },
}

/// The vector width of a reduction nested in another loop: 4 doubles (256
/// bits). Measured with `cargo xtask bench gradbench`, the whole table
/// against the one before (3 December 2026): kmeans' derivative 0.87 →
/// 0.38 ms at k = 10 (its argmin's distance sums over d = 8) and 62 → 36
/// ms at k = 100, gmm's gradient 3.3 → 2.8 ms at d = 10 and 214 → 189 ms
/// at d = 64, ode and ba faster too. Loops at the top of a function keep
/// the compiler's width: lse's `exp` sum over 80,000 elements was 45%
/// slower in 4 lanes than in 8.
pub const NESTED_SIMD_WIDTH: u32 = 4;

/// A reduction of a vector loop: `acc op= ...` in any order.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Reduction {
    /// The C operator, `+` or `*`.
    pub op: String,
    /// The accumulator, a mutable scalar.
    pub acc: VarId,
}

/// A counted loop.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct For {
    /// The index, an integer variable.
    pub index: VarId,
    /// The first index (`Up`) or the last (`Down`), declaring `index`;
    /// `None` continues with the value of an `index` declared before
    /// (mutable), as the remainder loop after a multi-lane one does.
    pub lo: Option<Expr>,
    /// The bound: no index reaches it.
    pub hi: Expr,
    /// The direction.
    pub dir: Dir,
    /// How far the index moves per iteration (1 for `Down`).
    pub step: u32,
    /// How it may be run.
    pub pragma: Option<Pragma>,
    /// The body.
    pub body: Block,
}

/// An integer operation checked for overflow.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub enum CheckedOp {
    /// `a + b`.
    Add,
    /// `a - b`.
    Sub,
    /// `a * b`.
    Mul,
}

/// Where a value is stored.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub enum Place {
    /// A mutable variable.
    Var(VarId),
    /// Element `index` of the memory `mem` points to.
    Elem {
        /// A writable memory address.
        mem: Expr,
        /// An integer index.
        index: Expr,
    },
    /// The result a parameter of type [`Ty::Out`] points to.
    Out(VarId),
}

/// A statement.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub enum Stmt {
    /// Declares `var`, with its value (required for a constant).
    Let {
        /// The variable.
        var: VarId,
        /// Its initial value.
        init: Option<Expr>,
    },
    /// Stores a value.
    Set {
        /// Where.
        place: Place,
        /// What.
        value: Expr,
    },
    /// Stops the call with failure site `site` and its two details when
    /// `cond` holds.
    Fail {
        /// The condition, `Bool`.
        cond: Expr,
        /// The site number, from 1.
        site: u32,
        /// The first detail (an integer).
        a: Expr,
        /// The second detail (an integer).
        b: Expr,
    },
    /// Declares `var` (`Mem`, writable) as a new memory block of `count`
    /// elements from the arena, or null when the arena cannot supply it
    /// (a `Fail` on `IsNull` reports that) or when `when` is given and
    /// does not hold (a scratch block moved before a loop that may not
    /// run). The block lives until the end of the innermost enclosing
    /// region.
    Alloc {
        /// The variable.
        var: VarId,
        /// How many elements, `I64`.
        count: Expr,
        /// Allocated only if this holds.
        when: Option<Expr>,
    },
    /// Declares `var` (`I64`) as `a op b`, failing at `site` on overflow.
    Checked {
        /// The result.
        var: VarId,
        /// The operation.
        op: CheckedOp,
        /// The left operand.
        a: Expr,
        /// The right operand.
        b: Expr,
        /// The failure site.
        site: u32,
    },
    /// A counted loop.
    For(Box<For>),
    /// A loop left only by `Break` (or a failure).
    Loop {
        /// The body.
        body: Block,
    },
    /// Leaves the innermost loop, ending the regions it is in.
    Break,
    /// A conditional.
    If {
        /// The condition, `Bool`.
        cond: Expr,
        /// When it holds.
        then: Block,
        /// Otherwise.
        els: Block,
    },
    /// A lifetime: the arena's position is `mark` on entry, and the
    /// memory allocated in `body` is released at its end (only when
    /// `reset_if` holds, if given: the first iteration of a loop may keep
    /// what it allocated).
    Region {
        /// The mark, a variable of type `Mark`.
        mark: VarId,
        /// The statements.
        body: Block,
        /// When the memory is released.
        reset_if: Option<Expr>,
    },
    /// The body run once on each of `threads` threads (OpenMP `parallel`):
    /// it never breaks. Without `workers` it neither allocates nor fails
    /// (the arena is the caller's, shared). With `workers: Some(site)`
    /// each thread allocates from an arena of its own and a failure stops
    /// that thread only, recorded in its own context; after the body the
    /// first thread that failed, in thread order, is the call's failure
    /// (note [parallel loops]: each thread runs one chunk of a loop, the
    /// chunks in thread order, so that is the first failure in iteration
    /// order). Memory allocated in the body lives until its end; `site`
    /// reports that the threads' contexts could not be made.
    Parallel {
        /// How many threads, `I32`.
        threads: Expr,
        /// The statements.
        body: Block,
        /// Threads with their own arena and failure, and the failure site
        /// of making them.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        workers: Option<u32>,
    },
}

/// A unary operator.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub enum UnOp {
    /// Negation of a number.
    Neg,
    /// Negation of a `Bool`.
    Not,
}

/// A binary operator.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub enum BinOp {
    /// `+` on numbers of one type, or an address moved by an `I64`.
    Add,
    /// `-`.
    Sub,
    /// `*`.
    Mul,
    /// `/` (reals only: integer division is the runtime's flooring one).
    Div,
    /// `<`.
    Lt,
    /// `<=`.
    Le,
    /// `>`.
    Gt,
    /// `>=`.
    Ge,
    /// `==`.
    Eq,
    /// `!=`.
    Ne,
    /// `&&`.
    And,
    /// `||`.
    Or,
}

impl BinOp {
    /// Whether the result is `Bool` whatever the operands.
    pub fn is_comparison(self) -> bool {
        matches!(
            self,
            BinOp::Lt | BinOp::Le | BinOp::Gt | BinOp::Ge | BinOp::Eq | BinOp::Ne
        )
    }

    /// The C (and printed) symbol.
    pub fn symbol(self) -> &'static str {
        match self {
            BinOp::Add => "+",
            BinOp::Sub => "-",
            BinOp::Mul => "*",
            BinOp::Div => "/",
            BinOp::Lt => "<",
            BinOp::Le => "<=",
            BinOp::Gt => ">",
            BinOp::Ge => ">=",
            BinOp::Eq => "==",
            BinOp::Ne => "!=",
            BinOp::And => "&&",
            BinOp::Or => "||",
        }
    }

    /// C's precedence (higher binds tighter).
    pub fn precedence(self) -> u8 {
        match self {
            BinOp::Mul | BinOp::Div => 10,
            BinOp::Add | BinOp::Sub => 9,
            BinOp::Lt | BinOp::Le | BinOp::Gt | BinOp::Ge => 7,
            BinOp::Eq | BinOp::Ne => 6,
            BinOp::And => 2,
            BinOp::Or => 1,
        }
    }
}

/// An expression: pure, evaluated left to right as C does for the
/// operators used here.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub enum Expr {
    /// A variable's value.
    Var(VarId),
    /// A real literal.
    F64(f64),
    /// An `I64` literal.
    I64(i64),
    /// An `I32` literal.
    I32(i32),
    /// A `Bool` literal.
    Bool(bool),
    /// The address of no memory, of the given type (a `Mem`).
    Null(Ty),
    /// Element `index` of the memory `mem` points to.
    Load(Box<Expr>, Box<Expr>),
    /// A unary operation.
    Unary(UnOp, Box<Expr>),
    /// A binary operation.
    Binary(BinOp, Box<Expr>, Box<Expr>),
    /// A call of an extern.
    Call(ExternId, Vec<Expr>),
    /// `cond ? then : else`.
    Select(Box<Expr>, Box<Expr>, Box<Expr>),
    /// A conversion between scalar types (C's cast).
    Cast(Scalar, Box<Expr>),
    /// Whether an address is null (`Bool`).
    IsNull(Box<Expr>),
    /// The address of a table's first number (`Mem` of `F64`, read-only):
    /// it lives as long as the program, so it outlives every region.
    Table(TableId),
}

impl Expr {
    /// `a op b`.
    pub fn bin(op: BinOp, a: Expr, b: Expr) -> Expr {
        Expr::Binary(op, Box::new(a), Box::new(b))
    }

    /// `mem[index]`.
    pub fn load(mem: Expr, index: Expr) -> Expr {
        Expr::Load(Box::new(mem), Box::new(index))
    }

    /// Every variable the expression reads, in order, with repeats.
    pub fn reads(&self, out: &mut Vec<VarId>) {
        match self {
            Expr::Var(v) => out.push(*v),
            Expr::F64(_)
            | Expr::I64(_)
            | Expr::I32(_)
            | Expr::Bool(_)
            | Expr::Null(_)
            | Expr::Table(_) => {}
            Expr::Load(a, b) | Expr::Binary(_, a, b) => {
                a.reads(out);
                b.reads(out);
            }
            Expr::Unary(_, a) | Expr::Cast(_, a) | Expr::IsNull(a) => a.reads(out),
            Expr::Call(_, args) => args.iter().for_each(|a| a.reads(out)),
            Expr::Select(c, a, b) => {
                c.reads(out);
                a.reads(out);
                b.reads(out);
            }
        }
    }
}
