//! The GP-GRIEF log marginal likelihood, its gradients and predictions in `O(p³)` per
//! evaluation by the Woodbury identity, from the sufficient statistics alone (Evans & Nair
//! 2018, eq. 13 / App. A).
//!
//! With `K = ΦWΦᵀ + σ²I_n`, `W = diag(w)`, `A = ΦᵀΦ`, `r = Φᵀy` and
//! `P = σ²W⁻¹ + A = L Lᵀ`:
//!
//! ```text
//! yᵀK⁻¹y = σ⁻² (yᵀy − rᵀP⁻¹r)
//! log|K| = log|P| + Σ_j log w_j + (n − p) log σ²        (n − p may be negative)
//! LML    = −½ log|K| − ½ yᵀK⁻¹y − (n/2) log 2π
//! ```
//!
//! The gradients need `P⁻¹A` in the textbook form (Evans & Nair 2018, App. A). With
//! `D = σ²W⁻¹`, `A = P − D` gives `P⁻¹A = I − P⁻¹D`, `r − AP⁻¹r = D u` (`u = P⁻¹r`) and
//! `diag(AP⁻¹A) = diag(P) − 2D + D² diag(P⁻¹)`, so one Cholesky factor and `diag(P⁻¹)` (the
//! squared column norms of `L⁻¹`) replace the product `P⁻¹A`:
//!
//! ```text
//! ∂LML/∂w_j = (u_j² + σ² [P⁻¹]_jj) / (2 w_j²) − 1 / (2 w_j)
//! ∂LML/∂σ²  = (yᵀy − rᵀu − Σ_j D_j u_j²) / (2σ⁴) − (n − p + Σ_j D_j [P⁻¹]_jj) / (2σ²)
//! ```
//!
//! That costs `p³/3` (Cholesky) + `p³/3` (triangular inverse) instead of `p³/3 + 2p³`.
//! [`WoodburyFit::lml_and_gradients_plain`] keeps the textbook formula as a reference.

use faer::dyn_stack::{MemBuffer, MemStack};
use std::sync::Mutex;

use faer::linalg::cholesky::llt::factor::{cholesky_in_place, cholesky_in_place_scratch, LltError};
use faer::linalg::matmul::matmul;
use faer::linalg::matmul::triangular::{self, BlockStructure};
use faer::linalg::triangular_inverse::invert_lower_triangular;
use faer::linalg::triangular_solve::{
    solve_lower_triangular_in_place, solve_upper_triangular_in_place,
};
use faer::{Accum, Col, ColRef, Mat, MatMut, MatRef, Par};
use gp_linalg::parallelism_for;
use gp_linalg::validate::{check_finite_col, check_finite_mat};

use super::stats::GriefStats;
use crate::error::{ModelError, Result};
use crate::validate::check_noise;

/// `ln 2π`.
const LN_2PI: f64 = 1.837_877_066_409_345_5;

/// Factors the lower triangle of the square `l` in place (`l = LLᵀ`); returns the first
/// pivot that is not finite and positive, if any (the factor is then unusable).
pub(crate) fn cholesky_lower_in_place(l: MatMut<'_, f64>, par: Par) -> Option<usize> {
    let n = l.nrows();
    if n == 0 {
        return None;
    }
    let mut l = l;
    let mut mem = MemBuffer::new(cholesky_in_place_scratch::<f64>(n, par, Default::default()));
    let factored = cholesky_in_place(
        l.as_mut(),
        Default::default(),
        par,
        MemStack::new(&mut mem),
        Default::default(),
    );
    match factored {
        Ok(_) => (0..n).find(|&j| !(l[(j, j)] > 0.0 && l[(j, j)].is_finite())),
        Err(LltError::NonPositivePivot { index }) => Some(index),
    }
}

