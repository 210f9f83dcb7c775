//! Stored residuals: what the reverse pass of a gradient program keeps
//! from its forward pass (JAX's `print_saved_residuals`, with sizes and
//! positions).
//!
//! A gradient program `f_grad` (the calling convention of
//! ARCHITECTURE.md: `(value, g_1, ..., g_k)`) is a chain of `let`s ending
//! in that tuple. Its **forward pass** is the bindings the value needs;
//! its **reverse pass** the other bindings and the gradients. A
//! **residual** is a parameter or a forward binding that the reverse pass
//! reads: the memory that must live from the forward pass to the reverse
//! one. What the optimizer chose to recompute in the reverse pass instead
//! of storing (a `map` over the input, say) shows up as the input itself.
//!
//! Each residual comes with its type, its number of scalars as a formula
//! in the size variables ([`crate::size`]) and, at given inputs, as
//! counted on its value (the program is run up to the end of its `let`
//! chain, returning the residuals), and the span of the Source node it
//! was computed for.

use std::fmt;

use semantics::Value;
use syntax::{Def, Expr, ExprId, Module, Name, Pat, Prim, Span, Ty};

use crate::position::{Lines, Position};
use crate::size::{Poly, count, scalars};

/// One stored value.
#[derive(Debug, Clone)]
pub struct Residual {
    /// The variable of the gradient program.
    pub name: Name,
    /// Its type.
    pub ty: Ty,
    /// What computes it: `None` for a parameter, else the bound expression.
    pub value: Option<ExprId>,
    /// Its scalars as a formula in the sizes; `None` when a size is only
    /// known at run time.
    pub formula: Option<Poly>,
    /// Its scalars at the inputs, when they were given.
    pub at_inputs: Option<u64>,
    /// The Source node it comes from.
    pub position: Position,
    /// The expression that computes it, printed and shortened.
    pub computed_by: String,
    /// Whether the reverse pass reads only its length (`length x`, or a
    /// `map` whose function ignores its elements): a tape would keep one
    /// integer, not the value.
    pub length_only: bool,
}

/// The residuals of one gradient program.
#[derive(Debug, Clone)]
pub struct Report {
    /// The gradient program's definition.
    pub entry: String,
    /// The residuals: parameters first, then in binding order.
    pub residuals: Vec<Residual>,
    /// The number of bindings of the forward and the reverse pass.
    pub passes: (usize, usize),
    /// The number of gradients (k).
    pub gradients: usize,
}

/// Why residuals cannot be told.
#[derive(Debug, Clone, PartialEq)]
pub enum Error {
    /// The program does not end in the tuple `(value, g_1, ..., g_k)`.
    Shape(String),
    /// Running it up to its residuals failed.
    Eval(semantics::Error),
}

impl fmt::Display for Error {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Error::Shape(s) => f.write_str(s),
            Error::Eval(e) => write!(f, "running the forward pass: {e}"),
        }
    }
}

struct Binding {
    pat: Pat,
    value: ExprId,
}

