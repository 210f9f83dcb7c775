//! How parse → lower → reverse → raise scales with the length of a `let`
//! chain, and how big each stage's RON file is. Run with
//! `cargo bench -p reverse --bench scale`; prints one line per size.

use std::fmt::Write;
use std::time::Instant;

/// `def chain (a : R) (x : R) : R = let x1 = x * a + sin x in ... in x_n`.
fn chain_text(n: usize) -> String {
    let mut s = String::from("def chain (a : R) (x : R) : R =\n");
    let mut prev = "x".to_string();
    for i in 1..=n {
        let _ = writeln!(s, "  let x{i} = {prev} * a + sin {prev} in");
        prev = format!("x{i}");
    }
    let _ = writeln!(s, "  {prev}");
    s
}

fn main() {
    println!(
        "{:>6} {:>7} {:>7} {:>8} {:>7} {:>8} {:>8} {:>10} {:>10} {:>10}",
        "lets",
        "parse",
        "lower",
        "reverse",
        "raise",
        "write",
        "read",
        "src-unf B",
        "tgt-unf B",
        "target B"
    );
    for n in [5_000, 10_000, 20_000, 40_000] {
        let text = chain_text(n);
        let t0 = Instant::now();
        let m = syntax::compile(syntax::SourceFile {
            name: "chain.ad".into(),
            text,
        })
        .expect("compile");
        let def = m.defs.last().expect("a definition").clone();
        let t1 = Instant::now();
        let s = unf::lower(&m, &def).expect("lower");
        let t2 = Instant::now();
        let t = reverse::reverse(&s, &reverse::Config::default()).expect("reverse");
        let t3 = Instant::now();
        let g = unf::raise(&t).expect("raise");
        let t4 = Instant::now();
        let (rs, rt) = (
            unf::to_ron(&s).expect("the module writes as RON"),
            unf::to_ron(&t).expect("the module writes as RON"),
        );
        let rg = syntax::to_ron(syntax::TARGET_IR, syntax::FORMAT_VERSION, &g)
            .expect("the module writes as RON");
        let t5 = Instant::now();
        unf::from_ron(&rs, unf::Kind::Source).expect("read source-unf");
        unf::from_ron(&rt, unf::Kind::Target).expect("read target-unf");
        let t6 = Instant::now();
        let ms = |a: Instant, b: Instant| format!("{:.0}ms", (b - a).as_secs_f64() * 1e3);
        println!(
            "{n:>6} {:>7} {:>7} {:>8} {:>7} {:>8} {:>8} {:>10} {:>10} {:>10}",
            ms(t0, t1),
            ms(t1, t2),
            ms(t2, t3),
            ms(t3, t4),
            ms(t4, t5),
            ms(t5, t6),
            rs.len(),
            rt.len(),
            rg.len()
        );
    }
}