/// Checks that `w` has `p` entries, each finite and strictly positive.
pub(crate) fn check_weights(w: &[f64], p: usize, name: &'static str) -> Result<()> {
    if w.len() != p {
        return Err(ModelError::LengthMismatch {
            context: "eigenfunction weights (one per basis function)",
            expected: p,
            found: w.len(),
        });
    }
    if let Some((j, &v)) = w
        .iter()
        .enumerate()
        .find(|(_, v)| !(v.is_finite() && **v > 0.0))
    {
        return Err(ModelError::InvalidOption {
            name,
            reason: format!(
                "weight {j} is {v}; every eigenfunction weight must be finite and strictly \
                 positive (optimise or sample log w if the weights come from an unconstrained \
                 parameter)"
            ),
        });
    }
    Ok(())
}

/// Checks the shapes and the finiteness of `r` and `yᵀy` of the statistics (the finiteness
/// of `A` is checked only when a factorization fails, to keep evaluations at `O(p³)` flops
/// without extra passes).
pub(crate) fn check_stats(stats: &GriefStats) -> Result<usize> {
    let p = stats.r.nrows();
    if stats.a.nrows() != p || stats.a.ncols() != p {
        return Err(ModelError::LengthMismatch {
            context: "rows and columns of the statistics' A = ΦᵀΦ (one per entry of r = Φᵀy)",
            expected: p,
            found: if stats.a.nrows() != p {
                stats.a.nrows()
            } else {
                stats.a.ncols()
            },
        });
    }
    check_finite_col(stats.r.as_ref(), "the statistics' r = Φᵀy")
        .map_err(ModelError::from_finite_check)?;
    if !stats.yty.is_finite() {
        return Err(ModelError::NonFinite {
            context: "the statistics' yᵀy",
            row: 0,
            col: 0,
            value: stats.yty,
        });
    }
    Ok(p)
}

/// The GP-GRIEF model with weights `w` and noise variance `σ²` evaluated from the sufficient
/// statistics by the Woodbury identity (Evans & Nair 2018, eq. 13 / App. A): the Cholesky
/// factor of `P = σ²W⁻¹ + A` and `u = P⁻¹r` are computed once by [`new`](Self::new)
/// (`O(p³)`, independent of `n`); the log marginal likelihood, its `p + 1` gradients and
/// predictions reuse them.
///
/// Every formula holds for `p > n` as well (`n − p` is then negative and `P` stays positive
/// definite because `σ²W⁻¹ ≻ 0`).
///
/// ```
/// use gp_models::faer::{Col, Mat};
/// use gp_models::grief::{GriefStats, WoodburyFit};
///
/// let phi = Mat::from_fn(20, 3, |i, j| ((i * (j + 2) + 1) as f64 * 0.37).sin());
/// let y = Col::from_fn(20, |i| (i as f64 * 0.3).cos());
/// let stats = GriefStats::from_phi(phi.as_ref(), y.as_ref())?;
/// let fit = WoodburyFit::new(&stats, &[1.0, 0.5, 2.0], 0.1)?;
/// let (lml, dlml_dw, dlml_dnoise) = fit.lml_and_gradients();
/// assert!((lml - fit.lml()).abs() < 1e-12 && dlml_dw.len() == 3 && dlml_dnoise.is_finite());
/// let (mean, var) = fit.predict(phi.as_ref())?;
/// assert!(mean.nrows() == 20 && (0..20).all(|i| var[i] > 0.0));
/// # Ok::<(), gp_models::ModelError>(())
/// ```
#[derive(Debug)]
pub struct WoodburyFit<'a> {
    stats: &'a GriefStats,
    w: Vec<f64>,
    noise: f64,
    par: Par,
    /// `D = σ²/w`.
    d: Vec<f64>,
    /// Lower Cholesky factor of `P` in the lower triangle (the strict upper triangle is not
    /// read).
    l: Mat<f64>,
    /// `u = P⁻¹r`.
    u: Col<f64>,
    log_det_p: f64,
    /// Reused `p × p` buffer for `L⁻¹` (a fresh one is allocated if it is busy).
    scratch: Mutex<Mat<f64>>,
}

impl Clone for WoodburyFit<'_> {
    fn clone(&self) -> Self {
        Self {
            stats: self.stats,
            w: self.w.clone(),
            noise: self.noise,
            par: self.par,
            d: self.d.clone(),
            l: self.l.clone(),
            u: self.u.clone(),
            log_det_p: self.log_det_p,
            scratch: Mutex::new(Mat::zeros(0, 0)),
        }
    }
}

