//! Comparing term-IR modules up to their spans.

use syntax::{Expr, ExprId, Module};

/// A node with its children and spans blanked out. An integral real is
/// the integer literal the printer writes for it (type inference turns it
/// back into a real), so both compare as that integer.
fn shape(e: &Expr) -> Expr {
    let mut e = e.map_children(|_| ExprId(0));
    if let Expr::Real(x) = e
        && x.fract() == 0.0
        && x.abs() < 9.0e18
    {
        e = Expr::Int(x as i64);
    }
    if let Expr::Lambda { params, .. } = &mut e {
        for p in params {
            p.span = Default::default();
        }
    }
    e
}

/// Whether two modules have the same definitions and trees, ignoring
/// spans, arena numbering and the source text. Iterative, so it handles
/// trees of any depth. On a difference, says where.
pub fn same_module(a: &Module, b: &Module) -> Result<(), String> {
    if a.defs.len() != b.defs.len() {
        return Err(format!("{} defs vs {}", a.defs.len(), b.defs.len()));
    }
    for (da, db) in a.defs.iter().zip(&b.defs) {
        let strip = |ps: &[syntax::Param]| {
            ps.iter()
                .map(|p| (p.name.clone(), p.ty.clone()))
                .collect::<Vec<_>>()
        };
        if da.name != db.name || da.ret != db.ret || strip(&da.params) != strip(&db.params) {
            return Err(format!("def headers differ: {da:?} vs {db:?}"));
        }
        let mut work = vec![(da.body, db.body)];
        while let Some((x, y)) = work.pop() {
            let (ex, ey) = (a.expr(x), b.expr(y));
            if shape(ex) != shape(ey) {
                return Err(format!("in def {}: {ex:?} vs {ey:?}", da.name));
            }
            work.extend(ex.children().into_iter().zip(ey.children()));
        }
    }
    Ok(())
}
