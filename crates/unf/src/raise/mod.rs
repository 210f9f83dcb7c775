//! The arrow UNF^-1 (seeds/000 Fig. 10): a UNF module → a Target program in
//! core form (`syntax::Module`) that the reference evaluator runs.
//!
//! Fig. 10 names the entries of a context `x1, ..., xn` and turns each
//! primitive into a term over them: `e1 ; e2` becomes
//! `let x_{n+1} = UNF^-1(e1) in UNF^-1(e2)`, a primitive the expression it
//! computes, `e1 ∘ e2` a lambda applying the continuation e1 to the linear
//! map e2. We do the same by walking the term with the context held as a
//! persistent vector (`state.rs`) of what its entries are: a variable of the Target
//! program, a zero not yet written out, or a continuation. Each primitive
//! reads and replaces O(1) entries, so contexts are shared, never copied.
//!
//! Continuations are not written out as lambdas: a continuation is kept as
//! the chain of `J^T` maps it precomposes (Lemma 5.1: each is used exactly
//! once), and applying the last one to the seed `(0, ..., 0, 1)` writes the
//! backward pass as straight-line `let`s, the maps applied last to first.
//! This is UNF^-1 followed by the inlining and forward substitution of the
//! continuations that Section 5.1 performs anyway. We do it here because a
//! continuation's type names its whole context, so materialised
//! continuations would make the Target program quadratic in size (see
//! docs/unf.md, "Continuations").
//!
//! Output conventions:
//! - Source UNF of `f`: one definition `f`, same parameters, same result.
//! - Target UNF of `f`: one definition `f_grad`, same parameters, returning
//!   `(value, g_1, ..., g_k)` with g_i the gradient with respect to the i-th
//!   position of `wrt`, seeded with 1 on the result (the paper's
//!   `π2 D(e)(0_Γ, 1)`); with k = 0 (an entry without parameters), the
//!   value alone.

mod arrays;
mod calculus;
mod checkpoint;
mod custom;
mod emit;
mod hist;
mod loops;
mod nested;
mod picked;
mod rows;
mod select;
mod sparse;
mod state;

pub use checkpoint::Checkpoint;

use crate::error::Error;
use crate::ir::{Kind, Module, Prim, Term, TermId, UTy};
use crate::tables::Tables;
use crate::verify::{Checked, check};
use emit::{Builder, ValId};
use state::State;
use syntax::stack::guard;
use syntax::{Def, Expr, Span, Ty};

/// What an entry of a context is while raising.
#[derive(Debug, Clone, Copy, PartialEq)]
enum Abs {
    /// A value of the program.
    Val(ValId),
    /// The zero of the type of the witness value (same shape); written out
    /// only when needed.
    Zero(ValId),
    /// A continuation: an index into `Raise::conts`.
    Cont(u32),
    /// A cotangent of an array of reals that is mostly the transposes of
    /// reads `a[i]`, kept as their pairs `(i, z)`: an index into
    /// `Raise::sparse` (`sparse.rs`).
    Sparse(u32),
}

/// The primal point a `J^T p` reads, as a continuation keeps it.
#[derive(Debug, Clone)]
enum Primal {
    /// The whole input context of the `∘` (a persistent vector: keeping it
    /// costs nothing, but the path to every entry changed afterwards is
    /// copied while it is kept).
    Full(State),
    /// Only the entries `base..` of it, all that the `J^T` of a
    /// first-order primitive reads (its operands, or the entries a `proj`
    /// drops), for a fused `F(p, J^T p)`: keeping the whole context of
    /// every primitive of a long program would keep every version of it.
    Top { base: usize, vals: Vec<Abs> },
}

impl Primal {
    fn point(&self) -> Point<'_> {
        match self {
            Primal::Full(s) => Point::Full(s),
            Primal::Top { base, vals } => Point::Top(*base, vals),
        }
    }
}

