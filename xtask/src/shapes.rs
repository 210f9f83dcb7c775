//! `cargo xtask bench shapes`: the front end on the input shapes of issue
//! 19 that used to cost more than linear time or memory, at doubling sizes:
//! a nested array literal of depth d, one flat array literal of n reals, a
//! chain of n definitions each calling the previous one, and n independent
//! definitions. For each size it reports the CPU seconds of `check`
//! (`adrev::Program::from_text`: parse, elaborate, type, calls kept; what
//! `xtask check` does) and of differentiating the entry (`grad --via unf`
//! up to the optimized gradient program, the entry's calls inlined first),
//! the peak resident memory of the process that
//! measured both (one process per measurement), and the ratio of each to the previous size (linear: about 2). Nothing is
//! asserted (docs/scale.md).

use crate::diag::CliError;
use adrev::{Kind, Program, Request};

/// One input shape: its name, what its size counts, and its generator.
struct Shape {
    name: &'static str,
    unit: &'static str,
    text: fn(usize) -> String,
    /// Whether the gradient is measured too (not where it is known to be
    /// quadratic at these sizes: docs/scale.md).
    grad: bool,
}

const SHAPES: [Shape; 5] = [
    Shape {
        name: "nested array literal",
        unit: "depth",
        text: nested_literal,
        grad: true,
    },
    Shape {
        name: "nested literal of a constant",
        unit: "depth",
        text: nested_constant,
        grad: false,
    },
    Shape {
        name: "flat array literal",
        unit: "reals",
        text: flat_literal,
        grad: true,
    },
    Shape {
        name: "chain of definitions",
        unit: "defs",
        text: def_chain,
        grad: true,
    },
    Shape {
        name: "independent definitions",
        unit: "defs",
        text: independent_defs,
        grad: true,
    },
];

/// `let a = [[...[x]...]] in x`, `depth` brackets deep.
pub fn nested_literal(depth: usize) -> String {
    format!(
        "def f (x : R) : R =\n  let a = {}x{} in\n  x\n",
        "[".repeat(depth),
        "]".repeat(depth)
    )
}

/// `let a = [[...[2.5]...]] in x`, `depth` brackets deep: a compact literal.
pub fn nested_constant(depth: usize) -> String {
    format!(
        "def f (x : R) : R =\n  let a = {}2.5{} in\n  x\n",
        "[".repeat(depth),
        "]".repeat(depth)
    )
}

/// One array literal of `n` reals, read once.
pub fn flat_literal(n: usize) -> String {
    let mut text = String::from("def f (x : R) : R =\n  let a = [");
    for i in 0..n {
        if i > 0 {
            text.push_str(", ");
        }
        text.push_str(&format!("{}.5", i % 1000));
    }
    text.push_str("] in\n  x * a[0]\n");
    text
}

/// `d0 x = sin x`, `d<i> x = d<i-1> x * 1.0001`: the entry calls through
/// the whole chain.
pub fn def_chain(n: usize) -> String {
    let mut text = String::from("def d0 (x : R) : R =\n  sin x\n");
    for i in 1..n {
        text.push_str(&format!(
            "\ndef d{i} (x : R) : R =\n  d{} x * 1.0001\n",
            i - 1
        ));
    }
    text
}

/// `n` definitions that call nothing.
pub fn independent_defs(n: usize) -> String {
    let mut text = String::new();
    for i in 0..n {
        text.push_str(&format!("def d{i} (x : R) : R =\n  sin x * {i}.5\n\n"));
    }
    text
}

/// The sizes of each shape, doubling: what a release build does in
/// seconds. `quick` takes the first two.
fn sizes(shape: &str, quick: bool) -> Vec<usize> {
    let base: &[usize] = match shape {
        "nested array literal" => &[2000, 4000, 8000, 16_000, 32_000],
        "nested literal of a constant" => &[5_000, 10_000, 20_000, 40_000],
        "flat array literal" => &[125_000, 250_000, 500_000, 1_000_000],
        "chain of definitions" => &[1250, 2500, 5000, 10_000],
        _ => &[12_500, 25_000, 50_000, 100_000],
    };
    base.iter()
        .copied()
        .take(if quick { 2 } else { base.len() })
        .collect()
}

/// The peak resident set of this process in KB (`VmHWM`); `None` where
/// /proc does not say.
pub(crate) fn peak_kb() -> Option<u64> {
    let status = std::fs::read_to_string("/proc/self/status").ok()?;
    status
        .lines()
        .find_map(|l| l.strip_prefix("VmHWM:"))?
        .trim()
        .trim_end_matches("kB")
        .trim()
        .parse()
        .ok()
}

struct Measured {
    check: f64,
    grad: Option<f64>,
    /// The peak after `check`, and after both.
    check_mb: Option<f64>,
    peak_mb: Option<f64>,
}

/// The environment variable that makes `bench shapes` measure one shape
/// at one size (`INDEX:SIZE`) and print `check grad peak_kb`: each
/// measurement runs in a process of its own, so that its peak memory is
/// its own (an allocator keeps what it freed).
const ONE: &str = "ADREV_BENCH_SHAPE";

