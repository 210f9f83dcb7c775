//! Loop-invariant code motion on the generated C: failure checks and
//! scratch buffers that do not depend on the loop move before it.
//!
//! Like `fuse.rs`, the pass works on the regular text the lowering writes
//! (one statement per line, blocks opened by a line ending in `{`), loops
//! first, innermost first, so what leaves an inner loop may leave the
//! enclosing one too. For a loop `for (int64_t i = 0; i < N; i++)` (or the
//! downward form) with `N` a name or a literal, written variables `W`
//! (assigned as a whole anywhere in the loop, its index included; element
//! writes `p[i] = ...` do not count) and body `B`:
//!
//! - A scratch buffer `T *p = (T *)ad_alloc(ctx, COUNT, sizeof(T));` at the
//!   top level of `B`, between the arena mark `B` takes and its
//!   unconditional reset (note [the arena] in docs/codegen.md: nothing
//!   allocated there outlives the iteration), whose `COUNT` reads nothing
//!   in `W` and whose `p` is assigned nowhere else, becomes
//!   `T *p = N > 0 ? (T *)ad_alloc(...) : NULL;` before the loop: one
//!   buffer for all iterations, allocated only if the loop runs. Its
//!   `if (!p) return ad_fail(...)` check stays where it was (and may move by
//!   the next rule), so an allocation failure is reported exactly where it
//!   was. If nothing between the mark and the reset uses the arena any
//!   more, the mark and reset go too.
//! - A check `if (C) return ad_fail(ctx, ...);` at the top level of `B`,
//!   reading nothing in `W`, neither writing nor indexing nor calling
//!   anything but `INT64_C` and `ad_mulc`, and such that nothing before it
//!   in `B` can fail (no `return` in an earlier line or block), becomes
//!   `if (N > 0 && (C)) return ad_fail(ctx, ...);` before the loop. This
//!   keeps the evaluator's errors exactly: `C` is the same in every
//!   iteration, so if it fails it fails in the first one, where nothing
//!   before it could have failed first; and a loop that does not run
//!   reports nothing.
//!
//! Invariant: the text keeps the form `fuse.rs` and this pass read (hoisted
//! lines are single statements).

use std::collections::BTreeMap;

use syntax::stack;

use crate::fuse::{Node, assignment, identifiers, loop_header, parse, render, visit_lines};

/// Hoists loop-invariant checks and scratch buffers out of the loops of
/// one generated function (its text); returns the new text.
pub(crate) fn hoist(text: &str) -> String {
    let nodes = hoist_in(parse(text));
    let mut out = String::new();
    render(&nodes, 0, &mut out);
    out
}

fn hoist_in(nodes: Vec<Node>) -> Vec<Node> {
    stack::guard(|| {
        let mut out: Vec<Node> = Vec::with_capacity(nodes.len());
        for n in nodes {
            let Node::Block { head, body, close } = n else {
                out.push(n);
                continue;
            };
            let body = hoist_in(body);
            let trip = loop_header(&head)
                .filter(|_| close)
                .and_then(|(_, range)| trip_count(&range));
            let Some(count) = trip else {
                out.push(Node::Block { head, body, close });
                continue;
            };
            let (pre, body) = hoist_loop(&head, body, &count);
            // A pragma belongs to the loop after it.
            let pragma = match out.last() {
                Some(Node::Line(l)) if l.starts_with("AD_PRAGMA(") => out.pop(),
                _ => None,
            };
            out.extend(pre.into_iter().map(Node::Line));
            out.extend(pragma);
            out.push(Node::Block { head, body, close });
        }
        out
    })
}

/// The trip count of a loop range from `loop_header` (`up N`, `down N`)
/// when it is a name or an integer literal (evaluating it early is then
/// free of effects).
fn trip_count(range: &str) -> Option<String> {
    let n = range
        .strip_prefix("up ")
        .or_else(|| range.strip_prefix("down "))?;
    let literal = n
        .strip_prefix("INT64_C(")
        .and_then(|d| d.strip_suffix(')'))
        .unwrap_or(n);
    let name = n.chars().all(|c| c.is_ascii_alphanumeric() || c == '_');
    let digits = !literal.is_empty() && literal.chars().all(|c| c.is_ascii_digit());
    (name || digits).then(|| n.to_string())
}

