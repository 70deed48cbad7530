//! The grid kernel `K_G = s · T_1 ⊗ … ⊗ T_d` of a separable kernel with stationary 1-D
//! factors on a regular grid, and its derivatives.
//!
//! `T_l` is the symmetric Toeplitz matrix with first column `c_l[j] = k_l(g_0, g_j)` on axis
//! `l`; the output scale `s` is folded into the first factor. The derivative with respect to
//! the log length scale of dimension `l` replaces `T_l` by the Toeplitz matrix of
//! `∂k_l(g_0, g_j)/∂ log ℓ_l`; the derivative with respect to `log s` is `K_G` itself.

use std::sync::Arc;

use faer::{Col, Mat};
use gp_kernels::Kernel;
use gp_linalg::{LinearOperator, SharedOperator};
use gp_structured::{InterpolationWeights, Kronecker, RegularGrid, SymmetricToeplitz};

use crate::error::{ModelError, Result};

/// Relative tolerance of the stationarity and layout checks.
const CHECK_TOL: f64 = 1e-9;

/// `K_G` as a Kronecker product of Toeplitz factors, the data to rebuild it and its
/// derivatives, and its entries.
#[derive(Debug, Clone)]
pub struct GridKernel {
    scale: f64,
    /// Unit-scale first columns `c_l`.
    columns: Vec<Vec<f64>>,
    /// First columns of `∂T_l/∂ log ℓ_l`.
    derivative_columns: Vec<Vec<f64>>,
    kron: Kronecker,
    sizes: Vec<usize>,
    strides: Vec<usize>,
    /// Why the kernel's hyperparameters do not follow the layout the gradient needs, if
    /// they do not.
    layout_error: Option<String>,
}

fn unsupported(reason: String) -> ModelError {
    ModelError::UnsupportedKernel {
        model: "SKI",
        reason,
    }
}

/// A Kronecker product of Toeplitz factors with first columns `columns`, the first scaled by
/// `scale`.
fn toeplitz_kronecker(columns: &[&[f64]], scale: f64) -> Result<Kronecker> {
    let factors = columns
        .iter()
        .enumerate()
        .map(|(l, c)| {
            let t = if l == 0 {
                let scaled: Vec<f64> = c.iter().map(|v| v * scale).collect();
                SymmetricToeplitz::new(&scaled)?
            } else {
                SymmetricToeplitz::new(c)?
            };
            Ok(Arc::new(t) as SharedOperator)
        })
        .collect::<Result<Vec<_>>>()?;
    Ok(Kronecker::new(factors)?)
}

impl GridKernel {
    /// `K_G` of `kernel` on `grid`.
    ///
    /// Errors with [`ModelError::UnsupportedKernel`] if the kernel has no separable
    /// factorization, the number of factors differs from the grid dimension, a factor is not
    /// one-dimensional, or a factor is not stationary on the grid (`k_l(g_i, g_j)` must
    /// depend on `|i − j|` only).
    pub fn new<K: Kernel + ?Sized>(kernel: &K, grid: &RegularGrid) -> Result<Self> {
        let sep = kernel.separable_factors().ok_or_else(|| {
            unsupported(
                "the kernel is not separable (separable_factors() is None); SKI's grid kernel \
                 is a Kronecker product of 1-D Toeplitz factors, so use a SquaredExponential or \
                 a ProductKernel"
                    .into(),
            )
        })?;
        let d = grid.dims();
        if sep.factors.len() != d {
            return Err(unsupported(format!(
                "the kernel has {} separable factors but the grid has {d} dimensions",
                sep.factors.len()
            )));
        }
        if !(sep.scale.is_finite() && sep.scale > 0.0) {
            return Err(unsupported(format!(
                "the output scale must be finite and positive, got {}",
                sep.scale
            )));
        }
        let mut columns = Vec::with_capacity(d);
        let mut derivative_columns = Vec::with_capacity(d);
        for (l, (factor, axis)) in sep.factors.iter().zip(grid.axes()).enumerate() {
            if factor.input_dim() != 1 || factor.n_params() == 0 {
                return Err(unsupported(format!(
                    "factor {l} takes {}-dimensional inputs with {} hyperparameters; \
                     need a 1-D kernel whose first hyperparameter is its log length scale",
                    factor.input_dim(),
                    factor.n_params()
                )));
            }
            let points = axis.points();
            let m = points.len();
            let mut grad = vec![0.0; factor.n_params()];
            let mut col = Vec::with_capacity(m);
            let mut dcol = Vec::with_capacity(m);
            for &g in &points {
                col.push(factor.eval_with_grad(&[points[0]], &[g], &mut grad));
                dcol.push(grad[0]);
            }
            check_stationary(factor.as_ref(), &points, &col, l)?;
            columns.push(col);
            derivative_columns.push(dcol);
        }
        let refs: Vec<&[f64]> = columns.iter().map(Vec::as_slice).collect();
        let kron = toeplitz_kronecker(&refs, sep.scale)?;
        let layout_error = check_layout(kernel, &sep.factors, sep.scale, grid).err();
        Ok(Self {
            scale: sep.scale,
            columns,
            derivative_columns,
            kron,
            sizes: grid.sizes().to_vec(),
            strides: grid.strides().to_vec(),
            layout_error,
        })
    }

