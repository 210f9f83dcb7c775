//! The Unary Normal Form: Source UNF (seeds/000 Fig. 6) and Target UNF
//! (Fig. 7), one definition for both. This file is the spec of the
//! `source-unf` and `target-unf` RON files.
//!
//! A UNF term has no variables. It maps a *context*, a list of types, to
//! another context: `T1 ⊢ e : T2`. Every primitive is indexed by the context
//! it carries (`var_{T;i}`, `op_{T;n}`, `proj_{T1;T2;T3}`, ...), so stored
//! naively a program of n primitives holds n contexts of length up to n.
//! Here contexts are stored once:
//!
//! - `tys` interns every type a context can hold ([`UTy`]): a ground type of
//!   the term language, or a continuation type `T → B` (Target UNF only)
//!   that names its argument list by [`CtxId`] instead of spelling it out.
//! - `ctxs` is a table of snoc-lists: entry 0 is the empty list, every other
//!   entry is a parent list plus one type. A context of length n is one id,
//!   and all the contexts that extend it share its entries.
//! - Both tables are *canonical* (hash-consed): no type and no `(parent,
//!   type)` pair occurs twice, so two contexts are equal exactly when their
//!   ids are. That is what makes checking `e1 ; e2` (out of e1 = in of e2)
//!   constant time.
//!
//! Terms live in an arena, `terms`, indexed by [`TermId`]; children have
//! smaller ids than their parent, every term but the root has exactly one
//! parent, and `spans` runs parallel to it (the Source node a term comes
//! from, or `Span::GENERATED`).
//!
//! Positions in contexts are 1-based, as in the paper (`var_{T;i}` returns
//! the i-th entry of T).
//!
//! The typing of every node is given on its variant, with `T·A` for snoc and
//! `T++U` for append; `verify/` implements exactly these rules.

use serde::{Deserialize, Serialize};
use std::fmt;
use syntax::{ExprId, Name, Span, Ty};

/// The envelope name of a Source UNF file (the output of [`crate::lower`]).
pub const SOURCE_UNF_IR: &str = "source-unf";
/// The envelope name of a Target UNF file (the output of reverse mode).
pub const TARGET_UNF_IR: &str = "target-unf";
/// The format version of both UNF IRs; bump on any change to these types.
pub const FORMAT_VERSION: u32 = 4;

/// Index of a term in [`Module::terms`].
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize)]
#[serde(transparent)]
pub struct TermId(pub u32);

/// Index of a context (a list of types) in [`Module::ctxs`]. `CtxId(0)` is
/// the empty list.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize)]
#[serde(transparent)]
pub struct CtxId(pub u32);

/// Index of a type in [`Module::tys`].
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize)]
#[serde(transparent)]
pub struct TyId(pub u32);

impl TermId {
    /// The arena index.
    pub fn index(self) -> usize {
        self.0 as usize
    }
}

impl CtxId {
    /// The empty context `[]`.
    pub const EMPTY: CtxId = CtxId(0);

    /// The table index.
    pub fn index(self) -> usize {
        self.0 as usize
    }
}

impl TyId {
    /// The table index.
    pub fn index(self) -> usize {
        self.0 as usize
    }
}

impl fmt::Display for TermId {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "t{}", self.0)
    }
}

impl fmt::Display for CtxId {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "Γ{}", self.0)
    }
}

impl fmt::Display for TyId {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "τ{}", self.0)
    }
}

/// Which of the two UNF languages a module is in. The envelope name says the
/// same (`source-unf` / `target-unf`); reading a file checks they agree.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
pub enum Kind {
    /// Source UNF (Fig. 6): no `J^T`, no `<e, e>`, no `∘`, no continuation types.
    Source,
    /// Target UNF (Fig. 7): Source UNF plus the transposed Jacobians, term
    /// pairing and internal composition.
    Target,
}

impl Kind {
    /// The envelope name of this kind of file.
    pub fn ir_name(self) -> &'static str {
        match self {
            Kind::Source => SOURCE_UNF_IR,
            Kind::Target => TARGET_UNF_IR,
        }
    }
}

