//! Pictures of the IRs (every fixture's are checked by the fixture runner,
//! `inspect::dot`): prod's pictures are the snapshots `docs/inspect/prod-*.dot` that
//! docs/inspect.md shows (rendered to SVG there).

use crate::common;

/// The boundary files of a fixture (stage, text), computed from its
/// `program.ad` as the pipeline writes them.
fn stages(name: &str) -> Vec<(&'static str, String)> {
    let f = testkit::Fixture::load(name).unwrap_or_else(|e| panic!("{e}"));
    let b = testkit::stages::boundaries(&f).expect("reverse mode takes the fixture");
    use testkit::stages::term_ron;
    vec![
        ("10.source", term_ron(syntax::SOURCE_IR, &f.compile_calls())),
        (
            "20.source-unf",
            unf::to_ron(&b.source_unf).expect("the module writes as RON"),
        ),
        (
            "30.target-unf",
            unf::to_ron(&b.target_unf).expect("the module writes as RON"),
        ),
        ("40.target", term_ron(syntax::TARGET_IR, &b.target)),
        ("50.opt", term_ron(syntax::TARGET_IR, &b.opt)),
    ]
}

/// The DOT text of a boundary file's text.
fn picture(text: &str) -> String {
    let header = syntax::read_header(text).expect("an envelope");
    match header.ir.as_str() {
        syntax::SOURCE_IR | syntax::TARGET_IR => {
            let m: syntax::Module =
                syntax::from_ron(&header.ir, syntax::FORMAT_VERSION, text).expect("reads");
            inspect::dot::term(&m, &header.ir)
        }
        ir => {
            let kind = if ir == unf::SOURCE_UNF_IR {
                unf::Kind::Source
            } else {
                unf::Kind::Target
            };
            let m = unf::from_ron(text, kind).expect("reads");
            let checked = unf::check(&m).expect("verifies");
            inspect::dot::string_diagram(&m, &checked)
        }
    }
}

#[test]
fn prod_pictures_match_the_docs() {
    let root = common::workspace();
    for (stage, ron) in stages("prod") {
        let dot = picture(&ron);
        expect_test::expect_file![root.join(format!("docs/inspect/prod-{stage}.dot"))]
            .assert_eq(&dot);
    }
}

#[test]
fn a_string_diagram_has_a_box_per_primitive_and_a_wire_per_output_entry() {
    let text = stages("ex1_1").swap_remove(1).1;
    let m = unf::from_ron(&text, unf::Kind::Source).expect("reads");
    let checked = unf::check(&m).expect("verifies");
    let dot = inspect::dot::string_diagram(&m, &checked);
    let prims = m
        .terms
        .iter()
        .filter(|t| matches!(t, unf::Term::Prim(_)))
        .count();
    let boxes = dot.lines().filter(|l| l.contains("shape=box")).count();
    assert_eq!(boxes, prims, "{dot}");
    let outputs = dot.lines().filter(|l| l.contains("shape=house")).count();
    assert_eq!(outputs, checked.tables.len(m.output) as usize, "{dot}");
}