impl<'a> WoodburyFit<'a> {
    /// Factors `P = σ²W⁻¹ + A` for weights `w` (length `p`) and noise variance `noise`
    /// (`σ²`), with the workspace's parallelism for work of `p³/3` flops
    /// ([`gp_linalg::parallelism_for`]: sequential below `p ≈ 670` under the default
    /// setting, all threads above). Measured at `p = 1000` on 2 cores: one factorization
    /// and gradient (`refit` + [`lml_and_gradients`](Self::lml_and_gradients)) take 11.6 ms
    /// on two threads against 18.6 ms on one.
    ///
    /// Errors: [`ModelError::LengthMismatch`] for statistics or weights of inconsistent
    /// sizes, [`ModelError::InvalidOption`] (`w`) for a weight that is not finite and
    /// positive, [`ModelError::InvalidNoise`], [`ModelError::NonFinite`] for non-finite
    /// statistics, [`ModelError::WeightSpaceNotPositiveDefinite`] if `P` is numerically not
    /// positive definite.
    pub fn new(stats: &'a GriefStats, w: &[f64], noise: f64) -> Result<Self> {
        let p = stats.r.nrows() as f64;
        Self::with_parallelism(stats, w, noise, parallelism_for(p * p * p / 3.0))
    }

    /// As [`new`](Self::new), with the parallelism of the `O(p³)` steps (the factorization
    /// here, the triangular inverse of [`lml_and_gradients`](Self::lml_and_gradients)).
    pub fn with_parallelism(
        stats: &'a GriefStats,
        w: &[f64],
        noise: f64,
        par: Par,
    ) -> Result<Self> {
        let p = check_stats(stats)?;
        let fit = Self {
            stats,
            w: Vec::with_capacity(p),
            noise,
            par,
            d: Vec::with_capacity(p),
            l: Mat::zeros(p, p),
            u: Col::zeros(p),
            log_det_p: 0.0,
            scratch: Mutex::new(Mat::zeros(0, 0)),
        };
        fit.refit(w, noise)
    }

    /// The same model at new weights and noise variance, reusing this fit's `p × p` buffers
    /// (no allocation: for the many evaluations of GP-GRIEF-I on fixed statistics). Errors
    /// as [`new`](Self::new); the buffers are dropped on error.
    pub fn refit(mut self, w: &[f64], noise: f64) -> Result<Self> {
        let stats = self.stats;
        let p = self.l.nrows();
        check_weights(w, p, "w")?;
        check_noise(noise)?;
        self.w.clear();
        self.w.extend_from_slice(w);
        self.noise = noise;
        self.d.clear();
        self.d.extend(w.iter().map(|wj| noise / wj));
        let l = &mut self.l;
        l.copy_from_triangular_lower(stats.a.as_ref());
        for (j, dj) in self.d.iter().enumerate() {
            l[(j, j)] += dj;
        }
        if let Some(pivot) = cholesky_lower_in_place(l.as_mut(), self.par) {
            // Name a non-finite A rather than a failed factorization.
            check_finite_mat(stats.a.as_ref(), "the statistics' A = ΦᵀΦ")
                .map_err(ModelError::from_finite_check)?;
            return Err(ModelError::WeightSpaceNotPositiveDefinite { p, pivot });
        }
        self.log_det_p = 2.0 * (0..p).map(|j| l[(j, j)].ln()).sum::<f64>();
        self.u.copy_from(&stats.r);
        solve_lower_triangular_in_place(l.as_ref(), self.u.as_mat_mut(), Par::Seq);
        solve_upper_triangular_in_place(l.transpose(), self.u.as_mat_mut(), Par::Seq);
        Ok(self)
    }

    /// Number of basis functions `p`.
    pub fn p(&self) -> usize {
        self.w.len()
    }

    /// The weights `w`.
    pub fn weights(&self) -> &[f64] {
        &self.w
    }

    /// The noise variance `σ²`.
    pub fn noise(&self) -> f64 {
        self.noise
    }

