//! Shared types (docs/scale.md, "Shared types"): the type of an array
//! literal `[e]` reuses the type of `e` (`Ty::Array` holds its element
//! behind an `Arc`), so the types stored for a nested literal of a
//! variable, `[[...[x]...]]` of depth d, are d type nodes and not d²
//! (issue 19). The work is counted as the type nodes allocated, never
//! timed.

use std::collections::HashSet;
use std::sync::Arc;

use syntax::{Module, SourceFile, Ty};

fn checked(text: &str) -> Module {
    let m = syntax::compile_calls(SourceFile {
        name: "test.ad".into(),
        text: text.into(),
    })
    .unwrap_or_else(|e| panic!("{e:?}"));
    syntax::verify(&m).unwrap_or_else(|e| panic!("{e:?}"));
    m
}

/// `let a = [[...[x]...]] in x`, `depth` brackets deep.
fn nested(depth: usize) -> String {
    format!(
        "def f (x : R) : R =\n  let a = {}x{} in\n  x\n",
        "[".repeat(depth),
        "]".repeat(depth)
    )
}

/// The type nodes `m.types` holds: one per node, plus every element type
/// allocated, each allocation counted once however many types share it.
fn type_nodes(m: &Module) -> usize {
    fn walk(t: &Ty, seen: &mut HashSet<*const Ty>, count: &mut usize) {
        let mut stack = vec![t];
        while let Some(t) = stack.pop() {
            match t {
                Ty::Real | Ty::Int | Ty::Bool => {}
                Ty::Array(_, elem) => {
                    if seen.insert(Arc::as_ptr(elem)) {
                        *count += 1;
                        stack.push(elem);
                    }
                }
                Ty::Tuple(items) => {
                    *count += items.len();
                    stack.extend(items);
                }
                Ty::Func(params, ret) => {
                    *count += params.len() + 1;
                    stack.extend(params);
                    stack.push(ret);
                }
            }
        }
    }
    let mut seen = HashSet::new();
    let mut count = m.types.len();
    for t in &m.types {
        walk(t, &mut seen, &mut count);
    }
    count
}

/// How many brackets deep an array type is.
fn rank(t: &Ty) -> usize {
    let mut rank = 0;
    let mut t = t;
    while let Ty::Array(_, elem) = t {
        rank += 1;
        t = elem;
    }
    rank
}

#[test]
fn a_nested_literal_of_a_variable_stores_linearly_many_type_nodes() {
    // Each node's type as a tree of its own was k nodes at depth k: about
    // two million for depth 2,000, four times that at 4,000.
    let (small, large) = (checked(&nested(2000)), checked(&nested(4000)));
    let (a, b) = (type_nodes(&small), type_nodes(&large));
    let ratio = b as f64 / a as f64;
    assert!(
        (1.8..=2.2).contains(&ratio),
        "type nodes: {a} then {b} ({ratio})"
    );
    assert!(a < 10 * 2000, "{a} type nodes at depth 2000");
    // The types are still the whole types: the literal's is 4,000 deep.
    assert_eq!(large.types.iter().map(rank).max(), Some(4000));
}
