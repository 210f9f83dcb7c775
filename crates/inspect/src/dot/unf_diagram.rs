//! A UNF module as a string diagram (seeds/000 Fig. 6, 7; Section 6.2's
//! concategories): contexts as wires, primitives as boxes.
//!
//! The diagram follows the term from its input context to its output: a
//! list of wires, one per context entry. A primitive `T_in ⊢ p : T_out`
//! reads some wires (its operands), consumes some (`pair`, `array`, the
//! dropped part of `proj`) and appends its result; the wires it does not
//! touch pass by. `<e1, e2>` runs both terms on the same wires (the
//! shared ones are copies, drawn as two edges from one source) and puts
//! their outputs side by side; `e1 ∘ J^T p` is a box that takes the
//! continuation e1 makes and returns a new one, reading p's primal
//! operands (dotted: those reads are what the reverse pass keeps).

use syntax::stack::guard;
use unf::{Checked, CtxId, Fun, Module, Op, Prim, Tables, Term, TermId, TyId, UTy};

use super::{Dot, INPUT as PORT, OUTPUT as OUT};

const BOX: &str = "shape=box";
const FUSED: &str = "shape=box, style=filled, fillcolor=\"#fdf1d8\"";
const LINEAR: &str = "shape=box, style=\"rounded,filled\", fillcolor=\"#f6dede\"";

/// The string diagram of a verified UNF module (`checked` is what its
/// verifier computed).
pub fn string_diagram(m: &Module, checked: &Checked) -> String {
    let mut d = Diagram {
        m,
        t: &checked.tables,
        io: &checked.io,
        dot: Dot::new(
            m.entry.as_str(),
            "rankdir=LR; compound=true; labeljust=l; fontname=\"Helvetica\"; newrank=true;",
        ),
    };
    let head = format!("{}: {}", m.kind.ir_name(), m.entry);
    d.dot.begin_cluster(&head, "");
    let names: Vec<String> = m
        .entry_def()
        .map(|def| def.params.iter().map(|p| p.name.to_string()).collect())
        .unwrap_or_default();
    let inputs = d.ports(m.input, &names);
    let outs = d.sim(m.root, inputs);
    d.outputs(&outs);
    d.dot.end_cluster();
    d.dot.finish()
}

/// A context entry in the diagram: the vertex that made it and its type.
#[derive(Clone)]
struct Wire {
    from: String,
    ty: TyId,
}

struct Diagram<'a> {
    m: &'a Module,
    t: &'a Tables,
    io: &'a [(CtxId, CtxId)],
    dot: Dot,
}

