//! Real circulant operators: products, transposed products, and for symmetric positive
//! definite circulants solves and log-determinants, all from the spectrum (one real FFT of the
//! first column, computed once).
//!
//! A circulant `C[i, j] = c[(i − j) mod n]` is diagonalized by the DFT: its eigenvalues are
//! `λ = FFT(c)`, so `C x = IFFT(λ ⊙ FFT(x))`, `Cᵀ x = IFFT(conj(λ) ⊙ FFT(x))` and, when `C` is
//! symmetric (`c[k] = c[n − k]`, so `λ` is real), `C⁻¹ b = IFFT(FFT(b) / λ)` and
//! `log det C = Σ_k log λ_k`.

use faer::reborrow::ReborrowMut;
use faer::{Col, ColMut, ColRef, Mat, MatMut, MatRef};
use gp_linalg::validate::{check_finite_slice, check_shape};
use gp_linalg::{LinalgError, LinearOperator, TransposeOperator};

use crate::error::{Result, StructuredError};
use crate::fft::{copy_col_into, copy_into_col, Complex, FftBuffers, Pool, RealFftPair};

/// What a product with the spectrum does to each frequency bin.
#[derive(Clone, Copy)]
enum Mode {
    Apply,
    Transpose,
    Solve,
}

/// A real circulant matrix `C[i, j] = c[(i − j) mod n]` given by its first column `c`.
///
/// Products (and transposed products) cost one forward and one inverse real FFT of length
/// `n`; the spectrum is computed once. For a *symmetric* circulant (`c[k] == c[n − k]` exactly
/// for `k = 1..n`, as produced by a kernel evaluated at circular distances
/// `min(k, n − k)`) the spectrum is real and [`solve`](Self::solve) and
/// [`log_det`](Self::log_det) are available; they require every eigenvalue to be positive.
///
/// ```
/// use faer::col;
/// use gp_structured::circulant::Circulant;
/// use gp_structured::LinearOperator;
///
/// let c = Circulant::new(&[4.0, 1.0, 0.5, 1.0])?; // symmetric
/// let b = col![1.0, 2.0, 3.0, 4.0];
/// let x = c.solve(b.as_ref())?;
/// let back = c.apply(x.as_ref())?;
/// assert!((&back - &b).norm_max() < 1e-13);
/// assert!((c.log_det()? - c.to_dense().determinant().ln()).abs() < 1e-12);
/// # Ok::<(), gp_structured::StructuredError>(())
/// ```
pub struct Circulant {
    first_column: Vec<f64>,
    /// Eigenvalues, bins `0..=n/2` (unnormalized DFT of `c`).
    spectrum: Vec<Complex<f64>>,
    symmetric: bool,
    fft: RealFftPair,
    pool: Pool<FftBuffers>,
}

impl std::fmt::Debug for Circulant {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Circulant")
            .field("dim", &self.dim())
            .field("symmetric", &self.symmetric)
            .finish()
    }
}

impl Clone for Circulant {
    fn clone(&self) -> Self {
        Self {
            first_column: self.first_column.clone(),
            spectrum: self.spectrum.clone(),
            symmetric: self.symmetric,
            fft: self.fft.clone(),
            pool: Pool::new(),
        }
    }
}

impl Circulant {
    /// The circulant with first column `first_column`.
    ///
    /// Errors: an empty column or a non-finite entry.
    pub fn new(first_column: &[f64]) -> Result<Self> {
        let n = first_column.len();
        if n == 0 {
            return Err(StructuredError::InvalidArgument {
                name: "first_column",
                reason: "a circulant matrix needs at least one entry".to_string(),
            });
        }
        check_finite_slice(first_column, "circulant first column")?;
        let fft = RealFftPair::new(n);
        let spectrum = fft.spectrum_of(first_column);
        let symmetric = (1..n).all(|k| first_column[k] == first_column[n - k]);
        Ok(Self {
            first_column: first_column.to_vec(),
            spectrum,
            symmetric,
            fft,
            pool: Pool::new(),
        })
    }

    /// The order `n`.
    pub fn dim(&self) -> usize {
        self.first_column.len()
    }

    /// The first column `c`.
    pub fn first_column(&self) -> &[f64] {
        &self.first_column
    }

    /// Whether `c[k] == c[n − k]` for every `k` (exactly), i.e. `C` is symmetric.
    pub fn is_symmetric(&self) -> bool {
        self.symmetric
    }

    /// The eigenvalues `λ_k = Σ_j c[j] e^{−2πi jk/n}` for `k = 0..=n/2`; the others are
    /// `λ_{n−k} = conj(λ_k)`. For a symmetric circulant they are real up to round-off.
    pub fn spectrum(&self) -> &[Complex<f64>] {
        &self.spectrum
    }

    /// All `n` eigenvalues of a symmetric circulant (`λ_k` real, `λ_{n−k} = λ_k`), or `None`
    /// when `C` is not symmetric.
    pub fn real_eigenvalues(&self) -> Option<Vec<f64>> {
        let n = self.dim();
        self.symmetric
            .then(|| (0..n).map(|k| self.spectrum[k.min(n - k)].re).collect())
    }

