//! The term graph of a Source or Target module, with sharing.

use syntax::fxhash::FxHashMap;
use syntax::stack::guard;
use syntax::{Expr, ExprId, Module, Name, Pat, Prim};

use super::{Dot, INPUT as PARAM, OUTPUT as RESULT};

const OP: &str = "shape=box, style=rounded";
const CONST: &str = "shape=plaintext";
const BRANCH: &str = "shape=diamond";

/// The term graph of every definition of `m`; `ir` names the IR in the
/// title (`source`, `target`).
pub fn term(m: &Module, ir: &str) -> String {
    let title = m.defs.last().map_or("module", |d| d.name.as_str());
    let mut g = Graph {
        m,
        dot: Dot::new(
            title,
            "rankdir=TB; compound=true; labeljust=l; fontname=\"Helvetica\";",
        ),
        env: FxHashMap::default(),
        pending: None,
        named: None,
    };
    for def in &m.defs {
        let mut head = format!("{ir}: def {}", def.name);
        for p in &def.params {
            match &p.ty {
                Some(t) => head.push_str(&format!(" ({} : {t})", p.name)),
                None => head.push_str(&format!(" {}", p.name)),
            }
        }
        if let Some(t) = &def.ret {
            head.push_str(&format!(" : {t}"));
        }
        g.dot.begin_cluster(&head, "");
        for p in &def.params {
            let ty = p.ty.as_ref().map(|t| format!("\n{t}")).unwrap_or_default();
            let n = g.dot.node(&format!("{}{ty}", p.name), PARAM);
            g.env.insert(p.name.clone(), n);
        }
        let body = g.expr(def.body);
        let ret = def
            .ret
            .as_ref()
            .map(|t| format!("\n{t}"))
            .unwrap_or_default();
        let out = g.dot.node(&format!("result{ret}"), RESULT);
        g.dot.edge(&body, &out, "", "");
        g.dot.end_cluster();
    }
    g.dot.finish()
}

struct Graph<'a> {
    m: &'a Module,
    dot: Dot,
    /// The vertex each name stands for.
    env: FxHashMap<Name, String>,
    /// The name a `let` binds to the vertex being made, shown in its label.
    pending: Option<Name>,
    /// The last vertex that took a pending name.
    named: Option<String>,
}

