//! Section 7.3's correctness check for each construct beyond the paper's
//! core: the transposed Jacobian of the construct (through UNF, reverse
//! mode, UNF^-1) gives the gradient of the *unrolled* program, written out
//! by hand for three elements with `let`s and scalars only. Both programs
//! take the same scalar parameters; their values and gradients agree at
//! pseudo-random points.

use semantics::Value;

fn compile(text: &str) -> syntax::Module {
    syntax::compile(syntax::SourceFile {
        name: "unrolled.ad".to_string(),
        text: text.to_string(),
    })
    .unwrap_or_else(|e| panic!("{text}: {e}"))
}

/// `(value, gradient)` of the last definition through the UNF path.
fn gradient(m: &syntax::Module, at: &[f64]) -> (f64, Vec<f64>) {
    let def = m.defs.last().expect("a definition").clone();
    let g = reverse::gradient(m, &def, &reverse::Config::default()).expect("reverse mode");
    if let Err(e) = syntax::verify(&g) {
        panic!("{e:?}\n{}", syntax::print::module(&g));
    }
    let inputs: Vec<(String, Value)> = def
        .params
        .iter()
        .zip(at)
        .map(|(p, &x)| (p.name.to_string(), Value::Real(x)))
        .collect();
    let out = semantics::eval_entry(&g, None, &inputs).expect("runs");
    let items = out.as_tuple().expect("a tuple");
    let real = |v: &Value| v.as_real().expect("a real");
    (real(&items[0]), items[1..].iter().map(real).collect())
}

/// The construct's program and its unrolling agree in value and gradient.
fn agree(construct: &str, unrolled: &str) {
    let params = "(a0 : R) (a1 : R) (a2 : R) (x : R) : R";
    let (c, u) = (
        compile(&format!("def f {params} =\n  {construct}")),
        compile(&format!("def f {params} =\n  {unrolled}")),
    );
    let mut rng = testkit::Rng::new(0x2545_f491_4f6c_dd1d);
    for _ in 0..20 {
        let at: Vec<f64> = (0..4).map(|_| rng.range(-1.5, 1.5)).collect();
        let (vc, gc) = gradient(&c, &at);
        let (vu, gu) = gradient(&u, &at);
        assert!(
            semantics::reals_close(vc, vu, 1e-12, 1e-12),
            "{construct} at {at:?}: value {vc}, unrolled {vu}"
        );
        for i in 0..4 {
            assert!(
                semantics::reals_close(gc[i], gu[i], 1e-9, 1e-12),
                "{construct} at {at:?}: component {i}: {} vs unrolled {}",
                gc[i],
                gu[i]
            );
        }
    }
}

#[test]
fn foldl_with_a_free_variable() {
    agree(
        "foldl (fun (acc, y) -> acc * x + sin y) x [a0, a1, a2]",
        "let s1 = x * x + sin a0 in let s2 = s1 * x + sin a1 in s2 * x + sin a2",
    );
}

#[test]
fn reduce_with_a_free_variable_and_an_open_initial_value() {
    agree(
        "reduce (fun (u, v) -> u * x + v * v) (sin x) [a0, a1, a2]",
        "let s1 = sin x * x + a0 * a0 in let s2 = s1 * x + a1 * a1 in s2 * x + a2 * a2",
    );
}

#[test]
fn scanl_every_prefix() {
    agree(
        "dot (scanl (fun (acc, y) -> acc * y + x) x [a0, a1, a2]) [1, 2, 3, 4]",
        "let s1 = x * a0 + x in let s2 = s1 * a1 + x in let s3 = s2 * a2 + x in
         x + 2 * s1 + 3 * s2 + 4 * s3",
    );
}

#[test]
fn scanr_every_suffix() {
    agree(
        "dot (scanr (fun (y, acc) -> sin (acc * y) + x) x [a0, a1, a2]) [1, 2, 3, 4]",
        "let r2 = sin (x * a2) + x in let r1 = sin (r2 * a1) + x in let r0 = sin (r1 * a0) + x in
         r0 + 2 * r1 + 3 * r2 + 4 * x",
    );
}

