//! The differential test of one generated case: every comparison between
//! the paths on one program at one point ([`check_case`]), the dot-product
//! identity between forward and reverse mode on a program returning an
//! array ([`check_dot`]), and the C backend against the evaluator
//! ([`check_c`]).
//!
//! Per case: the program text compiles; the reference evaluator agrees
//! with the generator's evaluator; every stage boundary of the UNF path
//! gives the Source program's value (Source UNF evaluated and raised back,
//! Target UNF evaluated, the raised gradient program) and its RON files
//! round-trip; the UNF gradient agrees with forward mode (one pass per
//! direction, and vectorised), with finite differences and with the
//! Target UNF module's; the optimized gradient programs (UNF, forward,
//! direct) agree with the unoptimized ones; on a program of the direct
//! macro's fragment, the direct path runs and agrees with the UNF path
//! (Prop. 6.14); a gradient with respect to a subset of the parameters is
//! the matching part of the whole gradient, on every path.

use crate::ast::{GExpr, GTy, GVal, Loop, Program};
use crate::generate::value_at;
use crate::paths::{
    Gradient, ad_agree, as_gradient, direct_program, fd_agree, finite_differences, flat, flatten,
    forward_program, forward_program_with, inconclusive, one_line, optimized, run_c, run_gradient,
    source_value, unf_program, unf_stages,
};
use crate::rng::Rng;
use semantics::Value;
use syntax::Prim;

/// A check that failed on a case.
#[derive(Debug, Clone, PartialEq)]
pub struct Disagreement {
    /// Which comparison.
    pub check: String,
    /// What differed.
    pub detail: String,
    /// The best available gradient (for the fixture's `-- grad` lines).
    pub expected: Option<Vec<Value>>,
}

impl Disagreement {
    /// A disagreement found by `check`, with no expected gradient.
    pub fn new(check: &str, detail: impl Into<String>) -> Disagreement {
        Disagreement {
            check: check.to_string(),
            detail: detail.into(),
            expected: None,
        }
    }
}

fn fail(check: &str, detail: impl Into<String>) -> Disagreement {
    Disagreement::new(check, detail)
}

/// What one passing case exercised.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct CaseInfo {
    /// Whether the direct path ran (the program is in its fragment).
    pub direct: bool,
    /// Gradient components too ill-conditioned for finite differences at
    /// the point (compared between the AD paths only).
    pub fd_inconclusive: usize,
}

/// The program compiled and its derivative constructs expanded (what every
/// route takes; `crate::deriv`).
fn compile(p: &Program) -> Result<(syntax::Module, syntax::Def), Disagreement> {
    let m = p.compile().map_err(|e| {
        fail(
            "front end",
            format!("a generated program does not compile: {e}"),
        )
    })?;
    let m = if p.has_derivatives() {
        // Expansion leaves applications of the closed functions (`jvp`'s
        // lambda, say): specialise to first order as every route does.
        let m = adrev::passes::expand(&m).map_err(|e| fail("forward (expand)", one_line(&e)))?;
        adrev::passes::first_order(m, "f").map_err(|e| fail("specialize", one_line(&e)))?
    } else {
        m
    };
    let def = m
        .defs
        .last()
        .ok_or_else(|| fail("front end", "no definition"))?
        .clone();
    Ok((m, def))
}