/// A type a context entry can have.
#[derive(Debug, Clone, PartialEq, Eq, Hash, Serialize, Deserialize)]
pub enum UTy {
    /// A type of the term language (ground types only: reals, arrays,
    /// tuples; Int and Bool are accepted with a trivial cotangent).
    Ground(Ty),
    /// `Cont(T, B)` = `T → B`, the paper's `underline(T) → B`: a function
    /// from the tuple of the entries of the context T to B. Target UNF only;
    /// B is the gradient type rho of the derivative being built.
    Cont(CtxId, TyId),
}

/// One entry of the context table.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
pub enum Ctx {
    /// `[]`; only entry 0 is empty.
    Empty,
    /// `parent · ty`, with `parent` a smaller id.
    Snoc(CtxId, TyId),
}

/// The operation of an `op_{T;n}` node: a Source constant or operator seen
/// as an n-ary primitive (Fig. 9).
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
pub enum Op {
    /// A real constant, a 0-ary operator: `T ⊢ c_T : T·R`.
    Const(f64),
    /// A unary real operator (`Neg`, `Sin`, ...: a Source primitive of one
    /// argument with partials in `syntax::derivatives`):
    /// `T·R ⊢ op_{T;1} : T·R·R`.
    Unary(syntax::Prim),
    /// A binary real operator (`Add`, `Sub`, `Mul`, `Div`, `Pow`, `Max`,
    /// `Min`, `Atan2`: two arguments, partials in the table):
    /// `T·R·R ⊢ op_{T;2} : T·R·R·R`.
    Binary(syntax::Prim),
    /// `π_i` seen as a unary operator on a tuple type
    /// `tuple = (A1, ..., Ak)`: `T·tuple ⊢ π_i : T·tuple·A_i`.
    Proj {
        /// 1-based component.
        index: u32,
        /// The tuple type.
        tuple: TyId,
    },
    /// An array literal of real constants (`Expr::Reals`, issue 19), a
    /// 0-ary operator: `T ⊢ reals_T : T·ty` with `ty = [n1]..[nk]R` the
    /// literal's type. The numbers stay in the Source node `node` of
    /// [`Module::source`] (an f64 each, shared), so a literal of any length
    /// is one term, which lowering, D_ρ, UNF⁻¹ and the evaluator each take
    /// in one step; as for `Const`, its transposed Jacobian is zero.
    Reals {
        /// The `Expr::Reals` node of the Source module.
        node: ExprId,
        /// Its type.
        ty: TyId,
    },
    /// An `Int` constant: `T ⊢ T·Int`.
    Int(i64),
    /// A `Bool` constant: `T ⊢ T·Bool`.
    Bool(bool),
    /// A first-order builtin that is not a real operator, over the argument
    /// types `args` (a list) with result `ret`:
    /// `T·A1·..·Ak ⊢ op : T·A1·..·Ak·ret`. The builtins are the comparisons
    /// (`<`, `<=`, `>`, `>=`, `==`, `!=` on reals or integers, result
    /// `Bool`), the logic (`&&`, `||`, `not`), the integer arithmetic (`+`,
    /// `-`, `*`, `/`, `mod`, negation, `abs`, `max`, `min` on `Int`), the
    /// conversions (`real` from `Int` to `R`, `floor`, `ceil`, `round`,
    /// `trunc` from `R` to `Int`), `length` (an array
    /// to `Int`), and the shifts `shift1L`, `shift1R` (`[n+1]A` to `[n]A`).
    /// Those with an `Int` or `Bool` result, and `real` (its argument, an
    /// `Int`, has no cotangent), have a zero transposed
    /// Jacobian (Section 7.3: non-smooth values are external to the
    /// differentiation); the shifts' is the zero-padded shift back.
    Builtin {
        /// The builtin.
        op: syntax::Prim,
        /// The argument types, a list.
        args: CtxId,
        /// The result type.
        ret: TyId,
    },
    /// Indexing `a[i]` of an array of type `array = [n]A`:
    /// `T·[n]A·Int ⊢ index : T·[n]A·Int·A`. Its transposed Jacobian is a
    /// scatter-add: the cotangent is added at position i of a zero array.
    Index {
        /// The array type.
        array: TyId,
    },
}

