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
            if matches!(ex, Expr::Reals(_)) || matches!(ey, Expr::Reals(_)) {
                // A literal of constants prints the same whether a pass made
                // it element by element or the lexer made it compact.
                let (na, nb) = (constants(a, x), constants(b, y));
                if na.is_none() || na != nb {
                    return Err(format!("in def {}: {ex:?} vs {ey:?}", da.name));
                }
                continue;
            }
            if shape(ex) != shape(ey) {
                return Err(format!("in def {}: {ex:?} vs {ey:?}", da.name));
            }
            work.extend(ex.children().into_iter().zip(ey.children()));
        }
    }
    Ok(())
}

/// The shape and the numbers (as bits) of a literal of constants: an
/// `Expr::Reals`, or nested `Expr::Array`s of `Real`, `Int` and their
/// negations with rows of one length; `None` for anything else.
fn constants(m: &Module, id: ExprId) -> Option<(Vec<u64>, Vec<u64>)> {
    match m.expr(id) {
        Expr::Reals(l) => Some((
            l.shape.clone(),
            l.data.iter().map(|x| x.to_bits()).collect(),
        )),
        Expr::Array(items) if !items.is_empty() => {
            let mut shape = None;
            let mut data = Vec::new();
            for &i in items {
                let (s, d) = match number(m, i) {
                    Some(x) => (Vec::new(), vec![x.to_bits()]),
                    None => constants(m, i)?,
                };
                if shape.as_ref().is_some_and(|t| *t != s) {
                    return None;
                }
                shape = Some(s);
                data.extend(d);
            }
            let mut shape = shape?;
            shape.insert(0, items.len() as u64);
            Some((shape, data))
        }
        _ => None,
    }
}

/// The value of a number literal, or of one negated.
fn number(m: &Module, id: ExprId) -> Option<f64> {
    match m.expr(id) {
        Expr::Real(x) => Some(*x),
        Expr::Int(k) => Some(*k as f64),
        Expr::Prim {
            op: syntax::Prim::Neg,
            args,
        } if args.len() == 1 => number(m, args[0]).map(|x| -x),
        _ => None,
    }
}
