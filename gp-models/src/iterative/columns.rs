//! The noise-free kernel matrix `K(X, X)` seen by diagonal and columns, for the
//! pivoted-Cholesky preconditioner of `gp-solvers`.

use faer::{Col, ColMut, MatRef};
use gp_kernels::Kernel;
use gp_solvers::ColumnAccess;

/// `K(X, X)` computed column by column on demand (`O(n d)` per column, nothing stored):
/// implements [`ColumnAccess`] so that [`PivotedCholesky`](gp_solvers::PivotedCholesky) can
/// factor a kernel matrix without forming it.
///
/// ```
/// use faer::Mat;
/// use gp_kernels::{Kernel, SquaredExponential};
/// use gp_models::KernelColumns;
/// use gp_solvers::{PivotedCholesky, PivotedCholeskyOptions};
///
/// let kernel = SquaredExponential::new(vec![0.3], 1.0)?;
/// let x = Mat::from_fn(100, 1, |i, _| i as f64 / 100.0);
/// let columns = KernelColumns::new(&kernel, x.as_ref())?;
/// let pc = PivotedCholesky::new(&columns, &PivotedCholeskyOptions::default())?;
/// let dense = kernel.matrix(x.as_ref(), x.as_ref())?;
/// let approx = pc.factor() * pc.factor().transpose();
/// assert!((&approx - &dense).norm_max() < 1e-3);
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// ```
#[derive(Debug, Clone, Copy)]
pub struct KernelColumns<'a, K: ?Sized> {
    kernel: &'a K,
    x: MatRef<'a, f64>,
}

impl<'a, K: Kernel + ?Sized> KernelColumns<'a, K> {
    /// The adapter over a kernel and its points `X` (`n × d`, one point per row).
    ///
    /// Errors with [`ModelError::KernelDim`](crate::ModelError::KernelDim) if `X` does not
    /// have the kernel's input dimension and
    /// [`ModelError::NonFinite`](crate::ModelError::NonFinite) if it holds NaN or infinity
    /// (the columns are computed without further checks).
    pub fn new(kernel: &'a K, x: MatRef<'a, f64>) -> crate::Result<Self> {
        if kernel.input_dim() != x.ncols() {
            return Err(crate::ModelError::KernelDim {
                kernel_dim: kernel.input_dim(),
                data_dim: x.ncols(),
            });
        }
        gp_linalg::validate::check_finite_mat(x, "the points of KernelColumns")
            .map_err(crate::ModelError::from_finite_check)?;
        Ok(Self { kernel, x })
    }
}

impl<K: Kernel + ?Sized> ColumnAccess for KernelColumns<'_, K> {
    fn dim(&self) -> usize {
        self.x.nrows()
    }

    /// `k(xᵢ, xᵢ)` for every point (`O(n d)`).
    fn diagonal(&self) -> Col<f64> {
        let d = self.x.ncols();
        let mut point = vec![0.0; d];
        Col::from_fn(self.x.nrows(), |i| {
            for (k, v) in point.iter_mut().enumerate() {
                *v = self.x[(i, k)];
            }
            self.kernel.diag_entry(&point)
        })
    }

    /// `K(X, x_j)` through the kernel's (vectorized) tile filler.
    fn column(&self, j: usize, out: ColMut<'_, f64>) {
        self.kernel
            .fill_block(self.x, self.x.subrows(j, 1), out.as_mat_mut());
    }
}
