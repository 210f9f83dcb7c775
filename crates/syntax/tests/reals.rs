//! Compact array literals (`Expr::Reals`, issue 19): which literals the
//! lexer reads as one node, that every other literal parses as it always
//! did, that the numbers are the ones written (against Rust's parser of
//! each number alone), that printing and RON give them back bit for bit,
//! and that depth costs linear time.

use super::common::{compile, compile_err, ok, sexp};
use syntax::{Expr, Module};

/// The compact literals of the core form of `text`, as (shape, numbers).
fn literals(m: &Module) -> Vec<(Vec<u64>, Vec<f64>)> {
    m.exprs
        .iter()
        .filter_map(|e| match e {
            Expr::Reals(l) => Some((l.shape.clone(), l.data.to_vec())),
            _ => None,
        })
        .collect()
}

fn program(literal: &str) -> String {
    format!("def f (x : R) : R =\n  let a = {literal} in\n  x\n")
}

#[test]
fn a_literal_of_real_constants_is_one_node_with_its_numbers_in_row_major_order() {
    let m = ok(&program("[[1.5, -2], [3, 4e2], [ - 0.25, 7]]"));
    assert_eq!(
        literals(&m),
        vec![(vec![3, 2], vec![1.5, -2.0, 3.0, 400.0, -0.25, 7.0])]
    );
    // One node for the six numbers: no `Real`, `Int` or `Array` node left.
    assert!(!m.exprs.iter().any(|e| matches!(
        e,
        Expr::Real(_) | Expr::Int(_) | Expr::Array(_) | Expr::Prim { .. }
    )));
    let a = m.types.iter().find(|t| t.to_string() == "[3][2]R");
    assert!(a.is_some(), "types: {:?}", m.types);
}

#[test]
fn the_numbers_are_what_rust_reads_from_each_written_number() {
    let written = [
        "0.1",
        "1e-300",
        "5e-324",
        "1.7976931348623157e308",
        "123456789.12345679",
        "2.5e+3",
        "9007199254740992",
        "0",
    ];
    let m = ok(&program(&format!("[{}, 1.5]", written.join(", "))));
    let mut want: Vec<f64> = written
        .iter()
        .map(|w| w.parse().expect("a number"))
        .collect();
    want.push(1.5);
    let (_, got) = &literals(&m)[0];
    let bits = |xs: &[f64]| xs.iter().map(|x| x.to_bits()).collect::<Vec<_>>();
    assert_eq!(bits(got), bits(&want));
    // 2^53 + 1 is no f64: such a literal stays element by element.
    assert!(literals(&ok(&program("[9007199254740993, 1.5]"))).is_empty());
    // `-0` is the negated zero, as `Neg` of `0` evaluates.
    let m = ok(&program("[-0, 1.5]"));
    assert_eq!(literals(&m)[0].1[0].to_bits(), (-0.0f64).to_bits());
}

#[test]
fn other_literals_parse_element_by_element_as_before() {
    // (text, how many compact literals it holds)
    for (text, compact) in [
        ("[1, 2]", 0),         // integers only: the type may be `[2]Int`
        ("[x, 2.5]", 0),       // a variable
        ("[1.5 + 2, 2.5]", 0), // an operation
        ("[-(1.5), 2.5]", 0),  // a `-` that is not directly before a number
        ("[[1.5], [x]]", 1),   // a row that is not constant: the other is
        ("[sin 1.5, 2.5]", 0), // an application
        ("[(1.5), 2.5]", 0),   // parentheses
    ] {
        let m = compile(&program(text)).unwrap_or_else(|e| panic!("{text}: {e:?}"));
        assert_eq!(literals(&m).len(), compact, "{text}");
    }
    // Indexing by a real is still indexing, and still refused as one.
    let (at, message) = compile_err("def f (a : [n]R) : R =\n  a[1.5]\n");
    assert_eq!(at, "1.5", "{message}");
    // A ragged literal gets the message it always got.
    let (_, message) = compile_err(&program("[[1.5], [2.5, 3.5]]"));
    assert!(
        message.contains("[1]R") && message.contains("[2]R"),
        "{message}"
    );
    // An empty one too.
    let m = ok("def f (x : R) : R =\n  let a : [0]R = [] in\n  x\n");
    assert!(literals(&m).is_empty());
}

