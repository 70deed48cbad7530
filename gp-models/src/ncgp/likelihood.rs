//! Likelihoods for the Laplace approximation and IterNCGP: the log likelihood, its gradient,
//! the inverse negative Hessian `W⁻¹` (the pseudo-inverse `W†` for softmax) as an operator,
//! and the pseudo targets `ŷ = f + W⁻¹ ∇ log p(y | f)` of the equivalent regression problem.
//!
//! Latent vectors have `N·C` entries in **CN order** (the class index moves fastest: entry
//! `n·C + c` is point `n`, class `c`); targets have `N` entries (values, counts, labels as
//! `f64`).

use faer::{Col, ColRef, Mat};

use std::sync::OnceLock;

use super::noise::InverseCurvature;
use super::predictive::{poisson_log_predictive, GaussHermite, DEFAULT_GAUSS_HERMITE_NODES};
use crate::core::likelihood::{Gaussian, Likelihood};
use crate::error::{ModelError, Result};

/// `ln σ(x)`, the log logistic function, without overflow.
pub(crate) fn log_sigmoid(x: f64) -> f64 {
    if x >= 0.0 {
        -(-x).exp().ln_1p()
    } else {
        x - x.exp().ln_1p()
    }
}

/// The logistic function `σ(x) = 1 / (1 + e^{−x})`, without overflow.
pub(crate) fn sigmoid(x: f64) -> f64 {
    if x >= 0.0 {
        1.0 / (1.0 + (-x).exp())
    } else {
        let e = x.exp();
        e / (1.0 + e)
    }
}

/// `ln y!` for a non-negative integer `y` stored as `f64` (exact sum up to 256, Stirling's
/// series with four terms beyond, relative error below 1e-15).
pub(crate) fn ln_factorial(y: f64) -> f64 {
    if y < 2.0 {
        return 0.0;
    }
    if y <= 256.0 {
        return (2..=y as u64).map(|k| (k as f64).ln()).sum();
    }
    let x = y + 1.0;
    (x - 0.5) * x.ln() - x + 0.5 * (2.0 * std::f64::consts::PI).ln() + 1.0 / (12.0 * x)
        - 1.0 / (360.0 * x.powi(3))
        + 1.0 / (1260.0 * x.powi(5))
}

/// An observation model the Laplace approximation can use: what IterNCGP's Newton steps need
/// (spec `ncgp.md` §3). Latent vectors are in CN order with
/// [`latent_outputs`](Self::latent_outputs) entries per point.
pub trait LaplaceLikelihood: Likelihood {
    /// `C`, latent functions per point (1 for Gaussian, Poisson and binary; the number of
    /// classes for softmax).
    fn latent_outputs(&self) -> usize {
        1
    }

