//! Array literals of reals (`Expr::Reals`, issue 19) in UNF: one `reals`
//! constant naming the Source literal, whatever its length, that reads
//! back from RON bit for bit, evaluates and raises to the literal again,
//! and that the verifier refuses when its numbers do not fill its shape.

use syntax::{Expr, SourceFile};
use unf::{Kind, Module, Op, Prim, Term};

/// `f x = x * a[0] + x * a[n-1]` with `a` a literal of n reals.
fn flat(n: usize) -> String {
    let numbers: Vec<String> = (0..n).map(|i| format!("{}.5", i % 1000)).collect();
    format!(
        "def f (x : R) : R =\n  let a = [{}] in\n  x * a[0] + x * a[{}]\n",
        numbers.join(", "),
        n - 1
    )
}

fn lowered(text: &str) -> Module {
    let m = syntax::compile(SourceFile {
        name: "reals.ad".into(),
        text: text.into(),
    })
    .expect("the program compiles");
    let def = m.defs.last().expect("one definition");
    let u = unf::lower(&m, def).expect("UNF takes the program");
    unf::verify(&u).expect("its UNF verifies");
    u
}

/// The `reals` constants of a module.
fn literals(u: &Module) -> Vec<&syntax::Reals> {
    u.terms
        .iter()
        .filter_map(|t| match t {
            Term::Prim(Prim::Op(_, Op::Reals { node, .. })) => {
                match &u.source.exprs[node.index()] {
                    Expr::Reals(l) => Some(l),
                    _ => None,
                }
            }
            _ => None,
        })
        .collect()
}

#[test]
fn a_literal_of_any_length_is_one_term() {
    let (small, large) = (lowered(&flat(2000)), lowered(&flat(4000)));
    assert_eq!(literals(&small).len(), 1);
    assert_eq!(literals(&large)[0].data.len(), 4000);
    // Written as its constants, the literal was 2n terms and n contexts.
    assert_eq!(small.terms.len(), large.terms.len());
    assert_eq!(small.ctxs.len(), large.ctxs.len());
    let (rs, rl) = (
        unf::raise(&small).expect("raises"),
        unf::raise(&large).expect("raises"),
    );
    assert_eq!(rs.exprs.len(), rl.exprs.len(), "UNF⁻¹ of the literal");
    // The file holds each number once (in the Source module): linear.
    let ratio = unf::to_ron(&large).expect("the module writes as RON").len() as f64
        / unf::to_ron(&small).expect("the module writes as RON").len() as f64;
    assert!(ratio <= 2.2, "the RON file grew {ratio:.2} times");
}

#[test]
fn the_literal_evaluates_and_raises_to_itself() {
    let u = lowered(&flat(5));
    let at = [("x".to_string(), semantics::Value::Real(2.0))];
    let v = semantics::eval_unf(&u, &at).expect("evaluates");
    assert_eq!(v.as_real(), Some(2.0 * 0.5 + 2.0 * 4.5));
    // Printed as the Source prints the literal, at the context x : R.
    let printed = unf::print(&u);
    let first = printed.lines().nth(2).unwrap_or_default();
    assert_eq!(first, "  [0.5, 1.5, 2.5, 3.5, 4.5]_{R;0} ;", "{printed}");
    let raised = unf::raise(&u).expect("raises");
    let back: Vec<&syntax::Reals> = (raised.exprs.iter())
        .filter_map(|e| match e {
            Expr::Reals(l) => Some(l),
            _ => None,
        })
        .collect();
    assert_eq!(back.len(), 1, "one literal node in the raised program");
    assert_eq!(&back[0].data[..], &[0.5, 1.5, 2.5, 3.5, 4.5]);
}

#[test]
fn the_ron_file_reads_back_bit_for_bit() {
    let text = "def f (x : R) : R =\n  let a = [[0.1, 1e-300, 5e-324, -0.0], \
        [0.30000000000000004, 2.2250738585072014e-308, 1.7976931348623157e308, -2.5]] in\n  \
        x * a[1][3]\n";
    let u = lowered(text);
    let ron = unf::to_ron(&u).expect("the module writes as RON");
    let back = unf::from_ron(&ron, Kind::Source).expect("reads back");
    assert_eq!(
        unf::to_ron(&back).expect("the module writes as RON"),
        ron,
        "byte-stable"
    );
    let bits =
        |m: &Module| -> Vec<u64> { literals(m)[0].data.iter().map(|x| x.to_bits()).collect() };
    assert_eq!(bits(&back), bits(&u));
    assert_eq!(bits(&u)[3], (-0.0f64).to_bits());
    assert_eq!(literals(&back)[0].shape, vec![2, 4]);
}

#[test]
fn numbers_that_do_not_fill_the_shape_are_refused() {
    let mut u = lowered(&flat(3));
    let node = u
        .source
        .exprs
        .iter()
        .position(|e| matches!(e, Expr::Reals(_)))
        .expect("the literal's node");
    if let Expr::Reals(l) = &mut u.source.exprs[node] {
        l.data = l.data[..2].into();
    }
    let errors = unf::verify(&u).expect_err("refused");
    let text = format!("{errors:?}");
    assert!(
        text.contains("has shape [3] and 2 numbers: its shape needs 3"),
        "{text}"
    );
}

#[test]
fn a_reals_constant_must_name_a_literal_of_its_type() {
    let u = lowered(&flat(3));
    let at = (u.terms.iter())
        .position(|t| matches!(t, Term::Prim(Prim::Op(_, Op::Reals { .. }))))
        .expect("the reals constant");
    let Term::Prim(Prim::Op(ctx, Op::Reals { node, ty })) = u.terms[at].clone() else {
        unreachable!()
    };
    // A node that is not a literal.
    let mut other = u.clone();
    let var = (u.source.exprs.iter())
        .position(|e| matches!(e, Expr::Var(_)))
        .expect("a variable node");
    other.terms[at] = Term::Prim(Prim::Op(
        ctx,
        Op::Reals {
            node: syntax::ExprId(var as u32),
            ty,
        },
    ));
    let text = format!("{:?}", unf::verify(&other).expect_err("refused"));
    assert!(text.contains("not an array literal of reals"), "{text}");
    // A type that is not the literal's.
    let mut wrong = u.clone();
    let real = (u.tys.iter())
        .position(|t| *t == unf::UTy::Ground(syntax::Ty::Real))
        .expect("the type R");
    wrong.terms[at] = Term::Prim(Prim::Op(
        ctx,
        Op::Reals {
            node,
            ty: unf::TyId(real as u32),
        },
    ));
    let text = format!("{:?}", unf::verify(&wrong).expect_err("refused"));
    assert!(text.contains("`reals` is typed R"), "{text}");
}
