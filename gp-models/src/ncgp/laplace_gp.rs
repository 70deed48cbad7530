//! The Laplace approximation of a GP with a factorizing non-Gaussian likelihood as a
//! dense model: the mode by Newton's method in the stable `B = I + W½ K W½` form
//! (Rasmussen & Williams, Algorithm 3.1, with backtracking), the approximate log evidence
//! and its gradient with respect to the kernel's and the likelihood's log hyperparameters
//! (their Algorithm 5.1, including the implicit dependence of the mode), and the latent
//! posterior. It is the reference non-conjugate model behind [`GpModel`](crate::GpModel):
//! it trains through [`train`](crate::train()) like any other model.

use faer::linalg::triangular_inverse::invert_lower_triangular;
use faer::{Col, ColRef, Mat, MatRef};
use gp_kernels::Kernel;
use gp_linalg::Cholesky;

use super::likelihood::LaplaceLikelihood;
use crate::error::{ModelError, Result};

/// Settings of [`LaplaceGp::fit`].
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct LaplaceGpOptions {
    /// The constant prior mean `m` of the latent function (default 0; for Poisson counts
    /// `log` of the mean count starts Newton near the mode). Fixed, not a hyperparameter.
    pub prior_mean: f64,
    /// Stop when `‖f_{i+1} − f_i‖ ≤ tolerance · (1 + ‖f_{i+1} − m‖)` (default `1e-10`: the
    /// evidence's gradient assumes the mode, so it is found to near rounding; Newton
    /// converges quadratically, so this costs a step or two over a loose tolerance).
    pub tolerance: f64,
    /// Most Newton steps (default 100).
    pub max_steps: usize,
    /// Most halvings of a Newton step that does not increase the log posterior (default 30).
    pub max_halvings: usize,
}

impl Default for LaplaceGpOptions {
    fn default() -> Self {
        Self {
            prior_mean: 0.0,
            tolerance: 1e-10,
            max_steps: 100,
            max_halvings: 30,
        }
    }
}

/// A GP with a factorizing likelihood (Gaussian, [`Poisson`](super::Poisson),
/// [`Bernoulli`](super::Bernoulli)) under the Laplace approximation, computed densely
/// (`O(n³)` per fit, `n²` memory): the reference for IterNCGP's Newton steps, and a
/// [`GpModel`](crate::GpModel) whose approximate log marginal likelihood `log q(y | X, θ)`
/// trains the kernel's (and the likelihood's) hyperparameters with L-BFGS.
///
/// ```
/// use gp_kernels::SquaredExponential;
/// use gp_models::faer::{Col, Mat};
/// use gp_models::ncgp::{Bernoulli, LaplaceGp, LaplaceGpOptions};
/// use gp_models::prelude::*;
///
/// let x = Mat::from_fn(30, 1, |i, _| i as f64 / 5.0);
/// let y = Col::from_fn(30, |i| if (i / 8) % 2 == 0 { 0.0 } else { 1.0 });
/// let kernel = SquaredExponential::new(vec![1.0], 2.0)?;
/// let gp = LaplaceGp::fit(kernel, x.as_ref(), y.as_ref(), Bernoulli,
///                         &LaplaceGpOptions::default())?;
/// let est = gp.lml(&LmlRequest::with_gradient())?;
/// assert!(est.lml < 0.0 && est.grad.len() == 2);
/// let trained = train(&gp, &TrainOptions::default())?.model;
/// assert!(trained.lml(&LmlRequest::value())?.lml >= est.lml);
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// ```
#[derive(Debug, Clone)]
pub struct LaplaceGp<K, L> {
    pub(crate) kernel: K,
    pub(crate) likelihood: L,
    pub(crate) options: LaplaceGpOptions,
    pub(crate) x: Mat<f64>,
    pub(crate) y: Col<f64>,
    /// The prior covariance `K` (`n × n`).
    pub(crate) k: Mat<f64>,
    /// The mode `f̂ = m + K a`.
    pub(crate) mode: Col<f64>,
    /// `a = K⁻¹(f̂ − m)`, equal to `∇ log p(y | f̂)` at the mode.
    pub(crate) a: Col<f64>,
    /// `W(f̂)½`.
    pub(crate) w_sqrt: Col<f64>,
    /// The Cholesky factor of `B = I + W½ K W½` at the mode.
    pub(crate) chol: Cholesky,
    pub(crate) newton_steps: usize,
}