    /// `K_G` as an operator (Kronecker product of Toeplitz factors, FFT products).
    pub fn operator(&self) -> &Kronecker {
        &self.kron
    }

    /// The output scale `s`.
    pub fn scale(&self) -> f64 {
        self.scale
    }

    /// The unit-scale first column `c_l` of the Toeplitz factor of dimension `l`.
    pub fn first_column(&self, l: usize) -> Option<&[f64]> {
        self.columns.get(l).map(Vec::as_slice)
    }

    /// `diag(W K_G Wᵀ)`: the prior variances `w_iᵀ K_G w_i` of the points interpolated by
    /// `w`, in `O(d·w²)` per point for stencils of width `w` (the product over the dimensions
    /// of each stencil's 1-D quadratic form,
    /// [`InterpolationWeights::toeplitz_kronecker_diagonal`]).
    ///
    /// Errors with [`ModelError::Structured`] when `w` interpolates onto another grid
    /// (a different number of dimensions or axis sizes).
    pub fn interpolated_diagonal(&self, w: &InterpolationWeights) -> Result<Col<f64>> {
        let diagonal = w.toeplitz_kronecker_diagonal(self.scale, &self.first_columns())?;
        Ok(Col::from_fn(diagonal.len(), |i| diagonal[i]))
    }

    /// `W_a K_G W_bᵀ` (`n_a × n_b`): the prior covariances of the points interpolated by
    /// `wa` and by `wb` (on this kernel's grid), each entry the product over the dimensions
    /// of the two stencils' 1-D forms, `O(d·w²)` per pair
    /// ([`InterpolationWeights::toeplitz_kronecker_cross`]).
    ///
    /// Errors with [`ModelError::Structured`] when `wa` or `wb` interpolates onto another
    /// grid, or the two use different schemes.
    pub fn interpolated_cross(
        &self,
        wa: &InterpolationWeights,
        wb: &InterpolationWeights,
    ) -> Result<Mat<f64>> {
        Ok(wa.toeplitz_kronecker_cross(wb, self.scale, &self.first_columns())?)
    }

    /// The unit-scale first columns of every factor.
    fn first_columns(&self) -> Vec<&[f64]> {
        self.columns.iter().map(Vec::as_slice).collect()
    }

    /// Number of grid points `m`.
    pub fn num_points(&self) -> usize {
        self.kron.nrows()
    }

    /// The entry `K_G[a, b]` for flat grid indices `a, b < m` (`s Π_l c_l[|a_l − b_l|]`).
    pub fn entry(&self, a: usize, b: usize) -> f64 {
        let mut v = self.scale;
        for ((col, &stride), &size) in self.columns.iter().zip(&self.strides).zip(&self.sizes) {
            let (ia, ib) = ((a / stride) % size, (b / stride) % size);
            v *= col[ia.abs_diff(ib)];
        }
        v
    }

    /// `∂K_G/∂ log ℓ_l` for every dimension `l` (as Kronecker products with the Toeplitz
    /// derivative in factor `l`), then `∂K_G/∂ log s = K_G`: in the order of the kernel's
    /// hyperparameters `[log ℓ_0, …, log ℓ_{d−1}, log s]`.
    ///
    /// Errors with [`ModelError::UnsupportedKernel`] if the kernel's hyperparameters are not
    /// in that layout (checked against the kernel's own derivatives when the grid kernel was
    /// built).
    pub fn derivatives(&self) -> Result<Vec<Kronecker>> {
        if let Some(reason) = &self.layout_error {
            return Err(unsupported(reason.clone()));
        }
        let d = self.columns.len();
        let mut out = Vec::with_capacity(d + 1);
        for l in 0..d {
            let refs: Vec<&[f64]> = (0..d)
                .map(|i| {
                    if i == l {
                        self.derivative_columns[i].as_slice()
                    } else {
                        self.columns[i].as_slice()
                    }
                })
                .collect();
            out.push(toeplitz_kronecker(&refs, self.scale)?);
        }
        out.push(self.kron.clone());
        Ok(out)
    }
}

