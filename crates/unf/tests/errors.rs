//! What the verifier, the readers and the arrows refuse, and how they say it.

use crate::common;

use common::{B, arr};
use syntax::{Expr, Prim, Ty};
use unf::{Ctx, CtxId, Kind, Module, Prim as UPrim, Term, TermId};

/// `def f (x1 : R) (x2 : R) : R = let w = x1 * x2 in sin w`.
fn sample() -> (syntax::Module, Module) {
    let mut b = B::new();
    let x1 = b.var("x1", Ty::Real);
    let x2 = b.var("x2", Ty::Real);
    let w = b.op(Prim::Mul, vec![x1, x2]);
    let vw = b.var("w", Ty::Real);
    let s = b.op(Prim::Sin, vec![vw]);
    let body = b.let_("w", w, s);
    let m = b.def("f", &[("x1", Ty::Real), ("x2", Ty::Real)], body);
    let u = unf::lower(&m, m.defs.last().expect("a definition")).expect("lower");
    (m, u)
}

fn messages(m: &Module) -> Vec<String> {
    match unf::verify(m) {
        Ok(()) => Vec::new(),
        Err(errs) => errs.iter().map(|e| e.to_string()).collect(),
    }
}

fn first_var(m: &Module) -> usize {
    m.terms
        .iter()
        .position(|t| matches!(t, Term::Prim(UPrim::Var(..))))
        .expect("a var")
}

#[test]
fn the_sample_verifies() {
    let (_, u) = sample();
    assert_eq!(messages(&u), Vec::<String>::new());
}

#[test]
fn a_var_outside_its_context() {
    let (_, mut u) = sample();
    let i = first_var(&u);
    let Term::Prim(UPrim::Var(ctx, _)) = u.terms[i] else {
        unreachable!()
    };
    u.terms[i] = Term::Prim(UPrim::Var(ctx, 9));
    let msgs = messages(&u);
    assert!(
        msgs.iter()
            .any(|m| m == &format!("term t{i}: var index 9 outside a context of length 2")),
        "{msgs:?}"
    );
}

#[test]
fn a_sequence_that_does_not_join() {
    let (_, mut u) = sample();
    // Make the first var read the wrong context: its output no longer
    // matches what the next term takes.
    let i = first_var(&u);
    let Term::Prim(UPrim::Var(ctx, k)) = u.terms[i] else {
        unreachable!()
    };
    let Ctx::Snoc(parent, _) = u.ctxs[ctx.index()] else {
        unreachable!()
    };
    let _ = parent;
    u.terms[i] = Term::Prim(UPrim::Var(CtxId(ctx.0 + 1), k));
    let msgs = messages(&u);
    assert!(msgs.iter().any(|m| m.contains("joins output")), "{msgs:?}");
}

#[test]
fn children_must_come_first() {
    let (_, mut u) = sample();
    let root = u.root.index();
    let Term::Seq(a, b) = u.terms[root] else {
        panic!("the root is a sequence")
    };
    u.terms[0] = Term::Seq(a, b);
    let msgs = messages(&u);
    assert!(
        msgs.iter()
            .any(|m| m.starts_with("term t0: child") && m.ends_with("is not earlier")),
        "{msgs:?}"
    );
}

#[test]
fn every_term_is_reachable() {
    let (_, mut u) = sample();
    u.terms.push(Term::Prim(UPrim::Var(u.input, 1)));
    u.spans.push(syntax::Span::GENERATED);
    let n = u.terms.len() - 1;
    assert_eq!(
        messages(&u),
        vec![format!("term t{n}: term is not reachable from the root")]
    );
}

#[test]
fn contexts_are_stored_once() {
    let (_, mut u) = sample();
    let dup = u.ctxs[1];
    u.ctxs.push(dup);
    let n = u.ctxs.len() - 1;
    assert_eq!(
        messages(&u),
        vec![format!(
            "context Γ{n}: this context occurs twice in the table"
        )]
    );
}

#[test]
fn a_source_module_has_no_transposed_jacobian() {
    let (_, mut u) = sample();
    let i = first_var(&u);
    let Term::Prim(p) = u.terms[i].clone() else {
        unreachable!()
    };
    u.terms[i] = Term::Jt(p);
    let msgs = messages(&u);
    assert!(
        msgs.iter()
            .any(|m| m.contains("a J^T occurs outside the right operand of a ∘")),
        "{msgs:?}"
    );
}

#[test]
fn the_root_must_take_the_input() {
    let (_, mut u) = sample();
    u.input = CtxId::EMPTY;
    let msgs = messages(&u);
    assert!(
        msgs.iter()
            .any(|m| m.starts_with("module: the root's input is")),
        "{msgs:?}"
    );
}

