//! The unification tables of type inference: type variables and size
//! variables, both in `ena` union-find tables.
//!
//! Every type under inference is a [`TyVar`]; what is known about it lives in
//! the table as a [`TyVal`]: either a constructor whose children are again
//! variables ([`Ctor`]), or `Unknown` with the span where the variable was
//! made and a [`Class`] that restricts what it may become (`Num`: `R` or
//! `Int`; `Eq`: `R`, `Int` or `Bool`). When two unknowns merge, the class is
//! the meet of both and the better span (one that points into the text) is
//! kept.
//!
//! An array dimension is a [`SizeTerm`], a size variable plus a constant
//! offset (`n + 1`). A size variable is `Unknown`, a literal, a rigid named
//! size of the definition (plus an offset) or another variable plus an
//! offset. Two terms are a static error only when they are provably
//! different: distinct literals, or the same variable with distinct offsets.
//! Everything else that cannot be decided (two distinct rigid names, a rigid
//! name against a literal) is left to the run-time checks (docs/types.md,
//! "Sizes").
//!
//! Invariants: a variable bound to a constructor never occurs inside that
//! constructor (occurs check), so resolution terminates; a size variable
//! bound to `Offset(v, k)` has `v` unknown at the time of binding, so chains
//! of offsets are acyclic.

use ena::unify::{InPlaceUnificationTable, NoError, UnifyKey, UnifyValue};

use std::sync::Arc;

use crate::fxhash::FxHashMap;
use crate::ir::{Name, Size, Span, Ty};

/// A type variable.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub(crate) struct TyVar(u32);

impl UnifyKey for TyVar {
    type Value = TyVal;
    fn index(&self) -> u32 {
        self.0
    }
    fn from_index(u: u32) -> TyVar {
        TyVar(u)
    }
    fn tag() -> &'static str {
        "TyVar"
    }
}

/// What an unknown type variable may still become.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Class {
    /// Anything.
    Any,
    /// `R` or `Int` (arithmetic, ordering, numeric literals).
    Num,
    /// `R`, `Int` or `Bool` (`==`, `!=`).
    Eq,
}

impl Class {
    /// The class of a variable that must satisfy both.
    fn meet(self, other: Class) -> Class {
        match (self, other) {
            (Class::Any, c) | (c, Class::Any) => c,
            (Class::Num, _) | (_, Class::Num) => Class::Num,
            (Class::Eq, Class::Eq) => Class::Eq,
        }
    }

    /// Whether a variable of this class may be bound to `ctor`.
    fn admits(self, ctor: &Ctor) -> bool {
        match self {
            Class::Any => true,
            Class::Num => matches!(ctor, Ctor::Real | Ctor::Int),
            Class::Eq => matches!(ctor, Ctor::Real | Ctor::Int | Ctor::Bool),
        }
    }

    /// How the class reads in a message ("expected a number, ...").
    pub(crate) fn describe(self) -> &'static str {
        match self {
            Class::Any => "a value",
            Class::Num => "a number (`R` or `Int`)",
            Class::Eq => "a number or a boolean",
        }
    }
}

/// A type constructor whose components are variables.
#[derive(Clone, Debug)]
pub(crate) enum Ctor {
    Real,
    Int,
    Bool,
    Array(SizeTerm, TyVar),
    Tuple(Vec<TyVar>),
    Func(Vec<TyVar>, TyVar),
}

impl Ctor {
    fn children(&self) -> Vec<TyVar> {
        match self {
            Ctor::Real | Ctor::Int | Ctor::Bool => Vec::new(),
            Ctor::Array(_, elem) => vec![*elem],
            Ctor::Tuple(items) => items.clone(),
            Ctor::Func(params, ret) => params.iter().copied().chain([*ret]).collect(),
        }
    }
}

/// The value of a type variable in the table.
#[derive(Clone, Debug)]
pub(crate) enum TyVal {
    Known(Ctor),
    Unknown { span: Span, class: Class },
}

/// Prefers a span that points into the text.
fn better(a: Span, b: Span) -> Span {
    if a.is_generated() { b } else { a }
}

