//! A sparse CSR matrix (sprs) as a [`LinearOperator`].

use faer::reborrow::ReborrowMut;
use faer::{Col, ColMut, ColRef, Mat, MatMut, MatRef};
use rayon::prelude::*;
use sprs::{CsMat, TriMat};

use crate::error::{LinalgError, Result};
use crate::operator::LinearOperator;
use crate::transpose::TransposeOperator;
use crate::validate::check_shape;
use crate::vector::{col_slice, with_col_slice_mut};

/// Matrices with at least this many rows multiply in parallel (rayon over chunks of
/// [`SPARSE_ROW_CHUNK`] rows); smaller ones sequentially.
///
/// A sparse product does about two flops per stored entry and reads 12 bytes for it, so it
/// is memory bound; below this size the rayon overhead is not repaid on the 2-core
/// reference machine.
pub const SPARSE_PARALLEL_ROWS: usize = 50_000;

/// Rows per rayon task in a parallel sparse product.
pub const SPARSE_ROW_CHUNK: usize = 4096;

/// A sparse matrix in compressed sparse row (CSR) form.
///
/// Products are hand-written CSR loops, parallel over row chunks for matrices with at
/// least [`SPARSE_PARALLEL_ROWS`] rows. `Aᵀ x` is available through
/// [`TransposeOperator`] without forming the transpose.
///
/// ```
/// use faer::col;
/// use gp_linalg::{LinearOperator, SparseOperator, TransposeOperator};
///
/// // [[1, 0, 2],
/// //  [0, 3, 0]]
/// let a = SparseOperator::from_triplets(2, 3, &[0, 0, 1], &[0, 2, 1], &[1.0, 2.0, 3.0])?;
/// let y = a.apply(col![1.0, 1.0, 1.0].as_ref())?;
/// assert_eq!((y[0], y[1]), (3.0, 3.0));
/// let z = a.apply_transpose(col![1.0, 1.0].as_ref())?;
/// assert_eq!((z[0], z[1], z[2]), (1.0, 3.0, 2.0));
/// # Ok::<(), gp_linalg::LinalgError>(())
/// ```
#[derive(Debug, Clone)]
pub struct SparseOperator {
    a: CsMat<f64>,
}

impl SparseOperator {
    /// Wraps a sprs matrix, converting CSC input to CSR.
    ///
    /// Errors with [`LinalgError::NonFinite`] (naming row and column) if a stored value is
    /// NaN or infinite.
    pub fn new(a: CsMat<f64>) -> Result<Self> {
        let a = if a.is_csr() { a } else { a.to_csr() };
        let ip = a.indptr();
        for row in 0..a.rows() {
            for p in ip.outer_inds_sz(row) {
                let value = a.data()[p];
                if !value.is_finite() {
                    return Err(LinalgError::NonFinite {
                        context: "the sparse matrix",
                        row,
                        col: a.indices()[p],
                        value,
                    });
                }
            }
        }
        Ok(Self { a })
    }

    /// Builds an `nrows×ncols` matrix from coordinate triplets `(rows[k], cols[k], vals[k])`;
    /// repeated coordinates are summed.
    ///
    /// Errors with [`LinalgError::ShapeMismatch`] if the three slices differ in length,
    /// [`LinalgError::InvalidArgument`] if an index is out of range, and
    /// [`LinalgError::NonFinite`] if a value is NaN or infinite.
    pub fn from_triplets(
        nrows: usize,
        ncols: usize,
        rows: &[usize],
        cols: &[usize],
        vals: &[f64],
    ) -> Result<Self> {
        check_shape(
            (cols.len(), 1),
            (rows.len(), 1),
            "SparseOperator::from_triplets (cols)",
        )?;
        check_shape(
            (vals.len(), 1),
            (rows.len(), 1),
            "SparseOperator::from_triplets (vals)",
        )?;
        for (k, (&r, &c)) in rows.iter().zip(cols).enumerate() {
            if r >= nrows || c >= ncols {
                return Err(LinalgError::InvalidArgument {
                    name: "rows/cols",
                    reason: format!(
                        "triplet {k} is at ({r}, {c}), outside the {nrows}×{ncols} matrix"
                    ),
                });
            }
            if !vals[k].is_finite() {
                return Err(LinalgError::NonFinite {
                    context: "the sparse matrix triplets",
                    row: r,
                    col: c,
                    value: vals[k],
                });
            }
        }
        let tri =
            TriMat::from_triplets((nrows, ncols), rows.to_vec(), cols.to_vec(), vals.to_vec());
        Self::new(tri.to_csr())
    }