/// Leaving UNF binds the parameters by name, so a file whose entry names two
/// parameters alike is refused on reading (found by mutating fixtures: such a
/// Target UNF file passed the verifier and failed after `unf-inverse`).
#[test]
fn a_parameter_named_twice() {
    let (_, mut u) = sample();
    let def = u.source.defs.last_mut().expect("a definition");
    def.params[1].name = def.params[0].name.clone();
    let msgs = messages(&u);
    assert!(
        msgs.iter()
            .any(|m| m == "module: parameter `x1` appears twice"),
        "{msgs:?}"
    );
}

#[test]
fn a_source_module_called_target() {
    let (_, mut u) = sample();
    u.kind = Kind::Target;
    let msgs = messages(&u);
    assert!(
        msgs.iter().any(|m| m.contains("`input` is not D_ρ(Gamma)")),
        "{msgs:?}"
    );
}

#[test]
fn raise_refuses_an_ill_typed_module() {
    let (_, mut u) = sample();
    let i = first_var(&u);
    let Term::Prim(UPrim::Var(ctx, _)) = u.terms[i] else {
        unreachable!()
    };
    u.terms[i] = Term::Prim(UPrim::Var(ctx, 7));
    let err = unf::raise(&u).expect_err("ill-typed");
    assert_eq!(
        err.to_string(),
        format!(
            "ill-formed source-unf module: term t{i}: var index 7 outside a context of length 2"
        )
    );
}

#[test]
fn truncated_files_are_refused() {
    let (_, u) = sample();
    let text = unf::to_ron(&u).expect("the module writes as RON");
    // Cut between two entries, the reader runs out of text; cut inside a
    // name, it reads a name it does not know. Both say where.
    let half = text.len() / 2;
    let between = half + text[half..].find('\n').expect("a line break");
    for cut in [&text[..between], &text[..half]] {
        let err = unf::from_ron(cut, Kind::Source).expect_err("truncated");
        let line = cut.lines().count();
        match &err {
            unf::Error::Envelope {
                source: syntax::EnvelopeError::Malformed { line: l, .. },
            } => assert!(
                *l >= line - 1 && *l <= line + 1,
                "{err} (cut at line {line})"
            ),
            other => panic!("expected a malformed file, got {other}"),
        }
    }
    let err = unf::from_ron(&text[..between], Kind::Source).expect_err("truncated");
    assert!(err.to_string().contains("Unexpected end of RON"), "{err}");
}

#[test]
fn spans_are_written_as_runs() {
    // `sin w` and its weakening share a span: written once with a count,
    // read back as one span per term.
    let (_, u) = sample();
    let text = unf::to_ron(&u).expect("the module writes as RON");
    let back = unf::from_ron(&text, Kind::Source).expect("reads back");
    assert_eq!(back.spans, u.spans);
    let start = text.find("\n    spans: [").expect("spans") + 1;
    let section = &text[start..];
    let section = &section[..section.find("    ],").expect("end of spans")];
    let runs = section.lines().count() - 1;
    assert!(
        runs < u.spans.len(),
        "{runs} runs for {} spans",
        u.spans.len()
    );
    // A run of no span is a damaged file.
    let first = section.lines().nth(1).expect("a run").trim();
    let (head, _) = first.rsplit_once(", ").expect("(lo, hi, n)");
    let zero = format!(
        "{}{}",
        &text[..start],
        text[start..].replacen(first, &format!("{head}, 0),"), 1)
    );
    let err = unf::from_ron(&zero, Kind::Source).expect_err("a run of 0");
    assert!(err.to_string().contains("a run of 0 spans"), "{err}");
}

#[test]
fn files_of_another_ir_are_refused() {
    let (m, u) = sample();
    let err = unf::from_ron(
        &unf::to_ron(&u).expect("the module writes as RON"),
        Kind::Target,
    )
    .expect_err("wrong kind");
    assert_eq!(
        err.to_string(),
        "this file holds the `source-unf` IR, but `target-unf` was expected"
    );
    let source = syntax::to_ron(syntax::SOURCE_IR, syntax::FORMAT_VERSION, &m)
        .expect("the module writes as RON");
    let err = unf::from_ron(&source, Kind::Source).expect_err("a source file");
    assert_eq!(
        err.to_string(),
        "this file holds the `source` IR, but `source-unf` was expected"
    );
    let err = unf::from_ron("not ron at all", Kind::Source).expect_err("garbage");
    assert!(err.to_string().starts_with("1:"), "{err}");
}

