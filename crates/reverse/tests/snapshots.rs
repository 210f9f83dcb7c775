//! The three boundaries of a few fixtures as a reader sees them: the
//! Source UNF and the Target UNF in the paper's notation, and the gradient
//! program. Bless with `UPDATE_EXPECT=1 cargo test -p reverse --test suite
//! snapshots::` and review the diff.

use std::path::PathBuf;

fn snapshot(name: &str) -> String {
    let path = PathBuf::from(env!("CARGO_MANIFEST_DIR"))
        .join("../../fixtures")
        .join(name)
        .join("program.ad");
    let text = std::fs::read_to_string(&path).expect("fixture exists");
    let file = syntax::SourceFile {
        name: format!("fixtures/{name}/program.ad"),
        text,
    };
    let m = syntax::compile(file).expect("fixture compiles");
    let def = m.defs.last().expect("an entry");
    let s = unf::lower(&m, def).expect("lower");
    let t = reverse::reverse(&s, &reverse::Config::default()).expect("reverse");
    let g = unf::raise(&t).expect("raise");
    format!(
        "{}\n{}\n{}",
        unf::print(&s),
        unf::print(&t),
        syntax::print::module(&g)
    )
}

#[test]
fn ex1_1() {
    expect_test::expect_file!["snapshots/ex1_1.txt"].assert_eq(&snapshot("ex1_1"));
}

#[test]
fn prod() {
    expect_test::expect_file!["snapshots/prod.txt"].assert_eq(&snapshot("prod"));
}

#[test]
fn sin_exp() {
    expect_test::expect_file!["snapshots/sin_exp.txt"].assert_eq(&snapshot("sin_exp"));
}

#[test]
fn pair_chain() {
    expect_test::expect_file!["snapshots/pair_chain.txt"].assert_eq(&snapshot("pair_chain"));
}
