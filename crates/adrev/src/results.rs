//! Writing named outputs as data: a JSON object or an `.npz` of named
//! arrays (`data` crate), each result typed from the entry's signature so
//! that arrays of reals become dense arrays.

use crate::compiled::Compiled;
use crate::diag::{Error, Result};
use crate::inputs::data_error;
use crate::outputs::Outputs;
use data::{Data, Format, Output};
use semantics::SizeEnv;
use std::path::Path;
use syntax::Ty;

/// `ty` with every `R` replaced by `by` (the type of a Jacobian block:
/// the result's shape with a parameter-shaped value at each real).
fn replace_reals(ty: &Ty, by: &Ty) -> Ty {
    match ty {
        Ty::Real => by.clone(),
        Ty::Array(n, elem) => Ty::array(n.clone(), replace_reals(elem, by)),
        Ty::Tuple(items) => Ty::Tuple(items.iter().map(|t| replace_reals(t, by)).collect()),
        other => other.clone(),
    }
}

impl Compiled {
    /// The type of each of `out`'s named results ([`Outputs::named`]).
    fn output_types(&self, out: &Outputs) -> Result<Vec<Ty>> {
        let def = &self.entry;
        let untyped = || Error::internal(format!("`{}` is not typed", def.name));
        let ret = def.ret.clone().ok_or_else(untyped)?;
        let param = |name: &str| {
            def.params
                .iter()
                .find(|p| p.name.as_str() == name)
                .and_then(|p| p.ty.clone())
                .ok_or_else(untyped)
        };
        let mut tys = vec![ret.clone()];
        for (n, _) in &out.gradients {
            tys.push(param(n)?);
        }
        if out.tangent.is_some() {
            tys.push(ret.clone());
        }
        for (n, _) in &out.jacobian {
            tys.push(replace_reals(&ret, &param(n)?));
        }
        for ((a, b), _) in &out.hessian {
            tys.push(replace_reals(&param(a)?, &param(b)?));
        }
        Ok(tys)
    }

    /// `out`'s results as data, with their names and types.
    fn output_data(&self, out: &Outputs) -> Result<Vec<(String, Ty, Data<'static>)>> {
        let tys = self.output_types(out)?;
        let sizes = SizeEnv::new();
        Ok(out
            .named()
            .into_iter()
            .zip(tys)
            .map(|((name, v), ty)| {
                let d = Data::from_value(v, &ty, &sizes);
                (name, ty, d)
            })
            .collect())
    }

    /// Writes `out` as a JSON object of named results.
    pub fn write_json(&self, out: &Outputs, w: impl std::io::Write) -> Result<()> {
        let items = self.output_data(out)?;
        let named: Vec<(&str, &Data<'_>)> = items.iter().map(|(n, _, d)| (n.as_str(), d)).collect();
        data::write_json(w, &named)
            .map_err(|e| Error::user(format!("cannot write the results: {e}")))
    }

    /// Writes `out` to `path`: `.json` (one object) or `.npz` (one array per
    /// result, tuples as `name.1`, `name.2`, ...).
    pub fn write_outputs(&self, out: &Outputs, path: &Path) -> Result<()> {
        let format = Format::of_path(path).ok_or_else(|| {
            Error::user(format!(
                "`{}`: results are written as `.json` or `.npz`",
                path.display()
            ))
        })?;
        let items = self.output_data(out)?;
        let outputs: Vec<Output<'_, '_>> = items
            .iter()
            .map(|(name, ty, data)| Output { name, ty, data })
            .collect();
        data::write_results(path, format, &outputs).map_err(data_error)
    }
}
