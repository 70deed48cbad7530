//! Selected columns of `K Q S_pᵀ`, with `K` a row-partitioned Khatri–Rao product,
//! `Q = Q_1 ⊗ … ⊗ Q_d` a Kronecker product and `S_p` the selection of `p` multi-indices
//! (Evans & Nair 2018, Theorem 2):
//!
//! ```text
//! (K Q S_pᵀ)[:, j] = ⊙_l (F_l Q_l)[:, k_{j,l}]      for the j-th selected multi-index k_j
//! ```
//!
//! because each entry is an inner product of two Kronecker-structured vectors. Only the
//! distinct selected columns of each `Q_l` are multiplied (`C_l = F_l Q_l[:, uniq_l]`,
//! `O(n m_l c_l)` with `c_l ≤ m_l` distinct indices), then each output column is a Hadamard
//! product of `d` gathered columns: `O(d n p)` in total after the per-dimension products.
//! `m = Π m_l` never appears, so `d = 30` (`m = 10^30`) is fine.
//!
//! In high dimension the product of `d` factors can overflow or underflow;
//! [`khatri_rao_kronecker_columns_log`] returns `ln |·|` and the sign instead (sum of the
//! `d` logarithms, product of the signs).

use faer::reborrow::ReborrowMut;
use faer::{Mat, MatRef};
use gp_linalg::validate::check_finite_mat;
use rayon::prelude::*;

use crate::error::{Result, StructuredError};
use crate::khatri_rao::RowKhatriRao;
use crate::slice_util::with_out_slice;

/// Entries of a matrix as `ln |a|` and `sign(a) ∈ {−1, 0, 1}`; `a = sign · exp(log_abs)`.
/// A zero entry has sign 0 and `log_abs = −∞`.
#[derive(Debug, Clone, PartialEq)]
pub struct LogSignMatrix {
    /// `ln |a_ij|` (`−∞` for zeros).
    pub log_abs: Mat<f64>,
    /// `sign(a_ij)` as −1.0, 0.0 or 1.0.
    pub sign: Mat<f64>,
}

impl LogSignMatrix {
    /// The values `sign · exp(log_abs)` (may overflow to ±∞ or underflow to 0).
    pub fn to_values(&self) -> Mat<f64> {
        Mat::from_fn(self.log_abs.nrows(), self.log_abs.ncols(), |i, j| {
            let s = self.sign[(i, j)];
            if s == 0.0 {
                0.0
            } else {
                s * self.log_abs[(i, j)].exp()
            }
        })
    }
}

/// Per-dimension products `C_l = F_l Q_l[:, uniq_l]` and, per selected column, the position
/// of its index among `uniq_l`.
struct Factors {
    c: Vec<Mat<f64>>,
    pos: Vec<Vec<usize>>,
}