/// The residuals of definition `def` of the gradient program `g`, which
/// returns the value and `gradients` gradients, measured at `args` (one
/// value per parameter) when given.
pub fn residuals(
    g: &Module,
    def: &Def,
    gradients: usize,
    args: Option<&[Value]>,
) -> Result<Report, Error> {
    let mut chain = Vec::new();
    let mut last = def.body;
    while let Expr::Let {
        pat, value, body, ..
    } = g.expr(last)
    {
        chain.push(Binding {
            pat: pat.clone(),
            value: *value,
        });
        last = *body;
    }
    let mut report = Report {
        entry: def.name.to_string(),
        residuals: Vec::new(),
        passes: (chain.len(), 0),
        gradients,
    };
    if gradients == 0 {
        // No parameter: the program is its value, with no reverse pass.
        return Ok(report);
    }
    let outputs = match g.expr(last) {
        Expr::Tuple(items) if items.len() == gradients + 1 => items.clone(),
        _ => {
            return Err(Error::Shape(format!(
                "`{}` does not end in the tuple of its value and {gradients} gradient(s)",
                def.name
            )));
        }
    };
    let mut binder: std::collections::HashMap<&Name, usize> = std::collections::HashMap::new();
    for (i, b) in chain.iter().enumerate() {
        match &b.pat {
            Pat::Var(v) => {
                binder.insert(v, i);
            }
            Pat::Tuple(vs) => binder.extend(vs.iter().map(|v| (v, i))),
        }
    }
    let bound_by = |x: &Name| binder.get(x).copied();
    // The forward pass: the bindings the value needs, transitively.
    let mut forward = vec![false; chain.len()];
    let mut work: Vec<Name> = syntax::visit::free_names(g, outputs[0])
        .into_iter()
        .collect();
    while let Some(x) = work.pop() {
        if let Some(i) = bound_by(&x)
            && !forward[i]
        {
            forward[i] = true;
            work.extend(syntax::visit::free_names(g, chain[i].value));
        }
    }
    report.passes = (
        forward.iter().filter(|f| **f).count(),
        forward.iter().filter(|f| !**f).count(),
    );
    // What the reverse pass reads.
    let mut read = std::collections::BTreeSet::new();
    for (i, b) in chain.iter().enumerate() {
        if !forward[i] {
            read.extend(syntax::visit::free_names(g, b.value));
        }
    }
    for &o in &outputs[1..] {
        read.extend(syntax::visit::free_names(g, o));
    }
    let lines = Lines::new(&g.file.text);
    for p in &def.params {
        if read.contains(&p.name) {
            report.residuals.push(residual(
                g,
                &lines,
                p.name.clone(),
                p.ty.clone().unwrap_or(Ty::Tuple(Vec::new())),
                None,
                p.span,
            ));
        }
    }
    for (i, b) in chain.iter().enumerate() {
        if !forward[i] {
            continue;
        }
        let ty = g.ty(b.value).cloned().unwrap_or(Ty::Tuple(Vec::new()));
        let names: Vec<(Name, Ty)> = match &b.pat {
            Pat::Var(v) => vec![(v.clone(), ty)],
            Pat::Tuple(vs) => vs
                .iter()
                .enumerate()
                .map(|(j, v)| {
                    let t = match &ty {
                        Ty::Tuple(items) => items.get(j).cloned(),
                        _ => None,
                    };
                    (v.clone(), t.unwrap_or(Ty::Tuple(Vec::new())))
                })
                .collect(),
        };
        for (v, t) in names {
            if read.contains(&v) {
                report
                    .residuals
                    .push(residual(g, &lines, v, t, Some(b.value), g.span(b.value)));
            }
        }
    }
    let mut reverse_roots: Vec<ExprId> = chain
        .iter()
        .zip(&forward)
        .filter(|(_, f)| !**f)
        .map(|(b, _)| b.value)
        .collect();
    reverse_roots.extend(&outputs[1..]);
    let mut read_whole = std::collections::BTreeSet::new();
    for &e in &reverse_roots {
        whole_reads(g, e, false, &mut read_whole);
    }
    for r in &mut report.residuals {
        r.length_only = !read_whole.contains(&r.name);
    }
    if let Some(args) = args {
        measure(g, def, &chain, &mut report.residuals, args)?;
    }
    Ok(report)
}

/// Collects the variables of `e` read for more than their length: every
/// occurrence except the operand of `length` and an array of
/// `map`/`map2` whose function does not use the parameter it receives
/// from it (`length_pos`: `e` is in such a position).
fn whole_reads(
    g: &Module,
    e: ExprId,
    length_pos: bool,
    out: &mut std::collections::BTreeSet<Name>,
) {
    syntax::stack::guard(|| match g.expr(e) {
        Expr::Var(v) => {
            if !length_pos {
                out.insert(v.clone());
            }
        }
        Expr::Prim {
            op: Prim::Length,
            args,
        } => {
            for &a in args {
                let var = matches!(g.expr(a), Expr::Var(_));
                whole_reads(g, a, var, out);
            }
        }
        Expr::Prim {
            op: Prim::Map | Prim::Map2,
            args,
        } => {
            let unused = |k: usize| match g.expr(args[0]) {
                Expr::Lambda { params, body } => params
                    .get(k - 1)
                    .is_some_and(|p| !syntax::visit::free_names(g, *body).contains(&p.name)),
                _ => false,
            };
            for (k, &a) in args.iter().enumerate() {
                let var = matches!(g.expr(a), Expr::Var(_));
                whole_reads(g, a, var && k > 0 && unused(k), out);
            }
        }
        other => {
            for c in other.children() {
                whole_reads(g, c, false, out);
            }
        }
    })
}

fn residual(
    g: &Module,
    lines: &Lines<'_>,
    name: Name,
    ty: Ty,
    value: Option<ExprId>,
    span: Span,
) -> Residual {
    let computed_by = match value {
        None => "the input".to_string(),
        Some(v) => {
            let text: String = syntax::print::expr(g, v)
                .split_whitespace()
                .collect::<Vec<_>>()
                .join(" ");
            if text.chars().count() > 40 {
                format!("{}…", text.chars().take(39).collect::<String>())
            } else {
                text
            }
        }
    };
    Residual {
        formula: scalars(&ty),
        name,
        ty,
        value,
        at_inputs: None,
        position: lines.position(span),
        computed_by,
        length_only: false,
    }
}