/// The second-order builtins other than `map`, `map2` and the paper's
/// `reduce`, as the primitive [`Prim::Loop`] carries them. The function's
/// parameters and the operands are listed with each kind.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
pub enum LoopKind {
    /// `reduce f z A` in general (a function with free variables, an
    /// initial value that depends on the context, elements that are not
    /// reals): the left fold, differentiated as `foldl`. Operands `S`,
    /// `[n]S`; result S; function `(S, S) -> S`.
    Reduce,
    /// `foldl f z A` (Appendix A.3): operands `S`, `[n]A`; result `S`;
    /// function `(S, A) -> S`.
    Foldl,
    /// `scanl f z A`: operands `S`, `[n]A`; result `[n+1]S`; function
    /// `(S, A) -> S`.
    Scanl,
    /// `scanr f z A`: operands `S`, `[n]A`; result `[n+1]S`; function
    /// `(A, S) -> S`.
    Scanr,
    /// `ifold f z n`: operands `S`, `Int`; result `S`; function
    /// `(S, Int) -> S`.
    Ifold,
    /// `build n f`: operand `Int`; result `[n]A`; function `(Int) -> A`.
    Build,
}

impl LoopKind {
    /// The Source builtin.
    pub fn prim(self) -> syntax::Prim {
        match self {
            LoopKind::Reduce => syntax::Prim::Reduce,
            LoopKind::Foldl => syntax::Prim::Foldl,
            LoopKind::Scanl => syntax::Prim::Scanl,
            LoopKind::Scanr => syntax::Prim::Scanr,
            LoopKind::Ifold => syntax::Prim::Ifold,
            LoopKind::Build => syntax::Prim::Build,
        }
    }

    /// The number of operands read from the context.
    pub fn operands(self) -> usize {
        match self {
            LoopKind::Build => 1,
            _ => 2,
        }
    }
}

/// The function argument of a second-order primitive, the paper's `x,y.e`
/// index: the Source lambda, and its body in UNF. For a branch of `if` it
/// is the branch: a function of no parameters.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Fun {
    /// The Source lambda in [`Module::source`] (`fun (x, y) -> e`), or the
    /// Source branch expression of an `if`.
    pub lambda: ExprId,
    /// 1-based positions, in the primitive's context T, of the variables free
    /// in the lambda, in increasing order (the paper lets e see all of T; we
    /// pass only what it uses, so that bodies stay small).
    pub free: Vec<u32>,
    /// In a primitive: the body in Source UNF, typed
    /// `F·P ⊢ body : F·P·C` where F are the types of `free`, P the
    /// lambda's parameter types and C its result type (each primitive says
    /// which). In a `J^T` primitive: the reverse derivative of that body,
    /// `D_ρ'(F·P) ⊢ body : D_ρ'(F·P·C)` with `ρ' = underline(F·P)` (the
    /// whole gradient of the body).
    pub body: TermId,
}