/// A primal point as `J^T` reads it: see [`Primal`].
#[derive(Debug, Clone, Copy)]
enum Point<'a> {
    Full(&'a State),
    Top(usize, &'a [Abs]),
}

impl Point<'_> {
    /// The entry at (0-based) position `i`.
    fn at(self, i: usize) -> Abs {
        match self {
            Point::Full(s) => at(s, i),
            Point::Top(base, vals) => *i
                .checked_sub(base)
                .and_then(|j| vals.get(j))
                .expect("invariant: a fused primitive's J^T reads only the entries it keeps"),
        }
    }
}

/// A continuation: the maps it precomposes, innermost first.
#[derive(Debug, Clone)]
enum Cont {
    /// The continuation a derivative starts from: returns its argument (the
    /// cotangent of the whole input context; `wrt` selects from it).
    Initial,
    /// `prev ∘ jt`, with the primal point `jt` reads (`jt` a linear map,
    /// or a first-order `Term::Fused` standing for its `J^T p`).
    Compose {
        prev: u32,
        jt: TermId,
        primal: Primal,
    },
    /// `prev ∘ J^T if` for a real-valued `if` whose branch gradient was
    /// computed with its value (`Term::Fused`, `loops.rs`): the cotangent z
    /// on top of the `if`'s output (position `n + 1`) adds `g * z` at each
    /// listed position.
    Scaled {
        prev: u32,
        n: usize,
        grads: Vec<ScaledGrad>,
    },
}

/// One gradient of a [`Cont::Scaled`]: `g`, laid out as `part` says
/// (`sparse.rs`), scaled and added at context position `pos`, whose
/// primal value is `witness`.
#[derive(Debug, Clone)]
struct ScaledGrad {
    pos: usize,
    g: ValId,
    part: sparse::Part,
    witness: ValId,
}

/// The arrow UNF^-1: the Target program of a UNF module (see the module
/// documentation for the definition it contains).
pub fn raise(m: &Module) -> Result<syntax::Module, Error> {
    raise_with(m, Checkpoint::Off)
}

/// [`raise`] of a module its caller has already checked: `checked` is what
/// [`check`]`(m)` returned (a caller that verifies its input anyway, as the
/// CLI does on reading a file, saves checking it twice).
pub fn raise_checked(m: &Module, checked: Checked) -> Result<syntax::Module, Error> {
    raise_checked_with(m, checked, Checkpoint::Off)
}

/// [`raise`] with the loops' transposed Jacobians written by `checkpoint`
/// (the same gradient, another trade of memory for time: `checkpoint.rs`).
pub fn raise_with(m: &Module, checkpoint: Checkpoint) -> Result<syntax::Module, Error> {
    let checked = check(m).map_err(|errors| Error::Invalid {
        span: errors.first().map(|e| e.span).unwrap_or(Span::GENERATED),
        ir: m.kind.ir_name(),
        errors,
    })?;
    raise_checked_with(m, checked, checkpoint)
}

