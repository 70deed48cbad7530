//! What the factorized Lanczos solvers return, and the pieces FLA and EFLA share: set-up,
//! the growing factorized basis `Q = W Q̂ + b̃ dᵀ`, its re-orthogonalization and the
//! off-diagonal test (the step state is in `lanczos_state`).

use faer::linalg::matmul::matmul;
use faer::{Accum, ColRef, Mat, MatRef};
use gp_linalg::projection::{add_block_combination, block_dots};
use gp_linalg::LinearOperator;

use super::system::{check_system, Products, StartVector};
use super::vector::FactorizedVector;
use crate::cg::kernels::dot;
use crate::error::{check_shape, invalid, Result};
use crate::lanczos::{LanczosOptions, LanczosStatus};
use crate::tridiagonal::SymTridiagonal;

/// The outcome of [`fla`](super::fla()) or [`efla`](super::efla()) (or of their step
/// interfaces [`FlaSolver`](super::FlaSolver), [`EflaSolver`](super::EflaSolver)): `k`
/// Lanczos vectors of `K̃ = W K_G Wᵀ + σ² I_n` from the start vector `z₀`, in factorized
/// form `Q = W Q̂ + z₀ dᵀ`, and the tridiagonal `T = Qᵀ K̃ Q`.
///
/// `Q` has orthonormal columns and `q₁ = z₀/‖z₀‖` (so `Q̂[:,0] = 0`, `d₀ = 1/‖z₀‖`), as
/// [`lanczos`](crate::lanczos()) on `K̃` gives.
#[derive(Debug, Clone)]
pub struct FactorizedLanczos {
    /// `Q̂` (`m×k`).
    pub q_hat: Mat<f64>,
    /// `d` (length `k`): the coefficients of `z₀` (not normalized) in the columns of `Q`.
    pub q_coeffs: Vec<f64>,
    /// The tridiagonal `T` (`k×k`).
    pub tridiagonal: SymTridiagonal,
    /// Why the process stopped ([`LanczosStatus::Running`] only for a step interface
    /// finished early).
    pub status: LanczosStatus,
    /// `‖z₀‖₂`.
    pub start_norm: f64,
    /// `WᵀQ = S Q̂ + g dᵀ` (`m×k`), the grid-space image of the basis that LOVE-type
    /// covariances need (`K_G Wᵀ Q`). Free in EFLA (cached `S Q̂`); `k` extra `S` products in
    /// FLA.
    pub wt_basis: Mat<f64>,
}

impl FactorizedLanczos {
    /// Number of Lanczos vectors `k`.
    pub fn steps(&self) -> usize {
        self.q_coeffs.len()
    }

    /// Column `j` of `Q` in factorized form, or `None` if `j ≥ k`.
    pub fn column(&self, j: usize) -> Option<FactorizedVector> {
        (j < self.steps()).then(|| FactorizedVector {
            hat: self.q_hat.col(j).to_owned(),
            coeff: self.q_coeffs[j],
        })
    }

    /// Expands the basis to `Q = W Q̂ + z₀ dᵀ` (`n×k`), given `W` (`n×m`) and `z₀`.
    ///
    /// Errors with [`SolverError::ShapeMismatch`](crate::SolverError::ShapeMismatch) if `W`
    /// is not `n×m`.
    pub fn expand_basis(&self, w: &dyn LinearOperator, z0: ColRef<'_, f64>) -> Result<Mat<f64>> {
        let n = z0.nrows();
        check_shape(
            w.shape(),
            (n, self.q_hat.nrows()),
            "FactorizedLanczos::expand_basis (W must be n×m)",
        )?;
        let k = self.steps();
        let mut q = Mat::zeros(n, k);
        w.matmat(self.q_hat.as_ref(), q.as_mut());
        let d = MatRef::from_row_major_slice(&self.q_coeffs, 1, k);
        matmul(
            q.as_mut(),
            Accum::Add,
            z0.as_mat(),
            d,
            1.0,
            gp_linalg::parallelism(),
        );
        Ok(q)
    }
}

/// Set-up shared by FLA and EFLA: the checks, `k_max` and the normalized start data
/// `g̃ = g/‖z₀‖`, `h̃ = K_G g̃` (`ρ̃ = 1`).
pub(crate) struct LanczosSetup {
    pub(crate) m: usize,
    pub(crate) k_max: usize,
    pub(crate) start_norm: f64,
    pub(crate) g: Vec<f64>,
    pub(crate) h: Vec<f64>,
    pub(crate) tol: f64,
    /// Whether `k_max` is the dimension bound `m + 1` rather than `max_iterations`: reaching
    /// it means the Krylov space is exhausted.
    pub(crate) capped: bool,
}

