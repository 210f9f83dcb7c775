//! The generator's own small typed AST of Source programs: printed to
//! program text (which the tests compile with `syntax::compile`, so the
//! whole front end is exercised), evaluated here with a check that every
//! partial operation is applied away from its singular points, counted for
//! coverage, and rewritten by the shrinker.
//!
//! Types are those of Section 3 plus tuples: `R`, `[n]R` / `[m]R` (two
//! size variables, so that programs mix arrays of different lengths), and
//! tuples of them. Every name is unique in a program.

use semantics::Value;
use std::collections::BTreeMap;
use std::fmt::Write;
use syntax::Prim;

/// A type of a generated program.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum GTy {
    /// `R`.
    Real,
    /// `[n]R` (size 0) or `[m]R` (size 1).
    Array(usize),
    /// `(T1, ..., Tk)`, k >= 2.
    Tuple(Vec<GTy>),
}

/// The names of the size variables.
pub const SIZE_NAMES: [&str; 2] = ["n", "m"];

impl GTy {
    /// The type as written in programs.
    pub fn text(&self) -> String {
        match self {
            GTy::Real => "R".to_string(),
            GTy::Array(s) => format!("[{}]R", SIZE_NAMES[*s]),
            GTy::Tuple(ts) => {
                let items: Vec<String> = ts.iter().map(GTy::text).collect();
                format!("({})", items.join(", "))
            }
        }
    }
}

/// An expression of a generated program.
#[derive(Debug, Clone, PartialEq)]
pub enum GExpr {
    /// A non-negative real constant.
    Const(f64),
    /// A variable.
    Var(String),
    /// `let x = e1 in e2`.
    Let(String, Box<GExpr>, Box<GExpr>),
    /// `let (x1, ..., xk) = e1 in e2`.
    LetTuple(Vec<String>, Box<GExpr>, Box<GExpr>),
    /// `(e1, ..., ek)`.
    Tuple(Vec<GExpr>),
    /// `e.i`, 1-based.
    Proj(Box<GExpr>, usize),
    /// A unary operator on reals.
    Op1(Prim, Box<GExpr>),
    /// A binary operator on reals.
    Op2(Prim, Box<GExpr>, Box<GExpr>),
    /// `map (fun x -> body) A`.
    Map(String, Box<GExpr>, Box<GExpr>),
    /// `map2 (fun (x, y) -> body) A B`.
    Map2(String, String, Box<GExpr>, Box<GExpr>, Box<GExpr>),
    /// `reduce (fun (x, y) -> body) init A`.
    Reduce(String, String, Box<GExpr>, Box<GExpr>, Box<GExpr>),
}

/// A generated program: one definition `f`.
#[derive(Debug, Clone, PartialEq)]
pub struct Program {
    /// The parameters.
    pub params: Vec<(String, GTy)>,
    /// The result type: `R`, or an array for the dot-product test.
    pub ret: GTy,
    /// The body.
    pub body: GExpr,
}

/// A value of a generated program.
#[derive(Debug, Clone, PartialEq)]
pub enum GVal {
    /// A real.
    Real(f64),
    /// An array of reals.
    Array(Vec<f64>),
    /// A tuple.
    Tuple(Vec<GVal>),
}

impl GVal {
    /// The same value in the evaluator's representation.
    pub fn to_value(&self) -> Value {
        match self {
            GVal::Real(x) => Value::Real(*x),
            GVal::Array(xs) => Value::reals(xs),
            GVal::Tuple(vs) => Value::tuple(vs.iter().map(GVal::to_value).collect()),
        }
    }
}

impl GExpr {
    /// The direct children.
    pub fn children(&self) -> Vec<&GExpr> {
        match self {
            GExpr::Const(_) | GExpr::Var(_) => vec![],
            GExpr::Let(_, a, b) | GExpr::LetTuple(_, a, b) | GExpr::Op2(_, a, b) => {
                vec![a, b]
            }
            GExpr::Map(_, a, b) => vec![a, b],
            GExpr::Tuple(items) => items.iter().collect(),
            GExpr::Proj(a, _) | GExpr::Op1(_, a) => vec![a],
            GExpr::Map2(_, _, a, b, c) | GExpr::Reduce(_, _, a, b, c) => vec![a, b, c],
        }
    }

