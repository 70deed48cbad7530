//! Multi-class GP classification under the Laplace approximation as a dense model: `C`
//! latent functions with one shared kernel (the prior `K_x ⊗ I_C` of the paper's softmax
//! experiments), the mode by Newton's method in Rasmussen & Williams' Algorithm 3.3 (with
//! backtracking), the approximate log evidence and its gradient with respect to the kernel's
//! log hyperparameters (their §5.5.2: the explicit terms and the implicit dependence of the
//! mode), and the latent posterior at test points (their Algorithm 3.4). It is the
//! multi-class counterpart of [`LaplaceGp`](super::LaplaceGp): a
//! [`GpModel`](crate::GpModel) that trains through [`train`](crate::train()).
//!
//! Notation (latents per class, `n` points): `π` the softmax probabilities at `f`, `D_c =
//! diag(π_c)`, `W = D − ΠΠᵀ` the negative Hessian of `log p(y | f)`, `B_c = I + D_c½ K D_c½`,
//! `E_c = D_c½ B_c⁻¹ D_c½ = (D_c⁻¹ + K)⁻¹` and `M Mᵀ = Σ_c E_c`. Because `Σ_c D_c = I`,
//!
//! ```text
//! det(I + K̄W) = Π_c det B_c · det(Σ_c E_c),   (K̄ + W⁻¹)⁻¹ = E − E R (Σ_c E_c)⁻¹ Rᵀ E
//! ```
//!
//! (`K̄ = I_C ⊗ K`, `E = blockdiag(E_c)`, `R` stacks `C` identities), so every step costs
//! `O(C n³)`, not `O(C³ n³)`.

use faer::linalg::triangular_inverse::invert_lower_triangular;
use faer::{Col, ColRef, Mat, MatRef, Par};
use gp_kernels::Kernel;
use gp_linalg::Cholesky;

use super::likelihood::{LaplaceLikelihood, Softmax};
use crate::error::{ModelError, Result};

/// Settings of [`SoftmaxLaplaceGp::fit`].
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct SoftmaxGpOptions {
    /// Stop when `‖f_{i+1} − f_i‖ ≤ tolerance · (1 + ‖f_{i+1}‖)` over all `n·C` latents
    /// (default `1e-10`: the evidence's gradient assumes the mode).
    pub tolerance: f64,
    /// Most Newton steps (default 100).
    pub max_steps: usize,
    /// Most halvings of a Newton step that does not increase the log posterior (default 30).
    pub max_halvings: usize,
}

impl Default for SoftmaxGpOptions {
    fn default() -> Self {
        Self {
            tolerance: 1e-10,
            max_steps: 100,
            max_halvings: 30,
        }
    }
}

/// The factors of the Newton system at one `f` (R&W Algorithm 3.3, lines 4–9).
#[derive(Debug, Clone)]
pub(crate) struct SoftmaxFactors {
    /// `π` (`n × C`).
    pub(crate) pi: Mat<f64>,
    /// `D_c½ = sqrt(π_c)` (`n × C`).
    pub(crate) d_sqrt: Mat<f64>,
    /// Cholesky factors of `B_c = I + D_c½ K D_c½`.
    pub(crate) b: Vec<Cholesky>,
    /// Cholesky factor of `Σ_c E_c`.
    pub(crate) m: Cholesky,
}

impl SoftmaxFactors {
    /// Factors at the logits `f` (`n × C`) for the prior covariance `k`.
    fn new(k: MatRef<'_, f64>, f: MatRef<'_, f64>) -> Result<Self> {
        let (n, c) = f.shape();
        let pi = softmax_rows(f);
        let d_sqrt = Mat::from_fn(n, c, |i, j| pi[(i, j)].sqrt());
        let mut b = Vec::with_capacity(c);
        let mut e_sum = Mat::<f64>::zeros(n, n);
        for class in 0..c {
            let d = d_sqrt.col(class);
            let bc = Mat::from_fn(n, n, |i, j| {
                let e = d[i] * k[(i, j)] * d[j];
                if i == j {
                    1.0 + e
                } else {
                    e
                }
            });
            let chol = Cholesky::new(bc.as_ref())?;
            e_sum += e_from(&chol, d)?;
            b.push(chol);
        }
        let m = Cholesky::new(e_sum.as_ref())?;
        Ok(Self { pi, d_sqrt, b, m })
    }

