//! Forward-mode gradients agree with central finite differences on
//! generated programs.
//!
//! The generator writes random well-typed programs `def f (x : R) (y : R)
//! (A : [n]R) : R` over the scalar operations (smooth and not), `if`,
//! `let`, tuples, lambdas applied directly, bound and passed to other
//! lambdas, every array builtin (`map`, `map2`, `reduce`, `foldl`, `scanl`,
//! `scanr`, `shift1L`, `shift1R`, indexing, `build`, `ifold`, `length`) and
//! the derivative constructs `diff` and `grad` nested inside. For each, the
//! gradient from `grad_program` (both seeding modes) is compared with
//! central differences of the original program, component by component;
//! a component where the forward and the backward difference quotients
//! disagree (a kink of `abs`, `max`, `if` within the step, or a region of
//! violent curvature) is skipped, since no difference quotient says
//! anything there (Remark 182.3). `jvp` along a random direction must give
//! the inner product of that direction with the gradient.

use crate::common;

use common::{compile, verified};
use forward::{Config, Mode};
use proptest::prelude::*;
use semantics::Value;
use syntax::Module;

use std::sync::atomic::{AtomicUsize, Ordering};

/// Components compared, skipped, and compared with a non-zero derivative.
static COMPARED: AtomicUsize = AtomicUsize::new(0);
static SKIPPED: AtomicUsize = AtomicUsize::new(0);
static NONZERO: AtomicUsize = AtomicUsize::new(0);

/// A small deterministic generator of program text (drawing from the
/// tests' one RNG, `testkit::Rng`).
struct Gen {
    rng: testkit::Rng,
    fresh: u32,
}

impl Gen {
    fn new(seed: u64) -> Gen {
        Gen {
            rng: testkit::Rng::for_case(seed, 0),
            fresh: 0,
        }
    }

    fn pick(&mut self, n: usize) -> usize {
        self.rng.below(n)
    }

    fn name(&mut self, base: &str) -> String {
        self.fresh += 1;
        format!("{base}{}", self.fresh)
    }

    fn constant(&mut self) -> String {
        ["0.5", "1.5", "2", "0.25", "3", "0.75"][self.pick(6)].to_string()
    }

