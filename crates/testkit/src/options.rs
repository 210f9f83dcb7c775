//! A fixture's options file, `fixtures/<name>/options.ron`: what is
//! particular to the case. Absent, every check applies: every route on
//! every backend, finite differences, `check-grad`, the routes printing the
//! same digits. Each field says why in a comment of the file (RON has
//! comments), e.g.
//!
//! ```ron
//! (
//!     // `build` and indexing are outside the direct macro's language.
//!     refuses: [(route: Direct, because: "`build`")],
//! )
//! ```

use serde::Deserialize;
use std::path::Path;

/// A gradient route (`--via`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Deserialize)]
pub enum Route {
    /// UNF → D_ρ → UNF^-1, the default.
    Unf,
    /// The direct macro of Fig. 5.
    Direct,
    /// Forward mode, one pass per input direction.
    Forward,
}

impl Route {
    /// Every route.
    pub const ALL: [Route; 3] = [Route::Unf, Route::Direct, Route::Forward];

    /// The name of the route on the command line (`--via`) and in test names.
    pub fn name(self) -> &'static str {
        match self {
            Route::Unf => "unf",
            Route::Direct => "direct",
            Route::Forward => "forward",
        }
    }

    /// The library's route.
    pub fn adrev(self) -> adrev::Route {
        match self {
            Route::Unf => adrev::Route::Unf,
            Route::Direct => adrev::Route::Direct,
            Route::Forward => adrev::Route::Forward,
        }
    }
}

/// Where a program runs.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Deserialize)]
pub enum Backend {
    /// The reference evaluator.
    Eval,
    /// Generated C (built at -O0 in the tests: the same bits as -O3).
    C,
}

impl Backend {
    /// Both backends.
    pub const ALL: [Backend; 2] = [Backend::Eval, Backend::C];

    /// The name of the backend in test names.
    pub fn name(self) -> &'static str {
        match self {
            Backend::Eval => "eval",
            Backend::C => "c",
        }
    }
}

/// A route that must refuse the program with a user error (exit status 1)
/// whose message contains `because`.
#[derive(Debug, Clone, PartialEq, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Refusal {
    /// The route.
    pub route: Route,
    /// A piece of the message: the construct the route does not take.
    pub because: String,
}

/// The options of one fixture; every field may be left out.
#[derive(Debug, Clone, PartialEq, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct Options {
    /// The routes whose gradients are checked (default: all three). A
    /// route in `refuses` is checked to refuse instead.
    pub routes: Vec<Route>,
    /// The backends every route runs on (default: both).
    pub backends: Vec<Backend>,
    /// The routes that refuse the program, and why.
    pub refuses: Vec<Refusal>,
    /// Relative tolerance between two routes' gradients, of the largest
    /// component (default 1e-8: the same derivatives, sums in other orders).
    pub tolerance: f64,
    /// Whether reverse mode is held against central finite differences at
    /// random points near the `-- at` inputs (default true; off where a
    /// fixed step cannot resolve the derivative, as in the fuzzer's finds).
    pub finite_differences: bool,
    /// Whether `check-grad` (every path and finite differences at the
    /// `-- at` point and nearby) runs (default true; off at a kink, where
    /// central differences average the two sides).
    pub check_grad: bool,
    /// Whether every route prints the same digits as the UNF route (default
    /// true; off where a route sums in another order, one ulp apart).
    pub same_digits: bool,
    /// Whether the entry is first order as written (default true).
    pub first_order: bool,
}

impl Default for Options {
    fn default() -> Options {
        Options {
            routes: Route::ALL.to_vec(),
            backends: Backend::ALL.to_vec(),
            refuses: Vec::new(),
            tolerance: 1e-8,
            finite_differences: true,
            check_grad: true,
            same_digits: true,
            first_order: true,
        }
    }
}

impl Options {
    /// The name of the options file in a fixture's folder.
    pub const FILE: &'static str = "options.ron";

    /// The options of the fixture in `dir`: its `options.ron`, or the
    /// defaults without one.
    pub fn of(dir: &Path) -> Result<Options, String> {
        let path = dir.join(Options::FILE);
        let Ok(text) = std::fs::read_to_string(&path) else {
            return Ok(Options::default());
        };
        let options: Options =
            ron::from_str(&text).map_err(|e| format!("{}: {e}", path.display()))?;
        for r in &options.refuses {
            if r.because.is_empty() {
                return Err(format!(
                    "{}: the refusal of {:?} says nothing of why",
                    path.display(),
                    r.route
                ));
            }
        }
        Ok(options)
    }

    /// Why `route` refuses the program, if it does.
    pub fn refusal(&self, route: Route) -> Option<&str> {
        self.refuses
            .iter()
            .find(|r| r.route == route)
            .map(|r| r.because.as_str())
    }

    /// Whether the gradients of `route` are checked (it is listed and does
    /// not refuse).
    pub fn runs(&self, route: Route) -> bool {
        self.routes.contains(&route) && self.refusal(route).is_none()
    }
}
