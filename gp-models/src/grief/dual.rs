//! The GP-GRIEF log marginal likelihood and its gradients in the data space (function
//! space): `O(n²p + n³)` per evaluation from the whole training basis `Φ` (`n × p`), the
//! cheaper form when there are fewer training points than basis functions (the paper's
//! GP-GRIEF-I runs use `p = 1000` with `n = 20…500`, Evans & Nair 2018, Table 1).
//!
//! With `K = ΦWΦᵀ + σ²I_n = LLᵀ`, `W = diag(w)`, `α = K⁻¹y` and `φ_j` the `j`-th column of
//! `Φ` (GPML eq. 5.8–5.9 with `∂K/∂w_j = φ_jφ_jᵀ`, `∂K/∂σ² = I`):
//!
//! ```text
//! LML       = −½ yᵀα − Σ_i ln L_ii − (n/2) ln 2π
//! ∂LML/∂w_j = ½ (φ_jᵀα)² − ½ ‖L⁻¹φ_j‖²
//! ∂LML/∂σ²  = ½ αᵀα − ½ ‖L⁻¹‖_F²
//! ```
//!
//! Forming the lower triangle of `K` costs `n²p` flops, its Cholesky factor `n³/3`, `L⁻¹Φ`
//! `n²p` and `L⁻¹` `n³/3`: `2n²p + 2n³/3` against `2p³/3` for the weight-space
//! [`WoodburyFit`](super::WoodburyFit). [`data_space_is_cheaper`] picks the form.

use std::sync::Mutex;

use faer::linalg::matmul::matmul;
use faer::linalg::matmul::triangular::{self, BlockStructure};
use faer::linalg::triangular_inverse::invert_lower_triangular;
use faer::linalg::triangular_solve::{
    solve_lower_triangular_in_place, solve_upper_triangular_in_place,
};
use faer::{Accum, Col, ColRef, Mat, MatRef, Par};
use gp_linalg::parallelism_for;
use gp_linalg::validate::{check_finite_col, check_finite_mat};

use super::woodbury::{check_weights, cholesky_lower_in_place};
use crate::error::{ModelError, Result};
use crate::validate::check_noise;

/// `ln 2π`.
const LN_2PI: f64 = 1.837_877_066_409_345_5;

/// Flops of one weight-space evaluation (log marginal likelihood and its `p + 1` gradients,
/// [`WoodburyFit::refit`](super::WoodburyFit::refit) +
/// [`lml_and_gradients`](super::WoodburyFit::lml_and_gradients)): the Cholesky factor of the
/// `p × p` matrix `P = σ²W⁻¹ + ΦᵀΦ` (`p³/3`) and its triangular inverse for `diag(P⁻¹)`
/// (`p³/3`), `2p³/3` in all.
pub fn weight_space_flops(p: usize) -> f64 {
    let p = p as f64;
    2.0 * p * p * p / 3.0
}

/// Flops of one data-space evaluation ([`DualFit::refit`] +
/// [`DualFit::lml_and_gradients`]): the lower triangle of `K = ΦWΦᵀ + σ²I` (`n²p`), its
/// Cholesky factor (`n³/3`), `L⁻¹Φ` (`n²p`) and `L⁻¹` (`n³/3`): `2n²p + 2n³/3`.
pub fn data_space_flops(n: usize, p: usize) -> f64 {
    let (n, p) = (n as f64, p as f64);
    2.0 * n * n * p + 2.0 * n * n * n / 3.0
}

/// Whether the data-space form ([`DualFit`], `2n²p + 2n³/3` flops per evaluation) is
/// cheaper than the weight-space form ([`WoodburyFit`](super::WoodburyFit), `2p³/3`) for `n`
/// training points and `p` basis functions ([`data_space_flops`] against
/// [`weight_space_flops`]). The break-even is at `n ≈ 0.53 p`.
///
/// ```
/// use gp_models::grief::dual::data_space_is_cheaper;
///
/// assert!(data_space_is_cheaper(90, 1000));
/// assert!(!data_space_is_cheaper(600, 1000));
/// assert!(!data_space_is_cheaper(1000, 50));
/// ```
pub fn data_space_is_cheaper(n: usize, p: usize) -> bool {
    data_space_flops(n, p) < weight_space_flops(p)
}

