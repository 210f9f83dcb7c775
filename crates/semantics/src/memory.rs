//! The evaluators' memory budget: running out of memory is an error with
//! the position of the expression being evaluated, never an abort.
//!
//! Rust aborts the process when an allocation fails, and `try_reserve`
//! covers only the one buffer it reserves: turning a `Vec` into the
//! `Rc<[Value]>` of an array copies it into a second allocation, and the
//! elements of an array of tuples are allocations of their own. So the
//! evaluators ask [`check`] before each large allocation (at least
//! [`LARGE`] bytes, for everything it will take, copies included), and
//! [`Meter::tick`] asks again every [`CHECK_EVERY`] steps, which catches
//! memory growing through many small allocations. Each check compares
//! with the limits in force:
//!
//! - the process's address-space limit (`RLIMIT_AS`, what `ulimit -v`
//!   sets), against its current size (`VmSize`);
//! - the memory the system has available (`MemAvailable`), so that a
//!   request the machine cannot hold fails here rather than in the
//!   kernel's out-of-memory killer;
//! - the budget [`ENV_VAR`] (`ADREV_MEMORY_LIMIT=2G`: bytes, or with a
//!   suffix `K`, `M`, `G`), against the bytes the program holds on its
//!   heap as counted by [`Counting`] when the binary installs it as its
//!   global allocator (xtask does), else against the resident size
//!   (`VmRSS`).
//!
//! Why the budget counts the heap rather than `VmRSS`: the resident size
//! of the same run differs between runs. It counts the pages of the
//! executable and its libraries that happen to be mapped (file-backed
//! pages come in by the kernel's fault-around only when they are in the
//! page cache, so a cold cache after a fresh build maps fewer), and
//! mimalloc returns freed pages to the system after a delay measured in
//! milliseconds, so how much freed memory is still resident at a check
//! depends on the machine's load. A budget crossed at the periodic check
//! in a loop's body on one run was crossed at the loop's large array on
//! another (xtask/tests/checkpoint.rs). The bytes a run allocates and
//! frees are the same on every run of the same program on the same
//! inputs (the evaluators are single-threaded), so the position of the
//! error is too.
//!
//! Each limit keeps [`MARGIN`] in reserve for what is allocated between
//! two checks and for reporting the error. The figures come from `/proc`
//! (Linux); where it cannot be read, only `try_reserve` guards.

use std::alloc::{GlobalAlloc, Layout};
use std::sync::OnceLock;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};

/// Requests of at least this many bytes are checked before they are made.
pub const LARGE: u64 = 1 << 20;
/// Evaluation steps between two checks of the memory in use.
pub const CHECK_EVERY: u32 = 1 << 16;
/// Bytes kept in reserve under every limit.
pub const MARGIN: u64 = 64 << 20;
/// The environment variable that sets a budget for resident memory.
pub const ENV_VAR: &str = "ADREV_MEMORY_LIMIT";

/// A request that does not fit: what was asked, and under which limit.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Shortfall {
    /// The bytes asked for (0 when the memory already in use reached the
    /// limit).
    pub needed: u64,
    /// The bytes left under the limit, its margin deducted.
    pub available: u64,
    /// The limit that refused it.
    pub limit: Limit,
}

/// The limit a [`Shortfall`] ran into.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Limit {
    /// `RLIMIT_AS`, of this many bytes.
    AddressSpace(u64),
    /// The system's available memory.
    System,
    /// The budget of [`ENV_VAR`], of this many bytes.
    Budget(u64),
}

impl std::fmt::Display for Shortfall {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        if self.needed > 0 {
            write!(f, "needed {} bytes, ", self.needed)?;
        } else {
            write!(f, "the memory in use reached the limit, ")?;
        }
        match self.limit {
            Limit::AddressSpace(n) => write!(
                f,
                "{} available under the address-space limit of {n} bytes (`ulimit -v`)",
                self.available
            ),
            Limit::System => write!(f, "{} available on the system", self.available),
            Limit::Budget(n) => write!(
                f,
                "{} available under the budget of {n} bytes ({ENV_VAR})",
                self.available
            ),
        }
    }
}

/// The bytes held through [`Counting`]: allocated and not yet freed.
static LIVE: AtomicU64 = AtomicU64::new(0);
/// Whether a [`Counting`] allocator is installed (it has served a request).
static COUNTING: AtomicBool = AtomicBool::new(false);

/// A global allocator that counts the bytes held through it, for the
/// budget of [`ENV_VAR`]: `#[global_allocator] static A: Counting<MiMalloc>
/// = Counting(MiMalloc);`. One relaxed atomic add per request.
pub struct Counting<A>(pub A);

// SAFETY: every request is passed to the inner allocator unchanged; the
// counter is bookkeeping only. `GlobalAlloc` is an unsafe trait, hence the
// exception to the workspace's `unsafe_code = "deny"`.
#[allow(unsafe_code)]
unsafe impl<A: GlobalAlloc> GlobalAlloc for Counting<A> {
    unsafe fn alloc(&self, layout: Layout) -> *mut u8 {
        // SAFETY: the caller's contract is forwarded.
        let ptr = unsafe { self.0.alloc(layout) };
        if !ptr.is_null() {
            held(layout.size() as u64, 0);
        }
        ptr
    }

