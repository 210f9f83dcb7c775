//! The verifier: generated well-typed programs pass it (and type inference
//! is idempotent on them), and each kind of corruption is caught.
//!
//! Programs come from the workspace's generator (`difftest`, through
//! `support::program`), well typed by construction (an oracle independent
//! of inference), printed and compiled through the whole front end.

use crate::support;

use proptest::prelude::*;
use syntax::{
    Expr, ExprId, Module, Name, Pat, SourceFile, Ty, check_first_order, compile, infer, print,
    specialize, verify,
};

/// A generated program of about `size` nodes, with lambdas and derivative
/// constructs when `higher_order`.
fn compiled(seed: u64, size: usize, higher_order: bool) -> (String, Module) {
    let text = support::text(&support::program(seed, size, higher_order, higher_order));
    match compile(SourceFile {
        name: "gen.ad".into(),
        text: text.clone(),
    }) {
        Ok(m) => (text, m),
        Err(e) => panic!("a generated program does not compile: {e:?}\n{text}"),
    }
}

fn messages(m: &Module) -> Vec<String> {
    match verify(m) {
        Ok(()) => Vec::new(),
        Err(es) => es.iter().map(ToString::to_string).collect(),
    }
}

/// The lets and lambdas that bind a name, with the definition they are in.
fn binders(m: &Module) -> Vec<(usize, ExprId)> {
    let mut out = Vec::new();
    for (d, def) in m.defs.iter().enumerate() {
        let mut stack = vec![def.body];
        while let Some(id) = stack.pop() {
            let e = m.expr(id);
            if matches!(
                e,
                Expr::Let {
                    pat: Pat::Var(_),
                    ..
                } | Expr::Lambda { .. }
            ) && !matches!(e, Expr::Lambda { params, .. } if params.is_empty())
            {
                out.push((d, id));
            }
            stack.extend(e.children());
        }
    }
    out
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 200, .. ProptestConfig::default() })]

    /// Generated programs verify; inference is idempotent on them; the
    /// specialised program verifies and is first-order when the program
    /// has no derivative construct.
    #[test]
    fn generated_programs_verify(seed in any::<u64>(), size in 3usize..72, higher_order in any::<bool>()) {
        let (text, m) = compiled(seed, size, higher_order);
        prop_assert!(messages(&m).is_empty(), "{text}\n{:?}", messages(&m));
        let mut again = m.clone();
        infer(&mut again).expect("infer succeeds on its own output");
        prop_assert_eq!(&again, &m);
        let s = specialize(&m).expect("specialises");
        prop_assert!(messages(&s).is_empty(), "{text}\n{}\n{:?}", print::module(&s), messages(&s));
        let derivatives = s.exprs.iter().any(|e| matches!(e, Expr::Prim { op, .. } if op.is_derivative_construct()));
        prop_assert_eq!(s.defs.iter().all(|d| check_first_order(&s, d).is_ok()), !derivatives, "{}", print::module(&s));
    }

    /// A child id moved forward (to its parent or beyond) is caught.
    #[test]
    fn forward_child_ids_are_caught(seed in any::<u64>(), size in 3usize..60, pick in any::<usize>()) {
        let (text, mut m) = compiled(seed, size, false);
        let parents: Vec<usize> = (0..m.exprs.len()).filter(|&i| !m.exprs[i].children().is_empty()).collect();
        prop_assume!(!parents.is_empty());
        let p = parents[pick % parents.len()];
        let target = ExprId((p + pick % 3) as u32);
        let mut first = true;
        m.exprs[p] = m.exprs[p].map_children(|c| if std::mem::take(&mut first) { target } else { c });
        let ms = messages(&m);
        prop_assert!(ms.iter().any(|s| s.contains("not before its parent") || s.contains("out of range")), "{text}\n{ms:?}");
    }

    /// A binder renamed to a name already bound in the definition is caught.
    #[test]
    fn duplicate_binders_are_caught(seed in any::<u64>(), size in 5usize..72, pick in any::<usize>()) {
        let (text, mut m) = compiled(seed, size, false);
        let bs = binders(&m);
        // A program with no binder needs two parameters to duplicate.
        prop_assume!(!bs.is_empty() || m.defs[m.defs.len() - 1].params.len() >= 2);
        // The name of the first parameter of the definition is taken.
        let taken;
        if bs.is_empty() {
            // No let or lambda: duplicate a parameter of the entry.
            let entry = m.defs.len() - 1;
            taken = m.defs[entry].params[0].name.clone();
            m.defs[entry].params[1].name = taken.clone();
        } else {
            let (d, id) = bs[pick % bs.len()];
            taken = m.defs[d].params[0].name.clone();
            match &mut m.exprs[id.index()] {
                Expr::Let { pat: Pat::Var(x), .. } => *x = taken.clone(),
                Expr::Lambda { params, .. } => params[0].name = taken.clone(),
                _ => unreachable!("binders() returns lets and lambdas"),
            }
        }
        let ms = messages(&m);
        prop_assert!(ms.iter().any(|s| s.contains(&format!("`{taken}` is bound twice"))), "{text}\n{ms:?}");
    }

    /// A stored type that is not the inferred one is caught.
    #[test]
    fn wrong_stored_types_are_caught(seed in any::<u64>(), size in 3usize..72, pick in any::<usize>()) {
        let (text, mut m) = compiled(seed, size, false);
        let i = pick % m.types.len();
        let wrong = match &m.types[i] {
            Ty::Real => Ty::Int,
            other => Ty::Tuple(vec![other.clone(), Ty::Real]),
        };
        m.types[i] = wrong;
        let ms = messages(&m);
        prop_assert!(ms.iter().any(|s| s.starts_with(&format!("e{i}: stored type"))), "{text}\n{ms:?}");
    }
}