/// Runs every check on `p` at `inputs`; `subset` also checks a gradient
/// with respect to a subset of the parameters (every other one).
pub fn check_case(p: &Program, inputs: &[GVal], subset: bool) -> Result<CaseInfo, Disagreement> {
    let (m, def) = compile(p)?;
    let named = p.named_inputs(inputs);
    let v = source_value(&m, &def, &named).map_err(|e| fail("source evaluation", e))?;
    let mine = value_at(p, inputs).ok_or_else(|| fail("generator", "inputs not admissible"))?;
    if p.has_derivatives() {
        // The generator's evaluator differentiates by finite differences.
        close_to(
            "reference evaluator vs generator's evaluator (finite differences)",
            v,
            mine,
            1e-5,
        )?;
        check_forward_twin(p, &named, v)?;
    } else {
        close_value("reference evaluator vs generator's evaluator", v, mine)?;
    }
    let all = reverse::Config::default();

    // The UNF path, boundary by boundary.
    let st = unf_stages(&m, &def, &all).map_err(|(stage, e)| fail(&stage, e))?;
    let raised = unf::raise(&st.source_unf).map_err(|e| fail("source-unf raise", e.to_string()))?;
    let back = semantics::eval_entry(&raised, None, &named)
        .map_err(|e| fail("source-unf raised evaluation", e.to_string()))?;
    close_value(
        "source-unf raised vs source",
        back.as_real().unwrap_or(f64::NAN),
        v,
    )?;
    let su = semantics::eval_unf(&st.source_unf, &named)
        .map_err(|e| fail("source-unf evaluation", e.to_string()))?;
    close_value(
        "source-unf boundary vs source",
        su.as_real().unwrap_or(f64::NAN),
        v,
    )?;
    unf_roundtrip(&st.source_unf, unf::Kind::Source).map_err(|e| fail("source-unf RON", e))?;
    unf_roundtrip(&st.target_unf, unf::Kind::Target).map_err(|e| fail("target-unf RON", e))?;
    roundtrip(&st.target).map_err(|e| fail("target RON", e))?;
    let gu = run_gradient(&st.target, &named).map_err(|e| fail("unf evaluation", e))?;
    close_value("unf value vs source", gu.value, v)?;
    let tu = semantics::eval_unf(&st.target_unf, &named)
        .map_err(|e| fail("target-unf evaluation", e.to_string()))
        .and_then(|out| as_gradient(&out).map_err(|e| fail("target-unf evaluation", e)))?;
    close_value("target-unf boundary vs source", tu.value, v)?;
    ad_agree(&tu.grads, &gu.grads).map_err(|e| fail("target-unf boundary vs target", e))?;

    // Forward mode and finite differences.
    let fwd = forward_program(&m, &def, None).map_err(|e| fail("forward", e))?;
    roundtrip(&fwd).map_err(|e| fail("forward RON", e))?;
    let gf = run_gradient(&fwd, &named).map_err(|e| fail("forward evaluation", e))?;
    close_value("forward value vs source", gf.value, v)?;
    let wrt: Vec<usize> = (1..=def.params.len()).collect();
    let fd =
        finite_differences(&m, &def, &named, &wrt).map_err(|e| fail("finite differences", e))?;
    let mut info = CaseInfo {
        fd_inconclusive: inconclusive(&fd),
        ..CaseInfo::default()
    };
    if let Err(e) = fd_agree(&gu.grads, &fd) {
        let mut d = fail("unf vs finite differences", e);
        d.expected = Some(if fd_agree(&gf.grads, &fd).is_ok() {
            gf.grads.clone()
        } else {
            fd.grads.clone()
        });
        return Err(d);
    }
    if let Err(e) = ad_agree(&gu.grads, &gf.grads) {
        let mut d = fail("reverse (unf) vs forward", e);
        d.expected = Some(fd.grads.clone());
        return Err(d);
    }
    let vcfg = forward::Config {
        mode: forward::Mode::Vectorised,
        ..forward::Config::default()
    };
    let fwv =
        forward_program_with(&m, &def, None, &vcfg).map_err(|e| fail("forward (vectorised)", e))?;
    let gv = run_gradient(&fwv, &named).map_err(|e| fail("forward (vectorised) evaluation", e))?;
    close_value("forward (vectorised) value vs source", gv.value, v)?;
    if let Err(e) = ad_agree(&gv.grads, &gf.grads) {
        let mut d = fail("forward (vectorised) vs forward", e);
        d.expected = Some(gu.grads.clone());
        return Err(d);
    }
    let fopt = optimized(&fwd).map_err(|e| fail("optimize (forward)", e))?;
    let gfo = run_gradient(&fopt, &named).map_err(|e| fail("optimized forward evaluation", e))?;
    close_value("optimized forward value vs source", gfo.value, v)?;
    if let Err(e) = ad_agree(&gfo.grads, &gf.grads) {
        let mut d = fail("optimized vs unoptimized (forward)", e);
        d.expected = Some(gu.grads.clone());
        return Err(d);
    }

    // The optimizer.
    let opt = optimized(&st.target).map_err(|e| fail("optimize (unf)", e))?;
    let go = run_gradient(&opt, &named).map_err(|e| fail("optimized unf evaluation", e))?;
    close_value("optimized unf value vs source", go.value, v)?;
    if let Err(e) = ad_agree(&go.grads, &gu.grads) {
        let mut d = fail("optimized vs unoptimized (unf)", e);
        d.expected = Some(gu.grads.clone());
        return Err(d);
    }

    // Checkpointed loops (docs/derivatives.md, "Checkpointing"): the same
    // gradient to the bit as the stored loops; optimized, the same up to
    // the optimizer's rules that are unsound in IEEE arithmetic (`0 * e ~>
    // 0` sees through one program's loops and not the other's, so a zero
    // may differ in sign; docs/optimize.md).
    let ck = unf::raise_with(&st.target_unf, unf::Checkpoint::Sqrt)
        .map_err(|e| fail("unf-inverse (checkpointed)", e.to_string()))?;
    let gc = run_gradient(&ck, &named).map_err(|e| fail("checkpointed unf evaluation", e))?;
    let bits = |g: &Gradient| {
        let mut xs = vec![g.value];
        g.grads.iter().for_each(|v| flatten(v, &mut xs));
        xs.into_iter().map(f64::to_bits).collect::<Vec<_>>()
    };
    if bits(&gc) != bits(&gu) {
        let mut d = fail(
            "checkpointed vs stored loops (unf)",
            format!("{:?} vs {:?}", gc.grads, gu.grads),
        );
        d.expected = Some(gu.grads.clone());
        return Err(d);
    }
    let ck_opt = optimized(&ck).map_err(|e| fail("optimize (checkpointed)", e))?;
    let gco = run_gradient(&ck_opt, &named)
        .map_err(|e| fail("optimized checkpointed unf evaluation", e))?;
    if let Err(e) = ad_agree(&gco.grads, &go.grads) {
        let mut d = fail("optimized checkpointed vs stored loops (unf)", e);
        d.expected = Some(gu.grads.clone());
        return Err(d);
    }
    // Reverse mode inside the language: `grad_rev` of f, and forward over
    // reverse along a direction of the shape of the inputs (the gradient).
    crate::inlang::check_in_language(p, &named, &gu.grads, &gu.grads)
        .map_err(|e| fail("reverse mode inside the language", e))?;

    // The direct macro, on its fragment.
    let direct = match direct_program(&m, &def, &all) {
        Err(e) if p.fragment().direct => {
            return Err(fail("direct refuses a program of its fragment", e));
        }
        Err(_) => None,
        Ok(d) => Some(d),
    };
    if let Some(d) = &direct {
        roundtrip(d).map_err(|e| fail("direct RON", e))?;
        let gd = run_gradient(d, &named).map_err(|e| fail("direct evaluation", e))?;
        close_value("direct value vs source", gd.value, v)?;
        if let Err(e) = ad_agree(&gd.grads, &gu.grads) {
            let mut d = fail("direct vs unf (Prop. 6.14)", e);
            d.expected = Some(gu.grads.clone());
            return Err(d);
        }
        let opt = optimized(d).map_err(|e| fail("optimize (direct)", e))?;
        let go = run_gradient(&opt, &named).map_err(|e| fail("optimized direct evaluation", e))?;
        close_value("optimized direct value vs source", go.value, v)?;
        if let Err(e) = ad_agree(&go.grads, &gd.grads) {
            let mut d = fail("optimized vs unoptimized (direct)", e);
            d.expected = Some(gu.grads.clone());
            return Err(d);
        }
        info.direct = true;
    }

    if subset && def.params.len() >= 2 {
        check_subset(&m, &def, &named, &gu, direct.is_some())?;
    }
    Ok(info)
}

