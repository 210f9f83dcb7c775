//! Random first-order programs: their Source UNF verifies, survives the RON
//! round trip byte for byte, and computes what the Source program computes,
//! evaluated directly and raised back to a Target program.

use crate::common;

use common::programs::{build, recipe};
use common::{Value, r, run};
use proptest::prelude::*;

fn close(a: f64, b: f64) -> bool {
    (a - b).abs() <= 1e-9 * a.abs().max(b.abs()) + 1e-12 || (a.is_nan() && b.is_nan())
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(200))]
    #[test]
    fn unf_then_back_computes_the_same(
        recipe_ in recipe(),
        x1 in -2.0f64..2.0,
        x2 in -2.0f64..2.0,
        a in proptest::collection::vec(-2.0f64..2.0, 3),
        b in proptest::collection::vec(-2.0f64..2.0, 3),
    ) {
        let m = build(&recipe_);
        let def = m.defs.last().expect("a definition");
        let s = unf::lower(&m, def).expect("lower");
        prop_assert!(unf::verify(&s).is_ok(), "{:?}", unf::verify(&s));
        let text = unf::to_ron(&s);
        let back = unf::from_ron(&text, unf::Kind::Source).expect("read back");
        prop_assert_eq!(&back, &s);
        prop_assert_eq!(unf::to_ron(&back), text);
        let args = [Value::Real(x1), Value::Real(x2), Value::reals(&a), Value::reals(&b)];
        let direct = r(&run(&m, &args));
        let raised = unf::raise(&s).expect("raise");
        prop_assert!(syntax::verify(&raised).is_ok(), "{:?}", syntax::verify(&raised));
        let anf = r(&run(&raised, &args));
        let names = ["x1", "x2", "A", "B"];
        let inputs: Vec<(String, Value)> = names.iter().map(|n| n.to_string()).zip(args.iter().cloned()).collect();
        let at_unf = r(&semantics::eval_unf(&s, &inputs).expect("eval source-unf"));
        prop_assert!(close(direct, at_unf), "{} vs {}", direct, at_unf);
        prop_assert!(close(direct, anf), "{} vs {}", direct, anf);
    }
}