    /// The statistics the fit was built from.
    pub fn stats(&self) -> &'a GriefStats {
        self.stats
    }

    /// `log|P|` from the Cholesky factor.
    pub fn log_det_p(&self) -> f64 {
        self.log_det_p
    }

    /// The posterior mean of the weights of `f = Φβ`, `β ~ N(0, W)`: `WΦᵀα = P⁻¹r`
    /// (Evans & Nair 2018, eq. 13; GPML eq. 2.11 in weight space).
    pub fn posterior_weights(&self) -> ColRef<'_, f64> {
        self.u.as_ref()
    }

    /// `log|K| = log|P| + Σ log w_j + (n − p) log σ²`.
    pub fn log_det_k(&self) -> f64 {
        let n = self.stats.n as f64;
        let p = self.p() as f64;
        self.log_det_p + self.w.iter().map(|w| w.ln()).sum::<f64>() + (n - p) * self.noise.ln()
    }

    /// `yᵀK⁻¹y = σ⁻²(yᵀy − rᵀP⁻¹r)`.
    pub fn data_fit(&self) -> f64 {
        (self.stats.yty - self.stats.r.transpose() * &self.u) / self.noise
    }

    /// The log marginal likelihood `log N(y | 0, ΦWΦᵀ + σ²I)` in `O(p)` from the factor
    /// (Evans & Nair 2018, eq. 13).
    pub fn lml(&self) -> f64 {
        -0.5 * (self.log_det_k() + self.data_fit() + self.stats.n as f64 * LN_2PI)
    }

    /// `diag(P⁻¹)`: the squared column norms of `L⁻¹` (triangular inverse, `p³/3` flops).
    pub fn diag_p_inverse(&self) -> Vec<f64> {
        let p = self.p();
        let mut guard = self.scratch.try_lock().ok();
        let mut fresh = Mat::<f64>::zeros(0, 0);
        let linv = match guard.as_deref_mut() {
            Some(buffer) => buffer,
            None => &mut fresh,
        };
        if linv.nrows() != p || linv.ncols() != p {
            *linv = Mat::zeros(p, p);
        }
        // Writes the lower triangle (the only part read below).
        invert_lower_triangular(linv.as_mut(), self.l.as_ref(), self.par);
        (0..p)
            .map(|j| linv.col(j).subrows(j, p - j).squared_norm_l2())
            .collect()
    }

    /// The log marginal likelihood and its gradients with respect to every weight `w_j` and
    /// to the noise variance `σ²` (Evans & Nair 2018, App. A), in the form that needs only
    /// `diag(P⁻¹)` besides the factor: `p³/3` flops on top of [`new`](Self::new).
    ///
    /// Returns `(lml, ∂lml/∂w, ∂lml/∂σ²)`. The gradients are with respect to `w` and `σ²`
    /// themselves; chain-rule through any reparametrisation (`w = e^t`: multiply by `w`).
    ///
    /// Rounding: the complexity term of `∂/∂w_j` is formed as `D_j − D_j²[P⁻¹]_jj`, which
    /// cancels when `σ²/w_j` dominates `a_jj` (absolute error about `ε/w_j`); the textbook
    /// form `a_jj − a_jᵀP⁻¹a_j` cancels in the opposite regime. Both agree to about `1e-10`
    /// relative to the largest gradient entry on well-posed problems.
    pub fn lml_and_gradients(&self) -> (f64, Vec<f64>, f64) {
        let q = self.diag_p_inverse();
        let s2 = self.noise;
        let dlml_dw = (0..self.p())
            .map(|j| {
                let (u, w) = (self.u[j], self.w[j]);
                (u * u + s2 * q[j]) / (2.0 * w * w) - 0.5 / w
            })
            .collect();
        let ru = self.stats.r.transpose() * &self.u;
        let dudu: f64 = (0..self.p())
            .map(|j| self.d[j] * self.u[j] * self.u[j])
            .sum();
        let dq: f64 = (0..self.p()).map(|j| self.d[j] * q[j]).sum();
        let n_minus_p = self.stats.n as f64 - self.p() as f64;
        let dlml_dnoise =
            (self.stats.yty - ru - dudu) / (2.0 * s2 * s2) - (n_minus_p + dq) / (2.0 * s2);
        (self.lml(), dlml_dw, dlml_dnoise)
    }

    /// The same as [`lml_and_gradients`](Self::lml_and_gradients) by the textbook formula
    /// with the product `P⁻¹A` (Evans & Nair 2018, App. A), `2p³` flops more:
    ///
    /// ```text
    /// ∂LML/∂w  = (r − AP⁻¹r)² / (2σ⁴) − [diag(A) − (A ⊙ P⁻¹A)ᵀ1] / (2σ²)
    /// ∂LML/∂σ² = (yᵀy − 2rᵀP⁻¹r + rᵀP⁻¹AP⁻¹r) / (2σ⁴) − (n − tr(P⁻¹A)) / (2σ²)
    /// ```
    ///
    /// Kept as a reference for tests; use [`lml_and_gradients`](Self::lml_and_gradients).
    pub fn lml_and_gradients_plain(&self) -> (f64, Vec<f64>, f64) {
        let p = self.p();
        let s2 = self.noise;
        let a = symmetric_from_lower(self.stats.a.as_ref());
        // P⁻¹A by two triangular solves.
        let mut pia = a.clone();
        solve_lower_triangular_in_place(self.l.as_ref(), pia.as_mut(), self.par);
        solve_upper_triangular_in_place(self.l.transpose(), pia.as_mut(), self.par);
        let mut au = Col::<f64>::zeros(p);
        matmul(
            au.as_mat_mut(),
            Accum::Replace,
            a.as_ref(),
            self.u.as_mat(),
            1.0,
            Par::Seq,
        );
        let dlml_dw = (0..p)
            .map(|j| {
                let fit = self.stats.r[j] - au[j];
                let col_sum: f64 = (0..p).map(|i| a[(i, j)] * pia[(i, j)]).sum();
                fit * fit / (2.0 * s2 * s2) - (a[(j, j)] - col_sum) / (2.0 * s2)
            })
            .collect();
        let ru = self.stats.r.transpose() * &self.u;
        let uau = self.u.transpose() * &au;
        let trace: f64 = (0..p).map(|j| pia[(j, j)]).sum();
        let dlml_dnoise = (self.stats.yty - 2.0 * ru + uau) / (2.0 * s2 * s2)
            - (self.stats.n as f64 - trace) / (2.0 * s2);
        (self.lml(), dlml_dw, dlml_dnoise)
    }

    /// Predictions at test points with basis rows `phi_star` (`m × p`, `φ(x_*)ᵀ` in each row):
    /// the latent mean `E f_* = φ_*ᵀP⁻¹r` and latent variance `V f_* = σ² φ_*ᵀP⁻¹φ_*`
    /// (Evans & Nair 2018, eq. 13 with GPML eq. 2.11 in weight space; add `σ²` for `y_*`).
    /// `O(m p²)`.
    ///
    /// Errors: [`ModelError::LengthMismatch`] if `phi_star` does not have `p` columns,
    /// [`ModelError::NonFinite`] for non-finite entries.
    pub fn predict(&self, phi_star: MatRef<'_, f64>) -> Result<(Col<f64>, Col<f64>)> {
        let p = self.p();
        check_basis_cols(
            phi_star,
            p,
            "columns of the test basis Φ_* (one per basis function)",
        )?;
        check_finite_mat(phi_star, "the test basis Φ_*").map_err(ModelError::from_finite_check)?;
        let m = phi_star.nrows();
        let mut mean = Col::<f64>::zeros(m);
        matmul(
            mean.as_mat_mut(),
            Accum::Replace,
            phi_star,
            self.u.as_mat(),
            1.0,
            Par::Seq,
        );
        let mut x = phi_star.transpose().to_owned();
        solve_lower_triangular_in_place(self.l.as_ref(), x.as_mut(), self.par);
        let var = Col::from_fn(m, |i| self.noise * x.col(i).squared_norm_l2());
        Ok((mean, var))
    }

    /// A streaming accumulator of the gradient of the log marginal likelihood with respect to
    /// `n_params` hyperparameters θ of the basis `Φ(θ)` (GP-GRIEF-II, weights and noise held
    /// at this fit's values); see [`ThetaGradient`].
    ///
    /// Forms `P⁻¹` explicitly (a triangular inverse and a triangular product, `2p³/3`
    /// flops) so that each row block costs one `b × p × p` product at matrix-multiply speed.
    pub fn theta_gradient(&self, n_params: usize) -> ThetaGradient<'_, 'a> {
        ThetaGradient {
            fit: self,
            p_inverse: self.p_inverse(),
            grad: vec![0.0; n_params],
            rows: 0,
        }
    }

    /// `P⁻¹` whole (symmetric): `L⁻ᵀL⁻¹` from the triangular inverse of the factor, `2p³/3`
    /// flops.
    pub fn p_inverse(&self) -> Mat<f64> {
        let p = self.p();
        let mut linv = Mat::<f64>::zeros(p, p);
        invert_lower_triangular(linv.as_mut(), self.l.as_ref(), self.par);
        let mut inv = Mat::<f64>::zeros(p, p);
        triangular::matmul(
            inv.as_mut(),
            BlockStructure::TriangularLower,
            Accum::Replace,
            linv.transpose(),
            BlockStructure::TriangularUpper,
            linv.as_ref(),
            BlockStructure::TriangularLower,
            1.0,
            self.par,
        );
        // `inv` is square by construction, so mirroring cannot fail.
        let _ = gp_linalg::gram::mirror_lower(inv.as_mut());
        inv
    }
}