    /// A real-valued expression; `reals` are the real atoms in scope,
    /// `arrays` the arrays of length n in scope.
    fn real(&mut self, d: u32, reals: &[String], arrays: &[String]) -> String {
        if d == 0 || self.pick(6) == 0 {
            return if self.pick(4) == 0 || reals.is_empty() {
                self.constant()
            } else {
                reals[self.pick(reals.len())].clone()
            };
        }
        let d = d - 1;
        match self.pick(28) {
            0 | 1 => {
                let op = ["+", "-", "*"][self.pick(3)];
                format!(
                    "({} {op} {})",
                    self.real(d, reals, arrays),
                    self.real(d, reals, arrays)
                )
            }
            2 => {
                let b = self.real(d, reals, arrays);
                format!("({} / (1.5 + {b} * {b}))", self.real(d, reals, arrays))
            }
            3 => {
                let f = ["sin", "cos", "tanh"][self.pick(3)];
                format!("({f} {})", self.real(d, reals, arrays))
            }
            4 => {
                let e = self.real(d, reals, arrays);
                match self.pick(3) {
                    0 => format!("(exp (tanh {e}))"),
                    1 => format!("(sqrt (1 + {e} * {e}))"),
                    _ => format!("(log (2 + {e} * {e}))"),
                }
            }
            5 => {
                let f = ["abs", "-"][self.pick(2)];
                format!("({f} {})", self.real(d, reals, arrays))
            }
            6 => {
                let f = ["max", "min"][self.pick(2)];
                format!(
                    "({f} {} {})",
                    self.real(d, reals, arrays),
                    self.real(d, reals, arrays)
                )
            }
            7 => {
                let b = self.real(d, reals, arrays);
                match self.pick(3) {
                    0 => format!("(pow {b} 2)"),
                    1 => format!("(pow {b} 3)"),
                    _ => format!(
                        "(pow (1.5 + {b} * {b}) (tanh {}))",
                        self.real(d, reals, arrays)
                    ),
                }
            }
            8 => {
                let cmp = ["<", ">", "<=", ">="][self.pick(4)];
                format!(
                    "(if {} {cmp} {} then {} else {})",
                    self.real(d, reals, arrays),
                    self.real(d, reals, arrays),
                    self.real(d, reals, arrays),
                    self.real(d, reals, arrays)
                )
            }
            9 | 10 => {
                let z = self.name("z");
                let v = self.real(d, reals, arrays);
                let mut inner = reals.to_vec();
                inner.push(z.clone());
                format!("(let {z} = {v} in {})", self.real(d, &inner, arrays))
            }
            11 => {
                // A lambda applied directly.
                let u = self.name("u");
                let body = self.real(d, &with(reals, &u), arrays);
                format!("((fun {u} -> {body}) {})", self.real(d, reals, arrays))
            }
            12 => {
                // A bound lambda used twice.
                let g = self.name("g");
                let u = self.name("u");
                let body = self.real(d, &with(reals, &u), arrays);
                format!(
                    "(let {g} = fun {u} -> {body} in {g} ({g} {}))",
                    self.real(d, reals, arrays)
                )
            }
            13 => {
                // A lambda passed to a lambda.
                let h = self.name("h");
                let u = self.name("u");
                let body = self.real(d, &with(reals, &u), arrays);
                let arg = self.real(d, reals, arrays);
                format!("((fun ({h} : R -> R) -> {h} ({h} {arg}) + {h} 0.5) (fun {u} -> {body}))")
            }
            14 => {
                let t = self.name("t");
                let a = self.real(d, reals, arrays);
                let b = self.real(d, reals, arrays);
                let inner = with(&with(reals, &format!("{t}.1")), &format!("{t}.2"));
                format!("(let {t} = ({a}, {b}) in {})", self.real(d, &inner, arrays))
            }
            15 | 16 => format!("(reduce (+) 0 {})", self.array(d, reals, arrays)),
            17 => {
                let acc = self.name("acc");
                let v = self.name("v");
                let body = self.real(d, &with(&with(reals, &acc), &v), arrays);
                format!(
                    "(foldl (fun ({acc}, {v}) -> {body}) {} {})",
                    self.real(d, reals, arrays),
                    self.array(d, reals, arrays)
                )
            }
            18 => format!("{}[{}]", paren(&self.array(d, reals, arrays)), self.pick(3)),
            19 => {
                let s = self.name("s");
                let v = self.name("v");
                let body = self.real(d, &with(&with(reals, &s), &v), arrays);
                let z = self.real(d, reals, arrays);
                let arr = self.array(d, reals, arrays);
                let k = self.pick(4);
                if self.pick(2) == 0 {
                    format!("(scanl (fun ({s}, {v}) -> {body}) {z} {arr})[{k}]")
                } else {
                    format!("(scanr (fun ({v}, {s}) -> {body}) {z} {arr})[{k}]")
                }
            }
            20 => {
                let s = self.name("s");
                let i = self.name("i");
                let arr = arrays[self.pick(arrays.len())].clone();
                let body = self.real(d, &with(&with(reals, &s), &format!("{arr}[{i}]")), arrays);
                format!(
                    "(ifold (fun ({s}, {i}) -> {body}) {} (length {arr}))",
                    self.real(d, reals, arrays)
                )
            }
            21 => {
                let b = self.name("B");
                let v = self.array(d, reals, arrays);
                let inner = with(arrays, &b);
                format!("(let {b} = {v} in {})", self.real(d, reals, &inner))
            }
            22 => {
                // A derivative inside the program.
                let u = self.name("u");
                let body = self.real(d, &with(reals, &u), arrays);
                format!("(diff (fun {u} -> {body}) {})", self.real(d, reals, arrays))
            }
            23 => {
                let q = self.name("q");
                let inner = with(&with(reals, &format!("{q}.1")), &format!("{q}.2"));
                let body = self.real(d, &inner, arrays);
                let k = 1 + self.pick(2);
                format!(
                    "(grad (fun ({q} : (R, R)) -> {body}) ({}, {})).{k}",
                    self.real(d, reals, arrays),
                    self.real(d, reals, arrays)
                )
            }
            24 => {
                // The gradient of a reduction with respect to an array.
                let w = self.name("w");
                let v = self.name("v");
                let body = self.real(d, &with(reals, &v), arrays);
                format!(
                    "(reduce (+) 0 (grad (fun ({w} : [3]R) -> reduce (+) 0 (map (fun {v} -> {body}) {w})) {}))",
                    self.array(d, reals, arrays)
                )
            }
            25 => {
                // A construct on a lambda parameter: specialised away.
                let k = self.name("k");
                let h = self.name("h");
                let u = self.name("u");
                let at = self.real(d, reals, arrays);
                let body = self.real(d, &with(reals, &u), arrays);
                format!(
                    "(let {k} = fun ({h} : R -> R) -> diff {h} ({at}) in {k} (fun {u} -> {body}))"
                )
            }
            _ => {
                let a = self.real(d, reals, arrays);
                let b = self.real(d, reals, arrays);
                format!("({a} * {b})")
            }
        }
    }