impl UnifyValue for TyVal {
    type Error = NoError;
    fn unify_values(a: &TyVal, b: &TyVal) -> Result<TyVal, NoError> {
        Ok(match (a, b) {
            (TyVal::Known(k), _) | (_, TyVal::Known(k)) => TyVal::Known(k.clone()),
            (
                TyVal::Unknown {
                    span: s1,
                    class: c1,
                },
                TyVal::Unknown {
                    span: s2,
                    class: c2,
                },
            ) => TyVal::Unknown {
                span: better(*s1, *s2),
                class: c1.meet(*c2),
            },
        })
    }
}

/// A size variable.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub(crate) struct SizeVar(u32);

impl UnifyKey for SizeVar {
    type Value = SizeVal;
    fn index(&self) -> u32 {
        self.0
    }
    fn from_index(u: u32) -> SizeVar {
        SizeVar(u)
    }
    fn tag() -> &'static str {
        "SizeVar"
    }
}

/// The value of a size variable in the table.
#[derive(Clone, Debug)]
pub(crate) enum SizeVal {
    Unknown {
        span: Span,
    },
    /// A literal size (never negative once bound).
    Lit(i64),
    /// A rigid size name of the definition (index into `Tables::rigid`) plus an offset.
    Rigid(u32, i64),
    /// Another variable plus an offset.
    Offset(SizeVar, i64),
}

impl UnifyValue for SizeVal {
    type Error = NoError;
    fn unify_values(a: &SizeVal, b: &SizeVal) -> Result<SizeVal, NoError> {
        Ok(match (a, b) {
            (SizeVal::Unknown { span: s1 }, SizeVal::Unknown { span: s2 }) => SizeVal::Unknown {
                span: better(*s1, *s2),
            },
            (SizeVal::Unknown { .. }, known) | (known, SizeVal::Unknown { .. }) => known.clone(),
            // Known values are only ever merged with unknowns (`unify_size`).
            (known, _) => known.clone(),
        })
    }
}

/// An array dimension under inference: `var + offset`.
#[derive(Clone, Copy, Debug)]
pub(crate) struct SizeTerm {
    pub var: SizeVar,
    pub offset: i64,
}

/// A size term with every binding followed.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum SizeNorm {
    Lit(i64),
    Rigid(u32, i64),
    Var(SizeVar, i64),
}

/// Why two types do not unify.
#[derive(Clone, Copy, Debug)]
pub(crate) enum Clash {
    /// Different constructors, arities or sizes.
    Mismatch,
    /// An unknown of a class met a constructor outside it; `expected_side`
    /// says whether the unknown was on the expected side.
    Class { class: Class, expected_side: bool },
    /// A variable would contain itself.
    Infinite,
}

/// Both tables plus the rigid size names of the definition being inferred.
#[derive(Default)]
pub(crate) struct Tables {
    tys: InPlaceUnificationTable<TyVar>,
    sizes: InPlaceUnificationTable<SizeVar>,
    /// The rigid size names, indexed by `SizeVal::Rigid`.
    pub rigid: Vec<Name>,
}

impl Tables {
    /// A fresh unknown type.
    pub fn fresh(&mut self, span: Span, class: Class) -> TyVar {
        self.tys.new_key(TyVal::Unknown { span, class })
    }

    /// A variable bound to a constructor.
    pub fn known(&mut self, ctor: Ctor) -> TyVar {
        self.tys.new_key(TyVal::Known(ctor))
    }

    /// A fresh unknown size.
    pub fn fresh_size(&mut self, span: Span) -> SizeTerm {
        SizeTerm {
            var: self.sizes.new_key(SizeVal::Unknown { span }),
            offset: 0,
        }
    }

    /// A size variable with a known value.
    pub fn known_size(&mut self, val: SizeVal) -> SizeTerm {
        SizeTerm {
            var: self.sizes.new_key(val),
            offset: 0,
        }
    }

    /// The number of type variables made so far.
    pub fn n_vars(&self) -> u32 {
        self.tys.len() as u32
    }

    /// The variable with this index.
    pub fn var(index: u32) -> TyVar {
        TyVar(index)
    }

