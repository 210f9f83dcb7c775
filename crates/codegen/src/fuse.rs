//! Sibling loop fusion on the generated C: two loops over the same range,
//! one after the other, become one loop when no iteration of the second
//! depends on a later iteration of the first.
//!
//! Delayed arrays already fuse a producer into its consumer. What remains
//! are independent loops over the same index space, such as the value and
//! the gradient of `sum (map f A)` (a reduction and a map over `A`), or the
//! copies of `dot`'s gradient. Fused, they read their inputs once, and the
//! C compiler shares the work they have in common (`sin x` computed for the
//! value and for the gradient is one call: the math functions are `const`
//! under `-fno-math-errno`).
//!
//! The pass works on the text the lowering wrote, which is regular: one
//! statement per line, blocks opened by a line ending in `{` and closed by
//! `}` (or `} else {`), every variable named `tN_...` and assigned in
//! statements of the form `x = ...`, `p[i] = ...`, `f(..., &x)`. Loops
//! `L1; S; L2` (`S` declarations and failure checks only) with the same
//! header and pragma are fused into `S; L1+L2` when
//! - `S` reads nothing `L1` writes,
//! - and every variable written by one loop and read or written by the
//!   other is only ever used as `v[i]` with the loop's own index (the same
//!   element in the same iteration, which fusion keeps in order).

use std::collections::BTreeSet;

/// A line or a block of the generated code.
#[derive(Debug, Clone)]
pub(crate) enum Node {
    Line(String),
    Block {
        /// The line that opens it (ending in `{`).
        head: String,
        body: Vec<Node>,
        /// Whether a `}` line closes it (false when `} else {` follows).
        close: bool,
    },
}

/// Fuses sibling loops in the body of one generated function (its text,
/// one statement per line); returns the new text.
pub(crate) fn fuse(text: &str) -> String {
    let nodes = parse(text);
    let nodes = fuse_all(nodes);
    let mut out = String::new();
    render(&nodes, 0, &mut out);
    out
}

/// The lines and blocks of some generated code.
pub(crate) fn parse(text: &str) -> Vec<Node> {
    let mut stack: Vec<(String, Vec<Node>)> = vec![(String::new(), Vec::new())];
    for raw in text.lines() {
        let line = raw.trim();
        if line.is_empty() {
            continue;
        }
        if line == "}" || (line.starts_with('}') && line.ends_with('{')) {
            if stack.len() > 1 {
                let (head, body) = stack.pop().unwrap_or_default();
                let close = line == "}";
                if let Some(top) = stack.last_mut() {
                    top.1.push(Node::Block { head, body, close });
                }
            }
            if line != "}" {
                stack.push((line.to_string(), Vec::new()));
            }
        } else if line.ends_with('{') {
            stack.push((line.to_string(), Vec::new()));
        } else if let Some(top) = stack.last_mut() {
            top.1.push(Node::Line(line.to_string()));
        }
    }
    // Unbalanced text (never produced by the lowering) is closed here.
    while stack.len() > 1 {
        let (head, body) = stack.pop().unwrap_or_default();
        if let Some(top) = stack.last_mut() {
            top.1.push(Node::Block {
                head,
                body,
                close: true,
            });
        }
    }
    stack.pop().map(|(_, b)| b).unwrap_or_default()
}

/// Writes nodes back as text, indented four spaces per level.
pub(crate) fn render(nodes: &[Node], indent: usize, out: &mut String) {
    for n in nodes {
        match n {
            Node::Line(l) => {
                out.push_str(&"    ".repeat(indent));
                out.push_str(l);
                out.push('\n');
            }
            Node::Block { head, body, close } => {
                out.push_str(&"    ".repeat(indent));
                out.push_str(head);
                out.push('\n');
                render(body, indent + 1, out);
                if *close {
                    out.push_str(&"    ".repeat(indent));
                    out.push_str("}\n");
                }
            }
        }
    }
}

