//! Action policies of the probabilistic linear solver.

use faer::{Col, ColRef};

/// What a [`Policy`] sees when it chooses the next action.
#[derive(Debug, Clone, Copy)]
pub struct PolicyState<'a> {
    /// The current residual `r = b − K̂ v`.
    pub residual: ColRef<'a, f64>,
    /// Actions taken in this solve so far.
    pub iteration: usize,
    /// Columns of the belief (recycled ones included).
    pub rank: usize,
}

/// Chooses the actions of a [`ProbabilisticSolver`](super::ProbabilisticSolver). Implement it
/// for a policy of your own (for example one that targets uncertain points).
pub trait Policy {
    /// The next action `s` (length `n`).
    fn action(&mut self, state: &PolicyState<'_>) -> Col<f64>;

    /// Called by drivers that run a sequence of solves (IterNCGP's Newton steps) before each
    /// solve; `recycled` says whether the solve starts from a recycled belief. The default
    /// does nothing.
    fn start_solve(&mut self, recycled: bool) {
        let _ = recycled;
    }
}

/// Residual actions `s_j = r_{j−1}`, unnormalised (as the reference code): the solver then
/// runs conjugate gradients ("IterNCGP-CG").
#[derive(Debug, Clone, Copy, Default)]
pub struct ResidualPolicy;

impl Policy for ResidualPolicy {
    fn action(&mut self, state: &PolicyState<'_>) -> Col<f64> {
        state.residual.to_owned()
    }
}

/// Unit-vector actions `e_k` for `k = 0, 1, 2, …` in the order of the data: the solver then
/// conditions on one data point per step (subset of data, "IterNCGP-Chol"). The counter runs
/// on across solves (a recycled belief already holds the earlier points, and re-proposing
/// them would break down at once); [`UnitVectorPolicy::restart`] resets it.
#[derive(Debug, Clone, Copy, Default)]
pub struct UnitVectorPolicy {
    next: usize,
}

impl UnitVectorPolicy {
    /// A policy starting at `e_0`.
    pub fn new() -> Self {
        Self::default()
    }

    /// Starts again at `e_0` (for solves without recycling).
    pub fn restart(&mut self) {
        self.next = 0;
    }

    /// The index of the next unit vector.
    pub fn next_index(&self) -> usize {
        self.next
    }
}

impl Policy for UnitVectorPolicy {
    /// `e_k` for the next `k`; past the last index the zero vector, which the solver treats
    /// as a breakdown.
    fn action(&mut self, state: &PolicyState<'_>) -> Col<f64> {
        let n = state.residual.nrows();
        let k = self.next;
        self.next += 1;
        Col::from_fn(n, |i| if i == k { 1.0 } else { 0.0 })
    }

    /// Restarts at `e_0` for a solve without a recycled belief (each Newton step is then a
    /// subset-of-data solve on the first points, "IterNCGP-Chol"); with recycling the
    /// counter runs on.
    fn start_solve(&mut self, recycled: bool) {
        if !recycled {
            self.restart();
        }
    }
}
