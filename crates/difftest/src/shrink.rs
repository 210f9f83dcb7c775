//! The shrinker: greedily replaces parts of a failing program by smaller
//! ones (a subexpression by one of its descendants up to three levels
//! down, a constant or a parameter), drops unused parameters, shortens arrays and rounds inputs,
//! keeping each step that still compiles, still has admissible inputs and
//! still fails the same check, and is smaller (see `measure`). Candidates
//! are tried from the root down, so the large cuts come first.

use crate::ast::{GExpr, GTy, GVal, Program};
use crate::case::{Disagreement, check_case};
use crate::generate::value_at;

/// How many candidates one shrink may run the failing test on.
const BUDGET: usize = 4000;
/// How many candidates one shrink may look at (most are ill-typed and
/// cost only a compilation).
const LOOK_BUDGET: usize = 100_000;

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
    let (mut tried, mut looked) = (0, 0);
    'outer: loop {
        let now = measure(&p, &inputs);
        for (cp, ci) in candidates(&p, &inputs) {
            if measure(&cp, &ci) >= now {
                continue;
            }
            if tried >= BUDGET {
                break 'outer;
            }
            looked += 1;
            if looked >= LOOK_BUDGET {
                break 'outer;
            }
            if cp.compile().is_err() || value_at(&cp, &ci).is_none() {
                continue;
            }
            tried += 1;
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

/// What the shrinker makes smaller, in this order: the nodes of the
/// program, its parameters, the reals of its inputs, its variables (a
/// variable replaced by a constant), the positions of the parameters it
/// reads (a variable replaced by an earlier parameter), the input reals
/// with more than one decimal. Every accepted step decreases
/// it, so shrinking ends.
fn measure(p: &Program, inputs: &[GVal]) -> (usize, usize, usize, usize, usize, usize) {
    fn reals(v: &GVal, out: &mut Vec<f64>) {
        match v {
            GVal::Real(x) => out.push(*x),
            GVal::Array(xs) | GVal::Tuple(xs) => xs.iter().for_each(|x| reals(x, out)),
            _ => {}
        }
    }
    fn vars(e: &GExpr) -> usize {
        match e {
            GExpr::Var(_) => 1,
            _ => e.children().iter().map(|c| vars(c)).sum(),
        }
    }
    fn ranks(e: &GExpr, params: &[(String, GTy)]) -> usize {
        match e {
            GExpr::Var(n) => params.iter().position(|(m, _)| m == n).unwrap_or(0),
            _ => e.children().iter().map(|c| ranks(c, params)).sum(),
        }
    }
    let mut xs = Vec::new();
    inputs.iter().for_each(|v| reals(v, &mut xs));
    let long = xs
        .iter()
        .filter(|x| ((*x * 10.0).round() / 10.0) != **x)
        .count();
    (
        p.body.size(),
        p.params.len(),
        xs.len(),
        vars(&p.body),
        ranks(&p.body, &p.params),
        long,
    )
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

fn replaced(e: &GExpr, path: &[usize], new: GExpr) -> GExpr {
    let mut out = e.clone();
    let mut cur = &mut out;
    for &i in path {
        cur = cur.children_mut().swap_remove(i);
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
        // Its descendants up to three levels down (a lambda's body that
        // does not read the lambda's parameters replaces the loop around
        // it: `reduce f z (map (fun x -> sin c) A)` becomes `sin c`).
        let mut subs: Vec<GExpr> = Vec::new();
        let mut level: Vec<&GExpr> = vec![node];
        for _ in 0..3 {
            level = level.iter().flat_map(|e| e.children()).collect();
            subs.extend(level.iter().map(|e| (*e).clone()));
        }
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

/// Drops the last element of every array whose size is of size variable
/// `s`.
fn shorten(t: &GTy, v: &GVal, s: usize) -> GVal {
    match (t, v) {
        (GTy::Array(e, size), GVal::Array(xs)) => {
            let keep = if size.var == s && !xs.is_empty() {
                xs.len() - 1
            } else {
                xs.len()
            };
            GVal::Array(xs[..keep].iter().map(|x| shorten(e, x, s)).collect())
        }
        (GTy::Tuple(ts), GVal::Tuple(vs)) => {
            GVal::Tuple(ts.iter().zip(vs).map(|(t, v)| shorten(t, v, s)).collect())
        }
        _ => v.clone(),
    }
}

/// Rounds every real to one decimal.
fn round(v: &GVal) -> GVal {
    match v {
        GVal::Real(x) => GVal::Real((x * 10.0).round() / 10.0),
        GVal::Array(xs) => GVal::Array(xs.iter().map(round).collect()),
        GVal::Tuple(vs) => GVal::Tuple(vs.iter().map(round).collect()),
        other => other.clone(),
    }
}