impl Diagram<'_> {
    /// The label of a wire's type; continuations are `κ`.
    fn ty_label(&self, ty: TyId) -> (String, bool) {
        match self.t.tys().get(ty.index()) {
            Some(UTy::Ground(g)) => (unf::print::ground(g), false),
            Some(UTy::Cont(..)) => ("κ".to_string(), true),
            None => ("?".to_string(), false),
        }
    }

    fn wire_to(&mut self, w: &Wire, to: &str, primal_point: bool) {
        let (label, cont) = self.ty_label(w.ty);
        let style = if primal_point {
            "style=dotted, color=\"#888888\""
        } else if cont {
            "style=dashed, color=\"#b03030\""
        } else {
            ""
        };
        self.dot.edge(&w.from, to, &label, style);
    }

    /// One input vertex per entry of context `c`, named by `names` first.
    fn ports(&mut self, c: CtxId, names: &[String]) -> Vec<Wire> {
        let entries = self.t.entries(c);
        let mut ids = Vec::new();
        let wires = entries
            .iter()
            .enumerate()
            .map(|(i, &ty)| {
                let (label, cont) = self.ty_label(ty);
                let label = match names.get(i) {
                    Some(n) if !cont => format!("{n} : {label}"),
                    _ => label,
                };
                let from = self.dot.node(&label, PORT);
                ids.push(from.clone());
                Wire { from, ty }
            })
            .collect();
        if !ids.is_empty() {
            self.dot.raw(&format!("{{rank=same; {}}}", ids.join("; ")));
        }
        wires
    }

    fn outputs(&mut self, wires: &[Wire]) {
        let mut ids = Vec::new();
        for w in wires {
            let (label, _) = self.ty_label(w.ty);
            let n = self.dot.node(&label, OUT);
            self.wire_to(w, &n, false);
            ids.push(n);
        }
        if !ids.is_empty() {
            self.dot.raw(&format!("{{rank=same; {}}}", ids.join("; ")));
        }
    }

    fn out_entries(&self, t: TermId) -> Vec<TyId> {
        self.io
            .get(t.index())
            .map(|(_, out)| self.t.entries(*out))
            .unwrap_or_default()
    }

    fn sim(&mut self, t: TermId, state: Vec<Wire>) -> Vec<Wire> {
        guard(|| self.sim_inner(t, state))
    }

    fn sim_inner(&mut self, t: TermId, state: Vec<Wire>) -> Vec<Wire> {
        let m = self.m;
        match m.term(t) {
            Term::Seq(a, b) | Term::Weak(a, b) => {
                let s = self.sim(*a, state);
                self.sim(*b, s)
            }
            Term::Tuple(a, b) => {
                let mut s = self.sim(*a, state.clone());
                s.extend(self.sim(*b, state));
                s
            }
            Term::Compose(a, b) => {
                let k = self.sim(*a, state.clone());
                let (label, reads, funs) = match m.term(*b) {
                    Term::Jt(p) => (format!("∘ J^T {}", label(p)), operands(self.t, p), p.funs()),
                    _ => ("∘ (linear map)".to_string(), Vec::new(), Vec::new()),
                };
                let n = self.dot.node(&label, LINEAR);
                for w in &k {
                    self.wire_to(w, &n, false);
                }
                for r in reads {
                    if let Some(w) = state.get(r) {
                        self.wire_to(&w.clone(), &n, true);
                    }
                }
                self.bodies(&n, &funs, None);
                let out = self.out_entries(t);
                out.last()
                    .map(|&ty| vec![Wire { from: n, ty }])
                    .unwrap_or_default()
            }
            Term::Prim(p) => self.prim(t, p, state, false),
            Term::Fused(p, _) => self.prim(t, p, state, true),
            Term::Jt(p) => {
                let n = self.dot.node(&format!("J^T {}", label(p)), LINEAR);
                for w in &state {
                    self.wire_to(w, &n, false);
                }
                self.out_entries(t)
                    .into_iter()
                    .map(|ty| Wire {
                        from: n.clone(),
                        ty,
                    })
                    .collect()
            }
        }
    }

    fn prim(&mut self, t: TermId, p: &Prim, mut state: Vec<Wire>, fused: bool) -> Vec<Wire> {
        let k = if fused { state.pop() } else { None };
        let text = if fused {
            format!("F {}", label(p))
        } else {
            label(p)
        };
        let n = self.dot.node(&text, if fused { FUSED } else { BOX });
        for r in operands(self.t, p) {
            if let Some(w) = state.get(r) {
                self.wire_to(&w.clone(), &n, false);
            }
        }
        let consumed = consumed(self.t, p);
        if consumed.start <= consumed.end && consumed.end <= state.len() {
            state.drain(consumed);
        }
        let out = self.out_entries(t);
        // The primal result is the last entry of the output, or the one
        // before the new continuation of a fused primitive.
        let result = if fused {
            out.len().checked_sub(2).and_then(|i| out.get(i))
        } else {
            out.last()
        };
        if !matches!(p, Prim::Proj(..))
            && let Some(&ty) = result
        {
            state.push(Wire {
                from: n.clone(),
                ty,
            });
        }
        if let Some(k) = k {
            self.wire_to(&k, &n, false);
            if let Some(&ty) = out.last() {
                state.push(Wire {
                    from: n.clone(),
                    ty,
                });
            }
        }
        let init = match p {
            Prim::Reduce { init, .. } => Some(*init),
            _ => None,
        };
        self.bodies(&n, &p.funs(), init);
        state
    }

    /// The bodies of a primitive's functions (and the initial value of
    /// `reduce`), each a diagram inside a box joined to the primitive.
    fn bodies(&mut self, owner: &str, funs: &[&Fun], init: Option<TermId>) {
        let branch_names = ["then", "else"];
        let many = funs.len() > 1;
        for (i, f) in funs.iter().enumerate() {
            let names = self.param_names(f);
            let title = if many {
                branch_names
                    .get(i)
                    .copied()
                    .unwrap_or("function")
                    .to_string()
            } else {
                "function".to_string()
            };
            self.nested(owner, &title, f.body, &names);
        }
        if let Some(init) = init {
            self.nested(owner, "initial value", init, &[]);
        }
    }

    /// The names of a function's context: its free variables (`#i`, their
    /// positions in the primitive's context) and then its parameters.
    fn param_names(&self, f: &Fun) -> Vec<String> {
        let mut names: Vec<String> = f.free.iter().map(|i| format!("#{i}")).collect();
        if let Some(syntax::Expr::Lambda { params, .. }) = self.m.source.exprs.get(f.lambda.index())
        {
            names.extend(params.iter().map(|p| p.name.to_string()));
        }
        names
    }

    fn nested(&mut self, owner: &str, title: &str, body: TermId, names: &[String]) {
        let Some(&(input, _)) = self.io.get(body.index()) else {
            return;
        };
        self.dot
            .begin_cluster(title, "style=rounded; color=\"#999999\";");
        // The first vertex of the box: an input port, or the first
        // primitive of a closed term (the initial value of `reduce`).
        let first = self.dot.peek();
        let ins = self.ports(input, names);
        let outs = self.sim(body, ins);
        self.outputs(&outs);
        self.dot.edge(
            owner,
            &first,
            "",
            "style=dotted, arrowhead=odot, color=\"#999999\"",
        );
        self.dot.end_cluster();
    }
}