#[test]
fn ifold_over_indices() {
    agree(
        "let A = [a0, a1, a2] in ifold (fun (acc, i) -> acc * x + A[i] * A[i]) x 3",
        "let s1 = x * x + a0 * a0 in let s2 = s1 * x + a1 * a1 in s2 * x + a2 * a2",
    );
}

#[test]
fn build_from_a_function_of_the_index() {
    agree(
        "let A = [a0, a1, a2] in dot (build 3 (fun i -> x * A[i] + sin x)) [1, 2, 3]",
        "(x * a0 + sin x) + 2 * (x * a1 + sin x) + 3 * (x * a2 + sin x)",
    );
}

#[test]
fn indexing_scatters_into_a_zero_array() {
    agree(
        "let A = [a0, a1, a2] in A[1] * A[1] + A[2] * x + A[1]",
        "a1 * a1 + a2 * x + a1",
    );
}

#[test]
fn shifts_put_a_zero_back() {
    agree(
        "dot (shift1L [a0, a1, a2]) [x, 2] + dot (shift1R [a0, a1, a2]) [3, x * x]",
        "a1 * x + a2 * 2 + a0 * 3 + a1 * x * x",
    );
}

#[test]
fn length_is_not_differentiated() {
    agree(
        "let A = [a0, a1, a2] in if length A > 2 then x * a0 else a1",
        "x * a0",
    );
}

#[test]
fn an_array_of_tuples() {
    agree(
        "let p = reduce (fun (p, q) -> (p.1 + q.1, p.2 * q.2)) (0, 1)
           (map (fun y -> (sin y, y + x)) [a0, a1, a2]) in p.1 + p.2",
        "sin a0 + sin a1 + sin a2 + (a0 + x) * (a1 + x) * (a2 + x)",
    );
}

#[test]
fn a_nested_array() {
    agree(
        "sum (map (fun r -> r[0] * r[1] + sum r) [[a0, a1], [a2, x]])",
        "a0 * a1 + a0 + a1 + a2 * x + a2 + x",
    );
}

#[test]
fn map2_over_arrays_of_arrays() {
    agree(
        "sum (map2 (fun (r, s) -> dot r s) [[a0, a1], [a2, x]] [[x, a2], [a1, a0]])",
        "a0 * x + a1 * a2 + a2 * a1 + x * a0",
    );
}

#[test]
fn a_fold_with_a_tuple_accumulator() {
    // The accumulator has dimension 2: Fig. 17's products of 2x2 Jacobians
    // (`*~`), here carried as vector-Jacobian products.
    agree(
        "let s = foldl (fun (acc, y) -> (acc.1 * y + acc.2, acc.2 * x - acc.1)) (x, 1) [a0, a1, a2] in
         s.1 + 2 * s.2",
        "let p1 = x * a0 + 1 in let q1 = 1 * x - x in
         let p2 = p1 * a1 + q1 in let q2 = q1 * x - p1 in
         let p3 = p2 * a2 + q2 in let q3 = q2 * x - p2 in
         p3 + 2 * q3",
    );
}

#[test]
fn a_conditional_in_a_loop() {
    agree(
        "sum (map (fun y -> if y > x then y * y else x * y) [a0, a1, a2])",
        "(if a0 > x then a0 * a0 else x * a0) + (if a1 > x then a1 * a1 else x * a1)
         + (if a2 > x then a2 * a2 else x * a2)",
    );
}

#[test]
fn conditionals_of_tuples_and_arrays() {
    // Not fused (the result is not a real): the transposed Jacobian
    // re-evaluates the branch taken.
    agree(
        "let p = if x > a0 then (x * a1, sin x) else (a2, x * x) in p.1 * p.2",
        "(if x > a0 then x * a1 else a2) * (if x > a0 then sin x else x * x)",
    );
    agree(
        "let v = if x > a0 then [a1, a2 * x] else [x * a1, a2 * a2] in v[0] * v[1] + sum v",
        "let u = if x > a0 then a1 else x * a1 in let w = if x > a0 then a2 * x else a2 * a2 in
         u * w + u + w",
    );
}
