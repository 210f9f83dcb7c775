//! The pieces of the differential tests on their own: the generator is
//! deterministic and well typed, the comparisons reject wrong gradients,
//! the shrinker finds small programs, and `check_grad` reports agreement
//! and disagreement.

use difftest::paths::{FiniteDiff, ad_agree, fd_agree, finite_differences};
use difftest::{
    CheckConfig, Disagreement, Features, GExpr, Rng, admissible_inputs, check_grad, gen_program,
    gen_vector_program, shrink_with,
};
use semantics::Value;

/// `check_grad` of a compiled module at named values.
fn check(
    m: &syntax::Module,
    at: &[(String, Value)],
    cfg: &CheckConfig,
) -> adrev::Result<difftest::CheckReport> {
    let program = adrev::Program::from_ir(adrev::Ir::Source(m.clone()));
    check_grad(
        &program,
        None,
        &adrev::Inputs::from_values(at.iter().cloned()),
        cfg,
    )
}

fn compile(text: &str) -> syntax::Module {
    syntax::compile(syntax::SourceFile {
        name: "t.ad".into(),
        text: text.into(),
    })
    .expect("compiles")
}

#[test]
fn generated_programs_compile_and_are_deterministic() {
    for case in 0..300 {
        let feat = Features {
            max_nao: 3,
            open_reduce: case % 2 == 0,
            extended: case % 3 != 0,
            ..Features::default()
        };
        let p = gen_program(&mut Rng::for_case(11, case), 30, &feat);
        let q = gen_program(&mut Rng::for_case(11, case), 30, &feat);
        assert_eq!(p, q);
        let text = p.text(None);
        let m = p.compile().unwrap_or_else(|e| panic!("{text}\n{e}"));
        assert!(m.is_typed());
        // The generator's own typing agrees on the result.
        let mut env = p.params.clone();
        assert_eq!(
            difftest::ast::type_of(&p.body, &mut env),
            Some(p.ret.clone()),
            "{text}"
        );
        let v = gen_vector_program(&mut Rng::for_case(12, case), 30, &feat);
        let text = v.text(None);
        v.compile().unwrap_or_else(|e| panic!("{text}\n{e}"));
    }
}

#[test]
fn programs_without_the_extensions_lie_in_the_direct_fragment() {
    let (mut inside, mut outside) = (0, 0);
    for case in 0..300 {
        let mut feat = Features {
            max_nao: 3,
            open_reduce: case % 2 == 0,
            extended: false,
            ..Features::default()
        };
        let p = gen_program(&mut Rng::for_case(13, case), 30, &feat);
        assert!(p.fragment().direct, "{}", p.text(None));
        // The direct macro takes every program of its fragment.
        let m = p.compile().expect("compiles");
        let def = m.defs.last().expect("an entry");
        let taken = reverse::reverse_direct(&m, def, &reverse::Config::default());
        assert!(taken.is_ok(), "{}: {:?}", p.text(None), taken.err());
        feat.extended = true;
        let q = gen_program(&mut Rng::for_case(13, case), 30, &feat);
        let m = q.compile().expect("compiles");
        let def = m.defs.last().expect("an entry");
        let taken = reverse::reverse_direct(&m, def, &reverse::Config::default()).is_ok();
        // Outside the fragment the direct macro refuses; inside it takes.
        assert_eq!(taken, q.fragment().direct, "{}", q.text(None));
        if taken {
            inside += 1;
        } else {
            outside += 1;
        }
    }
    assert!(
        inside > 30 && outside > 30,
        "{inside} inside, {outside} outside"
    );
}

#[test]
fn a_few_hundred_programs_reach_every_construct_and_nao_3() {
    let (coverage, nao) = difftest::sample_coverage(400, 21);
    for construct in difftest::CONSTRUCTS {
        let n = coverage.get(*construct).copied().unwrap_or(0);
        assert!(n >= 1, "`{construct}` never occurs: {coverage:?}");
    }
    assert!(nao.len() >= 4 && nao[3] > 0, "{nao:?}");
}

#[test]
fn admissible_inputs_keep_away_from_singular_points() {
    // log of a value near 0 at every input: no admissible inputs.
    let p = difftest::Program {
        params: vec![("x1".into(), difftest::GTy::Real)],
        ret: difftest::GTy::Real,
        body: GExpr::Op1(
            syntax::Prim::Log,
            Box::new(GExpr::Op2(
                syntax::Prim::Mul,
                Box::new(GExpr::Var("x1".into())),
                Box::new(GExpr::Const(0.0)),
            )),
        ),
    };
    assert!(admissible_inputs(&mut Rng::new(1), &p, 50).is_none());
}

