//! The Jacobian benchmark of dF~ (issue 4): the vectorised Jacobian, where
//! the seed-independent work is done once, against n independent forward
//! passes.
//!
//! The caller passes the evaluator (`cargo xtask bench jacobian` passes
//! `semantics::eval_entry`); the functions here build the two programs,
//! time them and check that they agree.

use std::time::{Duration, Instant};

use syntax::Module;

use forward::{Config, Mode};

/// The benchmarked program: a vector-valued function of `x : [n]R` whose
/// every output depends on every input through a shared, seed-independent
/// part (`s`, a sum of transcendental functions) and an elementwise part.
pub const PROGRAM: &str = "\
def f (x : [n]R) : [n]R =
  let s = reduce (+) 0 (map (fun v -> sin v * exp (cos v)) x) in
  map (fun v -> tanh (v * s) + log (1 + v * v)) x
";

/// The two Jacobian programs of [`PROGRAM`].
#[derive(Debug, Clone)]
pub struct Programs {
    /// `f_jacobian` in `Mode::Vectorised`.
    pub vectorised: Module,
    /// `f_jacobian` in `Mode::Passes`.
    pub passes: Module,
}

/// Builds both Jacobian programs from the typed module of [`PROGRAM`]
/// (the caller compiles the text with the front end).
pub fn programs(m: &Module) -> Result<Programs, forward::Error> {
    let entry = m.defs.last().ok_or_else(|| forward::Error::NotFound {
        span: syntax::Span::GENERATED,
        message: "the benchmark module has no definition".to_string(),
    })?;
    let vectorised = forward::jacobian_program(
        m,
        entry,
        None,
        &Config {
            mode: Mode::Vectorised,
            ..Config::default()
        },
    )?;
    let passes = forward::jacobian_program(m, entry, None, &Config::default())?;
    Ok(Programs { vectorised, passes })
}

/// The input `x` of size n, in the literal syntax.
pub fn input(n: usize) -> String {
    let items: Vec<String> = (0..n)
        .map(|i| format!("{}", 0.1 + (i as f64) * 0.37 % 2.0 - 1.0))
        .collect();
    format!("[{}]", items.join(", "))
}

/// One measurement.
#[derive(Debug, Clone)]
pub struct Report {
    /// The input size.
    pub n: usize,
    /// Best wall time of the vectorised Jacobian.
    pub vectorised: Duration,
    /// Best wall time of the n-pass Jacobian.
    pub passes: Duration,
    /// The largest absolute difference between the two Jacobians' entries.
    pub max_diff: f64,
}

impl std::fmt::Display for Report {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let speedup = self.passes.as_secs_f64() / self.vectorised.as_secs_f64().max(1e-12);
        write!(
            f,
            "n = {:5}  vectorised {:>10.3?}  {} passes {:>10.3?}  speedup {:.2}x  max |diff| {:.1e}",
            self.n, self.vectorised, self.n, self.passes, speedup, self.max_diff
        )
    }
}

/// Times both programs at size n (best of `repeats`), with `eval` running
/// a module on the input text and returning the flattened reals of its
/// result (or an error message).
pub fn jacobian_vs_passes<E>(
    programs: &Programs,
    n: usize,
    repeats: usize,
    mut eval: E,
) -> Result<Report, String>
where
    E: FnMut(&Module, &str) -> Result<Vec<f64>, String>,
{
    let x = input(n);
    let mut best = |m: &Module| -> Result<(Duration, Vec<f64>), String> {
        let mut best = Duration::MAX;
        let mut out = Vec::new();
        for _ in 0..repeats.max(1) {
            let start = Instant::now();
            out = eval(m, &x)?;
            best = best.min(start.elapsed());
        }
        Ok((best, out))
    };
    let (vectorised, a) = best(&programs.vectorised)?;
    let (passes, b) = best(&programs.passes)?;
    if a.len() != b.len() {
        return Err(format!(
            "the two Jacobians have {} and {} reals",
            a.len(),
            b.len()
        ));
    }
    let max_diff = a
        .iter()
        .zip(&b)
        .map(|(p, q)| (p - q).abs())
        .fold(0.0, f64::max);
    Ok(Report {
        n,
        vectorised,
        passes,
        max_diff,
    })
}