    /// Returns `C⁻¹ b` for a symmetric positive definite circulant.
    ///
    /// Errors: `b` of the wrong length, a non-symmetric circulant
    /// ([`StructuredError::InvalidArgument`]), or an eigenvalue `≤ 0`
    /// ([`LinalgError::NotPositive`], with the frequency index).
    pub fn solve(&self, b: ColRef<'_, f64>) -> Result<Col<f64>> {
        check_shape((b.nrows(), 1), (self.dim(), 1), "Circulant::solve")?;
        self.check_spd("Circulant::solve")?;
        let mut out = Col::zeros(self.dim());
        self.run(b, out.as_mut(), Mode::Solve);
        Ok(out)
    }

    /// Returns `C⁻¹ B` for a block of right-hand sides; see [`solve`](Self::solve).
    pub fn solve_block(&self, b: MatRef<'_, f64>) -> Result<Mat<f64>> {
        check_shape(
            (b.nrows(), b.ncols()),
            (self.dim(), b.ncols()),
            "Circulant::solve_block",
        )?;
        self.check_spd("Circulant::solve_block")?;
        let mut out = Mat::zeros(self.dim(), b.ncols());
        self.run_block(b, out.as_mut(), Mode::Solve);
        Ok(out)
    }

    /// `log det C = Σ_k log λ_k` for a symmetric positive definite circulant.
    ///
    /// Errors as for [`solve`](Self::solve).
    pub fn log_det(&self) -> Result<f64> {
        self.check_spd("Circulant::log_det")?;
        let n = self.dim();
        Ok((0..n).map(|k| self.spectrum[k.min(n - k)].re.ln()).sum())
    }

    fn check_spd(&self, context: &'static str) -> Result<()> {
        if !self.symmetric {
            return Err(StructuredError::InvalidArgument {
                name: "self",
                reason: format!(
                    "{context} needs a symmetric positive definite circulant (c[k] == c[n − k]); \
                     this one is not symmetric"
                ),
            });
        }
        match self.spectrum.iter().position(|z| z.re <= 0.0) {
            Some(index) => Err(LinalgError::NotPositive {
                context,
                index,
                value: self.spectrum[index].re,
            }
            .into()),
            None => Ok(()),
        }
    }

    fn run(&self, x: ColRef<'_, f64>, out: ColMut<'_, f64>, mode: Mode) {
        let mut buf = self.pool.take(|| self.fft.buffers());
        self.run_one(x, out, mode, &mut buf);
        self.pool.give(buf);
    }

    fn run_block(&self, x: MatRef<'_, f64>, mut out: MatMut<'_, f64>, mode: Mode) {
        let mut buf = self.pool.take(|| self.fft.buffers());
        for j in 0..x.ncols() {
            self.run_one(x.col(j), out.rb_mut().col_mut(j), mode, &mut buf);
        }
        self.pool.give(buf);
    }

    fn run_one(&self, x: ColRef<'_, f64>, out: ColMut<'_, f64>, mode: Mode, buf: &mut FftBuffers) {
        copy_col_into(x, &mut buf.time);
        self.fft.forward(buf);
        let inv_n = 1.0 / self.dim() as f64;
        match mode {
            Mode::Apply => {
                for (z, l) in buf.freq.iter_mut().zip(&self.spectrum) {
                    *z = *z * *l * inv_n;
                }
            }
            Mode::Transpose => {
                for (z, l) in buf.freq.iter_mut().zip(&self.spectrum) {
                    *z = *z * l.conj() * inv_n;
                }
            }
            Mode::Solve => {
                for (z, l) in buf.freq.iter_mut().zip(&self.spectrum) {
                    *z *= inv_n / l.re;
                }
            }
        }
        self.fft.inverse(buf);
        copy_into_col(&buf.time, out);
    }
}

impl LinearOperator for Circulant {
    fn nrows(&self) -> usize {
        self.dim()
    }
    fn ncols(&self) -> usize {
        self.dim()
    }
    fn matvec(&self, x: ColRef<'_, f64>, out: ColMut<'_, f64>) {
        self.run(x, out, Mode::Apply);
    }
    fn matmat(&self, x: MatRef<'_, f64>, out: MatMut<'_, f64>) {
        self.run_block(x, out, Mode::Apply);
    }
    fn diagonal(&self) -> Option<Col<f64>> {
        Some(Col::from_fn(self.dim(), |_| self.first_column[0]))
    }
    fn to_dense(&self) -> Mat<f64> {
        let n = self.dim();
        let c = &self.first_column;
        Mat::from_fn(n, n, |i, j| c[(i + n - j) % n])
    }
}

/// `Cᵀ x` through the conjugate spectrum (one FFT pair, like `C x`).
impl TransposeOperator for Circulant {
    fn matvec_transpose(&self, x: ColRef<'_, f64>, out: ColMut<'_, f64>) {
        self.run(x, out, Mode::Transpose);
    }
    fn matmat_transpose(&self, x: MatRef<'_, f64>, out: MatMut<'_, f64>) {
        self.run_block(x, out, Mode::Transpose);
    }
}
