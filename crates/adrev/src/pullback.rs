//! Reverse mode for an entry whose result is not a real: the pullback
//! `<f>_pullback x1 ... xn ct = <f x1 ... xn, ct>` (the inner product of
//! the result with a cotangent shaped like it) is a real-valued program,
//! and its gradient with respect to the `x`s is the vector-Jacobian
//! product `ct^T J`. The definition is written in the surface language
//! after the program's own text, so every route and backend takes it as
//! it takes any program.

use crate::diag::{Error, Result};
use syntax::{Def, Module, SourceFile, Ty};

/// The program with the pullback definition of `entry` appended, and that
/// definition's name. The cotangent is its last parameter.
pub fn program(m: &Module, entry: &Def) -> Result<(Module, String)> {
    let ret = entry
        .ret
        .as_ref()
        .ok_or_else(|| Error::user(format!("the result of `{}` has no type", entry.name)))?;
    let taken = |n: &str| m.def(n).is_some() || entry.params.iter().any(|p| p.name.as_str() == n);
    let name = fresh(&format!("{}_pullback", entry.name), &taken);
    let ct = fresh("ct", &taken);
    let mut def = format!("\n\ndef {name}");
    let mut call = entry.name.to_string();
    for p in &entry.params {
        let ty =
            p.ty.as_ref()
                .ok_or_else(|| Error::user(format!("parameter `{}` has no type", p.name)))?;
        def.push_str(&format!(" ({} : {})", p.name, syntax::print::ty(ty)));
        call.push_str(&format!(" {}", p.name));
    }
    let inner = inner_product("y__", &ct, ret, 0).ok_or_else(|| {
        Error::user(format!(
            "reverse mode pulls back a cotangent of the result, but `{}` returns a function",
            entry.name
        ))
    })?;
    def.push_str(&format!(
        " ({ct} : {}) : R =\n  let y__ = {call} in\n  {inner}\n",
        syntax::print::ty(ret)
    ));
    // The program's own text, which compiled once, or else the printed
    // module (a program read from an IR file whose text is gone).
    let candidates = [m.file.text.clone(), syntax::print::module(m)];
    let mut first_error = None;
    for text in candidates {
        let file = SourceFile {
            name: m.file.name.clone(),
            text: text + &def,
        };
        match syntax::compile_calls(file.clone()) {
            Ok(out) if out.def(&name).is_some() => return Ok((out, name)),
            Ok(_) => {}
            Err(e) => {
                first_error.get_or_insert_with(|| crate::diag::at(&file, e.span(), &e.to_string()));
            }
        }
    }
    Err(Error::Internal(format!(
        "the pullback of `{}` does not compile:\n{}",
        entry.name,
        first_error.map_or_else(String::new, |e| e.message().to_string())
    )))
}

fn fresh(base: &str, taken: &dyn Fn(&str) -> bool) -> String {
    if !taken(base) {
        return base.to_string();
    }
    (1..)
        .map(|k| format!("{base}_{k}"))
        .find(|n| !taken(n))
        .unwrap_or_else(|| base.to_string())
}

/// `<a, b>` for two values of type `ty`, as surface text; `None` for a type
/// with a function in it.
fn inner_product(a: &str, b: &str, ty: &Ty, depth: usize) -> Option<String> {
    match ty {
        Ty::Real => Some(format!("({a} * {b})")),
        Ty::Int | Ty::Bool => Some("0.0".to_string()),
        Ty::Array(_, elem) => {
            let (p, q) = (format!("p{depth}__"), format!("q{depth}__"));
            let body = inner_product(&p, &q, elem, depth + 1)?;
            Some(format!(
                "reduce (+) 0.0 (map2 (fun ({p}, {q}) -> {body}) {a} {b})"
            ))
        }
        Ty::Tuple(items) => {
            if items.is_empty() {
                return Some("0.0".to_string());
            }
            let parts: Option<Vec<String>> = items
                .iter()
                .enumerate()
                .map(|(i, t)| {
                    inner_product(
                        &format!("({a}).{}", i + 1),
                        &format!("({b}).{}", i + 1),
                        t,
                        depth,
                    )
                })
                .collect();
            Some(format!("({})", parts?.join(" + ")))
        }
        _ => None,
    }
}
