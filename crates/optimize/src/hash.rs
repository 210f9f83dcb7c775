//! A fast hasher for the pass's own maps (names to counts, `cse` keys,
//! binders built): the multiply-rotate hash of rustc's `FxHasher`. (The
//! persistent environment keeps rpds' default hasher: rpds does not export
//! the pointer-kind type its custom-hasher constructor needs.) The default SipHash resists collision attacks, which a
//! compiler's internal tables keyed by the program's own names do not
//! need, and it was a tenth of the optimizer's time.

use std::collections::{HashMap, HashSet};
use std::hash::{BuildHasherDefault, Hasher};

/// The hasher.
#[derive(Debug, Default, Clone, Copy)]
pub(crate) struct FxHasher {
    hash: u64,
}

const SEED: u64 = 0x51_7c_c1_b7_27_22_0a_95;

impl FxHasher {
    #[inline]
    fn add(&mut self, word: u64) {
        self.hash = (self.hash.rotate_left(5) ^ word).wrapping_mul(SEED);
    }
}

impl Hasher for FxHasher {
    #[inline]
    fn write(&mut self, bytes: &[u8]) {
        let mut chunks = bytes.chunks_exact(8);
        for c in &mut chunks {
            let mut w = [0u8; 8];
            w.copy_from_slice(c);
            self.add(u64::from_le_bytes(w));
        }
        let rest = chunks.remainder();
        if !rest.is_empty() {
            let mut w = [0u8; 8];
            w[..rest.len()].copy_from_slice(rest);
            self.add(u64::from_le_bytes(w));
        }
    }

    #[inline]
    fn write_u8(&mut self, i: u8) {
        self.add(u64::from(i));
    }

    #[inline]
    fn write_u32(&mut self, i: u32) {
        self.add(u64::from(i));
    }

    #[inline]
    fn write_u64(&mut self, i: u64) {
        self.add(i);
    }

    #[inline]
    fn write_usize(&mut self, i: usize) {
        self.add(i as u64);
    }

    /// The state with its high bits folded into the low ones. The tables
    /// pick a bucket from the low bits, and in a product the low bits
    /// depend only on the low bits of the factors: without the fold, the
    /// bucket of a name would depend on its first few bytes only, and
    /// `v_1`, `v_17`, `v_1234`... would all collide.
    #[inline]
    fn finish(&self) -> u64 {
        let h = self.hash;
        (h ^ (h >> 32)).wrapping_mul(SEED) ^ (h >> 29)
    }
}

/// Builds [`FxHasher`]s.
type FxBuild = BuildHasherDefault<FxHasher>;
/// A `HashMap` with [`FxHasher`].
pub(crate) type FxHashMap<K, V> = HashMap<K, V, FxBuild>;
/// A `HashSet` with [`FxHasher`].
pub(crate) type FxHashSet<K> = HashSet<K, FxBuild>;
