//! The direct macro's output is linear in its input: continuations are
//! beta-reduced as the program is written and the context's cotangent is
//! updated at one position per clause, so doubling a `let` chain at most
//! doubles the gradient program; a 20,000-deep chain goes through without
//! overflowing the stack.

fn chain(n: usize) -> syntax::Module {
    let mut text = String::from("def chain (x : R) (a : R) : R =\n");
    let mut prev = "x".to_string();
    for i in 1..=n {
        text.push_str(&format!("  let x{i} = {prev} * a + sin {prev} in\n"));
        prev = format!("x{i}");
    }
    text.push_str(&format!("  {prev} * x\n"));
    syntax::compile(syntax::SourceFile {
        name: "chain.ad".into(),
        text,
    })
    .expect("chain compiles")
}

fn grad(n: usize) -> syntax::Module {
    let m = chain(n);
    let def = m.defs.last().expect("an entry").clone();
    reverse::reverse_direct(&m, &def, &reverse::Config::default()).expect("direct")
}

#[test]
fn doubling_the_program_at_most_doubles_the_output() {
    let size = |g: &syntax::Module| {
        (
            g.exprs.len(),
            syntax::to_ron(syntax::TARGET_IR, syntax::FORMAT_VERSION, g)
                .expect("the module writes as RON")
                .len(),
        )
    };
    let (small_nodes, small_ron) = size(&grad(2_000));
    let (big_nodes, big_ron) = size(&grad(4_000));
    for (what, a, b) in [
        ("nodes", small_nodes, big_nodes),
        ("ron bytes", small_ron, big_ron),
    ] {
        let ratio = b as f64 / a as f64;
        assert!(
            (1.8..=2.2).contains(&ratio),
            "{what}: {a} for 2,000 lets, {b} for 4,000 ({ratio:.2}x)"
        );
    }
}

#[test]
fn a_deep_chain_is_differentiated_and_evaluated() {
    let n = 20_000;
    let g = grad(n);
    let x = 0.3;
    let a = 0.5;
    let out = semantics::eval_entry(
        &g,
        None,
        &[
            ("x".to_string(), semantics::Value::Real(x)),
            ("a".to_string(), semantics::Value::Real(a)),
        ],
    )
    .expect("runs");
    // The oracle: the same chain with its derivative carried forward.
    let (mut v, mut dv_dx, mut dv_da) = (x, 1.0, 0.0);
    for _ in 0..n {
        let (nv, d) = (v * a + v.sin(), a + v.cos());
        dv_da = d * dv_da + v;
        dv_dx *= d;
        v = nv;
    }
    let want = [v * x, dv_dx * x + v, dv_da * x];
    let got = out.as_tuple().expect("a tuple");
    for (g, w) in got.iter().zip(want) {
        let g = g.as_real().expect("a real");
        assert!((g - w).abs() <= 1e-9 * w.abs().max(1.0), "{g} vs {w}");
    }
}
