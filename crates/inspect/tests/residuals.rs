//! Stored residuals of every fixture's optimized gradient (`50.opt.ron`):
//! each formula, evaluated at the sizes of the inputs, equals the number
//! of scalars counted on the value the program computes; every residual
//! is a parameter or a forward binding the reverse pass reads. The
//! reports are snapshots (`60.residuals.txt`).

use crate::common::{self, args, fixtures};
use inspect::residuals;

#[test]
fn every_fixture_measures_what_its_formulas_say() {
    let mut measured = 0;
    for dir in fixtures() {
        let Some(g) = common::optimized(&dir) else {
            continue;
        };
        let source = common::source(&dir);
        let def = source.defs.last().expect("a definition");
        let gdef = g.defs.last().expect("the gradient definition");
        let k = def.params.len();
        let a = args(&source, def);
        let r = residuals::residuals(&g, gdef, k, a.as_deref())
            .unwrap_or_else(|e| panic!("{}: {e}", common::name(&dir)));
        if let Some(a) = &a {
            let sizes = semantics::cost::sizes_at(gdef, a).expect("the inputs fit");
            for res in &r.residuals {
                let at = res.at_inputs.expect("measured at the inputs");
                if let Some(p) = &res.formula {
                    assert_eq!(
                        p.eval(&sizes),
                        Some(at as i64),
                        "{}: {} : {} is {p}",
                        common::name(&dir),
                        res.name,
                        syntax::print::ty(&res.ty)
                    );
                    measured += 1;
                }
            }
        }
        for res in &r.residuals {
            let is_param = gdef.params.iter().any(|p| p.name == res.name);
            assert_eq!(
                is_param,
                res.value.is_none(),
                "{}: {}",
                common::name(&dir),
                res.name
            );
        }
        expect_test::expect_file![dir.join("60.residuals.txt")].assert_eq(&r.to_string());
    }
    assert!(measured >= 30, "only {measured} residuals measured");
}

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
