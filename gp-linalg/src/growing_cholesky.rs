//! A Cholesky factor grown one row at a time: `A_{j+1} = [[A_j, a], [aᵀ, α]]` gives
//! `L_{j+1} = [[L_j, 0], [lᵀ, d]]` with `L_j l = a`, `d = √(α − ‖l‖²)`, in `O(j²)` instead of
//! the `O(j³)` of a new factorization. Krylov methods that border a Gram matrix at every
//! step (FOM, KMCG) keep their factors this way.

use faer::Mat;

use crate::error::{LinalgError, Result};

/// A lower-triangular Cholesky factor `L` (`A = L Lᵀ`) stored packed by rows and grown by
/// bordering ([`push`](Self::push)).
///
/// ```
/// use gp_linalg::GrowingCholesky;
///
/// // A = [[4, 2], [2, 3]], one column at a time (the diagonal entry last).
/// let mut l = GrowingCholesky::new();
/// l.push(&[4.0])?;
/// l.push(&[2.0, 3.0])?;
/// let mut x = vec![8.0, 7.0];
/// l.solve_in_place(&mut x)?; // A x = [8, 7]
/// assert!((x[0] - 1.25).abs() < 1e-15 && (x[1] - 1.5).abs() < 1e-15);
/// assert!((l.log_det() - 8f64.ln()).abs() < 1e-15);
/// # Ok::<(), gp_linalg::LinalgError>(())
/// ```
#[derive(Debug, Clone, Default, PartialEq)]
pub struct GrowingCholesky {
    /// Row `i` of `L` occupies `packed[i(i+1)/2 .. (i+1)(i+2)/2]`.
    packed: Vec<f64>,
    dim: usize,
}

impl GrowingCholesky {
    /// An empty factor (order 0).
    pub fn new() -> Self {
        Self::default()
    }

    /// Order `j` of the factor.
    pub fn dim(&self) -> usize {
        self.dim
    }

    /// Row `i` of `L` (its `i + 1` entries up to the diagonal).
    ///
    /// Panics if `i ≥ dim` (an indexing bug in the caller, not a user input).
    pub fn row(&self, i: usize) -> &[f64] {
        let start = i * (i + 1) / 2;
        &self.packed[start..start + i + 1]
    }

    /// Borders the factor with the new last column of `A`: `column` holds `A[0..=j, j]`
    /// (`dim + 1` entries, the diagonal last).
    ///
    /// Errors (the factor is left unchanged): [`LinalgError::ShapeMismatch`] for a column
    /// of the wrong length, [`LinalgError::BorderBreakdown`] when the new pivot
    /// `a_jj − ‖L_j⁻¹ a‖²` is not positive or not finite.
    pub fn push(&mut self, column: &[f64]) -> Result<()> {
        let j = self.dim;
        if column.len() != j + 1 {
            return Err(LinalgError::ShapeMismatch {
                context: "GrowingCholesky::push (the new column holds dim + 1 entries)",
                expected: format!("{}", j + 1),
                found: format!("{}", column.len()),
            });
        }
        let mut l = column[..j].to_vec();
        self.forward(&mut l);
        let pivot = column[j] - l.iter().map(|v| v * v).sum::<f64>();
        if !(pivot.is_finite() && pivot > 0.0) || l.iter().any(|v| !v.is_finite()) {
            return Err(LinalgError::BorderBreakdown {
                order: j + 1,
                previous: j,
                pivot,
            });
        }
        self.packed.extend_from_slice(&l);
        self.packed.push(pivot.sqrt());
        self.dim += 1;
        Ok(())
    }

    /// Drops the rows after the first `k` (the factor of the leading `k × k` block).
    pub fn truncate(&mut self, k: usize) {
        if k < self.dim {
            self.packed.truncate(k * (k + 1) / 2);
            self.dim = k;
        }
    }

    /// `log det A = 2 Σ log L_ii`.
    pub fn log_det(&self) -> f64 {
        2.0 * (0..self.dim).map(|i| self.row(i)[i].ln()).sum::<f64>()
    }

    /// The factor `L` as a dense `j × j` matrix.
    pub fn factor(&self) -> Mat<f64> {
        Mat::from_fn(self.dim, self.dim, |i, k| {
            if k <= i {
                self.row(i)[k]
            } else {
                0.0
            }
        })
    }

    /// The next entry of `L⁻¹ b` when its first `i` entries `x[..i]` are known:
    /// `(b_i − Σ_{k<i} L_ik x_k) / L_ii`. Lets a caller extend `L⁻¹ B` by one row per
    /// step after each [`push`](Self::push) instead of solving again.
    ///
    /// Panics if `i ≥ dim` or `x` is shorter than `i` (caller bugs).
    pub fn forward_entry(&self, i: usize, x: &[f64], b_i: f64) -> f64 {
        let row = self.row(i);
        let s: f64 = row[..i].iter().zip(&x[..i]).map(|(l, v)| l * v).sum();
        (b_i - s) / row[i]
    }

    fn forward(&self, b: &mut [f64]) {
        for i in 0..b.len() {
            b[i] = self.forward_entry(i, b, b[i]);
        }
    }

    fn backward(&self, b: &mut [f64]) {
        for i in (0..b.len()).rev() {
            let row = self.row(i);
            b[i] /= row[i];
            let xi = b[i];
            for (bk, lik) in b[..i].iter_mut().zip(&row[..i]) {
                *bk -= lik * xi;
            }
        }
    }

    fn check_len(&self, len: usize, context: &'static str) -> Result<()> {
        if len == self.dim {
            Ok(())
        } else {
            Err(LinalgError::ShapeMismatch {
                context,
                expected: format!("{}", self.dim),
                found: format!("{len}"),
            })
        }
    }

    /// `b ← L⁻¹ b`. Errors with [`LinalgError::ShapeMismatch`] unless `b` has `dim` entries.
    pub fn solve_lower_in_place(&self, b: &mut [f64]) -> Result<()> {
        self.check_len(b.len(), "GrowingCholesky::solve_lower_in_place")?;
        self.forward(b);
        Ok(())
    }

    /// `b ← L⁻ᵀ b`. Errors with [`LinalgError::ShapeMismatch`] unless `b` has `dim` entries.
    pub fn solve_upper_in_place(&self, b: &mut [f64]) -> Result<()> {
        self.check_len(b.len(), "GrowingCholesky::solve_upper_in_place")?;
        self.backward(b);
        Ok(())
    }

    /// `b ← A⁻¹ b`. Errors with [`LinalgError::ShapeMismatch`] unless `b` has `dim` entries.
    pub fn solve_in_place(&self, b: &mut [f64]) -> Result<()> {
        self.check_len(b.len(), "GrowingCholesky::solve_in_place")?;
        self.forward(b);
        self.backward(b);
        Ok(())
    }
}
