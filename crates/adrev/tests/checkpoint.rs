//! √n checkpointing of loops (`Request::checkpoint`, docs/derivatives.md,
//! "Checkpointing") gives the gradient that storing every state gives, to
//! the bit: on every fixture, and on loops of every kind at lengths that
//! make the blocks uneven, on the evaluator and in C, optimized or not.

use crate::common::reals;
use adrev::{Backend, Checkpoint, Inputs, Kind, Outputs, Program, Request};
use testkit::fixture::Fixture;

/// Every fixture's program, loaded by the driver.
fn fixtures() -> Vec<(String, Program)> {
    Fixture::all()
        .into_iter()
        .map(|f| {
            let program = Program::load(f.dir.join("program.ad"))
                .unwrap_or_else(|e| panic!("{}: {}", f.name, e.message()));
            (f.name, program)
        })
        .collect()
}

/// The C build of the tests: -O0, which computes the same bits as -O3 and
/// builds several times faster.
fn c() -> Backend {
    Backend::C(codegen::Config {
        opt_level: codegen::OptLevel::O0,
        ..codegen::Config::default()
    })
}

fn grad(
    p: &Program,
    inputs: &Inputs<'_>,
    scheme: Checkpoint,
    optimize: bool,
    backend: Backend,
) -> adrev::Result<Outputs> {
    let req = Request::new(Kind::ValueAndGrad)
        .checkpoint(scheme)
        .optimize(optimize)
        .backend(backend);
    p.compile(&req)?.call(inputs)
}

/// Every real of the value and of each gradient, as bits.
fn bits(o: &Outputs) -> Vec<(String, Vec<u64>)> {
    let mut out = vec![("value".to_string(), reals(&o.value))];
    out.extend(o.gradients.iter().map(|(n, g)| (n.clone(), reals(g))));
    out.into_iter()
        .map(|(n, xs)| (n, xs.into_iter().map(f64::to_bits).collect()))
        .collect()
}

/// The checkpointed gradient of `p` at `inputs` against the one that
/// stores every state (the evaluator, optimized): the same bits, on each
/// of the given configurations.
fn same_bits(label: &str, p: &Program, inputs: &Inputs<'_>, configs: &[(bool, Backend)]) {
    let reference = grad(p, inputs, Checkpoint::Off, true, Backend::Eval)
        .unwrap_or_else(|e| panic!("{label}: {}", e.message()));
    for (optimize, backend) in configs {
        let got = grad(p, inputs, Checkpoint::Sqrt, *optimize, backend.clone())
            .unwrap_or_else(|e| panic!("{label} ({optimize}, {backend:?}): {}", e.message()));
        assert_eq!(
            bits(&got),
            bits(&reference),
            "{label} (optimized {optimize}, {backend:?}): {} vs {}",
            got.render(),
            reference.render()
        );
    }
}

#[test]
fn every_fixture_has_the_same_gradient_checkpointed() {
    for (name, p) in fixtures() {
        same_bits(&name, &p, &p.default_inputs(), &[(true, Backend::Eval)]);
    }
}

