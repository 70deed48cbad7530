//! Factorized Lanczos (FLA, Yadav et al. 2021, App. B.3, Algorithm 6, corrected).

use super::lanczos_basis::{FactorizedLanczos, LanczosSetup};
use super::lanczos_state::{LanczosState, LanczosStep};
use super::system::{Products, StartVector, WeightSpaceSystem};
use crate::cg::kernels::{dot, norm2};
use crate::error::Result;
use crate::lanczos::{LanczosOptions, LanczosStatus};

/// Factorized Lanczos with full re-orthogonalization: the Lanczos process of
/// [`lanczos`](crate::lanczos()) on `K̃ = W K_G Wᵀ + σ² I_n` from `z₀`, with the basis kept
/// as `Q = W Q̂ + b̃ dᵀ` (`b̃ = z₀/‖z₀‖`).
///
/// Products with `K̃` become `𝒜(q̂, c) = (Â q̂ + c h̃, σ² c)` and inner products go through
/// `S`. This is the straightforward version: it caches no `S` product, so a step costs one
/// `K_G` and four `S` products (`K̃ q_j`; `S ŵ` for `α_j` and the first re-orthogonalization
/// pass; again for the second pass; again for `β_j`), and the result's
/// [`wt_basis`](FactorizedLanczos::wt_basis) costs `k` more. [`efla`](super::efla()) needs
/// one `K_G` and one `S` product per step.
///
/// Corrections to the paper's Algorithm 6: the new vector is
/// `K̃ q_j − β_{j−1} q_{j−1}` (here: `K̃ q_j` orthogonalized against every previous vector,
/// which removes both terms), not the paper's swapped roles; the start is normalized.
///
/// Stopping rules, the cap `min(max_iterations, m + 1)` and errors as for
/// [`efla`](super::efla()). [`FlaSolver`] is the step interface; this function runs it to
/// the end.
pub fn fla(
    system: &dyn WeightSpaceSystem,
    start: &StartVector,
    options: &LanczosOptions,
) -> Result<FactorizedLanczos> {
    let mut solver = FlaSolver::new(system, start, options)?;
    while solver.step()?.is_some() {}
    Ok(solver.finish())
}

/// FLA as a step interface, like [`EfcgSolver`](super::EfcgSolver): set up with
/// [`new`](Self::new), add one Lanczos vector per [`step`](Self::step) (stop whenever you
/// like), read the state with the accessors and end with [`finish`](Self::finish). Stepping
/// until `step` returns `None` and finishing gives exactly [`fla`]'s result (same operations
/// in the same order); finishing after `k` steps gives the first `k` vectors and the
/// leading `k×k` block of `T` of that run, bit for bit what [`fla`] gives with
/// `max_iterations = k`, with the status [`LanczosStatus::Running`].
///
/// A step costs one `K_G` and five `S` products (the four of [`fla`] and the column
/// `S q̂_j` of [`wt_basis`](FactorizedLanczos::wt_basis)).
///
/// ```
/// use faer::{Col, Mat};
/// use gp_linalg::DenseOperator;
/// use gp_solvers::factorized::{FlaSolver, OperatorSystem, StartVector};
/// use gp_solvers::{LanczosOptions, LanczosStatus};
///
/// let kg = DenseOperator::new(Mat::from_fn(4, 4, |i, j| if i == j { 2.0 } else { 0.5 }));
/// let s = DenseOperator::new(Mat::from_fn(4, 4, |i, j| if i == j { 1.0 } else { 0.1 }));
/// let system = OperatorSystem::new(&kg, &s, 0.1)?;
/// let start = StartVector::new(Col::from_fn(4, |i| i as f64 + 1.0), 40.0)?;
/// let mut solver = FlaSolver::new(&system, &start, &LanczosOptions::default())?;
/// // Build at most two vectors, then stop.
/// for _ in 0..2 {
///     if solver.step()?.is_none() {
///         break;
///     }
/// }
/// assert_eq!(solver.status(), LanczosStatus::Running);
/// let truncated = solver.finish();
/// assert_eq!(truncated.steps(), 2);
/// assert_eq!(truncated.tridiagonal.dim(), 2);
/// # Ok::<(), gp_solvers::SolverError>(())
/// ```
pub struct FlaSolver<'a> {
    ops: Products<'a>,
    state: LanczosState,
    /// Work space: `ŵ`, `S ŵ` (and `S q̂_j`), and the scratch of `𝒜`.
    w: Vec<f64>,
    sw: Vec<f64>,
    scratch: Vec<f64>,
}