/// [`raise_checked`] with the loops written by `checkpoint`.
pub fn raise_checked_with(
    m: &Module,
    checked: Checked,
    checkpoint: Checkpoint,
) -> Result<syntax::Module, Error> {
    if checked.io.len() != m.terms.len() {
        return Err(internal(
            Span::GENERATED,
            "the check handed to raise is of another module",
        ));
    }
    let def = m
        .entry_def()
        .expect("invariant: the verifier checked the entry exists");
    let reserved: Vec<_> = def.params.iter().map(|p| p.name.clone()).collect();
    let mut r = Raise {
        m,
        t: checked.tables,
        b: Builder::new(m.source.file.clone(), &reserved),
        conts: Vec::new(),
        sparse: Vec::new(),
        checkpoint,
        maybe_none: Vec::new(),
    };
    let inputs: Vec<Abs> = def
        .params
        .iter()
        .map(|p| {
            let ty =
                p.ty.clone()
                    .expect("invariant: verified parameters are typed");
            Abs::Val(r.b.var_val(p.name.clone(), ty))
        })
        .collect();
    r.b.span = def.name_span;
    let (name, body) = match m.kind {
        Kind::Source => {
            let out = r.eval(m.root, inputs.into_iter().collect(), None)?;
            let value = r.last_val(&out)?;
            let e = r.b.use_val(value);
            (def.name.clone(), r.b.close_pruned(e))
        }
        Kind::Target => {
            let (t_out, _) =
                r.t.split_last(m.output)
                    .expect("invariant: the verifier checked output = D(T)");
            let last = r.t.split_last(t_out).map(|(_, t)| r.t.ty(t).clone());
            if last != Some(UTy::Ground(Ty::Real)) {
                return Err(Error::Shape {
                    span: def.name_span,
                    message: "a gradient needs a program whose result is a real".to_string(),
                });
            }
            let seed = Abs::Val(r.b.real(1.0));
            let (value, cot) = r.grad(m.root, inputs, seed)?;
            let mut items = vec![r.b.use_val(value)];
            let mut tys = vec![r.b.ty(value).clone()];
            for &w in &m.wrt {
                let g = r.materialize(cot[w as usize - 1])?;
                items.push(r.b.use_val(g));
                tys.push(r.b.ty(g).clone());
            }
            // With no parameter to differentiate, the value alone (a tuple
            // has 0 or at least 2 components).
            let result = match items.as_slice() {
                [only] => *only,
                _ => r.b.add(Expr::Tuple(items), Ty::Tuple(tys)),
            };
            (
                syntax::Name::new(format!("{}_grad", def.name)),
                r.b.close_pruned(result),
            )
        }
    };
    let ret = r.b.node_ty(body).clone();
    let retype = r.b.retype;
    let mut out = std::mem::take(&mut r.b.out);
    out.defs.push(Def {
        name,
        name_span: def.name_span,
        params: def.params.clone(),
        ret: Some(ret),
        body,
    });
    // Every node was typed as it was made, exactly as `syntax::infer`
    // types it (`syntax::verify`, run on raise's output by the tests,
    // checks that inference reproduces the stored types), so inference is
    // not run again here: on long programs it would double raise's time.
    // The constructs beyond the paper's core (conditionals, loops,
    // indexing, ...) make arrays whose sizes inference relates better than
    // the builder: a program that holds one is typed again by inference.
    out.compact();
    if retype {
        syntax::infer(&mut out).map_err(|e| Error::Shape {
            span: e.span(),
            message: format!("internal error in raise: the output does not type: {e}"),
        })?;
    }
    Ok(out)
}

struct Raise<'a> {
    m: &'a Module,
    t: Tables,
    b: Builder,
    conts: Vec<Cont>,
    /// The cotangents kept as pairs (`Abs::Sparse`).
    sparse: Vec<sparse::Sparse>,
    /// How the loops' transposed Jacobians are written.
    checkpoint: Checkpoint,
    /// The pair indices that may be -1, "no element" (`select.rs`): a
    /// `J^T map` at such a pair reads its element under a guard
    /// (`picked.rs`).
    maybe_none: Vec<emit::ValId>,
}

fn at(s: &State, i: usize) -> Abs {
    *s.get(i)
        .expect("invariant: the verifier checked context positions")
}

/// The first `n` entries of `s`. Taken by value: when the caller held the
/// only reference, the entries are dropped in place instead of copying the
/// path to each (a shared vector copies it).
fn truncate(mut s: State, n: usize) -> State {
    s.truncate(n);
    s
}

/// `s` with `a` pushed, in place when `s` is not shared (`push_back` on a
/// vector about to be dropped would copy the path to its last entry).
fn pushed(mut s: State, a: Abs) -> State {
    s.push_back_mut(a);
    s
}

fn internal(span: Span, message: &str) -> Error {
    Error::Shape {
        span,
        message: format!("internal error in raise: {message}"),
    }
}

