//! Dense Cholesky factorization with a jitter ladder.

use faer::dyn_stack::{MemBuffer, MemStack};
use faer::linalg::cholesky::llt::factor::{cholesky_in_place, cholesky_in_place_scratch};
use faer::linalg::triangular_solve::{
    solve_lower_triangular_in_place, solve_upper_triangular_in_place,
};
use faer::reborrow::ReborrowMut;
use faer::{Col, ColRef, Mat, MatMut, MatRef};

use crate::error::{LinalgError, Result};
use crate::par::parallelism_for;
use crate::validate::{check_finite_mat, check_shape, check_square};

/// How [`Cholesky::with_jitter`] escalates diagonal jitter when a matrix is numerically
/// indefinite.
///
/// The factorization is first tried as given. On failure a jitter
/// `start · s, start · growth · s, …` is added to the diagonal, where `s` is the mean absolute
/// diagonal entry when `relative` is set (so the ladder is invariant to the output scale of a
/// kernel) and 1 otherwise, until the factorization succeeds or the jitter would exceed
/// `max · s`.
///
/// Defaults: `start = 1e-10`, `growth = 10`, `max = 1e-6`, `relative = true`. A relative
/// jitter of 1e-6 perturbs a GP's predictions far less than any noise variance met in
/// practice; a matrix that needs more is a modelling problem the caller should see.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct JitterLadder {
    /// First jitter tried (relative to the mean diagonal if `relative`).
    pub start: f64,
    /// Factor between successive jitters (> 1).
    pub growth: f64,
    /// Largest jitter tried (relative to the mean diagonal if `relative`).
    pub max: f64,
    /// Whether jitters are scaled by the mean absolute diagonal entry.
    pub relative: bool,
}

impl Default for JitterLadder {
    fn default() -> Self {
        Self {
            start: 1e-10,
            growth: 10.0,
            max: 1e-6,
            relative: true,
        }
    }
}

impl JitterLadder {
    /// A ladder that never adds jitter: indefinite matrices fail at once.
    pub fn none() -> Self {
        Self {
            start: 0.0,
            growth: 10.0,
            max: 0.0,
            relative: false,
        }
    }

    /// Most jitters a ladder may try (rungs `start, start·growth, …` up to `max`): a ladder
    /// with more rungs is refused by [`validate`](Self::validate), and
    /// [`Cholesky::with_jitter`] never factors more than `1 + MAX_RUNGS` times.
    pub const MAX_RUNGS: usize = 64;

    /// Number of jitters the ladder tries after the unjittered attempt:
    /// `⌊log(max/start)/log(growth)⌋ + 1` for `0 < start ≤ max`, 0 otherwise. Saturates at
    /// `usize::MAX`. Meaningful for a ladder whose fields pass the range checks of
    /// [`validate`](Self::validate).
    pub fn rungs(&self) -> usize {
        if !(self.start > 0.0 && self.max >= self.start) {
            return 0;
        }
        // The loop accepts jitters up to max·(1 + 1e-12); the same slack here.
        let steps = (self.max / self.start * (1.0 + 1e-12)).ln() / self.growth.ln();
        if steps.is_finite() && steps < (usize::MAX / 2) as f64 {
            steps.floor() as usize + 1
        } else {
            usize::MAX
        }
    }

    /// Checks the ladder: `start` and `max` finite and non-negative, `growth` finite and
    /// greater than 1 (when `start > 0`), and at most [`MAX_RUNGS`](Self::MAX_RUNGS) rungs.
    /// [`Cholesky::with_jitter`] calls it; callers that build a ladder from untrusted input
    /// (a saved file) may call it early.
    ///
    /// Errors with [`LinalgError::InvalidArgument`] naming the fields at fault.
    pub fn validate(&self) -> Result<()> {
        let bad = |reason: String| {
            Err(LinalgError::InvalidArgument {
                name: "JitterLadder",
                reason,
            })
        };
        if !(self.start >= 0.0 && self.start.is_finite()) {
            return bad(format!(
                "start must be finite and non-negative, got {}",
                self.start
            ));
        }
        if !(self.max >= 0.0 && self.max.is_finite()) {
            return bad(format!(
                "max must be finite and non-negative, got {}",
                self.max
            ));
        }
        if self.start > 0.0 && !(self.growth > 1.0 && self.growth.is_finite()) {
            return bad(format!(
                "growth must be finite and greater than 1, got {}",
                self.growth
            ));
        }
        let rungs = self.rungs();
        if rungs > Self::MAX_RUNGS {
            let shown = if rungs == usize::MAX {
                "more than 2^62".to_string()
            } else {
                rungs.to_string()
            };
            return bad(format!(
                "start = {:e}, growth = {}, max = {:e} gives {shown} jitters (factorizations), \
                 more than the limit of {}; use a larger growth (e.g. 10), a larger start or a \
                 smaller max",
                self.start,
                self.growth,
                self.max,
                Self::MAX_RUNGS
            ));
        }
        Ok(())
    }
}