/// A loop header `for (int64_t I = 0; I < N; I++) {` or the downward
/// `for (int64_t I = N - 1; I >= 0; I--) {`: (index, range key).
pub(crate) fn loop_header(head: &str) -> Option<(String, String)> {
    let inner = head.strip_prefix("for (int64_t ")?.strip_suffix(") {")?;
    let parts: Vec<&str> = inner.split("; ").collect();
    let [init, cond, step] = parts.as_slice() else {
        return None;
    };
    let (i, start) = init.split_once(" = ")?;
    if *step == format!("{i}++") {
        let n = cond.strip_prefix(&format!("{i} < "))?;
        (start == "0").then(|| (i.to_string(), format!("up {n}")))
    } else if *step == format!("{i}--") {
        let n = start.strip_suffix(" - 1")?;
        (*cond == format!("{i} >= 0")).then(|| (i.to_string(), format!("down {n}")))
    } else {
        None
    }
}

fn fuse_all(nodes: Vec<Node>) -> Vec<Node> {
    // Inner bodies first.
    let mut nodes: Vec<Node> = nodes
        .into_iter()
        .map(|n| match n {
            Node::Block { head, body, close } => Node::Block {
                head,
                body: fuse_all(body),
                close,
            },
            l => l,
        })
        .collect();
    let mut k = 0;
    while k < nodes.len() {
        if try_fuse_at(&mut nodes, k) {
            continue;
        }
        k += 1;
    }
    nodes
}

/// Fuses the loop at `k` with the next one if allowed; true if it did.
fn try_fuse_at(nodes: &mut Vec<Node>, k: usize) -> bool {
    let Some(Node::Block {
        head: h1,
        body: b1,
        close: true,
    }) = nodes.get(k)
    else {
        return false;
    };
    let Some((i1, range1)) = loop_header(h1) else {
        return false;
    };
    let pragma1 = pragma_before(nodes, k);
    // The statements between the loops, and the next loop.
    let mut j = k + 1;
    while let Some(Node::Line(l)) = nodes.get(j) {
        if !movable(l) {
            break;
        }
        j += 1;
    }
    // A pragma line belongs to the loop after it.
    let mut pragma2 = None;
    if let Some(Node::Line(l)) = nodes.get(j)
        && l.starts_with("AD_PRAGMA(")
    {
        pragma2 = Some(l.clone());
        j += 1;
    }
    let Some(Node::Block {
        head: h2,
        body: b2,
        close: true,
    }) = nodes.get(j)
    else {
        return false;
    };
    let Some((i2, range2)) = loop_header(h2) else {
        return false;
    };
    if range1 != range2 {
        return false;
    }
    let between: Vec<String> = nodes[k + 1..j]
        .iter()
        .filter_map(|n| match n {
            Node::Line(l) if !l.starts_with("AD_PRAGMA(") => Some(l.clone()),
            _ => None,
        })
        .collect();
    let b2 = rename(b2, &i2, &i1);
    let (w1, r1) = effects(b1);
    let (w2, r2) = effects(&b2);
    let (_, rs) = effects(&between.iter().cloned().map(Node::Line).collect::<Vec<_>>());
    if w1.iter().any(|v| rs.contains(v)) {
        return false;
    }
    let conflicts: BTreeSet<&String> = w1
        .iter()
        .filter(|v| r2.contains(*v) || w2.contains(*v))
        .chain(w2.iter().filter(|v| r1.contains(*v)))
        .collect();
    for v in conflicts {
        if !indexed_only(b1, v, &i1) || !indexed_only(&b2, v, &i1) {
            return false;
        }
    }
    // A vectorized reduction (`omp simd`) takes in a loop only if that
    // loop may run in vector lanes too.
    let pragma = match (&pragma1, &pragma2) {
        (a, b) if a == b => a.clone(),
        (Some(p), None) if is_simd(p) && simd_safe(&b2, &i1) => Some(p.clone()),
        (None, Some(q)) if is_simd(q) && simd_safe(b1, &i1) => Some(q.clone()),
        (Some(p), Some(q)) if is_simd(p) && is_simd(q) => {
            // `omp simd reduction(+:a)` and `omp simd reduction(+:b)`.
            let inner = |x: &str| -> String {
                x.strip_prefix("AD_PRAGMA(")
                    .and_then(|x| x.strip_suffix(')'))
                    .unwrap_or("")
                    .to_string()
            };
            let q_clauses = inner(q).trim_start_matches("omp simd").to_string();
            Some(format!("AD_PRAGMA({}{q_clauses})", inner(p)))
        }
        _ => return false,
    };
    // Fuse: the statements in between go first, then one loop.
    let mut body = b1.clone();
    body.extend(b2);
    let fused = Node::Block {
        head: h1.clone(),
        body,
        close: true,
    };
    let mut replacement: Vec<Node> = between.into_iter().map(Node::Line).collect();
    let start = if pragma1.is_some() { k - 1 } else { k };
    if let Some(p) = pragma {
        replacement.push(Node::Line(p));
    }
    replacement.push(fused);
    nodes.splice(start..=j, replacement);
    true
}

