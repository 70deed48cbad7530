//! The circulant-embedding square root of a symmetric Toeplitz matrix: `F = E C^{1/2}` with
//! `F Fᵀ = T` in `O(M)` memory ([`CirculantRoot`], found by [`find_embedding`]). GSGP's
//! log determinant uses it as the square root of the large Toeplitz factors of the grid
//! kernel, where a dense eigendecomposition would not fit.
//!
//! A symmetric Toeplitz `T` of order `m` (first column `c`) is the leading `m × m` block of a
//! symmetric circulant `C` of any order `M ≥ 2m − 1` whose first column has `c_j` at the
//! circular lags `j = min(k, M − k) < m`: `T = E C Eᵀ` with `E = [I_m 0]`. The lags
//! `m ≤ j ≤ M/2` are free; here they are the 1-D kernel itself at `j` grid spacings when the
//! kernel is known (else zeros, the usual embedding of Toeplitz products). `C`'s eigenvalues
//! are the real FFT `λ` of its first column; when they are nonnegative, `C^{1/2}` (the
//! symmetric circulant with eigenvalues `√λ`, same eigenvectors) gives `F = E C^{1/2}`
//! (`m × M`) with `F Fᵀ = E C Eᵀ = T` exactly in exact arithmetic. `F v` and `Fᵀ u` are one
//! circulant product each (two real FFTs of length `M`).
//!
//! **Definiteness.** In floating point the eigenvalues of a positive semi-definite embedding
//! come out as `λ_k ± O(ε log M · λ_max)`, so eigenvalues `λ_k ≥ −M ε λ_max` count as
//! nonnegative and the negative ones among them are set to 0; this moves every entry of
//! `F Fᵀ` by at most `(2/M) Σ_k |clamped λ_k| ≤ 2 M ε λ_max`, round-off of the FFT's own
//! size order. A more negative eigenvalue means the embedding is indefinite and has no real
//! square root.
//!
//! **Why the kernel's own lags.** With the kernel at the lags beyond the grid, `C` is the
//! covariance of the stationary process sampled on a circle of `M` nodes, and its eigenvalues
//! are `Σ_{|j| ≤ M/2} k(jh) e^{−2πijk/M}`: the aliased spectral density
//! `Σ_{j∈ℤ} k(jh) e^{−2πijk/M} ≥ 0` (Bochner) minus the tail `Σ_{|j| > M/2}`, so
//! `λ_min ≥ −2 Σ_{j > M/2} |k(jh)|`. Lengthening the embedding therefore makes it definite
//! as soon as the kernel has decayed to round-off within `M/2` spacings (about `8.5 ℓ` for
//! the squared exponential), whatever the grid. Zero padding does not have this property: its
//! spectrum tends to that of the kernel truncated at lag `m − 1`, which stays negative where
//! the kernel has not decayed across the grid. So [`find_embedding`] starts at the smallest
//! 5-smooth `M ≥ 2m − 1` and doubles `M` (up to [`MAX_DOUBLINGS`] times) while the embedding
//! is indefinite and the kernel's lags are available.
//!
//! ```
//! use faer::Mat;
//! use gp_structured::toeplitz_root::{find_embedding, CirculantRoot};
//! use gp_structured::LinearOperator;
//!
//! // The squared-exponential kernel (length scale 2) on 9 grid points of unit spacing.
//! let k = |j: usize| (-(j as f64).powi(2) / 8.0).exp();
//! let c: Vec<f64> = (0..9).map(k).collect();
//! let search = find_embedding(&c, Some(&k), usize::MAX)?;
//! let spectrum = search.spectrum.expect("a definite embedding");
//! let root = CirculantRoot::new(c.len(), &spectrum, 1.0)?;
//! let f = root.to_dense();
//! let t = Mat::from_fn(9, 9, |i, j| c[i.abs_diff(j)]);
//! assert!((&f * f.transpose() - &t).norm_max() < 1e-12);
//! # Ok::<(), gp_structured::StructuredError>(())
//! ```

use faer::reborrow::ReborrowMut;
use faer::{ColMut, ColRef, Mat, MatMut, MatRef};
use gp_linalg::{LinearOperator, TransposeOperator};

use crate::circulant::Circulant;
use crate::error::{Result, StructuredError};
use crate::fft::{circulant_embedding_length, smooth_length};

/// How many times [`find_embedding`] doubles an indefinite embedding before giving up
/// (`M ≤ 64 ×` the smallest embedding: the squared exponential's embedding is definite once
/// `M h / 2 ≳ 8.5 ℓ`, so this covers length scales up to about four times the grid extent).
pub const MAX_DOUBLINGS: u32 = 6;

