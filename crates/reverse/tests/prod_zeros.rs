//! `prod`'s gradient where its input has zeros: the scan-based J^T reduce
//! divides by nothing, so the gradient is exact, never NaN, through the
//! raised program and Target UNF alike. (Every fixture's gradient is
//! checked by the fixture runner, docs/testing.md.)

use crate::common::{Value, items, reals_of};
use std::path::PathBuf;

fn fixture(name: &str) -> (String, syntax::Module) {
    let path = PathBuf::from(env!("CARGO_MANIFEST_DIR"))
        .join("../../fixtures")
        .join(name)
        .join("program.ad");
    let text = std::fs::read_to_string(&path).expect("fixture exists");
    let file = syntax::SourceFile {
        name: path.display().to_string(),
        text: text.clone(),
    };
    let m = syntax::compile(file).expect("fixture compiles");
    (text, m)
}

#[test]
fn prod_with_zeros_is_exact() {
    // The scan-based J^T reduce divides by nothing: zeros give the exact
    // gradient, never NaN.
    let (_, m) = fixture("prod");
    let def = m.defs.last().expect("an entry");
    let s = unf::lower(&m, def).expect("lower");
    let t = reverse::reverse(&s, &reverse::Config::default()).expect("reverse");
    let g = unf::raise(&t).expect("raise");
    for (a, grad) in [
        (vec![1.0, 0.0, 3.0, 4.0], vec![0.0, 12.0, 0.0, 0.0]),
        (vec![0.0, 2.0, 0.0, 4.0], vec![0.0, 0.0, 0.0, 0.0]),
        (vec![0.0], vec![1.0]),
        (vec![], vec![]),
    ] {
        let inputs = vec![("A".to_string(), Value::reals(&a))];
        let out = items(&semantics::eval_entry(&g, None, &inputs).expect("run"));
        assert_eq!(reals_of(&out[1]), grad, "at {a:?}");
        let direct = items(&semantics::eval_unf(&t, &inputs).expect("run target-unf"));
        assert_eq!(reals_of(&direct[1]), grad, "target-unf at {a:?}");
    }
}
