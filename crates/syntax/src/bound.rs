//! Bounding `while` loops, the first step of their reverse mode
//! (docs/derivatives.md, "`while` loops").
//!
//! Reverse mode needs the states a loop went through, and a `while` loop
//! does not say in advance how many there are. As Futhark does, the loop
//! is run once to count its iterations, and then differentiated as the
//! bounded loop of that many steps, an `ifold`, whose reverse mode
//! exists:
//!
//! ```text
//! while c b z   ~>   let z0 = z in ifold (fun (s, i) -> b s) z0 (trips c b z0)
//! ```
//!
//! `trips c b z0` is an `Int`, so no cotangent flows through it: the
//! derivative treats the trip count as locally constant. Both loops run
//! the body on the same states (the language is pure), so the value is
//! unchanged; the primal work doubles, which keeps the gradient O(primal).
//!
//! The body is copied for the `ifold` with every binder renamed apart, so
//! that binders stay unique within the definition (core form). A `while`
//! nested in a body is bounded too, in both copies.

use crate::fxhash::FxHashMap;

use crate::error::Error;
use crate::ir::{Expr, ExprId, Module, NameGen, Param, Pat, Prim, Ty};

/// Whether any definition of `m` holds a `while` loop.
pub fn has_while(m: &Module) -> bool {
    m.exprs.iter().any(|e| {
        matches!(
            e,
            Expr::Prim {
                op: Prim::While,
                ..
            }
        )
    })
}

/// `m` with every `while c b z` rewritten into `let z0 = z in ifold (fun
/// (s, i) -> b s) z0 (trips c b z0)` (module documentation), compacted
/// and typed again. `m` must be in core form, with the condition and body
/// of every `while` written as lambdas of one parameter (what
/// `check_first_order` accepts).
pub fn bound_whiles(m: &Module) -> Result<Module, Error> {
    let mut out = m.clone();
    let mut names = out.name_gen();
    // Nodes appended while rewriting (the copies of bodies, which may hold
    // loops of their own) are visited too.
    let mut i = 0;
    while i < out.exprs.len() {
        if let Expr::Prim {
            op: Prim::While,
            args,
        } = &out.exprs[i]
        {
            let (c, b, z) = (args[0], args[1], args[2]);
            bound_one(&mut out, &mut names, ExprId(i as u32), c, b, z)?;
        }
        i += 1;
    }
    out.types.clear();
    out.compact();
    crate::infer(&mut out)?;
    Ok(out)
}

/// Rewrites the `while` node `w` in place.
fn bound_one(
    m: &mut Module,
    names: &mut NameGen,
    w: ExprId,
    c: ExprId,
    b: ExprId,
    z: ExprId,
) -> Result<(), Error> {
    let span = m.span(w);
    let Expr::Lambda { params, body } = m.expr(b).clone() else {
        return Err(Error::NotFirstOrder {
            span: m.span(b),
            message: "the body of a `while` loop must be a lambda for reverse mode".into(),
        });
    };
    let [state] = params.as_slice() else {
        return Err(Error::NotFirstOrder {
            span: m.span(b),
            message: "the body of a `while` loop takes one parameter, the state".into(),
        });
    };
    let z0 = names.fresh("z");
    let mut rename = FxHashMap::default();
    let s = names.fresh(state.name.as_str());
    rename.insert(state.name.clone(), s.clone());
    let body_copy = crate::visit::detach(m, body, names, &rename).paste(m, false);
    let index = Param {
        name: names.fresh("i"),
        ty: Some(Ty::Int),
        span: state.span,
    };
    let step = Param {
        name: s,
        ty: state.ty.clone(),
        span: state.span,
    };
    let lam = m.add(
        Expr::Lambda {
            params: vec![step, index],
            body: body_copy,
        },
        m.span(b),
    );
    let z_trips = m.add(Expr::Var(z0.clone()), span);
    let trips = m.add(
        Expr::Prim {
            op: Prim::Trips,
            args: vec![c, b, z_trips],
        },
        span,
    );
    let z_fold = m.add(Expr::Var(z0.clone()), span);
    let fold = m.add(
        Expr::Prim {
            op: Prim::Ifold,
            args: vec![lam, z_fold, trips],
        },
        span,
    );
    m.exprs[w.index()] = Expr::Let {
        pat: Pat::Var(z0),
        ty: None,
        value: z,
        body: fold,
    };
    Ok(())
}
