//! Where Theorem 5.4's guarantee is weaker than the paper's: the constructs
//! of a Source program whose gradient can cost more than `4 * 3^p` times
//! the program, as docs/derivatives.md (section 7) explains. The cost
//! report lists them next to its verdict, so that a ratio above the bound
//! comes with its reason.
//!
//! The detection is syntactic and conservative in the direction of
//! speaking up: a caveat says the bound is not promised, not that it fails.

use std::fmt;

use syntax::fxhash::FxHashSet;
use syntax::{Expr, ExprId, Module, Name, Pat, Span, Ty, stack};

/// A construct outside the paper's guarantee.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Caveat {
    /// Where it is written.
    pub span: Span,
    /// The 1-based line and column of the span's start in the program text.
    pub line_col: (usize, usize),
    /// Which construct.
    pub kind: CaveatKind,
}

/// The constructs whose gradient's cost docs/derivatives.md bounds more
/// weakly than Theorem 5.4.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum CaveatKind {
    /// `A[i]` inside a loop, where its transpose is a dense array of
    /// `length A` per element (m reads cost O(m n)): A's elements are
    /// neither reals nor rows of reals, the read is inside two nested
    /// loops, or A is bound inside the loop (its accumulator, or something
    /// made of it). A read of a free array of reals (of rows of reals) in
    /// one loop's body is a scatter-add of O(1) (O(k), a row of k) per
    /// read and has no caveat.
    IndexInLoop,
    /// A conditional of a non-real type inside another: each level
    /// re-evaluates the ones it holds.
    NestedIf,
}

impl fmt::Display for Caveat {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let what = match self.kind {
            CaveatKind::IndexInLoop => {
                "indexing inside a loop (of an array bound in the loop, of an \
                 array whose elements are neither reals nor rows of reals, or \
                 inside nested loops): \
                 each read's transpose builds an array as long as the one read, \
                 so the gradient grows with it"
            }
            CaveatKind::NestedIf => {
                "a conditional of a non-real type inside another: each level \
                 evaluates the inner ones again"
            }
        };
        let (line, col) = self.line_col;
        write!(f, "{line}:{col}: {what} (docs/derivatives.md, section 7)")
    }
}

/// The caveats of the expression `id` of `m` (a Source program in core
/// form), in the order they are written.
pub fn caveats(m: &Module, id: ExprId) -> Vec<Caveat> {
    let mut out = Vec::new();
    let mut walk = Walk {
        m,
        inner: FxHashSet::default(),
        out: &mut out,
    };
    walk.expr(id, 0, 0);
    out.sort_by_key(|c| (c.span.lo, c.span.hi));
    out
}

struct Walk<'a> {
    m: &'a Module,
    /// The names bound inside a loop's function (binders are unique
    /// within a definition in core form).
    inner: FxHashSet<Name>,
    out: &'a mut Vec<Caveat>,
}

impl Walk<'_> {
    /// `loops`: how many array-operation functions enclose `id`; `ifs`: how
    /// many non-real conditionals.
    fn expr(&mut self, id: ExprId, loops: u32, ifs: u32) {
        let m = self.m;
        stack::guard(|| match m.expr(id) {
            Expr::Prim { op, args } if op.function_arg().is_some() => {
                let funs: Vec<ExprId> = op.function_args().iter().map(|&i| args[i]).collect();
                for &a in args {
                    let inner = if funs.contains(&a) { loops + 1 } else { loops };
                    self.expr(a, inner, ifs);
                }
            }
            Expr::Index { array, index } => {
                if loops > 0 && !self.scatter_add(*array, loops) {
                    self.out.push(caveat(m, id, CaveatKind::IndexInLoop));
                }
                self.expr(*array, loops, ifs);
                self.expr(*index, loops, ifs);
            }
            Expr::If {
                cond,
                then_branch,
                else_branch,
            } => {
                let scalar = matches!(m.ty(id), Some(Ty::Real | Ty::Int | Ty::Bool) | None);
                if !scalar && ifs > 0 {
                    self.out.push(caveat(m, id, CaveatKind::NestedIf));
                }
                let inner = if scalar { ifs } else { ifs + 1 };
                self.expr(*cond, loops, ifs);
                self.expr(*then_branch, loops, inner);
                self.expr(*else_branch, loops, inner);
            }
            e => {
                if loops > 0 {
                    match e {
                        Expr::Lambda { params, .. } => {
                            self.inner.extend(params.iter().map(|p| p.name.clone()))
                        }
                        Expr::Let {
                            pat: Pat::Var(x), ..
                        } => {
                            self.inner.insert(x.clone());
                        }
                        Expr::Let {
                            pat: Pat::Tuple(xs),
                            ..
                        } => self.inner.extend(xs.iter().cloned()),
                        _ => {}
                    }
                }
                for c in e.children() {
                    self.expr(c, loops, ifs);
                }
            }
        })
    }

    /// Whether the transpose of a read of `array` is a scatter-add of one
    /// element (`unf::raise`'s pairs): a variable bound outside the one
    /// loop around it, an array of reals or of rows of reals.
    fn scatter_add(&self, array: ExprId, loops: u32) -> bool {
        let reals = match self.m.ty(array) {
            Some(Ty::Array(_, e)) => match &**e {
                Ty::Real => true,
                Ty::Array(_, row) => **row == Ty::Real,
                _ => false,
            },
            _ => false,
        };
        let free = matches!(self.m.expr(array), Expr::Var(x) if !self.inner.contains(x));
        loops == 1 && reals && free
    }
}

fn caveat(m: &Module, id: ExprId, kind: CaveatKind) -> Caveat {
    let span = m.span(id);
    let before = m.file.text.get(..span.lo as usize).unwrap_or("");
    let line = before.matches('\n').count() + 1;
    let col = before.len() - before.rfind('\n').map_or(0, |i| i + 1) + 1;
    Caveat {
        span,
        line_col: (line, col),
        kind,
    }
}