/// The lower Cholesky factor `L` of `A + jitter·I = L Lᵀ`.
///
/// ```
/// use faer::{col, mat};
/// use gp_linalg::Cholesky;
///
/// let a = mat![[4.0, 2.0], [2.0, 3.0]];
/// let chol = Cholesky::new(a.as_ref())?;
/// assert_eq!(chol.jitter(), 0.0);
/// let x = chol.solve_col(col![2.0, 1.0].as_ref())?;
/// assert!((x[0] - 0.5).abs() < 1e-15 && x[1].abs() < 1e-15);
/// assert!((chol.log_det() - 8f64.ln()).abs() < 1e-14);
/// # Ok::<(), gp_linalg::LinalgError>(())
/// ```
#[derive(Debug, Clone)]
pub struct Cholesky {
    l: Mat<f64>,
    jitter: f64,
}

impl Cholesky {
    /// Factors a symmetric positive definite matrix (only its lower triangle is read) with
    /// the default [`JitterLadder`].
    pub fn new(a: MatRef<'_, f64>) -> Result<Self> {
        Self::with_jitter(a, &JitterLadder::default())
    }

    /// Factors a symmetric positive definite matrix (only its lower triangle is read),
    /// escalating diagonal jitter as `ladder` says.
    ///
    /// Errors: [`LinalgError::NotSquare`], [`LinalgError::NonFinite`],
    /// [`LinalgError::InvalidArgument`] for a ladder that fails
    /// [`JitterLadder::validate`] (including one with more than
    /// [`JitterLadder::MAX_RUNGS`] rungs), and [`LinalgError::NotPositiveDefinite`] naming
    /// the largest jitter tried.
    pub fn with_jitter(a: MatRef<'_, f64>, ladder: &JitterLadder) -> Result<Self> {
        Self::with_jitter_reusing(a, ladder, Mat::new())
    }

    /// [`with_jitter`](Self::with_jitter) that factors into `storage` when it is `n × n`
    /// (its contents are overwritten; any other `storage` is dropped and a matrix
    /// allocated), with the same result bit for bit. Repeated factorizations of one size,
    /// such as the steps of a training loop, then reuse one buffer: a fresh `n × n` matrix
    /// is mapped and zeroed page by page on first touch (737 MB at `n = 9600`), which on a
    /// VM costs a good part of a second per factorization. Get the buffer back with
    /// [`into_factor`](Self::into_factor).
    ///
    /// ```
    /// use faer::mat;
    /// use gp_linalg::{Cholesky, JitterLadder};
    ///
    /// let a = mat![[4.0, 2.0], [2.0, 3.0]];
    /// let first = Cholesky::new(a.as_ref())?;
    /// let again = Cholesky::with_jitter_reusing(a.as_ref(), &JitterLadder::default(), first.into_factor())?;
    /// assert_eq!(again.factor(), Cholesky::new(a.as_ref())?.factor());
    /// # Ok::<(), gp_linalg::LinalgError>(())
    /// ```
    ///
    /// Errors: as [`with_jitter`](Self::with_jitter).
    pub fn with_jitter_reusing(
        a: MatRef<'_, f64>,
        ladder: &JitterLadder,
        storage: Mat<f64>,
    ) -> Result<Self> {
        let n = check_square(a, "Cholesky factorization")?;
        ladder.validate()?;
        check_finite_mat(a, "the matrix to factor")?;
        let scale = if ladder.relative && n > 0 {
            // Divide before summing so the mean of entries near f64::MAX does not overflow.
            (0..n).map(|i| a[(i, i)].abs() / n as f64).sum::<f64>()
        } else {
            1.0
        };
        let par = parallelism_for((n as f64).powi(3) / 3.0);
        let mut mem = MemBuffer::new(cholesky_in_place_scratch::<f64>(n, par, Default::default()));
        // Only the lower triangle of `l` is read before it is written (the copy below), and
        // the strict upper triangle is cleared at the end: a reused buffer gives the bits of
        // a fresh one.
        let mut l = if storage.nrows() == n && storage.ncols() == n {
            storage
        } else {
            Mat::<f64>::zeros(n, n)
        };
        let mut jitter = 0.0;
        let mut largest_tried = 0.0_f64;
        let mut jitters_tried = 0usize;
        loop {
            l.copy_from_triangular_lower(a);
            for i in 0..n {
                l[(i, i)] += jitter;
            }
            let ok = cholesky_in_place(
                l.as_mut(),
                Default::default(),
                par,
                MemStack::new(&mut mem),
                Default::default(),
            )
            .is_ok();
            largest_tried = largest_tried.max(jitter);
            if ok && (0..n).all(|i| l[(i, i)] > 0.0 && l[(i, i)].is_finite()) {
                break;
            }
            let next = if jitter == 0.0 {
                ladder.start * scale
            } else {
                jitter * ladder.growth
            };
            // A non-finite jitter (the matrix is near f64::MAX) would repeat forever; the rung
            // count bounds the loop whatever rounding does to the comparison with max.
            if next <= 0.0
                || !next.is_finite()
                || next > ladder.max * scale * (1.0 + 1e-12)
                || jitters_tried >= JitterLadder::MAX_RUNGS
            {
                return Err(LinalgError::NotPositiveDefinite {
                    n,
                    largest_jitter: largest_tried,
                });
            }
            jitter = next;
            jitters_tried += 1;
        }
        // faer leaves the strict upper triangle untouched; clear it so `factor()` is exactly L.
        for j in 1..n {
            for i in 0..j {
                l[(i, j)] = 0.0;
            }
        }
        Ok(Self { l, jitter })
    }

