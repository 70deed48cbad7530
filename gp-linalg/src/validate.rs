//! Input checks shared by every crate of the workspace: finiteness and shapes.

use faer::{ColRef, MatRef};

use crate::error::{shape_str, LinalgError, Result};

/// Returns an error naming the first non-finite entry of `m`, if any.
pub fn check_finite_mat(m: MatRef<'_, f64>, context: &'static str) -> Result<()> {
    for j in 0..m.ncols() {
        for i in 0..m.nrows() {
            let value = m[(i, j)];
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

/// Returns an error naming the first non-finite entry of `v`, if any.
pub fn check_finite_col(v: ColRef<'_, f64>, context: &'static str) -> Result<()> {
    check_finite_mat(v.as_mat(), context)
}

/// Returns an error naming the first non-finite entry of `v`, if any.
pub fn check_finite_slice(v: &[f64], context: &'static str) -> Result<()> {
    match v.iter().position(|x| !x.is_finite()) {
        Some(row) => Err(LinalgError::NonFinite {
            context,
            row,
            col: 0,
            value: v[row],
        }),
        None => Ok(()),
    }
}

/// Checks that a matrix has the expected shape.
pub fn check_shape(
    found: (usize, usize),
    expected: (usize, usize),
    context: &'static str,
) -> Result<()> {
    if found == expected {
        Ok(())
    } else {
        Err(LinalgError::ShapeMismatch {
            context,
            expected: shape_str(expected.0, expected.1),
            found: shape_str(found.0, found.1),
        })
    }
}

/// Checks that a matrix is square and returns its order.
pub fn check_square(m: MatRef<'_, f64>, context: &'static str) -> Result<usize> {
    if m.nrows() == m.ncols() {
        Ok(m.nrows())
    } else {
        Err(LinalgError::NotSquare {
            context,
            nrows: m.nrows(),
            ncols: m.ncols(),
        })
    }
}

/// Returns an error naming the first entry of `v` that is not strictly positive, if any.
///
/// NaN counts as not positive; check finiteness first for the more precise
/// [`LinalgError::NonFinite`].
pub fn check_positive_col(v: ColRef<'_, f64>, context: &'static str) -> Result<()> {
    match (0..v.nrows()).find(|&i| v[i] <= 0.0 || v[i].is_nan()) {
        Some(index) => Err(LinalgError::NotPositive {
            context,
            index,
            value: v[index],
        }),
        None => Ok(()),
    }
}