    /// `E_c v = D_c½ B_c⁻¹ D_c½ v`.
    fn apply_e(&self, class: usize, v: ColRef<'_, f64>) -> Result<Col<f64>> {
        let d = self.d_sqrt.col(class);
        let inner = self.b[class].solve_col(Col::from_fn(v.nrows(), |i| d[i] * v[i]).as_ref())?;
        Ok(Col::from_fn(v.nrows(), |i| d[i] * inner[i]))
    }

    /// `E_c` whole (`n × n`).
    fn e_matrix(&self, class: usize) -> Result<Mat<f64>> {
        e_from(&self.b[class], self.d_sqrt.col(class))
    }

    /// `½ log det(I + K̄W) = ½ Σ_c log det B_c + ½ log det Σ_c E_c`.
    fn half_log_det(&self) -> f64 {
        0.5 * (self.b.iter().map(Cholesky::log_det).sum::<f64>() + self.m.log_det())
    }
}

/// `E_c = XᵀX` with `X = L_c⁻¹ D_c½`, from the factor `L_c` of `B_c` and `D_c½`.
fn e_from(b_chol: &Cholesky, d_sqrt: ColRef<'_, f64>) -> Result<Mat<f64>> {
    let n = d_sqrt.nrows();
    let x = b_chol
        .solve_lower(Mat::from_fn(n, n, |i, j| if i == j { d_sqrt[i] } else { 0.0 }).as_ref())?;
    Ok(x.transpose() * &x)
}

/// Row-wise softmax of `f` (`n × C`), by log-sum-exp.
fn softmax_rows(f: MatRef<'_, f64>) -> Mat<f64> {
    let (n, c) = f.shape();
    let mut out = Mat::<f64>::zeros(n, c);
    for i in 0..n {
        let max = (0..c).map(|k| f[(i, k)]).fold(f64::NEG_INFINITY, f64::max);
        let sum: f64 = (0..c).map(|k| (f[(i, k)] - max).exp()).sum();
        for k in 0..c {
            out[(i, k)] = (f[(i, k)] - max).exp() / sum;
        }
    }
    out
}

/// `log p(y | f) = Σ_i (f_{i, y_i} − log Σ_c exp f_{ic})` for one-hot targets `t` (`n × C`).
fn log_likelihood(f: MatRef<'_, f64>, t: MatRef<'_, f64>) -> f64 {
    let (n, c) = f.shape();
    (0..n)
        .map(|i| {
            let max = (0..c).map(|k| f[(i, k)]).fold(f64::NEG_INFINITY, f64::max);
            let lse = max + (0..c).map(|k| (f[(i, k)] - max).exp()).sum::<f64>().ln();
            (0..c).map(|k| t[(i, k)] * f[(i, k)]).sum::<f64>() - lse
        })
        .sum()
}

/// `Ψ = log p(y | f) − ½ Σ_c a_cᵀ f_c`, `−∞` when not finite.
fn log_posterior(f: MatRef<'_, f64>, a: MatRef<'_, f64>, t: MatRef<'_, f64>) -> f64 {
    let quad: f64 = (0..f.ncols())
        .map(|c| a.col(c).transpose() * f.col(c))
        .sum();
    let psi = log_likelihood(f, t) - 0.5 * quad;
    if psi.is_nan() {
        f64::NEG_INFINITY
    } else {
        psi
    }
}

