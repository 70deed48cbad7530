//! GP-GRIEF-I (Evans & Nair 2018, §5–6): the length scales and the signal variance stay at
//! the values of a fitted [`Grief`] model, and the `p` eigenfunction weights `w` and the
//! noise variance `σ²` are sampled from their posterior by MALA, with independent
//! log-normal priors given by (mode, variance): `{1, 100}` for every `wⱼ`, `{σ₀², 0.04}` for
//! `σ²` where `σ₀²` is the model's noise variance. The kernel of a sample is
//! `s_f² Σⱼ wⱼ φⱼ(x) φⱼ(z)`, so the prior mode `w = 1` is the model's GRIEF kernel.
//!
//! Each MALA step evaluates the log marginal likelihood and its `p + 1` gradients in the
//! cheaper of two exact forms ([`GriefSamplerOptions::evaluation`]):
//!
//! * the weight space ([`WoodburyFit`]): from the statistics `ΦᵀΦ`, `Φᵀy`, `yᵀy` computed
//!   once, one `p × p` Cholesky factorization and the diagonal of its inverse, `2p³/3`
//!   flops whatever `n`;
//! * the data space ([`DualFit`]): from the training basis `Φ` (`n × p`) formed once, one
//!   `n × n` Cholesky factorization of `K = ΦWΦᵀ + σ²I`, `L⁻¹Φ` and `L⁻¹`, `2n²p + 2n³/3`
//!   flops, the cheaper one for `n` below about `0.53 p` (the paper's runs: `p = 1000`,
//!   `n = 20…500`).
//!
//! The cost per step is therefore `min(2p³/3, 2n²p + 2n³/3)`: it never exceeds the `O(p³)`
//! of the weight-space form, whatever `n`, and falls to `O(n²p)` for small data sets.
//!
//! Sampling happens in log space (`u = ln x`) with the log-Jacobian `Σ uᵢ` in the target,
//! so the priors are the stated log-normals (the reference code samples in softplus space
//! without the Jacobian; [`GriefSamplerOptions::include_jacobian`] `= false` drops it as the
//! code does). Predictions average the per-sample predictive means; the variance is the
//! mean of the per-sample variances plus the variance of the means (law of total variance).

use faer::{Col, MatRef};

use crate::error::{ModelError, Result};
use crate::grief::dual::{data_space_is_cheaper, DualFit};
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
    /// How each step evaluates the log marginal likelihood and its gradients (default
    /// [`GriefEvaluation::Auto`]: the cheaper form).
    pub evaluation: GriefEvaluation,
}

/// The form in which [`Grief::sample_weights`] evaluates the log marginal likelihood and its
/// `p + 1` gradients at every step. Both are exact: they differ only by rounding, and a
/// seeded run gives the same chain in either up to that rounding.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum GriefEvaluation {
    /// The cheaper of the two by their flop counts,
    /// [`data_space_is_cheaper`]`(n, p)`:
    /// `2n²p + 2n³/3` (data space) against `2p³/3` (weight space); the data space for `n`
    /// below about `0.53 p`.
    #[default]
    Auto,
    /// The weight space ([`WoodburyFit`]): `p × p` factorizations on the sufficient
    /// statistics, `2p³/3` flops per step whatever `n`.
    WeightSpace,
    /// The data space ([`DualFit`]): `n × n` factorizations on the training basis `Φ`
    /// (`n × p`, formed once and kept for the run), `2n²p + 2n³/3` flops per step.
    DataSpace,
}

impl Default for GriefSamplerOptions {
    fn default() -> Self {
        Self {
            mala: MalaOptions::default(),
            weight_prior_mode: 1.0,
            weight_prior_variance: 100.0,
            noise_prior_variance: 0.04,
            include_jacobian: true,
            evaluation: GriefEvaluation::Auto,
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

/// The fit of one sampler step in the form chosen by [`GriefEvaluation`].
enum StepFit<'a> {
    Weight(WoodburyFit<'a>),
    Data(DualFit<'a>),
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
        let data_space = match options.evaluation {
            GriefEvaluation::Auto => data_space_is_cheaper(self.x.nrows(), p),
            GriefEvaluation::WeightSpace => false,
            GriefEvaluation::DataSpace => true,
        };
        // The training basis (n × p) for the data-space form, formed once.
        let phi = if data_space {
            Some(self.basis.phi_block(self.x.as_ref())?)
        } else {
            None
        };
        let phi = phi.as_ref().map(|phi| phi.as_ref());
        let y = self.y.as_ref();
        let mut fit: Option<StepFit<'_>> = None;
        let mut w_eff = vec![0.0; p];
        let log_likelihood = move |x: &[f64]| -> Result<(f64, Vec<f64>)> {
            for (we, &w) in w_eff.iter_mut().zip(&x[..p]) {
                *we = sf2 * w;
            }
            let noise = x[p];
            let next = match (fit.take(), phi) {
                (Some(StepFit::Data(f)), _) => StepFit::Data(f.refit(&w_eff, noise)?),
                (Some(StepFit::Weight(f)), _) => StepFit::Weight(f.refit(&w_eff, noise)?),
                (None, Some(phi)) => StepFit::Data(DualFit::new(phi, y, &w_eff, noise)?),
                (None, None) => StepFit::Weight(WoodburyFit::new(stats, &w_eff, noise)?),
            };
            let (lml, dw, dnoise) = match &next {
                StepFit::Data(f) => f.lml_and_gradients(),
                StepFit::Weight(f) => f.lml_and_gradients(),
            };
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
