//! Scatter, the histograms (`reduce_by_index`) and their partial
//! derivatives on plain slices: the one definition of what they compute,
//! which the evaluator calls and the C runtime mirrors (docs/semantics.md,
//! "Scatter and histograms"; docs/derivatives.md, same section).
//!
//! Every one of them visits the elements `j = 0 .. n-1` in order and skips
//! an index outside `0 .. m` (negative or too large), as Futhark does. A
//! bin that several elements reach is the left fold of its elements in
//! that order, so `scatter` keeps the last write, and the derivative of
//! `hist_min`/`hist_max` goes where the scalar `min`/`max` send it in that
//! fold: to the later operand on a tie (`min x y` is `if x < y then x else
//! y`), so to the last element reaching the extremum, and to `dest` only
//! when every element of the bin is strictly worse.

use std::sync::OnceLock;

use crate::ir::{Module, Prim, SourceFile};

/// The bin `i` stands for among `m`, or `None` when it is out of range.
pub fn bin(i: i64, m: usize) -> Option<usize> {
    usize::try_from(i).ok().filter(|&b| b < m)
}

/// The bins of `is` that are in range, with their element's position.
pub fn bins(is: &[i64], m: usize) -> impl Iterator<Item = (usize, usize)> + '_ {
    is.iter()
        .enumerate()
        .filter_map(move |(j, &i)| bin(i, m).map(|b| (j, b)))
}

/// `dest` with each in-range bin folded with its elements by `op`, in
/// order; the first error of `op` stops the fold.
pub fn fold<T: Clone, E>(
    dest: &[T],
    is: &[i64],
    vs: &[T],
    mut op: impl FnMut(&T, &T) -> Result<T, E>,
) -> Result<Vec<T>, E> {
    let mut out = dest.to_vec();
    for (j, b) in bins(is, dest.len()) {
        out[b] = op(&out[b], &vs[j])?;
    }
    Ok(out)
}

/// `scatter dest is vs`: the last write to a bin wins.
pub fn scatter<T: Clone>(dest: &[T], is: &[i64], vs: &[T]) -> Vec<T> {
    let mut out = dest.to_vec();
    for (j, b) in bins(is, dest.len()) {
        out[b] = vs[j].clone();
    }
    out
}

/// Whether `op` is scatter or a histogram: a primitive of `dest`, `is`
/// and `vs` whose derivative the reverse routes know.
pub fn differentiable(op: Prim) -> bool {
    matches!(
        op,
        Prim::Scatter
            | Prim::HistAdd
            | Prim::HistMul
            | Prim::HistMin
            | Prim::HistMax
            | Prim::HistAddRows
    )
}

/// Whether `op` is one of the Target-only partials of scatter and the
/// histograms (`gather`, ..., `dhist_mul_vals`): array primitives, unlike
/// the scalar derivative primitives of `crate::derivatives`.
pub fn is_partial(op: Prim) -> bool {
    matches!(
        op,
        Prim::Gather
            | Prim::WinnerScatter
            | Prim::WinnerMin
            | Prim::WinnerMax
            | Prim::GatherWon
            | Prim::PickDest
            | Prim::DHistMulDest
            | Prim::DHistMulVals
    )
}

/// The scalar operator a histogram folds with.
pub fn operator(op: Prim) -> Option<Prim> {
    match op {
        Prim::HistAdd | Prim::HistAddRows => Some(Prim::Add),
        Prim::HistMul => Some(Prim::Mul),
        Prim::HistMin | Prim::WinnerMin => Some(Prim::Min),
        Prim::HistMax | Prim::WinnerMax => Some(Prim::Max),
        _ => None,
    }
}

/// Per bin, the last element writing it, `-1` if none (`hist_winner_scatter`).
pub fn winner_scatter(m: usize, is: &[i64]) -> Vec<i64> {
    let mut w = vec![-1; m];
    for (j, b) in bins(is, m) {
        w[b] = j as i64;
    }
    w
}