    /// Checks that every target is a valid observation.
    ///
    /// Errors: [`ModelError::InvalidTarget`] naming the first invalid target.
    fn check_targets(&self, y: ColRef<'_, f64>) -> Result<()>;

    /// `log p(y | f)`.
    fn log_likelihood(&self, f: ColRef<'_, f64>, y: ColRef<'_, f64>) -> f64;

    /// `∇_f log p(y | f)` (length `N·C`).
    fn gradient(&self, f: ColRef<'_, f64>, y: ColRef<'_, f64>) -> Col<f64>;

    /// `W(f)⁻¹` (or `W(f)†` for softmax) as an operator, `O(N·C)` per product.
    ///
    /// Errors: [`ModelError::NewtonDiverged`] (with step 0; callers rewrite it) when the
    /// curvature is not finite at `f`.
    fn inverse_curvature(&self, f: ColRef<'_, f64>) -> Result<InverseCurvature>;

    /// The dense negative Hessian `W(f) = −∇² log p(y | f)` (`N·C × N·C`), for dense
    /// references on small problems.
    fn curvature_dense(&self, f: ColRef<'_, f64>) -> Mat<f64>;

    /// The pseudo targets `ŷ = f + W(f)⁻¹ ∇ log p(y | f)`.
    ///
    /// Errors: as [`inverse_curvature`](Self::inverse_curvature).
    fn pseudo_targets(&self, f: ColRef<'_, f64>, y: ColRef<'_, f64>) -> Result<Col<f64>> {
        let winv = self.inverse_curvature(f)?;
        let grad = self.gradient(f, y);
        Ok(f.to_owned() + winv.apply_col(grad.as_ref()))
    }

    /// The log predictive probability `log p(y⋄ | mean, variance)` of one observation given the
    /// latent marginals at its input (`C` means and variances; cross-class covariances
    /// ignored), as the paper evaluates it: Gaussian exactly, Poisson by Gauss–Hermite
    /// quadrature, classification by the probit approximation.
    fn log_predictive(&self, mean: &[f64], variance: &[f64], y: f64) -> f64;

    /// The diagonal of `W(f)` when the likelihood factorizes over one latent value per point
    /// (Gaussian, Poisson, Bernoulli); `None` for softmax, whose `W` couples the classes.
    /// [`LaplaceGp`](super::LaplaceGp) needs it.
    fn curvature_diagonal(&self, _f: ColRef<'_, f64>) -> Option<Col<f64>> {
        None
    }

    /// The third derivatives `∂³ log p(yₙ | fₙ) / ∂fₙ³` of a factorizing likelihood (how
    /// the curvature moves with the mode: the implicit term of the Laplace evidence's
    /// gradient); `None` where [`curvature_diagonal`](Self::curvature_diagonal) is `None`.
    fn third_derivative(&self, _f: ColRef<'_, f64>, _y: ColRef<'_, f64>) -> Option<Col<f64>> {
        None
    }

    /// The derivatives of a factorizing likelihood with respect to each of its log
    /// hyperparameters (order of [`Likelihood::log_params`]) at `f`: empty for a likelihood
    /// without hyperparameters (the default).
    fn log_param_derivatives(
        &self,
        _f: ColRef<'_, f64>,
        _y: ColRef<'_, f64>,
    ) -> Vec<LikelihoodParamDerivative> {
        Vec::new()
    }
}

/// The derivatives of `log p(y | f)` with respect to one log hyperparameter `ψ` of a
/// factorizing likelihood, at fixed `f`: what the gradient of the Laplace evidence needs.
#[derive(Debug, Clone, PartialEq)]
pub struct LikelihoodParamDerivative {
    /// `∂ log p(y | f) / ∂ψ`.
    pub log_likelihood: f64,
    /// `∂Wₙₙ / ∂ψ` (length `N`).
    pub curvature: Col<f64>,
    /// `∂(∇_f log p(y | f))ₙ / ∂ψ` (length `N`).
    pub gradient: Col<f64>,
}

fn invalid_target(
    likelihood: &'static str,
    index: usize,
    value: f64,
    reason: &'static str,
) -> ModelError {
    ModelError::InvalidTarget {
        likelihood,
        index,
        value,
        reason,
    }
}

fn diverged(reason: String) -> ModelError {
    ModelError::NewtonDiverged { step: 0, reason }
}

/// Checks that `y` holds integers in `lo..=hi` (`hi = None`: unbounded).
fn check_integers(
    likelihood: &'static str,
    y: ColRef<'_, f64>,
    hi: Option<f64>,
    reason: &'static str,
) -> Result<()> {
    for (index, &value) in y.iter().enumerate() {
        let ok = value.is_finite() && value >= 0.0 && value.fract() == 0.0;
        if !ok || hi.is_some_and(|h| value > h) {
            return Err(invalid_target(likelihood, index, value, reason));
        }
    }
    Ok(())
}

impl LaplaceLikelihood for Gaussian {
    fn check_targets(&self, y: ColRef<'_, f64>) -> Result<()> {
        match y.iter().position(|v| !v.is_finite()) {
            Some(index) => Err(invalid_target(
                "Gaussian",
                index,
                y[index],
                "expected a finite value",
            )),
            None => Ok(()),
        }
    }

    fn log_likelihood(&self, f: ColRef<'_, f64>, y: ColRef<'_, f64>) -> f64 {
        let s2 = self.noise_variance();
        let norm = 0.5 * (2.0 * std::f64::consts::PI * s2).ln();
        f.iter()
            .zip(y.iter())
            .map(|(f, y)| -0.5 * (y - f).powi(2) / s2 - norm)
            .sum()
    }

    fn gradient(&self, f: ColRef<'_, f64>, y: ColRef<'_, f64>) -> Col<f64> {
        let s2 = self.noise_variance();
        Col::from_fn(f.nrows(), |i| (y[i] - f[i]) / s2)
    }

    fn inverse_curvature(&self, f: ColRef<'_, f64>) -> Result<InverseCurvature> {
        Ok(InverseCurvature::Diagonal(Col::from_fn(f.nrows(), |_| {
            self.noise_variance()
        })))
    }

    fn curvature_dense(&self, f: ColRef<'_, f64>) -> Mat<f64> {
        let w = self.noise_variance().recip();
        Mat::from_fn(f.nrows(), f.nrows(), |i, j| if i == j { w } else { 0.0 })
    }

    fn log_predictive(&self, mean: &[f64], variance: &[f64], y: f64) -> f64 {
        let v = variance[0] + self.noise_variance();
        -0.5 * ((y - mean[0]).powi(2) / v + (2.0 * std::f64::consts::PI * v).ln())
    }

    fn curvature_diagonal(&self, f: ColRef<'_, f64>) -> Option<Col<f64>> {
        let w = self.noise_variance().recip();
        Some(Col::from_fn(f.nrows(), |_| w))
    }

    fn third_derivative(&self, f: ColRef<'_, f64>, _y: ColRef<'_, f64>) -> Option<Col<f64>> {
        Some(Col::zeros(f.nrows()))
    }

    /// With `ψ = log σ²`: `∂ log p/∂ψ = ½ Σ (yₙ − fₙ)²/σ² − N/2`, `∂W/∂ψ = −1/σ²`,
    /// `∂∇ₙ/∂ψ = −(yₙ − fₙ)/σ²`.
    fn log_param_derivatives(
        &self,
        f: ColRef<'_, f64>,
        y: ColRef<'_, f64>,
    ) -> Vec<LikelihoodParamDerivative> {
        let s2 = self.noise_variance();
        let n = f.nrows();
        let residual = Col::from_fn(n, |i| y[i] - f[i]);
        vec![LikelihoodParamDerivative {
            log_likelihood: 0.5 * residual.squared_norm_l2() / s2 - 0.5 * n as f64,
            curvature: Col::from_fn(n, |_| -s2.recip()),
            gradient: Col::from_fn(n, |i| -residual[i] / s2),
        }]
    }
}

/// Poisson counts with the log link: `y_n ~ Poisson(exp f_n)`, `W = diag(exp f)`,
/// `W⁻¹ = diag(exp(−f))`, `ŷ = f − 1 + y exp(−f)` (spec §3.2). No hyperparameters.
///
/// ```
/// use gp_models::faer::col;
/// use gp_models::ncgp::{LaplaceLikelihood, Poisson};
///
/// let lik = Poisson::new();
/// let (f, y) = (col![0.0, 1.0], col![2.0, 0.0]);
/// let yhat = lik.pseudo_targets(f.as_ref(), y.as_ref())?;
/// assert!((yhat[0] - 1.0).abs() < 1e-15); // 0 − 1 + 2
/// assert!((yhat[1] - 0.0).abs() < 1e-15); // 1 − 1 + 0
/// # Ok::<(), gp_models::ModelError>(())
/// ```
#[derive(Debug, Clone, Copy, Default, PartialEq)]
pub struct Poisson;

impl Poisson {
    /// The Poisson likelihood; predictive probabilities by Gauss–Hermite quadrature with
    /// [`DEFAULT_GAUSS_HERMITE_NODES`](super::predictive::DEFAULT_GAUSS_HERMITE_NODES) nodes.
    pub fn new() -> Self {
        Self
    }
}

/// The default Gauss–Hermite rule, built once.
fn default_quadrature() -> Option<&'static GaussHermite> {
    static RULE: OnceLock<Option<GaussHermite>> = OnceLock::new();
    RULE.get_or_init(|| GaussHermite::new(DEFAULT_GAUSS_HERMITE_NODES).ok())
        .as_ref()
}

/// A likelihood without hyperparameters: the `Likelihood` impl shared by Poisson, Bernoulli
/// and softmax.
macro_rules! parameter_free_likelihood {
    ($ty:ty, $name:expr) => {
        impl Likelihood for $ty {
            fn name(&self) -> &'static str {
                $name
            }

            fn param_names(&self) -> Vec<String> {
                Vec::new()
            }

            fn log_params(&self) -> Vec<f64> {
                Vec::new()
            }

            fn n_params(&self) -> usize {
                0
            }

            fn with_log_params(&self, log_params: &[f64]) -> Result<Self> {
                if log_params.is_empty() {
                    Ok(self.clone())
                } else {
                    Err(ModelError::LengthMismatch {
                        context: concat!("the ", $name, " likelihood's log hyperparameters (none)"),
                        expected: 0,
                        found: log_params.len(),
                    })
                }
            }

            /// The latent variance (the observation variance depends on the mean; see
            /// [`LaplaceLikelihood::log_predictive`]).
            fn predictive_variance(&self, latent_variance: f64) -> f64 {
                latent_variance
            }
        }
    };
}

parameter_free_likelihood!(Poisson, "Poisson");
parameter_free_likelihood!(Bernoulli, "Bernoulli");
parameter_free_likelihood!(Softmax, "softmax");

impl LaplaceLikelihood for Poisson {
    fn check_targets(&self, y: ColRef<'_, f64>) -> Result<()> {
        check_integers("Poisson", y, None, "expected a non-negative integer count")
    }

