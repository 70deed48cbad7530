//! [`Kmcg`]: KMCG as a fitted model (a kernel, data, `P` directions) with predictions at any
//! point, the estimated evidence and the [`GpModel`](crate::GpModel) interface.

use faer::{Col, Mat, MatRef};
use gp_kernels::Kernel;
use gp_linalg::{DenseOperator, GrowingCholesky, LinearOperator, ShiftedOperator};

use super::basis::SubsetProducts;
use super::run::{KmcgBasis, KmcgRun, KmcgRunStatus};
use crate::core::likelihood::{
    log_params_with_noise, param_names_with_noise, split_log_params_with_noise,
};
use crate::error::{ModelError, Result};

/// On which matrix the Krylov solver runs (the same Krylov space either way).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum KrylovMatrix {
    /// `K`, as the paper and its code do. The default.
    #[default]
    Kernel,
    /// `K + σ²I`: better conditioned; FOM's iterate is then CG's solve of the GP system.
    KernelPlusNoise,
}

/// Options of [`Kmcg::fit`].
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct KmcgOptions {
    /// Directions `P` (the rank of the KMCG kernel; clamped to `N`). Default 100.
    pub steps: usize,
    /// The Krylov solver. Default FOM.
    pub basis: KmcgBasis,
    /// Its matrix. Default `K`.
    pub krylov_matrix: KrylovMatrix,
}

impl Default for KmcgOptions {
    fn default() -> Self {
        Self {
            steps: 100,
            basis: KmcgBasis::Fom,
            krylov_matrix: KrylovMatrix::Kernel,
        }
    }
}

/// Kernel-machine conjugate gradients as a model: the rank-`P` kernel
/// `k̂(x, z) = k(x, X) S (SᵀKS)⁻¹ Sᵀk(X, z)` on the Krylov space `𝒦_P(K, y)`, with the GP
/// mean, the DTC variance and the evidence of that kernel (spec `kmcg.md` §1.5, `M = N`).
///
/// Fitting forms `K` densely (`N²` numbers) and runs `P` Krylov steps on it; a prediction
/// costs `O(N)` per point for the mean and `O(N P)` for the variance. On a subset `X_M ⊂ X`
/// ([`fit_subset`](Self::fit_subset), `M < N`) the directions live on `X_M`: it forms
/// `K_M` and `k(X, X_M)` (`M² + N M` numbers), each step costs one more `O(N M)` product,
/// and a prediction `O(M)` and `O(M P)`; with `P = M` it is SoR with the DTC variance. The evidence is the
/// KMCG estimate (it "overshoots": see the spec), not the exact one. Its gradient with
/// respect to the hyperparameters is not defined by the method (the Krylov space moves
/// with them), so [`lml`](crate::GpModel::lml) with a gradient is an error: train the
/// hyperparameters with [`ExactGp`](crate::ExactGp) or a
/// [`SparseGp`](crate::inducing::SparseGp) objective and plug them in.
///
/// ```
/// use faer::{Col, Mat};
/// use gp_kernels::SquaredExponential;
/// use gp_models::kmcg::{Kmcg, KmcgOptions};
/// use gp_models::ExactGp;
///
/// let x = Mat::from_fn(80, 1, |i, _| i as f64 / 8.0);
/// let y = Col::from_fn(80, |i| (i as f64 / 8.0).sin());
/// let kernel = SquaredExponential::new(vec![1.0], 1.0)?;
/// let kmcg = Kmcg::fit(kernel.clone(), x.as_ref(), y.as_ref(), 0.01,
///                      &KmcgOptions { steps: 30, ..Default::default() })?;
/// let exact = ExactGp::fit(kernel, x.as_ref(), y.as_ref(), 0.01)?;
/// let xs = Mat::from_fn(3, 1, |i, _| 1.0 + 3.0 * i as f64);
/// let (m, _) = kmcg.predict_mean_variance(xs.as_ref())?;
/// let e = exact.predict_mean(xs.as_ref())?;
/// assert!((&m - &e).norm_max() < 1e-3);
/// # Ok::<(), gp_models::ModelError>(())
/// ```
#[derive(Debug, Clone)]
pub struct Kmcg<K> {
    kernel: K,
    x: Mat<f64>,
    y: Col<f64>,
    noise_variance: f64,
    options: KmcgOptions,
    /// `S` (`N × P`).
    directions: Mat<f64>,
    /// `S A⁻¹ Rᵀy`: the mean is `k(x, X)` times it.
    mean_weights: Col<f64>,
    gram: GrowingCholesky,
    system: GrowingCholesky,
    neg_log_evidence: f64,
    status: KmcgRunStatus,
    /// The subset `X_M` (indices into the training rows and the points), when `M < N`.
    subset: Option<Subset>,
}

