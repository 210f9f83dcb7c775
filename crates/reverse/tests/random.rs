//! Random first-order programs: the gradient computed through
//! lower → reverse → raise agrees with central finite differences, and the
//! value it returns with the Source program's.

use crate::common;

use common::programs::{build, recipe};
use common::{Value, items, r, reals_of, run};
use proptest::prelude::*;

/// The inputs as a flat vector and back.
fn args(flat: &[f64]) -> Vec<Value> {
    vec![
        Value::Real(flat[0]),
        Value::Real(flat[1]),
        Value::reals(&flat[2..5]),
        Value::reals(&flat[5..8]),
    ]
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(200))]
    #[test]
    fn gradient_matches_finite_differences(
        recipe_ in recipe(),
        flat in proptest::collection::vec(-2.0f64..2.0, 8),
    ) {
        let m = build(&recipe_);
        let def = m.defs.last().expect("a definition");
        let s = unf::lower(&m, def).expect("lower");
        let t = reverse::reverse(&s, &reverse::Config::default()).expect("reverse");
        prop_assert!(unf::verify(&t).is_ok());
        let text = unf::to_ron(&t);
        let back = unf::from_ron(&text, unf::Kind::Target).expect("read back");
        prop_assert_eq!(unf::to_ron(&back), text);
        let g = unf::raise(&t).expect("raise");
        prop_assert!(syntax::verify(&g).is_ok(), "{:?}", syntax::verify(&g));
        let out = items(&run(&g, &args(&flat)));
        let f = |x: &[f64]| r(&run(&m, &args(x)));
        let value = f(&flat);
        prop_assert!((r(&out[0]) - value).abs() <= 1e-9 * value.abs() + 1e-12);
        let grad: Vec<f64> = out[1..].iter().flat_map(reals_of).collect();
        // The Target UNF module, evaluated directly, agrees.
        let names = ["x1", "x2", "A", "B"];
        let inputs: Vec<(String, Value)> = names.iter().map(|n| n.to_string()).zip(args(&flat)).collect();
        let direct = semantics::eval_unf(&t, &inputs).expect("eval target-unf");
        let direct: Vec<f64> = items(&direct)[1..].iter().flat_map(reals_of).collect();
        for (a, b) in direct.iter().zip(&grad) {
            prop_assert!((a - b).abs() <= 1e-9 * a.abs().max(b.abs()) + 1e-12, "eval_unf {} vs raise {}", a, b);
        }
        prop_assert_eq!(grad.len(), 8);
        for i in 0..8 {
            let h = 1e-6 * flat[i].abs().max(1.0);
            let (mut up, mut down) = (flat.clone(), flat.clone());
            up[i] += h;
            down[i] -= h;
            let fd = (f(&up) - f(&down)) / (2.0 * h);
            // max and min are not differentiable at ties; finite differences
            // straddling one are not a derivative.
            let kink = (fd - (f(&up) - value) / h).abs() > 1e-3 * (1.0 + fd.abs());
            prop_assert!(kink || (grad[i] - fd).abs() <= 1e-5 * (1.0 + fd.abs()),
                "d/d{}: reverse {} vs finite differences {}", i, grad[i], fd);
        }
    }
}

/// Random programs with the constructs of Section 7 and Appendix A:
/// reverse mode through UNF agrees with forward mode everywhere (the same
/// derivative at kinks), with its Target UNF evaluated directly, and with
/// central finite differences away from kinks.
mod extended {
    use super::args;
    use super::common::programs::{build, extended};
    use super::common::{Value, items, r, reals_of, run};
    use proptest::prelude::*;

    proptest! {
        #![proptest_config(ProptestConfig::with_cases(150))]
        #[test]
        fn gradient_matches_forward_mode_and_finite_differences(
            recipe_ in extended(),
            flat in proptest::collection::vec(-2.0f64..2.0, 8),
        ) {
            let m = build(&recipe_);
            let def = m.defs.last().expect("a definition");
            let s = unf::lower(&m, def).expect("lower");
            prop_assert!(unf::verify(&s).is_ok());
            let t = reverse::reverse(&s, &reverse::Config::default()).expect("reverse");
            prop_assert!(unf::verify(&t).is_ok());
            let text = unf::to_ron(&t);
            let back = unf::from_ron(&text, unf::Kind::Target).expect("read back");
            prop_assert_eq!(unf::to_ron(&back), text);
            let g = unf::raise(&t).expect("raise");
            prop_assert!(syntax::verify(&g).is_ok(), "{:?}\n{}", syntax::verify(&g), syntax::print::module(&g));
            let anf = unf::raise(&s).expect("raise source-unf");
            prop_assert!(syntax::verify(&anf).is_ok(), "{:?}", syntax::verify(&anf));
            let f = |x: &[f64]| r(&run(&m, &args(x)));
            let value = f(&flat);
            prop_assume!(value.is_finite());
            let out = items(&run(&g, &args(&flat)));
            prop_assert!((r(&out[0]) - value).abs() <= 1e-9 * value.abs() + 1e-12);
            let at_anf = r(&run(&anf, &args(&flat)));
            prop_assert!((at_anf - value).abs() <= 1e-9 * value.abs() + 1e-12);
            let grad: Vec<f64> = out[1..].iter().flat_map(reals_of).collect();
            prop_assert_eq!(grad.len(), 8);
            let names = ["x1", "x2", "A", "B"];
            let inputs: Vec<(String, Value)> =
                names.iter().map(|n| n.to_string()).zip(args(&flat)).collect();
            let direct = semantics::eval_unf(&t, &inputs).expect("eval target-unf");
            let direct: Vec<f64> = items(&direct)[1..].iter().flat_map(reals_of).collect();
            let fwd = forward::grad_program(&m, def, None).expect("forward mode");
            let fwd = items(&run(&fwd, &args(&flat)));
            let fwd: Vec<f64> = fwd[1..].iter().flat_map(reals_of).collect();
            for i in 0..8 {
                prop_assert!(semantics::reals_close(direct[i], grad[i], 1e-9, 1e-12),
                    "d/d{}: eval_unf {} vs raise {}", i, direct[i], grad[i]);
                prop_assert!(semantics::reals_close(fwd[i], grad[i], 1e-9, 1e-12),
                    "d/d{}: forward {} vs reverse {}\n{}", i, fwd[i], grad[i], syntax::print::module(&m));
                let h = 1e-6 * flat[i].abs().max(1.0);
                let (mut up, mut down) = (flat.clone(), flat.clone());
                up[i] += h;
                down[i] -= h;
                let fd = (f(&up) - f(&down)) / (2.0 * h);
                let kink = (fd - (f(&up) - value) / h).abs() > 1e-3 * (1.0 + fd.abs());
                prop_assert!(kink || (grad[i] - fd).abs() <= 1e-5 * (1.0 + fd.abs()),
                    "d/d{}: reverse {} vs finite differences {}", i, grad[i], fd);
            }
        }
    }
}
