//! Pictures of every boundary file of every fixture: the DOT text names
//! only vertices it declares, and when Graphviz is installed a sample of
//! them renders.
//! prod's pictures are the snapshots `docs/inspect/prod-*.dot` that
//! docs/inspect.md shows (rendered to SVG there).

use std::collections::BTreeSet;

use crate::common::{self, fixtures, read};

/// The DOT text of a boundary file.
fn picture(path: &std::path::Path) -> String {
    let text = read(path);
    let header = syntax::read_header(&text).expect("an envelope");
    match header.ir.as_str() {
        syntax::SOURCE_IR | syntax::TARGET_IR => {
            let m: syntax::Module =
                syntax::from_ron(&header.ir, syntax::FORMAT_VERSION, &text).expect("reads");
            inspect::dot::term(&m, &header.ir)
        }
        ir => {
            let kind = if ir == unf::SOURCE_UNF_IR {
                unf::Kind::Source
            } else {
                unf::Kind::Target
            };
            let m = unf::from_ron(&text, kind).expect("reads");
            let checked = unf::check(&m).expect("verifies");
            inspect::dot::string_diagram(&m, &checked)
        }
    }
}

/// The problems of a DOT text: an edge naming an undeclared vertex,
/// unbalanced braces.
fn problems(dot: &str) -> Vec<String> {
    let mut declared = BTreeSet::new();
    let mut used = BTreeSet::new();
    let mut depth = 0i64;
    for line in dot.lines() {
        let l = line.trim();
        let (first, rest) = l.split_once(' ').unwrap_or((l, ""));
        let vertex = first.len() > 1
            && first.starts_with('n')
            && first[1..].bytes().all(|b| b.is_ascii_digit());
        if vertex && let Some(rest) = rest.strip_prefix("-> ") {
            used.insert(first.to_string());
            let to = rest.split([' ', ';']).next().unwrap_or("");
            used.insert(to.to_string());
        } else if vertex && rest.starts_with("[label=") {
            declared.insert(first.to_string());
        }
        if !vertex {
            depth += l.matches('{').count() as i64 - l.matches('}').count() as i64;
        }
    }
    let mut out: Vec<String> = used
        .difference(&declared)
        .map(|v| format!("edge to undeclared vertex {v}"))
        .collect();
    if depth != 0 {
        out.push(format!("braces unbalanced by {depth}"));
    }
    out
}

fn graphviz() -> bool {
    std::process::Command::new("dot")
        .arg("-V")
        .output()
        .is_ok_and(|o| o.status.success())
}

#[test]
fn every_boundary_file_is_a_well_formed_picture() {
    let render = graphviz();
    let mut drawn = 0;
    for dir in fixtures() {
        for file in [
            "10.source.ron",
            "20.source-unf.ron",
            "30.target-unf.ron",
            "40.target.ron",
            "50.opt.ron",
        ] {
            let path = dir.join(file);
            if !path.is_file() {
                continue;
            }
            let dot = picture(&path);
            let p = problems(&dot);
            assert!(p.is_empty(), "{}: {p:?}", path.display());
            // Rendering takes a tenth of a second a picture: a sample
            // with every kind of construct (map, reduce, if, folds, tuples).
            let sample = [
                "prod",
                "untaken_branch",
                "clip",
                "horner",
                "fuzz_fd_kink",
                "pair_chain",
            ];
            if render && sample.contains(&common::name(&dir).as_str()) {
                let mut child = std::process::Command::new("dot")
                    .arg("-Tsvg")
                    .stdin(std::process::Stdio::piped())
                    .stdout(std::process::Stdio::null())
                    .stderr(std::process::Stdio::piped())
                    .spawn()
                    .expect("dot runs");
                use std::io::Write as _;
                child
                    .stdin
                    .take()
                    .expect("a pipe")
                    .write_all(dot.as_bytes())
                    .expect("dot reads");
                let out = child.wait_with_output().expect("dot ends");
                assert!(
                    out.status.success(),
                    "{}: {}",
                    path.display(),
                    String::from_utf8_lossy(&out.stderr)
                );
            }
            drawn += 1;
        }
    }
    assert!(drawn >= 100, "only {drawn} pictures");
}

#[test]
fn prod_pictures_match_the_docs() {
    let root = common::workspace();
    for stage in [
        "10.source",
        "20.source-unf",
        "30.target-unf",
        "40.target",
        "50.opt",
    ] {
        let dot = picture(&root.join(format!("fixtures/prod/{stage}.ron")));
        expect_test::expect_file![root.join(format!("docs/inspect/prod-{stage}.dot"))]
            .assert_eq(&dot);
    }
}

#[test]
fn a_string_diagram_has_a_box_per_primitive_and_a_wire_per_output_entry() {
    let root = common::workspace();
    let text = read(&root.join("fixtures/ex1_1/20.source-unf.ron"));
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
