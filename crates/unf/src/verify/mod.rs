//! The verifier of Source UNF and Target UNF: the typing rules of Fig. 6
//! and Fig. 7 (as made precise on the variants in `ir.rs`) and the arena
//! invariants. One pass over the arena, children first, no recursion.
//!
//! Checklist, in the order the checks run:
//!
//! 1. Tables (`Tables::load`): context 0 and only it is empty; every parent
//!    and every type a context names exists and is earlier; a continuation
//!    type names an existing context whose types are all earlier than
//!    itself; no type and no `(parent, type)` pair occurs twice.
//! 2. Arena: `spans` is as long as `terms`; `root` exists; every child id is
//!    smaller than its parent's; every term but the root has exactly one
//!    parent.
//! 3. The embedded Source module: the entry definition exists and its
//!    parameters are typed with ground types; every `Fun::lambda` is a
//!    lambda of the right arity whose parameters have the types the
//!    primitive gives them (up to array sizes), or for a branch of `if`
//!    an expression; every `init_expr` exists.
//! 4. Typing, per term, computing its input and output contexts:
//!    - `var_{T;i}`: 1 <= i <= |T|;
//!    - `op_{T;n}`: the operator is one of its arity; `π_i` reads a tuple
//!      with at least i components; a builtin applies to its argument and
//!      result types (`builtin_fits`); indexing reads an array;
//!    - `pair_{T;A}`: A is a tuple type; `array_{T;[k]A}` reads k A's;
//!    - `map`/`map2`: one or two arrays, an array out, the function from
//!      their elements to its element; the free positions are increasing,
//!      inside T and of ground type; the body maps F·P to F·P·C (or, under
//!      `J^T`, `D_ρ'(F·P)` to `D_ρ'(F·P·C)`);
//!    - `if`: a `Bool` on top of T; both branches return the result type;
//!    - loops: the operands, the result and the function fit the kind
//!      (`loop_signature`);
//!    - `reduce`: an array of reals; a closed function of two reals whose
//!      body is typed as for map2; a closed initial value `[] ⊢ init : [R]`;
//!    - `e1 ; e2`: out(e1) = in(e2); for `;~`, out(e1) strictly extends
//!      in(e1) and out(e2) extends out(e1);
//!    - `<e1, e2>`: in(e1) = in(e2);
//!    - `e1 ∘ e2`: out(e1) is one continuation `[T3 → B]` and out(e2) = T3.
//! 5. Linear maps: a `J^T p` occurs only inside the right operand of a `∘`
//!    and `T_in(p)` is a prefix of that `∘`'s input (its primal point); two
//!    `J^T` of one operand read compatible points; a `∘` is never inside the
//!    right operand of another; the bodies of `J^T map`/`J^T reduce` are
//!    closed in this sense.
//!    A fused `F(p, J^T p)` (`Term::Fused`: p a first-order primitive, or
//!    a real-valued `if` whose bodies are checked as under `J^T`) maps
//!    `D_ρ(T_in)` to `D_ρ(T_out)`; it is not linear, so it counts as a `∘`
//!    for the rule above.
//! 6. The module: in(root) = `input`, out(root) = `output`; for Source UNF,
//!    `input` is the entry's parameter types, `wrt` is empty, and no `J^T`,
//!    `<,>`, `∘` or continuation type occurs anywhere; for Target UNF,
//!    `wrt` lists distinct parameter positions, `input = D_ρ(Gamma)` and
//!    `output = D_ρ(T)` for some T, with ρ the tuple of the `wrt` types.
//! 7. Last, when all else passes: the embedded Source module passes the
//!    term IR's verifier (`syntax::verify`: a tree, typed, every name
//!    bound), since UNF^-1 copies its terms by walking them as trees and a
//!    file's cycle would make that walk endless.

mod prims;

use crate::error::{Loc, VerifyError};
use crate::ir::{CtxId, Kind, Module, Prim, Term, TermId, TyId, UTy};
use crate::tables::{TableError, Tables};
use syntax::derivatives::{self, Sig};
use syntax::{Span, Ty};