/// Runs the `let` chain of `def` on `args`, returning the residuals, and
/// counts the scalars of each.
fn measure(
    g: &Module,
    def: &Def,
    chain: &[Binding],
    residuals: &mut [Residual],
    args: &[Value],
) -> Result<(), Error> {
    if residuals.is_empty() {
        return Ok(());
    }
    // The evaluator reads no types: the nodes added here have none.
    let mut m = g.clone();
    m.types = Vec::new();
    let vars: Vec<ExprId> = residuals
        .iter()
        .map(|r| m.add(Expr::Var(r.name.clone()), Span::GENERATED))
        .collect();
    let mut body = if vars.len() == 1 {
        vars[0]
    } else {
        m.add(Expr::Tuple(vars), Span::GENERATED)
    };
    for b in chain.iter().rev() {
        body = m.add(
            Expr::Let {
                pat: b.pat.clone(),
                ty: None,
                value: b.value,
                body,
            },
            Span::GENERATED,
        );
    }
    let run = Def {
        body,
        ret: None,
        ..def.clone()
    };
    let out = semantics::eval_def(&m, &run, args).map_err(Error::Eval)?;
    let values: Vec<Value> = if residuals.len() == 1 {
        vec![out]
    } else {
        out.as_tuple().map(<[Value]>::to_vec).unwrap_or_default()
    };
    for (r, v) in residuals.iter_mut().zip(&values) {
        r.at_inputs = Some(count(v));
    }
    Ok(())
}

impl fmt::Display for Report {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        if self.gradients == 0 {
            return writeln!(
                f,
                "residuals of `{}`: none (no parameter, so no reverse pass)",
                self.entry
            );
        }
        let bindings = |n: usize| {
            if n == 1 {
                "1 binding".to_string()
            } else {
                format!("{n} bindings")
            }
        };
        writeln!(
            f,
            "residuals of `{}`: what the reverse pass ({}) keeps from the forward pass ({})",
            self.entry,
            bindings(self.passes.1),
            bindings(self.passes.0)
        )?;
        if self.residuals.is_empty() {
            return writeln!(
                f,
                "  none: the reverse pass reads nothing of the forward pass"
            );
        }
        let rows: Vec<[String; 6]> = self
            .residuals
            .iter()
            .map(|r| {
                [
                    r.name.to_string(),
                    syntax::print::ty(&r.ty),
                    r.formula
                        .as_ref()
                        .map_or_else(|| "?".to_string(), |p| p.to_string()),
                    r.at_inputs.map_or_else(String::new, |n| format!("= {n}")),
                    r.computed_by.clone(),
                    r.position.to_string(),
                ]
            })
            .collect();
        let header = [
            "name",
            "type",
            "scalars",
            "at inputs",
            "computed by",
            "from",
        ];
        let measured_any = rows.iter().any(|r| !r[3].is_empty());
        let w: Vec<usize> = (0..6)
            .map(|k| {
                let cells = rows.iter().map(|r| r[k].chars().count());
                let head = if k == 3 && !measured_any {
                    0
                } else {
                    header[k].len()
                };
                cells.chain([head]).max().unwrap_or(0)
            })
            .collect();
        let line = |cells: [&str; 6]| -> String {
            let mut out = String::from(" ");
            for (k, c) in cells.iter().enumerate() {
                if w[k] == 0 {
                    continue;
                }
                let pad = w[k] - c.chars().count().min(w[k]);
                out.push(' ');
                out.push_str(c);
                if k < 5 {
                    out.push_str(&" ".repeat(pad + 1));
                }
            }
            out.trim_end().to_string()
        };
        writeln!(f, "{}", line(header))?;
        for r in &rows {
            writeln!(f, "{}", line([&r[0], &r[1], &r[2], &r[3], &r[4], &r[5]]))?;
        }
        for r in self.residuals.iter().filter(|r| r.length_only) {
            writeln!(
                f,
                "  ({}: the reverse pass reads only its length; not counted below)",
                r.name
            )?;
        }
        let kept = || self.residuals.iter().filter(|r| !r.length_only);
        let total = kept().try_fold(Poly::constant(0), |acc, r| {
            Some(acc.add(r.formula.as_ref()?))
        });
        let measured: Option<u64> = kept().map(|r| r.at_inputs).sum();
        let formula = total.map_or_else(|| "?".to_string(), |p| p.to_string());
        match measured {
            Some(n) => writeln!(
                f,
                "total: {formula} scalars, {n} at the inputs ({} bytes as f64)",
                n * 8
            ),
            None => writeln!(f, "total: {formula} scalars"),
        }
    }
}