/// Multi-class GP classification (softmax likelihood, `C` latent functions with one shared
/// kernel) under the Laplace approximation, computed densely (`O(C n³)` per Newton step,
/// `C n²` memory): the softmax counterpart of [`LaplaceGp`](super::LaplaceGp) and a
/// [`GpModel`](crate::GpModel) whose approximate log marginal likelihood `log q(y | X, θ)`
/// trains the kernel's hyperparameters with L-BFGS.
///
/// Targets are class labels `0, …, C − 1` stored as `f64`. Latents are laid out point by
/// point as in [`Softmax`]: entry `i·C + c` is `f_c(x_i)`, also in the
/// [`GpModel::predict_latent`](crate::GpModel::predict_latent) output (`b·C` means and
/// variances for `b` test points). Class probabilities: [`predict_proba`](Self::predict_proba).
///
/// ```
/// use gp_kernels::SquaredExponential;
/// use gp_models::faer::{Col, Mat};
/// use gp_models::ncgp::{Softmax, SoftmaxGpOptions, SoftmaxLaplaceGp};
/// use gp_models::prelude::*;
///
/// // Three classes along a line.
/// let x = Mat::from_fn(30, 1, |i, _| i as f64 / 5.0);
/// let y = Col::from_fn(30, |i| (i / 10) as f64);
/// let kernel = SquaredExponential::new(vec![1.0], 2.0)?;
/// let gp = SoftmaxLaplaceGp::fit(kernel, x.as_ref(), y.as_ref(), Softmax::new(3)?,
///                                &SoftmaxGpOptions::default())?;
/// let p = gp.predict_proba(Mat::from_fn(1, 1, |_, _| 0.5).as_ref())?;
/// assert!(p[(0, 0)] > p[(0, 1)] && p[(0, 0)] > p[(0, 2)]);
/// let before = gp.lml(&LmlRequest::value())?.lml;
/// let trained = train(&gp, &TrainOptions::default())?.model;
/// assert!(trained.lml(&LmlRequest::value())?.lml >= before);
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// ```
#[derive(Debug, Clone)]
pub struct SoftmaxLaplaceGp<K> {
    pub(crate) kernel: K,
    pub(crate) likelihood: Softmax,
    pub(crate) options: SoftmaxGpOptions,
    pub(crate) x: Mat<f64>,
    pub(crate) y: Col<f64>,
    /// One-hot targets (`n × C`).
    pub(crate) targets: Mat<f64>,
    /// The prior covariance `K` (`n × n`), shared by the classes.
    pub(crate) k: Mat<f64>,
    /// The mode `f̂` (`n × C`, column `c` is `f̂_c = K a_c`).
    pub(crate) mode: Mat<f64>,
    /// `a_c = K⁻¹ f̂_c`, equal to `y_c − π_c` at the mode.
    pub(crate) a: Mat<f64>,
    pub(crate) factors: SoftmaxFactors,
    pub(crate) newton_steps: usize,
}

impl<K: Kernel + Clone> SoftmaxLaplaceGp<K> {
    /// Finds the Laplace mode of `C = likelihood.classes()` latent GPs with the shared
    /// `kernel` (zero prior mean) for the labels `y` at the rows of `x` (`n × d`).
    ///
    /// Errors: empty or non-finite data, a length or kernel-dimension mismatch, labels
    /// outside `0, …, C − 1` ([`ModelError::InvalidTarget`]), invalid options, a mode not
    /// found within the step budget ([`ModelError::ModeNotFound`]).
    pub fn fit(
        kernel: K,
        x: MatRef<'_, f64>,
        y: ColRef<'_, f64>,
        likelihood: Softmax,
        options: &SoftmaxGpOptions,
    ) -> Result<Self> {
        crate::validate::check_training_inputs(
            &kernel,
            x,
            y.nrows(),
            "fitting a SoftmaxLaplaceGp",
        )?;
        likelihood.check_targets(y)?;
        check_options(options)?;
        let k = kernel.matrix(x, x)?;
        Self::find_mode(kernel, likelihood, *options, x.to_owned(), y.to_owned(), k)
    }

