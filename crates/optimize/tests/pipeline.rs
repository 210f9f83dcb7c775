//! Generated Source programs through the whole reverse-mode pipeline
//! (compile → UNF → D_ρ → UNF^-1 → optimize): the optimized gradient
//! evaluates as the raw one does, Lemma 5.1 holds on the raw gradient and
//! Lemma 5.3 on the optimized one, and Theorem 5.4's bound holds on G, the
//! gradient alone (`optimize::gradient_only`), at the program's inputs.
//!
//! The generated programs use every scalar operator (`pow`, `/`, `tan`,
//! `abs`, `max`, ... included: their partial derivatives are the Target
//! primitives of `syntax::derivatives` where the expansion would cost several
//! operations). The programs come from the one random-program generator
//! (`difftest::gen_program`, restricted to the direct macro's language and
//! to the operators of the paper's cost model: `tests/common/source.rs`).
//! For the programs without array operations (p = 0) the largest
//! Cost(G)/Cost(e) is printed (`--nocapture`) against the goal this crate
//! sets itself beyond the paper's 4, Cost(G) <= 3 Cost(e), which is a
//! measurement, not a theorem: the generator's nested expressions that no
//! `let` names exceed it (docs/cost.md, "Where it still does not hold"),
//! so only the fixtures assert it. The seed is fixed, so the ratios are
//! reproducible and recorded in docs/cost.md.

use crate::common;

use std::cell::RefCell;

use optimize::{Config, gradient_only, optimize};
use proptest::prelude::*;
use proptest::test_runner::{Config as RunnerConfig, RngSeed, TestCaseError, TestRunner};
use semantics::{Expectations, Value, cost};

use common::{compile, same};

/// What one program gave: the ratios of G and of the whole gradient
/// program (with the value), NAO, and whether it reads all its inputs.
struct Seen {
    g: f64,
    full: f64,
    nao: u32,
    reads_all: bool,
    /// Whether the program uses `max` or `min`.
    max_min: bool,
    /// Whether it uses `pow`.
    pow: bool,
}

/// Runs the pipeline on the program of `seed`; `None` when reverse mode
/// refuses it (a construct it does not support).
fn run(seed: u64, arrays: bool) -> Result<Option<Seen>, TestCaseError> {
    let text = common::source::program(seed, arrays);
    let m = compile(&text);
    let def = m.defs.last().expect("a definition").clone();
    let Ok(lowered) = unf::lower(&m, &def) else {
        return Ok(None);
    };
    let Ok(target) = reverse::reverse(&lowered, &reverse::Config::default()) else {
        return Ok(None);
    };
    let raw = unf::raise(&target).map_err(|e| TestCaseError::fail(format!("raise: {e}")))?;
    let fail = |what: String| TestCaseError::fail(format!("{what}\n{text}"));

    let inputs = Expectations::parse(&text)
        .inputs(&def)
        .map_err(|e| fail(e.to_string()))?;
    let out = optimize(&raw, &Config::default()).map_err(|e| fail(e.to_string()))?;
    let before = semantics::eval_entry(&raw, None, &inputs).map_err(|e| fail(e.to_string()))?;
    let after = semantics::eval_entry(&out, None, &inputs).map_err(|e| fail(e.to_string()))?;
    prop_assert!(
        same(&before, &after),
        "optimize changed the gradient from {before} to {after}\n{text}\n{}",
        syntax::print::module(&out)
    );
    let value = semantics::eval_entry(&m, None, &inputs).map_err(|e| fail(e.to_string()))?;
    let parts = after
        .as_tuple()
        .expect("a gradient program returns a tuple");
    prop_assert!(
        same(&parts[0], &value),
        "value {} is not {value}\n{text}",
        parts[0]
    );

    let raw_def = raw.defs.last().expect("a definition");
    if let Err(v) = cost::check_lemma_5_1(&raw, raw_def) {
        return Err(fail(format!("Lemma 5.1: {v:?}")));
    }
    let out_def = out.defs.last().expect("a definition");
    if let Err(v) = cost::check_lemma_5_3(&out, out_def) {
        return Err(fail(format!(
            "Lemma 5.3: {v:?}\n{}",
            syntax::print::module(&out)
        )));
    }

    let args: Vec<Value> = def
        .params
        .iter()
        .map(|p| {
            inputs
                .iter()
                .find(|(n, _)| n == p.name.as_str())
                .map(|(_, v)| v.clone())
                .expect("an input per parameter")
        })
        .collect();
    let g = optimize(
        &gradient_only(&raw, None).map_err(|e| fail(e.to_string()))?,
        &Config::default(),
    )
    .map_err(|e| fail(e.to_string()))?;
    let g_def = g.defs.last().expect("a definition");
    let report = cost::report(&m, &def, &g, g_def, &args).map_err(|e| fail(e.to_string()))?;
    // A gradient builds the zero gradient of an input the program never
    // reads (n moves for an array), which no bound in Cost(e) can cover:
    // the theorem is checked on programs that read all their inputs.
    let reads_all = def
        .params
        .iter()
        .all(|p| reads_every_component(&m, &p.name, p.ty.as_ref()));
    prop_assert!(
        report.holds() || !reads_all,
        "Theorem 5.4 fails:\n{report}\n{text}\n{}",
        syntax::print::module(&g)
    );
    let full = cost::report(&m, &def, &out, out_def, &args).map_err(|e| fail(e.to_string()))?;
    let uses = |ops: &[syntax::Prim]| {
        m.exprs
            .iter()
            .any(|e| matches!(e, syntax::Expr::Prim { op, .. } if ops.contains(op)))
    };
    Ok(Some(Seen {
        g: report.ratio,
        full: full.ratio,
        nao: report.nao,
        reads_all,
        max_min: uses(&[syntax::Prim::Max, syntax::Prim::Min]),
        pow: uses(&[syntax::Prim::Pow]),
    }))
}