/// The rows of `X` the directions live on, and those points.
#[derive(Debug, Clone)]
struct Subset {
    indices: Vec<usize>,
    x: Mat<f64>,
}

impl<K: Kernel + Clone> Kmcg<K> {
    /// Runs KMCG with `options.steps` directions on the data.
    ///
    /// Errors: empty or non-finite data, a kernel of the wrong dimension, a noise variance
    /// that is not positive, a zero target vector.
    pub fn fit(
        kernel: K,
        x: MatRef<'_, f64>,
        y: faer::ColRef<'_, f64>,
        noise_variance: f64,
        options: &KmcgOptions,
    ) -> Result<Self> {
        Self::fit_on(kernel, x, y, noise_variance, options, None)
    }

    /// Runs KMCG with `options.steps` directions (clamped to `M`) on the subset `X_M` of
    /// the training rows `subset` (spec §1.5, `M < N`): the Krylov solver runs on `K_M`
    /// (or `K_M + σ²I`) from the subset's targets `y_M`, while the mean, variance and
    /// evidence use all `N` points through `R = k(X, X_M) S`. The rows are taken in the
    /// order given (which does not change the estimate).
    ///
    /// Errors: as [`fit`](Self::fit), and an empty subset, an index `≥ N` or one given
    /// twice (which would make `K_M` singular).
    pub fn fit_subset(
        kernel: K,
        x: MatRef<'_, f64>,
        y: faer::ColRef<'_, f64>,
        noise_variance: f64,
        subset: &[usize],
        options: &KmcgOptions,
    ) -> Result<Self> {
        let n = x.nrows();
        if subset.is_empty() {
            return Err(ModelError::InvalidOption {
                name: "subset",
                reason: "is empty; give at least one training row (or use Kmcg::fit for all)"
                    .into(),
            });
        }
        let mut seen = vec![false; n];
        for &i in subset {
            if i >= n {
                return Err(ModelError::InvalidOption {
                    name: "subset",
                    reason: format!("row {i} is out of range for {n} training points"),
                });
            }
            if std::mem::replace(&mut seen[i], true) {
                return Err(ModelError::InvalidOption {
                    name: "subset",
                    reason: format!(
                        "row {i} is given twice; K_M would be singular (give each row once)"
                    ),
                });
            }
        }
        let xm = Mat::from_fn(subset.len(), x.ncols(), |r, c| x[(subset[r], c)]);
        let subset = Subset {
            indices: subset.to_vec(),
            x: xm,
        };
        Self::fit_on(kernel, x, y, noise_variance, options, Some(subset))
    }

    /// [`fit`](Self::fit) and [`fit_subset`](Self::fit_subset) after their checks.
    fn fit_on(
        kernel: K,
        x: MatRef<'_, f64>,
        y: faer::ColRef<'_, f64>,
        noise_variance: f64,
        options: &KmcgOptions,
        subset: Option<Subset>,
    ) -> Result<Self> {
        crate::validate::check_training_data(&kernel, x, y, noise_variance)?;
        let n = x.nrows();
        let yv: Vec<f64> = (0..n).map(|i| y[i]).collect();
        let basis_x = subset.as_ref().map_or(x, |s| s.x.as_ref());
        let m = basis_x.nrows();
        let k = kernel.matrix(basis_x, basis_x)?;
        let dense: std::sync::Arc<dyn LinearOperator> = std::sync::Arc::new(DenseOperator::new(k));
        let shifted;
        let (op, shift): (&dyn LinearOperator, f64) = match options.krylov_matrix {
            KrylovMatrix::Kernel => (dense.as_ref(), 0.0),
            KrylovMatrix::KernelPlusNoise => {
                shifted = ShiftedOperator::new(dense.clone(), noise_variance)?;
                (&shifted, noise_variance)
            }
        };
        let no_test_points = || Box::new(|_: &[f64]| Vec::new());
        let mut run = match &subset {
            None => KmcgRun::new(
                op,
                shift,
                &yv,
                noise_variance,
                &[],
                no_test_points(),
                options.basis,
                options.steps.min(n),
            )?,
            Some(s) => {
                let cross = kernel.matrix(x, basis_x)?;
                let ym: Vec<f64> = s.indices.iter().map(|&i| yv[i]).collect();
                KmcgRun::on_subset(
                    op,
                    shift,
                    &ym,
                    SubsetProducts::new(cross, &yv)?,
                    noise_variance,
                    &[],
                    no_test_points(),
                    options.basis,
                    options.steps.min(m),
                )?
            }
        };
        while run.step()?.is_some() {}
        let state = run.state();
        let p = state.steps();
        let directions = run.directions().subcols(0, p).to_owned();
        let weights = state.weights();
        let mean_weights = &directions * Col::from_fn(p, |i| weights[i]);
        Ok(Self {
            kernel,
            x: x.to_owned(),
            y: y.to_owned(),
            noise_variance,
            options: *options,
            directions,
            mean_weights,
            gram: state.gram_factor().clone(),
            system: state.system_factor().clone(),
            neg_log_evidence: state.neg_log_evidence(),
            status: run.status().clone(),
            subset,
        })
    }
}

