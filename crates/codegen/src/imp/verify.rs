//! The verifier of the loop IR: what every pass may assume and must keep.
//!
//! - Every variable is declared once (a parameter, `Let`, `Alloc`,
//!   `Checked`, a `For` index with a first value, a `Region` mark) and used
//!   only after its declaration, in the block it was declared in or one
//!   nested in it.
//! - Types agree: operands of an operator, a value and its place (an
//!   address of writable memory may be stored where a read-only one is
//!   expected, as C converts `double *` to `const double *`), call
//!   arguments and the extern's parameters; conditions are `Bool`; loop
//!   bounds, indices, counts and failure details are integers; a loop's
//!   bounds have its index's type.
//! - Constants (`mutable: false`) have their value at their declaration
//!   and are never assigned; stores go through writable memory; `Out`
//!   parameters are only stored to.
//! - Memory lifetimes are well nested: a block allocated in a region is
//!   released at the region's end, so no address into it may be stored in
//!   a variable declared outside the region, nor returned through an `Out`
//!   parameter (a region whose release is conditional, `reset_if`, keeps
//!   its first iteration's blocks and is exempt). Regions are blocks, so
//!   each is released exactly once, innermost first.
//! - A table of constants holds as many numbers as the product of its
//!   sizes, at least one; it is read-only memory that lives as long as
//!   the program.
//! - `Break` is inside a loop of the same thread; a `Parallel` body
//!   without workers and a `ParallelFor` loop neither allocate nor fail
//!   (their threads share the caller's arena, and a failure returns from
//!   the function). A `Parallel` body with workers may: each thread has
//!   an arena and a failure record of its own, and what the body
//!   allocates lives until the body ends (a region).

use std::fmt;

use super::ir::*;

/// What the verifier found wrong, and where.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct VerifyError {
    /// The function.
    pub func: String,
    /// The statement: its position in each enclosing block (`3.1.0`).
    pub at: String,
    /// What is wrong.
    pub message: String,
}

impl fmt::Display for VerifyError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "loop IR of `{}`, statement {}: {}",
            self.func, self.at, self.message
        )
    }
}

impl std::error::Error for VerifyError {}

/// Checks a whole program.
pub fn verify(p: &Program) -> Result<(), VerifyError> {
    for (k, t) in p.tables.iter().enumerate() {
        table(TableId(k as u32), t)?;
    }
    let mut names = std::collections::HashSet::new();
    for f in &p.funcs {
        if !names.insert(f.name.as_str()) {
            return Err(VerifyError {
                func: f.name.clone(),
                at: "-".into(),
                message: "a second function of this name".into(),
            });
        }
        verify_func(p, f)?;
    }
    Ok(())
}

/// A table holds as many numbers as its shape says, and at least one (a
/// C array is never empty). Any f64 may be held: the printers write each
/// so that it reads back bit for bit (NaN's payload aside).
fn table(id: TableId, t: &Table) -> Result<(), VerifyError> {
    let err = |message: String| VerifyError {
        func: id.name(),
        at: "-".into(),
        message,
    };
    let len = t.shape.iter().try_fold(1u64, |acc, &n| acc.checked_mul(n));
    match len {
        _ if t.shape.is_empty() => Err(err("a table without a shape".into())),
        Some(n) if n == t.data.len() as u64 && n > 0 => Ok(()),
        Some(0) => Err(err("an empty table".into())),
        _ => Err(err(format!(
            "a table of shape {:?} holds {} numbers",
            t.shape,
            t.data.len()
        ))),
    }
}

/// Checks one function of `p`.
pub fn verify_func(p: &Program, f: &Func) -> Result<(), VerifyError> {
    let mut cx = Checker {
        p,
        f,
        declared: vec![None; f.vars.len()],
        life: vec![0; f.vars.len()],
        scopes: vec![Vec::new()],
        path: Vec::new(),
        regions: 0,
        loops: vec![],
        parallel: false,
        shared: false,
    };
    let mut names = std::collections::HashSet::new();
    for v in &f.vars {
        if !names.insert(v.name.as_str()) {
            return Err(cx.err(format!("two variables are named `{}`", v.name)));
        }
    }
    for &v in &f.params {
        cx.declare(v)?;
        if matches!(cx.var(v)?.ty, Ty::Mark) {
            return Err(cx.err(format!("parameter `{}` is a mark", f.var(v).name)));
        }
    }
    cx.block(&f.body)
}

/// Where a variable was declared: how many regions enclosed it (the
/// lifetime of the memory it may hold).
type Decl = Option<usize>;

