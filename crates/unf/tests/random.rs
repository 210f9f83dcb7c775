//! Random programs from the project's one generator (`difftest`: the
//! paper's core and, in two cases of three, the constructs of Section 7
//! and Appendix A and the rest of the language): their Source UNF
//! verifies, survives the RON round trip byte for byte, and computes what
//! the generator's own evaluator computes, evaluated directly and raised
//! back to a Target program. `UNF_RANDOM_CASES` sets the number of
//! programs (default 200).

use difftest::{Features, Program, check_random_programs, count_from_env};

fn close(a: f64, b: f64) -> bool {
    semantics::reals_close(a, b, 1e-9, 1e-12) || (a.is_nan() && b.is_nan())
}

#[test]
fn unf_then_back_computes_the_same() {
    let features = |k: u64| Features {
        extended: !k.is_multiple_of(3),
        ..Features::default()
    };
    check_random_programs(
        0x756e_665f_7261_6e64,
        count_from_env("UNF_RANDOM_CASES", 200),
        features,
        |_, p, inputs, value| check(p, &p.named_inputs(inputs), value),
    );
}

fn check(p: &Program, named: &[(String, semantics::Value)], value: f64) -> Result<(), String> {
    let m = p.compile().map_err(|e| format!("does not compile: {e}"))?;
    let def = m.defs.last().ok_or("no definition")?;
    let s = unf::lower(&m, def).map_err(|e| format!("lower: {e}"))?;
    unf::verify(&s).map_err(|e| format!("Source UNF does not verify: {e:?}"))?;
    let text = unf::to_ron(&s).expect("the module writes as RON");
    let back = unf::from_ron(&text, unf::Kind::Source).map_err(|e| format!("read back: {e}"))?;
    if back != s || unf::to_ron(&back).expect("the module writes as RON") != text {
        return Err("the RON round trip changed the module".into());
    }
    let real = |v: semantics::Value| v.as_real().unwrap_or(f64::NAN);
    let at_unf = semantics::eval_unf(&s, named).map_err(|e| format!("eval_unf: {e}"))?;
    let raised = unf::raise(&s).map_err(|e| format!("raise: {e}"))?;
    syntax::verify(&raised).map_err(|e| format!("raised does not verify: {e:?}"))?;
    let anf = semantics::eval_entry(&raised, None, named).map_err(|e| format!("raised: {e}"))?;
    for (what, got) in [("eval_unf", real(at_unf)), ("raised", real(anf))] {
        if !close(value, got) {
            return Err(format!("{what} {got}, the generator's evaluator {value}"));
        }
    }
    Ok(())
}