/// Checks that a basis block has `p` columns.
fn check_basis_cols(phi: MatRef<'_, f64>, p: usize, context: &'static str) -> Result<()> {
    if phi.ncols() == p {
        Ok(())
    } else {
        Err(ModelError::LengthMismatch {
            context,
            expected: p,
            found: phi.ncols(),
        })
    }
}

/// The symmetric matrix whose lower triangle is that of `a`.
fn symmetric_from_lower(a: MatRef<'_, f64>) -> Mat<f64> {
    Mat::from_fn(a.nrows(), a.ncols(), |i, j| {
        if i >= j {
            a[(i, j)]
        } else {
            a[(j, i)]
        }
    })
}

/// The gradient of the GP-GRIEF log marginal likelihood with respect to hyperparameters θ of
/// the basis `Φ(θ)` (GP-GRIEF-II), accumulated over row blocks so that `Φ` is never stored
/// whole.
///
/// With `α = K⁻¹y` and `K = ΦWΦᵀ + σ²I`, the gradient with respect to the basis itself is
///
/// ```text
/// H = ∂LML/∂Φ = (ααᵀ − K⁻¹) Φ W = α uᵀ − Φ P⁻¹
/// ```
///
/// (`WΦᵀα = P⁻¹r = u`, and `K⁻¹ΦW = ΦP⁻¹` by the push-through identity; row block `b` of
/// `H` needs only row block `b` of `Φ` and `y`, with `α_b = σ⁻²(y_b − Φ_b u)`), and the
/// chain rule gives `∂LML/∂θ_k = ⟨H, ∂Φ/∂θ_k⟩ = Σ H ⊙ ∂Φ/∂θ_k`. A block of `b` rows costs
/// one `b × p × p` product for `Φ_b P⁻¹` and `O(b p)` per hyperparameter. The gradient of
/// `A`, `r` and `yᵀy` flows entirely through `∂Φ` (the statistics of this fit must be those
/// of the same `Φ`, `y`).
///
/// Two ways to feed it: [`add_block`](Self::add_block) with the blocks `∂Φ_b/∂θ_k`, or
/// [`basis_gradient_into`](Self::basis_gradient_into) followed by
/// [`add_contracted`](Self::add_contracted) when the caller contracts `H_b` with the
/// derivatives itself (as [`GriefBasis::contract_derivatives`](crate::grief::GriefBasis::contract_derivatives)
/// does without forming them).
///
/// The derivative blocks are those of a basis with a fixed selection of eigenfunctions: the
/// top-`p` selection of GP-GRIEF is piecewise constant in θ and the log marginal likelihood
/// jumps where it changes, so a gradient is that of the branch with the current selection.
///
/// ```
/// use gp_models::faer::{Col, Mat};
/// use gp_models::grief::{GriefStats, WoodburyFit};
///
/// let phi = Mat::from_fn(30, 4, |i, j| ((i * (j + 1)) as f64 * 0.21).cos());
/// let dphi = Mat::from_fn(30, 4, |i, j| ((i + j) as f64 * 0.5).sin());
/// let y = Col::from_fn(30, |i| (i as f64 * 0.2).sin());
/// let stats = GriefStats::from_phi(phi.as_ref(), y.as_ref())?;
/// let fit = WoodburyFit::new(&stats, &[1.0; 4], 0.05)?;
/// let mut acc = fit.theta_gradient(1);
/// for start in (0..30).step_by(8) {
///     let b = (30 - start).min(8);
///     acc.add_block(phi.subrows(start, b), y.subrows(start, b), &[dphi.subrows(start, b)])?;
/// }
/// let grad = acc.finish()?;
/// assert_eq!(grad.len(), 1);
/// # Ok::<(), gp_models::ModelError>(())
/// ```
#[derive(Debug, Clone)]
pub struct ThetaGradient<'f, 'a> {
    fit: &'f WoodburyFit<'a>,
    /// `P⁻¹`, whole.
    p_inverse: Mat<f64>,
    grad: Vec<f64>,
    rows: usize,
}