/// The gradient with respect to every other parameter (`wrt`, the paper's
/// ρ ⊂ Γ) is the matching part of the whole gradient `whole`, on the UNF
/// path, forward mode and (when it takes the program) the direct path.
fn check_subset(
    m: &syntax::Module,
    def: &syntax::Def,
    named: &[(String, Value)],
    whole: &Gradient,
    direct: bool,
) -> Result<(), Disagreement> {
    let names: Vec<String> = def
        .params
        .iter()
        .step_by(2)
        .map(|p| p.name.to_string())
        .collect();
    let cfg = reverse::Config {
        wrt: Some(names.clone()),
    };
    let want: Vec<Value> = whole.grads.iter().step_by(2).cloned().collect();
    let part = unf_program(m, def, &cfg).map_err(|e| fail("unf wrt", e))?;
    let got = run_gradient(&part, named).map_err(|e| fail("unf wrt evaluation", e))?;
    ad_agree(&got.grads, &want).map_err(|e| fail("unf wrt subset vs whole", e))?;
    let part = forward_program(m, def, Some(&names)).map_err(|e| fail("forward wrt", e))?;
    let got = run_gradient(&part, named).map_err(|e| fail("forward wrt evaluation", e))?;
    ad_agree(&got.grads, &want).map_err(|e| fail("forward wrt subset vs whole", e))?;
    if direct {
        let part = direct_program(m, def, &cfg).map_err(|e| fail("direct wrt", e))?;
        let got = run_gradient(&part, named).map_err(|e| fail("direct wrt evaluation", e))?;
        ad_agree(&got.grads, &want).map_err(|e| fail("direct wrt subset vs whole", e))?;
    }
    Ok(())
}