    unsafe fn alloc_zeroed(&self, layout: Layout) -> *mut u8 {
        // SAFETY: the caller's contract is forwarded.
        let ptr = unsafe { self.0.alloc_zeroed(layout) };
        if !ptr.is_null() {
            held(layout.size() as u64, 0);
        }
        ptr
    }

    unsafe fn dealloc(&self, ptr: *mut u8, layout: Layout) {
        // SAFETY: the caller's contract is forwarded.
        unsafe { self.0.dealloc(ptr, layout) };
        held(0, layout.size() as u64);
    }

    unsafe fn realloc(&self, ptr: *mut u8, layout: Layout, new_size: usize) -> *mut u8 {
        // SAFETY: the caller's contract is forwarded.
        let new = unsafe { self.0.realloc(ptr, layout, new_size) };
        if !new.is_null() {
            held(new_size as u64, layout.size() as u64);
        }
        new
    }
}

#[inline]
fn held(more: u64, less: u64) {
    // Read first: the flag is set once, and a store on every request kept
    // writing its cache line (the optimizer makes millions of requests).
    if !COUNTING.load(Ordering::Relaxed) {
        COUNTING.store(true, Ordering::Relaxed);
    }
    if more >= less {
        LIVE.fetch_add(more - less, Ordering::Relaxed);
    } else {
        LIVE.fetch_sub(less - more, Ordering::Relaxed);
    }
}

/// The bytes held through [`Counting`], `None` when it is not installed.
pub fn counted_heap() -> Option<u64> {
    COUNTING
        .load(Ordering::Relaxed)
        .then(|| LIVE.load(Ordering::Relaxed))
}

/// The limits that do not change while the process runs, read once.
struct Fixed {
    address_space: Option<u64>,
    budget: Option<u64>,
}

fn fixed() -> &'static Fixed {
    static FIXED: OnceLock<Fixed> = OnceLock::new();
    FIXED.get_or_init(|| Fixed {
        address_space: std::fs::read_to_string("/proc/self/limits")
            .ok()
            .and_then(|t| address_space_limit(&t)),
        budget: std::env::var(ENV_VAR).ok().and_then(|v| parse_bytes(&v)),
    })
}

/// Whether `bytes` more can be allocated under every limit in force.
pub fn check(bytes: u64) -> Result<(), Shortfall> {
    let fixed = fixed();
    let status = || std::fs::read_to_string("/proc/self/status").ok();
    let heap = counted_heap();
    let status = if fixed.address_space.is_some() || (fixed.budget.is_some() && heap.is_none()) {
        status()
    } else {
        None
    };
    let field = |name: &str| status.as_deref().and_then(|s| kib_field(s, name));
    if let (Some(limit), Some(size)) = (fixed.address_space, field("VmSize:")) {
        fits(bytes, size, limit, Limit::AddressSpace(limit))?;
    }
    if let (Some(limit), Some(used)) = (fixed.budget, heap.or_else(|| field("VmRSS:"))) {
        fits(bytes, used, limit, Limit::Budget(limit))?;
    }
    if let Some(free) = std::fs::read_to_string("/proc/meminfo")
        .ok()
        .and_then(|t| kib_field(&t, "MemAvailable:"))
    {
        // What the system has free does not count this process's own
        // memory, which is therefore 0 here.
        fits(bytes, 0, free, Limit::System)?;
    }
    Ok(())
}

/// `bytes` more on top of `used` within `limit` less the margin.
fn fits(bytes: u64, used: u64, limit: u64, which: Limit) -> Result<(), Shortfall> {
    let available = limit.saturating_sub(MARGIN).saturating_sub(used);
    if bytes > available || (bytes == 0 && available == 0) {
        return Err(Shortfall {
            needed: bytes,
            available,
            limit: which,
        });
    }
    Ok(())
}

/// [`check`] for a request of `count` items of `size` bytes each, counted
/// `copies` times (an array built in a `Vec` and then copied); requests
/// under [`LARGE`] pass unchecked.
pub fn check_items(count: usize, size: usize, copies: u64) -> Result<(), Shortfall> {
    let bytes = (count as u64)
        .saturating_mul(size as u64)
        .saturating_mul(copies);
    if bytes < LARGE {
        return Ok(());
    }
    check(bytes)
}

/// Counts evaluation steps and checks the memory in use every
/// [`CHECK_EVERY`] of them.
#[derive(Debug, Default)]
pub struct Meter {
    steps: std::cell::Cell<u32>,
}

impl Meter {
    /// One step; every [`CHECK_EVERY`]th also checks the memory in use.
    pub fn tick(&self) -> Result<(), Shortfall> {
        let n = self.steps.get().wrapping_add(1);
        self.steps.set(n);
        if n.is_multiple_of(CHECK_EVERY) {
            check(0)
        } else {
            Ok(())
        }
    }
}

