//! The partial derivatives `∂_i op (x1, ..., xn)` of Definition 182.6
//! (seeds/002) as terms of the program being built: the table of
//! `syntax::derivatives` (the one place that knows a derivative, and the
//! choices at kinks: docs/derivatives.md) instantiated over the primal
//! arguments and the primal result `r = op (x1, ..., xn)`.
//!
//! The operation clause of the macro (`crate::dual`) multiplies each term
//! by the tangent of its argument and sums. Every term is itself an
//! ordinary program, so a transformed program can be transformed again
//! (forward over forward); the Target-only derivative primitives (`dtan`,
//! `d1pow`, ...) have entries for that.
//!
//! Construct expansion (`diff`, `grad`, ... inside a Source program) must
//! leave a Source program, which reverse mode may differentiate next; there
//! (`Builder::source_only`) a Target-only derivative primitive of a partial is
//! written as the Source expansion it stands for
//! (`syntax::derivatives::source_form`), with the same values.

use syntax::derivatives::{self, Instantiate};
use syntax::{ExprId, Prim, Ty};

use crate::build::{Atom, Builder, Res};

/// One partial derivative `∂_i op`, as a term of the program.
pub(crate) type Partial = derivatives::Partial<ExprId>;

/// Whether the table's terms for `op` mention the primal result `r`, which
/// the operation clause then binds once.
pub(crate) fn uses_result(op: Prim) -> bool {
    derivatives::uses_result(op)
}

/// Whether `op` is a scalar operation with an entry in the table (it is one
/// of the operations of Definition 182.4 when its result type is `R`).
pub(crate) fn has_entry(op: Prim) -> bool {
    derivatives::partials(op).is_some()
}

/// The partial derivatives of `op` at the primal arguments `x`, one per
/// argument, in order. `r` is the primal result (only read when
/// [`uses_result`] says so).
pub(crate) fn partials(cx: &mut Builder, op: Prim, x: &[Atom], r: &Atom) -> Res<Vec<Partial>> {
    if x.len() != op.arity() {
        return Err(cx.internal(format!("`{op}` applied to {} arguments", x.len())));
    }
    let mut to = Terms { cx, x, r };
    match derivatives::instantiate_partials(op, &mut to)? {
        Some(ps) => Ok(ps),
        None => Err(to.cx.internal(format!("no derivative rule for `{op}`"))),
    }
}

/// The table's terms written with the macro's builder.
struct Terms<'a> {
    cx: &'a mut Builder,
    x: &'a [Atom],
    r: &'a Atom,
}

impl Instantiate for Terms<'_> {
    type Out = ExprId;
    type Error = crate::error::Error;

    fn arg(&mut self, i: usize) -> ExprId {
        self.cx.emit(&self.x[i])
    }

    fn result(&mut self) -> ExprId {
        self.cx.emit(self.r)
    }

    fn real(&mut self, c: f64) -> ExprId {
        self.cx.real(c)
    }

    fn apply(&mut self, op: Prim, args: Vec<ExprId>) -> ExprId {
        match (op, args.as_slice()) {
            // `y - 1` with a literal `y` folded, `1 * a` written `a`.
            (Prim::Sub, &[a, b]) => match (self.cx.as_atom(a), self.cx.as_atom(b)) {
                (Some(Atom::Real(p)), Some(Atom::Real(q))) => self.cx.real(p - q),
                _ => self.cx.prim_r(op, args),
            },
            (Prim::Mul, &[a, b]) => self.cx.mul_r(a, b),
            _ => self.cx.prim_r(op, args),
        }
    }

    fn compare(&mut self, cmp: Prim, a: ExprId, b: ExprId) -> ExprId {
        self.cx.prim(cmp, vec![a, b], Ty::Bool)
    }

    fn ite(&mut self, c: ExprId, a: ExprId, b: ExprId) -> Res<ExprId> {
        self.cx.if_(c, a, b)
    }

    fn source_only(&self) -> bool {
        self.cx.source_only
    }
}

/// The Source expansion of the Target-only primitive `op` applied to `x`
/// (`syntax::derivatives::source_form`, the same values), or `None` when
/// it has none (`digamma`, `trigamma`). Reverse mode inside the language
/// splices a gradient program into a Source one with it.
pub(crate) fn source_form(cx: &mut Builder, op: Prim, x: &[Atom]) -> Res<Option<ExprId>> {
    let Some(form) = derivatives::source_form(op) else {
        return Ok(None);
    };
    let no_result = Atom::Real(f64::NAN);
    let mut to = Terms {
        cx,
        x,
        r: &no_result,
    };
    derivatives::instantiate(&form, &mut to).map(Some)
}