impl Graph<'_> {
    /// The vertex of `id`'s value (an existing one for a variable).
    fn expr(&mut self, id: ExprId) -> String {
        guard(|| self.expr_inner(id))
    }

    fn op(
        &mut self,
        id: ExprId,
        name: Option<Name>,
        label: &str,
        style: &str,
        operands: &[(ExprId, String)],
    ) -> String {
        let label = match &name {
            Some(x) => format!("{x} = {label}"),
            None => label.to_string(),
        };
        let took_name = name.is_some();
        let ty = self.m.ty(id).map(|t| format!("\n{t}")).unwrap_or_default();
        let ins: Vec<(String, String)> = operands
            .iter()
            .map(|(o, l)| (self.expr(*o), l.clone()))
            .collect();
        let n = self.dot.node(&format!("{label}{ty}"), style);
        if took_name {
            self.named = Some(n.clone());
        }
        for (from, l) in ins {
            self.dot.edge(&from, &n, &l, "");
        }
        n
    }

    fn expr_inner(&mut self, id: ExprId) -> String {
        let m = self.m;
        // Taken before the operands are drawn, which must not see it.
        let name = self.pending.take();
        let Some(e) = m.exprs.get(id.index()) else {
            return self.dot.node(&format!("<invalid {id}>"), CONST);
        };
        let numbered = |args: &[ExprId]| -> Vec<(ExprId, String)> {
            let label = args.len() > 1;
            args.iter()
                .enumerate()
                .map(|(i, a)| {
                    (
                        *a,
                        if label {
                            (i + 1).to_string()
                        } else {
                            String::new()
                        },
                    )
                })
                .collect()
        };
        match e {
            Expr::Var(x) => match self.env.get(x) {
                Some(n) => n.clone(),
                None => self.dot.node(x.as_str(), CONST),
            },
            Expr::Real(x) => self.dot.node(&syntax::print::real(*x), CONST),
            Expr::Reals(literal) => {
                // A few numbers are drawn as written, more by their shape.
                let mut label = String::new();
                if literal.data.len() <= 8 {
                    syntax::print::reals(literal, &mut label);
                } else {
                    label = format!("{} literal", syntax::print::ty(&literal.ty()));
                }
                self.dot.node(&label, CONST)
            }
            Expr::Int(k) => self.dot.node(&k.to_string(), CONST),
            Expr::Bool(b) => self.dot.node(&b.to_string(), CONST),
            Expr::Section(p) => self.dot.node(&format!("({p})"), CONST),
            Expr::Let {
                pat, value, body, ..
            } => {
                if let Pat::Var(x) = pat {
                    self.pending = Some(x.clone());
                }
                let v = self.expr(*value);
                self.pending = None;
                match pat {
                    // A vertex that did not take the name (a variable, a
                    // constant, a lambda) gets a note beside it.
                    Pat::Var(x) if self.named.as_deref() != Some(v.as_str()) => self.name(&v, x),
                    Pat::Var(x) => {
                        self.env.insert(x.clone(), v);
                    }
                    Pat::Tuple(xs) => {
                        for (i, x) in xs.iter().enumerate() {
                            let c = self.dot.node(&format!("{x} = .{}", i + 1), CONST);
                            self.dot.edge(&v, &c, "", "");
                            self.env.insert(x.clone(), c);
                        }
                    }
                }
                self.expr(*body)
            }
            Expr::Tuple(items) => self.op(id, name, "( , )", OP, &numbered(items)),
            Expr::Proj { tuple, index } => self.op(
                id,
                name,
                &format!(".{index}"),
                OP,
                &[(*tuple, String::new())],
            ),
            Expr::If {
                cond,
                then_branch,
                else_branch,
            } => self.op(
                id,
                name,
                "if",
                BRANCH,
                &[
                    (*cond, "cond".to_string()),
                    (*then_branch, "then".to_string()),
                    (*else_branch, "else".to_string()),
                ],
            ),
            Expr::Lambda { params, body } => {
                let names: Vec<&str> = params.iter().map(|p| p.name.as_str()).collect();
                let head = format!("fun ({})", names.join(", "));
                self.dot.begin_cluster(&head, "style=dashed;");
                for p in params {
                    let ty = p.ty.as_ref().map(|t| format!("\n{t}")).unwrap_or_default();
                    let n = self.dot.node(&format!("{}{ty}", p.name), PARAM);
                    self.env.insert(p.name.clone(), n);
                }
                let b = self.expr(*body);
                let ty = m.ty(id).map(|t| format!("\n{t}")).unwrap_or_default();
                let f = self.dot.node(&format!("{head}{ty}"), "shape=box");
                self.dot.edge(&b, &f, "", "");
                self.dot.end_cluster();
                f
            }
            Expr::App { func, args } => {
                let mut ops = vec![(*func, "fun".to_string())];
                ops.extend(numbered(args));
                self.op(id, name, "apply", OP, &ops)
            }
            Expr::Prim { op, args } => {
                let label = match op.fixity() {
                    syntax::Fixity::Named => op.symbol().to_string(),
                    _ if *op == Prim::Neg => "neg".to_string(),
                    _ => op.symbol().to_string(),
                };
                self.op(id, name, &label, OP, &numbered(args))
            }
            Expr::Array(items) => self.op(id, name, "[ , ]", OP, &numbered(items)),
            Expr::Index { array, index } => self.op(
                id,
                name,
                "a[i]",
                OP,
                &[(*array, "a".to_string()), (*index, "i".to_string())],
            ),
        }
    }

    /// Binds `x` to vertex `n` and shows the name in a note beside it.
    fn name(&mut self, n: &str, x: &Name) {
        self.env.insert(x.clone(), n.to_string());
        let note = self
            .dot
            .node(x.as_str(), "shape=note, fontsize=9, fontcolor=\"#555555\"");
        self.dot.edge(&note, n, "", "style=dotted, arrowhead=none");
    }
}