/// Moves what may leave the loop with header `head` and trip count `n`
/// out of its body: (lines to put before the loop, new body).
fn hoist_loop(head: &str, mut body: Vec<Node>, n: &str) -> (Vec<String>, Vec<Node>) {
    let mut writes = Writes::default();
    writes.line(head);
    writes.nodes(&body);
    if identifiers(n).iter().any(|(_, id)| writes.has(id)) {
        return (Vec::new(), body);
    }
    let guard = format!("{n} > 0");
    let mut pre = Vec::new();

    // Scratch buffers, from the segments between an arena mark and its reset.
    let mut k = 0;
    let mut segment_end = None;
    while k < body.len() {
        if let Node::Line(l) = &body[k]
            && let Some(m) = mark_name(l)
        {
            segment_end = reset_of(&body[k + 1..], m).map(|p| k + 1 + p);
        } else if let Node::Line(l) = &body[k]
            && let Some(x) = plain_int(l)
            && writes.count(x) == 1
            && !identifiers(l)
                .iter()
                .any(|(_, id)| id != x && writes.has(id))
        {
            // A size computed from invariant sizes (a scratch buffer's count).
            writes.forget(x);
            pre.push(l.clone());
            body.remove(k);
            segment_end = segment_end.map(|e| e - 1);
            continue;
        } else if segment_end.is_some_and(|end| k < end)
            && !take_allocs(&mut body[k], &mut writes, &guard, &mut pre)
        {
            body.remove(k);
            segment_end = segment_end.map(|e| e - 1);
            continue;
        }
        k += 1;
    }

    // Checks, up to the first statement that may fail and stays.
    let mut k = 0;
    while k < body.len() {
        match &body[k] {
            Node::Line(l) => {
                if let Some((cond, tail)) = check(l)
                    && !identifiers(l).iter().any(|(_, id)| writes.has(id))
                {
                    pre.push(format!("if ({guard} && ({cond})) {tail}"));
                    body.remove(k);
                    continue;
                }
                if l.contains("return") {
                    break;
                }
            }
            Node::Block { .. } => {
                if may_fail(&body[k..=k]) {
                    break;
                }
            }
        }
        k += 1;
    }

    drop_idle_marks(&mut body);
    (pre, body)
}

/// Hoists the scratch buffers of a node inside an arena segment: the node
/// itself if it is one (false: remove it), or those in the branches of a
/// conditional (not in a nested loop, whose own pass left there only what
/// depends on it). Hoisted out of a branch, a buffer is allocated even
/// when the branch is not taken: one buffer, and its check stays in the
/// branch.
fn take_allocs(node: &mut Node, writes: &mut Writes, guard: &str, pre: &mut Vec<String>) -> bool {
    match node {
        Node::Line(l) => {
            if let Some(a) = Alloc::parse(l)
                && writes.count(&a.ptr) == 1
                && !a.reads().iter().any(|id| writes.has(id))
            {
                pre.push(a.guarded(guard));
                writes.forget(&a.ptr);
                return false;
            }
            true
        }
        Node::Block { head, body, .. } => {
            if !head.starts_with("for (") {
                body.retain_mut(|n| take_allocs(n, writes, guard, pre));
            }
            true
        }
    }
}

/// The position of the reset of mark `m` in `nodes`: `ad_reset(ctx, m);`,
/// or `if (C) ad_reset(ctx, m);` in a loop writing rows of unknown length,
/// which keeps the first iteration's allocations because the result's
/// buffers come after them (its temporaries are dead all the same).
fn reset_of(nodes: &[Node], m: &str) -> Option<usize> {
    let reset = format!("ad_reset(ctx, {m});");
    nodes.iter().position(|n| {
        matches!(n, Node::Line(r) if *r == reset
            || (r.starts_with("if (") && r.ends_with(&format!(") {reset}"))))
    })
}

/// `x` for a line `const int64_t x = E;` where `E` is names, literals and
/// `ad_mulc` (no arithmetic that could overflow when evaluated early, no
/// effect).
fn plain_int(line: &str) -> Option<&str> {
    let (x, e) = line
        .strip_prefix("const int64_t ")?
        .strip_suffix(';')?
        .split_once(" = ")?;
    let name = x.chars().all(|c| c.is_ascii_alphanumeric() || c == '_');
    (!x.is_empty() && name && plain_expr(e)).then_some(x)
}