/// Whether `m` reads every component of the variable `x` of type `ty`: the
/// variable itself is read whole, or each component of a tuple is read
/// (projected, or bound by a tuple pattern whose name is read).
fn reads_every_component(m: &syntax::Module, x: &syntax::Name, ty: Option<&syntax::Ty>) -> bool {
    use syntax::{Expr, Pat, Ty};
    let Some(Ty::Tuple(items)) = ty else {
        return m.exprs.iter().any(|e| matches!(e, Expr::Var(y) if y == x));
    };
    let is_x = |id: syntax::ExprId| matches!(m.expr(id), Expr::Var(y) if y == x);
    let mut read = vec![false; items.len()];
    let mut under_parent = 0;
    for e in &m.exprs {
        match e {
            Expr::Proj { tuple, index } if is_x(*tuple) => {
                read[*index as usize - 1] = true;
                under_parent += 1;
            }
            Expr::Let {
                pat: Pat::Tuple(names),
                value,
                ..
            } if is_x(*value) => {
                under_parent += 1;
                for (i, n) in names.iter().enumerate() {
                    read[i] |= reads_every_component(m, n, items.get(i));
                }
            }
            _ => {}
        }
    }
    let uses = m
        .exprs
        .iter()
        .filter(|e| matches!(e, Expr::Var(y) if y == x))
        .count();
    uses > under_parent || read.iter().all(|r| *r)
}

/// Runs `cases` programs, returning what they gave.
fn sweep(arrays: bool, cases: u32) -> Vec<Seen> {
    let seen = RefCell::new(Vec::new());
    // A fixed seed: the largest ratios are measurements over these
    // programs, reproducible from run to run (docs/cost.md records them);
    // `PROPTEST_RNG_SEED` does not apply.
    let mut runner = TestRunner::new(RunnerConfig {
        cases,
        failure_persistence: None,
        rng_seed: RngSeed::Fixed(0x5EED_C057),
        ..RunnerConfig::default()
    });
    let result = runner.run(&any::<u64>(), |seed| {
        if let Some(s) = run(seed, arrays)? {
            seen.borrow_mut().push(s);
        }
        Ok(())
    });
    if let Err(e) = result {
        panic!("{e}");
    }
    seen.into_inner()
}

fn max(xs: impl Iterator<Item = f64>) -> f64 {
    xs.fold(0.0, f64::max)
}

#[test]
fn scalar_programs() {
    let all = sweep(false, 128);
    assert_eq!(all.len(), 128, "reverse mode refused a program");
    let seen: Vec<&Seen> = all.iter().filter(|s| s.reads_all).collect();
    let (g, full) = (
        max(seen.iter().map(|s| s.g)),
        max(seen.iter().map(|s| s.full)),
    );
    let g_plain = max(seen.iter().filter(|s| !s.max_min).map(|s| s.g));
    let pow = seen.iter().filter(|s| s.pow).count();
    eprintln!(
        "scalar programs: {} reading all their inputs, of {}, {pow} with `pow`; largest \
         Cost(G)/Cost(e) {g:.3} ({g_plain:.3} without `max` and `min`), with the value {full:.3}",
        seen.len(),
        all.len()
    );
    assert!(seen.iter().all(|s| s.nao == 0));
    assert!(pow > 0, "no generated program uses `pow`");
}

#[test]
fn array_programs() {
    let all = sweep(true, 96);
    assert_eq!(all.len(), 96, "reverse mode refused a program");
    let seen: Vec<&Seen> = all.iter().filter(|s| s.reads_all).collect();
    for p in 0..=3 {
        let of_p: Vec<&&Seen> = seen.iter().filter(|s| s.nao == p).collect();
        if !of_p.is_empty() {
            eprintln!(
                "array programs with p = {p}: {}; largest Cost(G)/Cost(e) {:.3} (bound {})",
                of_p.len(),
                max(of_p.iter().map(|s| s.g)),
                cost::cheap_gradient_bound(p)
            );
        }
    }
}
