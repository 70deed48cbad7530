//! Checked triangular solves (faer) for lower and upper triangular matrices.
//!
//! Only the relevant triangle of the matrix is read. Shapes are checked, and a zero or
//! non-finite diagonal entry gives [`LinalgError::Singular`] instead of silently producing
//! infinities; a non-finite entry elsewhere in the triangle gives
//! [`LinalgError::NonFinite`].
//!
//! ```
//! use faer::mat;
//! use gp_linalg::triangular::solve_lower_triangular;
//!
//! let l = mat![[2.0, 0.0], [1.0, 1.0]];
//! let b = mat![[2.0], [3.0]];
//! let x = solve_lower_triangular(l.as_ref(), b.as_ref())?;
//! assert_eq!((x[(0, 0)], x[(1, 0)]), (1.0, 2.0));
//! # Ok::<(), gp_linalg::LinalgError>(())
//! ```

use faer::linalg::triangular_solve;
use faer::{Mat, MatMut, MatRef};

use crate::error::{LinalgError, Result};
use crate::par::parallelism_for;
use crate::validate::{check_shape, check_square};

/// Checks the shape, the diagonal and the finiteness of the triangle that will be read.
fn check_triangular(
    t: MatRef<'_, f64>,
    b_shape: (usize, usize),
    lower: bool,
    context: &'static str,
) -> Result<()> {
    let n = check_square(t, context)?;
    check_shape(b_shape, (n, b_shape.1), context)?;
    for i in 0..n {
        let v = t[(i, i)];
        if v == 0.0 || !v.is_finite() {
            return Err(LinalgError::Singular {
                context,
                index: i,
                value: v,
            });
        }
    }
    for j in 0..n {
        let rows = if lower { j + 1..n } else { 0..j };
        for i in rows {
            let value = t[(i, j)];
            if !value.is_finite() {
                return Err(LinalgError::NonFinite {
                    context,
                    row: i,
                    col: j,
                    value,
                });
            }
        }
    }
    Ok(())
}

/// Overwrites `b` with `L⁻¹ b` for a lower triangular `L` (its strict upper triangle is
/// ignored).
///
/// Errors with [`LinalgError::NotSquare`], [`LinalgError::ShapeMismatch`],
/// [`LinalgError::Singular`] and [`LinalgError::NonFinite`].
pub fn solve_lower_triangular_in_place(l: MatRef<'_, f64>, b: MatMut<'_, f64>) -> Result<()> {
    check_triangular(l, (b.nrows(), b.ncols()), true, "solve_lower_triangular")?;
    let par = parallelism_for((l.nrows() * l.nrows()) as f64 * b.ncols() as f64);
    triangular_solve::solve_lower_triangular_in_place(l, b, par);
    Ok(())
}

/// Returns `L⁻¹ B` for a lower triangular `L`. Errors as
/// [`solve_lower_triangular_in_place`].
pub fn solve_lower_triangular(l: MatRef<'_, f64>, b: MatRef<'_, f64>) -> Result<Mat<f64>> {
    let mut x = b.to_owned();
    solve_lower_triangular_in_place(l, x.as_mut())?;
    Ok(x)
}

/// Overwrites `b` with `U⁻¹ b` for an upper triangular `U` (its strict lower triangle is
/// ignored).
///
/// Errors with [`LinalgError::NotSquare`], [`LinalgError::ShapeMismatch`],
/// [`LinalgError::Singular`] and [`LinalgError::NonFinite`].
pub fn solve_upper_triangular_in_place(u: MatRef<'_, f64>, b: MatMut<'_, f64>) -> Result<()> {
    check_triangular(u, (b.nrows(), b.ncols()), false, "solve_upper_triangular")?;
    let par = parallelism_for((u.nrows() * u.nrows()) as f64 * b.ncols() as f64);
    triangular_solve::solve_upper_triangular_in_place(u, b, par);
    Ok(())
}

/// Returns `U⁻¹ B` for an upper triangular `U`. Errors as
/// [`solve_upper_triangular_in_place`].
pub fn solve_upper_triangular(u: MatRef<'_, f64>, b: MatRef<'_, f64>) -> Result<Mat<f64>> {
    let mut x = b.to_owned();
    solve_upper_triangular_in_place(u, x.as_mut())?;
    Ok(x)
}
