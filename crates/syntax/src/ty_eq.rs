//! Comparing many pairs of types that share their elements, in time linear
//! in the nodes they have, not in their sizes.
//!
//! `Ty: Eq` compares two shared elements by pointer first, so a type is
//! equal to itself in O(1); but two equal types built apart (the module's
//! types and the verifier's re-inferred ones) share nothing, and `==` walks
//! them whole: d² for the d types `[1]...[1]R` of a nested literal
//! (docs/scale.md, "Shared types"). [`SharedEq`] remembers the pairs of
//! element `Arc`s it found equal, so the type of `[e]`, compared after the
//! type of `e`, costs one step.

use std::cell::Cell;
use std::sync::Arc;

use crate::fxhash::FxHashSet;
use crate::ir::Ty;

/// Structural equality of types with a memo of the pairs of shared
/// elements found equal. The memo holds addresses: use one `SharedEq` only
/// while the types it compared are alive (a local, for one pass).
#[derive(Debug, Default)]
pub struct SharedEq {
    equal: FxHashSet<(usize, usize)>,
    steps: u64,
}

thread_local! {
    /// Type nodes compared on this thread by every [`SharedEq`].
    static STEPS: Cell<u64> = const { Cell::new(0) };
}

/// The type nodes every [`SharedEq`] on this thread has compared so far:
/// tests read it to check that a pass compares types in time linear in
/// its input (a count, not a clock).
pub fn type_nodes_compared() -> u64 {
    STEPS.with(Cell::get)
}

fn address(t: &Arc<Ty>) -> usize {
    Arc::as_ptr(t) as usize
}

impl SharedEq {
    /// A comparer with an empty memo.
    pub fn new() -> SharedEq {
        SharedEq::default()
    }

    /// The type nodes compared so far (a count of the work, for tests).
    pub fn steps(&self) -> u64 {
        self.steps
    }

    /// Whether `a` and `b` are equal (what `a == b` says). Iterative down
    /// chains of arrays, which nest as deeply as literals do.
    pub fn eq(&mut self, a: &Ty, b: &Ty) -> bool {
        // The pairs of element `Arc`s walked into, to remember as equal if
        // the whole comparison succeeds.
        let mut walked: Vec<(usize, usize)> = Vec::new();
        let (mut a, mut b) = (a, b);
        let equal = loop {
            self.steps += 1;
            STEPS.with(|s| s.set(s.get() + 1));
            match (a, b) {
                (Ty::Array(n, x), Ty::Array(m, y)) => {
                    if n != m {
                        break false;
                    }
                    let pair = (address(x), address(y));
                    if pair.0 == pair.1 || self.equal.contains(&pair) {
                        break true;
                    }
                    walked.push(pair);
                    (a, b) = (&**x, &**y);
                }
                (Ty::Tuple(xs), Ty::Tuple(ys)) => {
                    break xs.len() == ys.len() && xs.iter().zip(ys).all(|(x, y)| self.eq(x, y));
                }
                (Ty::Func(xs, x), Ty::Func(ys, y)) => {
                    break xs.len() == ys.len()
                        && xs.iter().zip(ys).all(|(x, y)| self.eq(x, y))
                        && self.eq(x, y);
                }
                (Ty::Real, Ty::Real) | (Ty::Int, Ty::Int) | (Ty::Bool, Ty::Bool) => break true,
                _ => break false,
            }
        };
        if equal {
            self.equal.extend(walked);
        }
        equal
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::ir::Size;

    /// `[1]...[1]R`, each level's element shared with the level below.
    fn chain(depth: usize) -> Vec<Ty> {
        let mut out = vec![Ty::Real];
        for k in 0..depth {
            let t = Ty::array(Size::Lit(1), out[k].clone());
            out.push(t);
        }
        out
    }

    #[test]
    fn it_agrees_with_eq() {
        let mut s = SharedEq::new();
        let a = chain(5);
        let b = chain(5);
        for x in &a {
            for y in &b {
                assert_eq!(s.eq(x, y), x == y, "{x:?} {y:?}");
            }
        }
        let wide = Ty::array(Size::Lit(2), a[2].clone());
        assert!(!s.eq(&wide, &a[3]));
        let t = |xs: Vec<Ty>| Ty::Tuple(xs);
        assert!(s.eq(
            &t(vec![a[1].clone(), Ty::Int]),
            &t(vec![b[1].clone(), Ty::Int])
        ));
        assert!(!s.eq(
            &t(vec![a[1].clone(), Ty::Int]),
            &t(vec![Ty::Int, b[1].clone()])
        ));
    }

    #[test]
    fn two_chains_built_apart_compare_in_linear_steps() {
        for depth in [1000, 2000] {
            let (a, b) = (chain(depth), chain(depth));
            let mut s = SharedEq::new();
            assert!(a.iter().zip(&b).all(|(x, y)| s.eq(x, y)));
            // `==` would take depth²/2 steps; two per level here.
            assert!(s.steps() <= 2 * depth as u64 + 1, "{} steps", s.steps());
        }
    }
}
