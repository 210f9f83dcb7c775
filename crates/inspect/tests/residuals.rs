//! Stored residuals of every fixture's optimized gradient (`50.opt.ron`):
//! each formula, evaluated at the sizes of the inputs, equals the number
//! of scalars counted on the value the program computes; every residual
//! is a parameter or a forward binding the reverse pass reads. The
//! reports are snapshots (`60.residuals.txt`).

use crate::common;
use inspect::residuals;

#[test]
fn prod_keeps_its_input_and_the_prefix_products() {
    let dir = common::workspace().join("fixtures/prod");
    let g = common::optimized(&dir).expect("prod has a gradient");
    let gdef = g.defs.last().expect("a definition");
    let r = residuals::residuals(&g, gdef, 1, None).expect("residuals");
    let rows: Vec<(String, String)> = r
        .residuals
        .iter()
        .map(|x| {
            (
                syntax::print::ty(&x.ty),
                x.formula
                    .as_ref()
                    .map(ToString::to_string)
                    .unwrap_or_default(),
            )
        })
        .collect();
    assert_eq!(
        rows,
        [
            ("[n]R".to_string(), "n".to_string()),
            ("[n+1]R".to_string(), "n + 1".to_string())
        ]
    );
    assert!(r.residuals[1].computed_by.starts_with("scanl"), "{r}");
    assert_eq!(r.residuals[1].position.snippet, "reduce (*) 1 A");
}

#[test]
fn sum_reads_only_the_length_of_its_input() {
    let root = common::workspace().join("fixtures");
    for (case, length_only) in [("sum", true), ("prod", false), ("dot", false)] {
        let g = common::optimized(&root.join(case)).expect("a gradient");
        let gdef = g.defs.last().expect("a definition");
        let k = gdef.params.len();
        let r = residuals::residuals(&g, gdef, k, None).expect("residuals");
        assert_eq!(r.residuals[0].length_only, length_only, "{case}: {r}");
    }
}
