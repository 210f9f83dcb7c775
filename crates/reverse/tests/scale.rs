//! The stages scale linearly: doubling a `let` chain at most ~doubles every
//! RON file (contexts are shared, continuations not materialised).

use crate::common;

fn sizes(n: usize) -> [usize; 3] {
    let m = common::chain(n);
    let def = m.defs.last().expect("a definition");
    let s = unf::lower(&m, def).expect("lower");
    let t = reverse::reverse(&s, &reverse::Config::default()).expect("reverse");
    let g = unf::raise(&t).expect("raise");
    [
        unf::to_ron(&s).expect("the module writes as RON").len(),
        unf::to_ron(&t).expect("the module writes as RON").len(),
        syntax::to_ron(syntax::TARGET_IR, syntax::FORMAT_VERSION, &g)
            .expect("the module writes as RON")
            .len(),
    ]
}

#[test]
fn doubling_the_program_at_most_doubles_the_files() {
    let small = sizes(2_000);
    let big = sizes(4_000);
    for (stage, (a, b)) in ["source-unf", "target-unf", "target"]
        .iter()
        .zip(small.iter().zip(&big))
    {
        let ratio = *b as f64 / *a as f64;
        assert!(
            ratio <= 2.2,
            "{stage}: {a} bytes for 2,000 lets, {b} for 4,000 ({ratio:.2}x)"
        );
        assert!(
            ratio >= 1.8,
            "{stage}: {a} bytes for 2,000 lets, {b} for 4,000 ({ratio:.2}x)"
        );
    }
}

#[test]
fn deeply_nested_operands_go_through() {
    // x * (x * (x * ... * x)): every operand is lowered weakened by the
    // ones before; nothing is rewritten, nothing overflows the stack.
    let n = 3_000;
    let mut text = String::from("def deep (x : R) : R =\n  ");
    for _ in 0..n {
        text.push_str("sin x * (");
    }
    text.push('x');
    text.push_str(&")".repeat(n));
    text.push('\n');
    let m = syntax::compile(syntax::SourceFile {
        name: "deep.ad".into(),
        text,
    })
    .expect("compile");
    let g = reverse::gradient(
        &m,
        m.defs.last().expect("a definition"),
        &reverse::Config::default(),
    )
    .expect("gradient");
    let x = 1.5_f64;
    let out =
        semantics::eval_entry(&g, None, &[("x".to_string(), common::Value::Real(x))]).expect("run");
    let out = common::items(&out);
    // f = sin(x)^n * x, f' = n sin^(n-1) cos x * x + sin^n x.
    let s = x.sin();
    let expected = n as f64 * s.powi(n as i32 - 1) * x.cos() * x + s.powi(n as i32);
    let got = common::r(&out[1]);
    assert!(expected > 1e-6, "the expected derivative is not negligible");
    assert!(
        (got - expected).abs() <= 1e-9 * expected.abs(),
        "{got} vs {expected}"
    );
}

/// `x1 = y * a + sin y`, ..., the chain of the other tests as program text
/// whose body is `y`'s n-th step, inside `wrap`.
fn wrapped_chain(n: usize, wrap: &str) -> syntax::Module {
    let mut chain = String::new();
    for i in 1..=n {
        let prev = if i == 1 {
            "y".to_string()
        } else {
            format!("y{}", i - 1)
        };
        chain.push_str(&format!("let y{i} = {prev} * a + sin {prev} in "));
    }
    chain.push_str(&format!("y{n}"));
    let text = format!(
        "def f (a : R) (A : [n]R) : R =\n  {}\n",
        wrap.replace("CHAIN", &chain)
    );
    syntax::compile(syntax::SourceFile {
        name: "wrapped.ad".into(),
        text,
    })
    .expect("compile")
}

fn wrapped_sizes(n: usize, wrap: &str) -> [usize; 3] {
    let m = wrapped_chain(n, wrap);
    let def = m.defs.last().expect("a definition");
    let s = unf::lower(&m, def).expect("lower");
    let t = reverse::reverse(&s, &reverse::Config::default()).expect("reverse");
    let g = unf::raise(&t).expect("raise");
    [
        unf::to_ron(&s).expect("the module writes as RON").len(),
        unf::to_ron(&t).expect("the module writes as RON").len(),
        syntax::to_ron(syntax::TARGET_IR, syntax::FORMAT_VERSION, &g)
            .expect("the module writes as RON")
            .len(),
    ]
}

#[test]
fn a_chain_inside_a_loop_or_a_branch_stays_linear() {
    // A loop's transposed Jacobian writes its body's derivative once (map,
    // if) or twice (foldl); for a fixed nesting, doubling the body at most
    // doubles every file.
    for wrap in [
        "sum (map (fun y -> CHAIN) A)",
        "foldl (fun (acc, y) -> acc + (CHAIN)) a A",
        "sum (map (fun x -> if x > a then (let y = x in CHAIN) else x * a) A)",
    ] {
        let small = wrapped_sizes(500, wrap);
        let big = wrapped_sizes(1_000, wrap);
        for (stage, (a, b)) in ["source-unf", "target-unf", "target"]
            .iter()
            .zip(small.iter().zip(&big))
        {
            let ratio = *b as f64 / *a as f64;
            assert!(
                (1.7..=2.2).contains(&ratio),
                "{wrap}: {stage}: {a} bytes for 500 lets, {b} for 1,000 ({ratio:.2}x)"
            );
        }
    }
}

fn if_chain(n: usize) -> syntax::Module {
    let mut text = String::from("def f (x : R) (a : R) : R =\n  ");
    for i in 0..n {
        text.push_str(&format!("if x > {i} then x * a + {i} else "));
    }
    text.push_str("x * x\n");
    syntax::compile(syntax::SourceFile {
        name: "chain.ad".into(),
        text,
    })
    .expect("compile")
}

#[test]
fn an_if_else_if_chain_stays_linear() {
    // Each branch's gradient is computed with its value: no branch is
    // written again under an enclosing if's derivative.
    let size = |n: usize| {
        let m = if_chain(n);
        let g = reverse::gradient(
            &m,
            m.defs.last().expect("a definition"),
            &reverse::Config::default(),
        )
        .expect("gradient");
        syntax::to_ron(syntax::TARGET_IR, syntax::FORMAT_VERSION, &g)
            .expect("the module writes as RON")
            .len()
    };
    let (small, big) = (size(200), size(400));
    let ratio = big as f64 / small as f64;
    assert!(
        (1.8..=2.2).contains(&ratio),
        "{small} bytes for 200 cases, {big} for 400 ({ratio:.2}x)"
    );
    // And the gradient is right.
    let m = if_chain(400);
    let g = reverse::gradient(
        &m,
        m.defs.last().expect("a definition"),
        &reverse::Config::default(),
    )
    .expect("gradient");
    let at = [
        ("x".to_string(), common::Value::Real(0.5)),
        ("a".to_string(), common::Value::Real(3.0)),
    ];
    let out = common::items(&semantics::eval_entry(&g, None, &at).expect("run"));
    // x = 0.5 > 0: the first branch, x * a + 0.
    assert_eq!(common::r(&out[1]), 3.0);
    assert_eq!(common::r(&out[2]), 0.5);
    let at = [
        ("x".to_string(), common::Value::Real(-1.0)),
        ("a".to_string(), common::Value::Real(3.0)),
    ];
    let out = common::items(&semantics::eval_entry(&g, None, &at).expect("run"));
    // No case holds: the last branch, x * x.
    assert_eq!(common::r(&out[1]), -2.0);
    assert_eq!(common::r(&out[2]), 0.0);
}
