//! A context while raising: a persistent vector of [`Abs`] whose last
//! entries are a plain `Vec`.
//!
//! `raise` keeps contexts persistent because a `∘` keeps its whole input
//! context as the primal point of the continuation it builds, and a tuple
//! raises both its operands on the same context: copying a context there
//! would make long programs quadratic. But almost every operation is at
//! the end of a context (a primitive pushes its result, a projection drops
//! entries, a `J^T` reads and replaces its operands, the last few), and
//! `rpds::Vector` pays for each: every entry sits in an `Rc` of its own
//! and every push or pop walks the trie from its root. On the 20,000-`let`
//! chain, whose contexts hold a handful of entries, those operations were
//! a fifth of `raise`'s instructions.
//!
//! So the entries from `frozen.len()` on live in `tail`, a `Vec` of at
//! most [`SPILL`] entries: pushes, pops, reads and writes there are a
//! `Vec`'s, and copying a context copies the tail (a few hundred bytes at
//! most) and shares the trie. Past [`SPILL`] entries the first half of the
//! tail moves into the trie, so a long context is still shared, never
//! copied whole. Only the cost changes: every operation means what the
//! same operation on the concatenation `frozen ++ tail` means.

use super::Abs;
use rpds::Vector;

/// The most entries the tail holds before half of it moves into the trie.
const SPILL: usize = 64;

#[derive(Debug, Clone, Default)]
pub(super) struct State {
    /// The entries `0..frozen.len()`, shared between copies.
    frozen: Vector<Abs>,
    /// The entries after them.
    tail: Vec<Abs>,
}

impl State {
    pub(super) fn new() -> State {
        State::default()
    }

    /// The context of one entry.
    pub(super) fn one(a: Abs) -> State {
        State {
            frozen: Vector::new(),
            tail: vec![a],
        }
    }

    pub(super) fn len(&self) -> usize {
        self.frozen.len() + self.tail.len()
    }

    pub(super) fn get(&self, i: usize) -> Option<&Abs> {
        match i.checked_sub(self.frozen.len()) {
            Some(j) => self.tail.get(j),
            None => self.frozen.get(i),
        }
    }

    pub(super) fn last(&self) -> Option<&Abs> {
        self.tail.last().or_else(|| self.frozen.last())
    }

    /// Replaces entry `i`; false (and no change) when there is none.
    pub(super) fn set_mut(&mut self, i: usize, a: Abs) -> bool {
        match i.checked_sub(self.frozen.len()) {
            Some(j) => match self.tail.get_mut(j) {
                Some(slot) => {
                    *slot = a;
                    true
                }
                None => false,
            },
            None => self.frozen.set_mut(i, a),
        }
    }

    pub(super) fn push_back_mut(&mut self, a: Abs) {
        self.tail.push(a);
        if self.tail.len() >= SPILL {
            for x in self.tail.drain(..SPILL / 2) {
                self.frozen.push_back_mut(x);
            }
        }
    }

    /// Drops the last entry; false when there is none.
    pub(super) fn drop_last_mut(&mut self) -> bool {
        self.tail.pop().is_some() || self.frozen.drop_last_mut()
    }

    /// Keeps the first `n` entries (all of them when there are fewer).
    pub(super) fn truncate(&mut self, n: usize) {
        let k = self.frozen.len();
        if n >= k {
            self.tail.truncate(n - k);
        } else if n < SPILL || n * 2 < k {
            // Few entries are kept, or most of the trie is dropped: the
            // kept ones are copied rather than the trie's path to each
            // dropped one (a shared trie copies it).
            let kept: Vec<Abs> = self.frozen.iter().take(n).copied().collect();
            *self = kept.into_iter().collect();
        } else {
            self.tail.clear();
            while self.frozen.len() > n {
                self.frozen.drop_last_mut();
            }
        }
    }

    pub(super) fn iter(&self) -> impl DoubleEndedIterator<Item = &Abs> + '_ {
        self.frozen.iter().chain(self.tail.iter())
    }
}

impl FromIterator<Abs> for State {
    fn from_iter<I: IntoIterator<Item = Abs>>(items: I) -> State {
        let mut s = State::new();
        for a in items {
            s.push_back_mut(a);
        }
        s
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::raise::emit::ValId;

    /// Every operation agrees with the same operation on a `Vec`, across
    /// the spill from the tail into the trie and on shared copies.
    #[test]
    fn state_behaves_as_a_vec() {
        let mut s = State::new();
        let mut v: Vec<Abs> = Vec::new();
        let mut copies: Vec<(State, Vec<Abs>)> = Vec::new();
        let mut seed: u64 = 7;
        let mut next = |m: usize| {
            seed = seed
                .wrapping_mul(6364136223846793005)
                .wrapping_add(1442695040888963407);
            (seed >> 33) as usize % m
        };
        let mut step = 0u32;
        // Rounds of growth (to a few hundred entries, well past the
        // spill), each ended by a truncation to anywhere in 0..=len+1.
        for _ in 0..60 {
            for _ in 0..next(400) {
                step += 1;
                match next(10) {
                    0..=5 => {
                        s.push_back_mut(Abs::Val(ValId(step)));
                        v.push(Abs::Val(ValId(step)));
                    }
                    6 => assert_eq!(s.drop_last_mut(), v.pop().is_some()),
                    7 | 8 if !v.is_empty() => {
                        let i = next(v.len());
                        assert!(s.set_mut(i, Abs::Cont(step)));
                        v[i] = Abs::Cont(step);
                    }
                    _ => copies.push((s.clone(), v.clone())),
                }
                assert_eq!(s.len(), v.len());
                assert_eq!(s.last(), v.last());
                assert!(!s.set_mut(v.len(), Abs::Cont(0)));
            }
            let n = next(v.len() + 2);
            s.truncate(n);
            v.truncate(n);
        }
        assert!(copies.iter().any(|(c, _)| c.len() > 2 * SPILL));
        copies.push((s, v));
        // The copies kept what they held when they were made.
        for (s, v) in &copies {
            assert_eq!(s.iter().copied().collect::<Vec<_>>(), *v);
            assert_eq!(
                s.iter().rev().copied().collect::<Vec<_>>(),
                v.iter().rev().copied().collect::<Vec<_>>()
            );
            for (i, a) in v.iter().enumerate() {
                assert_eq!(s.get(i), Some(a));
            }
            assert_eq!(s.get(v.len()), None);
        }
        let from: State = (0..200).map(|i| Abs::Zero(ValId(i))).collect();
        assert_eq!(from.len(), 200);
        assert_eq!(from.get(150), Some(&Abs::Zero(ValId(150))));
    }
}