/// `B = I + W½ K W½` and its Cholesky factor.
fn factor_b(k: MatRef<'_, f64>, w_sqrt: ColRef<'_, f64>) -> Result<Cholesky> {
    let n = k.nrows();
    let b = Mat::from_fn(n, n, |i, j| {
        let e = w_sqrt[i] * k[(i, j)] * w_sqrt[j];
        if i == j {
            1.0 + e
        } else {
            e
        }
    });
    Ok(Cholesky::new(b.as_ref())?)
}

/// `W(f)½`, checked finite and non-negative (the likelihood must be log-concave at `f`).
fn curvature_sqrt<L: LaplaceLikelihood>(likelihood: &L, f: ColRef<'_, f64>) -> Result<Col<f64>> {
    let w = likelihood
        .curvature_diagonal(f)
        .ok_or_else(|| unsupported_likelihood(likelihood))?;
    if let Some(i) = w.iter().position(|w| !(w.is_finite() && *w >= 0.0)) {
        return Err(ModelError::NewtonDiverged {
            step: 0,
            reason: format!(
                "the {} curvature at point {i} is {} (f = {:.4e})",
                likelihood.name(),
                w[i],
                f[i]
            ),
        });
    }
    Ok(Col::from_fn(w.nrows(), |i| w[i].sqrt()))
}

fn unsupported_likelihood<L: LaplaceLikelihood>(likelihood: &L) -> ModelError {
    ModelError::InvalidOption {
        name: "LaplaceGp likelihood",
        reason: format!(
            "the {} likelihood does not factorize over one latent value per point (its W couples \
             the outputs); LaplaceGp takes Gaussian, Poisson or Bernoulli — use SoftmaxLaplaceGp \
             (or DenseLaplace, iterncgp) for softmax",
            likelihood.name()
        ),
    }
}

/// `Ψ = log p(y | f) − ½ aᵀ(f − m)`, `−∞` when the likelihood is not finite.
fn log_posterior<L: LaplaceLikelihood>(
    likelihood: &L,
    y: ColRef<'_, f64>,
    f: ColRef<'_, f64>,
    a: ColRef<'_, f64>,
    prior_mean: f64,
) -> f64 {
    let quad: f64 = a
        .iter()
        .zip(f.iter())
        .map(|(a, f)| a * (f - prior_mean))
        .sum();
    let psi = likelihood.log_likelihood(f, y) - 0.5 * quad;
    if psi.is_nan() {
        f64::NEG_INFINITY
    } else {
        psi
    }
}

impl<K: Kernel + Clone, L: LaplaceLikelihood> LaplaceGp<K, L> {
    /// Finds the Laplace mode of the GP with `kernel` and the constant prior mean of
    /// `options` for the targets `y` at the rows of `x` (`n × d`).
    ///
    /// Errors: empty or non-finite data, a length or kernel-dimension mismatch, targets the
    /// likelihood refuses ([`ModelError::InvalidTarget`]), a likelihood that does not
    /// factorize (softmax), invalid options, a mode not found within the step budget
    /// ([`ModelError::ModeNotFound`]).
    pub fn fit(
        kernel: K,
        x: MatRef<'_, f64>,
        y: ColRef<'_, f64>,
        likelihood: L,
        options: &LaplaceGpOptions,
    ) -> Result<Self> {
        crate::validate::check_training_inputs(&kernel, x, y.nrows(), "fitting a LaplaceGp")?;
        // An empty probe: whether the likelihood factorizes, without evaluating it.
        if likelihood.latent_outputs() != 1
            || likelihood
                .curvature_diagonal(Col::zeros(0).as_ref())
                .is_none()
        {
            return Err(unsupported_likelihood(&likelihood));
        }
        likelihood.check_targets(y)?;
        check_options(options)?;
        let k = kernel.matrix(x, x)?;
        Self::find_mode(kernel, likelihood, *options, x.to_owned(), y.to_owned(), k)
    }

