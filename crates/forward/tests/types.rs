//! `dual_ty` (our reading of Definition 182.6 on the whole type language)
//! and the signatures of the generated definitions.

use crate::common;

use common::{compile, verified};
use syntax::{Size, Ty};

fn arr(n: &str, t: Ty) -> Ty {
    Ty::array(Size::Var(syntax::Name::new(n), 0), t)
}

fn pair(a: Ty, b: Ty) -> Ty {
    Ty::Tuple(vec![a, b])
}

#[test]
fn dual_types() {
    let rr = pair(Ty::Real, Ty::Real);
    assert_eq!(forward::dual_ty(&Ty::Real), rr);
    assert_eq!(forward::dual_ty(&Ty::Int), Ty::Int);
    assert_eq!(forward::dual_ty(&Ty::Bool), Ty::Bool);
    assert_eq!(forward::dual_ty(&arr("n", Ty::Real)), arr("n", rr.clone()));
    assert_eq!(
        forward::dual_ty(&pair(Ty::Int, arr("m", arr("n", Ty::Real)))),
        pair(Ty::Int, arr("m", arr("n", rr.clone())))
    );
    assert_eq!(
        forward::dual_ty(&Ty::Func(
            vec![Ty::Real, Ty::Int],
            Box::new(arr("n", Ty::Real))
        )),
        Ty::Func(vec![rr.clone(), Ty::Int], Box::new(arr("n", rr.clone())))
    );
    // (R -> R) -> R, the type of `fun f -> f (f x)`'s argument position.
    let hof = Ty::Func(
        vec![Ty::Func(vec![Ty::Real], Box::new(Ty::Real))],
        Box::new(Ty::Real),
    );
    assert_eq!(
        forward::dual_ty(&hof),
        Ty::Func(
            vec![Ty::Func(vec![rr.clone()], Box::new(rr.clone()))],
            Box::new(rr)
        )
    );
}

#[test]
fn signatures_of_the_generated_definitions() {
    let m = compile("def f (x : [n]R) (s : R) (k : Int) : R =\n  x[k] * s\n");
    let entry = m.defs[0].clone();
    let sig = |out: &syntax::Module| {
        verified(out);
        let d = &out.defs[0];
        let params: Vec<(String, Ty)> = d
            .params
            .iter()
            .map(|p| (p.name.to_string(), p.ty.clone().expect("typed")))
            .collect();
        (d.name.to_string(), params, d.ret.clone().expect("typed"))
    };
    let xt = arr("n", Ty::Real);
    let (name, params, ret) = sig(&forward::jvp(&m, &entry).expect("jvp"));
    assert_eq!(name, "f_jvp");
    let names: Vec<&str> = params.iter().map(|(n, _)| n.as_str()).collect();
    assert_eq!(names, ["x", "s", "k", "dx", "ds", "dk"]);
    assert_eq!(params[3].1, xt);
    assert_eq!(ret, pair(Ty::Real, Ty::Real));
    let (name, params, ret) = sig(&forward::grad_program(&m, &entry, None).expect("grad"));
    assert_eq!(name, "f_grad");
    assert_eq!(params.len(), 3);
    assert_eq!(
        ret,
        Ty::Tuple(vec![Ty::Real, xt.clone(), Ty::Real, Ty::Int])
    );
    let wrt = ["s".to_string()];
    let (_, _, ret) = sig(&forward::grad_program(&m, &entry, Some(&wrt)).expect("grad"));
    assert_eq!(ret, pair(Ty::Real, Ty::Real));
    let (name, _, ret) =
        sig(
            &forward::hessian_program(&m, &entry, Some(&wrt), &forward::Config::default())
                .expect("hessian"),
        );
    assert_eq!(name, "f_hessian");
    assert_eq!(ret, Ty::Tuple(vec![Ty::Real, Ty::Real, Ty::Real]));
    // A module without constructs expands to itself.
    assert_eq!(forward::expand(&m).expect("expand"), m);
}
