//! GP-GRIEF-I (Evans & Nair 2018, §5–6): the length scales and the signal variance stay at
//! the values of a fitted [`Grief`] model, and the `p` eigenfunction weights `w` and the
//! noise variance `σ²` are sampled from their posterior by MALA, with independent
//! log-normal priors given by (mode, variance): `{1, 100}` for every `wⱼ`, `{σ₀², 0.04}` for
//! `σ²` where `σ₀²` is the model's noise variance. The kernel of a sample is
//! `s_f² Σⱼ wⱼ φⱼ(x) φⱼ(z)`, so the prior mode `w = 1` is the model's GRIEF kernel.
//!
//! Each MALA step evaluates the log marginal likelihood and its `p + 1` gradients from the
//! statistics `ΦᵀΦ`, `Φᵀy`, `yᵀy` computed once (one `p × p` Cholesky factorization and
//! the diagonal of its inverse): the cost per step does not depend on `n`.
//!
//! Sampling happens in log space (`u = ln x`) with the log-Jacobian `Σ uᵢ` in the target,
//! so the priors are the stated log-normals (the reference code samples in softplus space
//! without the Jacobian; [`GriefSamplerOptions::include_jacobian`] `= false` drops it as the
//! code does). Predictions average the per-sample predictive means; the variance is the
//! mean of the per-sample variances plus the variance of the means (law of total variance).

use faer::{Col, MatRef};

use crate::error::{ModelError, Result};
use crate::grief::model::Grief;
use crate::grief::stats::GriefStats;
use crate::grief::woodbury::WoodburyFit;
use crate::sampling::{mala, LogNormal, LogSpaceTarget, MalaOptions, MalaRun, MixtureMoments};

/// Options of [`Grief::sample_weights`].
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct GriefSamplerOptions {
    /// The sampler (default: 10 000 iterations, burn-in 1000, every 50th kept, step
    /// adapted during burn-in only, seed 0).
    pub mala: MalaOptions,
    /// Mode of the log-normal prior of every weight (default 1, the paper's).
    pub weight_prior_mode: f64,
    /// Variance of the log-normal prior of every weight (default 100, the paper's).
    pub weight_prior_variance: f64,
    /// Variance of the log-normal prior of the noise variance, whose mode is the model's
    /// noise variance (default 0.04, the paper's: meant for standardized targets).
    pub noise_prior_variance: f64,
    /// Include the log-Jacobian of `x = eᵘ` in the target (default `true`: the priors are
    /// then exactly the stated log-normals).
    pub include_jacobian: bool,
}

impl Default for GriefSamplerOptions {
    fn default() -> Self {
        Self {
            mala: MalaOptions::default(),
            weight_prior_mode: 1.0,
            weight_prior_variance: 100.0,
            noise_prior_variance: 0.04,
            include_jacobian: true,
        }
    }
}

/// Samples of the GP-GRIEF-I posterior over the eigenfunction weights and the noise, with
/// the model they belong to.
#[derive(Debug, Clone)]
pub struct GriefPosterior {
    model: Grief,
    /// The sampler's record: kept samples `u = (ln w₁, …, ln w_p, ln σ²)`, acceptance rates,
    /// step sizes.
    pub run: MalaRun,
}

/// The weight-space fit at `(w, σ²)`, reusing the buffers of `previous` when there is one
/// (the sampler and the averaged predictions visit many weights on the same statistics).
fn refit_or_new<'s>(
    previous: Option<WoodburyFit<'s>>,
    stats: &'s GriefStats,
    w: &[f64],
    noise: f64,
) -> Result<WoodburyFit<'s>> {
    match previous {
        Some(fit) => fit.refit(w, noise),
        None => WoodburyFit::new(stats, w, noise),
    }
}