    /// Newton's method from `f = 0` (R&W Algorithm 3.3), halving steps that do not
    /// increase `Ψ`.
    fn find_mode(
        kernel: K,
        likelihood: Softmax,
        options: SoftmaxGpOptions,
        x: Mat<f64>,
        y: Col<f64>,
        k: Mat<f64>,
    ) -> Result<Self> {
        let n = y.nrows();
        let c = likelihood.classes();
        // Labels are checked integers in 0..C.
        let targets = Mat::from_fn(n, c, |i, j| if y[i] as usize == j { 1.0 } else { 0.0 });
        let mut a = Mat::<f64>::zeros(n, c);
        let mut f = Mat::<f64>::zeros(n, c);
        let mut psi = log_posterior(f.as_ref(), a.as_ref(), targets.as_ref());
        let mut change = f64::INFINITY;
        let mut steps = 0;
        while steps < options.max_steps {
            let factors = SoftmaxFactors::new(k.as_ref(), f.as_ref())?;
            let a_full = newton_target(k.as_ref(), f.as_ref(), targets.as_ref(), &factors)?;
            let f_full = &k * &a_full;
            let (a_new, f_new, psi_new) =
                backtrack(targets.as_ref(), (&a, &f, psi), (a_full, f_full), options);
            steps += 1;
            change = (&f_new - &f).norm_l2() / (1.0 + f_new.norm_l2());
            a = a_new;
            f = f_new;
            psi = psi_new;
            if change <= options.tolerance {
                let factors = SoftmaxFactors::new(k.as_ref(), f.as_ref())?;
                return Ok(Self {
                    kernel,
                    likelihood,
                    options,
                    x,
                    y,
                    targets,
                    k,
                    mode: f,
                    a,
                    factors,
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

    /// The mode `f̂` (`n × C`: column `c` is class `c`'s latent function at the training
    /// points).
    pub fn mode(&self) -> MatRef<'_, f64> {
        self.mode.as_ref()
    }

    /// Newton steps the mode search took.
    pub fn newton_steps(&self) -> usize {
        self.newton_steps
    }

    /// The settings of the fit.
    pub fn options(&self) -> &SoftmaxGpOptions {
        &self.options
    }

    /// The kernel (shared by the classes).
    pub fn kernel(&self) -> &K {
        &self.kernel
    }

    /// The number of classes `C`.
    pub fn classes(&self) -> usize {
        self.likelihood.classes()
    }

    /// The training points (`n × d`).
    pub fn train_x(&self) -> MatRef<'_, f64> {
        self.x.as_ref()
    }

    /// The approximate log marginal likelihood
    /// `log q(y | X, θ) = −½ Σ_c a_cᵀ f̂_c + log p(y | f̂) − ½ log det(I + K̄W)`.
    pub fn log_evidence(&self) -> f64 {
        log_posterior(self.mode.as_ref(), self.a.as_ref(), self.targets.as_ref())
            - self.factors.half_log_det()
    }

    /// `½ Σ_c a_cᵀ f̂_c` and `log det(I + K̄W)` (the two parts of the evidence besides the
    /// likelihood).
    pub(crate) fn evidence_parts(&self) -> (f64, f64) {
        let quad: f64 = (0..self.classes())
            .map(|c| self.a.col(c).transpose() * self.mode.col(c))
            .sum();
        (quad, 2.0 * self.factors.half_log_det())
    }

    /// `log q(y | X, θ)` and its gradient with respect to the kernel's log hyperparameters:
    ///
    /// ```text
    /// ∂ log q/∂θ = ½ Σ_c a_cᵀ ∂K a_c − ½ tr(Σ_c R_cc ∂K) + sᵀ (I − K̄R) ∂K̄ a
    /// ```
    ///
    /// with `R = (K̄ + W⁻¹)⁻¹` (its blocks `R_cc' = δ_cc' E_c − E_c (Σ E)⁻¹ E_c'`), and
    /// `s = ∂ log q/∂f̂ = −½ ∂ log det(I + K̄W)/∂f̂`, which at point `i` needs only the
    /// `C × C` block `S_i` of `Σ = (K̄⁻¹ + W)⁻¹` and `∂W_i/∂f_ic = diag(e) − eπ_iᵀ − π_i eᵀ`,
    /// `e_a = π_ia (δ_ac − π_ic)`: `s_ic = −½ (Σ_a S_i,aa e_a − 2 eᵀ S_i π_i)`. The last
    /// term is how the mode moves, `∂f̂/∂θ = (I + K̄W)⁻¹ ∂K̄ a`. `O(C n³)` once, then
    /// `O(C n²)` per hyperparameter.
    ///
    /// Errors: a kernel whose derivative matrices cannot be formed.
    pub fn log_evidence_and_grad(&self) -> Result<(f64, Vec<f64>)> {
        let (n, c) = self.mode.shape();
        let (_, dks) = self.kernel.matrix_and_grads(self.x.as_ref())?;
        let fac = &self.factors;
        let e: Vec<Mat<f64>> = (0..c).map(|cl| fac.e_matrix(cl)).collect::<Result<_>>()?;
        // P = (Σ E)⁻¹ and G_c = K E_c M⁻ᵀ (so that K E_c P E_c' K = G_c G_c'ᵀ).
        let mut m_inv = Mat::<f64>::zeros(n, n);
        invert_lower_triangular(m_inv.as_mut(), fac.m.factor(), Par::Seq);
        let p = m_inv.transpose() * &m_inv;
        let h: Vec<Mat<f64>> = e.iter().map(|ec| &self.k * ec).collect();
        let g: Vec<Mat<f64>> = h.iter().map(|hc| hc * m_inv.transpose()).collect();
        // Σ_c R_cc = Σ_c (E_c − E_c P E_c).
        let mut r_sum = Mat::<f64>::zeros(n, n);
        for ec in &e {
            r_sum += ec - ec * &p * ec;
        }
        // s (n × C) from the C × C blocks S_i of Σ = K̄ − K̄ R K̄.
        let pi = &fac.pi;
        let mut s = Mat::<f64>::zeros(n, c);
        let mut block = Mat::<f64>::zeros(c, c);
        for i in 0..n {
            for a in 0..c {
                for b in 0..c {
                    let low_rank: f64 = (0..n).map(|q| g[a][(i, q)] * g[b][(i, q)]).sum();
                    let diag = if a == b {
                        self.k[(i, i)] - (0..n).map(|q| h[a][(i, q)] * self.k[(q, i)]).sum::<f64>()
                    } else {
                        0.0
                    };
                    block[(a, b)] = diag + low_rank;
                }
            }
            let s_pi = &block * Col::from_fn(c, |b| pi[(i, b)]);
            for cl in 0..c {
                let e_vec = Col::from_fn(c, |a| {
                    pi[(i, a)] * (if a == cl { 1.0 } else { 0.0 } - pi[(i, cl)])
                });
                let diag_term: f64 = (0..c).map(|a| block[(a, a)] * e_vec[a]).sum();
                let cross = e_vec.transpose() * &s_pi;
                s[(i, cl)] = -0.5 * (diag_term - 2.0 * cross);
            }
        }
        let mut grad = Vec::with_capacity(dks.len());
        for dk in &dks {
            // v_c = ∂K a_c; (R v)_c = E_c v_c − E_c P Σ_c' E_c' v_c'; u_c = v_c − K (R v)_c.
            let v: Vec<Col<f64>> = (0..c).map(|cl| dk * self.a.col(cl)).collect();
            let q: Vec<Col<f64>> = (0..c).map(|cl| &e[cl] * &v[cl]).collect();
            let mut q_sum = Col::<f64>::zeros(n);
            for qc in &q {
                q_sum += qc;
            }
            let t = &p * &q_sum;
            let mut quad = 0.0;
            let mut through_mode = 0.0;
            for cl in 0..c {
                quad += self.a.col(cl).transpose() * &v[cl];
                let rv = &q[cl] - &e[cl] * &t;
                let u = &v[cl] - &self.k * &rv;
                through_mode += s.col(cl).transpose() * &u;
            }
            let trace: f64 = (0..n)
                .map(|j| (0..n).map(|i| r_sum[(i, j)] * dk[(i, j)]).sum::<f64>())
                .sum();
            grad.push(0.5 * quad - 0.5 * trace + through_mode);
        }
        Ok((self.log_evidence(), grad))
    }

    /// The latent posterior at the rows of `x_test` (`b × d`, R&W Algorithm 3.4): means
    /// `k⋄ᵀ a_c` and, if asked, the marginal variances `k⋄⋄ − k⋄ᵀE_c k⋄ + (E_c k⋄)ᵀ(ΣE)⁻¹E_c k⋄`,
    /// each `b × C`.
    ///
    /// Errors: a test matrix with the wrong number of columns or non-finite entries.
    pub fn latent_marginals(
        &self,
        x_test: MatRef<'_, f64>,
        want_variance: bool,
    ) -> Result<(Mat<f64>, Option<Mat<f64>>)> {
        crate::validate::check_test_points(x_test, self.x.ncols())?;
        let b = x_test.nrows();
        let c = self.classes();
        let cross = self.kernel.matrix(self.x.as_ref(), x_test)?;
        let mean = cross.transpose() * &self.a;
        if !want_variance {
            return Ok((mean, None));
        }
        let prior = self.kernel.diag(x_test)?;
        let mut variance = Mat::<f64>::zeros(b, c);
        for j in 0..b {
            let kx = cross.col(j);
            for cl in 0..c {
                let ek = self.factors.apply_e(cl, kx)?;
                let whitened = self.factors.m.solve_lower(ek.as_mat())?;
                let explained = kx.transpose() * &ek;
                variance[(j, cl)] =
                    (prior[j] - explained + whitened.col(0).squared_norm_l2()).max(0.0);
            }
        }
        Ok((mean, Some(variance)))
    }

    /// Predictive class probabilities at the rows of `x_test` (`b × C`) by the probit
    /// approximation of the softmax–Gaussian integral on the latent marginals
    /// ([`probit_softmax`](super::probit_softmax)).
    ///
    /// Errors: as [`latent_marginals`](Self::latent_marginals).
    pub fn predict_proba(&self, x_test: MatRef<'_, f64>) -> Result<Mat<f64>> {
        let (mean, variance) = self.latent_marginals(x_test, true)?;
        let variance = variance.unwrap_or_else(|| Mat::zeros(mean.nrows(), mean.ncols()));
        super::predictive::probit_softmax(mean.as_ref(), variance.as_ref())
    }

    /// The same data and options with a new kernel: the mode found again.
    ///
    /// Errors: as [`fit`](Self::fit).
    pub fn refit(&self, kernel: K) -> Result<Self> {
        Self::fit(
            kernel,
            self.x.as_ref(),
            self.y.as_ref(),
            self.likelihood,
            &self.options,
        )
    }
}

/// The full Newton step's `a⁺` (R&W Algorithm 3.3, lines 10–13): `b = W f + y − π`,
/// `c = E K̄ b`, `a⁺ = b − c + E R (Σ E)⁻¹ Rᵀ c`.
fn newton_target(
    k: MatRef<'_, f64>,
    f: MatRef<'_, f64>,
    t: MatRef<'_, f64>,
    factors: &SoftmaxFactors,
) -> Result<Mat<f64>> {
    let (n, c) = f.shape();
    let pi = &factors.pi;
    let b = Mat::from_fn(n, c, |i, cl| {
        let mean_f: f64 = (0..c).map(|j| pi[(i, j)] * f[(i, j)]).sum();
        pi[(i, cl)] * (f[(i, cl)] - mean_f) + t[(i, cl)] - pi[(i, cl)]
    });
    let kb = k * &b;
    let mut cvec = Mat::<f64>::zeros(n, c);
    for cl in 0..c {
        let col = factors.apply_e(cl, kb.col(cl))?;
        cvec.col_mut(cl).copy_from(&col);
    }
    let mut c_sum = Col::<f64>::zeros(n);
    for cl in 0..c {
        c_sum += cvec.col(cl);
    }
    let t_vec = factors.m.solve_col(c_sum.as_ref())?;
    let mut a = Mat::<f64>::zeros(n, c);
    for cl in 0..c {
        let et = factors.apply_e(cl, t_vec.as_ref())?;
        let col = b.col(cl) - cvec.col(cl) + &et;
        a.col_mut(cl).copy_from(&col);
    }
    Ok(a)
}

/// Backtracking along `a + s (a⁺ − a)` (`f = K a` moves linearly): the largest `s = 2⁻ʲ`
/// that does not decrease `Ψ`, or the last one tried.
fn backtrack(
    t: MatRef<'_, f64>,
    (a, f, psi): (&Mat<f64>, &Mat<f64>, f64),
    (a_full, f_full): (Mat<f64>, Mat<f64>),
    options: SoftmaxGpOptions,
) -> (Mat<f64>, Mat<f64>, f64) {
    let mut step = 1.0;
    let mut halvings = 0;
    loop {
        let a_s = a + (&a_full - a) * step;
        let f_s = f + (&f_full - f) * step;
        let psi_s = log_posterior(f_s.as_ref(), a_s.as_ref(), t);
        if psi_s >= psi - 1e-12 * psi.abs() || halvings == options.max_halvings {
            return (a_s, f_s, psi_s);
        }
        step *= 0.5;
        halvings += 1;
    }
}

fn check_options(options: &SoftmaxGpOptions) -> Result<()> {
    if !(options.tolerance.is_finite() && options.tolerance > 0.0) {
        return Err(ModelError::InvalidOption {
            name: "SoftmaxGpOptions::tolerance",
            reason: format!("must be finite and > 0, got {}", options.tolerance),
        });
    }
    if options.max_steps == 0 {
        return Err(ModelError::InvalidOption {
            name: "SoftmaxGpOptions::max_steps",
            reason: "must be at least 1".into(),
        });
    }
    Ok(())
}
