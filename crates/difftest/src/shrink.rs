//! The shrinker: greedily replaces parts of a failing program by smaller
//! ones (a subexpression by one of its children, a constant or a
//! parameter), drops unused parameters, shortens arrays and rounds inputs,
//! keeping each step that still compiles, still has admissible inputs and
//! still fails the same check. Candidates are tried from the root down, so
//! the large cuts come first.

use crate::ast::{GExpr, GTy, GVal, Program};
use crate::fuzz::{Disagreement, check_case};
use crate::generate::value_at;

/// How many candidates one shrink may try.
const BUDGET: usize = 4000;

/// A smaller program and inputs failing the same check of [`check_case`]
/// as `d`.
pub fn shrink(
    p: Program,
    inputs: Vec<GVal>,
    d: Disagreement,
    subset: bool,
) -> (Program, Vec<GVal>, Disagreement) {
    shrink_with(p, inputs, d, |p, i| check_case(p, i, subset).err())
}

/// A smaller program and inputs on which `failing` still reports the same
/// check as `d` (`failing` returns the disagreement, or `None` on success).
pub fn shrink_with(
    mut p: Program,
    mut inputs: Vec<GVal>,
    mut d: Disagreement,
    mut failing: impl FnMut(&Program, &[GVal]) -> Option<Disagreement>,
) -> (Program, Vec<GVal>, Disagreement) {
    let mut tried = 0;
    'outer: loop {
        for (cp, ci) in candidates(&p, &inputs) {
            if tried >= BUDGET {
                break 'outer;
            }
            tried += 1;
            if cp.compile().is_err() || value_at(&cp, &ci).is_none() {
                continue;
            }
            if let Some(nd) = failing(&cp, &ci)
                && nd.check == d.check
            {
                p = cp;
                inputs = ci;
                d = nd;
                continue 'outer;
            }
        }
        break;
    }
    (p, inputs, d)
}

/// The preorder paths (child indices) of every node.
fn paths(e: &GExpr, prefix: &mut Vec<usize>, out: &mut Vec<Vec<usize>>) {
    out.push(prefix.clone());
    for (i, c) in e.children().iter().enumerate() {
        prefix.push(i);
        paths(c, prefix, out);
        prefix.pop();
    }
}

fn get<'e>(e: &'e GExpr, path: &[usize]) -> &'e GExpr {
    match path.split_first() {
        None => e,
        Some((&i, rest)) => get(e.children()[i], rest),
    }
}

fn children_mut(e: &mut GExpr) -> Vec<&mut GExpr> {
    match e {
        GExpr::Const(_) | GExpr::Var(_) => vec![],
        GExpr::Let(_, a, b) | GExpr::LetTuple(_, a, b) | GExpr::Op2(_, a, b) => vec![a, b],
        GExpr::Map(_, a, b) => vec![a, b],
        GExpr::Tuple(items) => items.iter_mut().collect(),
        GExpr::Proj(a, _) | GExpr::Op1(_, a) => vec![a],
        GExpr::Map2(_, _, a, b, c) | GExpr::Reduce(_, _, a, b, c) => vec![a, b, c],
    }
}

fn replaced(e: &GExpr, path: &[usize], new: GExpr) -> GExpr {
    let mut out = e.clone();
    let mut cur = &mut out;
    for &i in path {
        cur = children_mut(cur).swap_remove(i);
    }
    *cur = new;
    out
}

fn candidates(p: &Program, inputs: &[GVal]) -> Vec<(Program, Vec<GVal>)> {
    let mut out = Vec::new();
    let mut all = Vec::new();
    paths(&p.body, &mut Vec::new(), &mut all);
    for path in &all {
        let node = get(&p.body, path);
        let mut subs: Vec<GExpr> = node.children().into_iter().cloned().collect();
        if !matches!(node, GExpr::Const(_)) {
            subs.push(GExpr::Const(1.0));
        }
        for (name, _) in &p.params {
            if *node != GExpr::Var(name.clone()) {
                subs.push(GExpr::Var(name.clone()));
            }
        }
        for s in subs {
            let body = replaced(&p.body, path, s);
            out.push((
                Program {
                    params: p.params.clone(),
                    ret: p.ret.clone(),
                    body,
                },
                inputs.to_vec(),
            ));
        }
    }
    for i in 0..p.params.len() {
        if p.params.len() > 1 && !p.body.mentions(&p.params[i].0) {
            let mut q = p.clone();
            q.params.remove(i);
            let mut ins = inputs.to_vec();
            ins.remove(i);
            out.push((q, ins));
        }
    }
    for s in 0..2 {
        let shorter: Vec<GVal> = p
            .params
            .iter()
            .zip(inputs)
            .map(|((_, t), v)| shorten(t, v, s))
            .collect();
        if shorter != inputs {
            out.push((p.clone(), shorter));
        }
    }
    for i in 0..inputs.len() {
        let rounded = round(&inputs[i]);
        if rounded != inputs[i] {
            let mut ins = inputs.to_vec();
            ins[i] = rounded;
            out.push((p.clone(), ins));
        }
    }
    out
}

/// Drops the last element of every array of size variable `s`.
fn shorten(t: &GTy, v: &GVal, s: usize) -> GVal {
    match (t, v) {
        (GTy::Array(k), GVal::Array(xs)) if *k == s && !xs.is_empty() => {
            GVal::Array(xs[..xs.len() - 1].to_vec())
        }
        (GTy::Tuple(ts), GVal::Tuple(vs)) => {
            GVal::Tuple(ts.iter().zip(vs).map(|(t, v)| shorten(t, v, s)).collect())
        }
        _ => v.clone(),
    }
}

/// Rounds every real to one decimal.
fn round(v: &GVal) -> GVal {
    let r = |x: f64| (x * 10.0).round() / 10.0;
    match v {
        GVal::Real(x) => GVal::Real(r(*x)),
        GVal::Array(xs) => GVal::Array(xs.iter().map(|&x| r(x)).collect()),
        GVal::Tuple(vs) => GVal::Tuple(vs.iter().map(round).collect()),
    }
}