    /// The number of nodes.
    pub fn size(&self) -> usize {
        1 + self.children().iter().map(|c| c.size()).sum::<usize>()
    }

    /// Whether `name` occurs in this expression.
    pub fn mentions(&self, name: &str) -> bool {
        match self {
            GExpr::Var(n) => n == name,
            _ => self.children().iter().any(|c| c.mentions(name)),
        }
    }

    /// The expression as program text, fully parenthesized.
    pub fn text(&self) -> String {
        let mut out = String::new();
        self.write(&mut out);
        out
    }

    fn write(&self, out: &mut String) {
        match self {
            GExpr::Const(c) => out.push_str(&semantics::format_real(*c)),
            GExpr::Var(n) => out.push_str(n),
            GExpr::Let(x, v, b) => {
                let _ = write!(out, "(let {x} = ");
                v.write(out);
                out.push_str(" in ");
                b.write(out);
                out.push(')');
            }
            GExpr::LetTuple(xs, v, b) => {
                let _ = write!(out, "(let ({}) = ", xs.join(", "));
                v.write(out);
                out.push_str(" in ");
                b.write(out);
                out.push(')');
            }
            GExpr::Tuple(items) => {
                out.push('(');
                for (i, e) in items.iter().enumerate() {
                    if i > 0 {
                        out.push_str(", ");
                    }
                    e.write(out);
                }
                out.push(')');
            }
            GExpr::Proj(e, i) => {
                out.push('(');
                e.write(out);
                let _ = write!(out, ").{i}");
            }
            GExpr::Op1(Prim::Neg, e) => {
                out.push_str("(- ");
                e.write(out);
                out.push(')');
            }
            GExpr::Op1(op, e) => {
                let _ = write!(out, "({} ", op.symbol());
                e.write(out);
                out.push(')');
            }
            GExpr::Op2(op @ (Prim::Pow | Prim::Max | Prim::Min), a, b) => {
                let _ = write!(out, "({} ", op.symbol());
                a.write(out);
                out.push(' ');
                b.write(out);
                out.push(')');
            }
            GExpr::Op2(op, a, b) => {
                out.push('(');
                a.write(out);
                let _ = write!(out, " {} ", op.symbol());
                b.write(out);
                out.push(')');
            }
            GExpr::Map(x, body, a) => {
                let _ = write!(out, "(map (fun {x} -> ");
                body.write(out);
                out.push_str(") ");
                a.write(out);
                out.push(')');
            }
            GExpr::Map2(x, y, body, a, b) => {
                let _ = write!(out, "(map2 (fun ({x}, {y}) -> ");
                body.write(out);
                out.push_str(") ");
                a.write(out);
                out.push(' ');
                b.write(out);
                out.push(')');
            }
            GExpr::Reduce(x, y, body, init, a) => {
                let _ = write!(out, "(reduce (fun ({x}, {y}) -> ");
                body.write(out);
                out.push_str(") ");
                init.write(out);
                out.push(' ');
                a.write(out);
                out.push(')');
            }
        }
    }

    /// Counts each construct (by name) into `counts`; returns the depth of
    /// nested array operations (NAO) of this expression.
    pub fn count(&self, counts: &mut BTreeMap<String, u64>) -> u32 {
        let name = match self {
            GExpr::Const(_) => "const".to_string(),
            GExpr::Var(_) => "var".to_string(),
            GExpr::Let(..) => "let".to_string(),
            GExpr::LetTuple(..) => "let-tuple".to_string(),
            GExpr::Tuple(_) => "tuple".to_string(),
            GExpr::Proj(..) => "proj".to_string(),
            GExpr::Op1(op, _) if *op == Prim::Neg => "neg".to_string(),
            GExpr::Op1(op, _) | GExpr::Op2(op, ..) => op.symbol().to_string(),
            GExpr::Map(..) => "map".to_string(),
            GExpr::Map2(..) => "map2".to_string(),
            GExpr::Reduce(..) => "reduce".to_string(),
        };
        *counts.entry(name).or_insert(0) += 1;
        let inner = self
            .children()
            .iter()
            .map(|c| c.count(counts))
            .max()
            .unwrap_or(0);
        let (body_nao, is_array_op) = match self {
            GExpr::Map(_, body, _)
            | GExpr::Map2(_, _, body, _, _)
            | GExpr::Reduce(_, _, body, _, _) => (body.count(&mut BTreeMap::new()), true),
            _ => (0, false),
        };
        if is_array_op {
            inner.max(body_nao + 1)
        } else {
            inner
        }
    }
}