impl<K: Kernel> Kmcg<K> {
    /// Directions `P` in the estimate.
    pub fn steps(&self) -> usize {
        self.directions.ncols()
    }

    /// Why the Krylov run stopped (the step cap, a breakdown) or `Running` if it could go on.
    pub fn status(&self) -> &KmcgRunStatus {
        &self.status
    }

    /// The options it was fitted with.
    pub fn options(&self) -> &KmcgOptions {
        &self.options
    }

    /// The kernel.
    pub fn kernel(&self) -> &K {
        &self.kernel
    }

    /// The noise variance `σ²`.
    pub fn noise_variance(&self) -> f64 {
        self.noise_variance
    }

    /// The training inputs.
    pub fn train_x(&self) -> MatRef<'_, f64> {
        self.x.as_ref()
    }

    /// The training targets.
    pub fn train_y(&self) -> faer::ColRef<'_, f64> {
        self.y.as_ref()
    }

    /// The training rows the directions live on (`X_M`), or `None` when they live on all
    /// `N` points ([`fit`](Self::fit)).
    pub fn subset(&self) -> Option<&[usize]> {
        self.subset.as_ref().map(|s| s.indices.as_slice())
    }

    /// The points of the directions' rows: `X_M`, or all of `X`.
    fn basis_x(&self) -> MatRef<'_, f64> {
        self.subset
            .as_ref()
            .map_or(self.x.as_ref(), |s| s.x.as_ref())
    }

    /// The KMCG estimate of `−log p(y)` (Eq. 16b).
    pub fn neg_log_evidence(&self) -> f64 {
        self.neg_log_evidence
    }

    /// All hyperparameters as logarithms: the kernel's, then `log σ²`.
    pub fn log_params(&self) -> Vec<f64> {
        log_params_with_noise(&self.kernel, self.noise_variance)
    }

    /// Their names.
    pub fn param_names(&self) -> Vec<String> {
        param_names_with_noise(&self.kernel)
    }

    /// The mean and the latent (DTC) variance at the rows of `x_test`.
    ///
    /// Errors: test points of the wrong dimension or non-finite.
    pub fn predict_mean_variance(&self, x_test: MatRef<'_, f64>) -> Result<(Col<f64>, Col<f64>)> {
        crate::validate::check_test_points(x_test, self.x.ncols())?;
        let cross = self.kernel.matrix(self.basis_x(), x_test)?; // M × b
        let mean = cross.transpose() * &self.mean_weights;
        let c = self.directions.transpose() * &cross; // P × b
        let prior = self.kernel.diag(x_test)?;
        let mut var = Col::zeros(x_test.nrows());
        let mut col = vec![0.0; self.steps()];
        for t in 0..x_test.nrows() {
            col.iter_mut().enumerate().for_each(|(i, v)| *v = c[(i, t)]);
            let mut a = col.clone();
            self.gram.solve_lower_in_place(&mut a)?;
            self.system.solve_lower_in_place(&mut col)?;
            let g: f64 = a.iter().map(|v| v * v).sum();
            let s: f64 = col.iter().map(|v| v * v).sum();
            var[t] = (prior[t] - g + self.noise_variance * s).max(0.0);
        }
        Ok((mean, var))
    }
}

impl<K: Kernel + Clone> Kmcg<K> {
    /// The same data and options with new log hyperparameters (the kernel's, then `log σ²`).
    ///
    /// Errors: a length mismatch, invalid hyperparameters, and what fitting can fail with.
    pub fn with_log_params(&self, log_params: &[f64]) -> Result<Self> {
        let (noise, kernel_params) = split_log_params_with_noise(&self.kernel, log_params)?;
        let mut kernel = self.kernel.clone();
        kernel.set_log_params(kernel_params)?;
        Self::fit_on(
            kernel,
            self.x.as_ref(),
            self.y.as_ref(),
            noise,
            &self.options,
            self.subset.clone(),
        )
    }
}

/// An error for what KMCG does not define.
pub(crate) fn unsupported(what: &str) -> ModelError {
    ModelError::InvalidOption {
        name: "LmlRequest::gradient",
        reason: format!(
            "Kmcg has no {what}: its Krylov space moves with the hyperparameters and the method \
             defines no derivative; train with ExactGp or a SparseGp objective and refit Kmcg at \
             the hyperparameters found"
        ),
    }
}