/// A primitive of Source UNF. Every primitive's output extends or shrinks
/// its input at the end only; `T_in(p)` below names its input context.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub enum Prim {
    /// `var_{T;i}` = `Var(T, i)`: `T ⊢ var_{T;i} : T·A_i`, i 1-based.
    Var(CtxId, u32),
    /// `op_{T;n}` = `Op(T, op)`: see [`Op`] for the arguments it reads and
    /// the result it appends; the arguments are kept.
    Op(CtxId, Op),
    /// `pair_{T;A1×...×Ak}` (k-ary) = `Pair(T, (A1, ..., Ak))`:
    /// `T·A1·...·Ak ⊢ pair : T·(A1,...,Ak)`.
    Pair(CtxId, TyId),
    /// `proj_{T1;T2;T3}` = `Proj(T1, T2, T3)`: `T1++T2++T3 ⊢ proj : T1++T3`,
    /// forgets T2. T1 is a context, T2 and T3 lists (context ids used as
    /// lists).
    Proj(CtxId, CtxId, CtxId),
    /// `map_{T;x.e}` (k = 1) and `map2_{T;x,y.e}` (k = 2):
    /// `T·A1·..·Ak ⊢ map : T·A1·..·Ak·C` with `A_j = [n]E_j`, `C = [n]E`,
    /// the function `(E_1, .., E_k) -> E`, of any ground types (reals in
    /// the paper's core, Appendix A.5 in general).
    Map {
        /// T.
        ctx: CtxId,
        /// The array types `A_j`, one or two.
        args: Vec<TyId>,
        /// The result array type C.
        ret: TyId,
        /// The function.
        fun: Fun,
    },
    /// `reduce_{T;x,y.e1;e2}`: `T·A ⊢ reduce : T·A·R` with `A = [n]R`; the
    /// function is closed (no `free`).
    Reduce {
        /// T.
        ctx: CtxId,
        /// The array type A.
        arg: TyId,
        /// The function `x,y.e1`.
        fun: Fun,
        /// The Source initial value e2, in [`Module::source`].
        init_expr: ExprId,
        /// e2 in Source UNF, closed: `[] ⊢ init : [R]`.
        init: TermId,
    },
    /// `[e1, ..., ek]` = `Array(T, [k]A)`: `T·A·..·A ⊢ T·[k]A` (k copies of
    /// A; the elements are consumed, as `pair` consumes its components).
    Array {
        /// T.
        ctx: CtxId,
        /// The array type `[k]A`.
        ty: TyId,
        /// k.
        len: u32,
    },
    /// `if b then e2 else e3` (Section 7.2): `T·Bool ⊢ if : T·Bool·C`,
    /// each branch a [`Fun`] of no parameters, `F ⊢ body : F·C`. Only the
    /// branch the condition selects is evaluated, and its transposed
    /// Jacobian sends the cotangent into that branch only.
    If {
        /// T.
        ctx: CtxId,
        /// The result type C.
        ret: TyId,
        /// The branch taken when the condition is true.
        then_fun: Fun,
        /// The branch taken when it is false.
        else_fun: Fun,
    },
    /// The other second-order builtins (`foldl`, the scans, `ifold`,
    /// `build`, and `reduce` beyond the paper's core): operands `args`
    /// (listed with each [`LoopKind`]) after T, result `ret`:
    /// `T·A1·..·Ak ⊢ loop : T·A1·..·Ak·ret`. The function may have free
    /// variables of any ground type (Section 7.1).
    Loop {
        /// Which builtin.
        kind: LoopKind,
        /// T.
        ctx: CtxId,
        /// The operand types.
        args: Vec<TyId>,
        /// The result type.
        ret: TyId,
        /// The function.
        fun: Fun,
    },
    /// `trips c b z`, the number of iterations of `while c b z`
    /// (docs/derivatives.md, "`while` loops"): `T·S ⊢ trips : T·S·Int`,
    /// the condition `F·S ⊢ cond : F·S·Bool`, the body `F·S ⊢ body :
    /// F·S·S`. Reverse mode rewrites every `while` into this count and an
    /// `ifold` of that many steps before lowering (`syntax::bound_whiles`);
    /// an `Int` has no cotangent, so its transposed Jacobian is zero and
    /// its functions stay primal in `J^T` too.
    Trips {
        /// T.
        ctx: CtxId,
        /// The state type S.
        state: TyId,
        /// The condition.
        cond: Fun,
        /// The body.
        body: Fun,
    },
    /// `with_rules f jvp vjp p` (a function with derivative rules,
    /// `syntax::rules`): `T·P ⊢ custom : T·P·U`, the value of the body `f`
    /// at the point P; its transposed Jacobian is the vjp rule,
    /// `z ↦ vjp p z` added into P's cotangent. `node` is the Source node in
    /// [`Module::source`], whose functions are closed: nothing else of T
    /// is read, so, like `op`, it counts as first-order (it carries no
    /// function in UNF).
    Custom {
        /// T.
        ctx: CtxId,
        /// The point's type P.
        arg: TyId,
        /// The result type U.
        ret: TyId,
        /// The `with_rules` node of the Source module.
        node: ExprId,
    },
}