    fn log_likelihood(&self, f: ColRef<'_, f64>, y: ColRef<'_, f64>) -> f64 {
        f.iter()
            .zip(y.iter())
            .map(|(&f, &y)| y * f - f.exp() - ln_factorial(y))
            .sum()
    }

    fn gradient(&self, f: ColRef<'_, f64>, y: ColRef<'_, f64>) -> Col<f64> {
        Col::from_fn(f.nrows(), |i| y[i] - f[i].exp())
    }

    fn inverse_curvature(&self, f: ColRef<'_, f64>) -> Result<InverseCurvature> {
        let d = Col::from_fn(f.nrows(), |i| (-f[i]).exp());
        let bad = d.iter().position(|v| !(v.is_finite() && *v > 0.0));
        match bad {
            Some(i) => Err(diverged(format!(
                "the Poisson curvature exp(f) at point {i} is not usable (f = {:.4e})",
                f[i]
            ))),
            None => Ok(InverseCurvature::Diagonal(d)),
        }
    }

    fn curvature_dense(&self, f: ColRef<'_, f64>) -> Mat<f64> {
        Mat::from_fn(
            f.nrows(),
            f.nrows(),
            |i, j| if i == j { f[i].exp() } else { 0.0 },
        )
    }

    fn curvature_diagonal(&self, f: ColRef<'_, f64>) -> Option<Col<f64>> {
        Some(Col::from_fn(f.nrows(), |i| f[i].exp()))
    }

