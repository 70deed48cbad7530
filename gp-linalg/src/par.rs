//! The parallelism setting for dense linear algebra.
//!
//! faer's own global default is rayon for everything. Measured on the 2-core reference
//! machine (`gp-bench bench cholesky`), rayon speeds up cubic-cost factorizations about 1.4×
//! from n ≈ 1000 on (Cholesky: 8.2 → 5.6 ms at n = 1000, 339 → 234 ms at n = 4000), but
//! products with a vector or a thin block are memory bound, where one thread already
//! saturates bandwidth and rayon only adds overhead. (That holds on the AMD reference hosts.
//! On an Intel Xeon host one thread streams 12–13 GB/s and two 20–21 GB/s, so the passes that
//! stream large bases, [`projection`](crate::projection) and the FOM sweeps, split fixed row
//! blocks over rayon themselves, with sums that do not depend on the thread count.)
//!
//! The default is therefore [`ParallelismSetting::Auto`]: [`parallelism`] (used by cheap,
//! bandwidth-bound calls) answers [`Par::Seq`], and [`parallelism_for`] (used by the
//! factorizations, inverses and large products, which pass their flop count) answers rayon
//! on all threads once the work exceeds [`AUTO_MIN_FLOPS`]. [`set_parallelism`] fixes one
//! [`Par`] for every call instead.

use std::num::NonZeroUsize;
use std::sync::atomic::{AtomicUsize, Ordering};

pub use faer::Par;

/// Work (in floating-point operations) from which [`ParallelismSetting::Auto`] uses rayon:
/// about a millisecond of single-threaded gemm, where the measured gain starts to exceed the
/// cost of waking the pool.
pub const AUTO_MIN_FLOPS: f64 = 1e8;

/// How the dense routines of the workspace choose their parallelism.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ParallelismSetting {
    /// Sequential for bandwidth-bound calls and small work; rayon on all threads for
    /// compute-bound work above [`AUTO_MIN_FLOPS`] (the default).
    Auto,
    /// The same parallelism for every call.
    Fixed(Par),
}

/// Encoding: `AUTO`, 0 = sequential, `k > 0` = rayon with `k - 1` threads (0 = all).
const AUTO: usize = usize::MAX;
static SETTING: AtomicUsize = AtomicUsize::new(AUTO);

/// The current setting.
pub fn parallelism_setting() -> ParallelismSetting {
    match SETTING.load(Ordering::Relaxed) {
        AUTO => ParallelismSetting::Auto,
        0 => ParallelismSetting::Fixed(Par::Seq),
        k => ParallelismSetting::Fixed(Par::rayon(k - 1)),
    }
}

/// The parallelism for calls whose cost is not known or is bandwidth bound (products with
/// vectors and thin blocks): the fixed setting, or [`Par::Seq`] under
/// [`ParallelismSetting::Auto`].
pub fn parallelism() -> Par {
    match parallelism_setting() {
        ParallelismSetting::Auto => Par::Seq,
        ParallelismSetting::Fixed(par) => par,
    }
}

/// The parallelism for a call doing about `flops` floating-point operations: the fixed
/// setting, or under [`ParallelismSetting::Auto`] rayon on all threads when `flops` exceeds
/// [`AUTO_MIN_FLOPS`] (and more than one thread is available), sequential otherwise.
pub fn parallelism_for(flops: f64) -> Par {
    match parallelism_setting() {
        ParallelismSetting::Fixed(par) => par,
        ParallelismSetting::Auto => {
            if flops >= AUTO_MIN_FLOPS && rayon::current_num_threads() > 1 {
                Par::rayon(0)
            } else {
                Par::Seq
            }
        }
    }
}

/// Fixes the parallelism of every dense routine of this workspace (`Par::Rayon(n)` uses `n`
/// threads of the global rayon pool).
pub fn set_parallelism(par: Par) {
    let value = match par {
        Par::Seq => 0,
        Par::Rayon(n) => NonZeroUsize::get(n) + 1,
    };
    SETTING.store(value, Ordering::Relaxed);
}

/// Restores the default [`ParallelismSetting::Auto`].
pub fn set_auto_parallelism() {
    SETTING.store(AUTO, Ordering::Relaxed);
}

/// Restores a setting read earlier with [`parallelism_setting`].
pub fn restore_parallelism(setting: ParallelismSetting) {
    match setting {
        ParallelismSetting::Auto => set_auto_parallelism(),
        ParallelismSetting::Fixed(par) => set_parallelism(par),
    }
}
