//! The state the step interfaces of FLA and EFLA share: the set-up, the growing basis, the
//! entries of `T`, the status, and the assembly of the result.

use faer::linalg::matmul::matmul;
use faer::{Accum, MatRef};

use super::lanczos_basis::{off_diagonal, Basis, FactorizedLanczos, LanczosSetup};
use crate::lanczos::LanczosStatus;
use crate::tridiagonal::SymTridiagonal;

/// What one step of [`FlaSolver::step`](super::FlaSolver::step) or
/// [`EflaSolver::step`](super::EflaSolver::step) did: it added the Lanczos vector `q_{j+1}`
/// (0-based index `j`) to the basis and `α_j` to the diagonal of `T`.
#[derive(Debug, Clone, Copy, PartialEq)]
#[non_exhaustive]
pub struct LanczosStep {
    /// The 0-based index `j` of the vector just added (`T` now has `j + 1` rows).
    pub index: usize,
    /// The diagonal entry `α_j = ⟨q_j, K̃ q_j⟩`.
    pub alpha: f64,
    /// The off-diagonal `β_j` towards the next vector, or `None` if the process stopped at
    /// this step (the last vector, an invariant subspace or a non-finite `β_j`).
    pub beta: Option<f64>,
    /// The status after the step ([`LanczosStatus::Running`] if the process goes on).
    pub status: LanczosStatus,
}

/// The state of a factorized Lanczos step interface.
///
/// A step makes all its products before it changes the state (`α_j`, `β_j`, the new
/// vector and its by-products are recorded together at the end), so a step that fails
/// leaves the state as it was. Invariants: `diagonal.len() + 1 = basis.len()` while the
/// process runs (`≤` once it has stopped), `p_hat.len() ≥ m · diagonal.len()`, and every
/// stored entry of `T` is finite.
pub(crate) struct LanczosState {
    pub(crate) setup: LanczosSetup,
    pub(crate) basis: Basis,
    /// `P̂ = S Q̂`, column-major: EFLA keeps it for every basis vector, FLA for every vector
    /// with an entry in `T`.
    pub(crate) p_hat: Vec<f64>,
    diagonal: Vec<f64>,
    off: Vec<f64>,
    status: LanczosStatus,
    /// `β_{j−1}` (0 before the first off-diagonal).
    pub(crate) beta_prev: f64,
}

impl LanczosState {
    /// The state before the first step (already stopped if `k_max = 0`).
    pub(crate) fn new(setup: LanczosSetup, p_hat: Vec<f64>) -> Self {
        let k_max = setup.k_max;
        let basis = Basis::new(setup.m, k_max);
        let mut state = Self {
            setup,
            basis,
            p_hat,
            diagonal: Vec::with_capacity(k_max),
            off: Vec::with_capacity(k_max),
            status: LanczosStatus::Running,
            beta_prev: 0.0,
        };
        if k_max == 0 {
            state.status = state.cap_status();
        }
        state
    }

    /// Whether the process goes on.
    pub(crate) fn running(&self) -> bool {
        self.status == LanczosStatus::Running
    }

    /// The status so far.
    pub(crate) fn status(&self) -> LanczosStatus {
        self.status
    }

    /// Number of Lanczos vectors with an entry in `T` so far; the index of the next one.
    pub(crate) fn steps(&self) -> usize {
        self.diagonal.len()
    }

    /// The status on reaching `k_max` vectors: `k_max = m + 1` when more were asked for
    /// means the Krylov space is exhausted.
    fn cap_status(&self) -> LanczosStatus {
        if self.setup.capped {
            LanczosStatus::InvariantSubspace
        } else {
            LanczosStatus::MaxIterations
        }
    }

    /// Stops the process with `status` (no entry is added).
    pub(crate) fn stop(&mut self, status: LanczosStatus) {
        self.status = status;
    }

    /// Whether the next vector is the last one (`k_max` vectors then): the step records
    /// its `α` and no `β`.
    pub(crate) fn next_is_last(&self) -> bool {
        self.diagonal.len() + 1 == self.setup.k_max
    }

    /// Records the (finite) `α_j`; the status is final if this makes `k_max` vectors.
    pub(crate) fn push_alpha(&mut self, alpha: f64) {
        self.diagonal.push(alpha);
        if self.diagonal.len() == self.setup.k_max {
            self.status = self.cap_status();
        }
    }

    /// The off-diagonal test for `β_j² = beta_sq` after `α_j = alpha`: `Some(β_j)` (recorded)
    /// to go on, `None` when the process stops (the status says why).
    pub(crate) fn push_beta(&mut self, beta_sq: f64, alpha: f64) -> Option<f64> {
        match off_diagonal(beta_sq, alpha, self.beta_prev, self.setup.tol) {
            Ok(beta) => {
                self.off.push(beta);
                self.beta_prev = beta;
                Some(beta)
            }
            Err(status) => {
                self.status = status;
                None
            }
        }
    }

    /// The report of step `j`.
    pub(crate) fn report(&self, index: usize, alpha: f64, beta: Option<f64>) -> LanczosStep {
        LanczosStep {
            index,
            alpha,
            beta,
            status: self.status,
        }
    }

    /// Assembles the result from the vectors with an entry in `T`; `d` is rescaled from `b̃`
    /// to `z₀` and `WᵀQ = P̂ + g̃ d̃ᵀ`.
    pub(crate) fn finish(self) -> FactorizedLanczos {
        let Self {
            setup,
            mut basis,
            p_hat,
            diagonal,
            mut off,
            status,
            ..
        } = self;
        let (m, k) = (setup.m, diagonal.len());
        // A non-finite step drops its vector, and with it the off-diagonal that led to it;
        // a process finished early drops the vector built after the last α.
        off.truncate(k.saturating_sub(1));
        basis.q.truncate(m * k);
        basis.d.truncate(k);
        let q_hat = MatRef::from_column_major_slice(&basis.q, m, k).to_owned();
        let mut wt_basis = MatRef::from_column_major_slice(&p_hat[..m * k], m, k).to_owned();
        matmul(
            wt_basis.as_mut(),
            Accum::Add,
            MatRef::from_column_major_slice(&setup.g, m, 1),
            MatRef::from_row_major_slice(&basis.d, 1, k),
            1.0,
            gp_linalg::parallelism(),
        );
        let q_coeffs = basis.d.iter().map(|d| d / setup.start_norm).collect();
        FactorizedLanczos {
            q_hat,
            q_coeffs,
            // Every α and β was tested finite when it was recorded.
            tridiagonal: SymTridiagonal::from_checked(diagonal, off),
            status,
            start_norm: setup.start_norm,
            wt_basis,
        }
    }
}
