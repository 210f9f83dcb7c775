//! Named, structured results: the value, each gradient by parameter name,
//! the tangent, Jacobian blocks by name and Hessian blocks by name pair.
//! Never a flat tuple the caller has to split.

use crate::request::{JacobianMode, Kind};
use semantics::Value;

/// What one call computed.
#[derive(Debug, Clone, PartialEq)]
pub struct Outputs {
    /// What was asked.
    pub kind: Kind,
    /// The entry's value (every kind computes it).
    pub value: Value,
    /// One gradient per differentiated parameter, by name, in the request's
    /// order (`Grad`, `ValueAndGrad`, `Hessian`; for `Vjp` the cotangent
    /// pulled back to each parameter).
    pub gradients: Vec<(String, Value)>,
    /// The directional derivative (`Jvp`).
    pub tangent: Option<Value>,
    /// One Jacobian block per differentiated parameter (`Jacobian`): the
    /// result's shape with every real replaced by a value shaped like the
    /// parameter.
    pub jacobian: Vec<(String, Value)>,
    /// The mode that computed the Jacobian (`Auto` resolved).
    pub jacobian_mode: Option<JacobianMode>,
    /// The Hessian blocks by parameter pair, row-major over the pairs.
    pub hessian: Vec<((String, String), Value)>,
}

impl Outputs {
    pub(crate) fn value_only(kind: Kind, value: Value) -> Outputs {
        Outputs {
            kind,
            value,
            gradients: Vec::new(),
            tangent: None,
            jacobian: Vec::new(),
            jacobian_mode: None,
            hessian: Vec::new(),
        }
    }

    /// The gradient with respect to `name`.
    pub fn gradient(&self, name: &str) -> Option<&Value> {
        self.gradients
            .iter()
            .find(|(n, _)| n == name)
            .map(|(_, v)| v)
    }

    /// The Jacobian block of parameter `name`.
    pub fn jacobian_block(&self, name: &str) -> Option<&Value> {
        self.jacobian
            .iter()
            .find(|(n, _)| n == name)
            .map(|(_, v)| v)
    }

    /// The Hessian block `∂²f / ∂a ∂b`.
    pub fn hessian_block(&self, a: &str, b: &str) -> Option<&Value> {
        self.hessian
            .iter()
            .find(|((x, y), _)| x == a && y == b)
            .map(|(_, v)| v)
    }

    /// Every result with its name, as a data file stores them: `value`,
    /// `grad.X` (`vjp.X` for a VJP), `tangent`, `jacobian.X`, `hessian.X.Y`.
    pub fn named(&self) -> Vec<(String, &Value)> {
        let mut out = vec![("value".to_string(), &self.value)];
        let g = self.gradient_label();
        out.extend(self.gradients.iter().map(|(n, v)| (format!("{g}.{n}"), v)));
        if let Some(t) = &self.tangent {
            out.push(("tangent".to_string(), t));
        }
        out.extend(
            self.jacobian
                .iter()
                .map(|(n, v)| (format!("jacobian.{n}"), v)),
        );
        out.extend(
            self.hessian
                .iter()
                .map(|((a, b), v)| (format!("hessian.{a}.{b}"), v)),
        );
        out
    }

    fn gradient_label(&self) -> &'static str {
        if self.kind == Kind::Vjp {
            "vjp"
        } else {
            "grad"
        }
    }

    /// The lines the command line prints: `value = ...`, then
    /// `grad X = ...` (`vjp X`), `tangent = ...`, `jacobian X = ...`,
    /// `hessian X Y = ...`, in the literal syntax.
    pub fn render(&self) -> String {
        let mut out = format!("value = {}\n", self.value);
        let g = self.gradient_label();
        for (n, v) in &self.gradients {
            out.push_str(&format!("{g} {n} = {v}\n"));
        }
        if let Some(t) = &self.tangent {
            out.push_str(&format!("tangent = {t}\n"));
        }
        for (n, v) in &self.jacobian {
            out.push_str(&format!("jacobian {n} = {v}\n"));
        }
        for ((a, b), v) in &self.hessian {
            out.push_str(&format!("hessian {a} {b} = {v}\n"));
        }
        out
    }
}