    /// `∂³(y f − eᶠ)/∂f³ = −eᶠ`.
    fn third_derivative(&self, f: ColRef<'_, f64>, _y: ColRef<'_, f64>) -> Option<Col<f64>> {
        Some(Col::from_fn(f.nrows(), |i| -f[i].exp()))
    }

    fn pseudo_targets(&self, f: ColRef<'_, f64>, y: ColRef<'_, f64>) -> Result<Col<f64>> {
        self.inverse_curvature(f)?;
        Ok(Col::from_fn(f.nrows(), |i| {
            f[i] - 1.0 + y[i] * (-f[i]).exp()
        }))
    }

    fn log_predictive(&self, mean: &[f64], variance: &[f64], y: f64) -> f64 {
        match default_quadrature() {
            Some(q) => poisson_log_predictive(mean[0], variance[0], y as u64, q),
            None => f64::NAN,
        }
    }
}

/// Binary labels `y ∈ {0, 1}` with the logistic link and one latent function:
/// `log p = Σ log σ((2y − 1) f)`, `∇ = y − σ(f)`, `W = diag(σ(1 − σ))`,
/// `W⁻¹ = diag(2 + eᶠ + e^{−f})` (spec §3.3). Predictive `p(y = 1) ≈ σ(m / √(1 + πv/8))`
/// (MacKay's probit approximation, the `C = 1` analogue of the paper's).
#[derive(Debug, Clone, Copy, Default, PartialEq)]
pub struct Bernoulli;

impl LaplaceLikelihood for Bernoulli {
    fn check_targets(&self, y: ColRef<'_, f64>) -> Result<()> {
        check_integers("Bernoulli", y, Some(1.0), "expected a label 0 or 1")
    }