/// `k(g_i, g_j)` must equal `c[|i − j|]` (checked on the last row and on the transposed
/// first column).
fn check_stationary(factor: &dyn Kernel, points: &[f64], col: &[f64], l: usize) -> Result<()> {
    let m = points.len();
    let tol = CHECK_TOL
        * col
            .iter()
            .fold(0.0f64, |a, v| a.max(v.abs()))
            .max(f64::MIN_POSITIVE);
    if let Some(j) = col.iter().position(|v| !v.is_finite()) {
        return Err(unsupported(format!(
            "factor {l} is not finite at grid distance {j}: k(g_0, g_{j}) = {}",
            col[j]
        )));
    }
    for j in 0..m {
        let shifted = factor.eval(&[points[m - 1 - j]], &[points[m - 1]]);
        let transposed = factor.eval(&[points[j]], &[points[0]]);
        if (shifted - col[j]).abs() > tol || (transposed - col[j]).abs() > tol {
            return Err(unsupported(format!(
                "factor {l} is not stationary on the grid: k(g_0, g_{j}) = {}, but \
                 k(g_{}, g_{}) = {shifted} and k(g_{j}, g_0) = {transposed}; SKI needs \
                 Toeplitz factors",
                col[j],
                m - 1 - j,
                m - 1
            )));
        }
    }
    Ok(())
}

/// The gradient needs `[log ℓ_0, …, log ℓ_{d−1}, log s]` with `ℓ_l` the first hyperparameter
/// of factor `l`: checked against the kernel's own value and derivatives at one pair of
/// points with different distances per dimension.
fn check_layout<K: Kernel + ?Sized>(
    kernel: &K,
    factors: &[Box<dyn Kernel>],
    scale: f64,
    grid: &RegularGrid,
) -> std::result::Result<(), String> {
    let d = factors.len();
    if kernel.n_params() != d + 1 {
        return Err(format!(
            "the gradient needs the hyperparameters [log ℓ_0, …, log ℓ_{{d−1}}, log σ_f²] \
             ({} of them), the kernel has {} ({:?})",
            d + 1,
            kernel.n_params(),
            kernel.param_names()
        ));
    }
    let x: Vec<f64> = grid.axes().iter().map(|a| a.lo()).collect();
    let z: Vec<f64> = grid
        .axes()
        .iter()
        .enumerate()
        .map(|(l, a)| a.lo() + a.spacing() * (1.0 + 0.37 * l as f64))
        .collect();
    let mut grad = vec![0.0; d + 1];
    let value = kernel.eval_with_grad(&x, &z, &mut grad);
    let mut vals = Vec::with_capacity(d);
    let mut dvals = Vec::with_capacity(d);
    for (l, f) in factors.iter().enumerate() {
        let mut g = vec![0.0; f.n_params()];
        vals.push(f.eval_with_grad(&[x[l]], &[z[l]], &mut g));
        dvals.push(g[0]);
    }
    let close = |a: f64, b: f64| (a - b).abs() <= CHECK_TOL * (a.abs().max(b.abs()) + 1e-300);
    let product: f64 = scale * vals.iter().product::<f64>();
    if !close(value, product) {
        return Err(format!(
            "the kernel ({value}) differs from the product of its separable factors ({product})"
        ));
    }
    for l in 0..d {
        let expected: f64 =
            scale * dvals[l] * (0..d).filter(|&i| i != l).map(|i| vals[i]).product::<f64>();
        if !close(grad[l], expected) {
            return Err(format!(
                "hyperparameter {l} of the kernel is not the log length scale of factor {l} \
                 (derivative {} vs {expected}); the gradient needs [log ℓ_0, …, log σ_f²]",
                grad[l]
            ));
        }
    }
    if !close(grad[d], value) {
        return Err(format!(
            "the last hyperparameter of the kernel is not its log output scale (derivative {} \
             vs value {value})",
            grad[d]
        ));
    }
    Ok(())
}
