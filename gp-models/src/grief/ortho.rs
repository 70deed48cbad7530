//! The GP-GRIEF log marginal likelihood, its gradients and predictions in `O(p)` per
//! evaluation on an orthogonalised basis (Evans & Nair 2018, App. A end), from the
//! sufficient statistics alone.
//!
//! The thin SVD `Φ = Ũ Σ̃ Ṽᵀ` is taken through the eigendecomposition `A = ΦᵀΦ = Ṽ Σ̃² Ṽᵀ`
//! (so `Φ` need not be stored), keeping the `p̃` singular values above a *relative* cutoff
//! `Σ̃_i > cutoff · Σ̃_max` (the eigendecomposition squares the condition number, so an
//! absolute threshold would depend on the scale of `Φ`). With `r̃ = Ũᵀy = Σ̃⁻¹Ṽᵀr` and
//! `c_i = r̃_i²`, the model with weights `w̃` on the normalised basis `Ũ` has, writing
//! `v_i = σ² + w̃_i`,
//!
//! ```text
//! LML       = −½ [Σ log v_i + (n − p̃) log σ² + (yᵀy − Σ c_i)/σ² + Σ c_i/v_i + n log 2π]
//! ∂LML/∂w̃_i = ½ c_i/v_i² − ½ /v_i
//! ∂LML/∂σ²  = ½ (yᵀy − Σ c_i)/σ⁴ + ½ Σ c_i/v_i² − ½ (n − p̃)/σ² − ½ Σ 1/v_i
//! E f_*     = Σ φ̃_{*i} w̃_i r̃_i / v_i,   V f_* = σ² Σ φ̃_{*i}² w̃_i / v_i,   φ̃_* = Σ̃⁻¹Ṽᵀφ_*
//! ```
//!
//! The weights can mean two different priors ([`OrthoWeights`]): on the normalised basis `Ũ`
//! (as in the paper and its code), or on the rotated but unnormalised basis `ΦṼ`, where
//! `w = 1` is the GRIEF kernel `ΦΦᵀ` (up to the discarded directions).

use faer::linalg::matmul::matmul;
use faer::{Accum, Col, ColRef, Mat, MatRef, Par};
use gp_linalg::validate::check_finite_mat;
use gp_linalg::SymmetricEigen;

use super::stats::GriefStats;
use super::woodbury::{check_stats, check_weights};
use crate::error::{ModelError, Result};
use crate::validate::check_noise;

/// `ln 2π`.
const LN_2PI: f64 = 1.837_877_066_409_345_5;

/// What the weights of an [`OrthoFit`] multiply (Evans & Nair 2018, App. A end).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum OrthoWeights {
    /// Weights `w̃` on the normalised basis `Ũ = ΦṼΣ̃⁻¹` (orthonormal columns), as in the
    /// paper and its reference code: the prior kernel is `Ũ diag(w̃) Ũᵀ`, so `w̃ = 1` gives a
    /// kernel whose non-zero eigenvalues are all 1, and `w̃ = Σ̃²` gives back the GRIEF kernel
    /// `ΦΦᵀ`. This is a different prior from weights on the eigenfunctions, and a mode-1
    /// prior on `w̃` means something quite different from one on `w`.
    #[default]
    Normalised,
    /// Weights `w` on the rotated, unnormalised basis `ΦṼ` (`A = Σ̃²`, still diagonal): the
    /// prior kernel is `ΦṼ diag(w) ṼᵀΦᵀ`, so `w = 1` gives the GRIEF kernel `ΦΦᵀ` (up to the
    /// directions below the cutoff) and a prior centred on 1 keeps the scale of the
    /// eigenfunction kernel. Internally `w̃ = Σ̃² ⊙ w`.
    ScaleConsistent,
}

/// Options of an [`OrthoFit`].
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct OrthoOptions {
    /// Singular values `Σ̃_i ≤ relative_cutoff · Σ̃_max` are discarded (default `1e-7`).
    /// Must be finite, in `[0, 1)`. The eigendecomposition of `ΦᵀΦ` resolves singular values
    /// only down to about `√ε · Σ̃_max ≈ 1.5e-8 · Σ̃_max`, so values much below the default
    /// keep rounding noise.
    pub relative_cutoff: f64,
    /// What the weights multiply (default [`OrthoWeights::Normalised`]).
    pub weights: OrthoWeights,
}