/// What a successful check computes: the tables (extended with every
/// context the check had to build) and the input and output context of
/// every term.
#[derive(Debug, Clone)]
pub struct Checked {
    /// The module's tables, possibly extended.
    pub tables: Tables,
    /// `io[t] = (in(t), out(t))`.
    pub io: Vec<(CtxId, CtxId)>,
}

/// Checks a module against every rule of the checklist above.
pub fn verify(m: &Module) -> Result<(), Vec<VerifyError>> {
    check(m).map(|_| ())
}

/// Like [`verify`], returning the contexts it computed.
pub fn check(m: &Module) -> Result<Checked, Vec<VerifyError>> {
    check_inner(m, true)
}

/// [`check`] of a module whose embedded Source module is a copy of one
/// that [`check`] has passed: every rule but the term IR's verifier of
/// that copy (`syntax::verify`, half the time of a check). D_rho's output
/// embeds its input's Source module unchanged, and its input was checked.
pub fn check_with_verified_source(m: &Module) -> Result<Checked, Vec<VerifyError>> {
    check_inner(m, false)
}

fn check_inner(m: &Module, verify_source: bool) -> Result<Checked, Vec<VerifyError>> {
    let tables = match Tables::load(&m.tys, &m.ctxs) {
        Ok(t) => t,
        Err(errs) => {
            return Err(errs
                .into_iter()
                .map(|e| match e {
                    TableError::Ty(t, message) => VerifyError {
                        at: Loc::Ty(t),
                        span: Span::GENERATED,
                        message,
                    },
                    TableError::Ctx(c, message) => VerifyError {
                        at: Loc::Ctx(c),
                        span: Span::GENERATED,
                        message,
                    },
                })
                .collect());
        }
    };
    let mut c = Checker {
        m,
        real: TyId(0),
        t: tables,
        errors: Vec::new(),
        info: Vec::with_capacity(m.terms.len()),
    };
    c.real = c.t.ground(&Ty::Real);
    c.run();
    // Last, on a module that passes everything else (whose own messages
    // say more): UNF^-1 copies Source terms by walking them as trees, and
    // a file's cycle or shared node would make such a walk endless or
    // exponential.
    if c.errors.is_empty()
        && verify_source
        && let Err(errors) = syntax::verify(&m.source)
    {
        for e in errors.into_iter().take(5) {
            c.err(Loc::Module, e.span, format!("the source module: {e}"));
        }
    }
    if c.errors.is_empty() {
        let io = c
            .info
            .iter()
            .map(|i| i.io.expect("invariant: no error means every term is typed"))
            .collect();
        Ok(Checked { tables: c.t, io })
    } else {
        Err(c.errors)
    }
}

/// What the check knows about one term.
#[derive(Debug, Clone, Copy, Default)]
struct Info {
    /// Input and output contexts; None when the term is ill-typed.
    io: Option<(CtxId, CtxId)>,
    /// The longest primal prefix a `J^T` inside requires, if any.
    req: Option<CtxId>,
    /// Whether a `∘` occurs inside.
    has_compose: bool,
    /// Whether a Target-only construct occurs inside.
    target_only: bool,
}

struct Checker<'a> {
    m: &'a Module,
    t: Tables,
    real: TyId,
    errors: Vec<VerifyError>,
    info: Vec<Info>,
}

