//! Efficiently factorized Lanczos (EFLA, Yadav et al. 2021, App. B.3, Algorithm 7, corrected).

use super::lanczos_basis::{FactorizedLanczos, LanczosSetup};
use super::lanczos_state::{LanczosState, LanczosStep};
use super::system::{Products, StartVector, WeightSpaceSystem};
use crate::cg::kernels::{axpy, dot, norm2};
use crate::error::Result;
use crate::lanczos::{LanczosOptions, LanczosStatus};

/// Efficiently factorized Lanczos with full re-orthogonalization: the Lanczos process of
/// [`lanczos`](crate::lanczos()) on `K̃ = W K_G Wᵀ + σ² I_n` from `z₀`, at one `K_G` and one
/// `S` product per step (plus one `K_G` product of set-up).
///
/// The basis is kept as `Q = W Q̂ + b̃ dᵀ` (`b̃ = z₀/‖z₀‖`) together with `P̂ = S Q̂`,
/// `L = Q̂ᵀ g̃` and `ŝ = Â q̂_j` for the current vector, so that every factorized inner
/// product is `O(m)` without a product. Step `j`:
///
/// ```text
/// ŵ = ŝ + c_j h̃;  c_w = σ² c_j                                  (K̃ q_j, no product)
/// α_j = P̂_jᵀŵ + c_w L_j + c_j (g̃ᵀŵ + c_w)
/// twice: λ = P̂ᵀŵ + c_w L + (g̃ᵀŵ + c_w) d;  ŵ −= Q̂ λ;  c_w −= dᵀλ   (full re-orthogonalization)
/// (ŝ', p̂') = B(ŵ);  ℓ = g̃ᵀŵ;  β_j = √(p̂'ᵀŵ + 2 c_w ℓ + c_w²)
/// q̂_{j+1} = ŵ/β_j;  c_{j+1} = c_w/β_j;  ŝ = ŝ'/β_j;  P̂_{j+1} = p̂'/β_j;  L_{j+1} = ℓ/β_j
/// ```
///
/// As [`lanczos`](crate::lanczos()), the new vector is orthogonalized against all previous
/// ones (including the current one, which removes `α_j q_j` and `β_{j−1} q_{j−1}`), twice.
/// Corrections to the paper's Algorithm 7: the shift is `σ²`, not `σ`; the
/// orthogonalization step is `w − α_j q_j`, not `q_j − α_j q_j`; the start is normalized; the
/// scalar of `K̃ q_j` is `σ² c_j` (the reference code's `bfsla2` drops the factor `c_j`).
///
/// At most `min(max_iterations, m + 1)` vectors are built: `K̃` leaves
/// `span{range(W), z₀}` (dimension ≤ `m + 1`) invariant, so reaching `m + 1` vectors when
/// more were asked for ends with [`LanczosStatus::InvariantSubspace`], as
/// [`lanczos`](crate::lanczos()) on `K̃` would. The process also stops when an off-diagonal
/// is at most `breakdown_tolerance · ‖K̃ q_j‖` ([`LanczosStatus::InvariantSubspace`]) or a
/// value is not finite ([`LanczosStatus::NonFinite`]). The factorized `β² = ⟨w, w⟩` is a sum
/// of terms that cancel when `z₀` lies close to `range(W)`; its relative accuracy is about
/// `ε / (1 − cos θ)` with `θ` the angle between `z₀` and `range(W)`, so an invariant
/// subspace smaller than `m + 1` is detected only down to that level.
///
/// Errors with [`SolverError::InvalidOptions`](crate::SolverError::InvalidOptions) for a zero
/// start vector (`ρ = 0`), a bad tolerance or a bad `σ²`, and
/// [`SolverError::ShapeMismatch`](crate::SolverError::ShapeMismatch) if `g` does not have
/// length `m`.
///
/// A product of the system that fails or returns NaN or infinity ends the solve with that
/// error (or a [`LinalgError::NonFinite`](gp_linalg::LinalgError::NonFinite)), never with a NaN
/// result.
///
/// [`EflaSolver`] is the step interface; this function runs it to the end.
pub fn efla(
    system: &dyn WeightSpaceSystem,
    start: &StartVector,
    options: &LanczosOptions,
) -> Result<FactorizedLanczos> {
    let mut solver = EflaSolver::new(system, start, options)?;
    while solver.step()?.is_some() {}
    Ok(solver.finish())
}