fn is_simd(pragma: &str) -> bool {
    pragma.starts_with("AD_PRAGMA(omp simd")
}

/// Whether a loop body may run in vector lanes: it neither leaves the loop
/// nor allocates, and everything it writes is either its own local or an
/// element `v[i]` of its own iteration.
fn simd_safe(body: &[Node], i: &str) -> bool {
    let mut ok = true;
    let mut declared = BTreeSet::new();
    visit_lines(body, &mut |l| {
        if l.contains("return ") || l.contains("ad_alloc") || l.contains("ad_mark") {
            ok = false;
        }
        for stmt in l.split(';') {
            let t = stmt.trim();
            const TYPES: [&str; 5] = ["const ", "double ", "int64_t ", "bool ", "int "];
            if TYPES.iter().any(|ty| t.starts_with(ty))
                && let Some((_, id)) = identifiers(t).into_iter().next()
            {
                declared.insert(id);
            }
        }
    });
    if !ok {
        return false;
    }
    let (written, _) = effects(body);
    written
        .iter()
        .filter(|v| !declared.contains(*v))
        .all(|v| indexed_only(body, v, i))
}

fn pragma_before(nodes: &[Node], k: usize) -> Option<String> {
    match k.checked_sub(1).and_then(|p| nodes.get(p)) {
        Some(Node::Line(l)) if l.starts_with("AD_PRAGMA(") => Some(l.clone()),
        _ => None,
    }
}

/// Whether a line between two loops may move before the first: a
/// declaration of a new variable or a failure check.
fn movable(line: &str) -> bool {
    const TYPES: [&str; 6] = ["const ", "double ", "int64_t ", "bool ", "int ", "ad_mark "];
    (TYPES.iter().any(|t| line.starts_with(t)) && line.matches(';').count() == 1)
        || (line.starts_with("if (")
            && line.contains(") return ad_fail(")
            && line.matches(';').count() == 1)
}

/// The identifiers written and read by some code.
fn effects(nodes: &[Node]) -> (BTreeSet<String>, BTreeSet<String>) {
    let mut w = BTreeSet::new();
    let mut r = BTreeSet::new();
    fn go(nodes: &[Node], w: &mut BTreeSet<String>, r: &mut BTreeSet<String>) {
        for n in nodes {
            match n {
                Node::Line(l) => line_effects(l, w, r),
                Node::Block { head, body, .. } => {
                    line_effects(head.trim_end_matches('{'), w, r);
                    go(body, w, r);
                }
            }
        }
    }
    go(nodes, &mut w, &mut r);
    (w, r)
}

fn line_effects(line: &str, w: &mut BTreeSet<String>, r: &mut BTreeSet<String>) {
    let line = line.trim_start_matches('}').trim();
    let line = line.strip_prefix("else").unwrap_or(line).trim();
    // `for (...)` and `if (...)` heads: their parts are statements too.
    let inner = line
        .strip_prefix("for (")
        .or_else(|| line.strip_prefix("if ("))
        .unwrap_or(line);
    for stmt in inner.split(';') {
        let idents = identifiers(stmt);
        for (pos, id) in &idents {
            r.insert(id.clone());
            if stmt[..*pos].trim_end().ends_with('&') && !stmt[..*pos].trim_end().ends_with("&&") {
                w.insert(id.clone());
            }
        }
        // The variable assigned is the first one on the left: `x = `,
        // `T x = `, `p[i] = `, `(p + k)[i] = `, `*out = `.
        if let Some(eq) = assignment(stmt)
            && let Some((_, id)) = idents.iter().find(|(pos, _)| *pos < eq)
        {
            w.insert(id.clone());
        }
        if let Some(x) = stmt
            .trim()
            .strip_suffix("++")
            .or_else(|| stmt.trim().strip_suffix("--"))
        {
            w.insert(x.trim().to_string());
        }
    }
}