#[test]
fn comparisons_reject_wrong_gradients() {
    let m = compile("def f (x : R) (y : R) : R = x * x * y");
    let def = m.defs[0].clone();
    let at = vec![
        ("x".to_string(), Value::Real(3.0)),
        ("y".to_string(), Value::Real(2.0)),
    ];
    let fd: FiniteDiff = finite_differences(&m, &def, &at, &[1, 2]).expect("fd");
    let right = vec![Value::Real(12.0), Value::Real(9.0)];
    assert!(fd_agree(&right, &fd).is_ok());
    assert!(fd_agree(&[Value::Real(12.001), Value::Real(9.0)], &fd).is_err());
    assert!(ad_agree(&right, &right).is_ok());
    assert!(ad_agree(&right, &[Value::Real(12.0), Value::Real(9.0 + 1e-6)]).is_err());
    assert!(ad_agree(&right, &[Value::Real(12.0)]).is_err());
}

#[test]
fn the_shrinker_finds_a_small_failing_program() {
    // A "bug" that shows whenever `sin` is applied to something.
    fn has_sin(e: &GExpr) -> bool {
        matches!(e, GExpr::Op1(syntax::Prim::Sin, _)) || e.children().iter().any(|c| has_sin(c))
    }
    let feat = Features::default();
    let mut found = None;
    for case in 0..500 {
        let mut rng = Rng::for_case(5, case);
        let p = gen_program(&mut rng, 40, &feat);
        if has_sin(&p.body)
            && p.body.size() > 20
            && let Some((inputs, _)) = admissible_inputs(&mut rng, &p, 20)
        {
            found = Some((p, inputs));
            break;
        }
    }
    let (p, inputs) = found.expect("some program applies sin");
    let before = p.body.size();
    let d = Disagreement::new("sin", "applied");
    let (small, _, d) = shrink_with(p, inputs, d, |p, _| {
        has_sin(&p.body).then(|| Disagreement::new("sin", "applied"))
    });
    assert_eq!(d.check, "sin");
    assert!(has_sin(&small.body));
    assert!(
        small.body.size() <= 2,
        "{before} nodes shrunk to {}: {}",
        small.body.size(),
        small.text(None)
    );
}

#[test]
fn check_grad_agrees_on_a_smooth_program() {
    let m = compile(
        "def f (A : [n]R) (w : R) : R = reduce (+) 0 (map (fun x -> sin (x * w) + x * x) A)",
    );
    let at = vec![
        ("A".to_string(), Value::reals(&[0.5, -1.0, 2.0])),
        ("w".to_string(), Value::Real(0.7)),
    ];
    let report = check(&m, &at, &CheckConfig::default()).expect("runs");
    assert!(report.ok(), "{}", report.render());
    assert_eq!(report.points.len(), 4);
    let text = report.render();
    for path in ["direct", "unf", "fd", "grad A", "grad w", "all paths agree"] {
        assert!(text.contains(path), "{text}");
    }
}

#[test]
fn check_grad_does_not_take_a_kink_for_a_slope() {
    // At a tie, reverse mode sends the whole derivative to y (ties go to
    // the second argument); central differences see half of it on each
    // side, and their one-sided halves (1 and 0) disagree: the finite
    // differences are inconclusive there, not a disagreement of the AD
    // routes (fixture fuzz_fd_kink is the case that found it).
    let m = compile("def f (x : R) (y : R) : R = max x y");
    let at = vec![
        ("x".to_string(), Value::Real(1.0)),
        ("y".to_string(), Value::Real(1.0)),
    ];
    let cfg = CheckConfig {
        nearby: 0,
        ..CheckConfig::default()
    };
    let report = check(&m, &at, &cfg).expect("runs");
    let text = report.render();
    assert!(report.ok(), "{text}");
    assert!(text.contains("too ill-conditioned"), "{text}");
}

#[test]
fn check_grad_lists_a_path_that_refuses() {
    // Indexing: the UNF path takes it (Section 7.3's recipe), the direct
    // macro refuses it.
    let m = compile("def f (A : [n]R) (w : R) : R = A[1] * w + sum (map (fun a -> a * w) A)");
    let at = vec![
        ("A".to_string(), Value::reals(&[0.5, -1.0])),
        ("w".to_string(), Value::Real(0.3)),
    ];
    let report = check(&m, &at, &CheckConfig::default()).expect("runs");
    assert!(report.ok(), "{}", report.render());
    assert!(report.render().contains("refused"), "{}", report.render());
}

