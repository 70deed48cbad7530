//! The interpolation matrix `W` stored as an sprs CSR matrix (the alternative to the default
//! factorized [`InterpolationWeights`]).
//!
//! Kept for interoperability (any sprs code can use [`CsrInterpolation::matrix`]) and as the
//! baseline of the factorized-vs-CSR benchmark. `W v` is parallel over rows; `Wᵀ v`
//! ([`TransposeOperator`]) uses the
//! same private-buffer scheme as the factorized type and never forms the transpose.

use faer::{ColMut, ColRef};
use gp_linalg::{LinearOperator, TransposeOperator};
use rayon::prelude::*;
use sprs::CsMat;

use crate::error::{Result, StructuredError};
use crate::interpolation_weights::{transpose_by_blocks, InterpolationWeights, ROW_CHUNK};
use crate::slice_util::{col_as_slice, with_out_slice};

/// `W` as a CSR matrix with the [`LinearOperator`] interface and a transpose product.
#[derive(Debug, Clone)]
pub struct CsrInterpolation {
    mat: CsMat<f64>,
}

impl CsrInterpolation {
    /// Wraps a CSR matrix (any sparse matrix works; it need not come from a grid).
    pub fn new(mat: CsMat<f64>) -> Result<Self> {
        if !mat.is_csr() {
            return Err(StructuredError::InvalidArgument {
                name: "mat",
                reason: "expected a CSR matrix, got CSC; convert with `to_csr()`".into(),
            });
        }
        if mat.indptr().raw_storage().first().copied().unwrap_or(0) != 0 {
            return Err(StructuredError::InvalidArgument {
                name: "mat",
                reason: "row pointers must start at 0 (an owned matrix, not a row-range view)"
                    .into(),
            });
        }
        Ok(Self { mat })
    }

    /// Converts factorized weights to CSR.
    pub fn from_weights(w: &InterpolationWeights) -> Result<Self> {
        Self::new(w.to_csr()?)
    }

    /// The underlying sprs matrix.
    pub fn matrix(&self) -> &CsMat<f64> {
        &self.mat
    }

    /// Bytes of the stored representation (row pointers, column indices, values).
    pub fn storage_bytes(&self) -> usize {
        (self.mat.rows() + 1) * std::mem::size_of::<usize>()
            + self.mat.nnz() * (std::mem::size_of::<usize>() + std::mem::size_of::<f64>())
    }

    fn matvec_slice(&self, x: &[f64], out: &mut [f64]) {
        let indptr = self.mat.indptr();
        let indptr = indptr.raw_storage();
        let (ind, val) = (self.mat.indices(), self.mat.data());
        out.par_chunks_mut(4096).enumerate().for_each(|(c, o)| {
            for (r, oi) in o.iter_mut().enumerate() {
                let i = c * 4096 + r;
                let (a, b) = (indptr[i], indptr[i + 1]);
                *oi = ind[a..b]
                    .iter()
                    .zip(&val[a..b])
                    .map(|(&j, &v)| v * x[j])
                    .sum();
            }
        });
    }
}

impl CsrInterpolation {
    /// `Wᵀ v` into a slice (`v.len() == n`, `out.len() == m`).
    fn scatter_rows(&self, v: &[f64], out: &mut [f64]) {
        let indptr = self.mat.indptr();
        let indptr = indptr.raw_storage();
        let (ind, val) = (self.mat.indices(), self.mat.data());
        transpose_by_blocks(self.mat.rows(), self.mat.cols(), ROW_CHUNK, out, |rows| {
            let (a, b) = (indptr[rows.start], indptr[rows.end]);
            let lo = ind[a..b].iter().copied().min().unwrap_or(0);
            let hi = ind[a..b].iter().copied().max().map_or(0, |h| h + 1);
            let mut buf = vec![0.0; hi.saturating_sub(lo)];
            for i in rows {
                let vi = v[i];
                for k in indptr[i]..indptr[i + 1] {
                    buf[ind[k] - lo] += val[k] * vi;
                }
            }
            (lo, buf)
        });
    }
}

impl LinearOperator for CsrInterpolation {
    fn nrows(&self) -> usize {
        self.mat.rows()
    }
    fn ncols(&self) -> usize {
        self.mat.cols()
    }
    fn matvec(&self, x: ColRef<'_, f64>, out: ColMut<'_, f64>) {
        let mut buf = Vec::new();
        let x = col_as_slice(x, &mut buf);
        with_out_slice(out, |o| self.matvec_slice(x, o));
    }
}

impl TransposeOperator for CsrInterpolation {
    fn matvec_transpose(&self, x: ColRef<'_, f64>, out: ColMut<'_, f64>) {
        let mut buf = Vec::new();
        let x = col_as_slice(x, &mut buf);
        with_out_slice(out, |o| self.scatter_rows(x, o));
    }
}
