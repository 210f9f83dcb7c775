//! `reverse`: reverse-mode differentiation D_ρ from Source UNF to Target UNF
//! (seeds/000 Fig. 8).
//!
//! In: a verified Source UNF module `Gamma ⊢ e : Gamma·R`. Out: the Target
//! UNF module `D_ρ(Gamma) ⊢ D_ρ(e) : D_ρ(Gamma·R)`, where
//! `D_ρ(T) = T·(underline(T) → ρ)` and ρ is the tuple of the types of the
//! parameters the gradient is taken with respect to (Section 3.3's rho;
//! the others are dropped by the initial continuation, the paper's
//! projection Y).
//!
//! The transformation is Fig. 8, clause by clause: sequences are
//! differentiated piecewise, `D(e1 ; e2) = D(e1) ; D(e2)`, and every
//! primitive p with `T_in ⊢ p : T_out` becomes
//! `F(p, J^T p) = <proj_{T_in;[K];[]} ; p, proj_{[];T_in;[K]} ∘ J^T p>`
//! with `K = underline(T_in) → ρ`. For a first-order primitive (`var`,
//! `op`, `pair`, `proj`, `array`: most of a program) that is stored as the
//! one node `Fused(p, ρ)`, the paper's own abbreviation `F(p, J^T p)`,
//! rather than as seven nodes holding p and T_in twice each. (The paper's F writes the right operand
//! of `∘` as `proj ; J^T p`; in our typing of `∘` the right operand is a
//! linear map read at the primal point of the `∘`'s input, so the
//! projection is not needed.)
//!
//! `J^T map`, `J^T map2` and `J^T reduce` need the gradient of their
//! function's body (Fig. 10's `∇ e1`). The paper obtains it with the direct
//! macro of Fig. 5; we obtain it with this same transformation applied to
//! the body's Source UNF, with ρ' the body's whole context, and store it as
//! the `J^T` primitive's `fun.body` (Proposition 6.14: both denote the same).
//!
//! Invariants: the output verifies whenever the input does (Lemma 4.3);
//! every context and type keeps its id, so the Source UNF primitives are
//! copied unchanged; the output is linear in the size of the input.

pub mod direct;

pub use direct::reverse_direct;

use syntax::Span;
use syntax::stack::guard;
use unf::verify::{d_with, rho_of};
use unf::{CtxId, Fun, Kind, Module, Prim, Tables, Term, TermId, TyId, UTy};

/// What to differentiate with respect to.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Config {
    /// The parameters of the entry, by name (the paper's rho); `None` means
    /// all of them, in order.
    pub wrt: Option<Vec<String>>,
}

/// An error of reverse mode.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
pub enum Error {
    /// The input is not a verified Source UNF module.
    #[error("{source}")]
    Unf {
        /// What `unf` said.
        #[from]
        source: unf::Error,
    },
    /// A Target UNF module given where Source UNF is expected.
    #[error("reverse mode takes a `source-unf` module, not `{found}`")]
    WrongKind {
        /// The envelope name of what was given.
        found: &'static str,
    },
    /// A `wrt` name that is not a parameter of the entry.
    #[error("`{name}` is not a parameter of `{entry}`")]
    UnknownParam {
        /// The entry's name.
        span: Span,
        /// The name asked for.
        name: String,
        /// The entry.
        entry: String,
    },
    /// A `wrt` list that names a parameter twice or none.
    #[error("{message}")]
    BadWrt {
        /// The entry's name.
        span: Span,
        /// What is wrong.
        message: String,
    },
    /// A program whose result is not a real: it has no gradient.
    #[error("reverse mode needs a program whose result is a real, but `{entry}` returns {ty}")]
    NotReal {
        /// The entry's name.
        span: Span,
        /// The entry.
        entry: String,
        /// Its result type.
        ty: String,
    },
    /// The output failed its verifier: a bug of this crate.
    #[error("internal error after pass 'reverse': {source}")]
    Internal {
        /// What the verifier said.
        source: unf::Error,
    },
}

impl Error {
    /// Where the error is.
    pub fn span(&self) -> Span {
        match self {
            Error::Unf { source } | Error::Internal { source } => source.span(),
            Error::WrongKind { .. } => Span::GENERATED,
            Error::UnknownParam { span, .. }
            | Error::BadWrt { span, .. }
            | Error::NotReal { span, .. } => *span,
        }
    }
}