/// A primitive's box label in the paper's names: `var 2`, `*`, `π1`,
/// `pair`, `proj`, `map x`, `reduce`.
fn label(p: &Prim) -> String {
    match p {
        Prim::Var(_, i) => format!("var {i}"),
        Prim::Op(_, op) => match op {
            Op::Const(x) => syntax::print::real(*x),
            // The literal's numbers may be many: its type says enough.
            Op::Reals { .. } => "reals".to_string(),
            Op::Unary(o) | Op::Binary(o) => o.symbol().to_string(),
            Op::Proj { index, .. } => format!("π{index}"),
            Op::Int(k) => k.to_string(),
            Op::Bool(b) => b.to_string(),
            Op::Builtin { op, .. } => op.symbol().to_string(),
            Op::Index { .. } => "index".to_string(),
        },
        other => other.name().to_string(),
    }
}

/// The number of operands an operator reads from the end of its context.
fn op_arity(t: &Tables, op: &Op) -> usize {
    match op {
        Op::Const(_) | Op::Reals { .. } | Op::Int(_) | Op::Bool(_) => 0,
        Op::Unary(_) | Op::Proj { .. } => 1,
        Op::Binary(_) | Op::Index { .. } => 2,
        Op::Builtin { args, .. } => t.len(*args) as usize,
    }
}

/// The positions (0-based) of `T_in(p)` that `p` reads or consumes.
fn operands(t: &Tables, p: &Prim) -> Vec<usize> {
    let last = |ctx: &CtxId, n: usize| -> Vec<usize> {
        let base = t.len(*ctx) as usize;
        (base..base + n).collect()
    };
    let free = |funs: Vec<&Fun>| -> Vec<usize> {
        let mut out: Vec<usize> = funs
            .iter()
            .flat_map(|f| f.free.iter().map(|&i| (i as usize).saturating_sub(1)))
            .collect();
        out.sort_unstable();
        out.dedup();
        out
    };
    match p {
        Prim::Var(_, i) => vec![(*i as usize).saturating_sub(1)],
        Prim::Op(ctx, op) => last(ctx, op_arity(t, op)),
        Prim::Pair(ctx, ty) => {
            let k = match t.ground_ty(*ty) {
                Some(syntax::Ty::Tuple(items)) => items.len(),
                _ => 0,
            };
            last(ctx, k)
        }
        Prim::Proj(keep, drop, _) => {
            let base = t.len(*keep) as usize;
            (base..base + t.len(*drop) as usize).collect()
        }
        Prim::Array { ctx, len, .. } => last(ctx, *len as usize),
        Prim::Map { ctx, args, fun, .. } => {
            let mut out = free(vec![fun]);
            out.extend(last(ctx, args.len()));
            out
        }
        Prim::Reduce { ctx, .. } | Prim::Custom { ctx, .. } => last(ctx, 1),
        Prim::If { ctx, .. } => {
            let mut out = free(p.funs());
            out.extend(last(ctx, 1));
            out
        }
        Prim::Loop { kind, ctx, fun, .. } => {
            let mut out = free(vec![fun]);
            out.extend(last(ctx, kind.operands()));
            out
        }
        Prim::Trips { ctx, .. } => {
            let mut out = free(p.funs());
            out.extend(last(ctx, 1));
            out
        }
    }
}

/// The positions of `T_in(p)` that `p` removes from its context.
fn consumed(t: &Tables, p: &Prim) -> std::ops::Range<usize> {
    match p {
        Prim::Pair(..) | Prim::Array { .. } | Prim::Proj(..) => {
            let ops = operands(t, p);
            match (ops.first(), ops.last()) {
                (Some(&a), Some(&b)) => a..b + 1,
                _ => 0..0,
            }
        }
        _ => 0..0,
    }
}