impl Default for OrthoOptions {
    fn default() -> Self {
        Self {
            relative_cutoff: 1e-7,
            weights: OrthoWeights::Normalised,
        }
    }
}

/// The orthogonalised GP-GRIEF model (Evans & Nair 2018, App. A end): the eigendecomposition
/// of `A = ΦᵀΦ` is taken once (`O(p³)`), after which the log marginal likelihood and its
/// `p̃ + 1` gradients cost `O(p̃)` time and memory for any weights and noise variance.
///
/// ```
/// use gp_models::faer::{Col, Mat};
/// use gp_models::grief::{GriefStats, OrthoFit, OrthoOptions};
///
/// let phi = Mat::from_fn(25, 4, |i, j| ((i * (j + 3)) as f64 * 0.29).sin());
/// let y = Col::from_fn(25, |i| (i as f64 * 0.4).cos());
/// let stats = GriefStats::from_phi(phi.as_ref(), y.as_ref())?;
/// let fit = OrthoFit::new(&stats, &OrthoOptions::default())?;
/// let w = vec![1.0; fit.rank()];
/// let (lml, dlml_dw, dlml_dnoise) = fit.lml_and_gradients(&w, 0.1)?;
/// assert!(lml.is_finite() && dlml_dw.len() == fit.rank() && dlml_dnoise.is_finite());
/// let (mean, var) = fit.predict(phi.as_ref(), &w, 0.1)?;
/// assert!(mean.nrows() == 25 && (0..25).all(|i| var[i] >= 0.0));
/// # Ok::<(), gp_models::ModelError>(())
/// ```
#[derive(Debug, Clone)]
pub struct OrthoFit {
    /// Kept singular values `Σ̃`, descending.
    sigma: Col<f64>,
    /// Kept right singular vectors `Ṽ`, `p × p̃`.
    v: Mat<f64>,
    /// `r̃ = Σ̃⁻¹Ṽᵀr`.
    r_tilde: Col<f64>,
    /// `c = r̃²`.
    c: Vec<f64>,
    sum_c: f64,
    yty: f64,
    n: usize,
    weights: OrthoWeights,
}

impl OrthoFit {
    /// Decomposes `A = Ṽ Σ̃² Ṽᵀ` and keeps the singular values above the relative cutoff.
    ///
    /// Errors: [`ModelError::InvalidOption`] for a cutoff outside `[0, 1)`,
    /// [`ModelError::LengthMismatch`] for statistics of inconsistent sizes,
    /// [`ModelError::NonFinite`] for non-finite statistics, [`ModelError::Linalg`] if the
    /// eigendecomposition does not converge.
    pub fn new(stats: &GriefStats, options: &OrthoOptions) -> Result<Self> {
        let cutoff = options.relative_cutoff;
        if !(cutoff.is_finite() && (0.0..1.0).contains(&cutoff)) {
            return Err(ModelError::InvalidOption {
                name: "relative_cutoff",
                reason: format!(
                    "must be finite and in [0, 1) (singular values at or below \
                     relative_cutoff · the largest are discarded), got {cutoff}; the default is 1e-7"
                ),
            });
        }
        let p = check_stats(stats)?;
        check_finite_mat(stats.a.as_ref(), "the statistics' A = ΦᵀΦ")
            .map_err(ModelError::from_finite_check)?;
        let eig = SymmetricEigen::new(stats.a.as_ref())?;
        let lam_max = if p > 0 { eig.values[p - 1] } else { 0.0 };
        let threshold = cutoff * cutoff * lam_max;
        // Eigenvalues are ascending: keep the largest ones, in descending order.
        let kept: Vec<usize> = (0..p)
            .rev()
            .take_while(|&i| lam_max > 0.0 && eig.values[i] > threshold && eig.values[i] > 0.0)
            .collect();
        let rank = kept.len();
        let sigma = Col::from_fn(rank, |k| eig.values[kept[k]].sqrt());
        let v = Mat::from_fn(p, rank, |i, k| eig.vectors[(i, kept[k])]);
        let mut r_tilde = Col::<f64>::zeros(rank);
        matmul(
            r_tilde.as_mat_mut(),
            Accum::Replace,
            v.transpose(),
            stats.r.as_mat(),
            1.0,
            Par::Seq,
        );
        for k in 0..rank {
            r_tilde[k] /= sigma[k];
        }
        let c: Vec<f64> = (0..rank).map(|k| r_tilde[k] * r_tilde[k]).collect();
        let sum_c = c.iter().sum();
        Ok(Self {
            sigma,
            v,
            r_tilde,
            c,
            sum_c,
            yty: stats.yty,
            n: stats.n,
            weights: options.weights,
        })
    }