impl Raise<'_> {
    fn last_val(&mut self, s: &State) -> Result<ValId, Error> {
        match s.last() {
            Some(a) => self.materialize(*a),
            None => Err(internal(self.b.span, "an empty context has no result")),
        }
    }

    /// A program value for an entry, writing out a zero if needed.
    fn materialize(&mut self, a: Abs) -> Result<ValId, Error> {
        match a {
            Abs::Val(v) => Ok(v),
            Abs::Zero(w) => Ok(self.zero_of(w)),
            Abs::Sparse(id) => self.materialize_sparse(id),
            Abs::Cont(_) => Err(internal(
                self.b.span,
                "a continuation where a value is expected",
            )),
        }
    }

    fn ctx_len(&self, c: crate::ir::CtxId) -> usize {
        self.t.len(c) as usize
    }

    /// Raises `term` on the context `s`; `primal` is the primal point when
    /// `term` is (part of) the right operand of a `∘`.
    fn eval(&mut self, term: TermId, s: State, primal: Option<&State>) -> Result<State, Error> {
        guard(|| self.eval_inner(term, s, primal))
    }

    fn eval_inner(
        &mut self,
        term: TermId,
        s: State,
        primal: Option<&State>,
    ) -> Result<State, Error> {
        let m = self.m;
        let saved = self.b.span;
        let span = m.span(term);
        if !span.is_generated() {
            self.b.span = span;
        }
        let res = match m.term(term) {
            Term::Prim(p) => self.prim(p, s),
            Term::Jt(p) => match primal {
                Some(pr) => self.jt(p, s, Point::Full(pr)),
                None => Err(internal(span, "a J^T outside a `∘`")),
            },
            Term::Seq(first, then) | Term::Weak(first, then) => {
                let s = self.eval(*first, s, primal)?;
                self.eval(*then, s, primal)
            }
            Term::Fused(p, _) => match primal {
                None if p.is_first_order() => self.fused_first_order(term, p, s),
                None => self.fused(p, &s),
                Some(_) => Err(internal(span, "a fused F(p, J^T p) inside a linear map")),
            },
            Term::Tuple(a, b) => {
                let mut ra = self.eval(*a, s.clone(), primal)?;
                let rb = self.eval(*b, s, primal)?;
                for x in rb.iter() {
                    ra.push_back_mut(*x);
                }
                Ok(ra)
            }
            Term::Compose(a, b) => {
                let ra = self.eval(*a, s.clone(), primal)?;
                let Some(Abs::Cont(prev)) = ra.last().copied() else {
                    return Err(internal(
                        span,
                        "the left operand of `∘` is not a continuation",
                    ));
                };
                let id = self.conts.len() as u32;
                self.conts.push(Cont::Compose {
                    prev,
                    jt: *b,
                    primal: Primal::Full(s),
                });
                Ok(State::one(Abs::Cont(id)))
            }
        };
        self.b.span = saved;
        res
    }

    /// `F(p, J^T p)` of a first-order primitive (`term`, a `Term::Fused`)
    /// on `s = T_in · K`: p on T_in, then the continuation K precomposed
    /// with `J^T p` read at the primal point s.
    fn fused_first_order(&mut self, term: TermId, p: &Prim, s: State) -> Result<State, Error> {
        let Some(Abs::Cont(prev)) = s.last().copied() else {
            return Err(internal(self.b.span, "a derivative without a continuation"));
        };
        let mut base = s;
        base.drop_last_mut();
        // What `J^T p` will read of the primal point: the entries from
        // the first operand up (from T2 on for a `proj`).
        let lo = match p {
            Prim::Var(..) => base.len(),
            Prim::Op(ctx, _)
            | Prim::Pair(ctx, _)
            | Prim::Array { ctx, .. }
            | Prim::Custom { ctx, .. } => self.ctx_len(*ctx),
            Prim::Proj(keep, ..) => self.ctx_len(*keep),
            _ => return Err(internal(self.b.span, "a fused primitive with a function")),
        };
        let vals: Vec<Abs> = (lo.min(base.len())..base.len())
            .map(|i| at(&base, i))
            .collect();
        let mut out = self.prim(p, base)?;
        let id = self.conts.len() as u32;
        self.conts.push(Cont::Compose {
            prev,
            jt: term,
            primal: Primal::Top { base: lo, vals },
        });
        out.push_back_mut(Abs::Cont(id));
        Ok(out)
    }

    /// The whole primal point, which the `J^T` of a primitive with a
    /// function reads (never a fused one's).
    fn full<'p>(&self, primal: Point<'p>) -> Result<&'p State, Error> {
        match primal {
            Point::Full(s) => Ok(s),
            Point::Top(..) => Err(internal(
                self.b.span,
                "a primitive with a function read at a fused primal point",
            )),
        }
    }

    /// Applies the linear map `jt` (the right operand of a `∘`, or a
    /// first-order `Fused` node standing for its `J^T p`) to `cot`, at the
    /// primal point `primal`.
    fn linear(&mut self, jt: TermId, cot: State, primal: &Primal) -> Result<State, Error> {
        match (self.m.term(jt), primal) {
            (Term::Fused(p, _), _) => {
                let saved = self.b.span;
                let span = self.m.span(jt);
                if !span.is_generated() {
                    self.b.span = span;
                }
                let res = self.jt(p, cot, primal.point());
                self.b.span = saved;
                res
            }
            (_, Primal::Full(s)) => self.eval(jt, cot, Some(s)),
            (_, Primal::Top { .. }) => Err(internal(
                self.b.span,
                "a linear map read at a fused primal point",
            )),
        }
    }

    /// The value a Source UNF term computes from the given entries.
    fn value(&mut self, term: TermId, inputs: &[Abs]) -> Result<ValId, Error> {
        let out = self.eval(term, inputs.iter().copied().collect(), None)?;
        self.last_val(&out)
    }

    /// The value a reverse derivative `D(e)` computes, without its backward
    /// pass (the continuation is never applied, so nothing of it is written).
    fn primal_value(&mut self, term: TermId, inputs: Vec<Abs>) -> Result<ValId, Error> {
        let init = self.conts.len() as u32;
        self.conts.push(Cont::Initial);
        let mut s: State = inputs.into_iter().collect();
        s.push_back_mut(Abs::Cont(init));
        let out = self.eval(term, s, None)?;
        let n = out.len();
        if n < 2 {
            return Err(internal(
                self.b.span,
                "a derivative that does not end in a continuation",
            ));
        }
        self.materialize(at(&out, n - 2))
    }

    /// Raises a reverse derivative `D(e)` (a Target UNF term from
    /// `D(T)` to `D(T·R)`) on the given entries of T and applies its final
    /// continuation to `(0, ..., 0, seed)`: returns e's value and the
    /// cotangents of the entries.
    fn grad(
        &mut self,
        term: TermId,
        inputs: Vec<Abs>,
        seed: Abs,
    ) -> Result<(ValId, Vec<Abs>), Error> {
        let init = self.conts.len() as u32;
        self.conts.push(Cont::Initial);
        let mut s: State = inputs.into_iter().collect();
        s.push_back_mut(Abs::Cont(init));
        let out = self.eval(term, s, None)?;
        let n = out.len();
        let (Some(Abs::Cont(k)), true) = (out.last().copied(), n >= 2) else {
            return Err(internal(
                self.b.span,
                "a derivative that does not end in a continuation",
            ));
        };
        let value = self.materialize(at(&out, n - 2))?;
        let mut cot = State::new();
        for i in 0..n - 2 {
            let w = match at(&out, i) {
                Abs::Val(v) | Abs::Zero(v) => v,
                Abs::Cont(_) | Abs::Sparse(_) => {
                    return Err(internal(self.b.span, "a continuation among the results"));
                }
            };
            cot.push_back_mut(Abs::Zero(w));
        }
        cot.push_back_mut(seed);
        let cot = self.apply(k, cot)?;
        Ok((value, cot.iter().copied().collect()))
    }

    /// Applies a continuation to cotangents: the backward pass.
    fn apply(&mut self, k: u32, cot: State) -> Result<State, Error> {
        let mut k = k;
        let mut cot = cot;
        loop {
            match self.conts[k as usize].clone() {
                Cont::Initial => return Ok(cot),
                Cont::Compose { prev, jt, primal } => {
                    cot = self.linear(jt, cot, &primal)?;
                    k = prev;
                }
                Cont::Scaled { prev, n, grads } => {
                    cot = self.apply_scaled(cot, n, &grads)?;
                    k = prev;
                }
            }
        }
    }

    /// A primitive of Source UNF on the context `s`.
    fn prim(&mut self, p: &Prim, s: State) -> Result<State, Error> {
        use crate::ir::Op;
        match p {
            Prim::Var(_, index) => {
                let x = at(&s, *index as usize - 1);
                Ok(pushed(s, x))
            }
            Prim::Op(ctx, op) => {
                let n = self.ctx_len(*ctx);
                let v = match op {
                    Op::Const(c) => self.b.real(*c),
                    // The literal again, one node sharing the numbers.
                    Op::Reals { node, .. } => match self.m.source.exprs.get(node.index()) {
                        Some(syntax::Expr::Reals(literal)) => {
                            let e = self
                                .b
                                .add(syntax::Expr::Reals(literal.clone()), literal.ty());
                            self.b.bind(e, "c")
                        }
                        _ => return Err(internal(self.b.span, "`reals` names no literal")),
                    },
                    Op::Unary(o) => {
                        let x = self.materialize(at(&s, n))?;
                        let e = self.b.use_val(x);
                        let e = self.b.un(*o, e);
                        self.b.bind(e, "v")
                    }
                    Op::Binary(o) => {
                        let x = self.materialize(at(&s, n))?;
                        let y = self.materialize(at(&s, n + 1))?;
                        let e = self.b.bin_vals(*o, x, y);
                        self.b.bind(e, "v")
                    }
                    Op::Int(k) => self.b.int(*k),
                    Op::Bool(b) => self.b.boolean(*b),
                    Op::Builtin { op, args, ret } => {
                        self.b.retype = true;
                        let k = self.ctx_len(*args);
                        let mut operands = Vec::with_capacity(k);
                        for i in 0..k {
                            let x = self.materialize(at(&s, n + i))?;
                            operands.push(self.b.use_val(x));
                        }
                        let ty = self.t.ground_ty(*ret).cloned().unwrap_or(Ty::Real);
                        let e = self.b.prim(*op, operands, ty);
                        self.b.bind(e, "v")
                    }
                    Op::Index { .. } => {
                        self.b.retype = true;
                        let a = self.materialize(at(&s, n))?;
                        let i = self.materialize(at(&s, n + 1))?;
                        let ie = self.b.use_val(i);
                        let e = self.b.index(a, ie);
                        self.b.bind(e, "v")
                    }
                    Op::Proj { index, tuple } => {
                        let x = self.materialize(at(&s, n))?;
                        let ty = match self.t.ground_ty(*tuple) {
                            Some(Ty::Tuple(items)) => items[*index as usize - 1].clone(),
                            _ => {
                                return Err(internal(
                                    self.b.span,
                                    "π of a value that is not a tuple",
                                ));
                            }
                        };
                        let e = self.b.use_val(x);
                        let e = self.b.add(
                            Expr::Proj {
                                tuple: e,
                                index: *index,
                            },
                            ty,
                        );
                        self.b.bind(e, "v")
                    }
                };
                Ok(pushed(s, Abs::Val(v)))
            }
            Prim::Pair(ctx, ty) => {
                let n = self.ctx_len(*ctx);
                let ty = self
                    .t
                    .ground_ty(*ty)
                    .cloned()
                    .unwrap_or(Ty::Tuple(Vec::new()));
                let mut items = Vec::new();
                for i in n..s.len() {
                    let v = self.materialize(at(&s, i))?;
                    items.push(self.b.use_val(v));
                }
                let e = self.b.add(Expr::Tuple(items), ty);
                let v = self.b.bind(e, "p");
                Ok(pushed(truncate(s, n), Abs::Val(v)))
            }
            Prim::Proj(keep, drop, rest) => {
                let (lk, ld, lr) = (
                    self.ctx_len(*keep),
                    self.ctx_len(*drop),
                    self.ctx_len(*rest),
                );
                Ok(project(s, lk, ld, lr))
            }
            Prim::Map {
                ctx,
                args,
                ret,
                fun,
            } => {
                let n = self.ctx_len(*ctx);
                let mut arrays = Vec::new();
                for i in 0..args.len() {
                    arrays.push(self.materialize(at(&s, n + i))?);
                }
                let free: Vec<Abs> = fun.free.iter().map(|&f| at(&s, f as usize - 1)).collect();
                let lam = self.fun_lambda(fun, &free)?;
                let op = if args.len() == 1 {
                    syntax::Prim::Map
                } else {
                    syntax::Prim::Map2
                };
                let mut operands = vec![lam];
                for a in arrays {
                    operands.push(self.b.use_val(a));
                }
                let ty = self.t.ground_ty(*ret).cloned().unwrap_or(Ty::Real);
                let e = self.b.prim(op, operands, ty);
                let v = self.b.bind(e, "m");
                Ok(pushed(s, Abs::Val(v)))
            }
            Prim::Reduce { ctx, fun, init, .. } => {
                let n = self.ctx_len(*ctx);
                let a = self.materialize(at(&s, n))?;
                let z = self.value(*init, &[])?;
                let lam = self.lambda2(fun.body, false)?;
                let operands = vec![lam, self.b.use_val(z), self.b.use_val(a)];
                let e = self.b.prim(syntax::Prim::Reduce, operands, Ty::Real);
                let v = self.b.bind(e, "r");
                Ok(pushed(s, Abs::Val(v)))
            }
            Prim::Array { ctx, ty, len } => {
                self.b.retype = true;
                let n = self.ctx_len(*ctx);
                let mut items = Vec::with_capacity(*len as usize);
                for i in 0..*len as usize {
                    let v = self.materialize(at(&s, n + i))?;
                    items.push(self.b.use_val(v));
                }
                let ty = self.t.ground_ty(*ty).cloned().unwrap_or(Ty::Real);
                let e = self.b.add(Expr::Array(items), ty);
                let v = self.b.bind(e, "a");
                Ok(pushed(truncate(s, n), Abs::Val(v)))
            }
            Prim::Custom { ctx, ret, node, .. } => self.custom(*ctx, *ret, *node, s),
            Prim::If {
                ctx,
                ret,
                then_fun,
                else_fun,
            } => {
                self.b.retype = true;
                let n = self.ctx_len(*ctx);
                let c = self.materialize(at(&s, n))?;
                let mut branches = Vec::with_capacity(2);
                for fun in [then_fun, else_fun] {
                    let free: Vec<Abs> = fun.free.iter().map(|&f| at(&s, f as usize - 1)).collect();
                    self.b.open();
                    let v = self.value(fun.body, &free)?;
                    let e = self.b.use_val(v);
                    branches.push(self.b.close_pruned(e));
                }
                let ty = self.t.ground_ty(*ret).cloned().unwrap_or(Ty::Real);
                let ce = self.b.use_val(c);
                let e = self.b.add(
                    Expr::If {
                        cond: ce,
                        then_branch: branches[0],
                        else_branch: branches[1],
                    },
                    ty,
                );
                let v = self.b.bind(e, "v");
                Ok(pushed(s, Abs::Val(v)))
            }
            Prim::Loop {
                kind,
                ctx,
                args,
                ret,
                fun,
            } => {
                self.b.retype = true;
                let n = self.ctx_len(*ctx);
                let free: Vec<Abs> = fun.free.iter().map(|&f| at(&s, f as usize - 1)).collect();
                let lam = self.fun_lambda(fun, &free)?;
                let mut operands = Vec::with_capacity(args.len() + 1);
                for i in 0..args.len() {
                    let v = self.materialize(at(&s, n + i))?;
                    operands.push(self.b.use_val(v));
                }
                let f_pos = kind.prim().function_arg().unwrap_or(0);
                operands.insert(f_pos, lam);
                let ty = self.t.ground_ty(*ret).cloned().unwrap_or(Ty::Real);
                let e = self.b.prim(kind.prim(), operands, ty);
                let v = self.b.bind(e, "l");
                Ok(pushed(s, Abs::Val(v)))
            }
            Prim::Trips {
                ctx, cond, body, ..
            } => {
                self.b.retype = true;
                let n = self.ctx_len(*ctx);
                let mut operands = Vec::with_capacity(3);
                for fun in [cond, body] {
                    let free: Vec<Abs> = fun.free.iter().map(|&f| at(&s, f as usize - 1)).collect();
                    operands.push(self.fun_lambda(fun, &free)?);
                }
                let z = self.materialize(at(&s, n))?;
                operands.push(self.b.use_val(z));
                let e = self.b.prim(syntax::Prim::Trips, operands, Ty::Int);
                let v = self.b.bind(e, "n");
                Ok(pushed(s, Abs::Val(v)))
            }
        }
    }

    /// The parameters of a function's Source lambda (none for a branch):
    /// their types and names.
    fn fun_params(&self, fun: &crate::ir::Fun) -> Vec<(Ty, String)> {
        match self.m.source.exprs.get(fun.lambda.index()) {
            Some(Expr::Lambda { params, .. }) => params
                .iter()
                .map(|p| {
                    (
                        p.ty.clone().unwrap_or(Ty::Real),
                        p.name.as_str().to_string(),
                    )
                })
                .collect(),
            _ => Vec::new(),
        }
    }

    /// The Target lambda of a function: `fun (p1, ..., pk) -> body`, the
    /// body's free variables bound to `free`.
    fn fun_lambda(&mut self, fun: &crate::ir::Fun, free: &[Abs]) -> Result<syntax::ExprId, Error> {
        let ps = self.fun_params(fun);
        let spec: Vec<(Ty, &str)> = ps.iter().map(|(t, n)| (t.clone(), n.as_str())).collect();
        let params = self.b.params(&spec);
        self.b.open();
        let mut inputs = free.to_vec();
        inputs.extend(params.iter().map(|&p| Abs::Val(p)));
        let res = self.value(fun.body, &inputs)?;
        let e = self.b.use_val(res);
        let body = self.b.close_pruned(e);
        Ok(self.b.lambda(&params, body))
    }

    /// `fun (x, y) -> body(x, y)` for a closed function of two reals; when
    /// `derivative` is set the body is a reverse derivative and the lambda
    /// returns its value.
    fn lambda2(&mut self, body: TermId, derivative: bool) -> Result<syntax::ExprId, Error> {
        let params = self.b.params(&[(Ty::Real, "x"), (Ty::Real, "y")]);
        self.b.open();
        let inputs: Vec<Abs> = params.iter().map(|&p| Abs::Val(p)).collect();
        let res = if derivative {
            self.primal_value(body, inputs)?
        } else {
            self.value(body, &inputs)?
        };
        let e = self.b.use_val(res);
        let body = self.b.close_pruned(e);
        Ok(self.b.lambda(&params, body))
    }
}

/// `proj_{T1;T2;T3}` on a context of length `lk + ld + lr`: keeps the first
/// `lk` and the last `lr` entries, in O(min(lk, ld) + lr).
fn project(s: State, lk: usize, ld: usize, lr: usize) -> State {
    let rest: Vec<Abs> = (lk + ld..s.len()).map(|i| at(&s, i)).collect();
    let mut out = truncate(s, lk);
    debug_assert_eq!(rest.len(), lr);
    for x in rest {
        out.push_back_mut(x);
    }
    out
}
