//! Where Theorem 5.4's guarantee is weaker than the paper's: the constructs
//! of a Source program whose gradient can cost more than `4 * 3^p` times
//! the program, as docs/derivatives.md (section 7) explains. The cost
//! report lists them next to its verdict, so that a ratio above the bound
//! comes with its reason.
//!
//! The detection is syntactic and conservative in the direction of
//! speaking up: a caveat says the bound is not promised, not that it fails.

use std::fmt;

use syntax::{Expr, ExprId, Module, Span, Ty, stack};

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
    /// `A[i]` inside a loop: each read's transpose is a scatter-add that
    /// builds an array of `length A`, so m reads cost O(m n).
    IndexInLoop,
    /// A conditional of a non-real type inside another: each level
    /// re-evaluates the ones it holds.
    NestedIf,
}

impl fmt::Display for Caveat {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let what = match self.kind {
            CaveatKind::IndexInLoop => {
                "indexing inside a loop: each read's transpose builds an array \
                 as long as the one read, so the gradient grows with it"
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
    walk(m, id, 0, 0, &mut out);
    out.sort_by_key(|c| (c.span.lo, c.span.hi));
    out
}

/// `loops`: how many array-operation functions enclose `id`; `ifs`: how
/// many non-real conditionals.
fn walk(m: &Module, id: ExprId, loops: u32, ifs: u32, out: &mut Vec<Caveat>) {
    stack::guard(|| match m.expr(id) {
        Expr::Prim { op, args } if op.function_arg().is_some() => {
            let funs: Vec<ExprId> = op.function_args().iter().map(|&i| args[i]).collect();
            for &a in args {
                let inner = if funs.contains(&a) { loops + 1 } else { loops };
                walk(m, a, inner, ifs, out);
            }
        }
        Expr::Index { array, index } => {
            if loops > 0 {
                out.push(caveat(m, id, CaveatKind::IndexInLoop));
            }
            walk(m, *array, loops, ifs, out);
            walk(m, *index, loops, ifs, out);
        }
        Expr::If {
            cond,
            then_branch,
            else_branch,
        } => {
            let scalar = matches!(m.ty(id), Some(Ty::Real | Ty::Int | Ty::Bool) | None);
            if !scalar && ifs > 0 {
                out.push(caveat(m, id, CaveatKind::NestedIf));
            }
            let inner = if scalar { ifs } else { ifs + 1 };
            walk(m, *cond, loops, ifs, out);
            walk(m, *then_branch, loops, inner, out);
            walk(m, *else_branch, loops, inner, out);
        }
        e => {
            for c in e.children() {
                walk(m, c, loops, ifs, out);
            }
        }
    })
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
