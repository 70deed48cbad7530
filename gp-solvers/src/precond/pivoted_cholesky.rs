//! Greedy pivoted (partial) Cholesky `K ≈ L Lᵀ` of a symmetric positive semi-definite
//! matrix known through its diagonal and requested columns, and the preconditioner
//! `L Lᵀ + σ²I` built from it (Harbrecht, Peters & Schneider 2012; Gardner et al. 2018).
//!
//! Solvers do not know kernels, so the matrix comes through the small [`ColumnAccess`]
//! trait; the model crate implements it for a kernel and its inputs. This crate implements
//! it for dense matrices (for tests and small problems).

use faer::linalg::matmul::matmul;
use faer::{Accum, Col, ColMut, Mat, MatRef};
use gp_linalg::LowRankPlusDiagonal;

use crate::error::{invalid, Result, SolverError};

/// Read access to a symmetric positive semi-definite `n×n` matrix by diagonal and columns:
/// all the pivoted Cholesky needs (`k` columns for a rank-`k` factor).
pub trait ColumnAccess {
    /// Order `n` of the matrix.
    fn dim(&self) -> usize;

    /// The diagonal (length `n`).
    fn diagonal(&self) -> Col<f64>;

    /// Writes column `j` (length `n`) into `out`. Contract: `j < n` and `out` has length
    /// `n`; implementations may panic otherwise (the pivoted Cholesky only asks for valid
    /// columns).
    fn column(&self, j: usize, out: ColMut<'_, f64>);
}

impl ColumnAccess for MatRef<'_, f64> {
    fn dim(&self) -> usize {
        self.nrows()
    }
    fn diagonal(&self) -> Col<f64> {
        Col::from_fn(self.nrows().min(self.ncols()), |i| self[(i, i)])
    }
    fn column(&self, j: usize, mut out: ColMut<'_, f64>) {
        out.copy_from(self.col(j));
    }
}

impl ColumnAccess for Mat<f64> {
    fn dim(&self) -> usize {
        self.nrows()
    }
    fn diagonal(&self) -> Col<f64> {
        ColumnAccess::diagonal(&self.as_ref())
    }
    fn column(&self, j: usize, mut out: ColMut<'_, f64>) {
        out.copy_from(self.col(j));
    }
}

/// Options of [`PivotedCholesky::new`].
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct PivotedCholeskyOptions {
    /// Maximum rank `k` of the factor. Default 15 (GPyTorch's later default; the RTGPS paper
    /// uses 5).
    pub max_rank: usize,
    /// Stop early once the trace of the residual `K − L Lᵀ` is at most
    /// `relative_tolerance · tr K`. Default `0.0` (never stop early, except that the
    /// factorization always stops when the residual diagonal vanishes, which happens when `K`
    /// has rank below `max_rank`).
    pub relative_tolerance: f64,
}

impl Default for PivotedCholeskyOptions {
    fn default() -> Self {
        Self {
            max_rank: 15,
            relative_tolerance: 0.0,
        }
    }
}

/// The factor `L` (`n×k`) of a greedy pivoted Cholesky `K ≈ L Lᵀ`, with the pivots and the
/// residual traces.
///
/// ```
/// use faer::Mat;
/// use gp_solvers::{PivotedCholesky, PivotedCholeskyOptions};
///
/// // A rank-2 matrix is recovered exactly by two pivots.
/// let u = Mat::from_fn(5, 2, |i, j| (i as f64 + 1.0).powi(j as i32));
/// let k = &u * u.transpose();
/// let opts = PivotedCholeskyOptions { max_rank: 4, ..Default::default() };
/// let pc = PivotedCholesky::new(&k, &opts)?;
/// assert_eq!(pc.rank(), 2);
/// let back = pc.factor() * pc.factor().transpose();
/// assert!((&back - &k).norm_max() < 1e-10);
/// # Ok::<(), gp_solvers::SolverError>(())
/// ```
#[derive(Debug, Clone)]
pub struct PivotedCholesky {
    factor: Mat<f64>,
    pivots: Vec<usize>,
    residual_traces: Vec<f64>,
}

