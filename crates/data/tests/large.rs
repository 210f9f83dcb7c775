//! A 10^7-element `.npy` read without a value per element: the peak
//! resident set grows by about the data's size (measured from
//! /proc/self/status and printed, not timed).

use crate::common::dir;

/// A line of /proc/self/status in bytes: `VmHWM` (the peak resident set)
/// or `VmRSS` (the current one).
fn status(key: &str) -> Option<u64> {
    let status = std::fs::read_to_string("/proc/self/status").ok()?;
    let line = status.lines().find(|l| l.starts_with(key))?;
    Some(line.split_whitespace().nth(1)?.parse::<u64>().ok()? * 1024)
}

/// Resets the peak to the current resident set (Linux 4.0 on); returns
/// the current resident set, or `None` where the peak cannot be reset.
pub fn reset_peak() -> Option<u64> {
    std::fs::write("/proc/self/clear_refs", "5").ok()?;
    status("VmRSS:")
}

/// The peak resident set since [`reset_peak`].
pub fn peak() -> Option<u64> {
    status("VmHWM:")
}

#[test]
fn ten_million_reals_read_in_about_their_size() {
    let n = 10_000_000usize;
    let path = dir("large").join("x.npy");
    {
        let xs: Vec<f64> = (0..n).map(|i| i as f64 * 0.5).collect();
        let d = data::Dense::reals(vec![n / 1000, 1000], &xs).expect("dense");
        data::write_npy(&path, &d).expect("write");
    }
    let before = reset_peak();
    let d = data::read_npy(&path).expect("read");
    let after = peak();
    assert_eq!(d.shape(), &[n / 1000, 1000]);
    let data::Buffer::Real(xs) = d.buffer() else { panic!("reals") };
    assert_eq!(xs[n - 1], (n - 1) as f64 * 0.5);
    if let (Some(b), Some(a)) = (before, after) {
        let grown = a.saturating_sub(b);
        eprintln!("reading 10^7 reals (76 MB): peak RSS +{} MB", grown >> 20);
        // As values it would be ~24 bytes per element and an Rc per row.
        assert!(grown < 100 << 20, "peak grew by {} MB", grown >> 20);
    }
}