impl Checker<'_> {
    fn err(&mut self, at: Loc, span: Span, message: impl Into<String>) {
        self.errors.push(VerifyError {
            at,
            span,
            message: message.into(),
        });
    }

    fn run(&mut self) {
        let m = self.m;
        if m.spans.len() != m.terms.len() {
            self.err(
                Loc::Module,
                Span::GENERATED,
                format!("{} spans for {} terms", m.spans.len(), m.terms.len()),
            );
            return;
        }
        if m.root.index() >= m.terms.len() {
            self.err(
                Loc::Module,
                Span::GENERATED,
                format!("root {} does not exist", m.root),
            );
            return;
        }
        // Step 2: ids point backward, one parent each.
        let mut parent: Vec<Option<TermId>> = vec![None; m.terms.len()];
        let mut arena_ok = true;
        for (i, term) in m.terms.iter().enumerate() {
            let id = TermId(i as u32);
            for child in term.children() {
                if child.index() >= i {
                    self.err(
                        Loc::Term(id),
                        m.spans[i],
                        format!("child {child} is not earlier"),
                    );
                    arena_ok = false;
                } else if let Some(p) = parent[child.index()] {
                    self.err(
                        Loc::Term(id),
                        m.spans[i],
                        format!("child {child} already belongs to {p}"),
                    );
                    arena_ok = false;
                } else {
                    parent[child.index()] = Some(id);
                }
            }
        }
        if !arena_ok {
            return;
        }
        for (i, p) in parent.iter().enumerate() {
            if p.is_none() && i != m.root.index() {
                self.err(
                    Loc::Term(TermId(i as u32)),
                    m.spans[i],
                    "term is not reachable from the root",
                );
            }
        }
        // Step 3: the entry.
        let gamma = self.entry_context();
        // Steps 4 and 5.
        for i in 0..m.terms.len() {
            let id = TermId(i as u32);
            let info = self.term(id);
            self.info.push(info);
        }
        // Step 6.
        let root = self.info[m.root.index()];
        let span = m.spans[m.root.index()];
        if root.req.is_some() {
            self.err(
                Loc::Term(m.root),
                span,
                "a J^T occurs outside the right operand of a ∘",
            );
        }
        if let Some((i, o)) = root.io {
            if i != m.input {
                self.err(
                    Loc::Module,
                    span,
                    format!("the root's input is {i}, not `input` {}", m.input),
                );
            }
            if o != m.output {
                self.err(
                    Loc::Module,
                    span,
                    format!("the root's output is {o}, not `output` {}", m.output),
                );
            }
        }
        let Some(gamma) = gamma else { return };
        match m.kind {
            Kind::Source => {
                if root.target_only {
                    self.err(
                        Loc::Module,
                        span,
                        "a Source UNF module uses a Target UNF construct",
                    );
                }
                if let Some(i) = m.tys.iter().position(|t| matches!(t, UTy::Cont(..))) {
                    self.err(
                        Loc::Ty(TyId(i as u32)),
                        Span::GENERATED,
                        "a Source UNF module holds a continuation type",
                    );
                }
                if !m.wrt.is_empty() {
                    self.err(
                        Loc::Module,
                        Span::GENERATED,
                        "a Source UNF module has a `wrt` list",
                    );
                }
                if m.input != gamma {
                    self.err(
                        Loc::Module,
                        Span::GENERATED,
                        "`input` is not the list of the entry's parameter types",
                    );
                }
            }
            Kind::Target => self.check_target_ends(gamma),
        }
    }

    /// Gamma, from the entry's parameters.
    fn entry_context(&mut self) -> Option<CtxId> {
        let m = self.m;
        let Some(def) = m.entry_def() else {
            self.err(
                Loc::Module,
                Span::GENERATED,
                format!("the source module has no definition `{}`", m.entry),
            );
            return None;
        };
        let mut gamma = CtxId::EMPTY;
        let mut names = std::collections::HashSet::new();
        for p in &def.params {
            // Positions, not names, index the context here, but leaving
            // UNF (Fig. 10) binds the parameters by name again.
            if !names.insert(&p.name) {
                self.err(
                    Loc::Module,
                    p.span,
                    format!("parameter `{}` appears twice", p.name),
                );
                return None;
            }
            match &p.ty {
                Some(ty) if ty.is_ground() => {
                    let t = self.t.ground(ty);
                    gamma = self.t.snoc(gamma, t);
                }
                _ => {
                    self.err(
                        Loc::Module,
                        p.span,
                        format!("parameter `{}` has no ground type", p.name),
                    );
                    return None;
                }
            }
        }
        Some(gamma)
    }

    fn check_target_ends(&mut self, gamma: CtxId) {
        let m = self.m;
        let n = self.t.len(gamma);
        let mut seen = Vec::new();
        for &w in &m.wrt {
            if w == 0 || w > n {
                self.err(
                    Loc::Module,
                    Span::GENERATED,
                    format!("`wrt` position {w} is not a parameter"),
                );
                return;
            }
            if seen.contains(&w) {
                self.err(
                    Loc::Module,
                    Span::GENERATED,
                    format!("`wrt` lists position {w} twice"),
                );
                return;
            }
            seen.push(w);
        }
        let wrt_tys: Vec<TyId> = m
            .wrt
            .iter()
            .filter_map(|&w| self.t.entry(gamma, w))
            .collect();
        let Some(rho) = rho_of(&mut self.t, &wrt_tys) else {
            self.err(
                Loc::Module,
                Span::GENERATED,
                "the gradient type is not ground",
            );
            return;
        };
        let k = self.t.cont(gamma, rho);
        let d_gamma = self.t.snoc(gamma, k);
        if m.input != d_gamma {
            self.err(
                Loc::Module,
                Span::GENERATED,
                "`input` is not D_ρ(Gamma) = Gamma·(Gamma → ρ)",
            );
        }
        let out_ok = match self.t.split_last(m.output) {
            Some((t_out, last)) => self.t.ty(last) == &UTy::Cont(t_out, rho),
            None => false,
        };
        if !out_ok {
            self.err(
                Loc::Module,
                Span::GENERATED,
                "`output` is not D_ρ(T) = T·(T → ρ) for any T",
            );
        }
    }

    fn io(&self, t: TermId) -> Option<(CtxId, CtxId)> {
        self.info[t.index()].io
    }

    fn term(&mut self, id: TermId) -> Info {
        let m = self.m;
        let span = m.spans[id.index()];
        let at = Loc::Term(id);
        let (mut any_compose, mut any_target) = (false, false);
        for c in m.terms[id.index()].children() {
            let info = self.info[c.index()];
            any_compose |= info.has_compose;
            any_target |= info.target_only;
        }
        match &m.terms[id.index()] {
            Term::Prim(p) => {
                let io = self.prim(id, p, false);
                Info {
                    io,
                    req: None,
                    has_compose: false,
                    target_only: any_target,
                }
            }
            Term::Fused(p, rho) => {
                let real = self.real;
                let io = match p {
                    Prim::If { ret, .. } if *ret == real => self.prim(id, p, true),
                    _ if p.is_first_order() => self.prim(id, p, false),
                    _ => {
                        self.err(
                            at,
                            span,
                            "only a first-order primitive or an `if` with a real result is fused",
                        );
                        None
                    }
                };
                let io = match (io, self.ground(at, span, *rho)) {
                    (Some((i, o)), Some(_)) => {
                        Some((d_with(&mut self.t, i, *rho), d_with(&mut self.t, o, *rho)))
                    }
                    _ => None,
                };
                Info {
                    io,
                    req: None,
                    has_compose: true,
                    target_only: true,
                }
            }
            Term::Jt(p) => {
                let io = self.prim(id, p, true);
                Info {
                    io: io.map(|(i, o)| (o, i)),
                    req: io.map(|(i, _)| i),
                    has_compose: false,
                    target_only: true,
                }
            }
            Term::Seq(first, then) | Term::Weak(first, then) => {
                let weak = matches!(m.terms[id.index()], Term::Weak(..));
                let (a, b) = (self.info[first.index()], self.info[then.index()]);
                let req = self.merge(at, span, a.req, b.req);
                let io = match (a.io, b.io) {
                    (Some((i1, o1)), Some((i2, o2))) => {
                        if o1 != i2 {
                            self.err(at, span, format!("`;` joins output {o1} to input {i2}"));
                            None
                        } else if weak
                            && !(self.t.len(o1) > self.t.len(i1)
                                && self.t.is_prefix(i1, o1)
                                && self.t.is_prefix(o1, o2))
                        {
                            self.err(at, span, "`;~` whose operands do not extend their inputs");
                            None
                        } else {
                            Some((i1, o2))
                        }
                    }
                    _ => None,
                };
                Info {
                    io,
                    req,
                    has_compose: any_compose,
                    target_only: any_target,
                }
            }
            Term::Tuple(a, b) => {
                let req = {
                    let (ra, rb) = (self.info[a.index()].req, self.info[b.index()].req);
                    self.merge(at, span, ra, rb)
                };
                let io = match (self.io(*a), self.io(*b)) {
                    (Some((i1, o1)), Some((i2, o2))) => {
                        if i1 != i2 {
                            self.err(
                                at,
                                span,
                                format!("`<,>` of terms with inputs {i1} and {i2}"),
                            );
                            None
                        } else {
                            Some((i1, self.t.append(o1, o2)))
                        }
                    }
                    _ => None,
                };
                Info {
                    io,
                    req,
                    has_compose: any_compose,
                    target_only: true,
                }
            }
            Term::Compose(a, b) => {
                let (ia, ib) = (self.info[a.index()], self.info[b.index()]);
                if ia.req.is_some() {
                    self.err(
                        at,
                        span,
                        "the left operand of `∘` holds a J^T outside a `∘`",
                    );
                }
                if ib.has_compose {
                    self.err(at, span, "a `∘` inside the right operand of a `∘`");
                }
                let io = match (ia.io, ib.io) {
                    (Some((i1, o1)), Some((i2, o2))) => {
                        let cont = self
                            .t
                            .split_last(o1)
                            .filter(|(p, _)| *p == CtxId::EMPTY)
                            .and_then(|(_, t)| match self.t.ty(t) {
                                UTy::Cont(arg, ret) => Some((*arg, *ret)),
                                UTy::Ground(_) => None,
                            });
                        match cont {
                            None => {
                                self.err(
                                    at,
                                    span,
                                    "the left operand of `∘` does not return one continuation",
                                );
                                None
                            }
                            Some((t3, _)) if t3 != o2 => {
                                self.err(
                                    at,
                                    span,
                                    format!("`∘` precomposes a continuation of {t3} with a map into {o2}"),
                                );
                                None
                            }
                            Some((_, ret)) => {
                                if let Some(r) = ib.req
                                    && !self.t.is_prefix(r, i1)
                                {
                                    self.err(
                                        at,
                                        span,
                                        format!("a J^T reads the primal point {r}, which does not start {i1}"),
                                    );
                                }
                                let k = self.t.cont(i2, ret);
                                Some((i1, self.t.snoc(CtxId::EMPTY, k)))
                            }
                        }
                    }
                    _ => None,
                };
                Info {
                    io,
                    req: None,
                    has_compose: true,
                    target_only: true,
                }
            }
        }
    }

    fn merge(&mut self, at: Loc, span: Span, a: Option<CtxId>, b: Option<CtxId>) -> Option<CtxId> {
        match (a, b) {
            (None, r) | (r, None) => r,
            (Some(a), Some(b)) => {
                if self.t.is_prefix(a, b) {
                    Some(b)
                } else if self.t.is_prefix(b, a) {
                    Some(a)
                } else {
                    self.err(
                        at,
                        span,
                        format!("J^T terms read incompatible primal points {a} and {b}"),
                    );
                    Some(a)
                }
            }
        }
    }
}