/// Reused buffers of [`DualFit`]: `n × p` (`Φ diag(√w)` while `K` is formed, `L⁻¹Φ` for the
/// gradients) and `n × n` (`L⁻¹`).
#[derive(Debug)]
struct Scratch {
    np: Mat<f64>,
    nn: Mat<f64>,
}

impl Scratch {
    fn empty() -> Self {
        Self {
            np: Mat::zeros(0, 0),
            nn: Mat::zeros(0, 0),
        }
    }
}

/// Resizes `m` to `rows × cols` if it has another shape (the contents are then zero).
fn ensure_shape(m: &mut Mat<f64>, rows: usize, cols: usize) {
    if m.nrows() != rows || m.ncols() != cols {
        *m = Mat::zeros(rows, cols);
    }
}

/// The GP-GRIEF model with weights `w` and noise variance `σ²` evaluated in the data space
/// from the whole training basis `Φ` (`n × p`) and the targets `y`: the Cholesky factor of
/// `K = ΦWΦᵀ + σ²I_n` and `α = K⁻¹y` are computed by [`new`](Self::new)
/// (`n²p + n³/3` flops); [`lml_and_gradients`](Self::lml_and_gradients) adds `n²p + n³/3`
/// for the `p + 1` gradients. It gives the same numbers as
/// [`WoodburyFit`](super::WoodburyFit) (the weight-space form, `2p³/3` flops) and is the
/// cheaper one when `n` is below about `0.53 p` ([`data_space_is_cheaper`]).
///
/// `Φ` and `y` are borrowed and checked once (shapes and finiteness) by
/// [`new`](Self::new); [`refit`](Self::refit) at new weights reuses them and the buffers.
///
/// ```
/// use gp_models::faer::{Col, Mat};
/// use gp_models::grief::{DualFit, GriefStats, WoodburyFit};
///
/// let phi = Mat::from_fn(8, 20, |i, j| ((i * (j + 2) + 1) as f64 * 0.37).sin());
/// let y = Col::from_fn(8, |i| (i as f64 * 0.3).cos());
/// let w: Vec<f64> = (0..20).map(|j| 0.5 + 0.1 * j as f64).collect();
/// let fit = DualFit::new(phi.as_ref(), y.as_ref(), &w, 0.1)?;
/// let (lml, dlml_dw, dlml_dnoise) = fit.lml_and_gradients();
/// assert!((lml - fit.lml()).abs() < 1e-12 && dlml_dw.len() == 20 && dlml_dnoise.is_finite());
///
/// // The weight-space form on the statistics of the same Φ, y gives the same value.
/// let stats = GriefStats::from_phi(phi.as_ref(), y.as_ref())?;
/// let woodbury = WoodburyFit::new(&stats, &w, 0.1)?;
/// assert!((woodbury.lml() - lml).abs() < 1e-9 * lml.abs());
///
/// // New weights and noise, reusing the buffers.
/// let fit = fit.refit(&vec![1.0; 20], 0.2)?;
/// assert_eq!(fit.noise(), 0.2);
/// # Ok::<(), gp_models::ModelError>(())
/// ```
#[derive(Debug)]
pub struct DualFit<'a> {
    phi: MatRef<'a, f64>,
    y: ColRef<'a, f64>,
    w: Vec<f64>,
    noise: f64,
    par: Par,
    /// Lower Cholesky factor of `K` in the lower triangle (the strict upper triangle is not
    /// read).
    l: Mat<f64>,
    /// `α = K⁻¹y`.
    alpha: Col<f64>,
    /// `yᵀα`.
    data_fit: f64,
    log_det_k: f64,
    /// Reused buffers (a fresh one is allocated if it is busy).
    scratch: Mutex<Scratch>,
}

impl Clone for DualFit<'_> {
    fn clone(&self) -> Self {
        Self {
            phi: self.phi,
            y: self.y,
            w: self.w.clone(),
            noise: self.noise,
            par: self.par,
            l: self.l.clone(),
            alpha: self.alpha.clone(),
            data_fit: self.data_fit,
            log_det_k: self.log_det_k,
            scratch: Mutex::new(Scratch::empty()),
        }
    }
}