#[test]
fn other_corruptions_are_caught() {
    // The first generated program whose body is not a lone leaf (a body
    // that is a leaf cannot share that leaf with another parent).
    let m = (7..)
        .map(|seed| compiled(seed, 24, false).1)
        .find(|m| !m.expr(m.defs[m.defs.len() - 1].body).children().is_empty())
        .expect("a program with a compound body");
    let has = |m: &Module, what: &str| messages(m).iter().any(|s| s.contains(what));
    assert!(messages(&m).is_empty());

    // Tables of the wrong length.
    let mut bad = m.clone();
    bad.types.pop();
    assert!(has(&bad, "the type table has"));
    let mut bad = m.clone();
    bad.spans.push(Default::default());
    assert!(has(&bad, "the span table has"));

    // A shared node (two parents) and an unreachable one.
    let mut bad = m.clone();
    let leaf = bad
        .exprs
        .iter()
        .position(|e| e.children().is_empty())
        .expect("a leaf");
    let ty = bad.types[leaf].clone();
    let copy = bad.add(
        Expr::Tuple(vec![ExprId(leaf as u32), ExprId(leaf as u32)]),
        Default::default(),
    );
    bad.types.push(Ty::Tuple(vec![ty.clone(), ty]));
    assert!(
        has(&bad, "the node has parents"),
        "{:?}\n{}",
        messages(&bad),
        print::module(&m)
    );
    assert!(has(&bad, &format!("{copy}: the node is unreachable")));

    // Surface-only nodes and wrong arities.
    let mut bad = m.clone();
    bad.exprs[leaf] = Expr::Section(syntax::Prim::Add);
    assert!(has(&bad, "operator section `(+)` in core form"));
    let mut bad = m.clone();
    bad.exprs[leaf] = Expr::Var(Name::new("sin"));
    assert!(has(&bad, "unresolved builtin `sin`"));
    let mut bad = m.clone();
    bad.exprs[leaf] = Expr::Var(Name::new("f"));
    assert!(has(&bad, "reference to the definition `f`"));
    let mut bad = m.clone();
    bad.exprs[leaf] = Expr::Var(Name::new("nowhere"));
    assert!(has(&bad, "free variable `nowhere`"));
    let mut bad = m.clone();
    bad.exprs[leaf] = Expr::Prim {
        op: syntax::Prim::Neg,
        args: vec![],
    };
    assert!(has(&bad, "`-` takes 1 arguments, has 0"));
}