    /// The current value of a variable's root.
    pub fn probe(&mut self, v: TyVar) -> TyVal {
        self.tys.probe_value(v)
    }

    /// The constructor of a variable, if it is known.
    pub fn ctor(&mut self, v: TyVar) -> Option<Ctor> {
        match self.tys.probe_value(v) {
            TyVal::Known(c) => Some(c),
            TyVal::Unknown { .. } => None,
        }
    }

    /// Binds an unknown variable to a constructor (the caller has checked
    /// that it is unknown; the class and occurs checks are done here).
    pub fn bind(&mut self, v: TyVar, ctor: Ctor) -> Result<(), Clash> {
        let k = self.known(ctor);
        self.unify(v, k)
    }

    /// Follows a size term to its normal form.
    pub fn norm(&mut self, t: SizeTerm) -> SizeNorm {
        let (mut var, mut offset) = (t.var, t.offset);
        loop {
            let root = self.sizes.find(var);
            match self.sizes.probe_value(root) {
                SizeVal::Unknown { .. } => return SizeNorm::Var(root, offset),
                SizeVal::Lit(k) => return SizeNorm::Lit(k + offset),
                SizeVal::Rigid(r, o) => return SizeNorm::Rigid(r, o + offset),
                SizeVal::Offset(next, o) => {
                    var = next;
                    offset += o;
                }
            }
        }
    }

    /// Makes two size terms equal, or reports a definite mismatch.
    pub fn unify_size(&mut self, a: SizeTerm, b: SizeTerm) -> Result<(), Clash> {
        match (self.norm(a), self.norm(b)) {
            (SizeNorm::Var(x, o1), SizeNorm::Var(y, o2)) => {
                if x == y {
                    return if o1 == o2 {
                        Ok(())
                    } else {
                        Err(Clash::Mismatch)
                    };
                }
                if o1 == o2 {
                    self.sizes.union(x, y);
                } else {
                    // x + o1 = y + o2.
                    self.sizes.union_value(x, SizeVal::Offset(y, o2 - o1));
                }
                Ok(())
            }
            (SizeNorm::Var(x, o), SizeNorm::Lit(k)) | (SizeNorm::Lit(k), SizeNorm::Var(x, o)) => {
                if k - o < 0 {
                    return Err(Clash::Mismatch);
                }
                self.sizes.union_value(x, SizeVal::Lit(k - o));
                Ok(())
            }
            (SizeNorm::Var(x, o), SizeNorm::Rigid(r, o2))
            | (SizeNorm::Rigid(r, o2), SizeNorm::Var(x, o)) => {
                self.sizes.union_value(x, SizeVal::Rigid(r, o2 - o));
                Ok(())
            }
            (SizeNorm::Lit(a), SizeNorm::Lit(b)) => {
                if a == b {
                    Ok(())
                } else {
                    Err(Clash::Mismatch)
                }
            }
            (SizeNorm::Rigid(r1, o1), SizeNorm::Rigid(r2, o2)) if r1 == r2 => {
                if o1 == o2 {
                    Ok(())
                } else {
                    Err(Clash::Mismatch)
                }
            }
            // Distinct rigid names, or a rigid name against a literal:
            // not decidable statically, checked at run time.
            (SizeNorm::Rigid(..), _) | (_, SizeNorm::Rigid(..)) => Ok(()),
        }
    }

    /// Makes two types equal. On failure the tables are rolled back to
    /// where they were before the call, so the caller can print both sides
    /// as they were.
    pub fn unify(&mut self, expected: TyVar, found: TyVar) -> Result<(), Clash> {
        let snap_tys = self.tys.snapshot();
        let snap_sizes = self.sizes.snapshot();
        match self.unify_inner(expected, found) {
            Ok(()) => {
                self.tys.commit(snap_tys);
                self.sizes.commit(snap_sizes);
                Ok(())
            }
            Err(clash) => {
                self.tys.rollback_to(snap_tys);
                self.sizes.rollback_to(snap_sizes);
                Err(clash)
            }
        }
    }