/// A term of Source UNF or Target UNF.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub enum Term {
    /// A primitive of Source UNF.
    Prim(Prim),
    /// Its transposed Jacobian (Target UNF), `T_out(p) ⊢ J^T p : T_in(p)`:
    /// a linear map on cotangents. It may only occur in the right operand of
    /// a `∘`, whose input context carries the primal point: `T_in(p)` must be
    /// a prefix of that context. In `Map` and `Reduce` the `fun.body` is the
    /// reverse derivative of the primitive's body (see [`Fun::body`]), and
    /// `Reduce::init` stays the primal Source UNF term.
    Jt(Prim),
    /// `e1 ; e2` = `Seq(e1, e2)`: `T1 ⊢ e1 : T2`, `T2 ⊢ e2 : T3` give
    /// `T1 ⊢ e1 ; e2 : T3`.
    Seq(TermId, TermId),
    /// `e1 ;~ e2` = `Weak(e1, e2)` (Fig. 9): `e1 ; e2` where e2 is the
    /// weakening `~e` of a term e by the results of e1 (it reads only the
    /// entries before them). Typed as `Seq`, and moreover e1's output
    /// strictly extends its input and e2's output extends e1's.
    Weak(TermId, TermId),
    /// `<e1, e2>` (Target UNF): `T ⊢ e1 : T1`, `T ⊢ e2 : T2` give
    /// `T ⊢ <e1, e2> : T1++T2`.
    Tuple(TermId, TermId),
    /// `e1 ∘ e2` (Target UNF): `T1 ⊢ e1 : [T3 → B]` and `T2 ⊢ e2 : T3`, with
    /// e2 read at the primal point T1, give `T1 ⊢ e1 ∘ e2 : [T2 → B]`: the
    /// continuation e1 precomposed with the linear map e2.
    Compose(TermId, TermId),
    /// `F(p, J^T p)` in one piece (Target UNF), the paper's own
    /// abbreviation in Fig. 8: `D_ρ(T_in(p)) ⊢ D_ρ(T_out(p))`. The
    /// primitive and ρ.
    ///
    /// - For `p` first-order ([`Prim::is_first_order`]) it stands for
    ///   `<proj_{T_in;[K];[]} ; p, proj_{[];T_in;[K]} ∘ J^T p>` with
    ///   `K = T_in → ρ`: seven nodes that would hold p and T_in twice each,
    ///   stored as one (on a long program this is most of the Target UNF
    ///   file). Its `∘` reads its primal point from the node's input.
    /// - For `p` an `if` whose result is a real, with the branches' bodies
    ///   reverse derivatives as in `J^T p`: the branch taken computes its
    ///   value and its gradient `g` with respect to its free variables (the
    ///   paper's `∇_Γ e2`, Section 7.2) in one pass, and the continuation
    ///   is precomposed with `z ↦ g * z`. `<proj ; p, proj ∘ J^T p>` would
    ///   hold each branch twice (in p and, differentiated, in J^T p), and
    ///   an `if` in a branch once more per enclosing `if`: quadratic in the
    ///   depth of an `if`/`else if` chain.
    ///
    /// The other primitives with a function (`map`, `reduce`, loops, an
    /// `if` of another result) are written out as the tuple above: their
    /// primal and transposed bodies differ.
    Fused(Prim, TyId),
}

/// A UNF program: the UNF of one Source definition (Source UNF), or its
/// reverse derivative (Target UNF).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Module {
    /// Which UNF language.
    pub kind: Kind,
    /// The Source program the module was lowered from (core form). It holds
    /// the program text for diagnostics, the entry's parameters, and the
    /// Source terms that index `map`, `map2` and `reduce`.
    pub source: syntax::Module,
    /// The name of the entry definition in `source`.
    pub entry: Name,
    /// The type table; canonical.
    pub tys: Vec<UTy>,
    /// The context table; canonical, entry 0 is `Empty`.
    pub ctxs: Vec<Ctx>,
    /// The term arena; children before parents.
    pub terms: Vec<Term>,
    /// Parallel to `terms`, written as runs `(lo, hi, n)` of n equal spans.
    #[serde(with = "span_runs")]
    pub spans: Vec<Span>,
    /// The whole program.
    pub root: TermId,
    /// The root's input context: Gamma, the types of the entry's parameters
    /// (Source UNF), or `D_ρ(Gamma) = Gamma·(Gamma → ρ)` (Target UNF).
    pub input: CtxId,
    /// The root's output context: `Gamma·B` (Source UNF, B the entry's
    /// result type) or `D_ρ(Gamma·B)` (Target UNF).
    pub output: CtxId,
    /// Target UNF: the 1-based positions in Gamma of the parameters the
    /// gradient is taken with respect to (the paper's rho); ρ is the tuple of
    /// their types (their type itself when there is one). Empty in Source UNF.
    pub wrt: Vec<u32>,
}

impl Module {
    /// The node behind an id.
    pub fn term(&self, id: TermId) -> &Term {
        &self.terms[id.index()]
    }

    /// The span of a term.
    pub fn span(&self, id: TermId) -> Span {
        self.spans[id.index()]
    }

    /// The entry definition in `source`.
    pub fn entry_def(&self) -> Option<&syntax::Def> {
        self.source.def(self.entry.as_str())
    }
}

