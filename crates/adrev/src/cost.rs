//! The cost of a program and of its gradient program (Fig. 11, with
//! Theorem 5.4's bound), for the gradient a request builds.

use crate::diag::{self, Error, Result};
use crate::inputs::Inputs;
use crate::program::Program;
use crate::request::{Backend, Kind, Request};

/// `semantics::cost::report` of the entry and of the gradient program
/// `req` builds (its kind is taken to be a gradient; it runs on the
/// evaluator), at `inputs`.
pub fn report(program: &Program, req: &Request, inputs: &Inputs) -> Result<String> {
    let req = Request {
        kind: Kind::ValueAndGrad,
        backend: Backend::Eval,
        ..req.clone()
    };
    let m = program.source(&req)?;
    let compiled = program.compile(&req)?;
    let g = compiled
        .module()
        .ok_or_else(|| Error::internal("a gradient request without its program"))?;
    let def = compiled.entry();
    let gname = format!("{}_grad", def.name);
    let gdef = g
        .def(&gname)
        .ok_or_else(|| Error::internal(format!("the gradient program has no `{gname}`")))?;
    let args: Vec<semantics::Value> = inputs.resolve(def)?.into_iter().map(|(_, v)| v).collect();
    let report = semantics::cost::report(&m, def, g, gdef, &args)
        .map_err(|e| diag::at(&m.file, e.span(), &e.to_string()))?;
    Ok(report.to_string())
}