impl Program {
    /// The program text: `-- at` lines for the inputs (if given), then the
    /// definition.
    pub fn text(&self, inputs: Option<&[GVal]>) -> String {
        let mut out = String::new();
        if let Some(inputs) = inputs {
            for ((name, _), v) in self.params.iter().zip(inputs) {
                let _ = writeln!(out, "-- at {name} = {}", v.to_value());
            }
        }
        out.push_str("def f");
        for (name, ty) in &self.params {
            let _ = write!(out, " ({name} : {})", ty.text());
        }
        let _ = write!(out, " : {} =\n  ", self.ret.text());
        out.push_str(&self.body.text());
        out.push('\n');
        out
    }

    /// The definition in the printer's layout (`syntax::print::module` of
    /// the parsed text): how fixture files are written.
    pub fn printed(&self) -> String {
        let text = self.text(None);
        let file = syntax::SourceFile {
            name: "generated.ad".to_string(),
            text: text.clone(),
        };
        match syntax::parse(file) {
            Ok(m) => syntax::print::module(&m),
            Err(_) => text,
        }
    }

    /// The program as a compiled core-form module.
    pub fn compile(&self) -> Result<syntax::Module, syntax::Error> {
        syntax::compile(syntax::SourceFile {
            name: "generated.ad".to_string(),
            text: self.text(None),
        })
    }

    /// Inputs by parameter name, as the evaluator takes them.
    pub fn named_inputs(&self, inputs: &[GVal]) -> Vec<(String, Value)> {
        self.params
            .iter()
            .zip(inputs)
            .map(|((n, _), v)| (n.clone(), v.to_value()))
            .collect()
    }
}

/// Why a program may not be run at some inputs.
#[derive(Debug, Clone, PartialEq)]
pub struct Singular(pub String);

/// How far from a singular point a partial operation must be applied.
const MARGIN: f64 = 1e-2;
/// The largest magnitude a value may take (keeps finite differences sane).
const BOUND: f64 = 1e6;