/// Whether two ground types are equal up to the sizes of their arrays.
pub fn same_shape(a: &Ty, b: &Ty) -> bool {
    match (a, b) {
        (Ty::Array(_, x), Ty::Array(_, y)) => same_shape(x, y),
        (Ty::Tuple(xs), Ty::Tuple(ys)) => {
            xs.len() == ys.len() && xs.iter().zip(ys).all(|(x, y)| same_shape(x, y))
        }
        _ => a == b,
    }
}

fn show(t: &Ty) -> String {
    crate::print::ground(t)
}

/// Whether `op` is a builtin of [`Op::Builtin`] applying to arguments of
/// the types `args` with result `ret`.
pub fn builtin_fits(op: syntax::Prim, args: &[Ty], ret: &Ty) -> bool {
    use syntax::Prim as P;
    let scalar = |t: &Ty| matches!(t, Ty::Real | Ty::Int);
    let reals = |t: &Ty| matches!(t, Ty::Array(_, e) if **e == Ty::Real);
    let ints = |t: &Ty| matches!(t, Ty::Array(_, e) if **e == Ty::Int);
    match (op, args) {
        (P::Lt | P::Le | P::Gt | P::Ge, [a, b]) => scalar(a) && a == b && *ret == Ty::Bool,
        (P::Eq | P::Ne, [a, b]) => {
            matches!(a, Ty::Real | Ty::Int | Ty::Bool) && a == b && *ret == Ty::Bool
        }
        (P::And | P::Or, [a, b]) => *a == Ty::Bool && *b == Ty::Bool && *ret == Ty::Bool,
        (P::Not, [a]) => *a == Ty::Bool && *ret == Ty::Bool,
        (P::Add | P::Sub | P::Mul | P::Div | P::Mod | P::Max | P::Min, [a, b]) => {
            *a == Ty::Int && *b == Ty::Int && *ret == Ty::Int
        }
        (P::Neg | P::Abs, [a]) => *a == Ty::Int && *ret == Ty::Int,
        (P::Length, [Ty::Array(..)]) => *ret == Ty::Int,
        (op, [a]) if derivatives::sig(op) == Some(Sig::IntToReal) => {
            *a == Ty::Int && *ret == Ty::Real
        }
        (op, [a]) if derivatives::sig(op) == Some(Sig::RealToInt) => {
            *a == Ty::Real && *ret == Ty::Int
        }
        (P::Shift1L | P::Shift1R, [a @ Ty::Array(..)]) => same_shape(a, ret),
        // Scatter and the histograms of scalars (`syntax::hist`).
        (
            P::Scatter | P::HistAdd | P::HistMul | P::HistMin | P::HistMax,
            [Ty::Array(_, d), Ty::Array(_, i), Ty::Array(_, v)],
        ) => {
            let elem_ok = if op == P::Scatter {
                matches!(**d, Ty::Real | Ty::Int | Ty::Bool)
            } else {
                scalar(d)
            };
            elem_ok && **i == Ty::Int && d == v && same_shape(&args[0], ret)
        }
        // The histogram of rows of scalars.
        (P::HistAddRows, [Ty::Array(_, d), Ty::Array(_, i), Ty::Array(_, v)]) => {
            matches!(&**d, Ty::Array(_, e) if scalar(e))
                && **i == Ty::Int
                && same_shape(d, v)
                && same_shape(&args[0], ret)
        }
        // Their partials, which an inner `grad_rev` splices in (a real
        // array `a`, the indices `is`, the winners `w`, `syntax::hist`).
        (P::Gather, [a, is]) => reals(a) && ints(is) && reals(ret),
        (P::WinnerScatter, [Ty::Array(..), is]) => ints(is) && ints(ret),
        (P::WinnerMin | P::WinnerMax, [d, is, v]) => reals(d) && ints(is) && reals(v) && ints(ret),
        (P::GatherWon, [a, is, w]) => reals(a) && ints(is) && ints(w) && reals(ret),
        (P::PickDest, [a, w]) => reals(a) && ints(w) && same_shape(a, ret),
        (P::DHistMulDest | P::DHistMulVals, [d, is, v]) => {
            reals(d) && ints(is) && reals(v) && reals(ret)
        }
        _ => false,
    }
}

