//! Deep recursion without stack overflow.
//!
//! Programs nest: a 20,000-`let` chain is a tree 20,000 deep, and every pass
//! over it (parser, type inference, printer, evaluator, transformations)
//! recurses over that tree. Rather than rewriting every pass as an explicit
//! work-list, each recursive function wraps its body in [`guard`], which
//! grows the stack on the heap when it runs low (the `stacker` crate). The
//! limit on nesting is then memory, and the parser refuses programs nested
//! deeper than [`MAX_DEPTH`] with a clear error. See note [deep recursion]
//! in `docs/ir.md`.

/// How deeply the parser lets a program nest. Deeper programs are refused
/// with "nesting too deep"; every later stage may assume this bound (plus a
/// constant factor for the nodes a transformation adds).
pub const MAX_DEPTH: usize = 100_000;

/// Runs `f`, first moving to a fresh stack segment if less than the red
/// zone is left. Call it at the top of every function that recurses over
/// the program tree.
#[inline]
pub fn guard<R>(f: impl FnOnce() -> R) -> R {
    // 256 KiB of red zone covers the largest frame of a debug build; new
    // segments are 8 MiB so the check is rare.
    stacker::maybe_grow(256 * 1024, 8 * 1024 * 1024, f)
}