/// The C backend runs the Source program and the optimized UNF gradient
/// program to the evaluator's results (bit-identical in its default
/// configuration; compared to 1e-12 relative).
pub fn check_c(p: &Program, inputs: &[GVal]) -> Result<(), Disagreement> {
    let (m, def) = compile(p)?;
    let named = p.named_inputs(inputs);
    let v = source_value(&m, &def, &named).map_err(|e| fail("source evaluation", e))?;
    let cv = run_c(&m, &named).map_err(|e| fail("C backend (source)", e))?;
    close_value(
        "C backend value vs source",
        cv.as_real().unwrap_or(f64::NAN),
        v,
    )?;
    let g = unf_program(&m, &def, &reverse::Config::default()).map_err(|e| fail("unf", e))?;
    let g = optimized(&g).map_err(|e| fail("optimize (unf)", e))?;
    let want = run_gradient(&g, &named).map_err(|e| fail("unf evaluation", e))?;
    let got = run_c(&g, &named)
        .map_err(|e| fail("C backend (gradient)", e))
        .and_then(|out| as_gradient(&out).map_err(|e| fail("C backend (gradient)", e)))?;
    close_value("C backend gradient value vs source", got.value, v)?;
    ad_agree(&got.grads, &want.grads).map_err(|e| fail("C backend gradient vs evaluator", e))
}

