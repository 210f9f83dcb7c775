//! Bounds checks that cannot fire (docs/codegen.md, "Bounds checks of
//! loop indices"), run by `emit` on every function before fusion.
//!
//! Inside `for i in 0 ..< n` (either direction, any step) the index lies
//! in `[0, n)`, so the lowering's check of `A[i]` for an array of length
//! `n`, `fail if i < 0 || i >= n`, is false in every iteration and is
//! removed. The bound must be a literal or made of constants (a variable
//! assigned in the body could move past the index). A check that can
//! fire is kept, so the errors stay exactly the evaluator's; removing
//! one lets the loop fuse and vectorize like one that cannot fail.

use super::ir::*;

/// Removes, everywhere in `f`, the checks that an enclosing loop's index
/// lies within that loop's bound.
pub fn elide(f: &mut Func) {
    let mut body = std::mem::take(&mut f.body);
    block(f, &mut body, &mut Vec::new());
    f.body = body;
}

/// `facts`: the indices of the enclosing loops from 0, with their bounds.
fn block(f: &Func, b: &mut Block, facts: &mut Vec<(VarId, Expr)>) {
    syntax::stack::guard(|| {
        b.retain(|s| !matches!(s, Stmt::Fail { cond, .. } if never(cond, facts)));
        for s in b.iter_mut() {
            match s {
                Stmt::For(l) => {
                    let known = l.lo == Some(Expr::I64(0)) && constant(f, &l.hi);
                    if known {
                        facts.push((l.index, l.hi.clone()));
                    }
                    block(f, &mut l.body, facts);
                    if known {
                        facts.pop();
                    }
                }
                Stmt::Loop { body } | Stmt::Region { body, .. } | Stmt::Parallel { body, .. } => {
                    block(f, body, facts)
                }
                Stmt::If { then, els, .. } => {
                    block(f, then, facts);
                    block(f, els, facts);
                }
                _ => {}
            }
        }
    })
}

/// Whether an expression reads only constants (no variable it reads is
/// ever assigned after its declaration).
fn constant(f: &Func, e: &Expr) -> bool {
    let mut vars = Vec::new();
    e.reads(&mut vars);
    vars.iter().all(|&v| !f.var(v).mutable)
}

/// Whether a condition is false whenever every index of `facts` lies in
/// `[0, bound)`.
fn never(cond: &Expr, facts: &[(VarId, Expr)]) -> bool {
    let index = |e: &Expr| match e {
        Expr::Var(v) => facts.iter().rev().find(|(i, _)| i == v).map(|(_, n)| n),
        _ => None,
    };
    match cond {
        Expr::Binary(BinOp::Or, a, b) => never(a, facts) && never(b, facts),
        // `i < k` with `k <= 0`.
        Expr::Binary(BinOp::Lt, i, k) => {
            index(i).is_some() && matches!(**k, Expr::I64(k) if k <= 0)
        }
        // `i >= n` with `n` the loop's bound.
        Expr::Binary(BinOp::Ge, i, n) => index(i) == Some(&**n),
        Expr::Bool(false) => true,
        _ => false,
    }
}