/// Measures one shape at one size in this process.
fn measure_here(shape: &Shape, n: usize) -> Result<(f64, Option<u64>, Option<f64>), CliError> {
    let name = format!("{}-{n}.ad", shape.unit);
    let text = (shape.text)(n);
    let (p, check) = crate::bench::timed(|| Program::from_text(&name, text));
    let failed =
        |e: adrev::Error| CliError::Internal(format!("`{}` at {n}: {}\n", shape.name, e.message()));
    let p = p.map_err(failed)?;
    let check_kb = peak_kb();
    if !shape.grad {
        return Ok((check, check_kb, None));
    }
    let (g, grad) = crate::bench::timed(|| p.compile(&Request::new(Kind::ValueAndGrad)).map(drop));
    g.map_err(failed)?;
    Ok((check, check_kb, Some(grad)))
}

/// Measures one shape at one size in a child process.
fn measure(index: usize, n: usize) -> Result<Measured, CliError> {
    let exe = std::env::current_exe()
        .map_err(|e| CliError::Internal(format!("cannot find this program: {e}\n")))?;
    let out = std::process::Command::new(exe)
        .args(["bench", "shapes"])
        .env(ONE, format!("{index}:{n}"))
        .output()
        .map_err(|e| CliError::Internal(format!("cannot run a measurement: {e}\n")))?;
    let text = String::from_utf8_lossy(&out.stdout);
    let fields: Vec<f64> = text
        .split_whitespace()
        .filter_map(|f| f.parse().ok())
        .collect();
    let mb = |kb: f64| (kb > 0.0).then_some(kb / 1024.0);
    match (out.status.success(), fields.as_slice()) {
        (true, &[check, grad, check_kb, peak]) => Ok(Measured {
            check,
            grad: (grad >= 0.0).then_some(grad),
            check_mb: mb(check_kb),
            peak_mb: mb(peak),
        }),
        _ => Err(CliError::Internal(format!(
            "the measurement of `{}` at {n} failed:\n{text}{}",
            SHAPES[index].name,
            String::from_utf8_lossy(&out.stderr)
        ))),
    }
}

/// The child's side of [`measure`], when [`ONE`] is set.
fn measure_one(spec: &str) -> Result<(), CliError> {
    let bad = || CliError::Internal(format!("{ONE}={spec}: expected INDEX:SIZE\n"));
    let (i, n) = spec.split_once(':').ok_or_else(bad)?;
    let shape = i
        .parse::<usize>()
        .ok()
        .and_then(|i| SHAPES.get(i))
        .ok_or_else(bad)?;
    let n = n.parse().map_err(|_| bad())?;
    let (check, check_kb, grad) = measure_here(shape, n)?;
    println!(
        "{check} {} {} {}",
        grad.unwrap_or(-1.0),
        check_kb.unwrap_or(0),
        peak_kb().unwrap_or(0)
    );
    Ok(())
}

fn ratio(later: f64, earlier: f64) -> String {
    crate::bench::time_ratio(later, earlier)
}

/// `cargo xtask bench shapes`: every shape, or those whose name contains
/// one of `only` (`--kernels chain,independent`).
pub fn shapes(quick: bool, only: &[String]) -> Result<(), CliError> {
    if let Ok(spec) = std::env::var(ONE) {
        return measure_one(&spec);
    }
    println!(
        "CPU seconds of `check` (text → typed Source) and of the optimized gradient \
         (`grad --via unf`), and the peak resident memory of the process after `check` and \
         after both (one process per row; build with `--release`). Ratios are to the \
         previous size; `-` where the gradient is not measured.\n"
    );
    println!(
        "| shape | size | check s | grad s | check MB | peak MB | check × | grad × | check MB × | peak × |"
    );
    println!("|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|");
    let chosen = |name: &str| only.is_empty() || only.iter().any(|o| name.contains(o.as_str()));
    for (index, shape) in SHAPES.iter().enumerate().filter(|(_, s)| chosen(s.name)) {
        let mut prev: Option<Measured> = None;
        for n in sizes(shape.name, quick) {
            let now = measure(index, n)?;
            let show =
                |x: Option<f64>, digits: usize| x.map_or("-".into(), |p| format!("{p:.digits$}"));
            let times = |a: Option<f64>, b: Option<f64>| match (a, b) {
                (Some(a), Some(b)) => format!("{:.2}", a / b),
                _ => "-".into(),
            };
            let (rc, rg, rm, rp) = match &prev {
                Some(p) => (
                    ratio(now.check, p.check),
                    match (now.grad, p.grad) {
                        (Some(a), Some(b)) => ratio(a, b),
                        _ => "-".into(),
                    },
                    times(now.check_mb, p.check_mb),
                    times(now.peak_mb, p.peak_mb),
                ),
                None => Default::default(),
            };
            println!(
                "| {} | {n} {} | {:.2} | {} | {} | {} | {rc} | {rg} | {rm} | {rp} |",
                shape.name,
                shape.unit,
                now.check,
                show(now.grad, 2),
                show(now.check_mb, 0),
                show(now.peak_mb, 0),
            );
            prev = Some(now);
        }
    }
    Ok(())
}