/// The arrow D_ρ (Fig. 8): the reverse derivative of a Source UNF module.
pub fn reverse(m: &Module, cfg: &Config) -> Result<Module, Error> {
    if m.kind != Kind::Source {
        return Err(Error::WrongKind {
            found: m.kind.ir_name(),
        });
    }
    let checked = unf::check(m).map_err(|errors| unf::invalid(m, errors))?;
    reverse_checked(m, checked, cfg)
}

/// [`reverse`] of a module its caller has already checked: `checked` is
/// what `unf::check(m)` returned (a caller that verifies its input anyway,
/// as the CLI does on reading a file, saves checking it twice). The output
/// is verified as by [`reverse`].
pub fn reverse_checked(m: &Module, checked: unf::Checked, cfg: &Config) -> Result<Module, Error> {
    reverse_checked_both(m, checked, cfg).map(|(out, _)| out)
}

/// [`reverse_checked`], also returning what the verifier of its output
/// computed, so that a caller handing it on to `unf::raise_checked` does
/// not check it a second time (the library's pass list).
pub fn reverse_checked_both(
    m: &Module,
    checked: unf::Checked,
    cfg: &Config,
) -> Result<(Module, unf::Checked), Error> {
    if m.kind != Kind::Source {
        return Err(Error::WrongKind {
            found: m.kind.ir_name(),
        });
    }
    if checked.io.len() != m.terms.len() {
        return Err(Error::Internal {
            source: unf::Error::Shape {
                span: Span::GENERATED,
                message: "the check handed to reverse is of another module".to_string(),
            },
        });
    }
    let def = m
        .entry_def()
        .expect("invariant: the verifier checked the entry exists");
    let wrt = wrt_positions(def, cfg)?;
    let mut t = checked.tables;
    let (t_in, res) = t
        .split_last(m.output)
        .expect("invariant: the verifier checked output = Gamma·B");
    let _ = t_in;
    if t.ty(res) != &UTy::Ground(syntax::Ty::Real) {
        return Err(Error::NotReal {
            span: def.name_span,
            entry: def.name.to_string(),
            ty: match t.ty(res) {
                UTy::Ground(ty) => unf::print::ground(ty),
                UTy::Cont(..) => "a continuation".to_string(),
            },
        });
    }
    let wrt_tys: Vec<TyId> = wrt
        .iter()
        .map(|&w| {
            t.entry(m.input, w)
                .expect("invariant: wrt positions are parameters")
        })
        .collect();
    let rho = rho_of(&mut t, &wrt_tys).expect("invariant: parameters have ground types");
    let mut d = D {
        m,
        io: checked.io,
        t,
        terms: Vec::new(),
        spans: Vec::new(),
    };
    let root = d.diff(m.root, rho);
    let input = d_with(&mut d.t, m.input, rho);
    let output = d_with(&mut d.t, m.output, rho);
    let (tys, ctxs) = d.t.into_parts();
    let out = Module {
        kind: Kind::Target,
        source: m.source.clone(),
        entry: m.entry.clone(),
        tys,
        ctxs,
        terms: d.terms,
        spans: d.spans,
        root,
        input,
        output,
        wrt,
    };
    // The output embeds the input's Source module unchanged (cloned
    // above), which the input's check verified.
    let checked = unf::check_with_verified_source(&out).map_err(|errors| Error::Internal {
        source: unf::invalid(&out, errors),
    })?;
    Ok((out, checked))
}

/// The whole chain for a Source definition: UNF (Fig. 9), D_ρ (Fig. 8) and
/// UNF^-1 (Fig. 10). The result is the Target program of docs/unf.md: one
/// definition `<entry>_grad` with the entry's parameters, returning
/// `(value, g_1, ..., g_k)`.
pub fn gradient(
    m: &syntax::Module,
    entry: &syntax::Def,
    cfg: &Config,
) -> Result<syntax::Module, Error> {
    let s = unf::lower(m, entry)?;
    let t = reverse(&s, cfg)?;
    Ok(unf::raise(&t)?)
}

