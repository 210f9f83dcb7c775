//! The stages scale linearly: doubling a `let` chain at most ~doubles every
//! RON file (contexts are shared, continuations not materialised).

#[path = "../../unf/tests/common/mod.rs"]
mod common;

fn sizes(n: usize) -> [usize; 3] {
    let m = common::chain(n);
    let def = m.defs.last().expect("a definition");
    let s = unf::lower(&m, def).expect("lower");
    let t = reverse::reverse(&s, &reverse::Config::default()).expect("reverse");
    let g = unf::raise(&t).expect("raise");
    [
        unf::to_ron(&s).len(),
        unf::to_ron(&t).len(),
        syntax::to_ron(syntax::TARGET_IR, syntax::FORMAT_VERSION, &g).len(),
    ]
}

#[test]
fn doubling_the_program_at_most_doubles_the_files() {
    let small = sizes(2_000);
    let big = sizes(4_000);
    for (stage, (a, b)) in ["source-unf", "target-unf", "target"]
        .iter()
        .zip(small.iter().zip(&big))
    {
        let ratio = *b as f64 / *a as f64;
        assert!(
            ratio <= 2.2,
            "{stage}: {a} bytes for 2,000 lets, {b} for 4,000 ({ratio:.2}x)"
        );
        assert!(
            ratio >= 1.8,
            "{stage}: {a} bytes for 2,000 lets, {b} for 4,000 ({ratio:.2}x)"
        );
    }
}