/// The position of the assignment `=` of a statement, if any.
pub(crate) fn assignment(stmt: &str) -> Option<usize> {
    let b = stmt.as_bytes();
    (0..b.len()).find(|&k| {
        b[k] == b'='
            && b.get(k + 1) != Some(&b'=')
            && !matches!(
                k.checked_sub(1).map(|p| b[p]),
                Some(b'=' | b'!' | b'<' | b'>')
            )
    })
}

/// The identifiers of a statement (not C keywords or types), with their
/// byte positions.
pub(crate) fn identifiers(stmt: &str) -> Vec<(usize, String)> {
    const SKIP: [&str; 16] = [
        "const",
        "double",
        "int64_t",
        "bool",
        "int",
        "ad_mark",
        "return",
        "if",
        "else",
        "for",
        "true",
        "false",
        "sizeof",
        "NULL",
        "INT64_C",
        "INT64_MIN",
    ];
    let mut out = Vec::new();
    let b = stmt.as_bytes();
    let mut k = 0;
    while k < b.len() {
        if b[k].is_ascii_alphabetic() || b[k] == b'_' {
            let start = k;
            while k < b.len() && (b[k].is_ascii_alphanumeric() || b[k] == b'_') {
                k += 1;
            }
            let id = &stmt[start..k];
            if !SKIP.contains(&id) {
                out.push((start, id.to_string()));
            }
        } else if b[k].is_ascii_digit() {
            while k < b.len() && (b[k].is_ascii_alphanumeric() || b[k] == b'_' || b[k] == b'.') {
                k += 1;
            }
        } else {
            k += 1;
        }
    }
    out
}

/// Whether every use of `v` in the code is `v[i]`.
fn indexed_only(nodes: &[Node], v: &str, i: &str) -> bool {
    let want = format!("{v}[{i}]");
    let mut ok = true;
    visit_lines(nodes, &mut |l| {
        for (pos, id) in identifiers(l) {
            if id == v && !l[pos..].starts_with(&want) {
                ok = false;
            }
        }
    });
    ok
}

/// Calls `f` on every line and block head of some code.
pub(crate) fn visit_lines(nodes: &[Node], f: &mut dyn FnMut(&str)) {
    for n in nodes {
        match n {
            Node::Line(l) => f(l),
            Node::Block { head, body, .. } => {
                f(head);
                visit_lines(body, f);
            }
        }
    }
}