    /// Newton's method for the mode from `f = m` (R&W Algorithm 3.1), with halving of steps
    /// that do not increase `Ψ`.
    fn find_mode(
        kernel: K,
        likelihood: L,
        options: LaplaceGpOptions,
        x: Mat<f64>,
        y: Col<f64>,
        k: Mat<f64>,
    ) -> Result<Self> {
        let n = y.nrows();
        let m = options.prior_mean;
        let mut a = Col::<f64>::zeros(n);
        let mut f = Col::from_fn(n, |_| m);
        let mut psi = log_posterior(&likelihood, y.as_ref(), f.as_ref(), a.as_ref(), m);
        let mut change = f64::INFINITY;
        let mut steps = 0;
        while steps < options.max_steps {
            let w_sqrt = curvature_sqrt(&likelihood, f.as_ref()).map_err(|e| at_step(e, steps))?;
            let chol = factor_b(k.as_ref(), w_sqrt.as_ref())?;
            // b = W (f − m) + ∇;  a⁺ = b − W½ B⁻¹ W½ K b.
            let grad = likelihood.gradient(f.as_ref(), y.as_ref());
            let b = Col::from_fn(n, |i| w_sqrt[i].powi(2) * (f[i] - m) + grad[i]);
            let kb = &k * &b;
            let inner = chol.solve_col(Col::from_fn(n, |i| w_sqrt[i] * kb[i]).as_ref())?;
            let a_full = Col::from_fn(n, |i| b[i] - w_sqrt[i] * inner[i]);
            let (a_new, f_new, psi_new) =
                backtrack(&likelihood, &y, &k, (&a, &f, psi), a_full, m, options);
            steps += 1;
            let g_norm = f_new.iter().map(|v| (v - m).powi(2)).sum::<f64>().sqrt();
            change = (&f_new - &f).norm_l2() / (1.0 + g_norm);
            a = a_new;
            f = f_new;
            psi = psi_new;
            if change <= options.tolerance {
                let w_sqrt = curvature_sqrt(&likelihood, f.as_ref())?;
                let chol = factor_b(k.as_ref(), w_sqrt.as_ref())?;
                return Ok(Self {
                    kernel,
                    likelihood,
                    options,
                    x,
                    y,
                    k,
                    mode: f,
                    a,
                    w_sqrt,
                    chol,
                    newton_steps: steps,
                });
            }
        }
        Err(ModelError::ModeNotFound {
            steps,
            change,
            tolerance: options.tolerance,
        })
    }