#[test]
fn check_grad_marks_ill_conditioned_finite_differences() {
    // exp (40 x) is 2.4e17 at x = 1: one ulp of it is more than a period
    // of sin, so no finite-difference step settles.
    let m = compile("def f (x : R) : R = sin (exp (x * 40))");
    let at = vec![("x".to_string(), Value::Real(1.0))];
    let cfg = CheckConfig {
        nearby: 0,
        ..CheckConfig::default()
    };
    let report = check(&m, &at, &cfg).expect("runs");
    assert!(report.ok(), "{}", report.render());
    assert!(
        report.render().contains("too ill-conditioned"),
        "{}",
        report.render()
    );
    let direct = report.points[0].paths[0]
        .outcome
        .as_ref()
        .expect("direct runs");
    let g = direct.grads[0].as_real().expect("a real");
    let e = 40f64.exp();
    let want = e.cos() * 40.0 * e;
    assert!((g - want).abs() <= 1e-9 * want.abs(), "{g} vs {want}");
}

#[test]
fn a_reported_failure_is_a_fixture_file() {
    let feat = Features::default();
    let (p, inputs) = (0..50)
        .find_map(|case| {
            let mut rng = Rng::for_case(3, case);
            let p = gen_program(&mut rng, 25, &feat);
            admissible_inputs(&mut rng, &p, 50).map(|(inputs, _)| (p, inputs))
        })
        .expect("some program has admissible inputs");
    let m = p.compile().expect("compiles");
    let def = m.defs.last().expect("entry").clone();
    let named = p.named_inputs(&inputs);
    let g = difftest::paths::unf_program(&m, &def, &reverse::Config::default()).expect("unf");
    let out = semantics::eval_entry(&g, None, &named).expect("runs");
    let mut d = Disagreement::new("example check", "what differed");
    d.expected = Some(out.as_tuple().expect("tuple")[1..].to_vec());
    let text = difftest::fixture_text(&p, &inputs, &d, 3, 1);
    // It compiles, states its inputs, value and gradient, and is written
    // in the printer's layout, as the fixtures are.
    let fm = compile(&text);
    let fdef = fm.defs.last().expect("entry").clone();
    let exp = semantics::Expectations::parse(&text);
    let at = exp.inputs(&fdef).expect("inputs read");
    assert_eq!(at.len(), p.params.len());
    let value = exp.value(&fm, &fdef).expect("a value line").expect("reads");
    let got = semantics::eval_entry(&fm, None, &at).expect("runs");
    assert!(got.approx_eq_default(&value), "{got} vs {value}");
    for (name, _) in &p.params {
        assert!(exp.grad(&fdef, name).expect("a grad line").is_ok());
    }
    let parsed = syntax::parse(syntax::SourceFile {
        name: "f.ad".into(),
        text: text.clone(),
    })
    .expect("parses");
    let code: String = text
        .lines()
        .filter(|l| !l.trim_start().starts_with("--"))
        .map(|l| format!("{l}\n"))
        .collect();
    assert_eq!(syntax::print::module(&parsed), code);
}

#[test]
fn check_grad_runs_every_path() {
    // A higher-order program on the surface (a definition passed to
    // `map`): the reverse paths take it specialised to first order.
    let m = compile(
        "def g (x : R) (w : R) : R = sin (x * w)\ndef f (A : [n]R) (w : R) : R = sum (map (fun a -> g a w) A)",
    );
    let at = vec![
        ("A".to_string(), Value::reals(&[0.5, -1.0, 2.0])),
        ("w".to_string(), Value::Real(0.7)),
    ];
    let cfg = CheckConfig {
        nearby: 1,
        c: Some(codegen::Config::default()),
        ..CheckConfig::default()
    };
    let report = check(&m, &at, &cfg).expect("runs");
    assert!(report.ok(), "{}", report.render());
    let names: Vec<&str> = report.points[0]
        .paths
        .iter()
        .map(|r| r.path.as_str())
        .collect();
    assert_eq!(
        names,
        [
            "unf",
            "unf-noopt",
            "direct",
            "forward",
            "forward-vec",
            "c",
            "fd"
        ]
    );
    for r in &report.points[0].paths {
        assert!(r.outcome.is_ok(), "{}: {:?}", r.path, r.outcome);
    }
    // d/dw sum sin(a w) = sum a cos(a w).
    let want: f64 = [0.5f64, -1.0, 2.0]
        .iter()
        .map(|a| a * (a * 0.7).cos())
        .sum();
    for r in &report.points[0].paths {
        let g = r.outcome.as_ref().expect("ran");
        let got = g.grads[1].as_real().expect("a real");
        assert!((got - want).abs() < 1e-7, "{}: {got} vs {want}", r.path);
    }
}