struct Checker<'a> {
    p: &'a Program,
    f: &'a Func,
    /// Per variable: declared, and in how many regions.
    declared: Vec<Decl>,
    /// Per variable holding an address: how many regions enclose the
    /// memory it may point into (a constant's is its value's).
    life: Vec<usize>,
    /// The variables declared in each open block, innermost last.
    scopes: Vec<Vec<VarId>>,
    path: Vec<usize>,
    /// How many unconditional regions enclose the statement.
    regions: usize,
    /// The enclosing loops: whether each is inside the parallel body that
    /// encloses the statement (a break may not leave a thread).
    loops: Vec<bool>,
    /// Inside a parallel body or loop.
    parallel: bool,
    /// Inside one whose threads share the caller's arena and failure
    /// (a `ParallelFor` loop, a `Parallel` body without workers).
    shared: bool,
}

impl Checker<'_> {
    fn err(&self, message: impl Into<String>) -> VerifyError {
        let at = if self.path.is_empty() {
            "-".to_string()
        } else {
            self.path
                .iter()
                .map(|i| i.to_string())
                .collect::<Vec<_>>()
                .join(".")
        };
        VerifyError {
            func: self.f.name.clone(),
            at,
            message: message.into(),
        }
    }

    fn var(&self, v: VarId) -> Result<&Var, VerifyError> {
        self.f
            .vars
            .get(v.0 as usize)
            .ok_or_else(|| self.err(format!("variable {} is not in the table", v.0)))
    }

    fn declare(&mut self, v: VarId) -> Result<(), VerifyError> {
        let name = &self.var(v)?.name;
        if self.declared[v.0 as usize].is_some() {
            return Err(self.err(format!("`{name}` is declared twice")));
        }
        self.declared[v.0 as usize] = Some(self.regions);
        self.life[v.0 as usize] = self.regions;
        if let Some(s) = self.scopes.last_mut() {
            s.push(v);
        }
        Ok(())
    }

    /// The variable, which must be in scope.
    fn used(&self, v: VarId) -> Result<&Var, VerifyError> {
        let var = self.var(v)?;
        if self.declared[v.0 as usize].is_none() {
            return Err(self.err(format!("`{}` is used where it is not declared", var.name)));
        }
        Ok(var)
    }

    fn block(&mut self, b: &Block) -> Result<(), VerifyError> {
        self.scopes.push(Vec::new());
        for (i, s) in b.iter().enumerate() {
            self.path.push(i);
            syntax::stack::guard(|| self.stmt(s))?;
            self.path.pop();
        }
        for v in self.scopes.pop().unwrap_or_default() {
            self.declared[v.0 as usize] = None;
        }
        Ok(())
    }

    /// A nested block, numbered `k` within its statement.
    fn nested(&mut self, k: usize, b: &Block) -> Result<(), VerifyError> {
        self.path.push(k);
        let r = self.block(b);
        self.path.pop();
        r
    }

    fn expect(&self, what: &str, want: &Ty, got: &Ty) -> Result<(), VerifyError> {
        if want == got {
            Ok(())
        } else {
            Err(self.err(format!("{what} has type {got:?}, expected {want:?}")))
        }
    }

    /// Like [`Checker::expect`], for a value stored where `want` is
    /// expected: writable memory may go where read-only memory is.
    fn assignable(&self, what: &str, want: &Ty, got: &Ty) -> Result<(), VerifyError> {
        match (want, got) {
            (
                Ty::Mem {
                    elem: a,
                    writable: false,
                },
                Ty::Mem { elem: b, .. },
            ) if a == b => Ok(()),
            _ => self.expect(what, want, got),
        }
    }

    fn scalar(&self, what: &str, e: &Expr) -> Result<Scalar, VerifyError> {
        match self.expr(e)? {
            Ty::Scalar(s) => Ok(s),
            t => Err(self.err(format!("{what} has type {t:?}, expected a scalar"))),
        }
    }

    fn int(&self, what: &str, e: &Expr) -> Result<Scalar, VerifyError> {
        let s = self.scalar(what, e)?;
        if s.is_int() {
            Ok(s)
        } else {
            Err(self.err(format!("{what} has type {s:?}, expected an integer")))
        }
    }

    fn boolean(&self, what: &str, e: &Expr) -> Result<(), VerifyError> {
        self.expect(what, &Ty::Scalar(Scalar::Bool), &self.expr(e)?)
    }

    /// How many regions enclose the memory an address expression may
    /// point into (0: the whole call).
    fn lifetime(&self, e: &Expr) -> usize {
        let mut vars = Vec::new();
        e.reads(&mut vars);
        vars.iter()
            .filter(|v| matches!(self.f.vars[v.0 as usize].ty, Ty::Mem { .. }))
            .map(|v| self.life[v.0 as usize])
            .max()
            .unwrap_or(0)
    }

    fn stmt(&mut self, s: &Stmt) -> Result<(), VerifyError> {
        match s {
            Stmt::Let { var, init } => {
                let v = self.var(*var)?.clone();
                if matches!(v.ty, Ty::Out(_) | Ty::Mark) {
                    return Err(self.err(format!(
                        "`{}` of type {:?} is declared by `Let`",
                        v.name, v.ty
                    )));
                }
                match init {
                    Some(e) => self.assignable(
                        &format!("the value of `{}`", v.name),
                        &v.ty,
                        &self.expr(e)?,
                    )?,
                    None if !v.mutable => {
                        return Err(self.err(format!("constant `{}` has no value", v.name)));
                    }
                    None => {}
                }
                self.declare(*var)?;
                if let (false, Some(e)) = (v.mutable, init) {
                    self.life[var.0 as usize] = self.lifetime(e);
                }
                Ok(())
            }
            Stmt::Set { place, value } => self.set(place, value),
            Stmt::Fail { cond, site, a, b } => {
                self.boolean("a failure condition", cond)?;
                self.int("a failure detail", a)?;
                self.int("a failure detail", b)?;
                self.fails(*site)
            }
            Stmt::Alloc { var, count, when } => {
                if self.shared {
                    return Err(self.err("an allocation in a parallel body"));
                }
                self.expect(
                    "an allocation's count",
                    &Ty::Scalar(Scalar::I64),
                    &self.expr(count)?,
                )?;
                if let Some(c) = when {
                    self.boolean("an allocation's condition", c)?;
                }
                let v = self.var(*var)?;
                if !matches!(v.ty, Ty::Mem { writable: true, .. }) {
                    return Err(self.err(format!("`{}` allocated but of type {:?}", v.name, v.ty)));
                }
                self.declare(*var)
            }
            Stmt::Checked {
                var, a, b, site, ..
            } => {
                let i64 = Ty::Scalar(Scalar::I64);
                self.expect("a checked operand", &i64, &self.expr(a)?)?;
                self.expect("a checked operand", &i64, &self.expr(b)?)?;
                let v = self.var(*var)?;
                self.expect(&format!("`{}`", v.name), &i64, &v.ty)?;
                self.fails(*site)?;
                self.declare(*var)
            }
            Stmt::For(l) => self.for_loop(l),
            Stmt::Loop { body } => {
                self.loops.push(self.parallel);
                let r = self.nested(0, body);
                self.loops.pop();
                r
            }
            Stmt::Break => match self.loops.last() {
                Some(&inside) if inside == self.parallel => Ok(()),
                Some(_) => Err(self.err("`break` out of a parallel body")),
                None => Err(self.err("`break` outside a loop")),
            },
            Stmt::If { cond, then, els } => {
                self.boolean("a condition", cond)?;
                self.nested(0, then)?;
                self.nested(1, els)
            }
            Stmt::Region {
                mark,
                body,
                reset_if,
            } => {
                let v = self.var(*mark)?;
                if v.ty != Ty::Mark || v.mutable {
                    return Err(
                        self.err(format!("region mark `{}` is not a constant mark", v.name))
                    );
                }
                if self.shared {
                    return Err(self.err("a region in a parallel body"));
                }
                self.declare(*mark)?;
                let conditional = reset_if.is_some();
                if !conditional {
                    self.regions += 1;
                }
                let r = self.nested(0, body);
                if !conditional {
                    self.regions -= 1;
                }
                r?;
                if let Some(c) = reset_if {
                    self.boolean("a region's release condition", c)?;
                }
                Ok(())
            }
            Stmt::Parallel {
                threads,
                body,
                workers,
            } => {
                self.expect(
                    "a thread count",
                    &Ty::Scalar(Scalar::I32),
                    &self.expr(threads)?,
                )?;
                if self.parallel {
                    return Err(self.err("a parallel body inside another"));
                }
                if let Some(site) = workers {
                    self.fails(*site)?;
                }
                // With workers, what the body allocates lives in the
                // threads' arenas until the body ends: a region.
                let own = workers.is_some();
                self.parallel = true;
                self.shared = !own;
                self.regions += usize::from(own);
                let r = self.nested(0, body);
                self.regions -= usize::from(own);
                self.parallel = false;
                self.shared = false;
                r
            }
        }
    }

    /// A statement that may fail at `site`.
    fn fails(&self, site: u32) -> Result<(), VerifyError> {
        if site == 0 {
            return Err(self.err("failure site 0 (sites count from 1)"));
        }
        if self.shared {
            return Err(self.err("a failure in a parallel body"));
        }
        Ok(())
    }

    fn set(&mut self, place: &Place, value: &Expr) -> Result<(), VerifyError> {
        let got = self.expr(value)?;
        match place {
            Place::Var(v) => {
                let var = self.used(*v)?.clone();
                if !var.mutable {
                    return Err(self.err(format!("constant `{}` is assigned", var.name)));
                }
                self.assignable(
                    &format!("the value stored in `{}`", var.name),
                    &var.ty,
                    &got,
                )?;
                let depth = self.declared[v.0 as usize].unwrap_or(0);
                if matches!(got, Ty::Mem { .. }) && self.lifetime(value) > depth {
                    return Err(self.err(format!(
                        "`{}` is given memory released before it goes out of scope",
                        var.name
                    )));
                }
                Ok(())
            }
            Place::Elem { mem, index } => {
                self.int("an index", index)?;
                match self.expr(mem)? {
                    Ty::Mem {
                        elem,
                        writable: true,
                    } => self.expect("the stored element", &Ty::Scalar(elem), &got),
                    t => Err(self.err(format!("a store through {t:?}, not writable memory"))),
                }
            }
            Place::Out(v) => {
                let var = self.used(*v)?;
                let Ty::Out(inner) = &var.ty else {
                    return Err(self.err(format!("`{}` is not a result parameter", var.name)));
                };
                self.assignable(&format!("the result stored in `{}`", var.name), inner, &got)?;
                if matches!(got, Ty::Mem { .. }) && self.lifetime(value) > 0 {
                    return Err(self.err(format!(
                        "`{}` is given memory released before the call returns",
                        var.name
                    )));
                }
                Ok(())
            }
        }
    }

    fn for_loop(&mut self, l: &For) -> Result<(), VerifyError> {
        let ity = match &self.var(l.index)?.ty {
            Ty::Scalar(s) if s.is_int() => *s,
            t => return Err(self.err(format!("a loop index of type {t:?}"))),
        };
        let bound = Ty::Scalar(ity);
        self.expect("a loop bound", &bound, &self.expr(&l.hi)?)?;
        if l.step == 0 || (l.dir == Dir::Down && l.step != 1) {
            return Err(self.err(format!("a {:?} loop with step {}", l.dir, l.step)));
        }
        let fresh = match &l.lo {
            Some(lo) => {
                self.expect("a loop bound", &bound, &self.expr(lo)?)?;
                true
            }
            None => {
                let v = self.used(l.index)?;
                if !v.mutable {
                    return Err(self.err(format!("loop continuing constant index `{}`", v.name)));
                }
                false
            }
        };
        if let Some(Pragma::SimdReduction { reductions, .. }) = &l.pragma {
            for r in reductions {
                let v = self.used(r.acc)?;
                if !v.mutable || !matches!(v.ty, Ty::Scalar(_)) {
                    return Err(self.err(format!(
                        "reduction into `{}`, not a scalar variable",
                        v.name
                    )));
                }
            }
        }
        let parallel = matches!(l.pragma, Some(Pragma::ParallelFor { .. }));
        if parallel && self.parallel {
            return Err(self.err("a parallel loop inside a parallel body"));
        }
        // The index is declared by the loop, visible in its body only.
        self.path.push(0);
        self.scopes.push(Vec::new());
        if fresh {
            self.declare(l.index)?;
        }
        let saved = (self.parallel, self.shared);
        self.parallel |= parallel;
        self.shared |= parallel;
        self.loops.push(self.parallel);
        let r = self.block(&l.body);
        self.loops.pop();
        (self.parallel, self.shared) = saved;
        for v in self.scopes.pop().unwrap_or_default() {
            self.declared[v.0 as usize] = None;
        }
        self.path.pop();
        r?;
        if parallel && contains_break(&l.body) {
            return Err(self.err("`break` in a parallel loop"));
        }
        Ok(())
    }

    /// The type of an expression.
    fn expr(&self, e: &Expr) -> Result<Ty, VerifyError> {
        syntax::stack::guard(|| self.expr_inner(e))
    }

    fn expr_inner(&self, e: &Expr) -> Result<Ty, VerifyError> {
        Ok(match e {
            Expr::Var(v) => {
                let var = self.used(*v)?;
                if matches!(var.ty, Ty::Out(_) | Ty::Mark) {
                    return Err(self.err(format!("`{}` of type {:?} is read", var.name, var.ty)));
                }
                var.ty.clone()
            }
            Expr::F64(_) => Ty::Scalar(Scalar::F64),
            Expr::I64(_) => Ty::Scalar(Scalar::I64),
            Expr::I32(_) => Ty::Scalar(Scalar::I32),
            Expr::Bool(_) => Ty::Scalar(Scalar::Bool),
            Expr::Null(t) => match t {
                Ty::Mem { .. } => t.clone(),
                t => return Err(self.err(format!("a null of type {t:?}"))),
            },
            Expr::Load(mem, index) => {
                self.int("an index", index)?;
                match self.expr(mem)? {
                    Ty::Mem { elem, .. } => Ty::Scalar(elem),
                    t => return Err(self.err(format!("a load from {t:?}, not memory"))),
                }
            }
            Expr::Unary(op, a) => {
                let s = self.scalar("an operand", a)?;
                match (op, s) {
                    (UnOp::Not, Scalar::Bool) => Ty::Scalar(s),
                    (UnOp::Neg, s) if s != Scalar::Bool => Ty::Scalar(s),
                    _ => return Err(self.err(format!("{op:?} of {s:?}"))),
                }
            }
            Expr::Binary(op, a, b) => {
                let (ta, tb) = (self.expr(a)?, self.expr(b)?);
                match (op, &ta, &tb) {
                    (BinOp::Add | BinOp::Sub, Ty::Mem { .. }, Ty::Scalar(Scalar::I64)) => ta,
                    (_, Ty::Scalar(sa), Ty::Scalar(sb)) if sa == sb => {
                        let s = *sa;
                        match op {
                            BinOp::And | BinOp::Or if s == Scalar::Bool => ta,
                            BinOp::Eq | BinOp::Ne => Ty::Scalar(Scalar::Bool),
                            _ if op.is_comparison() && s != Scalar::Bool => {
                                Ty::Scalar(Scalar::Bool)
                            }
                            BinOp::Div if s == Scalar::F64 => ta,
                            BinOp::Add | BinOp::Sub | BinOp::Mul if s != Scalar::Bool => ta,
                            _ => return Err(self.err(format!("{op:?} on {s:?}"))),
                        }
                    }
                    _ => return Err(self.err(format!("{op:?} of {ta:?} and {tb:?}"))),
                }
            }
            Expr::Call(id, args) => {
                let ext = self
                    .p
                    .externs
                    .get(id.0 as usize)
                    .ok_or_else(|| self.err(format!("extern {} is not in the table", id.0)))?;
                if ext.params.len() != args.len() {
                    return Err(self.err(format!(
                        "`{}` takes {} arguments, given {}",
                        ext.name,
                        ext.params.len(),
                        args.len()
                    )));
                }
                for (want, a) in ext.params.iter().zip(args) {
                    let what = format!("an argument of `{}`", ext.name);
                    self.expect(&what, &Ty::Scalar(*want), &self.expr(a)?)?;
                }
                Ty::Scalar(ext.ret)
            }
            Expr::Select(c, a, b) => {
                self.boolean("a condition", c)?;
                let ta = self.expr(a)?;
                self.expect("the second branch", &ta, &self.expr(b)?)?;
                ta
            }
            Expr::Cast(to, a) => {
                self.scalar("a converted value", a)?;
                Ty::Scalar(*to)
            }
            Expr::IsNull(a) => match self.expr(a)? {
                Ty::Mem { .. } => Ty::Scalar(Scalar::Bool),
                t => return Err(self.err(format!("a null test of {t:?}"))),
            },
            Expr::Table(id) => {
                if self.p.tables.get(id.0 as usize).is_none() {
                    return Err(self.err(format!("table {} is not in the list", id.0)));
                }
                Ty::Mem {
                    elem: Scalar::F64,
                    writable: false,
                }
            }
        })
    }
}

/// Whether a block breaks out of itself (a `Break` not inside a nested loop).
pub(super) fn contains_break(b: &[Stmt]) -> bool {
    b.iter().any(|s| match s {
        Stmt::Break => true,
        Stmt::If { then, els, .. } => contains_break(then) || contains_break(els),
        Stmt::Region { body, .. } | Stmt::Parallel { body, .. } => contains_break(body),
        _ => false,
    })
}