    fn log_likelihood(&self, f: ColRef<'_, f64>, y: ColRef<'_, f64>) -> f64 {
        f.iter()
            .zip(y.iter())
            .map(|(&f, &y)| log_sigmoid((2.0 * y - 1.0) * f))
            .sum()
    }

    fn gradient(&self, f: ColRef<'_, f64>, y: ColRef<'_, f64>) -> Col<f64> {
        Col::from_fn(f.nrows(), |i| y[i] - sigmoid(f[i]))
    }

    fn inverse_curvature(&self, f: ColRef<'_, f64>) -> Result<InverseCurvature> {
        let d = Col::from_fn(f.nrows(), |i| 2.0 + f[i].exp() + (-f[i]).exp());
        let bad = d.iter().position(|v| !v.is_finite());
        match bad {
            Some(i) => Err(diverged(format!(
                "the logistic curvature σ(f)(1 − σ(f)) at point {i} underflowed (f = {:.4e})",
                f[i]
            ))),
            None => Ok(InverseCurvature::Diagonal(d)),
        }
    }

    fn curvature_dense(&self, f: ColRef<'_, f64>) -> Mat<f64> {
        Mat::from_fn(f.nrows(), f.nrows(), |i, j| {
            if i == j {
                let s = sigmoid(f[i]);
                s * (1.0 - s)
            } else {
                0.0
            }
        })
    }

    fn curvature_diagonal(&self, f: ColRef<'_, f64>) -> Option<Col<f64>> {
        Some(Col::from_fn(f.nrows(), |i| {
            let s = sigmoid(f[i]);
            s * (1.0 - s)
        }))
    }

    /// `∂³ log σ((2y − 1) f)/∂f³ = −σ(1 − σ)(1 − 2σ)` with `σ = σ(f)`, for either label.
    fn third_derivative(&self, f: ColRef<'_, f64>, _y: ColRef<'_, f64>) -> Option<Col<f64>> {
        Some(Col::from_fn(f.nrows(), |i| {
            let s = sigmoid(f[i]);
            -s * (1.0 - s) * (1.0 - 2.0 * s)
        }))
    }

    fn log_predictive(&self, mean: &[f64], variance: &[f64], y: f64) -> f64 {
        let kappa = (1.0 + std::f64::consts::PI * variance[0] / 8.0)
            .sqrt()
            .recip();
        log_sigmoid((2.0 * y - 1.0) * kappa * mean[0])
    }
}

/// Multi-class labels `y ∈ {0, …, C−1}` with the softmax link and `C` latent functions per
/// point: `∇ = onehot(y) − π`, `W = blockdiag(diag π_n − π_n π_nᵀ)` (rank `N(C−1)`), and its
/// pseudo-inverse `W† = blockdiag(P diag(1/π_n) P)`, `P = I − 11ᵀ/C`, applied in `O(NC)`
/// (Lemma A.7; spec §3.4). The pseudo targets use `W†`, which gives Newton's iterates only
/// when the prior covariance is shared by the classes (`K = K_x ⊗ I_C`).
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Softmax {
    classes: usize,
}

impl Softmax {
    /// Softmax over `classes ≥ 2` classes.
    ///
    /// Errors: [`ModelError::InvalidOption`] for fewer than two classes.
    pub fn new(classes: usize) -> Result<Self> {
        if classes < 2 {
            return Err(ModelError::InvalidOption {
                name: "Softmax::classes",
                reason: format!("need at least 2 classes, got {classes} (use Bernoulli for one latent function)"),
            });
        }
        Ok(Self { classes })
    }

    /// The number of classes `C`.
    pub fn classes(&self) -> usize {
        self.classes
    }