/// `<a, b>` for two expressions of type `ty` (a type of reals), as an
/// expression; `k` numbers the binders.
fn inner(ty: &GTy, a: GExpr, b: GExpr, k: &mut usize) -> GExpr {
    let bx = Box::new;
    match ty {
        GTy::Array(el, _) => {
            *k += 1;
            let (u, w, s, t) = (
                format!("u{k}"),
                format!("w{k}"),
                format!("s{k}"),
                format!("t{k}"),
            );
            let body = inner(el, GExpr::Var(u.clone()), GExpr::Var(w.clone()), k);
            let products = GExpr::Loop(Loop {
                op: Prim::Map2,
                params: vec![u, w],
                body: bx(body),
                args: vec![a, b],
            });
            GExpr::Loop(Loop {
                op: Prim::Reduce,
                params: vec![s.clone(), t.clone()],
                body: bx(GExpr::Op2(Prim::Add, bx(GExpr::Var(s)), bx(GExpr::Var(t)))),
                args: vec![GExpr::Const(0.0), products],
            })
        }
        GTy::Tuple(ts) => {
            let mut sum: Option<GExpr> = None;
            for (i, t) in ts.iter().enumerate() {
                let term = inner(
                    t,
                    GExpr::Proj(bx(a.clone()), i + 1),
                    GExpr::Proj(bx(b.clone()), i + 1),
                    k,
                );
                sum = Some(match sum {
                    None => term,
                    Some(s) => GExpr::Op2(Prim::Add, bx(s), bx(term)),
                });
            }
            sum.unwrap_or(GExpr::Const(0.0))
        }
        _ => GExpr::Op2(Prim::Mul, bx(a), bx(b)),
    }
}

/// The dot-product identity `<ybar, J v> = <J^T ybar, v>` on a program
/// `q` returning an array (or a tuple of reals and arrays): `J v` from
/// forward mode's jvp, `J^T ybar` from reverse mode (UNF, and direct on
/// its fragment) applied to `<ybar, q(x)>`, for random tangents `v` and
/// cotangents `ybar`.
pub fn check_dot(q: &Program, inputs: &[GVal], rng: &mut Rng) -> Result<CaseInfo, Disagreement> {
    let (m, def) = compile(q)?;
    let named = q.named_inputs(inputs);
    let args: Vec<Value> = named.iter().map(|(_, v)| v.clone()).collect();
    let y = semantics::eval_def(&m, &def, &args)
        .map_err(|e| fail("source evaluation", e.to_string()))?;
    let jm = forward::jvp(&m, &def).map_err(|e| fail("forward jvp", e.to_string()))?;
    syntax::verify(&jm)
        .map_err(|es| fail("forward jvp", format!("output does not verify: {}", es[0])))?;
    let tangents: Vec<Value> = args.iter().map(|a| random_like(a, rng)).collect();
    let mut jargs = args.clone();
    jargs.extend(tangents.iter().cloned());
    let jdef = jm
        .defs
        .last()
        .ok_or_else(|| fail("forward jvp", "no definition"))?;
    let out = semantics::eval_def(&jm, jdef, &jargs)
        .map_err(|e| fail("forward jvp evaluation", e.to_string()))?;
    let parts = out
        .as_tuple()
        .ok_or_else(|| fail("forward jvp", "not a pair"))?;
    if !parts[0].approx_eq(&y, 1e-9, 1e-12) {
        return Err(fail("jvp value vs source", format!("{} vs {y}", parts[0])));
    }
    let jv = flat(&parts[1..2]);
    let ybar_val = random_like(&y, rng);
    let ybar = flat(std::slice::from_ref(&ybar_val));
    // <ybar, q(x)> as a program of the same parameters and ybar.
    let yb = "ybar0";
    let mut wrapped = q.clone();
    wrapped.params.push((yb.to_string(), q.ret.clone()));
    wrapped.ret = GTy::Real;
    wrapped.body = GExpr::Let(
        "r0".to_string(),
        Box::new(q.body.clone()),
        Box::new(inner(
            &q.ret,
            GExpr::Var(yb.to_string()),
            GExpr::Var("r0".to_string()),
            &mut 1000,
        )),
    );
    let (wm, wdef) = compile(&wrapped)?;
    let cfg = reverse::Config {
        wrt: Some(q.params.iter().map(|(n, _)| n.clone()).collect()),
    };
    let mut wnamed = named.clone();
    wnamed.push((yb.to_string(), ybar_val));
    let lhs: f64 = ybar.iter().zip(&jv).map(|(a, b)| a * b).sum();
    let lhs_scale: f64 = ybar.iter().zip(&jv).map(|(a, b)| (a * b).abs()).sum();
    let v = flat(&tangents);
    let mut paths = vec![("unf", unf_program(&wm, &wdef, &cfg))];
    let mut info = CaseInfo::default();
    if wrapped.fragment().direct {
        paths.push(("direct", direct_program(&wm, &wdef, &cfg)));
        info.direct = true;
    }
    for (name, prog) in paths {
        let g = prog.map_err(|e| fail(name, e))?;
        let gr = run_gradient(&g, &wnamed).map_err(|e| fail(name, e))?;
        let jt = flat(&gr.grads);
        let rhs: f64 = jt.iter().zip(&v).map(|(a, b)| a * b).sum();
        let rhs_scale: f64 = jt.iter().zip(&v).map(|(a, b)| (a * b).abs()).sum();
        let tol = 1e-8 * lhs_scale.max(rhs_scale) + 1e-12;
        if (lhs - rhs).abs() > tol || lhs.is_nan() != rhs.is_nan() {
            return Err(fail(
                "dot product <ybar, J v> = <J^T ybar, v>",
                format!("forward jvp gives {lhs}, {name} vjp gives {rhs}"),
            ));
        }
    }
    Ok(info)
}