    /// The mode `f̂` of the latent posterior at the training points.
    pub fn mode(&self) -> ColRef<'_, f64> {
        self.mode.as_ref()
    }

    /// Newton steps the mode search took.
    pub fn newton_steps(&self) -> usize {
        self.newton_steps
    }

    /// The settings of the fit.
    pub fn options(&self) -> &LaplaceGpOptions {
        &self.options
    }

    /// The kernel.
    pub fn kernel(&self) -> &K {
        &self.kernel
    }

    /// The training points (`n × d`).
    pub fn train_x(&self) -> MatRef<'_, f64> {
        self.x.as_ref()
    }

    /// The approximate log marginal likelihood
    /// `log q(y | X, θ) = −½ aᵀ(f̂ − m) + log p(y | f̂) − ½ log det B`.
    pub fn log_evidence(&self) -> f64 {
        log_posterior(
            &self.likelihood,
            self.y.as_ref(),
            self.mode.as_ref(),
            self.a.as_ref(),
            self.options.prior_mean,
        ) - 0.5 * self.chol.log_det()
    }

    /// `log q(y | X, θ)` and its gradient with respect to the kernel's log hyperparameters,
    /// then the likelihood's (R&W Algorithm 5.1): the explicit terms plus the implicit
    /// term through the mode, `½ diag(Σ) ∘ ∇³ log p` against `∂f̂/∂θ`, with
    /// `Σ = (K⁻¹ + W)⁻¹`. `O(n³)` for `B⁻¹`, then `O(n²)` per hyperparameter.
    ///
    /// Errors: a kernel whose derivative matrices cannot be formed.
    pub fn log_evidence_and_grad(&self) -> Result<(f64, Vec<f64>)> {
        let n = self.y.nrows();
        let (_, dks) = self.kernel.matrix_and_grads(self.x.as_ref())?;
        // M = L⁻¹ W½, R = Mᵀ M = W½ B⁻¹ W½, C = M K.
        let mut l_inv = Mat::<f64>::zeros(n, n);
        invert_lower_triangular(l_inv.as_mut(), self.chol.factor(), faer::Par::Seq);
        let mm = Mat::from_fn(n, n, |i, j| l_inv[(i, j)] * self.w_sqrt[j]);
        let r = mm.transpose() * &mm;
        let c = &mm * &self.k;
        let diag_sigma = Col::from_fn(n, |i| {
            self.k[(i, i)] - (0..n).map(|p| c[(p, i)].powi(2)).sum::<f64>()
        });
        let third = self
            .likelihood
            .third_derivative(self.mode.as_ref(), self.y.as_ref())
            .ok_or_else(|| unsupported_likelihood(&self.likelihood))?;
        // ∂ log q / ∂f̂ = −½ diag(Σ) ∘ ∂W/∂f̂ = ½ diag(Σ) ∘ ∇³ log p, since W = −∇∇ log p
        // (the sign is pinned by the finite-difference tests; −½ fails them).
        let s2 = Col::from_fn(n, |i| 0.5 * diag_sigma[i] * third[i]);
        let grad_lik = self
            .likelihood
            .gradient(self.mode.as_ref(), self.y.as_ref());
        // (I + K W)⁻¹ u = u − K R u: how the mode moves when the data term moves by K⁻¹u.
        let through_mode = |u: &Col<f64>| -> f64 {
            let ru = &r * u;
            let moved = u - &self.k * &ru;
            s2.transpose() * &moved
        };
        let mut grad = Vec::with_capacity(dks.len() + self.likelihood.n_params());
        for dk in &dks {
            let dka = dk * &self.a;
            let quad = self.a.transpose() * &dka;
            let trace: f64 = (0..n)
                .map(|j| (0..n).map(|i| r[(i, j)] * dk[(i, j)]).sum::<f64>())
                .sum();
            let explicit = 0.5 * quad - 0.5 * trace;
            grad.push(explicit + through_mode(&(dk * &grad_lik)));
        }
        for d in self
            .likelihood
            .log_param_derivatives(self.mode.as_ref(), self.y.as_ref())
        {
            let explicit = d.log_likelihood
                - 0.5 * (0..n).map(|i| diag_sigma[i] * d.curvature[i]).sum::<f64>();
            grad.push(explicit + through_mode(&(&self.k * &d.gradient)));
        }
        Ok((self.log_evidence(), grad))
    }

    /// The latent posterior at the rows of `x_test`: mean `m + K⋄ᵀ a` and, if asked,
    /// variances `k⋄⋄ − ‖L⁻¹ W½ k⋄‖²` (blocks of 1024 test points).
    ///
    /// Errors: a test matrix with the wrong number of columns or non-finite entries.
    pub fn latent_marginals(
        &self,
        x_test: MatRef<'_, f64>,
        want_variance: bool,
    ) -> Result<(Col<f64>, Option<Col<f64>>)> {
        crate::validate::check_test_points(x_test, self.x.ncols())?;
        let b = x_test.nrows();
        let mut mean = Col::<f64>::zeros(b);
        let mut variance = want_variance.then(|| Col::<f64>::zeros(b));
        const BLOCK: usize = 1024;
        for start in (0..b).step_by(BLOCK) {
            let rows = x_test.subrows(start, BLOCK.min(b - start));
            let cross = self.kernel.matrix(self.x.as_ref(), rows)?;
            let mu = cross.transpose() * &self.a;
            if let Some(var) = variance.as_mut() {
                let v = self.whitened(cross.as_ref())?;
                let prior = self.kernel.diag(rows)?;
                for j in 0..rows.nrows() {
                    var[start + j] = (prior[j] - v.col(j).squared_norm_l2()).max(0.0);
                }
            }
            for j in 0..rows.nrows() {
                mean[start + j] = self.options.prior_mean + mu[j];
            }
        }
        Ok((mean, variance))
    }

    /// The latent posterior covariance `K⋄⋄ − VᵀV`, `V = L⁻¹ W½ K⋄`, at the rows of `x_test`.
    ///
    /// Errors: as [`latent_marginals`](Self::latent_marginals).
    pub fn latent_covariance(&self, x_test: MatRef<'_, f64>) -> Result<Mat<f64>> {
        crate::validate::check_test_points(x_test, self.x.ncols())?;
        let cross = self.kernel.matrix(self.x.as_ref(), x_test)?;
        let v = self.whitened(cross.as_ref())?;
        let prior = self.kernel.matrix(x_test, x_test)?;
        Ok(prior - v.transpose() * &v)
    }

    /// `L⁻¹ W½ K⋄` for a cross-covariance `K⋄` (`n × b`).
    fn whitened(&self, cross: MatRef<'_, f64>) -> Result<Mat<f64>> {
        let scaled = Mat::from_fn(cross.nrows(), cross.ncols(), |i, j| {
            self.w_sqrt[i] * cross[(i, j)]
        });
        Ok(self.chol.solve_lower(scaled.as_ref())?)
    }

    /// The same data and options with a new kernel and likelihood: the mode found again.
    ///
    /// Errors: as [`fit`](Self::fit).
    pub fn refit(&self, kernel: K, likelihood: L) -> Result<Self> {
        Self::fit(
            kernel,
            self.x.as_ref(),
            self.y.as_ref(),
            likelihood,
            &self.options,
        )
    }
}