impl Prim {
    /// The primitive's name in the paper's notation.
    pub fn name(&self) -> &'static str {
        match self {
            Prim::Var(..) => "var",
            Prim::Op(..) => "op",
            Prim::Pair(..) => "pair",
            Prim::Proj(..) => "proj",
            Prim::Map { args, .. } if args.len() == 1 => "map",
            Prim::Map { .. } => "map2",
            Prim::Reduce { .. } => "reduce",
            Prim::Array { .. } => "array",
            Prim::Custom { .. } => "custom",
            Prim::If { .. } => "if",
            Prim::Loop { kind, .. } => kind.prim().symbol(),
            Prim::Trips { .. } => "trips",
        }
    }

    /// Whether the primitive carries no function (`var`, `op`, `pair`,
    /// `proj`, `array`): its `J^T` is the same primitive read backwards.
    pub fn is_first_order(&self) -> bool {
        matches!(
            self,
            Prim::Var(..)
                | Prim::Op(..)
                | Prim::Pair(..)
                | Prim::Proj(..)
                | Prim::Array { .. }
                | Prim::Custom { .. }
        )
    }

    /// The functions this primitive carries, in order.
    pub fn funs(&self) -> Vec<&Fun> {
        match self {
            Prim::Map { fun, .. } | Prim::Reduce { fun, .. } | Prim::Loop { fun, .. } => {
                vec![fun]
            }
            Prim::If {
                then_fun, else_fun, ..
            } => vec![then_fun, else_fun],
            Prim::Trips { cond, body, .. } => vec![cond, body],
            _ => Vec::new(),
        }
    }
}

impl Term {
    /// The direct children: operands, then the bodies (those of
    /// [`Prim::funs`]) and initial values of array primitives. At most two,
    /// returned without an allocation: every check of a module asks for
    /// the children of each of its terms twice.
    pub fn children(&self) -> impl Iterator<Item = TermId> + use<> {
        let (ids, n) = match self {
            Term::Prim(p) | Term::Jt(p) | Term::Fused(p, _) => match p {
                Prim::Map { fun, .. } | Prim::Loop { fun, .. } => ([fun.body, fun.body], 1),
                Prim::Reduce { fun, init, .. } => ([fun.body, *init], 2),
                Prim::If {
                    then_fun, else_fun, ..
                } => ([then_fun.body, else_fun.body], 2),
                Prim::Trips { cond, body, .. } => ([cond.body, body.body], 2),
                _ => ([TermId(0); 2], 0),
            },
            Term::Seq(first, then) | Term::Weak(first, then) => ([*first, *then], 2),
            Term::Tuple(a, b) | Term::Compose(a, b) => ([*a, *b], 2),
        };
        ids.into_iter().take(n)
    }
}

/// Spans as runs `(lo, hi, n)`: n consecutive terms with the span
/// `lo..hi`, one short line each in the RON file. The terms D_ρ and UNF
/// make of one Source node are consecutive and share its span, so a run
/// covers about three terms on long programs.
mod span_runs {
    use serde::de::Error as _;
    use serde::{Deserialize, Deserializer, Serialize, Serializer};
    use syntax::Span;

    pub fn serialize<S: Serializer>(spans: &[Span], s: S) -> Result<S::Ok, S::Error> {
        let mut runs: Vec<(u32, u32, u32)> = Vec::new();
        for sp in spans {
            match runs.last_mut() {
                Some((lo, hi, n)) if (*lo, *hi) == (sp.lo, sp.hi) => *n += 1,
                _ => runs.push((sp.lo, sp.hi, 1)),
            }
        }
        runs.serialize(s)
    }

    pub fn deserialize<'de, D: Deserializer<'de>>(d: D) -> Result<Vec<Span>, D::Error> {
        // A file with more terms than this would be tens of gigabytes: a
        // larger count is a damaged file, not a reason to allocate.
        const MOST: usize = 1 << 28;
        let runs: Vec<(u32, u32, u32)> = Vec::deserialize(d)?;
        let mut spans = Vec::new();
        for (lo, hi, n) in runs {
            if n == 0 {
                return Err(D::Error::custom("a run of 0 spans"));
            }
            if spans.len() + n as usize > MOST {
                return Err(D::Error::custom("more spans than a module can have"));
            }
            spans.extend(std::iter::repeat_n(Span { lo, hi }, n as usize));
        }
        Ok(spans)
    }
}
