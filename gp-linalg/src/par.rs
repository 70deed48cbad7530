//! The parallelism setting for dense linear algebra.
//!
//! faer's own global default is rayon. On small machines (the reference machine of this
//! project has 2 cores and one core already saturates memory bandwidth) sequential BLAS is as
//! fast or faster for the sizes Gaussian-process code meets, so `gp-linalg` defaults to
//! [`Par::Seq`] and every dense routine of the workspace reads [`parallelism`]. Change it with
//! [`set_parallelism`] after measuring (`gp-bench bench cholesky` prints the comparison).

use std::num::NonZeroUsize;
use std::sync::atomic::{AtomicUsize, Ordering};

pub use faer::Par;

/// 0 means sequential, `k > 0` means rayon with `k - 1` threads (0 = rayon's choice).
static SETTING: AtomicUsize = AtomicUsize::new(0);

/// The parallelism used by the dense factorizations and products of this workspace.
pub fn parallelism() -> Par {
    match SETTING.load(Ordering::Relaxed) {
        0 => Par::Seq,
        k => Par::rayon(k - 1),
    }
}

/// Sets the parallelism used by the dense routines of this workspace (default [`Par::Seq`]).
///
/// `Par::Rayon(n)` uses `n` threads of the global rayon pool.
pub fn set_parallelism(par: Par) {
    let value = match par {
        Par::Seq => 0,
        Par::Rayon(n) => NonZeroUsize::get(n) + 1,
    };
    SETTING.store(value, Ordering::Relaxed);
}
