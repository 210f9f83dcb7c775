//! Long programs: a 5,000-`let` chain with a `log` in every binding goes
//! through the analyses and the picture without a stack overflow and in
//! time linear in its length (a fact names at most `hazards::NEAREST`
//! singular operations, so a chain of them stays linear).

use crate::common::compile;

fn chain(n: usize) -> String {
    let mut text = String::from("def f (x : R) : R =\n  let v0 = x in\n");
    for i in 1..=n {
        text.push_str(&format!(
            "  let v{i} = sin v{} + log (v{} * v{} + 1) in\n",
            i - 1,
            i - 1,
            i - 1
        ));
    }
    text.push_str(&format!("  max v{n} 0\n"));
    text
}

#[test]
fn a_long_chain_is_analysed_and_drawn() {
    let m = compile(&chain(5000));
    let def = m.defs.last().expect("a definition");
    let r = inspect::activity::analyze_at(&m, def, &[semantics::Value::Real(0.5)]).expect("runs");
    assert_eq!(r.entries.len(), 1);
    assert_eq!(r.entries[0].status, inspect::activity::Status::Active);
    let h = inspect::hazards::lint(&m, def);
    // The `max` at the end is reached by every `log`; the nearest are named.
    assert_eq!(h.findings.len(), inspect::hazards::NEAREST, "{h}");
    let dot = inspect::dot::term(&m, "source");
    assert!(
        dot.lines().count() > 5 * 5000,
        "{} lines",
        dot.lines().count()
    );
}