/// EFLA as a step interface, like [`EfcgSolver`](super::EfcgSolver): set up with
/// [`new`](Self::new), add one Lanczos vector per [`step`](Self::step) (stop whenever you
/// like), read the state with the accessors and end with [`finish`](Self::finish). Stepping
/// until `step` returns `None` and finishing gives exactly [`efla`]'s result (same
/// operations in the same order); finishing after `k` steps gives the first `k` vectors and
/// the leading `k×k` block of `T` of that run, bit for bit what [`efla`] gives with
/// `max_iterations = k`, with the status [`LanczosStatus::Running`].
///
/// ```
/// use faer::{Col, Mat};
/// use gp_linalg::DenseOperator;
/// use gp_solvers::factorized::{efla, EflaSolver, OperatorSystem, StartVector};
/// use gp_solvers::LanczosOptions;
///
/// let kg = DenseOperator::new(Mat::from_fn(4, 4, |i, j| if i == j { 2.0 } else { 0.5 }));
/// let s = DenseOperator::new(Mat::from_fn(4, 4, |i, j| if i == j { 1.0 } else { 0.1 }));
/// let system = OperatorSystem::new(&kg, &s, 0.1)?;
/// let start = StartVector::new(Col::from_fn(4, |i| i as f64 + 1.0), 40.0)?;
/// let opts = LanczosOptions::default();
/// let mut solver = EflaSolver::new(&system, &start, &opts)?;
/// // Watch the diagonal of T grow.
/// let mut alphas = Vec::new();
/// while let Some(step) = solver.step()? {
///     alphas.push(step.alpha);
/// }
/// let status = solver.status();
/// let res = solver.finish();
/// assert_eq!(res.tridiagonal.diagonal(), &alphas[..]);
/// assert_eq!(res.status, status);
/// assert_eq!(res.tridiagonal, efla(&system, &start, &opts)?.tridiagonal);
/// # Ok::<(), gp_solvers::SolverError>(())
/// ```
pub struct EflaSolver<'a> {
    ops: Products<'a>,
    state: LanczosState,
    /// `ŝ = Â q̂_j` for the current vector.
    s: Vec<f64>,
    /// Work space: `ŵ` and the double product `B(ŵ) = (ŝ', p̂')`.
    w: Vec<f64>,
    s_new: Vec<f64>,
    p_new: Vec<f64>,
}

lanczos_step_accessors!(EflaSolver);

impl<'a> EflaSolver<'a> {
    /// Sets up EFLA for the start vector `start` (one `K_G` product, `h̃ = K_G g̃`).
    ///
    /// Errors as [`efla`].
    pub fn new(
        system: &'a dyn WeightSpaceSystem,
        start: &StartVector,
        options: &LanczosOptions,
    ) -> Result<Self> {
        let ops = Products::new(system);
        let setup = LanczosSetup::new(&ops, start, options, "efla (g = Wᵀz₀)")?;
        let m = setup.m;
        // P̂[:,0] = S q̂₀ = 0.
        let p_hat = vec![0.0; m];
        Ok(Self {
            ops,
            state: LanczosState::new(setup, p_hat),
            s: vec![0.0; m],
            w: vec![0.0; m],
            s_new: vec![0.0; m],
            p_new: vec![0.0; m],
        })
    }

    /// Adds one Lanczos vector (one `K_G` and one `S` product). Returns `None` (and does
    /// nothing more) once the process has stopped: after `min(max_iterations, m + 1)`
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
        let sigma2 = self.ops.sigma2;
        let st = &mut self.state;
        let w = &mut self.w;
        let (m, g, h) = (st.setup.m, &st.setup.g, &st.setup.h);
        let j = st.steps();
        let c = st.basis.d[j];
        // K̃ q_j = W ŵ + c_w b̃.
        w.copy_from_slice(&self.s);
        axpy(c, h, w);
        let mut cw = sigma2 * c;
        let pj = &st.p_hat[j * m..(j + 1) * m];
        let alpha = dot(pj, w) + cw * st.basis.l[j] + c * (dot(g, w) + cw);
        if !(alpha.is_finite() && norm2(w).is_finite() && cw.is_finite()) {
            st.stop(LanczosStatus::NonFinite);
            return Ok(None);
        }
        if st.next_is_last() {
            st.push_alpha(alpha);
            return Ok(Some(st.report(j, alpha, None)));
        }
        for _ in 0..2 {
            st.basis.coefficients(Some(&st.p_hat), w, dot(g, w), cw)?;
            st.basis.subtract(w, &mut cw)?;
        }
        // The only products of the step.
        self.ops.b(w, &mut self.s_new, &mut self.p_new)?;
        let ell = dot(g, w);
        let beta_sq = dot(&self.p_new, w) + 2.0 * cw * ell + cw * cw;
        // No product from here on: the step is recorded as a whole.
        st.push_alpha(alpha);
        let Some(beta) = st.push_beta(beta_sq, alpha) else {
            return Ok(Some(st.report(j, alpha, None)));
        };
        st.basis.push(w, cw, ell, beta);
        st.p_hat.extend(self.p_new.iter().map(|v| v / beta));
        self.s.copy_from_slice(&self.s_new);
        gp_linalg::vector::scale(1.0 / beta, &mut self.s);
        Ok(Some(st.report(j, alpha, Some(beta))))
    }

    /// The outcome so far: the result [`efla`] returns when the process ran to the end (a
    /// process stopped early keeps [`LanczosStatus::Running`] and the vectors with an entry
    /// in `T`).
    pub fn finish(self) -> FactorizedLanczos {
        self.state.finish()
    }
}
