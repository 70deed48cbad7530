//! The circulant-embedding square root of a symmetric Toeplitz factor: `F = E C^{1/2}` with
//! `F Fᵀ = T` in `O(M)` memory (see [`log_det`](super::log_det) for how the log determinant
//! uses it).
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

use faer::{ColMut, ColRef, MatMut, MatRef};
use gp_linalg::LinearOperator;
use gp_structured::fft::{circulant_embedding_length, smooth_length};
use gp_structured::Circulant;

use crate::error::Result;

/// How many times [`find_embedding`] doubles an indefinite embedding before giving up
/// (`M ≤ 64 ×` the smallest embedding: the squared exponential's embedding is definite once
/// `M h / 2 ≳ 8.5 ℓ`, so this covers length scales up to about four times the grid extent).
pub(crate) const MAX_DOUBLINGS: u32 = 6;

/// The outcome of [`find_embedding`].
#[derive(Debug, Clone)]
pub(crate) struct EmbeddingSearch {
    /// The length `M` of the last embedding tried.
    pub length: usize,
    /// Its smallest and largest eigenvalues.
    pub min_eigenvalue: f64,
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
/// Errors: a non-finite kernel value ([`ModelError::Structured`](crate::ModelError::Structured)).
pub(crate) fn find_embedding(
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

/// `F = √scale · E C^{1/2}` (`m × M`) for a circulant embedding of a Toeplitz factor.
pub(crate) struct CirculantRoot {
    /// The order `m` of the Toeplitz factor.
    order: usize,
    /// `√scale · C^{1/2}` (symmetric, `M × M`).
    root: Circulant,
}

impl CirculantRoot {
    /// The root of the embedding with eigenvalues `spectrum` (all `M`, nonnegative,
    /// `λ_{M−k} = λ_k`) of a Toeplitz factor of order `order ≤ M`, times `√scale`.
    ///
    /// The first column of `C^{1/2}` is the inverse DFT of `√λ`, which for an even sequence
    /// is its forward DFT divided by `M`: the eigenvalues of the circulant with first column
    /// `√λ`, divided by `M`.
    pub(crate) fn new(order: usize, spectrum: &[f64], scale: f64) -> Result<Self> {
        let len = spectrum.len();
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

    /// Rows `m` of `F`.
    pub(crate) fn nrows(&self) -> usize {
        self.order
    }

    /// Columns `M` of `F` (the embedding length).
    pub(crate) fn ncols(&self) -> usize {
        self.root.dim()
    }

    /// `out = F x` (`transpose = false`: `x` has `M` rows, `out` has `m`) or `out = Fᵀ x`
    /// (`x` has `m` rows, `out` has `M`), column by column.
    pub(crate) fn apply_block(
        &self,
        x: MatRef<'_, f64>,
        mut out: MatMut<'_, f64>,
        transpose: bool,
    ) {
        let len = self.ncols();
        let mut padded = vec![0.0; len];
        let mut full = vec![0.0; len];
        for j in 0..x.ncols() {
            if transpose {
                for (p, v) in padded.iter_mut().zip(x.col(j).iter()) {
                    *p = *v;
                }
                self.root.matvec(
                    ColRef::from_slice(&padded),
                    ColMut::from_slice_mut(&mut full),
                );
            } else {
                self.root
                    .matvec(x.col(j), ColMut::from_slice_mut(&mut full));
            }
            for (o, v) in out.as_mut().col_mut(j).iter_mut().zip(&full) {
                *o = *v;
            }
        }
    }

    /// `F` as a dense `m × M` matrix (tests).
    #[cfg(test)]
    pub(crate) fn to_dense(&self) -> faer::Mat<f64> {
        let r = self.root.to_dense();
        faer::Mat::from_fn(self.order, self.ncols(), |i, j| r[(i, j)])
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use faer::Mat;
    use gp_kernels::{Kernel, Matern, MaternNu, SquaredExponential};

    /// `c_j = k(0, j h)` and the lag function of a 1-D kernel with unit output scale.
    fn column(kernel: &dyn Kernel, m: usize, h: f64) -> Vec<f64> {
        (0..m)
            .map(|j| kernel.eval(&[0.0], &[j as f64 * h]))
            .collect()
    }

    fn kernels(lengthscale: f64) -> Vec<(String, Box<dyn Kernel>)> {
        let mut out: Vec<(String, Box<dyn Kernel>)> = vec![(
            "SE".into(),
            Box::new(SquaredExponential::new(vec![lengthscale], 1.0).unwrap()),
        )];
        for nu in [MaternNu::Half, MaternNu::ThreeHalves, MaternNu::FiveHalves] {
            out.push((
                format!("Matérn {}", nu.value()),
                Box::new(Matern::new(nu, vec![lengthscale], 1.0).unwrap()),
            ));
        }
        out
    }

    /// `F Fᵀ = T` for the SE and Matérn kernels at length scales from well below to well
    /// above the grid spacing, on grids of 5, 17 and 64 points (unit spacing), with and
    /// without a folded output scale.
    ///
    /// Tolerance: the clamped round-off eigenvalues move entries by at most `2 M ε λ_max`
    /// (module documentation) and the two FFT round trips of `C^{1/2}` add
    /// `O(ε log M · λ_max)`; with `λ_max ≤ Σ_j |k(jh)| ≤ 2.5 ℓ + 1` here that is below
    /// `1e-12` relative to `c_0` for every case (measured worst: a few `1e-15`).
    #[test]
    fn root_reproduces_the_toeplitz_factor() {
        for m in [5usize, 17, 64] {
            for lengthscale in [0.3, 1.0, 2.5, 6.0] {
                for (name, kernel) in kernels(lengthscale) {
                    let c = column(kernel.as_ref(), m, 1.0);
                    let lag = |j: usize| kernel.eval(&[0.0], &[j as f64]);
                    let search = find_embedding(&c, Some(&lag), usize::MAX).unwrap();
                    let spectrum = search.spectrum.expect("definite embedding");
                    assert!(search.length >= 2 * m - 1);
                    for scale in [1.0, 0.37] {
                        let root = CirculantRoot::new(m, &spectrum, scale).unwrap();
                        let f = root.to_dense();
                        assert_eq!((f.nrows(), f.ncols()), (m, search.length));
                        let fft = &f * f.transpose();
                        let t = Mat::from_fn(m, m, |i, j| scale * c[i.abs_diff(j)]);
                        let err = (&fft - &t).norm_max() / (scale * c[0]);
                        assert!(
                            err < 1e-12,
                            "{name}, ℓ = {lengthscale}, m = {m}, scale {scale}: {err:e}"
                        );
                    }
                }
            }
        }
    }

    /// The products of [`CirculantRoot::apply_block`] are those of the dense `F`.
    #[test]
    fn products_match_the_dense_factor() {
        let kernel = SquaredExponential::new(vec![2.0], 1.0).unwrap();
        let m = 17;
        let c = column(&kernel, m, 1.0);
        let lag = |j: usize| kernel.eval(&[0.0], &[j as f64]);
        let search = find_embedding(&c, Some(&lag), usize::MAX).unwrap();
        let root = CirculantRoot::new(m, search.spectrum.as_deref().unwrap(), 2.0).unwrap();
        let f = root.to_dense();
        let big = root.ncols();
        let v = Mat::from_fn(big, 3, |i, j| ((i * 7 + j * 3) % 11) as f64 - 5.0);
        let u = Mat::from_fn(m, 3, |i, j| ((i * 5 + j) % 7) as f64 - 3.0);
        let mut fv = Mat::zeros(m, 3);
        root.apply_block(v.as_ref(), fv.as_mut(), false);
        let mut ftu = Mat::zeros(big, 3);
        root.apply_block(u.as_ref(), ftu.as_mut(), true);
        let want_fv = &f * &v;
        let want_ftu = f.transpose() * &u;
        // Round-off of two FFTs of length M against a dense product: ~1e-15 relative.
        assert!((&fv - &want_fv).norm_max() < 1e-12 * want_fv.norm_max());
        assert!((&ftu - &want_ftu).norm_max() < 1e-12 * want_ftu.norm_max());
    }

    /// A kernel that has not decayed over the grid makes the smallest embedding indefinite;
    /// with the kernel's lags the search lengthens it until it is definite (and `F Fᵀ = T`
    /// still holds), without them it reports the indefinite embedding.
    #[test]
    fn long_length_scales_lengthen_the_embedding() {
        let kernel = SquaredExponential::new(vec![30.0], 1.0).unwrap();
        let m = 17;
        let c = column(&kernel, m, 1.0);
        let zero_padded = find_embedding(&c, None, usize::MAX).unwrap();
        assert!(zero_padded.spectrum.is_none());
        assert_eq!(zero_padded.length, 36);
        assert!(zero_padded.min_eigenvalue < -1e-3 * zero_padded.max_eigenvalue);
        let lag = |j: usize| kernel.eval(&[0.0], &[j as f64]);
        let limited = find_embedding(&c, Some(&lag), 100).unwrap();
        assert!(limited.spectrum.is_none() && limited.length <= 100);
        let search = find_embedding(&c, Some(&lag), usize::MAX).unwrap();
        // Definite once M/2 ≳ 8.5 ℓ = 255 spacings.
        assert!(search.length > 400, "length {}", search.length);
        let spectrum = search.spectrum.expect("definite after lengthening");
        let f = CirculantRoot::new(m, &spectrum, 1.0).unwrap().to_dense();
        let t = Mat::from_fn(m, m, |i, j| c[i.abs_diff(j)]);
        // λ_max ≈ √(2π) ℓ ≈ 75 here, M ≈ 600: the clamp bound 2 M ε λ_max ≈ 2e-11.
        assert!((&f * f.transpose() - &t).norm_max() < 1e-10);
    }
}
