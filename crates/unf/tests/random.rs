//! Random programs from the project's one generator (`difftest`: the
//! paper's core and, in two cases of three, the constructs of Section 7
//! and Appendix A and the rest of the language): their Source UNF
//! verifies, survives the RON round trip byte for byte, and computes what
//! the generator's own evaluator computes, evaluated directly and raised
//! back to a Target program. `UNF_RANDOM_CASES` sets the number of
//! programs (default 200).

use difftest::{Features, Program, Rng, admissible_inputs, gen_program};

const SEED: u64 = 0x756e_665f_7261_6e64;

fn close(a: f64, b: f64) -> bool {
    semantics::reals_close(a, b, 1e-9, 1e-12) || (a.is_nan() && b.is_nan())
}

#[test]
fn unf_then_back_computes_the_same() {
    let cases: u64 = std::env::var("UNF_RANDOM_CASES")
        .ok()
        .and_then(|s| s.parse().ok())
        .unwrap_or(200);
    let mut failures = Vec::new();
    let mut checked = 0;
    for k in 0..cases {
        let mut rng = Rng::for_case(SEED, k);
        let feat = Features {
            extended: k % 3 != 0,
            ..Features::default()
        };
        let size = 4 + rng.below(40);
        let p = gen_program(&mut rng, size, &feat);
        let Some((inputs, value)) = admissible_inputs(&mut rng, &p, 20) else {
            continue;
        };
        checked += 1;
        let named = p.named_inputs(&inputs);
        if let Err(e) = check(&p, &named, value) {
            failures.push(format!("case {k}: {e}\n{}", p.text(Some(&inputs))));
        }
    }
    assert!(
        failures.is_empty(),
        "{} failures:\n{}",
        failures.len(),
        failures.join("\n")
    );
    assert!(checked >= cases / 2, "only {checked} cases had inputs");
}

fn check(p: &Program, named: &[(String, semantics::Value)], value: f64) -> Result<(), String> {
    let m = p.compile().map_err(|e| format!("does not compile: {e}"))?;
    let def = m.defs.last().ok_or("no definition")?;
    let s = unf::lower(&m, def).map_err(|e| format!("lower: {e}"))?;
    unf::verify(&s).map_err(|e| format!("Source UNF does not verify: {e:?}"))?;
    let text = unf::to_ron(&s);
    let back = unf::from_ron(&text, unf::Kind::Source).map_err(|e| format!("read back: {e}"))?;
    if back != s || unf::to_ron(&back) != text {
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