impl<'a> DualFit<'a> {
    /// Factors `K = ΦWΦᵀ + σ²I` for the training basis `phi` (`n × p`), the targets `y`
    /// (length `n`), the weights `w` (length `p`) and the noise variance `noise` (`σ²`), with
    /// the workspace's parallelism ([`gp_linalg::parallelism_for`]) for the largest step,
    /// `max(n²p, n³/3)` flops.
    ///
    /// Errors: [`ModelError::LengthMismatch`] for `y` or `w` of the wrong length,
    /// [`ModelError::NonFinite`] for non-finite `Φ` or `y`, [`ModelError::InvalidOption`]
    /// (`w`) for a weight that is not finite and positive, [`ModelError::InvalidNoise`],
    /// [`ModelError::DataSpaceNotPositiveDefinite`] if `K` is numerically not positive
    /// definite.
    pub fn new(phi: MatRef<'a, f64>, y: ColRef<'a, f64>, w: &[f64], noise: f64) -> Result<Self> {
        let (n, p) = (phi.nrows() as f64, phi.ncols() as f64);
        let flops = (n * n * p).max(n * n * n / 3.0);
        Self::with_parallelism(phi, y, w, noise, parallelism_for(flops))
    }

    /// As [`new`](Self::new), with the parallelism of the `O(n²p + n³)` steps (forming and
    /// factoring `K` here, `L⁻¹Φ` and `L⁻¹` in
    /// [`lml_and_gradients`](Self::lml_and_gradients)).
    pub fn with_parallelism(
        phi: MatRef<'a, f64>,
        y: ColRef<'a, f64>,
        w: &[f64],
        noise: f64,
        par: Par,
    ) -> Result<Self> {
        let (n, p) = (phi.nrows(), phi.ncols());
        if y.nrows() != n {
            return Err(ModelError::LengthMismatch {
                context: "GRIEF training targets y (one per row of the basis Φ)",
                expected: n,
                found: y.nrows(),
            });
        }
        // Checked first so that a bad weight or noise is named before a failure of Φ, as in
        // refit; Φ and y are checked once here and borrowed immutably afterwards.
        check_weights(w, p, "w")?;
        check_noise(noise)?;
        check_finite_mat(phi, "the training basis Φ").map_err(ModelError::from_finite_check)?;
        check_finite_col(y, "the training targets y").map_err(ModelError::from_finite_check)?;
        let fit = Self {
            phi,
            y,
            w: Vec::with_capacity(p),
            noise,
            par,
            l: Mat::zeros(n, n),
            alpha: Col::zeros(n),
            data_fit: 0.0,
            log_det_k: 0.0,
            scratch: Mutex::new(Scratch {
                np: Mat::zeros(n, p),
                nn: Mat::zeros(0, 0),
            }),
        };
        fit.refit(w, noise)
    }

    /// The same model at new weights and noise variance, reusing this fit's `n × n` and
    /// `n × p` buffers (no allocation of matrices: for the many evaluations of GP-GRIEF-I on
    /// a fixed basis). Errors as [`new`](Self::new) for the weights and the noise; the
    /// buffers are dropped on error.
    pub fn refit(mut self, w: &[f64], noise: f64) -> Result<Self> {
        let (n, p) = (self.phi.nrows(), self.phi.ncols());
        check_weights(w, p, "w")?;
        check_noise(noise)?;
        self.w.clear();
        self.w.extend_from_slice(w);
        self.noise = noise;
        let par = self.par;
        let phi = self.phi;
        // Φ diag(√w) in the n × p buffer, then the lower triangle of (Φ√w)(Φ√w)ᵀ.
        let scratch = self
            .scratch
            .get_mut()
            .unwrap_or_else(std::sync::PoisonError::into_inner);
        ensure_shape(&mut scratch.np, n, p);
        let scaled = &mut scratch.np;
        for (j, wj) in w.iter().enumerate() {
            let s = wj.sqrt();
            let mut dst = scaled.col_mut(j);
            let src = phi.col(j);
            for i in 0..n {
                dst[i] = s * src[i];
            }
        }
        let l = &mut self.l;
        if p == 0 {
            for j in 0..n {
                for i in j..n {
                    l[(i, j)] = 0.0;
                }
            }
        } else {
            triangular::matmul(
                l.as_mut(),
                BlockStructure::TriangularLower,
                Accum::Replace,
                scaled.as_ref(),
                BlockStructure::Rectangular,
                scaled.transpose(),
                BlockStructure::Rectangular,
                1.0,
                par,
            );
        }
        for i in 0..n {
            l[(i, i)] += noise;
        }
        if let Some(pivot) = cholesky_lower_in_place(l.as_mut(), par) {
            return Err(ModelError::DataSpaceNotPositiveDefinite { n, pivot });
        }
        self.log_det_k = 2.0 * (0..n).map(|i| l[(i, i)].ln()).sum::<f64>();
        self.alpha.copy_from(self.y);
        solve_lower_triangular_in_place(l.as_ref(), self.alpha.as_mat_mut(), Par::Seq);
        solve_upper_triangular_in_place(l.transpose(), self.alpha.as_mat_mut(), Par::Seq);
        self.data_fit = self.y.transpose() * &self.alpha;
        Ok(self)
    }