/// Whether an integer expression is names, literals, `INT64_C` and
/// `ad_mulc` (saturating) only: no effect, and no arithmetic that could
/// overflow when evaluated earlier than it was written.
fn plain_expr(e: &str) -> bool {
    let chars = e
        .chars()
        .all(|c| c.is_ascii_alphanumeric() || matches!(c, '_' | '(' | ')' | ',' | ' '));
    let calls = identifiers(e)
        .iter()
        .all(|(pos, id)| !e[pos + id.len()..].starts_with('(') || id == "ad_mulc");
    !e.trim().is_empty() && chars && calls
}

/// `M` for the line `const ad_mark M = ad_mark_get(ctx);`.
fn mark_name(line: &str) -> Option<&str> {
    line.strip_prefix("const ad_mark ")?
        .strip_suffix(" = ad_mark_get(ctx);")
}

/// Removes arena marks and resets at the top level of a body with nothing
/// between them that uses the arena.
fn drop_idle_marks(body: &mut Vec<Node>) {
    let mut k = 0;
    while k < body.len() {
        let m = match &body[k] {
            Node::Line(l) => mark_name(l).map(str::to_string),
            Node::Block { .. } => None,
        };
        if let Some(m) = m {
            let end = reset_of(&body[k + 1..], &m).map(|p| k + 1 + p);
            if let Some(end) = end
                && !uses_arena(&body[k + 1..end])
            {
                body.remove(end);
                body.remove(k);
                continue;
            }
        }
        k += 1;
    }
}

/// Whether some code uses the call context for anything but reporting a
/// failure (allocations, marks, resets).
fn uses_arena(nodes: &[Node]) -> bool {
    let mut uses = false;
    visit_lines(nodes, &mut |l| {
        let all = identifiers(l).iter().filter(|(_, id)| id == "ctx").count();
        uses |= all > l.matches("ad_fail(ctx,").count();
    });
    uses
}

/// Whether some code contains a statement that can fail.
fn may_fail(nodes: &[Node]) -> bool {
    let mut fails = false;
    visit_lines(nodes, &mut |l| fails |= l.contains("return"));
    fails
}

/// A hoistable failure check `if (C) return ad_fail(...);`: (`C`, the
/// `return ...;` part). Refused: anything that writes, indexes, takes an
/// address or calls another function than `INT64_C` and `ad_mulc`.
fn check(line: &str) -> Option<(&str, &str)> {
    let rest = line.strip_prefix("if (")?;
    let at = rest.find(") return ad_fail(ctx, ")?;
    let (cond, tail) = (&rest[..at], &rest[at + 2..]);
    if !tail.ends_with(");") || line.matches(';').count() != 1 {
        return None;
    }
    if line.contains('[') || line.replace("&&", "").contains('&') || assignment(line).is_some() {
        return None;
    }
    if line.contains("++") || line.contains("--") {
        return None;
    }
    let calls_only_pure = identifiers(line).iter().all(|(pos, id)| {
        let called = line[pos + id.len()..].starts_with('(');
        !called || matches!(id.as_str(), "ad_fail" | "ad_mulc")
    });
    // `INT64_C` is not an identifier for `identifiers` (a skipped name).
    calls_only_pure.then_some((cond, tail))
}

/// A scratch buffer declaration: `T *p = (T *)ad_alloc(ctx, COUNT,
/// sizeof(T));`, or one already hoisted, `T *p = G ? (T *)ad_alloc(...) :
/// NULL;`.
struct Alloc {
    /// `T *p`.
    decl: String,
    /// `p`.
    ptr: String,
    /// `G`, if any.
    guard: Option<String>,
    /// `(T *)ad_alloc(ctx, COUNT, sizeof(T))`.
    call: String,
}

impl Alloc {
    fn parse(line: &str) -> Option<Alloc> {
        let (decl, rhs) = line.strip_suffix(';')?.split_once(" = ")?;
        let (ty, ptr) = decl.split_once(" *")?;
        if !matches!(ty, "double" | "int64_t" | "bool")
            || ptr.is_empty()
            || !ptr.chars().all(|c| c.is_ascii_alphanumeric() || c == '_')
        {
            return None;
        }
        let (guard, call) = match rhs.strip_suffix(" : NULL") {
            Some(r) => {
                let (g, c) = r.split_once(" ? ")?;
                (Some(g.to_string()), c)
            }
            None => (None, rhs),
        };
        let count = call
            .strip_prefix(&format!("({ty} *)ad_alloc(ctx, "))?
            .strip_suffix(&format!(", sizeof({ty}))"))?;
        let guard_plain = guard.as_deref().is_none_or(|g| {
            g.chars().all(|c| {
                c.is_ascii_alphanumeric() || matches!(c, '_' | '(' | ')' | ' ' | '>' | '&')
            })
        });
        (plain_expr(count) && guard_plain).then(|| Alloc {
            decl: decl.to_string(),
            ptr: ptr.to_string(),
            guard,
            call: call.to_string(),
        })
    }