    /// An array of length n.
    fn array(&mut self, d: u32, reals: &[String], arrays: &[String]) -> String {
        if d == 0 || self.pick(4) == 0 {
            return arrays[self.pick(arrays.len())].clone();
        }
        let d = d - 1;
        match self.pick(6) {
            0 | 1 => {
                let v = self.name("v");
                let body = self.real(d, &with(reals, &v), arrays);
                format!("(map (fun {v} -> {body}) {})", self.array(d, reals, arrays))
            }
            2 => {
                let a = self.name("a");
                let b = self.name("b");
                let body = self.real(d, &with(&with(reals, &a), &b), arrays);
                format!(
                    "(map2 (fun ({a}, {b}) -> {body}) {} {})",
                    self.array(d, reals, arrays),
                    self.array(d, reals, arrays)
                )
            }
            3 => {
                let s = self.name("s");
                let v = self.name("v");
                let body = self.real(d, &with(&with(reals, &s), &v), arrays);
                let z = self.real(d, reals, arrays);
                let arr = self.array(d, reals, arrays);
                if self.pick(2) == 0 {
                    format!("(shift1L (scanl (fun ({s}, {v}) -> {body}) {z} {arr}))")
                } else {
                    format!("(shift1R (scanr (fun ({v}, {s}) -> {body}) {z} {arr}))")
                }
            }
            4 => {
                let i = self.name("i");
                let arr = arrays[self.pick(arrays.len())].clone();
                let body = self.real(d, &with(reals, &format!("{arr}[{i}]")), arrays);
                format!("(build (length {arr}) (fun {i} -> {body}))")
            }
            _ => {
                let v = self.name("v");
                let body = self.real(d, &with(reals, &v), arrays);
                format!(
                    "(map (fun {v} -> {body}) {})",
                    arrays[self.pick(arrays.len())]
                )
            }
        }
    }
}

fn with(xs: &[String], x: &str) -> Vec<String> {
    let mut v = xs.to_vec();
    v.push(x.to_string());
    v
}

fn paren(s: &str) -> String {
    if s.starts_with('(') {
        s.to_string()
    } else {
        format!("({s})")
    }
}

fn program(seed: u64) -> String {
    let mut g = Gen::new(seed);
    let reals = ["x".to_string(), "y".to_string()];
    let arrays = ["A".to_string()];
    let b1 = g.real(4, &reals, &arrays);
    let b2 = g.real(4, &reals, &arrays);
    // The second term makes every input matter, whatever b1 and b2 use.
    format!(
        "def f (x : R) (y : R) (A : [3]R) : R =\n  {b1} + {b2} * sin (x - y + reduce (+) 0 A)\n"
    )
}

fn eval_f(m: &Module, x: f64, y: f64, a: &[f64]) -> Option<Value> {
    let inputs = vec![
        ("x".to_string(), Value::Real(x)),
        ("y".to_string(), Value::Real(y)),
        ("A".to_string(), Value::reals(a)),
    ];
    semantics::eval_entry(m, None, &inputs).ok()
}

/// The program's value at a point given as the 5 reals (x, y, A).
fn value_at(m: &Module, p: &[f64; 5]) -> Option<f64> {
    eval_f(m, p[0], p[1], &p[2..])?.as_real()
}