/// The outcome of [`find_embedding`].
#[derive(Debug, Clone)]
pub struct EmbeddingSearch {
    /// The length `M` of the last embedding tried.
    pub length: usize,
    /// Its smallest eigenvalue.
    pub min_eigenvalue: f64,
    /// Its largest eigenvalue.
    pub max_eigenvalue: f64,
    /// The eigenvalues (all `M`, `λ_{M−k} = λ_k`, round-off negatives set to 0) when the
    /// embedding is nonnegative up to round-off, else `None`.
    pub spectrum: Option<Vec<f64>>,
}

/// Searches a nonnegative circulant embedding of the symmetric Toeplitz matrix with first
/// column `c` (see the [module documentation](self)): lags `j ≥ c.len()` come from `lag(j)`
/// when given (else zeros, and only the smallest length is tried); the length doubles while
/// the embedding is indefinite, at most [`MAX_DOUBLINGS`] times and never beyond `max_len`
/// (the smallest length is always tried).
///
/// Errors: a non-finite entry of `c` or value of `lag`
/// ([`StructuredError::Linalg`] with [`NonFinite`](gp_linalg::LinalgError::NonFinite)).
pub fn find_embedding(
    c: &[f64],
    lag: Option<&dyn Fn(usize) -> f64>,
    max_len: usize,
) -> Result<EmbeddingSearch> {
    let m = c.len().max(1);
    let mut len = circulant_embedding_length(m).unwrap_or(usize::MAX);
    let mut lags: Vec<f64> = c.to_vec();
    let mut doublings = 0;
    loop {
        // Lags 0..=len/2 of the circulant's first column.
        let half = len / 2;
        while lags.len() <= half {
            let j = lags.len();
            lags.push(lag.map_or(0.0, |f| f(j)));
        }
        let column: Vec<f64> = (0..len).map(|k| lags[k.min(len - k)]).collect();
        let lambda = symmetric_eigenvalues(&column)?;
        let max = lambda.iter().copied().fold(f64::NEG_INFINITY, f64::max);
        let min = lambda.iter().copied().fold(f64::INFINITY, f64::min);
        let floor = -(len as f64) * f64::EPSILON * max;
        if max > 0.0 && min >= floor {
            let spectrum = lambda.into_iter().map(|v| v.max(0.0)).collect();
            return Ok(EmbeddingSearch {
                length: len,
                min_eigenvalue: min,
                max_eigenvalue: max,
                spectrum: Some(spectrum),
            });
        }
        let next = len.checked_mul(2).and_then(smooth_length);
        match next {
            Some(next) if lag.is_some() && doublings < MAX_DOUBLINGS && next <= max_len => {
                len = next;
                doublings += 1;
            }
            _ => {
                return Ok(EmbeddingSearch {
                    length: len,
                    min_eigenvalue: min,
                    max_eigenvalue: max,
                    spectrum: None,
                })
            }
        }
    }
}

/// All eigenvalues of the symmetric circulant with first column `column` (exactly symmetric:
/// `column[k] == column[len − k]`).
fn symmetric_eigenvalues(column: &[f64]) -> Result<Vec<f64>> {
    let c = Circulant::new(column)?;
    // The column is symmetric by construction, so `real_eigenvalues` is `Some`.
    Ok(c.real_eigenvalues().unwrap_or_default())
}

/// `F = √scale · E C^{1/2}` (`m × M`): a square root `F Fᵀ = scale · T` of a symmetric
/// Toeplitz matrix `T` of order `m` from a nonnegative circulant embedding `C` of order `M`
/// (see the [module documentation](self)).
///
/// A [`LinearOperator`] (`F x`, `x ∈ ℝ^M`) and a [`TransposeOperator`] (`Fᵀ u`, `u ∈ ℝ^m`),
/// each one circulant product (two real FFTs of length `M`) per column.
#[derive(Debug, Clone)]
pub struct CirculantRoot {
    /// The order `m` of the Toeplitz matrix.
    order: usize,
    /// `√scale · C^{1/2}` (symmetric, `M × M`).
    root: Circulant,
}