    /// The names the allocation reads (its count and guard).
    fn reads(&self) -> Vec<String> {
        let mut ids: Vec<String> = identifiers(&self.call)
            .into_iter()
            .map(|(_, id)| id)
            .collect();
        if let Some(g) = &self.guard {
            ids.extend(identifiers(g).into_iter().map(|(_, id)| id));
        }
        ids
    }

    /// The declaration before a loop whose trip count is positive under
    /// `outer`: allocated only if the loop runs.
    fn guarded(&self, outer: &str) -> String {
        let guard = match &self.guard {
            Some(g) => format!("{outer} && {g}"),
            None => outer.to_string(),
        };
        format!("{} = {guard} ? {} : NULL;", self.decl, self.call)
    }
}

/// How often each variable is assigned as a whole in some code: `x = `,
/// `T x = `, `T x;`, `&x`, `x++`. Element writes (`p[i] = `, `*p = `) do
/// not change `p`.
#[derive(Default)]
struct Writes(BTreeMap<String, usize>);

impl Writes {
    fn has(&self, id: &str) -> bool {
        self.0.contains_key(id)
    }

    fn count(&self, id: &str) -> usize {
        self.0.get(id).copied().unwrap_or(0)
    }

    fn forget(&mut self, id: &str) {
        self.0.remove(id);
    }

    fn add(&mut self, id: &str) {
        *self.0.entry(id.to_string()).or_insert(0) += 1;
    }

    fn nodes(&mut self, nodes: &[Node]) {
        visit_lines(nodes, &mut |l| self.line(l));
    }

    fn line(&mut self, line: &str) {
        let line = line.trim().trim_end_matches('{').trim_end();
        let line = line.trim_start_matches('}').trim_start();
        let line = line.strip_prefix("else").unwrap_or(line).trim_start();
        // `&x` (not `&&`), `x++`, `++x`.
        for (pos, id) in identifiers(line) {
            let before = line[..pos].trim_end();
            let after = &line[pos + id.len()..];
            if (before.ends_with('&') && !before.ends_with("&&"))
                || after.starts_with("++")
                || after.starts_with("--")
                || before.ends_with("++")
                || before.ends_with("--")
            {
                self.add(&id);
            }
        }
        let inner = line
            .strip_prefix("for (")
            .or_else(|| line.strip_prefix("if ("))
            .unwrap_or(line);
        for stmt in inner.split(';') {
            self.statement(stmt.trim());
        }
    }

    fn statement(&mut self, stmt: &str) {
        const TYPES: [&str; 6] = [
            "double ",
            "int64_t ",
            "bool ",
            "int ",
            "ad_mark ",
            "ad_chunk ",
        ];
        let bare = stmt.strip_prefix("const ").unwrap_or(stmt);
        if TYPES.iter().any(|t| bare.starts_with(t)) {
            // A declaration, maybe of several names: `T a = x, b = y`.
            for d in split_top_level(stmt) {
                let lhs = assignment(d).map_or(d, |eq| &d[..eq]);
                if let Some((_, id)) = identifiers(lhs).pop() {
                    self.add(&id);
                }
            }
            return;
        }
        let Some(eq) = assignment(stmt) else {
            return;
        };
        let lhs = &stmt[..eq];
        if lhs.contains('[') {
            return;
        }
        // `if (c) x = ...`: what follows the condition.
        let lhs = lhs.rfind(')').map_or(lhs, |p| &lhs[p + 1..]);
        if lhs.trim_start().starts_with('*') {
            return;
        }
        if let Some((_, id)) = identifiers(lhs).pop() {
            self.add(&id);
        }
    }
}

