//! Row-partitioned Khatri–Rao products `K = F_1 ∗ F_2 ∗ … ∗ F_d` (`n × m`, `m = Π m_l`):
//! row `i` of `K` is the Kronecker product `F_1[i, :] ⊗ … ⊗ F_d[i, :]` of the rows `i` of the
//! per-dimension factors `F_l` (`n × m_l`), in the C / Kronecker column order of
//! [`crate::grid`] (dimension 1 outermost).
//!
//! Only the factors are stored (`O(n Σ m_l)` memory); the `n × m` matrix is never formed.
//!
//! Costs: [`matvec`](gp_linalg::LinearOperator::matvec) contracts `x`, viewed as an
//! `m_1 × … × m_d` tensor, with each row's factors one dimension at a time (last first):
//! `m + m/m_d + …` ≤ `2m` multiply-adds per row, so `O(n·m)` per product, which is the worst
//! case for a general `x`; the transpose product costs the same. When `x = v_1 ⊗ … ⊗ v_d` is
//! itself a Kronecker product, [`RowKhatriRao::apply_kronecker`] uses
//! `K x = (F_1 v_1) ⊙ … ⊙ (F_d v_d)` at `O(n Σ m_l)`.
//!
//! `m` can be astronomically large (GRIEF uses `m = 10^30` and more): the constructor accepts
//! any sizes, [`RowKhatriRao::num_cols`] is `None` when `m` overflows `usize`, and the
//! [`LinearOperator`] `ncols` then saturates at `usize::MAX` (no vector of that length can be
//! passed, so only the structured routines apply).

use std::sync::OnceLock;

use faer::{Col, ColMut, ColRef, Mat, MatMut, MatRef};
use gp_linalg::validate::{check_finite_mat, check_shape};
use gp_linalg::{LinalgError, LinearOperator, Result as LinalgResult, TransposeOperator};
use rayon::prelude::*;

use crate::error::{Result, StructuredError};
use crate::interpolation_weights::transpose_by_blocks;
use crate::slice_util::{col_as_slice, with_out_slice};

/// Rows per parallel task of `K x`, and the fewest rows of a block of `Kᵀ v` (a row costs
/// `O(m)`, so blocks of a few hundred rows already pay for their private `m`-vector).
const ROW_CHUNK: usize = 256;

/// A row-partitioned Khatri–Rao product of `d` factors `F_l` (`n × m_l`).
#[derive(Debug, Clone)]
pub struct RowKhatriRao {
    factors: Vec<Mat<f64>>,
    /// Row-major copies of the factors (`n × m_l`), for contiguous row access by the dense
    /// products; made on their first use, since the structured routines (GRIEF's `Φ` by
    /// [`khatri_rao_kronecker_columns`](crate::khatri_rao_kronecker_columns)) read the
    /// column-major factors only, and the copies were a quarter of GRIEF's `Φ` build at
    /// `n = 10⁴`, `d = 10`, `m_l = 80` (64 MB, page-faulted).
    rows: OnceLock<Vec<Vec<f64>>>,
    sizes: Vec<usize>,
    n: usize,
    m: Option<usize>,
}

impl RowKhatriRao {
    /// The product of `factors` (at least one, all with the same number of rows, each with at
    /// least one column, all entries finite).
    pub fn new(factors: Vec<Mat<f64>>) -> Result<Self> {
        let first = factors
            .first()
            .ok_or_else(|| StructuredError::InvalidArgument {
                name: "factors",
                reason: "a Khatri-Rao product needs at least one factor".into(),
            })?;
        let n = first.nrows();
        for (l, f) in factors.iter().enumerate() {
            if f.nrows() != n || f.ncols() == 0 {
                return Err(StructuredError::InvalidArgument {
                    name: "factors",
                    reason: format!(
                        "factor {l} is {}×{}, but every factor needs {n} rows (those of factor 0) and at least one column",
                        f.nrows(),
                        f.ncols()
                    ),
                });
            }
            check_finite_mat(f.as_ref(), "Khatri-Rao factor")?;
        }
        let sizes: Vec<usize> = factors.iter().map(|f| f.ncols()).collect();
        let m = sizes.iter().try_fold(1usize, |a, &s| a.checked_mul(s));
        Ok(Self {
            factors,
            rows: OnceLock::new(),
            sizes,
            n,
            m,
        })
    }

    /// The factors `F_l`.
    pub fn factors(&self) -> &[Mat<f64>] {
        &self.factors
    }