impl CirculantRoot {
    /// The root of the embedding with eigenvalues `spectrum` (all `M`, `λ_{M−k} = λ_k`, as
    /// [`EmbeddingSearch::spectrum`] gives them; negative values count as 0) of a Toeplitz
    /// matrix of order `order ≤ M`, times `√scale`.
    ///
    /// The first column of `C^{1/2}` is the inverse DFT of `√λ`, which for an even sequence
    /// is its forward DFT divided by `M`: the eigenvalues of the circulant with first column
    /// `√λ`, divided by `M`.
    ///
    /// Errors ([`StructuredError::InvalidArgument`]): `order` zero or larger than `M`, a
    /// spectrum that is not even (`λ_{M−k} ≠ λ_k`) or not finite, a negative or non-finite
    /// `scale`.
    pub fn new(order: usize, spectrum: &[f64], scale: f64) -> Result<Self> {
        let len = spectrum.len();
        let invalid = |name, reason: String| StructuredError::InvalidArgument { name, reason };
        if order == 0 || order > len {
            return Err(invalid(
                "order",
                format!("must be between 1 and the embedding length {len}, got {order}"),
            ));
        }
        if !(scale.is_finite() && scale >= 0.0) {
            return Err(invalid(
                "scale",
                format!("must be finite and ≥ 0, got {scale}"),
            ));
        }
        if let Some(k) = (0..len).find(|&k| !spectrum[k].is_finite()) {
            return Err(invalid(
                "spectrum",
                format!("eigenvalue {k} is {}", spectrum[k]),
            ));
        }
        // A real symmetric circulant has an even spectrum; anything else is not an
        // embedding's and would give a root that is not symmetric.
        if let Some(k) = (1..len).find(|&k| spectrum[k] != spectrum[len - k]) {
            return Err(invalid(
                "spectrum",
                format!(
                    "not even: λ_{k} = {} but λ_{} = {}",
                    spectrum[k],
                    len - k,
                    spectrum[len - k]
                ),
            ));
        }
        let sqrt: Vec<f64> = spectrum.iter().map(|v| v.max(0.0).sqrt()).collect();
        let factor = scale.sqrt() / len as f64;
        let column: Vec<f64> = symmetric_eigenvalues(&sqrt)?
            .into_iter()
            .map(|v| v * factor)
            .collect();
        Ok(Self {
            order,
            root: Circulant::new(&column)?,
        })
    }

    /// The order `m` of the Toeplitz matrix (rows of `F`).
    pub fn order(&self) -> usize {
        self.order
    }

    /// The embedding length `M` (columns of `F`).
    pub fn embedding_len(&self) -> usize {
        self.root.dim()
    }

    /// `√scale · C^{1/2}`, the symmetric `M × M` circulant whose first `m` rows are `F`.
    pub fn circulant(&self) -> &Circulant {
        &self.root
    }
}

impl LinearOperator for CirculantRoot {
    fn nrows(&self) -> usize {
        self.order
    }

    fn ncols(&self) -> usize {
        self.root.dim()
    }

    fn matvec(&self, x: ColRef<'_, f64>, out: ColMut<'_, f64>) {
        self.matmat(x.as_mat(), out.as_mat_mut());
    }

    fn matmat(&self, x: MatRef<'_, f64>, mut out: MatMut<'_, f64>) {
        // `F x` is the first `m` entries of `C^{1/2} x`.
        let mut full = vec![0.0; self.root.dim()];
        for j in 0..x.ncols() {
            self.root
                .matvec(x.col(j), ColMut::from_slice_mut(&mut full));
            for (o, v) in out.rb_mut().col_mut(j).iter_mut().zip(&full) {
                *o = *v;
            }
        }
    }

    fn to_dense(&self) -> Mat<f64> {
        let r = self.root.to_dense();
        Mat::from_fn(self.order, self.root.dim(), |i, j| r[(i, j)])
    }
}

/// `Fᵀ u = C^{1/2} [u; 0]` (`C^{1/2}` is symmetric).
impl TransposeOperator for CirculantRoot {
    fn matvec_transpose(&self, x: ColRef<'_, f64>, out: ColMut<'_, f64>) {
        self.matmat_transpose(x.as_mat(), out.as_mat_mut());
    }

    fn matmat_transpose(&self, x: MatRef<'_, f64>, mut out: MatMut<'_, f64>) {
        let len = self.root.dim();
        let mut padded = vec![0.0; len];
        let mut full = vec![0.0; len];
        for j in 0..x.ncols() {
            for (p, v) in padded.iter_mut().zip(x.col(j).iter()) {
                *p = *v;
            }
            self.root.matvec(
                ColRef::from_slice(&padded),
                ColMut::from_slice_mut(&mut full),
            );
            for (o, v) in out.rb_mut().col_mut(j).iter_mut().zip(&full) {
                *o = *v;
            }
        }
    }
}