/// The 1-based positions of the `wrt` parameters.
fn wrt_positions(def: &syntax::Def, cfg: &Config) -> Result<Vec<u32>, Error> {
    let Some(names) = &cfg.wrt else {
        return Ok((1..=def.params.len() as u32).collect());
    };
    if names.is_empty() {
        return Err(Error::BadWrt {
            span: def.name_span,
            message: "the gradient is asked with respect to no parameter".to_string(),
        });
    }
    let mut out = Vec::with_capacity(names.len());
    for name in names {
        let Some(i) = def.params.iter().position(|p| p.name.as_str() == name) else {
            return Err(Error::UnknownParam {
                span: def.name_span,
                name: name.clone(),
                entry: def.name.to_string(),
            });
        };
        let pos = i as u32 + 1;
        if out.contains(&pos) {
            return Err(Error::BadWrt {
                span: def.name_span,
                message: format!("`{name}` is listed twice in the parameters to differentiate"),
            });
        }
        out.push(pos);
    }
    Ok(out)
}

struct D<'a> {
    m: &'a Module,
    io: Vec<(CtxId, CtxId)>,
    t: Tables,
    terms: Vec<Term>,
    spans: Vec<Span>,
}

impl D<'_> {
    fn add(&mut self, term: Term, span: Span) -> TermId {
        let id = TermId(self.terms.len() as u32);
        self.terms.push(term);
        self.spans.push(span);
        id
    }

    /// `D_ρ(e)`.
    fn diff(&mut self, e: TermId, rho: TyId) -> TermId {
        guard(|| {
            let span = self.m.span(e);
            match self.m.term(e) {
                Term::Seq(first, then) | Term::Weak(first, then) => {
                    let a = self.diff(*first, rho);
                    let b = self.diff(*then, rho);
                    self.add(Term::Seq(a, b), span)
                }
                Term::Prim(p) => self.f(e, p, rho),
                Term::Jt(_) | Term::Tuple(..) | Term::Compose(..) | Term::Fused(..) => {
                    unreachable!(
                        "invariant: a verified Source UNF module has no Target UNF construct"
                    )
                }
            }
        })
    }

    /// `F(p, J^T p) = <proj_{T;[K];[]} ; p, proj_{[];T;[K]} ∘ J^T p>`: one
    /// node `Fused(p, ρ)` for a first-order primitive (which this tuple
    /// would hold twice, with its context) and for a real-valued `if` (the
    /// two in one piece, `unf::Term::Fused`); the tuple itself for the
    /// other primitives with a function.
    fn f(&mut self, e: TermId, p: &Prim, rho: TyId) -> TermId {
        let span = self.m.span(e);
        if p.is_first_order() {
            return self.add(Term::Fused(p.clone(), rho), span);
        }
        if let Prim::If { ret, .. } = p
            && self.t.ground_ty(*ret) == Some(&syntax::Ty::Real)
        {
            let fused = self.jt_prim(p);
            return self.add(Term::Fused(fused, rho), span);
        }
        let (t_in, _) = self.io[e.index()];
        let k = self.t.cont(t_in, rho);
        let k_list = self.t.snoc(CtxId::EMPTY, k);
        let drop_k = self.add(Term::Prim(Prim::Proj(t_in, k_list, CtxId::EMPTY)), span);
        let primal = self.copy_prim(p);
        let primal = self.add(Term::Prim(primal), span);
        let fwd = self.add(Term::Seq(drop_k, primal), span);
        let keep_k = self.add(Term::Prim(Prim::Proj(CtxId::EMPTY, t_in, k_list)), span);
        let jt = self.jt_prim(p);
        let jt = self.add(Term::Jt(jt), span);
        let bwd = self.add(Term::Compose(keep_k, jt), span);
        self.add(Term::Tuple(fwd, bwd), span)
    }

    /// The primitive itself, its Source UNF sub-terms copied.
    fn copy_prim(&mut self, p: &Prim) -> Prim {
        match p {
            Prim::Map {
                ctx,
                args,
                ret,
                fun,
            } => Prim::Map {
                ctx: *ctx,
                args: args.clone(),
                ret: *ret,
                fun: self.copy_fun(fun),
            },
            Prim::Reduce {
                ctx,
                arg,
                fun,
                init_expr,
                init,
            } => Prim::Reduce {
                ctx: *ctx,
                arg: *arg,
                fun: Fun {
                    lambda: fun.lambda,
                    free: fun.free.clone(),
                    body: self.copy(fun.body),
                },
                init_expr: *init_expr,
                init: self.copy(*init),
            },
            Prim::If {
                ctx,
                ret,
                then_fun,
                else_fun,
            } => Prim::If {
                ctx: *ctx,
                ret: *ret,
                then_fun: self.copy_fun(then_fun),
                else_fun: self.copy_fun(else_fun),
            },
            Prim::Loop {
                kind,
                ctx,
                args,
                ret,
                fun,
            } => Prim::Loop {
                kind: *kind,
                ctx: *ctx,
                args: args.clone(),
                ret: *ret,
                fun: self.copy_fun(fun),
            },
            Prim::Trips {
                ctx,
                state,
                cond,
                body,
            } => self.copy_trips(*ctx, *state, cond, body),
            other => other.clone(),
        }
    }

    /// `trips` with its functions copied: in `J^T trips` too, since the
    /// count has no cotangent and its functions stay primal.
    fn copy_trips(&mut self, ctx: CtxId, state: TyId, cond: &Fun, body: &Fun) -> Prim {
        Prim::Trips {
            ctx,
            state,
            cond: self.copy_fun(cond),
            body: self.copy_fun(body),
        }
    }

    fn copy_fun(&mut self, fun: &Fun) -> Fun {
        Fun {
            lambda: fun.lambda,
            free: fun.free.clone(),
            body: self.copy(fun.body),
        }
    }

    /// The `J^T` of a primitive: the same indices, with the body of a
    /// function replaced by its reverse derivative `D_ρ'(body)`.
    fn jt_prim(&mut self, p: &Prim) -> Prim {
        match p {
            Prim::Map {
                ctx,
                args,
                ret,
                fun,
            } => Prim::Map {
                ctx: *ctx,
                args: args.clone(),
                ret: *ret,
                fun: self.diff_fun(fun),
            },
            Prim::Reduce {
                ctx,
                arg,
                fun,
                init_expr,
                init,
            } => Prim::Reduce {
                ctx: *ctx,
                arg: *arg,
                fun: self.diff_fun(fun),
                init_expr: *init_expr,
                init: self.copy(*init),
            },
            Prim::If {
                ctx,
                ret,
                then_fun,
                else_fun,
            } => Prim::If {
                ctx: *ctx,
                ret: *ret,
                then_fun: self.diff_fun(then_fun),
                else_fun: self.diff_fun(else_fun),
            },
            Prim::Loop {
                kind,
                ctx,
                args,
                ret,
                fun,
            } => Prim::Loop {
                kind: *kind,
                ctx: *ctx,
                args: args.clone(),
                ret: *ret,
                fun: self.diff_fun(fun),
            },
            Prim::Trips {
                ctx,
                state,
                cond,
                body,
            } => self.copy_trips(*ctx, *state, cond, body),
            other => other.clone(),
        }
    }

    fn diff_fun(&mut self, fun: &Fun) -> Fun {
        let (body_in, _) = self.io[fun.body.index()];
        let entries = self.t.entries(body_in);
        let rho = rho_of(&mut self.t, &entries).expect("invariant: bodies have ground contexts");
        Fun {
            lambda: fun.lambda,
            free: fun.free.clone(),
            body: self.diff(fun.body, rho),
        }
    }

    /// A deep copy of a Source UNF term into the output arena.
    fn copy(&mut self, e: TermId) -> TermId {
        guard(|| {
            let span = self.m.span(e);
            let term = match self.m.term(e) {
                Term::Prim(p) => Term::Prim(self.copy_prim(p)),
                Term::Seq(first, then) => {
                    let (a, b) = (self.copy(*first), self.copy(*then));
                    Term::Seq(a, b)
                }
                Term::Weak(first, then) => {
                    let (a, b) = (self.copy(*first), self.copy(*then));
                    Term::Weak(a, b)
                }
                other => other.clone(),
            };
            self.add(term, span)
        })
    }
}