/// The code with identifier `from` renamed to `to`.
fn rename(nodes: &[Node], from: &str, to: &str) -> Vec<Node> {
    let sub = |l: &str| -> String {
        let mut out = String::new();
        let mut last = 0;
        for (pos, id) in identifiers(l) {
            if id == from {
                out.push_str(&l[last..pos]);
                out.push_str(to);
                last = pos + id.len();
            }
        }
        out.push_str(&l[last..]);
        out
    };
    nodes
        .iter()
        .map(|n| match n {
            Node::Line(l) => Node::Line(sub(l)),
            Node::Block { head, body, close } => Node::Block {
                head: sub(head),
                body: rename(body, from, to),
                close: *close,
            },
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::fuse;

    #[test]
    fn independent_loops_over_one_range_fuse() {
        let text = "double t1_acc = 0.0;\nfor (int64_t t2_i = 0; t2_i < n; t2_i++) {\nconst double t3_x = a[t2_i];\nt1_acc = t1_acc + t3_x;\n}\ndouble *t4_buf = (double *)ad_alloc(ctx, n, sizeof(double));\nif (!t4_buf) return ad_fail(ctx, 1, n, 0);\nfor (int64_t t5_i = 0; t5_i < n; t5_i++) {\nconst double t6_x = a[t5_i];\nt4_buf[t5_i] = t6_x;\n}\n*out = t1_acc;\n";
        let out = fuse(text);
        assert_eq!(out.matches("for (").count(), 1, "{out}");
        assert!(out.contains("t4_buf[t2_i] = t6_x;"), "{out}");
        let alloc = out.find("ad_alloc").unwrap_or(usize::MAX);
        assert!(alloc < out.find("for (").unwrap_or(0), "{out}");
    }

    #[test]
    fn a_vector_reduction_takes_in_maps_but_not_scalar_loops() {
        let map = "AD_PRAGMA(omp simd reduction(+:t1_acc))\nfor (int64_t t2_i = 0; t2_i < n; t2_i++) {\nt1_acc = t1_acc + a[t2_i];\n}\nfor (int64_t t5_i = 0; t5_i < n; t5_i++) {\nconst double t6_x = a[t5_i];\nt4_buf[t5_i] = t6_x;\n}\n";
        let out = fuse(map);
        assert_eq!(out.matches("for (").count(), 1, "{out}");
        assert!(
            out.starts_with("AD_PRAGMA(omp simd reduction(+:t1_acc))"),
            "{out}"
        );
        let two = "AD_PRAGMA(omp simd reduction(+:t1_acc))\nfor (int64_t t2_i = 0; t2_i < n; t2_i++) {\nt1_acc = t1_acc + a[t2_i];\n}\nAD_PRAGMA(omp simd reduction(*:t7_acc))\nfor (int64_t t5_i = 0; t5_i < n; t5_i++) {\nt7_acc = t7_acc * a[t5_i];\n}\n";
        let out = fuse(two);
        assert!(
            out.contains("AD_PRAGMA(omp simd reduction(+:t1_acc) reduction(*:t7_acc))"),
            "{out}"
        );
        let scalar = "AD_PRAGMA(omp simd reduction(+:t1_acc))\nfor (int64_t t2_i = 0; t2_i < n; t2_i++) {\nt1_acc = t1_acc + a[t2_i];\n}\nfor (int64_t t5_i = 0; t5_i < n; t5_i++) {\nt7_acc = fmax(t7_acc, a[t5_i]);\n}\n";
        assert_eq!(fuse(scalar).matches("for (").count(), 2);
    }

    #[test]
    fn a_loop_reading_an_accumulator_does_not_fuse() {
        let text = "double t1_acc = 0.0;\nfor (int64_t t2_i = 0; t2_i < n; t2_i++) {\nt1_acc = t1_acc + a[t2_i];\n}\nfor (int64_t t5_i = 0; t5_i < n; t5_i++) {\nb[t5_i] = a[t5_i] / t1_acc;\n}\n";
        assert_eq!(fuse(text).matches("for (").count(), 2);
    }

    #[test]
    fn same_element_dependencies_fuse_but_shifted_ones_do_not() {
        let same = "for (int64_t t2_i = 0; t2_i < n; t2_i++) {\nt9_e[t2_i] = a[t2_i];\n}\nfor (int64_t t5_i = 0; t5_i < n; t5_i++) {\nacc = acc + t9_e[t5_i];\n}\n";
        assert_eq!(fuse(same).matches("for (").count(), 1);
        let shifted = "for (int64_t t2_i = 0; t2_i < n; t2_i++) {\nt9_e[t2_i] = a[t2_i];\n}\nfor (int64_t t5_i = 0; t5_i < n; t5_i++) {\nacc = acc + (t9_e + 1)[t5_i];\n}\n";
        assert_eq!(fuse(shifted).matches("for (").count(), 2);
        let other_range = "for (int64_t t2_i = 0; t2_i < n; t2_i++) {\nx[t2_i] = 1;\n}\nfor (int64_t t5_i = 0; t5_i < m; t5_i++) {\ny[t5_i] = 2;\n}\n";
        assert_eq!(fuse(other_range).matches("for (").count(), 2);
        let opposite = "for (int64_t t2_i = 0; t2_i < n; t2_i++) {\nx[t2_i] = 1;\n}\nfor (int64_t t5_i = n - 1; t5_i >= 0; t5_i--) {\ny[t5_i] = 2;\n}\n";
        assert_eq!(fuse(opposite).matches("for (").count(), 2);
    }
}
