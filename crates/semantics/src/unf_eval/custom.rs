//! `custom` (a function with derivative rules, `syntax::rules`) and its
//! transposed Jacobian, evaluated: the body at the point, and the vjp rule
//! at the point and the cotangent, both by the Source evaluator on the
//! Source module the UNF module embeds.

use syntax::ExprId;
use syntax::rules::{Rule, Rules};

use crate::error::Error;
use crate::eval::apply_closed;
use crate::value::Value;

/// The body (`rule` = None) or the vjp rule of the `with_rules` node
/// `node` of `src`, applied to the point `p` (and the cotangent `z`).
pub(super) fn run(
    src: &syntax::Module,
    entry: &syntax::Name,
    node: ExprId,
    p: &Value,
    z: Option<Value>,
) -> Result<Value, Error> {
    let internal = |message: &str| Error::Internal {
        span: src.spans.get(node.index()).copied().unwrap_or_default(),
        message: message.into(),
    };
    let def = src
        .def(entry.as_str())
        .ok_or_else(|| internal("the UNF entry is not a Source definition"))?;
    let r = Rules::of(src, node)
        .ok_or_else(|| internal("`custom` of a node that is not with_rules"))?;
    let k = r.params(src).len();
    let mut args: Vec<Value> = match p {
        _ if k == 1 => vec![p.clone()],
        Value::Tuple(items) if items.len() == k => items.to_vec(),
        _ => {
            return Err(internal(
                "the point of `custom` is not a tuple of its parameters",
            ));
        }
    };
    let f = match z {
        None => r.body,
        Some(z) => {
            args.push(z);
            r.rule(src, node, Rule::Vjp).map_err(|e| Error::Internal {
                span: e.span(),
                message: e.to_string(),
            })?
        }
    };
    apply_closed(src, def, f, &args)
}
