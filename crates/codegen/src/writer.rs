//! Names in generated code.

/// A name reduced to C identifier characters (`x'` → `x_q`), at most 24
/// characters; empty when nothing is left.
pub(crate) fn c_ident(name: &str) -> String {
    let mut out = String::new();
    for ch in name.chars() {
        if ch.is_ascii_alphanumeric() || ch == '_' {
            out.push(ch);
        } else if ch == '\'' {
            out.push_str("_q");
        }
        if out.len() >= 24 {
            break;
        }
    }
    out
}
