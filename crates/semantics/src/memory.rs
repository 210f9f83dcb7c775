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
//!   suffix `K`, `M`, `G`), against the resident size (`VmRSS`).
//!
//! Each limit keeps [`MARGIN`] in reserve for what is allocated between
//! two checks and for reporting the error. The figures come from `/proc`
//! (Linux); where it cannot be read, only `try_reserve` guards.

use std::sync::OnceLock;

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
    let status = if fixed.address_space.is_some() || fixed.budget.is_some() {
        status()
    } else {
        None
    };
    let field = |name: &str| status.as_deref().and_then(|s| kib_field(s, name));
    if let (Some(limit), Some(size)) = (fixed.address_space, field("VmSize:")) {
        fits(bytes, size, limit, Limit::AddressSpace(limit))?;
    }
    if let (Some(limit), Some(rss)) = (fixed.budget, field("VmRSS:")) {
        fits(bytes, rss, limit, Limit::Budget(limit))?;
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
    fn no_machine_has_an_exabyte() {
        assert!(check(1 << 60).is_err());
    }
}