#[test]
fn a_kind_that_disagrees_with_the_envelope() {
    let (_, mut u) = sample();
    u.kind = Kind::Target;
    let text = syntax::to_ron(unf::SOURCE_UNF_IR, unf::FORMAT_VERSION, &u)
        .expect("the module writes as RON");
    let err = unf::from_ron(&text, Kind::Source).expect_err("kind mismatch");
    assert_eq!(
        err.to_string(),
        "the envelope says `source-unf` but the module's kind is `target-unf`"
    );
}

#[test]
fn unsupported_constructs_are_named_with_their_span() {
    // A comparison of arrays is not a builtin of reverse mode: refused with
    // its name, the types and where it is.
    let mut b = B::new();
    let (a1, a2) = (b.var("A", arr()), b.var("A", arr()));
    let c = b.m.add(
        Expr::Prim {
            op: Prim::Eq,
            args: vec![a1, a2],
        },
        syntax::Span::new(10, 30),
    );
    b.m.types.push(Ty::Bool);
    let (t, e) = (b.real(1.0), b.real(0.0));
    let id = b.m.add(
        Expr::If {
            cond: c,
            then_branch: t,
            else_branch: e,
        },
        syntax::Span::new(0, 40),
    );
    b.m.types.push(Ty::Real);
    let m = b.def("f", &[("A", arr())], id);
    let err = unf::lower(&m, m.defs.last().expect("a definition")).expect_err("==");
    assert_eq!(
        err.to_string(),
        "not supported yet by reverse mode: `==` on [n]R and [n]R"
    );
    assert_eq!(err.span(), syntax::Span::new(10, 30));
}

#[test]
fn conditionals_and_folds_lower_to_their_primitives() {
    let mut b = B::new();
    let x = b.var("x", Ty::Real);
    let zero = b.real(0.0);
    let c = b.prim(Prim::Gt, vec![x, zero], Ty::Bool);
    let (t, e) = (b.var("x", Ty::Real), b.real(0.0));
    let id = b.m.add(
        Expr::If {
            cond: c,
            then_branch: t,
            else_branch: e,
        },
        syntax::Span::new(10, 30),
    );
    b.m.types.push(Ty::Real);
    let m = b.def("f", &[("x", Ty::Real)], id);
    let u = unf::lower(&m, m.defs.last().expect("a definition")).expect("if lowers");
    unf::verify(&u).expect("verifies");
    assert!(
        u.terms
            .iter()
            .any(|t| matches!(t, Term::Prim(UPrim::If { .. })))
    );

    let mut b = B::new();
    let (acc, ci) = (b.var("acc", Ty::Real), b.var("ci", Ty::Real));
    let f = b.op(Prim::Add, vec![acc, ci]);
    let f = b.lam(&["acc", "ci"], f);
    let zero = b.real(0.0);
    let c = b.var("c", arr());
    let id = b.m.add(
        Expr::Prim {
            op: Prim::Foldl,
            args: vec![f, zero, c],
        },
        syntax::Span::new(3, 20),
    );
    b.m.types.push(Ty::Real);
    let m = b.def("horner", &[("c", arr())], id);
    let u = unf::lower(&m, m.defs.last().expect("a definition")).expect("foldl lowers");
    assert!(u.terms.iter().any(|t| matches!(
        t,
        Term::Prim(UPrim::Loop {
            kind: unf::LoopKind::Foldl,
            ..
        })
    )));
}

#[test]
fn reduce_with_a_free_variable_is_a_left_fold() {
    // Section 7.1: the function of reduce may have free variables; such a
    // reduce is differentiated as the left fold it is.
    let mut b = B::new();
    let (x, y, s) = (
        b.var("x", Ty::Real),
        b.var("y", Ty::Real),
        b.var("s", Ty::Real),
    );
    let xy = b.op(Prim::Add, vec![x, y]);
    let f = b.op(Prim::Mul, vec![xy, s]);
    let f = b.lam(&["x", "y"], f);
    let zero = b.real(0.0);
    let a = b.var("A", arr());
    let body = b.op(Prim::Reduce, vec![f, zero, a]);
    let m = b.def("f", &[("A", arr()), ("s", Ty::Real)], body);
    let u = unf::lower(&m, m.defs.last().expect("a definition")).expect("lowers");
    let free = u.terms.iter().find_map(|t| match t {
        Term::Prim(UPrim::Loop {
            kind: unf::LoopKind::Reduce,
            fun,
            ..
        }) => Some(fun.free.clone()),
        _ => None,
    });
    assert_eq!(free, Some(vec![2]), "s is the second parameter");
    let _ = TermId(0);
}
