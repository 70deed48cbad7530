//! [`RffObjective`]: the data, the kernel and the noise of one RFF objective, validated once.

use std::sync::OnceLock;

use faer::{Col, ColRef, Mat, MatRef};
use gp_linalg::validate::check_finite_col;

use super::draws::SpectralDraws;
use super::features;
use super::kernel::RffKernel;
use super::solve::{self, RffPath};
use super::terms::{Compute, LmlTerms};
use crate::core::likelihood::{
    log_params_with_noise, param_names_with_noise, split_log_params_with_noise,
};
use crate::error::{ModelError, Result};
use crate::exact::ExactGp;
use crate::validate::{check_noise, check_training_inputs};

/// The random-Fourier-feature log marginal likelihood of a GP with zero prior mean, its two
/// terms and its analytic gradient, for fixed frequency draws (spec `rtgps.md` §1.5).
///
/// With `F` frequencies `ω_f = t_f · g_f ⊘ ℓ` (see [`SpectralDraws`]) and the features
/// `Φ = sqrt(s/F) [cos Xω₁, sin Xω₁, …]` (`n × 2F`), the objective is the exact log marginal
/// likelihood of `K̃ = ΦΦᵀ + σ²I`. Its gradient is
/// `∂L/∂Φ = αbᵀ − K̃⁻¹Φ` (`α = K̃⁻¹y`, `b = Φᵀα`) pushed through `Φ(ω(ℓ), s)` by the chain
/// rule (module `features`), and `∂L/∂log σ² = ½σ²(αᵀα − tr K̃⁻¹)`. Cost: `O(n F² + F³)`
/// by Woodbury for `2F < n`, `O(n² F + n³)` densely otherwise ([`RffPath`]).
///
/// Hyperparameters: the kernel's log hyperparameters `[log ℓ₀, …, log ℓ_{d−1}, log s]`, then
/// `log σ²` (as [`ExactGp`]).
#[derive(Debug, Clone)]
pub struct RffObjective<K> {
    kernel: K,
    noise_variance: f64,
    x: Mat<f64>,
    y: Col<f64>,
    path: RffPath,
    /// The exact (Cholesky) value, computed at most once per hyperparameter setting.
    exact_value: OnceLock<LmlTerms>,
    /// The exact value and gradient.
    exact_full: OnceLock<LmlTerms>,
}

impl<K: RffKernel> RffObjective<K> {
    /// The objective for training points `x` (`n × d`), targets `y` (length `n`, zero prior
    /// mean), `kernel` and noise variance `σ² > 0`.
    ///
    /// Errors: [`ModelError::EmptyData`], [`ModelError::LengthMismatch`],
    /// [`ModelError::KernelDim`], [`ModelError::NonFinite`] for a non-finite point or target,
    /// [`ModelError::InvalidNoise`], [`ModelError::Kernel`] for non-finite hyperparameters.
    pub fn new(
        kernel: K,
        x: MatRef<'_, f64>,
        y: ColRef<'_, f64>,
        noise_variance: f64,
    ) -> Result<Self> {
        check_training_inputs(&kernel, x, y.nrows(), "the RFF objective")?;
        check_finite_col(y, "the training targets y").map_err(ModelError::from_finite_check)?;
        check_noise(noise_variance)?;
        Ok(Self {
            kernel,
            noise_variance,
            x: x.to_owned(),
            y: y.to_owned(),
            path: RffPath::Auto,
            exact_value: OnceLock::new(),
            exact_full: OnceLock::new(),
        })
    }

    /// The same objective evaluated by `path` (default [`RffPath::Auto`]).
    pub fn with_path(mut self, path: RffPath) -> Self {
        self.path = path;
        self
    }

    /// The path option.
    pub fn path(&self) -> RffPath {
        self.path
    }

    /// The path an evaluation with `num_freqs` frequencies takes.
    pub fn path_for(&self, num_freqs: usize) -> RffPath {
        self.path
            .resolve(num_freqs.saturating_mul(2), self.n_train())
    }

    /// The kernel.
    pub fn kernel(&self) -> &K {
        &self.kernel
    }

    /// The noise variance `σ²`.
    pub fn noise_variance(&self) -> f64 {
        self.noise_variance
    }

    /// Number of training points `n`.
    pub fn n_train(&self) -> usize {
        self.y.nrows()
    }

    /// Input dimension `d`.
    pub fn input_dim(&self) -> usize {
        self.x.ncols()
    }