#[test]
fn a_literal_next_to_another_token_is_not_merged_with_it() {
    // Application to a literal, a literal in a tuple, a comment inside.
    let m = ok(
        "def g (v : [2]R) : R =\n  v[0]\n\ndef f (x : R) : R =\n  g [1.5, -- one\n 2] + (fst ([0.5, 1.5], x))[1]\n",
    );
    assert_eq!(
        literals(&m),
        vec![(vec![2], vec![1.5, 2.0]), (vec![2], vec![0.5, 1.5])]
    );
}

#[test]
fn printing_and_ron_give_back_the_same_numbers_bit_for_bit() {
    for literal in [
        "[[1.5, -2], [3, 4e2]]",
        "[1.0, 2.0, 3.0]",
        "[-0.0, 5e-324, 1e300, 0.1, 1.7976931348623157e308]",
        "[[[2.5]]]",
    ] {
        let m = ok(&program(literal));
        let printed = syntax::print::module(&m);
        let again = ok(&printed);
        assert_eq!(
            sexp(&m, m.defs[0].body),
            sexp(&again, again.defs[0].body),
            "{printed}"
        );
        let ron = syntax::to_ron(syntax::SOURCE_IR, syntax::FORMAT_VERSION, &m)
            .expect("the module writes as RON");
        let back: Module =
            syntax::from_ron(syntax::SOURCE_IR, syntax::FORMAT_VERSION, &ron).expect("reads back");
        let bits = |m: &Module| {
            literals(m)
                .into_iter()
                .map(|(s, d)| (s, d.iter().map(|x| x.to_bits()).collect::<Vec<_>>()))
                .collect::<Vec<_>>()
        };
        assert_eq!(bits(&back), bits(&m), "{ron}");
    }
    // All integral: the first number keeps a point, so the text reads back
    // as reals and not as integers.
    let m = ok(&program("[1.0, 2.0]"));
    assert!(syntax::print::module(&m).contains("[1.0, 2]"));
}

#[test]
fn a_malformed_literal_fails_the_verifier() {
    let mut m = ok(&program("[1.5, 2.5]"));
    for e in &mut m.exprs {
        if let Expr::Reals(l) = e {
            l.shape = vec![3];
        }
    }
    let errs = syntax::verify(&m).expect_err("malformed");
    assert!(
        errs.iter()
            .any(|e| e.message.contains("shape [3] holding 2")),
        "{errs:?}"
    );
    let mut m = ok(&program("[1.5, 2.5]"));
    for e in &mut m.exprs {
        if let Expr::Reals(l) = e {
            l.data = vec![1.5, f64::NAN].into();
        }
    }
    let errs = syntax::verify(&m).expect_err("malformed");
    assert!(
        errs.iter().any(|e| e.message.contains("not finite")),
        "{errs:?}"
    );
}

#[test]
fn nesting_costs_linear_time() {
    // The type of the literal is as deep as the literal, and dropping a
    // type recurses: run on the command line's 64 MB stack.
    std::thread::Builder::new()
        .stack_size(64 << 20)
        .spawn(deep_literals)
        .expect("a thread")
        .join()
        .expect("no panic");
}

fn deep_literals() {
    // 50,000 levels: element by element these were 50,000 nodes whose
    // types held 1.25e9 brackets in all; one node holds 50,000.
    let depth = 50_000;
    let m = ok(&program(&format!(
        "{}2.5{}",
        "[".repeat(depth),
        "]".repeat(depth)
    )));
    let lits = literals(&m);
    assert_eq!(lits.len(), 1);
    assert_eq!(lits[0].0, vec![1; depth]);
    // Past the parser's nesting limit the literal is refused as any
    // expression is.
    let deep = syntax::stack::MAX_DEPTH + 1;
    let (_, message) = compile_err(&program(&format!(
        "{}2.5{}",
        "[".repeat(deep),
        "]".repeat(deep)
    )));
    assert!(message.contains("too deep"), "{message}");
}