lanczos_step_accessors!(FlaSolver);

impl<'a> FlaSolver<'a> {
    /// Sets up FLA for the start vector `start` (one `K_G` product, `h̃ = K_G g̃`).
    ///
    /// Errors as [`fla`].
    pub fn new(
        system: &'a dyn WeightSpaceSystem,
        start: &StartVector,
        options: &LanczosOptions,
    ) -> Result<Self> {
        let ops = Products::new(system);
        let setup = LanczosSetup::new(&ops, start, options, "fla (g = Wᵀz₀)")?;
        let m = setup.m;
        let p_hat = Vec::with_capacity(m * setup.k_max);
        Ok(Self {
            ops,
            state: LanczosState::new(setup, p_hat),
            w: vec![0.0; m],
            sw: vec![0.0; m],
            scratch: vec![0.0; m],
        })
    }

    /// Adds one Lanczos vector (one `K_G` and up to five `S` products). Returns `None` (and
    /// does nothing more) once the process has stopped: after `min(max_iterations, m + 1)`
    /// vectors, at an invariant subspace, or at a non-finite value (a non-finite `α_j` ends
    /// the process in this call with `None`; the vector is not added).
    ///
    /// Errors when a product of the system fails or returns NaN or infinity; the step then
    /// records nothing (the state is as before the call, and [`finish`](Self::finish) gives
    /// the vectors so far).
    pub fn step(&mut self) -> Result<Option<LanczosStep>> {
        if !self.state.running() {
            return Ok(None);
        }
        let ops = &self.ops;
        let st = &mut self.state;
        let (w, sw) = (&mut self.w, &mut self.sw);
        let (g, h) = (&st.setup.g, &st.setup.h);
        let j = st.steps();
        let c = st.basis.d[j];
        // (ŵ, c_w) = 𝒜(q̂_j, c_j).
        let mut cw = ops.factorized(st.basis.col(j), c, h, w, &mut self.scratch)?;
        // α_j = ⟨q_j, w⟩ with its own S product.
        ops.s(w, sw)?;
        let gw = dot(g, w);
        let alpha = dot(st.basis.col(j), sw) + cw * st.basis.l[j] + c * (gw + cw);
        if !(alpha.is_finite() && norm2(w).is_finite() && cw.is_finite()) {
            st.stop(LanczosStatus::NonFinite);
            return Ok(None);
        }
        // WᵀQ needs S q̂_j (the scratch is free again).
        ops.s(st.basis.col(j), &mut self.scratch)?;
        if st.next_is_last() {
            st.p_hat.extend_from_slice(&self.scratch);
            st.push_alpha(alpha);
            return Ok(Some(st.report(j, alpha, None)));
        }
        for pass in 0..2 {
            if pass > 0 {
                ops.s(w, sw)?;
            }
            st.basis.coefficients(None, sw, dot(g, w), cw)?;
            st.basis.subtract(w, &mut cw)?;
        }
        // β_j = ‖w‖ with its own S product.
        ops.s(w, sw)?;
        let ell = dot(g, w);
        let beta_sq = dot(sw, w) + 2.0 * cw * ell + cw * cw;
        // No product from here on: the step is recorded as a whole.
        st.p_hat.extend_from_slice(&self.scratch);
        st.push_alpha(alpha);
        let Some(beta) = st.push_beta(beta_sq, alpha) else {
            return Ok(Some(st.report(j, alpha, None)));
        };
        st.basis.push(w, cw, ell, beta);
        Ok(Some(st.report(j, alpha, Some(beta))))
    }

    /// The outcome so far: the result [`fla`] returns when the process ran to the end (a
    /// process stopped early keeps [`LanczosStatus::Running`] and the vectors with an entry
    /// in `T`).
    pub fn finish(self) -> FactorizedLanczos {
        self.state.finish()
    }
}