impl ThetaGradient<'_, '_> {
    /// Number of hyperparameters.
    pub fn n_params(&self) -> usize {
        self.grad.len()
    }

    /// Rows accumulated so far.
    pub fn rows(&self) -> usize {
        self.rows
    }

    /// Writes `H_b = ∂LML/∂Φ_b = α_b uᵀ − Φ_b P⁻¹` (`b × p`) into `out`, for the basis block
    /// `Φ_b` (`b × p`) and its targets `y_b`. Nothing is accumulated: contract `H_b` with the
    /// derivative blocks and pass the result to [`add_contracted`](Self::add_contracted).
    ///
    /// Errors: [`ModelError::LengthMismatch`] for blocks or an `out` of the wrong shape,
    /// [`ModelError::NonFinite`] for non-finite entries.
    pub fn basis_gradient_into(
        &self,
        phi_b: MatRef<'_, f64>,
        y_b: ColRef<'_, f64>,
        mut out: MatMut<'_, f64>,
    ) -> Result<()> {
        let fit = self.fit;
        let p = fit.p();
        let b = phi_b.nrows();
        check_basis_cols(
            phi_b,
            p,
            "columns of the basis block Φ_b (one per basis function)",
        )?;
        if y_b.nrows() != b {
            return Err(ModelError::LengthMismatch {
                context: "targets of the block y_b (one per row of Φ_b)",
                expected: b,
                found: y_b.nrows(),
            });
        }
        if out.nrows() != b || out.ncols() != p {
            return Err(ModelError::LengthMismatch {
                context: "entries of the output block H_b (the shape of Φ_b)",
                expected: b * p,
                found: out.nrows() * out.ncols(),
            });
        }
        check_finite_mat(phi_b, "the basis block Φ_b").map_err(ModelError::from_finite_check)?;
        check_finite_col(y_b, "the targets y_b").map_err(ModelError::from_finite_check)?;
        // α_b = σ⁻²(y_b − Φ_b u).
        let mut alpha = y_b.to_owned();
        matmul(
            alpha.as_mat_mut(),
            Accum::Add,
            phi_b,
            fit.u.as_mat(),
            -1.0,
            Par::Seq,
        );
        alpha /= fit.noise;
        let par = gp_linalg::parallelism_for(2.0 * b as f64 * p as f64 * p as f64);
        matmul(
            out.as_mut(),
            Accum::Replace,
            phi_b,
            self.p_inverse.as_ref(),
            -1.0,
            par,
        );
        for j in 0..p {
            let uj = fit.u[j];
            out.as_mut()
                .col_mut(j)
                .iter_mut()
                .zip(alpha.iter())
                .for_each(|(h, a)| *h += a * uj);
        }
        Ok(())
    }