    /// The training points.
    pub fn train_x(&self) -> MatRef<'_, f64> {
        self.x.as_ref()
    }

    /// The training targets.
    pub fn train_y(&self) -> ColRef<'_, f64> {
        self.y.as_ref()
    }

    /// Number of hyperparameters, `d + 2`.
    pub fn n_params(&self) -> usize {
        self.kernel.n_params() + 1
    }

    /// Hyperparameter names: the kernel's, then `"log_noise_variance"`.
    pub fn param_names(&self) -> Vec<String> {
        param_names_with_noise(&self.kernel)
    }

    /// The log hyperparameters: the kernel's, then `log σ²`.
    pub fn log_params(&self) -> Vec<f64> {
        log_params_with_noise(&self.kernel, self.noise_variance)
    }

    /// Sets the log hyperparameters (layout as [`log_params`](Self::log_params)); unchanged
    /// on error.
    ///
    /// Errors: [`ModelError::LengthMismatch`], [`ModelError::InvalidNoise`],
    /// [`ModelError::Kernel`] for a non-finite or out-of-range value.
    pub fn set_log_params(&mut self, log_params: &[f64]) -> Result<()> {
        let (noise_variance, kernel_params) =
            split_log_params_with_noise(&self.kernel, log_params)?;
        let mut kernel = self.kernel.clone();
        kernel.set_log_params(kernel_params)?;
        self.kernel = kernel;
        self.noise_variance = noise_variance;
        self.exact_value = OnceLock::new();
        self.exact_full = OnceLock::new();
        Ok(())
    }

    /// The RFF estimate with the first `num_freqs` frequencies of `draws`
    /// (`2·num_freqs` feature columns).
    ///
    /// Errors: [`ModelError::LengthMismatch`] when `G` does not have one column per input
    /// dimension, [`ModelError::InvalidOption`] for `num_freqs == 0`, more frequencies than
    /// the draws hold, or draws of the wrong family (Student-t scales for a squared
    /// exponential, none for a Matérn kernel), and [`ModelError::Linalg`] if `K̃` (or `A`)
    /// is numerically not positive definite (a noise variance below the rounding error of
    /// `ΦᵀΦ`).
    pub fn rff(
        &self,
        draws: &SpectralDraws,
        num_freqs: usize,
        compute: Compute,
    ) -> Result<LmlTerms> {
        let mut all = self.rff_nested(draws, &[num_freqs], compute)?;
        all.pop().ok_or_else(|| ModelError::InvalidOption {
            name: "num_freqs",
            reason: "no estimate was computed".into(),
        })
    }

    /// The RFF estimates with the first `freqs[i]` frequencies of the same `draws`, one per
    /// entry (nested estimates, as SS-RFF and bias curves over the number of features use):
    /// the sines and cosines are computed once, for the largest entry.
    ///
    /// Errors: those of [`rff`](Self::rff), for every entry.
    pub fn rff_nested(
        &self,
        draws: &SpectralDraws,
        freqs: &[usize],
        compute: Compute,
    ) -> Result<Vec<LmlTerms>> {
        for &f in freqs {
            draws.check_for(&self.kernel, f)?;
        }
        let Some(&max) = freqs.iter().max() else {
            return Ok(Vec::new());
        };
        let params = self.kernel.ard_params();
        let trig = features::Trig::new(
            self.x.as_ref(),
            draws.frequencies(max, params.lengthscales()),
        );
        freqs
            .iter()
            .map(|&f| self.eval(&trig, f, compute))
            .collect()
    }

    /// One evaluation with the first `num_freqs ≤ trig.num_freqs()` frequencies.
    fn eval(&self, trig: &features::Trig, num_freqs: usize, compute: Compute) -> Result<LmlTerms> {
        debug_assert!(num_freqs <= trig.num_freqs());
        let feats = trig.features(num_freqs, self.kernel.ard_params().variance());
        let solved = solve::solve(
            self.path,
            feats.phi.as_ref(),
            self.y.as_ref(),
            self.noise_variance,
            compute.gradient(),
        )?;
        let grad = solved.grad.map(|parts| {
            let mut g = features::kernel_grad(self.x.as_ref(), &feats, &parts.q);
            g.push(parts.log_noise);
            g
        });
        Ok(LmlTerms::from_terms(
            self.n_train(),
            solved.data_fit,
            solved.log_det,
            grad,
        ))
    }

    /// The exact log marginal likelihood (Cholesky of `K + σ²I`, as
    /// [`ExactGp::lml_and_grad`] with the default fit options), cached until the
    /// hyperparameters change.
    ///
    /// Errors: those of [`ExactGp::fit`] (a kernel matrix that stays indefinite after the
    /// jitter ladder, the memory limit).
    pub fn exact(&self, compute: Compute) -> Result<LmlTerms> {
        if let Some(full) = self.exact_full.get() {
            return Ok(match compute {
                Compute::ValueAndGradient => full.clone(),
                Compute::Value => LmlTerms {
                    grad: None,
                    ..full.clone()
                },
            });
        }
        if compute == Compute::Value {
            if let Some(value) = self.exact_value.get() {
                return Ok(value.clone());
            }
        }
        let gp = ExactGp::fit(
            self.kernel.clone(),
            self.x.as_ref(),
            self.y.as_ref(),
            self.noise_variance,
        )?;
        let alpha = gp.alpha();
        let data_fit = (0..self.n_train()).map(|i| self.y[i] * alpha[i]).sum();
        let grad = compute.gradient().then(|| gp.lml_and_grad().1);
        let terms = LmlTerms::from_terms(self.n_train(), data_fit, gp.cholesky().log_det(), grad);
        let cache = match compute {
            Compute::Value => &self.exact_value,
            Compute::ValueAndGradient => &self.exact_full,
        };
        // Another thread may have filled the cache meanwhile; both values are equal.
        let _ = cache.set(terms.clone());
        Ok(terms)
    }
}
