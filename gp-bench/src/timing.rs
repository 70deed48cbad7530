//! Wall-clock timing for the scaling tables.

use std::time::Instant;

/// Runs `f` once to warm up, then `reps` times, and returns the median wall time in seconds
/// with the last result. The median is robust to a stray slow run on a busy machine.
pub fn median_time<T>(reps: usize, mut f: impl FnMut() -> T) -> (f64, T) {
    let mut last = f();
    let mut times = Vec::with_capacity(reps.max(1));
    for _ in 0..reps.max(1) {
        let start = Instant::now();
        last = f();
        times.push(start.elapsed().as_secs_f64());
    }
    times.sort_by(f64::total_cmp);
    (times[times.len() / 2], last)
}

/// Runs `f` once and returns its wall time in seconds with its result (for runs too long to
/// repeat).
pub fn time_once<T>(f: impl FnOnce() -> T) -> (f64, T) {
    let start = Instant::now();
    let out = f();
    (start.elapsed().as_secs_f64(), out)
}