    /// Order of the factored matrix.
    pub fn dim(&self) -> usize {
        self.l.nrows()
    }

    /// The jitter that was added to the diagonal (0 when none was needed).
    pub fn jitter(&self) -> f64 {
        self.jitter
    }

    /// The lower-triangular factor `L` (its strict upper triangle is zero).
    pub fn factor(&self) -> MatRef<'_, f64> {
        self.l.as_ref()
    }

    /// The factor `L` as an owned matrix (strict upper triangle zero), for example to hand
    /// its storage to [`with_jitter_reusing`](Self::with_jitter_reusing).
    pub fn into_factor(self) -> Mat<f64> {
        self.l
    }

    /// `log det(A + jitter·I) = 2 Σ log Lᵢᵢ`.
    pub fn log_det(&self) -> f64 {
        2.0 * (0..self.dim()).map(|i| self.l[(i, i)].ln()).sum::<f64>()
    }

    /// Parallelism of `sweeps` triangular solves against `k` right-hand sides (n² k flops each).
    fn solve_parallelism(&self, k: usize, sweeps: f64) -> crate::Par {
        let n = self.dim() as f64;
        parallelism_for(sweeps * n * n * k as f64)
    }

    fn check_rhs(&self, nrows: usize, ncols: usize, context: &'static str) -> Result<()> {
        check_shape((nrows, ncols), (self.dim(), ncols), context)
    }

    /// Overwrites `b` with `(L Lᵀ)⁻¹ b`.
    pub fn solve_in_place(&self, mut b: MatMut<'_, f64>) -> Result<()> {
        self.check_rhs(b.nrows(), b.ncols(), "Cholesky::solve")?;
        let par = self.solve_parallelism(b.ncols(), 2.0);
        solve_lower_triangular_in_place(self.l.as_ref(), b.rb_mut(), par);
        solve_upper_triangular_in_place(self.l.transpose(), b, par);
        Ok(())
    }

    /// Returns `(L Lᵀ)⁻¹ B`.
    pub fn solve(&self, b: MatRef<'_, f64>) -> Result<Mat<f64>> {
        let mut x = b.to_owned();
        self.solve_in_place(x.as_mut())?;
        Ok(x)
    }

    /// Returns `(L Lᵀ)⁻¹ b` for one right-hand side.
    pub fn solve_col(&self, b: ColRef<'_, f64>) -> Result<Col<f64>> {
        let mut x = b.to_owned();
        self.solve_in_place(x.as_mat_mut())?;
        Ok(x)
    }

    /// Overwrites `b` with `L⁻¹ b` (the whitening solve).
    pub fn solve_lower_in_place(&self, b: MatMut<'_, f64>) -> Result<()> {
        self.check_rhs(b.nrows(), b.ncols(), "Cholesky::solve_lower")?;
        let par = self.solve_parallelism(b.ncols(), 1.0);
        solve_lower_triangular_in_place(self.l.as_ref(), b, par);
        Ok(())
    }

    /// Returns `L⁻¹ B`.
    pub fn solve_lower(&self, b: MatRef<'_, f64>) -> Result<Mat<f64>> {
        let mut x = b.to_owned();
        self.solve_lower_in_place(x.as_mut())?;
        Ok(x)
    }

    /// Overwrites `b` with `L⁻ᵀ b`.
    pub fn solve_upper_in_place(&self, b: MatMut<'_, f64>) -> Result<()> {
        self.check_rhs(b.nrows(), b.ncols(), "Cholesky::solve_upper")?;
        let par = self.solve_parallelism(b.ncols(), 1.0);
        solve_upper_triangular_in_place(self.l.transpose(), b, par);
        Ok(())
    }

    /// Returns `(L Lᵀ)⁻¹` as a dense matrix.
    pub fn inverse(&self) -> Mat<f64> {
        let n = self.dim();
        let mut x = Mat::<f64>::identity(n, n);
        let par = self.solve_parallelism(n, 2.0);
        solve_lower_triangular_in_place(self.l.as_ref(), x.as_mut(), par);
        solve_upper_triangular_in_place(self.l.transpose(), x.as_mut(), par);
        x
    }
}