/// Backtracking along `a + t (a⁺ − a)` (`f = m + K a` moves linearly): the largest
/// `t = 2⁻ʲ` that does not decrease `Ψ`, or the last one tried.
fn backtrack<L: LaplaceLikelihood>(
    likelihood: &L,
    y: &Col<f64>,
    k: &Mat<f64>,
    (a, f, psi): (&Col<f64>, &Col<f64>, f64),
    a_full: Col<f64>,
    m: f64,
    options: LaplaceGpOptions,
) -> (Col<f64>, Col<f64>, f64) {
    let f_full = Col::from_fn(a_full.nrows(), |_| m) + k * &a_full;
    let mut t = 1.0;
    let mut halvings = 0;
    loop {
        let a_t = a + (&a_full - a) * t;
        let f_t = f + (&f_full - f) * t;
        let psi_t = log_posterior(likelihood, y.as_ref(), f_t.as_ref(), a_t.as_ref(), m);
        // Accept a step that does not decrease Ψ (up to rounding), or the last one tried.
        if psi_t >= psi - 1e-12 * psi.abs() || halvings == options.max_halvings {
            return (a_t, f_t, psi_t);
        }
        t *= 0.5;
        halvings += 1;
    }
}

fn at_step(e: ModelError, step: usize) -> ModelError {
    match e {
        ModelError::NewtonDiverged { reason, .. } => ModelError::NewtonDiverged { step, reason },
        other => other,
    }
}

fn check_options(options: &LaplaceGpOptions) -> Result<()> {
    if !options.prior_mean.is_finite() {
        return Err(ModelError::InvalidOption {
            name: "LaplaceGpOptions::prior_mean",
            reason: format!("must be finite, got {}", options.prior_mean),
        });
    }
    if !(options.tolerance.is_finite() && options.tolerance > 0.0) {
        return Err(ModelError::InvalidOption {
            name: "LaplaceGpOptions::tolerance",
            reason: format!("must be finite and > 0, got {}", options.tolerance),
        });
    }
    if options.max_steps == 0 {
        return Err(ModelError::InvalidOption {
            name: "LaplaceGpOptions::max_steps",
            reason: "must be at least 1".into(),
        });
    }
    Ok(())
}