    /// Number of factors `d`.
    pub fn dims(&self) -> usize {
        self.sizes.len()
    }

    /// Columns per factor `m_l`.
    pub fn factor_sizes(&self) -> &[usize] {
        &self.sizes
    }

    /// Number of rows `n`.
    pub fn num_rows(&self) -> usize {
        self.n
    }

    /// Number of columns `m = Π m_l`, or `None` if it overflows `usize`.
    pub fn num_cols(&self) -> Option<usize> {
        self.m
    }

    /// `ln m = Σ_l ln m_l` (finite for any number of factors).
    pub fn ln_num_cols(&self) -> f64 {
        self.sizes.iter().map(|&s| (s as f64).ln()).sum()
    }

    /// `m`, or the error that says it overflows `usize` (the [`TransposeOperator`] entry
    /// points report it in `gp-linalg`'s error type).
    fn m_linalg(&self, context: &'static str) -> LinalgResult<usize> {
        self.m.ok_or_else(|| LinalgError::InvalidArgument {
            name: context,
            reason: format!(
                "the product has m = Π {:?} columns, which overflows usize; only the structured \
                 routines (apply_kronecker, khatri_rao_kronecker_columns) apply",
                self.sizes
            ),
        })
    }

    /// Row `i` of factor `l`.
    fn frow(&self, l: usize, i: usize) -> &[f64] {
        let s = self.sizes[l];
        &self.row_major()[l][i * s..(i + 1) * s]
    }

    /// The row-major copies of the factors, made on the first call.
    fn row_major(&self) -> &[Vec<f64>] {
        self.rows.get_or_init(|| {
            self.factors
                .iter()
                .map(|f| {
                    let mut r = vec![0.0; self.n * f.ncols()];
                    for j in 0..f.ncols() {
                        for i in 0..self.n {
                            r[i * f.ncols() + j] = f[(i, j)];
                        }
                    }
                    r
                })
                .collect()
        })
    }

    /// `(K x)_i` for one row, contracting dimension by dimension (last first).
    fn row_dot(&self, i: usize, x: &[f64], a: &mut Vec<f64>, b: &mut Vec<f64>) -> f64 {
        let d = self.dims();
        let mut cur: &[f64] = x;
        for l in (0..d).rev() {
            let f = self.frow(l, i);
            let ml = f.len();
            let outer = cur.len() / ml;
            b.clear();
            b.extend(
                cur.chunks_exact(ml)
                    .map(|blk| blk.iter().zip(f).map(|(u, v)| u * v).sum::<f64>()),
            );
            debug_assert_eq!(b.len(), outer);
            std::mem::swap(a, b);
            cur = a.as_slice();
        }
        cur[0]
    }

    fn matvec_slice(&self, x: &[f64], out: &mut [f64]) {
        out.par_chunks_mut(ROW_CHUNK)
            .enumerate()
            .for_each(|(c, o)| {
                let (mut a, mut b) = (Vec::new(), Vec::new());
                for (r, oi) in o.iter_mut().enumerate() {
                    *oi = self.row_dot(c * ROW_CHUNK + r, x, &mut a, &mut b);
                }
            });
    }

    /// Writes the Kronecker product of the rows `i` of the factors, times `scale`, added into
    /// `out` (length `m`).
    fn add_row_kron(&self, i: usize, scale: f64, out: &mut [f64], tmp: &mut Vec<f64>) {
        tmp.clear();
        tmp.push(scale);
        for l in 0..self.dims() {
            let f = self.frow(l, i);
            let prev = std::mem::take(tmp);
            tmp.reserve(prev.len() * f.len());
            for p in &prev {
                tmp.extend(f.iter().map(|v| p * v));
            }
        }
        for (o, t) in out.iter_mut().zip(tmp.iter()) {
            *o += t;
        }
    }