/// Evaluates `e` in `env`, refusing to apply a partial or non-smooth
/// operation within `MARGIN` of a singular point or to produce a value
/// beyond `BOUND`.
pub fn eval(e: &GExpr, env: &mut Vec<(String, GVal)>) -> Result<GVal, Singular> {
    let real = |v: GVal| match v {
        GVal::Real(x) => Ok(x),
        other => Err(Singular(format!("expected a real, got {other:?}"))),
    };
    let array = |v: GVal| match v {
        GVal::Array(xs) => Ok(xs),
        other => Err(Singular(format!("expected an array, got {other:?}"))),
    };
    let v = match e {
        GExpr::Const(c) => GVal::Real(*c),
        GExpr::Var(n) => env
            .iter()
            .rev()
            .find(|(m, _)| m == n)
            .map(|(_, v)| v.clone())
            .ok_or_else(|| Singular(format!("unbound {n}")))?,
        GExpr::Let(x, v, b) => {
            let v = eval(v, env)?;
            env.push((x.clone(), v));
            let r = eval(b, env);
            env.pop();
            r?
        }
        GExpr::LetTuple(xs, v, b) => {
            let GVal::Tuple(vs) = eval(v, env)? else {
                return Err(Singular("expected a tuple".to_string()));
            };
            let k = xs.len();
            env.extend(xs.iter().cloned().zip(vs));
            let r = eval(b, env);
            env.truncate(env.len() - k);
            r?
        }
        GExpr::Tuple(items) => GVal::Tuple(
            items
                .iter()
                .map(|i| eval(i, env))
                .collect::<Result<_, _>>()?,
        ),
        GExpr::Proj(t, i) => match eval(t, env)? {
            GVal::Tuple(mut vs) if *i >= 1 && *i <= vs.len() => vs.swap_remove(*i - 1),
            _ => return Err(Singular("bad projection".to_string())),
        },
        GExpr::Op1(op, a) => GVal::Real(op1(*op, real(eval(a, env)?)?)?),
        GExpr::Op2(op, a, b) => {
            let x = real(eval(a, env)?)?;
            let y = real(eval(b, env)?)?;
            GVal::Real(op2(*op, x, y)?)
        }
        GExpr::Map(x, body, a) => {
            let xs = array(eval(a, env)?)?;
            let mut out = Vec::with_capacity(xs.len());
            for v in xs {
                env.push((x.clone(), GVal::Real(v)));
                let r = eval(body, env);
                env.pop();
                out.push(real(r?)?);
            }
            GVal::Array(out)
        }
        GExpr::Map2(x, y, body, a, b) => {
            let xs = array(eval(a, env)?)?;
            let ys = array(eval(b, env)?)?;
            if xs.len() != ys.len() {
                return Err(Singular("map2 of arrays of different lengths".to_string()));
            }
            let mut out = Vec::with_capacity(xs.len());
            for (u, v) in xs.into_iter().zip(ys) {
                env.push((x.clone(), GVal::Real(u)));
                env.push((y.clone(), GVal::Real(v)));
                let r = eval(body, env);
                env.truncate(env.len() - 2);
                out.push(real(r?)?);
            }
            GVal::Array(out)
        }
        GExpr::Reduce(x, y, body, init, a) => {
            let mut acc = real(eval(init, env)?)?;
            let xs = array(eval(a, env)?)?;
            for v in xs {
                env.push((x.clone(), GVal::Real(acc)));
                env.push((y.clone(), GVal::Real(v)));
                let r = eval(body, env);
                env.truncate(env.len() - 2);
                acc = real(r?)?;
            }
            GVal::Real(acc)
        }
    };
    Ok(v)
}

fn bounded(x: f64, what: &str) -> Result<f64, Singular> {
    if x.is_finite() && x.abs() <= BOUND {
        Ok(x)
    } else {
        Err(Singular(format!("{what} gives {x}")))
    }
}

fn op1(op: Prim, x: f64) -> Result<f64, Singular> {
    let near = |what: &str| {
        Err(Singular(format!(
            "{} applied at {x}, near {what}",
            op.symbol()
        )))
    };
    let r = match op {
        Prim::Neg => -x,
        Prim::Sin => x.sin(),
        Prim::Cos => x.cos(),
        Prim::Tan if x.cos().abs() < MARGIN => return near("a pole"),
        Prim::Tan => x.tan(),
        Prim::Exp => x.exp(),
        Prim::Log | Prim::Sqrt if x < MARGIN => return near("the edge of its domain"),
        Prim::Log => x.ln(),
        Prim::Sqrt => x.sqrt(),
        Prim::Tanh => x.tanh(),
        Prim::Abs if x.abs() < MARGIN => return near("its kink"),
        Prim::Abs => x.abs(),
        other => return Err(Singular(format!("not a unary operator: {other}"))),
    };
    bounded(r, op.symbol())
}

fn op2(op: Prim, x: f64, y: f64) -> Result<f64, Singular> {
    let near = |what: &str| {
        Err(Singular(format!(
            "{} applied at ({x}, {y}), near {what}",
            op.symbol()
        )))
    };
    let r = match op {
        Prim::Add => x + y,
        Prim::Sub => x - y,
        Prim::Mul => x * y,
        Prim::Div if y.abs() < MARGIN => return near("a division by zero"),
        Prim::Div => x / y,
        Prim::Pow if x < MARGIN => return near("a non-positive base"),
        Prim::Pow => x.powf(y),
        Prim::Max | Prim::Min if (x - y).abs() < MARGIN => return near("a tie"),
        Prim::Max => x.max(y),
        Prim::Min => x.min(y),
        other => return Err(Singular(format!("not a binary operator: {other}"))),
    };
    bounded(r, op.symbol())
}