    /// Adds `⟨H_b, ∂Φ_b/∂θ_k⟩` for each hyperparameter (`contributions`, one per
    /// hyperparameter) of a block of `rows` rows whose `H_b` came from
    /// [`basis_gradient_into`](Self::basis_gradient_into).
    ///
    /// Errors: [`ModelError::LengthMismatch`] for a number of contributions different from the
    /// number of hyperparameters, [`ModelError::NonFinite`] for a non-finite one (nothing is
    /// added on error).
    pub fn add_contracted(&mut self, rows: usize, contributions: &[f64]) -> Result<()> {
        if contributions.len() != self.grad.len() {
            return Err(ModelError::LengthMismatch {
                context: "contributions ⟨H_b, ∂Φ_b/∂θ_k⟩ (one per hyperparameter)",
                expected: self.grad.len(),
                found: contributions.len(),
            });
        }
        if let Some((k, &v)) = contributions
            .iter()
            .enumerate()
            .find(|(_, v)| !v.is_finite())
        {
            return Err(ModelError::NonFinite {
                context: "a contribution ⟨H_b, ∂Φ_b/∂θ_k⟩ to the θ-gradient",
                row: k,
                col: 0,
                value: v,
            });
        }
        self.grad
            .iter_mut()
            .zip(contributions)
            .for_each(|(g, c)| *g += c);
        self.rows += rows;
        Ok(())
    }