/// A statement split at the commas outside parentheses.
fn split_top_level(stmt: &str) -> Vec<&str> {
    let mut parts = Vec::new();
    let mut depth = 0i32;
    let mut start = 0;
    for (k, c) in stmt.char_indices() {
        match c {
            '(' => depth += 1,
            ')' => depth -= 1,
            ',' if depth == 0 => {
                parts.push(&stmt[start..k]);
                start = k + 1;
            }
            _ => {}
        }
    }
    parts.push(&stmt[start..]);
    parts
}

#[cfg(test)]
mod tests {
    use super::hoist;

    #[test]
    fn an_invariant_check_leaves_the_loop_guarded_by_its_trip_count() {
        let text = "for (int64_t t1_i = 0; t1_i < n; t1_i++) {\nconst double t2_x = a[t1_i];\nif (m != k) return ad_fail(ctx, 3, m, k);\nb[t1_i] = t2_x;\n}\n";
        let out = hoist(text);
        assert!(
            out.starts_with("if (n > 0 && (m != k)) return ad_fail(ctx, 3, m, k);\nfor ("),
            "{out}"
        );
        assert_eq!(out.matches("ad_fail").count(), 1, "{out}");
    }

    #[test]
    fn a_check_after_one_that_may_fail_stays() {
        let text = "for (int64_t t1_i = 0; t1_i < n; t1_i++) {\nif (t1_i >= q) return ad_fail(ctx, 1, t1_i, q);\nif (m != k) return ad_fail(ctx, 3, m, k);\n}\n";
        assert!(hoist(text).starts_with("for ("), "{}", hoist(text));
        assert_eq!(hoist(text).matches("ad_fail").count(), 2);
        let block = "for (int64_t t1_i = 0; t1_i < n; t1_i++) {\nif (c) {\nif (m < 0) return ad_fail(ctx, 1, m, 0);\n}\nif (m != k) return ad_fail(ctx, 3, m, k);\n}\n";
        assert!(hoist(block).starts_with("for ("), "{}", hoist(block));
    }

    #[test]
    fn a_check_on_a_variable_the_loop_writes_stays() {
        let text = "for (int64_t t1_i = 0; t1_i < n; t1_i++) {\nif (m != k) return ad_fail(ctx, 3, m, k);\nif (t1_i == 0) {\nm = 4;\n}\n}\n";
        assert!(hoist(text).starts_with("for ("), "{}", hoist(text));
        let through = "for (int64_t t1_i = 0; t1_i < n; t1_i++) {\nif (m != k) return ad_fail(ctx, 3, m, k);\nf(&m);\n}\n";
        assert!(hoist(through).starts_with("for ("), "{}", hoist(through));
        let index = "for (int64_t t1_i = 0; t1_i < n; t1_i++) {\nif (t1_i != k) return ad_fail(ctx, 3, t1_i, k);\n}\n";
        assert!(hoist(index).starts_with("for ("), "{}", hoist(index));
    }

    #[test]
    fn scratch_buffers_and_checks_leave_nested_loops() {
        let text = "for (int64_t t1_i = 0; t1_i < n; t1_i++) {\nconst ad_mark t9_mark = ad_mark_get(ctx);\ndouble *t2_buf = (double *)ad_alloc(ctx, m, sizeof(double));\nif (!t2_buf) return ad_fail(ctx, 4, m, 0);\nfor (int64_t t3_i = 0; t3_i < m; t3_i++) {\nif (k != m) return ad_fail(ctx, 5, k, m);\nt2_buf[t3_i] = a[t3_i];\n}\nr[t1_i] = t2_buf[0];\nad_reset(ctx, t9_mark);\n}\n";
        let out = hoist(text);
        let want = "double *t2_buf = n > 0 ? (double *)ad_alloc(ctx, m, sizeof(double)) : NULL;\nif (n > 0 && (!t2_buf)) return ad_fail(ctx, 4, m, 0);\nif (n > 0 && (m > 0 && (k != m))) return ad_fail(ctx, 5, k, m);\nfor (int64_t t1_i = 0; t1_i < n; t1_i++) {\n    for (int64_t t3_i = 0; t3_i < m; t3_i++) {\n        t2_buf[t3_i] = a[t3_i];\n    }\n    r[t1_i] = t2_buf[0];\n}\n";
        assert_eq!(out, want);
    }