#[test]
fn projection_and_literal_corruptions_are_caught() {
    let m = compile(SourceFile {
        name: "t.ad".into(),
        text: "def f (p : (R, R)) (A : [n]R) : R = p.2 + A[0]".into(),
    })
    .expect("compiles");
    assert!(messages(&m).is_empty());
    let proj = m
        .exprs
        .iter()
        .position(|e| matches!(e, Expr::Proj { .. }))
        .expect("a projection");
    let mut bad = m.clone();
    if let Expr::Proj { index, .. } = &mut bad.exprs[proj] {
        *index = 3;
    }
    assert!(
        messages(&bad)
            .iter()
            .any(|s| s.contains("tuple index 3 out of range for `(R, R)`"))
    );
    // The index literal must stay an `Int`; as a `Real` it no longer types.
    let lit = m
        .exprs
        .iter()
        .position(|e| matches!(e, Expr::Int(0)))
        .expect("the index");
    let mut bad = m.clone();
    bad.exprs[lit] = Expr::Real(0.0);
    assert!(
        messages(&bad)
            .iter()
            .any(|s| s.contains("type inference fails: expected `Int`, found `R`"))
    );
    // A missing parameter type.
    let mut bad = m.clone();
    bad.defs[0].params[0].ty = None;
    assert!(
        messages(&bad)
            .iter()
            .any(|s| s.contains("parameter `p` of `f` has no type"))
    );
}

#[test]
fn a_literal_that_inference_would_rewrite_is_caught() {
    let m = compile(SourceFile {
        name: "f.ad".into(),
        text: "def f (x : R) : R = x * 2.0".into(),
    })
    .expect("compiles");
    assert!(messages(&m).is_empty(), "{:?}", messages(&m));
    // `2` stored as an Int literal of type R: inference reads it as `2.0`.
    let mut lit = m.clone();
    let two = lit
        .exprs
        .iter()
        .position(|e| matches!(e, Expr::Real(_)))
        .expect("the literal");
    lit.exprs[two] = Expr::Int(2);
    let ms = messages(&lit);
    assert!(
        ms.iter().any(|s| s
            == &format!("e{two}: the node should read Real(2.0) after type inference, not Int(2)")),
        "{ms:?}"
    );
}

/// A projected tuple's corrupted stored type is reported at the tuple, as
/// a stored type: the verifier once judged the projection's index by that
/// stored type (`(x, x, 2 * x).3` over `((R, R, R), R)`), blamed the
/// projection ("tuple index 3 out of range") and never reached the type
/// step that finds the corruption.
#[test]
fn a_projected_tuples_wrong_stored_type_is_reported_at_the_tuple() {
    let m = compile(SourceFile {
        name: "t.ad".into(),
        text: "def f (x : R) : R = (x, x, 2 * x).3".into(),
    })
    .expect("compiles");
    assert!(messages(&m).is_empty());
    let t = m
        .exprs
        .iter()
        .position(|e| matches!(e, Expr::Tuple(_)))
        .expect("a tuple");
    let mut bad = m.clone();
    bad.types[t] = Ty::Tuple(vec![bad.types[t].clone(), Ty::Real]);
    let ms = messages(&bad);
    assert!(
        ms.iter()
            .any(|s| s.starts_with(&format!("e{t}: stored type"))),
        "{ms:?}"
    );
    assert!(!ms.iter().any(|s| s.contains("out of range")), "{ms:?}");
}
