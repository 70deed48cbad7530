//! Input checks for the models: shapes, emptiness, finiteness and the noise variance.

use faer::{ColRef, MatRef};
use gp_kernels::{Kernel, KernelError};
use gp_linalg::validate::{check_finite_col, check_finite_mat};

use crate::error::{ModelError, Result};

/// Checks training data for an exact GP: [`check_training_inputs`], finite targets, a finite
/// positive noise.
pub(crate) fn check_training_data<K: Kernel + ?Sized>(
    kernel: &K,
    x: MatRef<'_, f64>,
    y: ColRef<'_, f64>,
    noise_variance: f64,
) -> Result<()> {
    check_training_inputs(kernel, x, y.nrows(), "fitting an exact GP")?;
    check_finite_col(y, "the training targets y").map_err(ModelError::from_finite_check)?;
    check_noise(noise_variance)
}

/// Checks the inputs every model needs: at least one point with at least one coordinate
/// (`context` names the fit in the error), one target per row, the kernel's input dimension
/// equal to the number of columns, finite points and finite kernel hyperparameters. The
/// targets' values are the caller's to check (finite for a Gaussian likelihood, counts or
/// labels for others).
pub(crate) fn check_training_inputs<K: Kernel + ?Sized>(
    kernel: &K,
    x: MatRef<'_, f64>,
    n_targets: usize,
    context: &'static str,
) -> Result<()> {
    let (n, d) = (x.nrows(), x.ncols());
    if n == 0 || d == 0 {
        return Err(ModelError::EmptyData { context, n, d });
    }
    if n_targets != n {
        return Err(ModelError::LengthMismatch {
            context: "training targets (one per row of X)",
            expected: n,
            found: n_targets,
        });
    }
    if kernel.input_dim() != d {
        return Err(ModelError::KernelDim {
            kernel_dim: kernel.input_dim(),
            data_dim: d,
        });
    }
    check_finite_mat(x, "the training points X").map_err(ModelError::from_finite_check)?;
    check_kernel_params(kernel)
}

pub(crate) use crate::core::likelihood::check_noise;

/// Every log hyperparameter of the kernel must be finite (a deserialized kernel is not
/// validated by its constructor, so a negative length scale would show up here as NaN).
pub(crate) fn check_kernel_params<K: Kernel + ?Sized>(kernel: &K) -> Result<()> {
    let names = kernel.param_names();
    for (name, value) in names.into_iter().zip(kernel.log_params()) {
        if !value.is_finite() {
            return Err(KernelError::InvalidHyperparameter {
                name,
                value,
                reason: "the kernel's log hyperparameters must be finite (natural values finite and > 0)",
            }
            .into());
        }
    }
    Ok(())
}

/// Checks a test matrix: `d` columns and finite entries.
pub(crate) fn check_test_points(x_test: MatRef<'_, f64>, d: usize) -> Result<()> {
    if x_test.ncols() != d {
        return Err(ModelError::TestDim {
            expected: d,
            found: x_test.ncols(),
        });
    }
    check_finite_mat(x_test, "the test points").map_err(ModelError::from_finite_check)
}

/// Checks that a grid has one axis per input dimension (`grid_dims = d`).
///
/// Errors: [`ModelError::LengthMismatch`].
pub(crate) fn check_grid_dims(grid_dims: usize, d: usize) -> Result<()> {
    if grid_dims != d {
        return Err(ModelError::LengthMismatch {
            context: "grid axes (one per input dimension)",
            expected: d,
            found: grid_dims,
        });
    }
    Ok(())
}