    /// Adds the contribution of a block of rows: the basis `Φ_b` (`b × p`), the targets `y_b`
    /// (`b`) and `∂Φ_b/∂θ_k` (`b × p`) for each hyperparameter `k`.
    ///
    /// Errors: [`ModelError::LengthMismatch`] for blocks of the wrong shape or a number of
    /// derivative blocks different from the number of hyperparameters,
    /// [`ModelError::NonFinite`] for non-finite entries (nothing is added on error).
    pub fn add_block(
        &mut self,
        phi_b: MatRef<'_, f64>,
        y_b: ColRef<'_, f64>,
        dphi_b: &[MatRef<'_, f64>],
    ) -> Result<()> {
        let (b, p) = (phi_b.nrows(), self.fit.p());
        if dphi_b.len() != self.grad.len() {
            return Err(ModelError::LengthMismatch {
                context: "derivative blocks ∂Φ_b/∂θ_k (one per hyperparameter)",
                expected: self.grad.len(),
                found: dphi_b.len(),
            });
        }
        for d in dphi_b {
            if d.nrows() != b || d.ncols() != p {
                return Err(ModelError::LengthMismatch {
                    context: "rows × columns of a derivative block ∂Φ_b/∂θ_k (those of Φ_b)",
                    expected: b * p,
                    found: d.nrows() * d.ncols(),
                });
            }
            check_finite_mat(*d, "a derivative block ∂Φ_b/∂θ")
                .map_err(ModelError::from_finite_check)?;
        }
        let mut h = Mat::<f64>::zeros(b, p);
        self.basis_gradient_into(phi_b, y_b, h.as_mut())?;
        let contributions: Vec<f64> = dphi_b
            .iter()
            .map(|d| (0..p).map(|j| h.col(j).transpose() * d.col(j)).sum::<f64>())
            .collect();
        self.add_contracted(b, &contributions)
    }

    /// The gradient `∂LML/∂θ_k` for each hyperparameter, once every row of `Φ` has been
    /// added.
    ///
    /// Errors: [`ModelError::LengthMismatch`] if the rows added differ from the `n` of the
    /// statistics.
    pub fn finish(self) -> Result<Vec<f64>> {
        if self.rows != self.fit.stats.n {
            return Err(ModelError::LengthMismatch {
                context: "rows added to the θ-gradient (the n of the statistics)",
                expected: self.fit.stats.n,
                found: self.rows,
            });
        }
        Ok(self.grad)
    }
}
