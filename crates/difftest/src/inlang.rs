//! Reverse mode inside the language on generated programs: each generated
//! `f` is wrapped in the constructs `grad_rev` (reverse mode through UNF,
//! closed over and spliced back) and `jvp` of `grad_rev` (forward over
//! reverse) in a program of its own, compiled by the library, and held
//! against the whole-program gradient (`grad_rev`) and against forward
//! over forward (`jvp` of `grad`, a Hessian-vector product along `dir`).

use adrev::{Inputs, Kind, Program as Compiled, Request};
use semantics::Value;

use crate::ast::Program;
use crate::paths::ad_agree;

/// `(x1, ..., xk)` or `x1` alone.
fn tuple(names: &[String]) -> String {
    if names.len() == 1 {
        names[0].clone()
    } else {
        format!("({})", names.join(", "))
    }
}

/// `fun x1 -> body`, or for several names `fun t -> let (x1, ..) = t in
/// body`: a construct's function is unary, several parameters one tuple.
fn unary(name: &str, xs: &[String], body: &str) -> String {
    if xs.len() == 1 {
        format!("fun {} -> {body}", xs[0])
    } else {
        format!("fun {name} -> let {} = {name} in {body}", tuple(xs))
    }
}

/// The components of a construct's result: the tuple's, or the value
/// itself for one parameter.
fn components(v: &Value, k: usize) -> Vec<Value> {
    match v.as_tuple() {
        Some(items) if k > 1 => items.to_vec(),
        _ => vec![v.clone()],
    }
}

fn run(text: &str, inputs: Inputs<'_>) -> Result<Value, String> {
    let p = Compiled::from_text("generated.ad", text).map_err(|e| e.message().to_string())?;
    let c = p
        .compile(&Request::new(Kind::Value))
        .map_err(|e| e.message().to_string())?;
    c.call(&inputs)
        .map(|o| o.value)
        .map_err(|e| e.message().to_string())
}

/// `grad_rev` of `f` against `want`, the whole-program gradient with
/// respect to every parameter; then the Hessian-vector product along
/// `dir` (one value per parameter) by `jvp` of `grad_rev` against `jvp`
/// of `grad`.
pub fn check_in_language(
    p: &Program,
    named: &[(String, Value)],
    want: &[Value],
    dir: &[Value],
) -> Result<(), String> {
    let k = p.params.len();
    let a: Vec<String> = (1..=k).map(|i| format!("a__{i}")).collect();
    let b: Vec<String> = (1..=k).map(|i| format!("b__{i}")).collect();
    let x: Vec<String> = p.params.iter().map(|(n, _)| n.clone()).collect();
    let v: Vec<String> = (1..=k).map(|i| format!("v__{i}")).collect();
    let base = p.text(None);
    // `grad_rev` refuses functions with derivative rules (crates/adrev
    // inlang.rs says why); the rules themselves are checked elsewhere.
    if base.contains("with_rules") {
        return Ok(());
    }
    let call_f = format!("f {}", a.join(" "));
    let grad = format!(
        "{base}def g {} = grad_rev ({}) {}\n",
        x.join(" "),
        unary("ta__", &a, &call_f),
        tuple(&x)
    );
    let inputs = || Inputs::from_values(named.iter().cloned());
    let got = run(&grad, inputs()).map_err(|e| format!("grad_rev: {e}\n{grad}"))?;
    ad_agree(&components(&got, k), want).map_err(|e| format!("grad_rev vs unf: {e}\n{grad}"))?;
    // Forward mode over the histograms' reverse derivative is refused by
    // name (forward/src/hist.rs): no forward-over-reverse check for them.
    if ["reduce_by_index", "scatter", "hist_"]
        .iter()
        .any(|c| base.contains(c))
    {
        return Ok(());
    }
    let hvp = |g: &str| {
        let inner = unary("ta__", &a, &call_f);
        let outer = unary("tb__", &b, &format!("{g} ({inner}) {}", tuple(&b)));
        format!(
            "{base}def h {} {} = (jvp ({outer}) {} {}).2\n",
            x.join(" "),
            v.join(" "),
            tuple(&x),
            tuple(&v)
        )
    };
    let with_dir = || {
        let mut i = inputs();
        for (n, d) in v.iter().zip(dir) {
            i = i.with(n, d.clone());
        }
        i
    };
    let (fr, ff) = (hvp("grad_rev"), hvp("grad"));
    let got = run(&fr, with_dir()).map_err(|e| format!("jvp of grad_rev: {e}\n{fr}"))?;
    let reference = run(&ff, with_dir()).map_err(|e| format!("jvp of grad: {e}\n{ff}"))?;
    ad_agree(&components(&got, k), &components(&reference, k))
        .map_err(|e| format!("forward over reverse vs forward over forward: {e}\n{fr}"))
}