/// Loops of each kind that reverse mode checkpoints, with free variables,
/// element cotangents, tuple and array accumulators, a loop in a loop, and
/// reads of a free array by index (their transposes scattered as pairs,
/// one and two per step, one of them in a branch).
const LOOPS: [(&str, &str); 9] = [
    (
        "ifold",
        "def f (x : R) (A : [n]R) : R = ifold (fun (a, i) -> sin a * x + 0.5) x (length A)",
    ),
    (
        "foldl",
        "def f (x : R) (A : [n]R) : R = foldl (fun (acc, y) -> acc * x + sin y) x A",
    ),
    (
        "reduce",
        "def f (x : R) (A : [n]R) : R = reduce (fun (u, v) -> u * x + v * v) (sin x) A",
    ),
    (
        "tuple accumulator",
        "def f (x : R) (A : [n]R) : R =\n  let (p, q) = foldl (fun (pq, y) -> (pq.1 * y + pq.2, pq.2 * x - y)) (x, 1.0) A in p + q",
    ),
    (
        "array accumulator",
        "def f (x : R) (A : [n]R) : R =\n  sum (ifold (fun (v, i) -> map (fun u -> u * x + A[i]) v) [x, 2 * x] (length A))",
    ),
    (
        "nested",
        "def f (x : R) (A : [n]R) : R =\n  foldl (fun (acc, y) -> ifold (fun (b, j) -> b * y + x) acc 3) x A",
    ),
    (
        "tuple elements",
        "def f (x : R) (A : [n](R, R)) : R = foldl (fun (acc, uv) -> acc * uv.1 + uv.2 * x) x A",
    ),
    (
        "a read by index",
        "def f (x : R) (A : [n]R) : R = ifold (fun (a, i) -> sin a * x + A[i] * A[i]) x (length A)",
    ),
    (
        "reads in a branch",
        "def f (x : R) (A : [n]R) : R =\n  ifold (fun (a, i) -> if i > 1 then a * A[i - 1] + A[mod (i * 3) (length A)] else a + x) x (length A)",
    ),
];

fn array(n: usize, tuples: bool) -> String {
    let items: Vec<String> = (0..n)
        .map(|i| {
            let a = 0.9 - 0.37 * (i as f64 % 5.0);
            if tuples {
                format!("({a}, {})", 0.25 * i as f64)
            } else {
                a.to_string()
            }
        })
        .collect();
    format!("[{}]", items.join(", "))
}

#[test]
fn loops_of_every_kind_and_length_have_the_same_gradient_checkpointed() {
    for (label, text) in LOOPS {
        let p = Program::from_text("loop.ad", text).unwrap_or_else(|e| panic!("{}", e.message()));
        // The option takes effect: the checkpointed program is another one.
        let printed = |scheme| {
            let req = Request::new(Kind::ValueAndGrad).checkpoint(scheme);
            let compiled = p
                .compile(&req)
                .unwrap_or_else(|e| panic!("{}", e.message()));
            syntax::print::module(compiled.module().expect("a program"))
        };
        assert_ne!(
            printed(Checkpoint::Off),
            printed(Checkpoint::Sqrt),
            "{label}"
        );
        // 0 and 1 steps, a square, uneven last blocks, one step past a square.
        for n in [0, 1, 2, 3, 9, 10, 17] {
            let inputs = Inputs::from_literals([
                ("x", "0.7".to_string()),
                ("A", array(n, label == "tuple elements")),
            ]);
            let configs = [(true, Backend::Eval), (false, Backend::Eval)];
            same_bits(&format!("{label}, n = {n}"), &p, &inputs, &configs);
        }
    }
}

#[test]
fn the_c_backend_computes_the_checkpointed_gradient_to_the_bit() {
    for (label, text) in LOOPS {
        let p = Program::from_text("loop.ad", text).unwrap_or_else(|e| panic!("{}", e.message()));
        let req = Request::new(Kind::ValueAndGrad)
            .checkpoint(Checkpoint::Sqrt)
            .backend(c());
        let compiled = p
            .compile(&req)
            .unwrap_or_else(|e| panic!("{}", e.message()));
        for n in [0, 1, 10, 17] {
            let inputs = Inputs::from_literals([
                ("x", "0.7".to_string()),
                ("A", array(n, label == "tuple elements")),
            ]);
            let reference = grad(&p, &inputs, Checkpoint::Off, true, Backend::Eval)
                .unwrap_or_else(|e| panic!("{label}: {}", e.message()));
            let got = compiled
                .call(&inputs)
                .unwrap_or_else(|e| panic!("{label}, n = {n}: {}", e.message()));
            assert_eq!(bits(&got), bits(&reference), "{label}, n = {n}");
        }
    }
}
