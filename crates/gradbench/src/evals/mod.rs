//! Every GradBench eval this tool answers: its module name, the program
//! of `gradbench/` that computes it, and per function which entry is
//! compiled, what is asked of the compiler, and how input and output are
//! converted. docs/gradbench.md lists the sources of every convention.

use semantics::Value;
use serde_json::Value as Json;

use crate::convert::{Input, Result};
use crate::engine::{Ask, Outcome};

mod ba;
mod det;
mod gmm;
mod hello;
mod ht;
mod kmeans;
mod lstm;
mod nested;
mod scalar;

/// One eval: a GradBench module.
pub struct Eval {
    /// The module name the eval defines.
    pub module: &'static str,
    /// The program's file name (for messages) and text.
    pub file: &'static str,
    /// The program text.
    pub program: &'static str,
    /// The functions the eval may evaluate.
    pub functions: Vec<Function>,
}

/// The arguments of one call, by parameter name, and which of the
/// function's variants takes them.
pub struct Call {
    /// Index into [`Function::variants`].
    pub variant: usize,
    /// The arguments by parameter name.
    pub args: Vec<(String, Value)>,
}

/// One function of an eval.
pub struct Function {
    /// Its name in `evaluate` messages.
    pub name: &'static str,
    /// What computes it: `Ok` the variants (an entry and what the compiler
    /// is asked), or `Err` why this tool cannot (answered `success: false`).
    pub variants: std::result::Result<Vec<(&'static str, Ask)>, &'static str>,
    /// The input as arguments.
    pub input: fn(&Input<'_>) -> Result<Call>,
    /// The output from what the call computed (the input is at hand for the
    /// sizes some formats need).
    pub output: fn(&Input<'_>, &Outcome) -> Result<Json>,
}

impl Eval {
    /// The function named `name`.
    pub fn function(&self, name: &str) -> Option<&Function> {
        self.functions.iter().find(|f| f.name == name)
    }

    /// The function names, for messages.
    pub fn function_names(&self) -> String {
        let names: Vec<_> = self
            .functions
            .iter()
            .map(|f| format!("`{}`", f.name))
            .collect();
        names.join(", ")
    }
}

/// The program of `gradbench/<name>.ad`, compiled into the tool.
macro_rules! program {
    ($name:literal) => {
        (
            concat!("gradbench/", $name, ".ad"),
            include_str!(concat!("../../../../gradbench/", $name, ".ad")),
        )
    };
}
pub(crate) use program;

/// Every module this tool knows, in GradBench's order.
pub const MODULES: &[&str] = &[
    "hello", "lse", "llsq", "ode", "det", "gmm", "kmeans", "lstm", "ba", "ht", "particle", "saddle",
];

/// The eval of module `name`.
pub fn eval(name: &str) -> Option<Eval> {
    Some(match name {
        "hello" => hello::eval(),
        "lse" => scalar::lse(),
        "llsq" => scalar::llsq(),
        "ode" => scalar::ode(),
        "det" => det::eval(),
        "gmm" => gmm::eval(),
        "kmeans" => kmeans::eval(),
        "lstm" => lstm::eval(),
        "ba" => ba::eval(),
        "ht" => ht::eval(),
        "particle" => nested::particle(),
        "saddle" => nested::saddle(),
        _ => return None,
    })
}

/// A call of the only variant.
pub(crate) fn call(args: Vec<(&str, Value)>) -> Result<Call> {
    Ok(Call {
        variant: 0,
        args: args.into_iter().map(|(n, v)| (n.to_string(), v)).collect(),
    })
}

/// A function answered with its entry's value, as JSON.
pub(crate) fn value(
    name: &'static str,
    entry: &'static str,
    input: fn(&Input<'_>) -> Result<Call>,
) -> Function {
    Function {
        name,
        variants: Ok(vec![(entry, Ask::Value)]),
        input,
        output: |_, out| crate::convert::to_json(&out.value),
    }
}

/// A function answered with the gradient of its entry with respect to
/// its one parameter `wrt` (by reverse mode), as JSON.
pub(crate) fn gradient_of(
    name: &'static str,
    entry: &'static str,
    wrt: &'static [&'static str; 1],
    input: fn(&Input<'_>) -> Result<Call>,
) -> Function {
    Function {
        name,
        variants: Ok(vec![(entry, Ask::Grad(wrt))]),
        input,
        output: |_, out| match out.gradients.as_slice() {
            [(_, g)] => crate::convert::to_json(g),
            _ => Err("the gradient program gave no single gradient".into()),
        },
    }
}

/// The gradient of `name` in what a call computed.
pub(crate) fn gradient<'o>(out: &'o Outcome, name: &str) -> Result<&'o Value> {
    out.gradient(name)
        .ok_or_else(|| format!("the gradient program gave no gradient for `{name}`"))
}