    fn unify_inner(&mut self, expected: TyVar, found: TyVar) -> Result<(), Clash> {
        let mut work = vec![(expected, found)];
        while let Some((a, b)) = work.pop() {
            let (ra, rb) = (self.tys.find(a), self.tys.find(b));
            if ra == rb {
                continue;
            }
            match (self.tys.probe_value(ra), self.tys.probe_value(rb)) {
                (TyVal::Unknown { .. }, TyVal::Unknown { .. }) => self.tys.union(ra, rb),
                (TyVal::Unknown { class, .. }, TyVal::Known(k)) => {
                    self.check_bind(ra, class, &k, true)?;
                    self.tys.union(ra, rb);
                }
                (TyVal::Known(k), TyVal::Unknown { class, .. }) => {
                    self.check_bind(rb, class, &k, false)?;
                    self.tys.union(ra, rb);
                }
                (TyVal::Known(k1), TyVal::Known(k2)) => match (k1, k2) {
                    (Ctor::Real, Ctor::Real)
                    | (Ctor::Int, Ctor::Int)
                    | (Ctor::Bool, Ctor::Bool) => {}
                    (Ctor::Array(s1, e1), Ctor::Array(s2, e2)) => {
                        self.unify_size(s1, s2)?;
                        work.push((e1, e2));
                    }
                    (Ctor::Tuple(xs), Ctor::Tuple(ys)) if xs.len() == ys.len() => {
                        work.extend(xs.into_iter().zip(ys));
                    }
                    (Ctor::Func(ps, r), Ctor::Func(qs, s)) if ps.len() == qs.len() => {
                        work.extend(ps.into_iter().zip(qs));
                        work.push((r, s));
                    }
                    _ => return Err(Clash::Mismatch),
                },
            }
        }
        Ok(())
    }

    fn check_bind(
        &mut self,
        v: TyVar,
        class: Class,
        ctor: &Ctor,
        expected_side: bool,
    ) -> Result<(), Clash> {
        if !class.admits(ctor) {
            return Err(Clash::Class {
                class,
                expected_side,
            });
        }
        if self.occurs(v, ctor) {
            return Err(Clash::Infinite);
        }
        Ok(())
    }

    /// Whether `v` (a root) occurs inside `ctor`.
    fn occurs(&mut self, v: TyVar, ctor: &Ctor) -> bool {
        let mut stack = ctor.children();
        while let Some(c) = stack.pop() {
            let root = self.tys.find(c);
            if root == v {
                return true;
            }
            if let TyVal::Known(k) = self.tys.probe_value(root) {
                stack.extend(k.children());
            }
        }
        false
    }

    /// The type of a variable, or the span of an unresolved type variable
    /// inside it. Unresolved sizes become `Size::Dyn`.
    pub fn resolve(&mut self, v: TyVar) -> Result<Ty, Span> {
        crate::stack::guard(|| match self.tys.probe_value(v) {
            TyVal::Unknown { span, .. } => Err(span),
            TyVal::Known(ctor) => Ok(match ctor {
                Ctor::Real => Ty::Real,
                Ctor::Int => Ty::Int,
                Ctor::Bool => Ty::Bool,
                Ctor::Array(s, e) => {
                    let size = self.resolve_size(s);
                    Ty::array(size, self.resolve(e)?)
                }
                Ctor::Tuple(items) => Ty::Tuple(
                    items
                        .into_iter()
                        .map(|i| self.resolve(i))
                        .collect::<Result<_, _>>()?,
                ),
                Ctor::Func(params, ret) => {
                    let params = params
                        .into_iter()
                        .map(|p| self.resolve(p))
                        .collect::<Result<_, _>>()?;
                    Ty::Func(params, Box::new(self.resolve(ret)?))
                }
            }),
        })
    }