    /// Per point, `log π_n` (`N × C`, log-sum-exp stable).
    pub(crate) fn log_probabilities(&self, f: ColRef<'_, f64>) -> Mat<f64> {
        let c = self.classes;
        let n = f.nrows() / c;
        let mut out = Mat::zeros(n, c);
        for i in 0..n {
            let max = (0..c)
                .map(|k| f[i * c + k])
                .fold(f64::NEG_INFINITY, f64::max);
            let lse = max + (0..c).map(|k| (f[i * c + k] - max).exp()).sum::<f64>().ln();
            for k in 0..c {
                out[(i, k)] = f[i * c + k] - lse;
            }
        }
        out
    }
}

impl Default for Softmax {
    /// Ten classes (the paper's Gaussian mixture and MNIST).
    fn default() -> Self {
        Self { classes: 10 }
    }
}

impl LaplaceLikelihood for Softmax {
    fn latent_outputs(&self) -> usize {
        self.classes
    }

    fn check_targets(&self, y: ColRef<'_, f64>) -> Result<()> {
        check_integers(
            "softmax",
            y,
            Some(self.classes as f64 - 1.0),
            "expected a class index in 0..C",
        )
    }

    fn log_likelihood(&self, f: ColRef<'_, f64>, y: ColRef<'_, f64>) -> f64 {
        let logp = self.log_probabilities(f);
        (0..y.nrows()).map(|i| logp[(i, y[i] as usize)]).sum()
    }

    fn gradient(&self, f: ColRef<'_, f64>, y: ColRef<'_, f64>) -> Col<f64> {
        let c = self.classes;
        let logp = self.log_probabilities(f);
        Col::from_fn(f.nrows(), |j| {
            let (i, k) = (j / c, j % c);
            let onehot = if y[i] as usize == k { 1.0 } else { 0.0 };
            onehot - logp[(i, k)].exp()
        })
    }

    fn inverse_curvature(&self, f: ColRef<'_, f64>) -> Result<InverseCurvature> {
        let logp = self.log_probabilities(f);
        // 1/π = exp(−log π), with log π clamped at −700 so that an underflowed class
        // probability gives a large finite, not an infinite, entry (spec §7.11).
        let inv = Mat::from_fn(logp.nrows(), logp.ncols(), |i, k| {
            (-logp[(i, k)].max(-700.0)).exp()
        });
        if inv.col_iter().any(|col| col.iter().any(|v| !v.is_finite())) {
            return Err(diverged("a softmax probability is not finite".to_string()));
        }
        Ok(InverseCurvature::SoftmaxPseudoInverse {
            inverse_probabilities: inv,
        })
    }

    fn curvature_dense(&self, f: ColRef<'_, f64>) -> Mat<f64> {
        let c = self.classes;
        let logp = self.log_probabilities(f);
        Mat::from_fn(f.nrows(), f.nrows(), |a, b| {
            let (i, k) = (a / c, a % c);
            let (j, l) = (b / c, b % c);
            if i != j {
                return 0.0;
            }
            let (pk, pl) = (logp[(i, k)].exp(), logp[(i, l)].exp());
            if k == l {
                pk - pk * pl
            } else {
                -pk * pl
            }
        })
    }

    /// `ŷ_n = f_n + (e_{y_n} − 1/C) / π_{n,y_n}` (closed form of `f + W†∇`).
    fn pseudo_targets(&self, f: ColRef<'_, f64>, y: ColRef<'_, f64>) -> Result<Col<f64>> {
        let c = self.classes;
        let logp = self.log_probabilities(f);
        let inv_c = 1.0 / c as f64;
        let out = Col::from_fn(f.nrows(), |j| {
            let (i, k) = (j / c, j % c);
            let label = y[i] as usize;
            let e = if label == k { 1.0 } else { 0.0 };
            f[j] + (e - inv_c) * (-logp[(i, label)].max(-700.0)).exp()
        });
        if out.iter().any(|v| !v.is_finite()) {
            return Err(diverged(
                "a softmax pseudo target is not finite".to_string(),
            ));
        }
        Ok(out)
    }

    fn log_predictive(&self, mean: &[f64], variance: &[f64], y: f64) -> f64 {
        let scaled: Vec<f64> = mean
            .iter()
            .zip(variance)
            .map(|(m, v)| m / (1.0 + std::f64::consts::PI * v / 8.0).sqrt())
            .collect();
        let max = scaled.iter().copied().fold(f64::NEG_INFINITY, f64::max);
        let lse = max + scaled.iter().map(|s| (s - max).exp()).sum::<f64>().ln();
        scaled[y as usize] - lse
    }
}