    /// `K (v_1 ⊗ … ⊗ v_d) = (F_1 v_1) ⊙ … ⊙ (F_d v_d)` in `O(n Σ m_l)`, for any `m`.
    pub fn apply_kronecker(&self, vs: &[ColRef<'_, f64>]) -> Result<Col<f64>> {
        if vs.len() != self.dims() {
            return Err(StructuredError::InvalidArgument {
                name: "vs",
                reason: format!(
                    "need one vector per factor ({}), got {}",
                    self.dims(),
                    vs.len()
                ),
            });
        }
        let mut out = Col::<f64>::ones(self.n);
        for (l, v) in vs.iter().enumerate() {
            check_shape(
                (v.nrows(), 1),
                (self.sizes[l], 1),
                "RowKhatriRao::apply_kronecker",
            )?;
            let fv = &self.factors[l] * v;
            out.iter_mut().zip(fv.iter()).for_each(|(o, f)| *o *= f);
        }
        Ok(out)
    }
}

impl RowKhatriRao {
    /// `Kᵀ v` into `out` (`v.len() == n`, `out.len() == m`), `O(n·m)`.
    ///
    /// The rows are cut into a fixed number of blocks (as the interpolation's `Wᵀ v`), each
    /// summed into a private `m`-vector and the vectors added in block order: the
    /// summation order, and so the result to the last bit, does not depend on the thread
    /// count (splitting by thread count and merging with a rayon `reduce` made it depend on
    /// both the count and the scheduling).
    fn transpose_into(&self, v: &[f64], out: &mut [f64]) {
        let m = out.len();
        transpose_by_blocks(self.n, m, ROW_CHUNK, out, |rows| {
            let mut acc = vec![0.0; m];
            let mut tmp = Vec::new();
            for (i, &vi) in rows.clone().zip(&v[rows]) {
                self.add_row_kron(i, vi, &mut acc, &mut tmp);
            }
            (0, acc)
        });
    }
}

impl LinearOperator for RowKhatriRao {
    fn nrows(&self) -> usize {
        self.n
    }

    /// `m`, saturating at `usize::MAX` when `Π m_l` overflows.
    fn ncols(&self) -> usize {
        self.m.unwrap_or(usize::MAX)
    }

    fn matvec(&self, x: ColRef<'_, f64>, out: ColMut<'_, f64>) {
        let mut buf = Vec::new();
        let x = col_as_slice(x, &mut buf);
        with_out_slice(out, |o| self.matvec_slice(x, o));
    }

    fn matmat(&self, x: MatRef<'_, f64>, mut out: MatMut<'_, f64>) {
        // Columns of x as contiguous slices, then rows in parallel, each against every column.
        let cols: Vec<Vec<f64>> = x.col_iter().map(|c| c.iter().copied().collect()).collect();
        let n = self.n;
        let mut res = vec![0.0; n * cols.len()];
        res.par_chunks_mut(cols.len().max(1))
            .enumerate()
            .for_each(|(i, r)| {
                let (mut a, mut b) = (Vec::new(), Vec::new());
                for (rv, c) in r.iter_mut().zip(&cols) {
                    *rv = self.row_dot(i, c, &mut a, &mut b);
                }
            });
        for (j, _) in cols.iter().enumerate() {
            for i in 0..n {
                out[(i, j)] = res[i * cols.len() + j];
            }
        }
    }
}

/// `Kᵀ v` in `O(n·m)`; needs `m` to fit in `usize` (the checked entry points say so when it
/// does not, instead of reporting a shape mismatch against `usize::MAX`).
impl TransposeOperator for RowKhatriRao {
    fn matvec_transpose(&self, x: ColRef<'_, f64>, out: ColMut<'_, f64>) {
        let mut buf = Vec::new();
        let x = col_as_slice(x, &mut buf);
        with_out_slice(out, |o| self.transpose_into(x, o));
    }
    fn apply_transpose(&self, x: ColRef<'_, f64>) -> LinalgResult<Col<f64>> {
        let m = self.m_linalg("RowKhatriRao::apply_transpose")?;
        let mut out = Col::zeros(m);
        self.apply_transpose_into(x, out.as_mut())?;
        Ok(out)
    }
    fn apply_transpose_into(&self, x: ColRef<'_, f64>, out: ColMut<'_, f64>) -> LinalgResult<()> {
        self.m_linalg("RowKhatriRao::apply_transpose")?;
        check_shape(
            (x.nrows(), 1),
            (self.n, 1),
            "RowKhatriRao::apply_transpose (x)",
        )?;
        check_shape(
            (out.nrows(), 1),
            (self.ncols(), 1),
            "RowKhatriRao::apply_transpose (out)",
        )?;
        self.matvec_transpose(x, out);
        Ok(())
    }
    fn apply_transpose_block(&self, x: MatRef<'_, f64>) -> LinalgResult<Mat<f64>> {
        let m = self.m_linalg("RowKhatriRao::apply_transpose_block")?;
        check_shape(
            (x.nrows(), x.ncols()),
            (self.n, x.ncols()),
            "RowKhatriRao::apply_transpose_block",
        )?;
        let mut out = Mat::zeros(m, x.ncols());
        self.matmat_transpose(x, out.as_mut());
        Ok(out)
    }
}