/// A value shaped like `v` with reals uniform in [-1, 1].
fn random_like(v: &Value, rng: &mut Rng) -> Value {
    let xs: Vec<f64> = flat(std::slice::from_ref(v))
        .iter()
        .map(|_| rng.range(-1.0, 1.0))
        .collect();
    crate::paths::unflatten(v, &xs, &mut 0)
}

fn close_value(check: &str, a: f64, b: f64) -> Result<(), Disagreement> {
    if (a - b).abs() <= 1e-9 * a.abs().max(b.abs()) + 1e-12 {
        Ok(())
    } else {
        Err(fail(check, format!("{a} vs {b}")))
    }
}

/// `a` and `b` agree to `rel` relative to 1 + their size.
fn close_to(check: &str, a: f64, b: f64, rel: f64) -> Result<(), Disagreement> {
    if (a - b).abs() <= rel * (1.0 + a.abs().max(b.abs())) {
        Ok(())
    } else {
        Err(fail(check, format!("{a} vs {b}")))
    }
}

/// Forward against reverse inside the program: `p` with every `grad_rev`
/// and `vjp_rev` replaced by `grad` and `vjp` has the value `v` (to
/// rounding: the modes sum in other orders).
fn check_forward_twin(p: &Program, named: &[(String, Value)], v: f64) -> Result<(), Disagreement> {
    let twin = Program {
        body: crate::deriv::forward_twin(&p.body),
        ..p.clone()
    };
    if twin == *p {
        return Ok(());
    }
    let (m, def) = compile(&twin)?;
    let w =
        source_value(&m, &def, named).map_err(|e| fail("source evaluation (forward twin)", e))?;
    if (w - v).abs() <= 1e-8 * (1.0 + w.abs().max(v.abs())) {
        Ok(())
    } else {
        Err(fail(
            "reverse constructs vs their forward twins",
            format!("{v} by grad_rev/vjp_rev, {w} by grad/vjp"),
        ))
    }
}

fn roundtrip(g: &syntax::Module) -> Result<(), String> {
    let write = |m: &syntax::Module| {
        syntax::to_ron(syntax::TARGET_IR, syntax::FORMAT_VERSION, m).map_err(|e| e.to_string())
    };
    let text = write(g)?;
    let back: syntax::Module = syntax::from_ron(syntax::TARGET_IR, syntax::FORMAT_VERSION, &text)
        .map_err(|e| e.to_string())?;
    if write(&back)? != text {
        return Err("the round trip changed the module".to_string());
    }
    Ok(())
}

fn unf_roundtrip(s: &unf::Module, kind: unf::Kind) -> Result<(), String> {
    let text = unf::to_ron(s).map_err(|e| e.to_string())?;
    let again = unf::from_ron(&text, kind).map_err(|e| e.to_string())?;
    if again != *s {
        return Err("the round trip changed the module".to_string());
    }
    Ok(())
}