    /// [`Tables::resolve`] once inference is over, each root resolved once:
    /// `done` keeps the type of every root resolved so far, and an array
    /// type shares its element's, so the types of a nested literal of depth
    /// d are d nodes, not d² (docs/scale.md, "Shared types"). Only for the
    /// final solution: while unifying, a root's type may still grow.
    pub fn resolve_shared(
        &mut self,
        v: TyVar,
        done: &mut FxHashMap<TyVar, Arc<Ty>>,
    ) -> Result<Arc<Ty>, Span> {
        let root = self.tys.find(v);
        if let Some(t) = done.get(&root) {
            return Ok(t.clone());
        }
        let ty = crate::stack::guard(|| match self.tys.probe_value(root) {
            TyVal::Unknown { span, .. } => Err(span),
            TyVal::Known(ctor) => Ok(match ctor {
                Ctor::Real => Ty::Real,
                Ctor::Int => Ty::Int,
                Ctor::Bool => Ty::Bool,
                Ctor::Array(s, e) => {
                    let size = self.resolve_size(s);
                    Ty::Array(size, self.resolve_shared(e, done)?)
                }
                Ctor::Tuple(items) => Ty::Tuple(
                    items
                        .into_iter()
                        .map(|i| self.resolve_shared(i, done).map(|t| Ty::clone(&t)))
                        .collect::<Result<_, _>>()?,
                ),
                Ctor::Func(params, ret) => {
                    let params = params
                        .into_iter()
                        .map(|p| self.resolve_shared(p, done).map(|t| Ty::clone(&t)))
                        .collect::<Result<_, _>>()?;
                    let ret: Arc<Ty> = self.resolve_shared(ret, done)?;
                    Ty::Func(params, Box::new(Ty::clone(&ret)))
                }
            }),
        })?;
        let ty = Arc::new(ty);
        done.insert(root, ty.clone());
        Ok(ty)
    }

    /// The size a term stands for: a literal, a rigid name plus offset, or
    /// `Dyn` when inference could not relate it to either.
    pub fn resolve_size(&mut self, t: SizeTerm) -> Size {
        match self.norm(t) {
            SizeNorm::Lit(k) => Size::Lit(k.max(0) as u64),
            SizeNorm::Rigid(r, o) => Size::Var(self.rigid[r as usize].clone(), o),
            SizeNorm::Var(..) => Size::Dyn,
        }
    }

    /// The type as far as it is known, for messages: unknowns print `_`,
    /// except numbers, which print as what they default to, `R`.
    pub fn show(&mut self, v: TyVar) -> String {
        let mut out = String::new();
        self.show_into(v, &mut out, false);
        out
    }

    fn show_into(&mut self, v: TyVar, out: &mut String, in_arrow: bool) {
        crate::stack::guard(|| match self.tys.probe_value(v) {
            TyVal::Unknown {
                class: Class::Num, ..
            } => out.push('R'),
            TyVal::Unknown { .. } => out.push('_'),
            TyVal::Known(ctor) => match ctor {
                Ctor::Real => out.push('R'),
                Ctor::Int => out.push_str("Int"),
                Ctor::Bool => out.push_str("Bool"),
                Ctor::Array(s, e) => {
                    let size = self.resolve_size(s);
                    out.push('[');
                    out.push_str(&super::show_size(&size));
                    out.push(']');
                    self.show_into(e, out, true);
                }
                Ctor::Tuple(items) => {
                    out.push('(');
                    for (i, it) in items.into_iter().enumerate() {
                        if i > 0 {
                            out.push_str(", ");
                        }
                        self.show_into(it, out, false);
                    }
                    out.push(')');
                }
                Ctor::Func(params, ret) => {
                    if in_arrow {
                        out.push('(');
                    }
                    let single = params.len() == 1
                        && !matches!(self.ctor(params[0]), Some(Ctor::Tuple(_) | Ctor::Func(..)));
                    if single {
                        self.show_into(params[0], out, true);
                    } else {
                        out.push('(');
                        let wrap_tuple = params.len() == 1;
                        for (i, p) in params.into_iter().enumerate() {
                            if i > 0 {
                                out.push_str(", ");
                            }
                            if wrap_tuple && matches!(self.ctor(p), Some(Ctor::Tuple(_))) {
                                out.push('(');
                                self.show_into(p, out, false);
                                out.push(')');
                            } else {
                                self.show_into(p, out, false);
                            }
                        }
                        out.push(')');
                    }
                    out.push_str(" -> ");
                    self.show_into(ret, out, false);
                    if in_arrow {
                        out.push(')');
                    }
                }
            },
        })
    }
}