    /// Number of kept directions `p̃ ≤ min(p, n)`: the length of the weight vectors.
    pub fn rank(&self) -> usize {
        self.sigma.nrows()
    }

    /// Number of basis functions `p` of the original basis.
    pub fn p(&self) -> usize {
        self.v.nrows()
    }

    /// What the weights multiply.
    pub fn weight_meaning(&self) -> OrthoWeights {
        self.weights
    }

    /// The kept singular values `Σ̃` of `Φ`, descending.
    pub fn singular_values(&self) -> ColRef<'_, f64> {
        self.sigma.as_ref()
    }

    /// The kept right singular vectors `Ṽ` (`p × p̃`).
    pub fn right_vectors(&self) -> MatRef<'_, f64> {
        self.v.as_ref()
    }

    /// `c_i = r̃_i²` with `r̃ = Ũᵀy = Σ̃⁻¹Ṽᵀr`.
    pub fn c(&self) -> &[f64] {
        &self.c
    }

    /// The weights for which this model's prior kernel is the GRIEF kernel `ΦΦᵀ` (restricted
    /// to the kept directions): `Σ̃²` for [`OrthoWeights::Normalised`], all ones for
    /// [`OrthoWeights::ScaleConsistent`].
    pub fn grief_kernel_weights(&self) -> Vec<f64> {
        match self.weights {
            OrthoWeights::Normalised => self.sigma.iter().map(|s| s * s).collect(),
            OrthoWeights::ScaleConsistent => vec![1.0; self.rank()],
        }
    }

    /// The factor between the weights of this model and those on the normalised basis:
    /// `w̃_i = scale_i · w_i`.
    fn scale(&self, i: usize) -> f64 {
        match self.weights {
            OrthoWeights::Normalised => 1.0,
            OrthoWeights::ScaleConsistent => self.sigma[i] * self.sigma[i],
        }
    }

    fn check(&self, w: &[f64], noise: f64) -> Result<()> {
        check_weights(w, self.rank(), "w (weights of the orthogonalised basis)")?;
        check_noise(noise)
    }

    /// The log marginal likelihood for weights `w` (length [`rank`](Self::rank), meaning set
    /// by [`OrthoWeights`]) and noise variance `noise`, in `O(p̃)`.
    ///
    /// Errors: [`ModelError::LengthMismatch`], [`ModelError::InvalidOption`] (`w`) for a
    /// weight that is not finite and positive, [`ModelError::InvalidNoise`].
    pub fn lml(&self, w: &[f64], noise: f64) -> Result<f64> {
        self.check(w, noise)?;
        Ok(self.lml_unchecked(w, noise))
    }

    fn lml_unchecked(&self, w: &[f64], s2: f64) -> f64 {
        let mut log_det = (self.n as f64 - self.rank() as f64) * s2.ln();
        let mut fit = (self.yty - self.sum_c) / s2;
        for (i, wi) in w.iter().enumerate() {
            let v = s2 + self.scale(i) * wi;
            log_det += v.ln();
            fit += self.c[i] / v;
        }
        -0.5 * (log_det + fit + self.n as f64 * LN_2PI)
    }

    /// The log marginal likelihood and its gradients with respect to each weight and to the
    /// noise variance, `(lml, ∂lml/∂w, ∂lml/∂σ²)`, in `O(p̃)` time and memory. For
    /// [`OrthoWeights::ScaleConsistent`] the weight gradient is `Σ̃_i² ∂lml/∂w̃_i`.
    ///
    /// Errors as [`lml`](Self::lml).
    pub fn lml_and_gradients(&self, w: &[f64], noise: f64) -> Result<(f64, Vec<f64>, f64)> {
        self.check(w, noise)?;
        let s2 = noise;
        let n_minus = self.n as f64 - self.rank() as f64;
        let mut dnoise = 0.5 * (self.yty - self.sum_c) / (s2 * s2) - 0.5 * n_minus / s2;
        let dw = w
            .iter()
            .enumerate()
            .map(|(i, wi)| {
                let scale = self.scale(i);
                let v = s2 + scale * wi;
                let g = 0.5 * self.c[i] / (v * v) - 0.5 / v;
                dnoise += g;
                scale * g
            })
            .collect();
        Ok((self.lml_unchecked(w, s2), dw, dnoise))
    }

    /// The test basis in this model's coordinates: `φ̃_* = Σ̃⁻¹Ṽᵀφ_*` for each row of
    /// `phi_star` (`m × p`) under [`OrthoWeights::Normalised`] (so the training basis `Φ`
    /// maps to `Ũ`), `Ṽᵀφ_*` under [`OrthoWeights::ScaleConsistent`]. `O(m p p̃)`.
    ///
    /// Errors: [`ModelError::LengthMismatch`] if `phi_star` does not have `p` columns,
    /// [`ModelError::NonFinite`] for non-finite entries.
    pub fn transform_basis(&self, phi_star: MatRef<'_, f64>) -> Result<Mat<f64>> {
        let mut out = self.rotate(phi_star)?;
        if self.weights == OrthoWeights::Normalised {
            for k in 0..self.rank() {
                let s = self.sigma[k];
                out.col_mut(k).iter_mut().for_each(|x| *x /= s);
            }
        }
        Ok(out)
    }

    /// `Φ_* Ṽ`.
    fn rotate(&self, phi_star: MatRef<'_, f64>) -> Result<Mat<f64>> {
        if phi_star.ncols() != self.p() {
            return Err(ModelError::LengthMismatch {
                context: "columns of the test basis Φ_* (one per basis function)",
                expected: self.p(),
                found: phi_star.ncols(),
            });
        }
        check_finite_mat(phi_star, "the test basis Φ_*").map_err(ModelError::from_finite_check)?;
        let mut out = Mat::<f64>::zeros(phi_star.nrows(), self.rank());
        matmul(
            out.as_mut(),
            Accum::Replace,
            phi_star,
            self.v.as_ref(),
            1.0,
            gp_linalg::parallelism_for(
                phi_star.nrows() as f64 * self.p() as f64 * self.rank() as f64,
            ),
        );
        Ok(out)
    }

    /// Latent predictive means and variances at test points with basis rows `phi_star`
    /// (`m × p`, in the original basis `φ`): `E f_* = Σ φ̃_{*i} w̃_i r̃_i / (σ² + w̃_i)` and
    /// `V f_* = σ² Σ φ̃_{*i}² w̃_i / (σ² + w̃_i)` with `φ̃_* = Σ̃⁻¹Ṽᵀφ_*` (add `σ²` for `y_*`).
    /// The test basis is rotated and normalised like the training basis before the diagonal
    /// `P⁻¹` is applied. `O(m p p̃)` for the rotation, then `O(p̃)` per point.
    ///
    /// Errors as [`lml`](Self::lml) and [`transform_basis`](Self::transform_basis).
    pub fn predict(
        &self,
        phi_star: MatRef<'_, f64>,
        w: &[f64],
        noise: f64,
    ) -> Result<(Col<f64>, Col<f64>)> {
        self.check(w, noise)?;
        let rotated = self.rotate(phi_star)?;
        let m = rotated.nrows();
        let mut mean = Col::<f64>::zeros(m);
        let mut var = Col::<f64>::zeros(m);
        for (k, wk) in w.iter().enumerate() {
            let wt = self.scale(k) * wk;
            let shrink = wt / (noise + wt);
            let s = self.sigma[k];
            let coef_mean = shrink * self.r_tilde[k] / s;
            let coef_var = noise * shrink / (s * s);
            let col = rotated.col(k);
            for i in 0..m {
                let x = col[i];
                mean[i] += coef_mean * x;
                var[i] += coef_var * x * x;
            }
        }
        Ok((mean, var))
    }
}