/// Checks one generated program; `Err` describes a disagreement.
fn check(seed: u64, point: [f64; 5], dir: [f64; 5]) -> Result<(), String> {
    let text = program(seed);
    let m = compile(&text);
    let entry = m.defs[0].clone();
    let expanded = forward::expand(&m).map_err(|e| format!("{e}\n{text}"))?;
    verified(&expanded);
    let Some(f0) = value_at(&expanded, &point) else {
        // Run-time error (none expected) or a non-real result.
        return Err(format!("the program does not evaluate\n{text}"));
    };
    if !f0.is_finite() {
        return Ok(());
    }
    let mut grads = Vec::new();
    for mode in [Mode::Passes, Mode::Vectorised] {
        let cfg = Config {
            mode,
            ..Config::default()
        };
        let g = forward::grad_program_with(&m, &entry, None, &cfg)
            .map_err(|e| format!("{mode:?}: {e}\n{text}"))?;
        verified(&g);
        let out = eval_f(&g, point[0], point[1], &point[2..])
            .ok_or_else(|| format!("{mode:?}: the gradient program fails\n{text}"))?;
        let flat = common::reals(&out);
        if flat.len() != 6 {
            return Err(format!("{mode:?}: gradient of shape {out}"));
        }
        if !common::close(flat[0], f0) {
            return Err(format!("{mode:?}: value {} vs {f0}\n{text}", flat[0]));
        }
        grads.push(flat[1..].to_vec());
    }
    for (k, (&a, &b)) in grads[0].iter().zip(&grads[1]).enumerate() {
        let both_nan = a.is_nan() && b.is_nan();
        if !both_nan && !semantics::reals_close(a, b, 1e-9, 1e-12) {
            return Err(format!(
                "component {k}: passes {a} vs vectorised {b}\n{text}"
            ));
        }
    }
    let ad = &grads[0];
    for k in 0..5 {
        let h = 1e-6 * point[k].abs().max(1.0);
        let mut plus = point;
        plus[k] += h;
        let mut minus = point;
        minus[k] -= h;
        let (Some(fp), Some(fm)) = (value_at(&expanded, &plus), value_at(&expanded, &minus)) else {
            return Err(format!("the program fails near the point\n{text}"));
        };
        let central = (fp - fm) / (2.0 * h);
        let fwd = (fp - f0) / h;
        let bwd = (f0 - fm) / h;
        let scale = 1.0f64.max(central.abs()).max(ad[k].abs());
        // Rounding in `fp - fm` alone moves the quotient by about
        // eps * |f| / h: where the program's value dwarfs its slope (a
        // 1e21 term next to an O(1) one) no step resolves the slope.
        let rounding = 8.0 * f64::EPSILON * f0.abs().max(fp.abs()).max(fm.abs()) / h;
        if !central.is_finite()
            || !ad[k].is_finite()
            || (fwd - bwd).abs() > 1e-3 * scale
            || rounding > 1e-5 * scale
        {
            SKIPPED.fetch_add(1, Ordering::Relaxed);
            continue; // a kink or violent curvature within the step
        }
        COMPARED.fetch_add(1, Ordering::Relaxed);
        if ad[k] != 0.0 {
            NONZERO.fetch_add(1, Ordering::Relaxed);
        }
        if (ad[k] - central).abs() > 1e-4 * scale {
            return Err(format!(
                "d/d{} = {} by forward mode, {central} by central differences\nat {point:?}\n{text}",
                ["x", "y", "A[0]", "A[1]", "A[2]"][k],
                ad[k]
            ));
        }
    }
    // jvp along `dir` = <dir, grad>.
    let j = forward::jvp(&m, &entry).map_err(|e| format!("jvp: {e}\n{text}"))?;
    verified(&j);
    let names: Vec<String> = j.defs[0]
        .params
        .iter()
        .map(|p| p.name.to_string())
        .collect();
    let inputs = vec![
        (names[0].clone(), Value::Real(point[0])),
        (names[1].clone(), Value::Real(point[1])),
        (names[2].clone(), Value::reals(&point[2..])),
        (names[3].clone(), Value::Real(dir[0])),
        (names[4].clone(), Value::Real(dir[1])),
        (names[5].clone(), Value::reals(&dir[2..])),
    ];
    let out =
        semantics::eval_entry(&j, None, &inputs).map_err(|e| format!("jvp eval: {e}\n{text}"))?;
    let pair = common::reals(&out);
    let expected: f64 = ad.iter().zip(dir).map(|(g, d)| g * d).sum();
    let scale = 1.0f64.max(expected.abs());
    if expected.is_finite() && (pair[1] - expected).abs() > 1e-9 * scale * 10.0 {
        return Err(format!(
            "jvp tangent {} vs <dir, grad> = {expected}\n{text}",
            pair[1]
        ));
    }
    Ok(())
}

fn coordinate() -> impl Strategy<Value = f64> {
    -1.5f64..1.5
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 256, ..ProptestConfig::default() })]

    #[test]
    fn forward_gradients_agree_with_central_differences(
        seed in any::<u64>(),
        point in [coordinate(), coordinate(), coordinate(), coordinate(), coordinate()],
        dir in [coordinate(), coordinate(), coordinate(), coordinate(), coordinate()],
    ) {
        if let Err(e) = check(seed, point, dir) {
            prop_assert!(false, "{}", e);
        }
        if std::env::var("FWD_STATS").is_ok() {
            eprintln!("compared {} (non-zero {}), skipped {}", COMPARED.load(Ordering::Relaxed), NONZERO.load(Ordering::Relaxed), SKIPPED.load(Ordering::Relaxed));
        }
    }
}

#[test]
fn the_generator_covers_the_language() {
    let mut text = String::new();
    for seed in 0..400 {
        text.push_str(&program(seed));
    }
    for construct in [
        "if ", "map ", "map2 ", "reduce ", "foldl ", "scanl ", "scanr ", "shift1L ", "shift1R ",
        "build ", "ifold ", "length ", "fun ", "let ", "diff ", "grad ", "abs ", "max ", "pow ",
        "R -> R", "[3]R) ->",
    ] {
        assert!(
            text.contains(construct),
            "the generator never writes `{construct}`"
        );
    }
    // Every generated program compiles.
    for seed in 0..100 {
        compile(&program(seed));
    }
}
