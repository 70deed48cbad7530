//! The matrix-free kernel operator `K(X, X) + σ²I` (and the rectangular `K(X, Z)`).
//!
//! Products are computed tile by tile without ever storing `K`: the rows of the output are
//! split into tiles of [`ROW_TILE`] rows, one rayon task per tile, and each task owns its
//! disjoint row range of the output. Inside a task, tiles of `ROW_TILE × COL_TILE` kernel
//! entries (128 KiB, L2-resident) are filled by [`Kernel::fill_block`] and immediately
//! multiplied into all `r` right-hand sides with one small sequential GEMM, so every kernel
//! entry is computed once per product with a block of `r` columns. Memory is
//! `O(ROW_TILE · COL_TILE)` per thread. Symmetry is not exploited (it would make two tasks
//! write the same output rows); the cost is one kernel evaluation per entry of `K`.

use faer::linalg::matmul::matmul;
use faer::reborrow::{Reborrow, ReborrowMut};
use faer::{Accum, Col, ColMut, ColRef, Mat, MatMut, MatRef, Par};
use gp_linalg::LinearOperator;
use rayon::prelude::*;

use crate::ard::check_points;
use crate::error::{KernelError, Result};
use crate::kernel::Kernel;

/// Output rows per parallel task.
pub const ROW_TILE: usize = 128;
/// Kernel columns per tile (a tile of `ROW_TILE × COL_TILE` entries is 128 KiB).
pub const COL_TILE: usize = 128;

/// `A = K(X, Z) + σ² I` (the `σ² I` only for the square operator), applied matrix-free.
///
/// Build the square operator with [`new`](Self::new) (`Z = X`, any `σ² ≥ 0`) or the
/// rectangular cross-covariance with [`cross`](Self::cross). The kernel is held by value;
/// pass `&kernel`, a `Box<dyn Kernel>` or an `Arc` to share it.
///
/// ```
/// use faer::{Col, Mat};
/// use gp_kernels::{Kernel, KernelOperator, SquaredExponential};
/// use gp_linalg::LinearOperator;
///
/// let kernel = SquaredExponential::new(vec![0.7, 1.3], 1.0)?;
/// let x = Mat::from_fn(50, 2, |i, j| ((i * (j + 3)) % 17) as f64 / 7.0);
/// let op = KernelOperator::new(&kernel, x.as_ref(), 0.1)?;
/// let v = Col::from_fn(50, |i| (i as f64).sin());
/// let y = op.apply(v.as_ref())?;
/// // The same product through the dense matrix.
/// let dense = kernel.matrix(x.as_ref(), x.as_ref())? * v.as_ref() + v.as_ref() * 0.1;
/// assert!((&y - &dense).norm_max() < 1e-12);
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// ```
#[derive(Debug, Clone)]
pub struct KernelOperator<K: Kernel> {
    kernel: K,
    x: Mat<f64>,
    /// Column points for a cross operator; `None` for the square `K(X, X) + σ²I`.
    z: Option<Mat<f64>>,
    noise_variance: f64,
}

impl<K: Kernel> KernelOperator<K> {
    /// The square operator `K(X, X) + σ² I`.
    ///
    /// Errors: `X` empty ([`KernelError::InvalidArgument`]), with a column count other than
    /// the kernel's input dimension ([`KernelError::InputDim`]) or holding NaN/∞
    /// ([`KernelError::Linalg`]); `noise_variance` negative, NaN or infinite
    /// ([`KernelError::InvalidHyperparameter`]).
    pub fn new(kernel: K, x: MatRef<'_, f64>, noise_variance: f64) -> Result<Self> {
        if !(noise_variance >= 0.0 && noise_variance.is_finite()) {
            return Err(KernelError::InvalidHyperparameter {
                name: "noise_variance".into(),
                value: noise_variance,
                reason: "must be finite and non-negative",
            });
        }
        let x = checked_points(&kernel, x, "x", "kernel operator, X")?;
        Ok(Self {
            kernel,
            x,
            z: None,
            noise_variance,
        })
    }

