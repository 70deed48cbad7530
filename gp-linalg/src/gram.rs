//! Gram products `XᵀX` that form only the lower triangle: half the flops of a full product,
//! for the symmetric matrices that are then read through their lower triangle (a Cholesky
//! factorization, a symmetric solve) or mirrored once at the end of a streamed
//! accumulation.
//!
//! ```
//! use faer::mat;
//! use gp_linalg::gram::{add_gram_lower, mirror_lower};
//!
//! let x = mat![[1.0, 2.0], [3.0, 4.0], [5.0, 6.0]];
//! let mut a = faer::Mat::<f64>::zeros(2, 2);
//! add_gram_lower(a.as_mut(), x.as_ref(), faer::Par::Seq)?;
//! mirror_lower(a.as_mut())?;
//! assert_eq!((a[(0, 0)], a[(1, 0)], a[(0, 1)], a[(1, 1)]), (35.0, 44.0, 44.0, 56.0));
//! # Ok::<(), gp_linalg::LinalgError>(())
//! ```

use faer::linalg::matmul::triangular::{matmul, BlockStructure};
use faer::{Accum, MatMut, MatRef, Par};

use crate::error::{LinalgError, Result};

/// Adds `XᵀX` to the lower triangle (diagonal included) of `a` (`p × p` for `X` of
/// `n × p`); the strict upper triangle of `a` is neither read nor written. `n p²` flops
/// (a full product takes `2 n p²`).
///
/// Errors: [`LinalgError::ShapeMismatch`] if `a` is not `p × p`.
pub fn add_gram_lower(a: MatMut<'_, f64>, x: MatRef<'_, f64>, par: Par) -> Result<()> {
    let p = x.ncols();
    if a.nrows() != p || a.ncols() != p {
        return Err(LinalgError::ShapeMismatch {
            context: "add_gram_lower (the Gram matrix has one row and column per column of X)",
            expected: format!("{p}×{p}"),
            found: format!("{}×{}", a.nrows(), a.ncols()),
        });
    }
    matmul(
        a,
        BlockStructure::TriangularLower,
        Accum::Add,
        x.transpose(),
        BlockStructure::Rectangular,
        x,
        BlockStructure::Rectangular,
        1.0,
        par,
    );
    Ok(())
}

/// Copies the strict lower triangle of the square matrix `a` onto its upper triangle, so
/// that a matrix accumulated by [`add_gram_lower`] is stored whole.
///
/// Errors: [`LinalgError::NotSquare`] if `a` is not square.
pub fn mirror_lower(mut a: MatMut<'_, f64>) -> Result<()> {
    let (rows, cols) = (a.nrows(), a.ncols());
    if rows != cols {
        return Err(LinalgError::NotSquare {
            context: "mirror_lower",
            nrows: rows,
            ncols: cols,
        });
    }
    for j in 0..cols {
        for i in j + 1..rows {
            let v = a[(i, j)];
            a[(j, i)] = v;
        }
    }
    Ok(())
}