    #[test]
    fn a_buffer_whose_size_varies_or_that_outlives_the_iteration_stays() {
        let varies = "for (int64_t t1_i = 0; t1_i < n; t1_i++) {\nconst ad_mark t9_mark = ad_mark_get(ctx);\ndouble *t2_buf = (double *)ad_alloc(ctx, t1_i, sizeof(double));\nif (!t2_buf) return ad_fail(ctx, 4, t1_i, 0);\nad_reset(ctx, t9_mark);\n}\n";
        assert!(hoist(varies).starts_with("for ("), "{}", hoist(varies));
        // A loop writing rows: the result's buffers, allocated in the
        // first iteration, stay; its scratch buffer leaves.
        let rows = "for (int64_t t1_i = 0; t1_i < n; t1_i++) {\nconst ad_mark t9_mark = ad_mark_get(ctx);\ndouble *t2_buf = (double *)ad_alloc(ctx, m, sizeof(double));\nif (t1_i == 0) {\nt3_p = (double *)ad_alloc(ctx, ad_mulc(n, m), sizeof(double));\n}\nif (t1_i > 0) ad_reset(ctx, t9_mark);\n}\n";
        let out = hoist(rows);
        assert!(out.starts_with("double *t2_buf = n > 0 ? "), "{out}");
        assert!(out.contains("    const ad_mark t9_mark"), "{out}");
        assert!(out.contains("        t3_p = (double *)ad_alloc("), "{out}");
        let after_reset = "for (int64_t t1_i = 0; t1_i < n; t1_i++) {\nconst ad_mark t9_mark = ad_mark_get(ctx);\nad_reset(ctx, t9_mark);\ndouble *t2_buf = (double *)ad_alloc(ctx, m, sizeof(double));\n}\n";
        assert!(
            hoist(after_reset).starts_with("for ("),
            "{}",
            hoist(after_reset)
        );
    }

    #[test]
    fn a_scratch_buffer_leaves_a_branch_but_its_check_stays() {
        let text = "for (int64_t t1_i = 0; t1_i < n; t1_i++) {\nconst ad_mark t9_mark = ad_mark_get(ctx);\nif (a[t1_i] > 0.0) {\ndouble *t2_buf = (double *)ad_alloc(ctx, m, sizeof(double));\nif (!t2_buf) return ad_fail(ctx, 4, m, 0);\nt2_buf[0] = 1.0;\n}\nad_reset(ctx, t9_mark);\n}\n";
        let want = "double *t2_buf = n > 0 ? (double *)ad_alloc(ctx, m, sizeof(double)) : NULL;\nfor (int64_t t1_i = 0; t1_i < n; t1_i++) {\n    if (a[t1_i] > 0.0) {\n        if (!t2_buf) return ad_fail(ctx, 4, m, 0);\n        t2_buf[0] = 1.0;\n    }\n}\n";
        assert_eq!(hoist(text), want);
    }

    #[test]
    fn a_count_computed_in_the_loop_from_invariant_sizes_leaves_with_its_buffer() {
        let text = "for (int64_t t1_i = 0; t1_i < n; t1_i++) {\nconst ad_mark t9_mark = ad_mark_get(ctx);\nconst int64_t t2_c = ad_mulc(m, INT64_C(2));\nconst int64_t t3_k = m + 1;\ndouble *t4_buf = (double *)ad_alloc(ctx, t2_c, sizeof(double));\ndouble *t5_buf = (double *)ad_alloc(ctx, t3_k, sizeof(double));\nad_reset(ctx, t9_mark);\n}\n";
        let out = hoist(text);
        assert!(
            out.starts_with(
                "const int64_t t2_c = ad_mulc(m, INT64_C(2));\ndouble *t4_buf = n > 0 ? "
            ),
            "{out}"
        );
        // `m + 1` could overflow: it stays, and so does the buffer it sizes.
        assert!(
            out.contains(
                "    const int64_t t3_k = m + 1;\n    double *t5_buf = (double *)ad_alloc("
            ),
            "{out}"
        );
    }

    #[test]
    fn hoisted_lines_go_before_a_pragma() {
        let text = "AD_PRAGMA(omp simd)\nfor (int64_t t1_i = n - 1; t1_i >= 0; t1_i--) {\nif (m < 0) return ad_fail(ctx, 1, m, 0);\n}\n";
        assert!(
            hoist(text)
                .starts_with("if (n > 0 && (m < 0)) return ad_fail(ctx, 1, m, 0);\nAD_PRAGMA("),
            "{}",
            hoist(text)
        );
    }
}
