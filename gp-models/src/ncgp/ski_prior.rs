//! A SKI prior for IterNCGP: `K_x ≈ W K_G Wᵀ` (structured kernel interpolation) so that a
//! Newton step's products cost `O(4^d N + m log m)` instead of `O(N²)`, which takes
//! classification on `10⁵–10⁶` low-dimensional points to seconds per product.

use faer::{Col, ColMut, ColRef, Mat, MatMut, MatRef};
use gp_kernels::Kernel;
use gp_linalg::{LinearOperator, TransposeOperator};
use gp_structured::{InterpolationOptions, InterpolationWeights};

use crate::error::{ModelError, Result};
use crate::ski::{Ski, SkiOperator, SkiOptions};

/// The SKI approximation `W K_G Wᵀ` of a kernel matrix on the training inputs, with the
/// matching cross-covariances `W⋄ K_G Wᵀ` and prior variances `diag(W⋄ K_G W⋄ᵀ)` at test
/// inputs, so that IterNCGP's predictions use one consistent prior.
///
/// The grid, interpolation and memory checks are those of [`Ski`] with the given options.
///
/// ```
/// use std::ops::ControlFlow;
/// use gp_kernels::SquaredExponential;
/// use gp_models::faer::{Col, Mat};
/// use gp_models::ncgp::{iterncgp, Bernoulli, IterNcgpOptions, SharedOutputs, SkiPrior};
/// use gp_models::grid::GridSettings;
/// use gp_models::SkiOptions;
/// use gp_solvers::pls::ResidualPolicy;
///
/// let x = Mat::from_fn(2000, 1, |i, _| i as f64 / 200.0);
/// let y = Col::from_fn(2000, |i| if (i as f64 / 200.0).sin() > 0.0 { 1.0 } else { 0.0 });
/// let kernel = SquaredExponential::new(vec![1.0], 4.0)?;
/// let options = SkiOptions { grid: GridSettings { sizes: vec![200], ..Default::default() },
///                            ..Default::default() };
/// let prior = SkiPrior::new(&kernel, x.as_ref(), &options)?;
/// let kx = prior.operator();
/// let run = iterncgp(&SharedOutputs::new(&kx, 1)?, Col::zeros(2000).as_ref(), y.as_ref(),
///                    &Bernoulli, &mut ResidualPolicy,
///                    &IterNcgpOptions { max_inner: Some(10), ..Default::default() },
///                    &mut |_| ControlFlow::Continue(()))?;
/// let xt = Mat::from_fn(2, 1, |i, _| 1.5 + 3.0 * i as f64); // sin > 0, then < 0
/// let cross = prior.cross(xt.as_ref())?;
/// let marg = run.posterior.predict(&cross, prior.prior_variances(xt.as_ref())?.as_ref(), None)?;
/// assert!(marg.mean[(0, 0)] > 0.0 && marg.mean[(1, 0)] < 0.0);
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// ```
#[derive(Debug)]
pub struct SkiPrior<K: Kernel + Clone> {
    ski: Ski<K>,
}

impl<K: Kernel + Clone> SkiPrior<K> {
    /// The grid, interpolation weights and grid kernel of SKI for `kernel` on the rows of
    /// `x`, as [`Ski::fit`] builds them (no solve).
    ///
    /// Errors: those of [`Ski::fit`] (empty or non-finite inputs, a grid over the memory
    /// limit, a kernel that is not separable into stationary 1-D factors).
    pub fn new(kernel: &K, x: MatRef<'_, f64>, options: &SkiOptions) -> Result<Self> {
        // Ski::fit wants targets and a noise; neither enters the prior operator.
        let zeros = Col::zeros(x.nrows());
        let ski = Ski::fit(kernel.clone(), x, zeros.as_ref(), 1.0, options)?;
        Ok(Self { ski })
    }

    /// `K_x ≈ W K_G Wᵀ` (`N × N`, matrix free).
    pub fn operator(&self) -> SkiOperator<'_> {
        SkiOperator::from_parts(
            self.ski.interpolation(),
            self.ski.grid_kernel().operator(),
            0.0,
        )
    }

    fn test_weights(&self, x_test: MatRef<'_, f64>) -> Result<InterpolationWeights> {
        let grid = &self.ski.options().grid;
        let opts = InterpolationOptions {
            scheme: grid.scheme,
            out_of_grid: grid.out_of_grid,
        };
        if x_test.ncols() != self.ski.input_dim() {
            return Err(ModelError::TestDim {
                expected: self.ski.input_dim(),
                found: x_test.ncols(),
            });
        }
        InterpolationWeights::new(self.ski.grid(), x_test, opts)
            .map_err(|e| ModelError::from_structured(e, "the test points"))
    }

    /// The cross-covariance `W⋄ K_G Wᵀ` (`N⋄ × N`) for
    /// [`IterNcgpPosterior::predict`](super::IterNcgpPosterior::predict).
    ///
    /// Errors: a wrong input dimension, test points outside the grid (per the options'
    /// out-of-grid policy).
    pub fn cross(&self, x_test: MatRef<'_, f64>) -> Result<SkiCross<'_>> {
        Ok(SkiCross {
            test: self.test_weights(x_test)?,
            train: self.ski.interpolation(),
            inner: self.ski.grid_kernel().operator(),
        })
    }

    /// The prior variances `diag(W⋄ K_G W⋄ᵀ)` at the test points (`4^d × 4^d` grid-kernel
    /// entries per point), consistent with [`cross`](Self::cross).
    ///
    /// Errors: as [`cross`](Self::cross).
    pub fn prior_variances(&self, x_test: MatRef<'_, f64>) -> Result<Col<f64>> {
        let w = self.test_weights(x_test)?;
        let kg = self.ski.grid_kernel();
        let mut out = Col::zeros(x_test.nrows());
        for i in 0..x_test.nrows() {
            let (idx, wts) = w.row(i).ok_or(ModelError::LengthMismatch {
                context: "SkiPrior::prior_variances (interpolation rows)",
                expected: x_test.nrows(),
                found: i,
            })?;
            let mut v = 0.0;
            for (a, wa) in idx.iter().zip(&wts) {
                for (b, wb) in idx.iter().zip(&wts) {
                    v += wa * wb * kg.entry(*a, *b);
                }
            }
            out[i] = v;
        }
        Ok(out)
    }
}

/// `W⋄ K_G Wᵀ` (`N⋄ × N`): the SKI cross-covariance between test and training inputs.
pub struct SkiCross<'a> {
    test: InterpolationWeights,
    train: &'a InterpolationWeights,
    inner: &'a dyn LinearOperator,
}

impl std::fmt::Debug for SkiCross<'_> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("SkiCross")
            .field("n_test", &self.test.num_rows())
            .field("n_train", &self.train.num_rows())
            .finish()
    }
}

impl LinearOperator for SkiCross<'_> {
    fn nrows(&self) -> usize {
        self.test.num_rows()
    }

    fn ncols(&self) -> usize {
        self.train.num_rows()
    }

    fn matvec(&self, x: ColRef<'_, f64>, out: ColMut<'_, f64>) {
        self.matmat(x.as_mat(), out.as_mat_mut());
    }

    fn matmat(&self, x: MatRef<'_, f64>, out: MatMut<'_, f64>) {
        let m = self.train.num_cols();
        let mut wt_x = Mat::zeros(m, x.ncols());
        self.train.matmat_transpose(x, wt_x.as_mut());
        let mut kg = Mat::zeros(m, x.ncols());
        self.inner.matmat(wt_x.as_ref(), kg.as_mut());
        self.test.matmat(kg.as_ref(), out);
    }
}