fn prepare<S: AsRef<[usize]>>(
    kr: &RowKhatriRao,
    q: &[MatRef<'_, f64>],
    selection: &[S],
) -> Result<Factors> {
    let d = kr.dims();
    if q.len() != d {
        return Err(StructuredError::InvalidArgument {
            name: "q",
            reason: format!(
                "need one Kronecker factor per Khatri-Rao factor ({d}), got {}",
                q.len()
            ),
        });
    }
    for (l, ql) in q.iter().enumerate() {
        if ql.nrows() != kr.factor_sizes()[l] {
            return Err(StructuredError::InvalidArgument {
                name: "q",
                reason: format!(
                    "Q_{l} has {} rows but Khatri-Rao factor {l} has {} columns",
                    ql.nrows(),
                    kr.factor_sizes()[l]
                ),
            });
        }
        check_finite_mat(*ql, "Kronecker factor Q_l")?;
    }
    for (j, s) in selection.iter().enumerate() {
        let s = s.as_ref();
        if s.len() != d || s.iter().zip(q).any(|(&k, ql)| k >= ql.ncols()) {
            return Err(StructuredError::InvalidArgument {
                name: "selection",
                reason: format!(
                    "selected multi-index {j} is {s:?}; it needs {d} entries, entry l below the \
                     number of columns of Q_l ({:?})",
                    q.iter().map(|ql| ql.ncols()).collect::<Vec<_>>()
                ),
            });
        }
    }
    let mut c = Vec::with_capacity(d);
    let mut pos = Vec::with_capacity(d);
    for (l, ql) in q.iter().enumerate() {
        let mut uniq: Vec<usize> = selection.iter().map(|s| s.as_ref()[l]).collect();
        uniq.sort_unstable();
        uniq.dedup();
        let qsel = Mat::from_fn(ql.nrows(), uniq.len(), |i, j| ql[(i, uniq[j])]);
        c.push(&kr.factors()[l] * &qsel);
        pos.push(
            selection
                .iter()
                .map(|s| uniq.partition_point(|&u| u < s.as_ref()[l]))
                .collect(),
        );
    }
    Ok(Factors { c, pos })
}

/// Columns `j = 0 … p−1` of `K Q S_pᵀ` (`n × p`), where `selection[j]` is the multi-index
/// `(k_1, …, k_d)` of column `j` and `Q = Q_1 ⊗ … ⊗ Q_d` (`Q_l` has `m_l` rows).
///
/// Errors: a factor count or shape that does not match `kr`, a non-finite `Q_l`, or a selected
/// index out of range.
pub fn khatri_rao_kronecker_columns<S: AsRef<[usize]> + Sync>(
    kr: &RowKhatriRao,
    q: &[MatRef<'_, f64>],
    selection: &[S],
) -> Result<Mat<f64>> {
    let f = prepare(kr, q, selection)?;
    let n = kr.num_rows();
    let mut out = Mat::<f64>::zeros(n, selection.len());
    out.as_mut()
        .par_col_chunks_mut(1)
        .enumerate()
        .for_each(|(j, mut col)| {
            // Owned matrices: every column is contiguous, so the products run on slices
            // (the strided faer iterators do not vectorize).
            with_out_slice(col.rb_mut().col_mut(0), |out| {
                let mut factors = f.c.iter().zip(&f.pos);
                if let Some((c0, p0)) = factors.next() {
                    out.copy_from_slice(c0.col_as_slice(p0[j]));
                }
                for (cl, pl) in factors {
                    out.iter_mut()
                        .zip(cl.col_as_slice(pl[j]))
                        .for_each(|(o, s)| *o *= s);
                }
            });
        });
    Ok(out)
}

/// As [`khatri_rao_kronecker_columns`], in the log domain: `Σ_l ln |(F_l Q_l)[:, k_l]|` and
/// `Π_l sign(…)`, which neither overflows nor underflows for any `d`.
pub fn khatri_rao_kronecker_columns_log<S: AsRef<[usize]> + Sync>(
    kr: &RowKhatriRao,
    q: &[MatRef<'_, f64>],
    selection: &[S],
) -> Result<LogSignMatrix> {
    let f = prepare(kr, q, selection)?;
    let n = kr.num_rows();
    let logs: Vec<Mat<f64>> =
        f.c.iter()
            .map(|c| Mat::from_fn(c.nrows(), c.ncols(), |i, j| c[(i, j)].abs().ln()))
            .collect();
    let signs: Vec<Mat<f64>> =
        f.c.iter()
            .map(|c| {
                Mat::from_fn(c.nrows(), c.ncols(), |i, j| {
                    let v = c[(i, j)];
                    if v > 0.0 {
                        1.0
                    } else if v < 0.0 {
                        -1.0
                    } else {
                        0.0
                    }
                })
            })
            .collect();
    let p = selection.len();
    let mut log_abs = Mat::<f64>::zeros(n, p);
    let mut sign = Mat::<f64>::ones(n, p);
    log_abs
        .as_mut()
        .par_col_chunks_mut(1)
        .zip(sign.as_mut().par_col_chunks_mut(1))
        .enumerate()
        .for_each(|(j, (mut la, mut sg))| {
            with_out_slice(la.rb_mut().col_mut(0), |la| {
                for (lg, pl) in logs.iter().zip(&f.pos) {
                    la.iter_mut()
                        .zip(lg.col_as_slice(pl[j]))
                        .for_each(|(o, s)| *o += s);
                }
            });
            with_out_slice(sg.rb_mut().col_mut(0), |sg| {
                for (sl, pl) in signs.iter().zip(&f.pos) {
                    sg.iter_mut()
                        .zip(sl.col_as_slice(pl[j]))
                        .for_each(|(o, s)| *o *= s);
                }
            });
        });
    Ok(LogSignMatrix { log_abs, sign })
}