impl PivotedCholesky {
    /// Runs the greedy pivoted Cholesky: at step `m` the pivot is the largest remaining
    /// residual diagonal entry `p`, and the new column is
    /// `l = (K[:, p] − L L[p, :]ᵀ) / √d_p`. Costs `k` column requests plus `O(n k²)`.
    ///
    /// Errors with [`SolverError::InvalidOptions`] for a negative or non-finite tolerance,
    /// and with [`LinalgError::NonFinite`](gp_linalg::LinalgError::NonFinite) if the
    /// diagonal or a column holds NaN or infinity, or
    /// [`LinalgError::NotPositive`](gp_linalg::LinalgError::NotPositive) if the diagonal has
    /// a negative entry (the matrix is not positive semi-definite), and with
    /// [`SolverError::NotPositiveSemidefinite`] if a residual diagonal entry
    /// `K[i,i] − Σ_m L[i,m]²` goes negative beyond rounding error (`ε · n · tr K`): the
    /// matrix is indefinite, and clamping that entry to 0 would report a residual trace of
    /// 0 for a matrix that was not approximated at all.
    pub fn new<C: ColumnAccess + ?Sized>(
        matrix: &C,
        options: &PivotedCholeskyOptions,
    ) -> Result<Self> {
        let tol = options.relative_tolerance;
        if !(tol.is_finite() && tol >= 0.0) {
            return Err(invalid(
                "relative_tolerance",
                format!("must be finite and non-negative, got {tol}"),
            ));
        }
        let n = matrix.dim();
        let mut d = matrix.diagonal();
        if d.nrows() != n {
            return Err(SolverError::ShapeMismatch {
                context: "ColumnAccess::diagonal",
                expected: format!("{n}"),
                found: format!("{}", d.nrows()),
            });
        }
        gp_linalg::validate::check_finite_col(d.as_ref(), "the matrix diagonal")?;
        if let Some(index) = (0..n).find(|&i| d[i] < 0.0) {
            return Err(gp_linalg::LinalgError::NotPositive {
                context: "PivotedCholesky (diagonal of a positive semi-definite matrix)",
                index,
                value: d[index],
            }
            .into());
        }
        let k_max = options.max_rank.min(n);
        let initial_trace: f64 = (0..n).map(|i| d[i]).sum();
        let mut factor = Mat::<f64>::zeros(n, k_max);
        let mut pivots = Vec::with_capacity(k_max);
        let mut is_pivot = vec![false; n];
        let mut residual_traces = vec![initial_trace];
        let mut column = Col::<f64>::zeros(n);
        // Below this the residual diagonal is rounding noise: the matrix is exhausted.
        let floor = f64::EPSILON * initial_trace.max(f64::MIN_POSITIVE) * (n as f64);
        for m in 0..k_max {
            let trace = residual_traces[m];
            if trace <= tol * initial_trace {
                break;
            }
            let Some(p) = (0..n)
                .filter(|&i| !is_pivot[i])
                .max_by(|&a, &b| d[a].total_cmp(&d[b]))
            else {
                break;
            };
            let dp = d[p];
            if dp <= floor {
                break;
            }
            matrix.column(p, column.as_mut());
            gp_linalg::validate::check_finite_col(column.as_ref(), "a matrix column")?;
            // column −= L[:, :m] L[p, :m]ᵀ
            if m > 0 {
                let lp = factor.as_ref().row(p).subcols(0, m).transpose().to_owned();
                matmul(
                    column.as_mat_mut(),
                    Accum::Add,
                    factor.as_ref().subcols(0, m),
                    lp.as_mat(),
                    -1.0,
                    gp_linalg::parallelism(),
                );
            }
            let scale = 1.0 / dp.sqrt();
            let mut new_trace = 0.0;
            for i in 0..n {
                let l = if is_pivot[i] { 0.0 } else { column[i] * scale };
                factor[(i, m)] = l;
                d[i] = if i == p || is_pivot[i] {
                    0.0
                } else {
                    let r = d[i] - l * l;
                    // Rounding leaves residuals of order −ε·tr K on a PSD matrix; more negative
                    // is indefiniteness (or NaN from a non-finite factor column).
                    if r.is_nan() || r < -floor {
                        return Err(SolverError::NotPositiveSemidefinite {
                            step: m + 1,
                            index: i,
                            value: r,
                            tolerance: floor,
                        });
                    }
                    r.max(0.0)
                };
                new_trace += d[i];
            }
            is_pivot[p] = true;
            pivots.push(p);
            residual_traces.push(new_trace);
        }
        let rank = pivots.len();
        let factor = factor.as_ref().subcols(0, rank).to_owned();
        Ok(Self {
            factor,
            pivots,
            residual_traces,
        })
    }

    /// The factor `L` (`n×k`, `k` = [`rank`](Self::rank)).
    pub fn factor(&self) -> MatRef<'_, f64> {
        self.factor.as_ref()
    }

    /// Consumes `self`, returning `L`.
    pub fn into_factor(self) -> Mat<f64> {
        self.factor
    }

    /// The rank `k` reached.
    pub fn rank(&self) -> usize {
        self.pivots.len()
    }

    /// The pivots, in the order they were chosen.
    pub fn pivots(&self) -> &[usize] {
        &self.pivots
    }

    /// `tr(K − L_m L_mᵀ)` for `m = 0..=k` (entry 0 is `tr K`).
    pub fn residual_traces(&self) -> &[f64] {
        &self.residual_traces
    }

    /// The preconditioner `P = L Lᵀ + σ²I` (Woodbury solve and determinant-lemma log-det;
    /// it implements [`Preconditioner`](crate::Preconditioner), sampling
    /// `z = L g₁ + σ g₂ ~ N(0, P)`).
    ///
    /// Errors with [`SolverError::PreconditionerNotSpd`] unless `noise_variance` is finite
    /// and strictly positive.
    pub fn preconditioner(&self, noise_variance: f64) -> Result<LowRankPlusDiagonal> {
        if !(noise_variance.is_finite() && noise_variance > 0.0) {
            return Err(SolverError::PreconditionerNotSpd {
                reason: format!(
                    "L Lᵀ + σ²I needs a finite, strictly positive σ², got {noise_variance}"
                ),
            });
        }
        Ok(LowRankPlusDiagonal::with_noise(
            self.factor.clone(),
            noise_variance,
        )?)
    }
}

/// Convenience: the rank-`max_rank` pivoted-Cholesky preconditioner `L Lᵀ + σ²I` of
/// `K + σ²I` from the noise-free `K`. Errors as [`PivotedCholesky::new`] and
/// [`PivotedCholesky::preconditioner`].
pub fn pivoted_cholesky_preconditioner<C: ColumnAccess + ?Sized>(
    matrix: &C,
    noise_variance: f64,
    options: &PivotedCholeskyOptions,
) -> Result<LowRankPlusDiagonal> {
    PivotedCholesky::new(matrix, options)?.preconditioner(noise_variance)
}
