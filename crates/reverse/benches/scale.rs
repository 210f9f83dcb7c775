//! How the chain lower → reverse → raise scales with the length of a
//! `let` chain, and how big each stage's RON file is. Run with
//! `cargo bench -p reverse --bench scale`; prints one line per size.

#[path = "../../unf/tests/common/mod.rs"]
mod common;

use std::time::Instant;

fn main() {
    println!(
        "{:>7} {:>9} {:>9} {:>9} {:>9} {:>11} {:>11} {:>11}",
        "lets", "lower", "reverse", "raise", "ron", "src-unf B", "tgt-unf B", "target B"
    );
    for n in [5_000, 10_000, 20_000, 40_000] {
        let m = common::chain(n);
        let def = m.defs.last().expect("a definition").clone();
        let t0 = Instant::now();
        let s = unf::lower(&m, &def).expect("lower");
        let t1 = Instant::now();
        let t = reverse::reverse(&s, &reverse::Config::default()).expect("reverse");
        let t2 = Instant::now();
        let g = unf::raise(&t).expect("raise");
        let t3 = Instant::now();
        let (rs, rt, rg) = (
            unf::to_ron(&s),
            unf::to_ron(&t),
            syntax::to_ron(syntax::TARGET_IR, syntax::FORMAT_VERSION, &g),
        );
        let t4 = Instant::now();
        let ms = |a: Instant, b: Instant| format!("{:.0}ms", (b - a).as_secs_f64() * 1e3);
        println!(
            "{n:>7} {:>9} {:>9} {:>9} {:>9} {:>11} {:>11} {:>11}",
            ms(t0, t1),
            ms(t1, t2),
            ms(t2, t3),
            ms(t3, t4),
            rs.len(),
            rt.len(),
            rg.len()
        );
    }
}