    /// The rectangular operator `K(X, Z)` (`n × m`, maps `ℝᵐ → ℝⁿ`), no noise term.
    ///
    /// Errors as for [`new`](Self::new), for both point sets.
    pub fn cross(kernel: K, x: MatRef<'_, f64>, z: MatRef<'_, f64>) -> Result<Self> {
        let x = checked_points(&kernel, x, "x", "kernel cross operator, X")?;
        let z = checked_points(&kernel, z, "z", "kernel cross operator, Z")?;
        Ok(Self {
            kernel,
            x,
            z: Some(z),
            noise_variance: 0.0,
        })
    }

    /// The kernel.
    pub fn kernel(&self) -> &K {
        &self.kernel
    }

    /// The row points `X` (`n × d`).
    pub fn points(&self) -> MatRef<'_, f64> {
        self.x.as_ref()
    }

    /// The column points: `Z` for a cross operator, `X` otherwise.
    pub fn column_points(&self) -> MatRef<'_, f64> {
        self.z.as_ref().unwrap_or(&self.x).as_ref()
    }

    /// The diagonal shift `σ²` (0 for a cross operator).
    pub fn noise_variance(&self) -> f64 {
        self.noise_variance
    }

    /// Whether this is the square `K(X, X) + σ² I`.
    pub fn is_square(&self) -> bool {
        self.z.is_none()
    }
}

/// Validates a point set for the operator and copies it column-major.
fn checked_points<K: Kernel>(
    kernel: &K,
    x: MatRef<'_, f64>,
    name: &'static str,
    context: &'static str,
) -> Result<Mat<f64>> {
    if x.nrows() == 0 {
        return Err(KernelError::InvalidArgument {
            name,
            reason: "the kernel operator needs at least one point (the matrix has 0 rows)".into(),
        });
    }
    check_points(kernel.input_dim(), x, context)?;
    Ok(x.to_owned())
}

impl<K: Kernel> LinearOperator for KernelOperator<K> {
    fn nrows(&self) -> usize {
        self.x.nrows()
    }

    fn ncols(&self) -> usize {
        self.column_points().nrows()
    }

    fn matvec(&self, x: ColRef<'_, f64>, out: ColMut<'_, f64>) {
        self.matmat(x.as_mat(), out.as_mat_mut());
    }

    fn matmat(&self, v: MatRef<'_, f64>, out: MatMut<'_, f64>) {
        if v.ncols() == 0 {
            return;
        }
        let z = self.column_points();
        let m = z.nrows();
        let shift = if self.is_square() {
            self.noise_variance
        } else {
            0.0
        };
        out.par_row_chunks_mut(ROW_TILE)
            .enumerate()
            .for_each(|(t, mut out_t)| {
                let i0 = t * ROW_TILE;
                let len = out_t.nrows();
                let xt = self.x.as_ref().subrows(i0, len);
                let mut tile = Mat::<f64>::zeros(len, COL_TILE.min(m));
                for j0 in (0..m).step_by(COL_TILE) {
                    let p = COL_TILE.min(m - j0);
                    let mut kt = tile.as_mut().subcols_mut(0, p);
                    self.kernel.fill_block(xt, z.subrows(j0, p), kt.rb_mut());
                    let accum = if j0 == 0 { Accum::Replace } else { Accum::Add };
                    matmul(
                        out_t.rb_mut(),
                        accum,
                        kt.rb(),
                        v.subrows(j0, p),
                        1.0,
                        Par::Seq,
                    );
                }
                if shift != 0.0 {
                    let vt = v.subrows(i0, len);
                    out_t += vt * faer::Scale(shift);
                }
            });
    }

    fn diagonal(&self) -> Option<Col<f64>> {
        if !self.is_square() {
            return None;
        }
        let d = self.kernel.diag(self.x.as_ref()).ok()?;
        Some(Col::from_fn(d.nrows(), |i| d[i] + self.noise_variance))
    }
}
