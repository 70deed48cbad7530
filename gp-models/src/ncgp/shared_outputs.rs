//! `K = K_x ⊗ I_C` in CN order: `C` independent latent functions that share one kernel.

use faer::{ColMut, ColRef, Mat, MatMut, MatRef};
use gp_linalg::LinearOperator;

use crate::error::{ModelError, Result};

/// The prior covariance of `C` independent latent functions sharing one covariance `K_x`
/// (`N × N`, any operator: dense, matrix-free kernel, SKI), on latent vectors in CN order
/// (entry `n·C + c`): a product reshapes the vector to `V` (`N × C`, row `n` = the `C` values
/// of point `n`) and returns `K_x V`, one block product with `C` columns (spec §0, §3.5).
/// With `C = 1` it is `K_x` itself.
///
/// The softmax pseudo-inverse is valid with this prior (it commutes with the per-point
/// centring); per-class kernels cannot be expressed, so IterNCGP never runs the
/// pseudo-inverse iteration on a prior for which it is not Newton's.
///
/// ```
/// use gp_models::faer::{col, Mat};
/// use gp_linalg::{DenseOperator, LinearOperator};
/// use gp_models::ncgp::SharedOutputs;
///
/// let kx = DenseOperator::new(Mat::from_fn(2, 2, |i, j| if i == j { 2.0 } else { 1.0 }));
/// let k = SharedOutputs::new(&kx, 2)?;
/// // Point 0 has latent values (1, 0), point 1 has (0, 1).
/// let y = k.apply(col![1.0, 0.0, 0.0, 1.0].as_ref())?;
/// assert_eq!([y[0], y[1], y[2], y[3]], [2.0, 1.0, 1.0, 2.0]);
/// # Ok::<(), gp_models::ModelError>(())
/// ```
pub struct SharedOutputs<'a> {
    kx: &'a dyn LinearOperator,
    outputs: usize,
}

impl std::fmt::Debug for SharedOutputs<'_> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("SharedOutputs")
            .field("n", &self.kx.nrows())
            .field("outputs", &self.outputs)
            .finish()
    }
}

impl<'a> SharedOutputs<'a> {
    /// `K_x ⊗ I_C` for a square `kx` and `outputs = C ≥ 1`.
    ///
    /// Errors: [`ModelError::InvalidOption`] for `outputs = 0` or a non-square `kx`.
    pub fn new(kx: &'a dyn LinearOperator, outputs: usize) -> Result<Self> {
        if outputs == 0 {
            return Err(ModelError::InvalidOption {
                name: "SharedOutputs::outputs",
                reason: "need at least one latent function".to_string(),
            });
        }
        if kx.nrows() != kx.ncols() {
            return Err(ModelError::InvalidOption {
                name: "SharedOutputs::kx",
                reason: format!("must be square, got {} × {}", kx.nrows(), kx.ncols()),
            });
        }
        Ok(Self { kx, outputs })
    }

    /// `C`.
    pub fn outputs(&self) -> usize {
        self.outputs
    }

    /// `N`, the points.
    pub fn points(&self) -> usize {
        self.kx.nrows()
    }

    /// The shared covariance `K_x`.
    pub fn shared(&self) -> &'a dyn LinearOperator {
        self.kx
    }
}

/// Reshapes CN-ordered columns (`N·C × B`) to `N × (B·C)`: block `b` holds column `b` as
/// `N × C`.
pub(crate) fn cn_to_blocks(x: MatRef<'_, f64>, outputs: usize) -> Mat<f64> {
    let n = x.nrows() / outputs;
    Mat::from_fn(n, x.ncols() * outputs, |i, j| {
        let (b, c) = (j / outputs, j % outputs);
        x[(i * outputs + c, b)]
    })
}

/// The inverse of [`cn_to_blocks`], written into `out` (`N·C × B`).
pub(crate) fn blocks_to_cn(blocks: MatRef<'_, f64>, outputs: usize, mut out: MatMut<'_, f64>) {
    for j in 0..blocks.ncols() {
        let (b, c) = (j / outputs, j % outputs);
        for i in 0..blocks.nrows() {
            out[(i * outputs + c, b)] = blocks[(i, j)];
        }
    }
}

impl LinearOperator for SharedOutputs<'_> {
    fn nrows(&self) -> usize {
        self.kx.nrows() * self.outputs
    }

    fn ncols(&self) -> usize {
        self.nrows()
    }

    fn matvec(&self, x: ColRef<'_, f64>, out: ColMut<'_, f64>) {
        self.matmat(x.as_mat(), out.as_mat_mut());
    }

    fn matmat(&self, x: MatRef<'_, f64>, out: MatMut<'_, f64>) {
        if self.outputs == 1 {
            self.kx.matmat(x, out);
            return;
        }
        let v = cn_to_blocks(x, self.outputs);
        let mut kv = Mat::zeros(v.nrows(), v.ncols());
        self.kx.matmat(v.as_ref(), kv.as_mut());
        blocks_to_cn(kv.as_ref(), self.outputs, out);
    }

    fn diagonal(&self) -> Option<faer::Col<f64>> {
        let d = self.kx.diagonal()?;
        Some(faer::Col::from_fn(self.nrows(), |i| d[i / self.outputs]))
    }
}