/// Per bin, the element the derivative of the fold of `min` (`max`) goes
/// to: `-1` for `dest`, else its position (`hist_winner_min`, `_max`).
pub fn winner_select(dest: &[f64], is: &[i64], vs: &[f64], max: bool) -> Vec<i64> {
    let mut cur = dest.to_vec();
    let mut w = vec![-1; dest.len()];
    for (j, b) in bins(is, dest.len()) {
        let (x, y) = (cur[b], vs[j]);
        // The derivative of `max x y` goes to x iff x > y, of `min` iff x < y.
        let keep = if max { x > y } else { x < y };
        if !keep {
            w[b] = j as i64;
        }
        cur[b] = if max { x.max(y) } else { x.min(y) };
    }
    w
}

/// `gather a is`: `a[is[j]]`, 0 where the index is out of range.
pub fn gather(a: &[f64], is: &[i64]) -> Vec<f64> {
    is.iter()
        .map(|&i| bin(i, a.len()).map_or(0.0, |b| a[b]))
        .collect()
}

/// `gather_won a is w`: `a[is[j]]` where element j won its bin
/// (`w[is[j]] == j`), else 0.
pub fn gather_won(a: &[f64], is: &[i64], w: &[i64]) -> Vec<f64> {
    is.iter()
        .enumerate()
        .map(|(j, &i)| match bin(i, a.len()) {
            Some(b) if w[b] == j as i64 => a[b],
            _ => 0.0,
        })
        .collect()
}

/// `pick_dest a w`: `a[b]` where `dest` won bin b (`w[b] == -1`), else 0.
pub fn pick_dest(a: &[f64], w: &[i64]) -> Vec<f64> {
    a.iter()
        .zip(w)
        .map(|(&x, &k)| if k == -1 { x } else { 0.0 })
        .collect()
}

/// `dhist_mul_dest dest is vs`: ∂(hist_mul)[b]/∂dest[b], the product of
/// the bin's elements in order (no division: exact with zeros).
pub fn dhist_mul_dest(dest: &[f64], is: &[i64], vs: &[f64]) -> Vec<f64> {
    let mut p = vec![1.0; dest.len()];
    for (j, b) in bins(is, dest.len()) {
        p[b] *= vs[j];
    }
    p
}

/// `dhist_mul_vals dest is vs`: ∂(hist_mul)[is[j]]/∂vs[j], the product of
/// the other factors of j's bin (`dest[b]` included), 0 out of range.
/// Futhark's method (count the zeros of each bin, multiply its non-zero
/// factors): with no zero it is the product divided by `vs[j]`; with one,
/// the product of the others for the zero factor and 0 for the rest; with
/// more, 0. O(n + m), one division per element.
pub fn dhist_mul_vals(dest: &[f64], is: &[i64], vs: &[f64]) -> Vec<f64> {
    let m = dest.len();
    let mut zeros: Vec<u64> = dest.iter().map(|&d| u64::from(d == 0.0)).collect();
    let mut nonzero: Vec<f64> = dest
        .iter()
        .map(|&d| if d == 0.0 { 1.0 } else { d })
        .collect();
    for (j, b) in bins(is, m) {
        if vs[j] == 0.0 {
            zeros[b] += 1;
        } else {
            nonzero[b] *= vs[j];
        }
    }
    let mut out = vec![0.0; is.len()];
    for (j, b) in bins(is, m) {
        out[j] = match (zeros[b], vs[j] == 0.0) {
            (0, _) => nonzero[b] / vs[j],
            (1, true) => nonzero[b],
            _ => 0.0,
        };
    }
    out
}

/// The text of the partials' derivative rules (`tangent_<op>`,
/// `cotangent_<op>`; docs/derivatives.md, "Scatter and histograms").
const RULES: &str = include_str!("hist_rules.ad");

/// The partials' derivative rules, compiled once (a Target program: it
/// names the partials), every call inlined: forward mode applies the
/// `tangent_` ones, reverse mode's UNF^-1 the `cotangent_` ones.
pub fn rules() -> Result<&'static Module, String> {
    static RULES_MODULE: OnceLock<Result<Module, String>> = OnceLock::new();
    RULES_MODULE
        .get_or_init(|| {
            let file = SourceFile {
                name: "crates/syntax/src/hist_rules.ad".to_string(),
                text: RULES.to_string(),
            };
            crate::compile_target(file).map_err(|e| e.to_string())
        })
        .as_ref()
        .map_err(Clone::clone)
}
