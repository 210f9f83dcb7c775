//! Calls kept by elaboration (`syntax::compile_calls`) and inlined on
//! demand (`syntax::inline_entry`, `syntax::inline_all`): each definition
//! is elaborated once, so a chain of definitions each calling the previous
//! one is linear in work, not quadratic (issue 19); the work is counted as
//! the nodes built, never timed.

use syntax::{Expr, Module, SourceFile, print};

fn calls(text: &str) -> Module {
    let m = syntax::compile_calls(SourceFile {
        name: "test.ad".into(),
        text: text.into(),
    })
    .unwrap_or_else(|e| panic!("{text:?}: {e:?}"));
    syntax::verify(&m).unwrap_or_else(|e| panic!("{text:?}: {e:?}"));
    m
}

fn entry(m: &Module) -> Module {
    let name = m.defs.last().expect("a definition").name.clone();
    let out = syntax::inline_entry(m, name.as_str()).unwrap_or_else(|e| panic!("{e:?}"));
    syntax::verify(&out).unwrap_or_else(|e| panic!("{e:?}"));
    out
}

/// `d0 x = x * 1.0001`, `d_i x = d_{i-1} x * 1.0001`.
fn chain(n: usize) -> String {
    let mut text = String::from("def d0 (x : R) : R = x * 1.0001\n");
    for i in 1..n {
        text.push_str(&format!("def d{i} (x : R) : R = d{} x * 1.0001\n", i - 1));
    }
    text
}

/// Whether a node of `m` names one of its definitions.
fn refers_to_a_definition(m: &Module) -> bool {
    m.exprs
        .iter()
        .any(|e| matches!(e, Expr::Var(x) if m.def(x.as_str()).is_some()))
}

#[test]
fn a_chain_of_definitions_is_linear_in_the_nodes_built() {
    // Inlining every call into every later definition built n²/2 nodes
    // for the chain (2,000 definitions: about two million); elaborating
    // each once builds a constant number per definition, and the entry
    // inlined alone is n copies of one body.
    let (small, large) = (calls(&chain(2000)), calls(&chain(4000)));
    let ratio = |a: usize, b: usize| b as f64 / a as f64;
    let elaborated = ratio(small.exprs.len(), large.exprs.len());
    assert!(
        (1.8..=2.2).contains(&elaborated),
        "elaborated nodes: {} then {} ({elaborated})",
        small.exprs.len(),
        large.exprs.len()
    );
    assert!(small.exprs.len() < 10 * 2000, "{}", small.exprs.len());
    let (a, b) = (entry(&small), entry(&large));
    let inlined = ratio(a.exprs.len(), b.exprs.len());
    assert!(
        (1.8..=2.2).contains(&inlined),
        "inlined nodes: {} then {} ({inlined})",
        a.exprs.len(),
        b.exprs.len()
    );
    assert_eq!(b.defs.len(), 1);
    assert!(!refers_to_a_definition(&b));
}

#[test]
fn calls_stay_calls_typed_by_the_callee_with_sizes_of_their_own() {
    // Each call instantiates `f`'s size `n` afresh: 3 at one, 4 at the other.
    let m = calls(
        "def f (A : [n]R) : R = sum A\n\
         def g (x : [3]R) (y : [4]R) : R = f x + f y\n",
    );
    let printed = print::module(&m);
    assert!(printed.contains("f x + f y"), "{printed}");
    let g = entry(&m);
    assert_eq!(g.defs.len(), 1);
    assert!(!refers_to_a_definition(&g), "{}", print::module(&g));
    // And the sizes still have to agree within one call.
    let e = syntax::compile_calls(SourceFile {
        name: "test.ad".into(),
        text: "def f (A : [n]R) (B : [n]R) : R = dot A B\n\
               def g (x : [3]R) (y : [4]R) : R = f x y\n"
            .into(),
    })
    .expect_err("the sizes of one call clash");
    assert_eq!(e.to_string(), "expected `[3]R`, found `[4]R`");
}

#[test]
fn a_definition_used_as_a_value_or_without_parameters_inlines_to_its_value() {
    let m = calls(
        "def sq (x : R) : R = x * x\n\
         def c : R = 2\n\
         def k : R -> R = fun y -> y + c\n\
         def g (A : [n]R) : R = sum (map sq A) + c + k 1\n",
    );
    let printed = print::module(&m);
    assert!(printed.contains("map sq A"), "{printed}");
    let g = entry(&m);
    assert!(!refers_to_a_definition(&g), "{}", print::module(&g));
    // The printed core form with its calls reads back to itself.
    let again = calls(&printed);
    assert_eq!(print::module(&again), printed);
}

#[test]
fn inline_all_closes_every_definition_like_the_entry_alone() {
    let text = "def sq (x : R) : R = x * x\n\
                def twice (g : R -> R) (x : R) : R = g (g x)\n\
                def f (x : R) : R = twice sq x\n";
    let m = calls(text);
    let all = syntax::inline_all(&m).expect("inlines");
    syntax::verify(&all).expect("verifies");
    assert_eq!(all.defs.len(), 3);
    assert!(!refers_to_a_definition(&all));
    // `f` closed among all three is `f` closed alone.
    let mut last = all.clone();
    last.defs.drain(..2);
    last.compact();
    assert_eq!(print::module(&last), print::module(&entry(&m)));
    assert_eq!(
        print::module(&last),
        "def f (x : R) : R =\n  let g : R -> R = fun (x_1 : R) -> x_1 * x_1 in\n  let x_2 : R = x in\n  g (g x_2)\n"
    );
}

#[test]
fn the_verifier_accepts_calls_of_earlier_definitions_only() {
    let m = calls("def f (x : R) : R = x\ndef g (y : R) : R = f y\n");
    // g before f: its call names a later definition.
    let mut swapped = m.clone();
    swapped.defs.reverse();
    let errors = syntax::verify(&swapped).expect_err("a call of a later definition");
    assert!(
        errors
            .iter()
            .any(|e| e.message == "reference to the definition `f` in `g`, which is not before it"),
        "{errors:?}"
    );
    // Two definitions of one name.
    let mut twice = m.clone();
    twice.defs[1].name = twice.defs[0].name.clone();
    let errors = syntax::verify(&twice).expect_err("a name defined twice");
    assert!(
        errors.iter().any(|e| e.message == "`f` is defined twice"),
        "{errors:?}"
    );
}

#[test]
fn specialisation_inlines_the_calls_first() {
    // Also where a local is named like a definition.
    let m = calls(
        "def sq (x : R) : R = x * x\n\
         def twice (g : R -> R) (x : R) : R = g (g x)\n\
         def f (x : R) : R = let sq_ = 1 in twice sq x + (let sq = 2 in sq) + sq_\n",
    );
    for s in [
        syntax::specialize(&m).expect("specialises"),
        syntax::specialize_def(&m, "f").expect("specialises"),
    ] {
        syntax::verify(&s).expect("verifies");
        let f = s.def("f").expect("f");
        assert_eq!(
            syntax::check_first_order(&s, f),
            Ok(()),
            "{}",
            print::module(&s)
        );
    }
}