impl LanczosSetup {
    pub(crate) fn new(
        ops: &Products<'_>,
        start: &StartVector,
        options: &LanczosOptions,
        context: &'static str,
    ) -> Result<Self> {
        let m = check_system(ops.system, Some(start), context)?;
        let tol = options.breakdown_tolerance;
        if !(tol.is_finite() && tol >= 0.0) {
            return Err(invalid(
                "breakdown_tolerance",
                format!("must be finite and non-negative, got {tol}"),
            ));
        }
        let start_norm = start.norm();
        if start_norm == 0.0 {
            return Err(invalid("start", "the Lanczos start vector is zero"));
        }
        let g: Vec<f64> = start.g_slice().iter().map(|v| v / start_norm).collect();
        let mut h = vec![0.0; m];
        ops.kg(&g, &mut h)?;
        // K̃ leaves span{range(W), z₀} (dimension ≤ m + 1) invariant.
        let k_max = options.max_iterations.min(m + 1);
        let capped = options.max_iterations > m + 1;
        Ok(Self {
            m,
            k_max,
            start_norm,
            g,
            h,
            tol,
            capped,
        })
    }
}

/// The factorized basis `Q = W Q̂ + b̃ dᵀ` (`b̃ = z₀/‖z₀‖`) with `L = Q̂ᵀ g̃`, stored
/// column-major and grown one column at a time.
pub(crate) struct Basis {
    m: usize,
    pub(crate) q: Vec<f64>,
    pub(crate) d: Vec<f64>,
    pub(crate) l: Vec<f64>,
    coeffs: Vec<f64>,
}

impl Basis {
    /// The basis holding `q₁ = b̃` (`Q̂[:,0] = 0`, `d₀ = 1`).
    pub(crate) fn new(m: usize, k_max: usize) -> Self {
        let mut q = Vec::with_capacity(m * k_max);
        q.resize(m, 0.0);
        let mut d = Vec::with_capacity(k_max);
        d.push(1.0);
        Self {
            m,
            q,
            d,
            l: vec![0.0],
            coeffs: Vec::with_capacity(k_max),
        }
    }

    pub(crate) fn len(&self) -> usize {
        self.d.len()
    }

    /// `Q̂[:,j]`.
    pub(crate) fn col(&self, j: usize) -> &[f64] {
        &self.q[j * self.m..(j + 1) * self.m]
    }

    /// Appends `q_{j+1} = (ŵ, c_w)/β` and `L_{j+1} = g̃ᵀŵ/β` (`gw = g̃ᵀŵ`).
    pub(crate) fn push(&mut self, w: &[f64], cw: f64, gw: f64, beta: f64) {
        self.q.extend(w.iter().map(|v| v / beta));
        self.d.push(cw / beta);
        self.l.push(gw / beta);
    }

    /// The coefficients of one classical Gram–Schmidt pass of `(ŵ, c_w)` against every
    /// column, in the factorized inner product:
    /// `λ_j = ⟨q_j, w⟩ = (Q̂ᵀ S ŵ)_j + c_w L_j + d_j (g̃ᵀŵ + c_w)` with `gw = g̃ᵀŵ`.
    ///
    /// `lhsᵀ rhs` gives the first term: `lhs = P̂ = S Q̂` with `rhs = ŵ` (EFLA, no product)
    /// or `lhs = Q̂` (`None`) with `rhs = S ŵ` (FLA).
    pub(crate) fn coefficients(
        &mut self,
        lhs: Option<&[f64]>,
        rhs: &[f64],
        gw: f64,
        cw: f64,
    ) -> Result<()> {
        let (m, k) = (self.m, self.len());
        let lhs = lhs.unwrap_or(&self.q);
        block_dots(
            MatRef::from_column_major_slice(&lhs[..m * k], m, k),
            rhs,
            &mut self.coeffs,
        )?;
        for ((lam, &l), &d) in self.coeffs.iter_mut().zip(&self.l).zip(&self.d) {
            *lam += cw * l + d * (gw + cw);
        }
        Ok(())
    }

    /// `ŵ −= Q̂ λ`, `c_w −= dᵀλ` for the coefficients of [`coefficients`](Self::coefficients).
    pub(crate) fn subtract(&self, w: &mut [f64], cw: &mut f64) -> Result<()> {
        let (m, k) = (self.m, self.len());
        let q = MatRef::from_column_major_slice(&self.q, m, k);
        add_block_combination(q, &self.coeffs, -1.0, w)?;
        *cw -= dot(&self.d, &self.coeffs);
        Ok(())
    }
}

/// The outcome of the off-diagonal test after orthogonalization: `Some(β)` to go on.
///
/// `β² = ⟨w, w⟩` comes from a factorized inner product; `‖K̃ q_j‖² = β_{j−1}² + α_j² + β_j²`
/// (exact for the Lanczos recurrence) replaces the norm that [`lanczos`](crate::lanczos())
/// measures directly, so the invariant-subspace test `β ≤ tol·‖K̃ q_j‖` is the same. A
/// negative `β²` (cancellation at round-off level) counts as an invariant subspace.
pub(crate) fn off_diagonal(
    beta_sq: f64,
    alpha: f64,
    beta_prev: f64,
    tol: f64,
) -> std::result::Result<f64, LanczosStatus> {
    if !beta_sq.is_finite() {
        return Err(LanczosStatus::NonFinite);
    }
    let beta = beta_sq.max(0.0).sqrt();
    let aq_norm = (beta_prev * beta_prev + alpha * alpha + beta * beta).sqrt();
    if beta <= tol * aq_norm.max(f64::MIN_POSITIVE) {
        return Err(LanczosStatus::InvariantSubspace);
    }
    Ok(beta)
}