#[test]
fn check_grad_reports_disagreeing_ad_paths() {
    // The broken forward macro of Exercise 182.8 keeps only the first
    // summand of every operation's derivative: d(x * y)/dy is lost.
    let m = compile("def f (x : R) (y : R) : R = x * y + x");
    let at = vec![
        ("x".to_string(), Value::Real(3.0)),
        ("y".to_string(), Value::Real(2.0)),
    ];
    let cfg = CheckConfig {
        nearby: 0,
        mutant_forward: true,
        ..CheckConfig::default()
    };
    let report = check(&m, &at, &cfg).expect("runs");
    assert!(!report.ok());
    let text = report.render();
    assert!(text.contains("DISAGREE: forward vs unf"), "{text}");
    assert!(text.contains("DISAGREE: forward-vec vs unf"), "{text}");
    assert!(!text.contains("DISAGREE: direct"), "{text}");
    assert!(!text.contains("DISAGREE: unf-noopt"), "{text}");
    assert!(text.ends_with("the paths disagree\n"), "{text}");
    // Without the mutant, the same program passes.
    let cfg = CheckConfig {
        nearby: 0,
        ..CheckConfig::default()
    };
    assert!(check(&m, &at, &cfg).expect("runs").ok());
}

#[test]
fn the_comparison_catches_one_path_off_by_a_little() {
    use difftest::check::{PathResult, compare_paths};
    use difftest::paths::Gradient;
    let grad = |v: f64, gs: &[f64]| {
        Ok(Gradient {
            value: v,
            grads: gs.iter().map(|&g| Value::Real(g)).collect(),
        })
    };
    let row = |path: &str, outcome| PathResult {
        path: path.to_string(),
        outcome,
    };
    let good = vec![
        row("unf", grad(2.0, &[1.0, 3.0])),
        row("direct", Err("refused".to_string())),
        row("forward", grad(2.0, &[1.0, 3.0 + 1e-12])),
    ];
    let (diffs, _, problems) = compare_paths(2.0, &good, None);
    assert!(problems.is_empty(), "{problems:?}");
    assert_eq!(diffs.len(), 1);
    let off = vec![
        row("unf", grad(2.0, &[1.0, 3.0])),
        row("forward", grad(2.0, &[1.0, 3.0 * (1.0 + 1e-6)])),
    ];
    let (diffs, _, problems) = compare_paths(2.0, &off, None);
    assert_eq!(problems.len(), 1, "{problems:?}");
    assert!(problems[0].starts_with("forward vs unf"), "{problems:?}");
    assert!((diffs[0].1 - 1e-6).abs() < 1e-9, "{diffs:?}");
    // A wrong value is a disagreement too.
    let wrong_value = vec![row("unf", grad(2.5, &[1.0, 3.0]))];
    let (_, _, problems) = compare_paths(2.0, &wrong_value, None);
    assert_eq!(problems.len(), 1, "{problems:?}");
}

/// [`Features::redundant`]: the programs with the optimizer's
/// redundancies are well typed (the generator's typing agrees with the
/// front end's), the generator's evaluator agrees with the reference
/// evaluator on them, lambdas included (`LamStyle::Twice`, `Branched`),
/// and without lambdas every path computes the same gradient.
#[test]
fn redundant_programs_are_well_typed_and_every_path_agrees() {
    let mut counts = std::collections::BTreeMap::new();
    let mut checked = 0;
    for case in 0..120 {
        let feat = Features {
            redundant: true,
            higher_order: case % 3 != 0,
            ..Features::default()
        };
        let mut rng = Rng::for_case(17, case);
        let p = gen_program(&mut rng, 12 + (case as usize % 30), &feat);
        let text = p.text(None);
        p.count(&mut counts);
        let m = p.compile().unwrap_or_else(|e| panic!("{text}\n{e}"));
        let mut env = p.params.clone();
        assert_eq!(
            difftest::ast::type_of(&p.body, &mut env),
            Some(p.ret.clone()),
            "{text}"
        );
        let Some((inputs, value)) = admissible_inputs(&mut rng, &p, 20) else {
            continue;
        };
        let got = semantics::eval_entry(&m, None, &p.named_inputs(&inputs))
            .unwrap_or_else(|e| panic!("{text}\n{e}"));
        assert!(
            got.approx_eq_default(&Value::Real(value)),
            "{got} vs {value}\n{text}"
        );
        if !feat.higher_order {
            difftest::check_case(&p, &inputs, false)
                .unwrap_or_else(|d| panic!("{d:?}\n{}", p.text(Some(&inputs))));
            checked += 1;
        }
    }
    for style in ["lambda-twice", "lambda-branched"] {
        assert!(counts.contains_key(style), "no `{style}`: {counts:?}");
    }
    assert!(checked >= 20, "only {checked} programs through every path");
}