    /// Number of training points `n`.
    pub fn n(&self) -> usize {
        self.phi.nrows()
    }

    /// Number of basis functions `p`.
    pub fn p(&self) -> usize {
        self.phi.ncols()
    }

    /// The weights `w`.
    pub fn weights(&self) -> &[f64] {
        &self.w
    }

    /// The noise variance `σ²`.
    pub fn noise(&self) -> f64 {
        self.noise
    }

    /// `α = K⁻¹y`.
    pub fn alpha(&self) -> ColRef<'_, f64> {
        self.alpha.as_ref()
    }

    /// `log|K| = 2 Σ ln L_ii`.
    pub fn log_det_k(&self) -> f64 {
        self.log_det_k
    }

    /// `yᵀK⁻¹y = yᵀα`.
    pub fn data_fit(&self) -> f64 {
        self.data_fit
    }

    /// The log marginal likelihood `log N(y | 0, ΦWΦᵀ + σ²I)` in `O(1)` from the factor.
    pub fn lml(&self) -> f64 {
        -0.5 * (self.data_fit + self.log_det_k + self.n() as f64 * LN_2PI)
    }

    /// The log marginal likelihood and its gradients with respect to every weight `w_j` and
    /// to the noise variance `σ²` (the [module documentation](crate::grief::dual)): `L⁻¹Φ` (`n²p` flops)
    /// and `L⁻¹` (`n³/3`) on top of [`new`](Self::new).
    ///
    /// Returns `(lml, ∂lml/∂w, ∂lml/∂σ²)`, with the meaning of
    /// [`WoodburyFit::lml_and_gradients`](super::WoodburyFit::lml_and_gradients): the
    /// gradients are with respect to `w` and `σ²` themselves.
    pub fn lml_and_gradients(&self) -> (f64, Vec<f64>, f64) {
        let (n, p) = (self.n(), self.p());
        let mut guard = self.scratch.try_lock().ok();
        let mut fresh = Scratch::empty();
        let scratch = match guard.as_deref_mut() {
            Some(buffers) => buffers,
            None => &mut fresh,
        };
        // Φᵀα (p).
        let mut phi_alpha = Col::<f64>::zeros(p);
        matmul(
            phi_alpha.as_mat_mut(),
            Accum::Replace,
            self.phi.transpose(),
            self.alpha.as_mat(),
            1.0,
            Par::Seq,
        );
        // L⁻¹Φ in the n × p buffer.
        ensure_shape(&mut scratch.np, n, p);
        let linv_phi = &mut scratch.np;
        linv_phi.copy_from(self.phi);
        solve_lower_triangular_in_place(self.l.as_ref(), linv_phi.as_mut(), self.par);
        let dlml_dw = (0..p)
            .map(|j| {
                let a = phi_alpha[j];
                0.5 * (a * a - linv_phi.col(j).squared_norm_l2())
            })
            .collect();
        // ‖L⁻¹‖_F² from the lower triangle of L⁻¹ (the only part written).
        ensure_shape(&mut scratch.nn, n, n);
        let linv = &mut scratch.nn;
        invert_lower_triangular(linv.as_mut(), self.l.as_ref(), self.par);
        let trace_k_inv: f64 = (0..n)
            .map(|j| linv.col(j).subrows(j, n - j).squared_norm_l2())
            .sum();
        let dlml_dnoise = 0.5 * (self.alpha.squared_norm_l2() - trace_k_inv);
        (self.lml(), dlml_dw, dlml_dnoise)
    }
}