    /// The wrapped CSR matrix.
    pub fn matrix(&self) -> &CsMat<f64> {
        &self.a
    }

    /// Returns the wrapped CSR matrix.
    pub fn into_inner(self) -> CsMat<f64> {
        self.a
    }

    /// Number of stored entries.
    pub fn nnz(&self) -> usize {
        self.a.nnz()
    }

    /// `out[i] = Σ_p data[p] x[indices[p]]` for the rows `first..first + out.len()`.
    fn rows_times(&self, first: usize, x: &[f64], out: &mut [f64]) {
        let ip = self.a.indptr();
        let (indices, data) = (self.a.indices(), self.a.data());
        for (r, o) in out.iter_mut().enumerate() {
            let range = ip.outer_inds_sz(first + r);
            let mut acc = 0.0;
            for (&c, &v) in indices[range.clone()].iter().zip(&data[range]) {
                acc += v * x[c];
            }
            *o = acc;
        }
    }

    /// `out = A x` over slices (lengths already checked).
    fn matvec_slices(&self, x: &[f64], out: &mut [f64]) {
        if self.a.rows() < SPARSE_PARALLEL_ROWS {
            self.rows_times(0, x, out);
        } else {
            out.par_chunks_mut(SPARSE_ROW_CHUNK)
                .enumerate()
                .for_each(|(k, chunk)| self.rows_times(k * SPARSE_ROW_CHUNK, x, chunk));
        }
    }
}

impl LinearOperator for SparseOperator {
    fn nrows(&self) -> usize {
        self.a.rows()
    }
    fn ncols(&self) -> usize {
        self.a.cols()
    }
    fn matvec(&self, x: ColRef<'_, f64>, out: ColMut<'_, f64>) {
        let xs = col_slice(x);
        with_col_slice_mut(out, |o| self.matvec_slices(&xs, o));
    }
    fn matmat(&self, x: MatRef<'_, f64>, mut out: MatMut<'_, f64>) {
        for j in 0..x.ncols() {
            self.matvec(x.col(j), out.rb_mut().col_mut(j));
        }
    }
    fn diagonal(&self) -> Option<Col<f64>> {
        let n = self.a.rows().min(self.a.cols());
        let ip = self.a.indptr();
        let (indices, data) = (self.a.indices(), self.a.data());
        Some(Col::from_fn(n, |i| {
            let range = ip.outer_inds_sz(i);
            indices[range.clone()]
                .iter()
                .zip(&data[range])
                .filter(|(&c, _)| c == i)
                .map(|(_, &v)| v)
                .sum()
        }))
    }
    fn to_dense(&self) -> Mat<f64> {
        let mut out = Mat::zeros(self.a.rows(), self.a.cols());
        let ip = self.a.indptr();
        for row in 0..self.a.rows() {
            for p in ip.outer_inds_sz(row) {
                out[(row, self.a.indices()[p])] += self.a.data()[p];
            }
        }
        out
    }
}

/// `Aᵀ x` as a sequential scatter over the rows (the transpose is never formed).
impl TransposeOperator for SparseOperator {
    fn matvec_transpose(&self, x: ColRef<'_, f64>, out: ColMut<'_, f64>) {
        let xs = col_slice(x);
        let ip = self.a.indptr();
        let (indices, data) = (self.a.indices(), self.a.data());
        with_col_slice_mut(out, |o| {
            o.fill(0.0);
            for (row, &xr) in xs.iter().enumerate() {
                let range = ip.outer_inds_sz(row);
                for (&c, &v) in indices[range.clone()].iter().zip(&data[range]) {
                    o[c] += v * xr;
                }
            }
        });
    }
}