impl Grief {
    /// GP-GRIEF-I: samples the eigenfunction weights and the noise variance by MALA (see
    /// the [module documentation](crate::grief::type_one)), with this model's length
    /// scales and signal variance fixed.
    ///
    /// Errors: invalid prior or sampler options, a failure of the target at the start
    /// (the prior mode).
    pub fn sample_weights(&self, options: &GriefSamplerOptions) -> Result<GriefPosterior> {
        let p = self.basis.len();
        let weight_prior = LogNormal::from_mode_variance(
            options.weight_prior_mode,
            options.weight_prior_variance,
        )?;
        let noise_prior =
            LogNormal::from_mode_variance(self.noise_variance, options.noise_prior_variance)?;
        let mut priors = vec![weight_prior; p];
        priors.push(noise_prior);
        let sf2 = self.kernel.params().variance();
        let stats = &self.stats;
        let mut fit: Option<WoodburyFit<'_>> = None;
        let mut w_eff = vec![0.0; p];
        let log_likelihood = move |x: &[f64]| -> Result<(f64, Vec<f64>)> {
            for (we, &w) in w_eff.iter_mut().zip(&x[..p]) {
                *we = sf2 * w;
            }
            let noise = x[p];
            let next = refit_or_new(fit.take(), stats, &w_eff, noise)?;
            let (lml, dw, dnoise) = next.lml_and_gradients();
            fit = Some(next);
            let mut grad: Vec<f64> = dw.iter().map(|g| sf2 * g).collect();
            grad.push(dnoise);
            Ok((lml, grad))
        };
        let mut target = LogSpaceTarget::new(priors, log_likelihood);
        if !options.include_jacobian {
            target = target.without_jacobian();
        }
        let start = target.prior_mode();
        let run = mala(|u: &[f64]| target.evaluate(u), &start, &options.mala)?;
        Ok(GriefPosterior {
            model: self.clone(),
            run,
        })
    }
}

impl GriefPosterior {
    /// The model whose basis the weights belong to.
    pub fn model(&self) -> &Grief {
        &self.model
    }

    /// The posterior-mean weights `E[w]` over the kept samples (length `p`) and the mean
    /// noise variance.
    pub fn mean_weights(&self) -> (Vec<f64>, f64) {
        let k = self.run.samples.len().max(1) as f64;
        let p = self.model.basis.len();
        let mut w = vec![0.0; p];
        let mut noise = 0.0;
        for u in &self.run.samples {
            for (wi, ui) in w.iter_mut().zip(u) {
                *wi += ui.exp() / k;
            }
            noise += u[p].exp() / k;
        }
        (w, noise)
    }

    /// Predictions at the rows of `x_test` averaged over the kept samples: the mean, the
    /// latent variance and the variance of a new observation (each sample's noise added),
    /// both by the law of total variance.
    ///
    /// Errors: no kept samples, test points of the wrong dimension or non-finite.
    pub fn predict(&self, x_test: MatRef<'_, f64>) -> Result<(Col<f64>, Col<f64>, Col<f64>)> {
        let model = &self.model;
        crate::validate::check_test_points(x_test, model.basis.dims())?;
        if self.run.samples.is_empty() {
            return Err(ModelError::InvalidOption {
                name: "GriefSamplerOptions::mala",
                reason: "the run kept no samples; lower burn_in or thin".into(),
            });
        }
        let p = model.basis.len();
        let b = x_test.nrows();
        let phi = model.basis.phi_block(x_test)?;
        let sf2 = model.kernel.params().variance();
        let mut latent = MixtureMoments::new(b);
        let mut observed = MixtureMoments::new(b);
        let mut fit: Option<WoodburyFit<'_>> = None;
        let mut w_eff = vec![0.0; p];
        for u in &self.run.samples {
            for (we, ui) in w_eff.iter_mut().zip(u) {
                *we = sf2 * ui.exp();
            }
            let noise = u[p].exp();
            let next = refit_or_new(fit.take(), &model.stats, &w_eff, noise)?;
            let (mean, var) = next.predict(phi.as_ref())?;
            let mean: Vec<f64> = mean.iter().copied().collect();
            let var_f: Vec<f64> = var.iter().copied().collect();
            let var_y: Vec<f64> = var_f.iter().map(|v| v + noise).collect();
            latent.push(&mean, &var_f)?;
            observed.push(&mean, &var_y)?;
            fit = Some(next);
        }
        let mean = Col::from_fn(b, |i| latent.mean()[i]);
        let vf = latent.variance();
        let vy = observed.variance();
        Ok((mean, Col::from_fn(b, |i| vf[i]), Col::from_fn(b, |i| vy[i])))
    }
}
