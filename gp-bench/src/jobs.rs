//! Independent tasks run a few at a time (`--jobs J`), for experiments made of many
//! folds.
//!
//! On the 2-core reference machine one GRIEF fold gains little from a second thread in its
//! dense algebra, so two folds side by side, each sequential, give more throughput: GRIEF's
//! quick Table 1 (`gp-bench reproduce grief --quick --only table1-folds`) took 8.1 s with
//! `--jobs 2` against 13.5 s with one fold at a time, with the same results. [`run_concurrently`] fixes the workspace's dense parallelism to
//! sequential while more than one task runs, and restores the previous setting afterwards.

use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Mutex;

use gp_linalg::{parallelism_setting, restore_parallelism, set_parallelism, Par};

/// Runs `task(i)` for every `i < count`, `jobs` at a time on scoped threads, and returns
/// the outcomes in index order. Tasks are taken in index order as threads become free.
///
/// With `jobs ≤ 1` (or a single task) everything runs on the calling thread with the
/// current parallelism setting; otherwise the workspace's dense linear algebra is set to
/// [`Par::Seq`] for the duration (a global setting: do not run other dense work
/// concurrently from elsewhere in the process).
pub fn run_concurrently<T, F>(count: usize, jobs: usize, task: F) -> Vec<T>
where
    T: Send,
    F: Fn(usize) -> T + Sync,
{
    let threads = jobs.max(1).min(count);
    if threads <= 1 {
        return (0..count).map(task).collect();
    }
    let previous = parallelism_setting();
    set_parallelism(Par::Seq);
    let next = AtomicUsize::new(0);
    let slots: Mutex<Vec<Option<T>>> = Mutex::new((0..count).map(|_| None).collect());
    std::thread::scope(|scope| {
        for _ in 0..threads {
            scope.spawn(|| loop {
                let i = next.fetch_add(1, Ordering::Relaxed);
                if i >= count {
                    break;
                }
                let outcome = task(i);
                // A poisoned lock means another task panicked; its panic is re-raised when
                // the scope joins, so storing into the inner value is safe.
                let mut guard = slots.lock().unwrap_or_else(|e| e.into_inner());
                guard[i] = Some(outcome);
            });
        }
    });
    restore_parallelism(previous);
    slots
        .into_inner()
        .unwrap_or_else(|e| e.into_inner())
        .into_iter()
        .flatten()
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use gp_linalg::ParallelismSetting;

    #[test]
    fn outcomes_come_back_in_index_order() {
        for jobs in [0, 1, 2, 3, 8] {
            let out = run_concurrently(7, jobs, |i| {
                std::thread::sleep(std::time::Duration::from_millis((7 - i as u64) * 2));
                i * i
            });
            assert_eq!(out, vec![0, 1, 4, 9, 16, 25, 36], "jobs = {jobs}");
        }
        assert!(run_concurrently(0, 2, |i| i).is_empty());
    }

    #[test]
    fn dense_algebra_is_sequential_inside_and_restored_after() {
        let before = parallelism_setting();
        let seen = run_concurrently(2, 2, |_| parallelism_setting());
        assert!(seen
            .iter()
            .all(|s| *s == ParallelismSetting::Fixed(Par::Seq)));
        assert_eq!(parallelism_setting(), before);
    }
}