/// The soft limit of "Max address space" in `/proc/self/limits`, `None`
/// when it is unlimited.
fn address_space_limit(limits: &str) -> Option<u64> {
    let line = limits
        .lines()
        .find(|l| l.starts_with("Max address space"))?;
    line["Max address space".len()..]
        .split_whitespace()
        .next()?
        .parse()
        .ok()
}

/// A `NAME:   1234 kB` field of `/proc/self/status` or `/proc/meminfo`, in bytes.
fn kib_field(text: &str, name: &str) -> Option<u64> {
    let line = text.lines().find(|l| l.starts_with(name))?;
    let kib: u64 = line[name.len()..].split_whitespace().next()?.parse().ok()?;
    kib.checked_mul(1024)
}

/// `123`, `64K`, `500M`, `2G` (powers of 1024; a trailing `B` or `iB` is
/// allowed) as bytes; `None` for anything else.
pub fn parse_bytes(text: &str) -> Option<u64> {
    let upper = text.trim().to_ascii_uppercase();
    let t = upper.as_str();
    let t = t
        .strip_suffix("IB")
        .or_else(|| t.strip_suffix('B'))
        .unwrap_or(t);
    let (digits, shift) = match t.chars().last()? {
        'K' => (&t[..t.len() - 1], 10),
        'M' => (&t[..t.len() - 1], 20),
        'G' => (&t[..t.len() - 1], 30),
        'T' => (&t[..t.len() - 1], 40),
        _ => (t, 0),
    };
    digits.trim().parse::<u64>().ok()?.checked_mul(1 << shift)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn budgets_read_with_suffixes() {
        assert_eq!(parse_bytes("123"), Some(123));
        assert_eq!(parse_bytes("64K"), Some(64 << 10));
        assert_eq!(parse_bytes("500M"), Some(500 << 20));
        assert_eq!(parse_bytes("2G"), Some(2 << 30));
        assert_eq!(parse_bytes("2GiB"), Some(2 << 30));
        assert_eq!(parse_bytes("1gb"), Some(1 << 30));
        assert_eq!(parse_bytes("lots"), None);
        assert_eq!(parse_bytes(""), None);
    }

    #[test]
    fn proc_fields_read() {
        let limits = "Limit                     Soft Limit           Hard Limit           Units\nMax address space         4096000000           unlimited            bytes\n";
        assert_eq!(address_space_limit(limits), Some(4_096_000_000));
        let unlimited =
            "Max address space         unlimited            unlimited            bytes\n";
        assert_eq!(address_space_limit(unlimited), None);
        let status = "Name:\txtask\nVmSize:\t  123456 kB\nVmRSS:\t    2048 kB\n";
        assert_eq!(kib_field(status, "VmSize:"), Some(123_456 * 1024));
        assert_eq!(kib_field(status, "VmRSS:"), Some(2048 * 1024));
        assert_eq!(kib_field(status, "VmPeak:"), None);
    }

    #[test]
    fn limits_keep_their_margin() {
        let limit = Limit::Budget(1 << 30);
        assert!(fits(100, 0, 1 << 30, limit).is_ok());
        let err = fits(1 << 30, 0, 1 << 30, limit).expect_err("the margin is kept");
        assert_eq!(err.available, (1 << 30) - MARGIN);
        assert!(fits(0, (1 << 30) - MARGIN, 1 << 30, limit).is_err());
        assert!(err.to_string().starts_with("needed 1073741824 bytes"));
    }

    #[test]
    fn the_system_has_room_for_a_small_request() {
        assert_eq!(check_items(10, 24, 2), Ok(()));
        assert_eq!(check(1 << 20), Ok(()));
    }

    #[test]
    #[allow(unsafe_code)]
    fn the_counting_allocator_counts_what_is_held() {
        // The test binary's own allocator is the system's: only this
        // test moves the counter.
        let counting = Counting(std::alloc::System);
        let layout = Layout::from_size_align(4096, 8).expect("a valid layout");
        // SAFETY: the layout is non-zero; each pointer is freed once with
        // the layout it was allocated with.
        unsafe {
            let a = counting.alloc(layout);
            assert!(!a.is_null());
            let before = counted_heap().expect("counting once it served a request");
            let b = counting.alloc_zeroed(layout);
            assert_eq!(counted_heap(), Some(before + 4096));
            let b = counting.realloc(b, layout, 10_000);
            assert_eq!(counted_heap(), Some(before + 10_000));
            counting.dealloc(b, Layout::from_size_align(10_000, 8).expect("valid"));
            assert_eq!(counted_heap(), Some(before));
            counting.dealloc(a, layout);
            assert_eq!(counted_heap(), Some(before - 4096));
        }
    }

    #[test]
    fn no_machine_has_an_exabyte() {
        assert!(check(1 << 60).is_err());
    }
}