/// Whether a scalar primitive is a unary operator of Source UNF: a Source
/// primitive of one argument with partials in the table.
pub fn is_unary(p: syntax::Prim) -> bool {
    p.arity() == 1 && real_operator(p)
}

/// Whether a scalar primitive is a binary operator of Source UNF.
pub fn is_binary(p: syntax::Prim) -> bool {
    p.arity() == 2 && real_operator(p)
}

/// A Source primitive that the table differentiates.
fn real_operator(p: syntax::Prim) -> bool {
    !p.is_target_only() && derivatives::partials(p).is_some()
}

/// ρ for a list of ground types: the type itself when there is one, their
/// tuple otherwise. None if one is not ground.
pub fn rho_of(t: &mut Tables, tys: &[TyId]) -> Option<TyId> {
    if tys.len() == 1 {
        return t.ground_ty(tys[0]).map(|_| tys[0]);
    }
    let items: Option<Vec<Ty>> = tys.iter().map(|&x| t.ground_ty(x).cloned()).collect();
    Some(t.ground(&Ty::Tuple(items?)))
}

/// `D_ρ(T) = T·(T → ρ)`.
pub fn d_with(t: &mut Tables, c: CtxId, rho: TyId) -> CtxId {
    let k = t.cont(c, rho);
    t.snoc(c, k)
}
