//! The fast hasher for the pass's own maps (names to counts, `cse` keys,
//! binders built): `syntax::fxhash`, the multiply-rotate hash of rustc's
//! `FxHasher`, shared with the verifier so that there is one definition.
//! The persistent environment uses it too (through rpds' custom-hasher
//! constructor, which names `archery`'s pointer kind). The
//! default SipHash resists collision attacks, which a compiler's internal
//! tables keyed by the program's own names do not need, and it was a tenth
//! of the optimizer's time.

pub(crate) use syntax::fxhash::{FxHashMap, FxHashSet, FxHasher};
