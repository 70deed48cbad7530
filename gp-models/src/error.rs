//! The error type of `gp-models`.

use gp_kernels::KernelError;
use gp_linalg::LinalgError;
use gp_solvers::{Breakdown, SolverError};
use gp_structured::StructuredError;
use thiserror::Error;

/// Everything that can go wrong in `gp-models`, each with a message that says what was wrong.
#[derive(Debug, Clone, PartialEq, Error)]
#[non_exhaustive]
pub enum ModelError {
    /// An error from the linear-algebra layer, e.g. a kernel matrix that stays indefinite
    /// after the whole jitter ladder.
    #[error(transparent)]
    Linalg(#[from] LinalgError),
    /// An error from the kernel layer (invalid hyperparameters, wrong input dimension).
    #[error(transparent)]
    Kernel(#[from] KernelError),
    /// An error from the iterative solvers (invalid solver options, a preconditioner that is
    /// not positive definite, a non-positive Ritz value in stochastic Lanczos quadrature).
    #[error(transparent)]
    Solver(#[from] SolverError),
    /// Conjugate gradients broke down (non-positive curvature, an indefinite preconditioner
    /// or a NaN): the kernel matrix plus noise is numerically not positive definite.
    #[error("conjugate gradients broke down in {context} (right-hand side {column}): {reason}; the kernel matrix plus noise is numerically not positive definite (increase the noise variance)")]
    CgBreakdown {
        /// What was being solved.
        context: &'static str,
        /// The right-hand side (column of the batched solve) that broke down.
        column: usize,
        /// The breakdown the solver reported (typed, so callers can match on it).
        reason: Breakdown,
    },
    /// There are no training points, or the points have no coordinates.
    #[error("{context}: the training data is empty ({n} points in {d} dimensions); need at least one point with at least one coordinate")]
    EmptyData {
        /// What was being done.
        context: &'static str,
        /// Number of points given.
        n: usize,
        /// Number of coordinates per point given.
        d: usize,
    },
    /// Two lengths that must agree do not (points and targets, a flat buffer and its shape,
    /// a parameter vector and the model's parameter count).
    #[error("length mismatch in {context}: expected {expected}, got {found}")]
    LengthMismatch {
        /// What was being compared.
        context: &'static str,
        /// The length that was needed.
        expected: usize,
        /// The length that was given.
        found: usize,
    },
    /// An input held NaN or an infinite value.
    #[error("{context}: non-finite value ({value}) at row {row}, column {col}; remove or impute it before calling")]
    NonFinite {
        /// Which input (training points, targets, test points, ...).
        context: &'static str,
        /// Row of the first offending entry.
        row: usize,
        /// Column of the first offending entry (0 for vectors).
        col: usize,
        /// The offending value.
        value: f64,
    },
    /// The noise variance is zero, negative, NaN or infinite.
    #[error("the noise variance must be finite and strictly positive, got {value}")]
    InvalidNoise {
        /// The value given.
        value: f64,
    },
    /// The kernel's input dimension differs from the number of columns of the training points.
    #[error("the kernel takes {kernel_dim}-dimensional inputs but the training points have {data_dim} columns")]
    KernelDim {
        /// The kernel's input dimension.
        kernel_dim: usize,
        /// Columns of the training matrix.
        data_dim: usize,
    },
    /// Test points have a different number of columns than the training points.
    #[error("the model was trained on {expected}-dimensional points but the test matrix has {found} columns")]
    TestDim {
        /// Columns of the training matrix.
        expected: usize,
        /// Columns of the test matrix.
        found: usize,
    },
    /// An option is outside its valid range.
    #[error("invalid option `{name}`: {reason}")]
    InvalidOption {
        /// The option's name.
        name: &'static str,
        /// What is wrong with it.
        reason: String,
    },
    /// An optimizer could not run (failed or non-finite objective at the starting point, a
    /// gradient of the wrong length, every restart failed).
    #[error("optimizer failure: {reason}")]
    Optimizer {
        /// What happened.
        reason: String,
    },
    /// A saved model could not be written or parsed, or is inconsistent.
    #[error("serialization error: {reason}")]
    Serialization {
        /// What happened.
        reason: String,
    },
    /// A saved model has a format version this crate cannot read.
    #[error("unsupported format version {found} of a saved {format}; this version of gp-models reads version {supported}")]
    UnsupportedVersion {
        /// The model format.
        format: &'static str,
        /// The version in the file.
        found: u32,
        /// The version this crate reads and writes.
        supported: u32,
    },
    /// An error from the structured-algebra layer (a grid that cannot be built, an axis too
    /// short for the interpolation scheme, a Toeplitz factor that cannot be embedded).
    #[error(transparent)]
    Structured(#[from] StructuredError),
    /// A point lies outside the region of the interpolation grid where its stencil fits
    /// (SKI): the error of `gp-structured`'s interpolation weights, with what was being
    /// interpolated. The message advises the grid options of the models, not gp-structured's
    /// constructors.
    #[error("{context}: {}", OutsideGridAdvice(source))]
    OutsideGrid {
        /// Which points (training or test).
        context: &'static str,
        /// The interpolation error, naming the point, dimension and valid range.
        source: StructuredError,
    },
    /// The kernel cannot be used by a structured model (SKI needs a separable kernel whose
    /// one-dimensional factors are stationary).
    #[error("{model} cannot use this kernel: {reason}")]
    UnsupportedKernel {
        /// The model that refused the kernel.
        model: &'static str,
        /// Why.
        reason: String,
    },
    /// The grid of a structured model would need more memory than allowed.
    #[error(
        "a grid of {grid_points} points would need about {} ({vectors} vectors of length m, 8 \
         bytes per entry), more than the limit of {} ({limit_source}); use fewer grid points per \
         dimension or raise the model's grid.memory_limit option (SkiOptions, GsgpOptions)",
        Bytes(*estimated_bytes),
        Bytes(u128::from(*limit_bytes))
    )]
    GridTooLarge {
        /// Number of grid points `m = Π m_l` (saturating).
        grid_points: u128,
        /// Number of `m`-vectors the solver holds at its peak.
        vectors: u128,
        /// The estimate `vectors · 8 · m` in bytes (saturating).
        estimated_bytes: u128,
        /// The limit it was compared with, in bytes.
        limit_bytes: u64,
        /// Where the limit came from (the option, `/proc/meminfo`, or the fixed cap).
        limit_source: &'static str,
    },
    /// The GSGP log determinant needs a square root of every Toeplitz factor of `K_G` (dense
    /// eigendecompositions, `m_l × m_l`, up to
    /// [`GsgpOptions::log_det_dense_factor_max`](crate::GsgpOptions::log_det_dense_factor_max),
    /// `O(m_l)` circulant square roots above), its probe vectors and a CSR copy of `S`, and
    /// these would need more memory than allowed (see
    /// [`gsgp::log_det`](crate::gsgp::log_det)).
    #[error(
        "the GSGP log determinant needs square roots of the grid kernel's Toeplitz factors \
         (sizes {sizes:?}: dense eigendecompositions up to GsgpOptions::log_det_dense_factor_max \
         points, circulant square roots above), its probe vectors and a CSR copy of S, about \
         {}, more than the limit of {} ({limit_source}); \
         use fewer grid points per dimension or a smaller log_det_dense_factor_max (the mean \
         and covariances do not need these factors)",
        Bytes(*estimated_bytes),
        Bytes(u128::from(*limit_bytes))
    )]
    LogDetFactorTooLarge {
        /// Grid points per dimension.
        sizes: Vec<usize>,
        /// `24 m_l²` bytes per dense factor (matrix, eigenvectors, workspace), `64 M_l` per
        /// circulant factor of embedding length `M_l`, `8 (4t + 8) (r − m)` for probe vectors
        /// longer than `m`, plus `16 nnz(S) + 8 (m + 1)` for the CSR copy of `S`, saturating.
        estimated_bytes: u128,
        /// The limit it was compared with, in bytes.
        limit_bytes: u64,
        /// Where the limit came from.
        limit_source: &'static str,
    },
    /// A solve stopped at its iteration cap before reaching its tolerance, and the caller
    /// asked for an error in that case (see
    /// [`UnconvergedSolve`](crate::core::predict::UnconvergedSolve)).
    #[error(
        "{context} did not converge: it stopped after {iterations} iterations at relative \
         residual {relative_residual:.3e}; raise the model's krylov.max_iterations, loosen \
         krylov.prediction_tolerance, or accept the result with its report \
         (PredictRequest::accepting_unconverged)"
    )]
    NotConverged {
        /// Which solve.
        context: &'static str,
        /// Iterations made.
        iterations: usize,
        /// The largest relative residual reached.
        relative_residual: f64,
    },
    /// A target is not a valid observation for the likelihood (a negative or fractional
    /// count, a label outside `{0, 1}` or outside `0..C`).
    #[error("{likelihood} likelihood: target {index} is {value}, {reason}")]
    InvalidTarget {
        /// The likelihood's name.
        likelihood: &'static str,
        /// Index of the offending target.
        index: usize,
        /// Its value.
        value: f64,
        /// What was expected.
        reason: &'static str,
    },
    /// A Newton iterate of a non-conjugate GP left the range where the likelihood's
    /// curvature is finite (e.g. `exp(−f)` overflowed for Poisson): the undamped Newton
    /// overshoot of large counts (IterNCGP spec §7.1).
    #[error("Newton step {step} diverged: {reason}; use StepControl::Backtracking, a prior mean near the data (e.g. log of the mean count), or fewer solver iterations per Newton step")]
    NewtonDiverged {
        /// The Newton step (0-based) whose iterate was unusable.
        step: usize,
        /// What was not finite.
        reason: String,
    },
    /// The Newton search for the Laplace mode of a [`LaplaceGp`](crate::ncgp::LaplaceGp)
    /// did not meet its tolerance within its step budget.
    #[error("the Laplace mode search stopped after {steps} Newton steps with ‖Δf‖ / (1 + ‖f − m‖) = {change:.3e} above the tolerance {tolerance:.1e}; raise LaplaceGpOptions::max_steps, loosen LaplaceGpOptions::tolerance, or move the prior mean nearer the data")]
    ModeNotFound {
        /// Newton steps taken.
        steps: usize,
        /// The last step's scaled change.
        change: f64,
        /// The tolerance asked for.
        tolerance: f64,
    },
    /// The softmax pseudo-inverse `W†` gives Newton's iterates only when `K` commutes with
    /// the per-point centring `I_N ⊗ (I_C − 11ᵀ/C)`, e.g. `K = K_x ⊗ I_C` with one shared
    /// kernel; with per-class kernels it converges to a wrong point (IterNCGP spec §3.4).
    #[error("the softmax pseudo-inverse W† needs a prior covariance shared by all classes (K = K_x ⊗ I_C): ‖K P z − P K z‖ / ‖K z‖ = {defect:.3e} for the given K; use NewtonForm::True (dense), or one kernel for all classes")]
    PseudoInverseInvalid {
        /// The measured commutation defect.
        defect: f64,
    },
    /// An exact (dense) GP on this many points would need more memory than allowed: the
    /// `n × n` kernel matrices are checked before they are allocated.
    #[error(
        "an exact GP on {n} points needs {matrices} dense {n} × {n} matrices ({what}), about {}, \
         more than the limit of {} ({limit_source}); use IterativeGp (no n × n storage), Ski or \
         Gsgp for data of this size, fit a subset, or raise FitOptions::memory_limit",
        Bytes(*estimated_bytes),
        Bytes(u128::from(*limit_bytes))
    )]
    DenseTooLarge {
        /// Number of training points.
        n: usize,
        /// How many `n × n` matrices the step holds at its peak.
        matrices: u32,
        /// Which step (fit, or the log-marginal-likelihood gradient).
        what: &'static str,
        /// `matrices · 8 n²` in bytes (saturating).
        estimated_bytes: u128,
        /// The limit it was compared with, in bytes.
        limit_bytes: u64,
        /// Where the limit came from (the option, `/proc/meminfo`, or the fixed cap).
        limit_source: &'static str,
    },
    /// The circulant embedding of a large Toeplitz factor of `K_G`, needed for the GSGP log
    /// determinant's square root, stayed indefinite even when lengthened (the 1-D kernel has
    /// not decayed over the embedded lags, e.g. a length scale much longer than the grid), and
    /// the dense eigendecomposition that would replace it does not fit in memory.
    #[error(
        "the GSGP log determinant needs a square root of the Toeplitz factor of dimension {dim} \
         ({size} grid points): its circulant embedding stays indefinite up to length \
         {embedding} (eigenvalues from {min_eigenvalue:e} to {max_eigenvalue:e}; the 1-D \
         kernel has not decayed over the embedded lags), and the dense eigendecomposition that \
         would replace it needs about {}, more than the limit of {} ({limit_source}); use a \
         length scale shorter than the grid's extent along this dimension, fewer grid points on \
         it, or a larger memory limit",
        Bytes(*dense_bytes),
        Bytes(u128::from(*limit_bytes))
    )]
    LogDetEmbeddingIndefinite {
        /// The dimension `l` of the factor.
        dim: usize,
        /// Its grid points `m_l`.
        size: usize,
        /// The longest embedding length tried.
        embedding: usize,
        /// The smallest eigenvalue of that embedding (negative beyond round-off).
        min_eigenvalue: f64,
        /// Its largest eigenvalue.
        max_eigenvalue: f64,
        /// `24 m_l²`: what the dense fallback would need (the CSR copy of `S` comes on top).
        dense_bytes: u128,
        /// The limit it was compared with, in bytes.
        limit_bytes: u64,
        /// Where the limit came from.
        limit_source: &'static str,
    },
    /// The `p × p` matrix `P = σ²W⁻¹ + A` of the GP-GRIEF weight-space model (Evans & Nair
    /// 2018, eq. 13) is numerically not positive definite: its Cholesky factorization met a
    /// non-positive pivot. `A = ΦᵀΦ` is positive semidefinite when it comes from one basis, so
    /// either the statistics are not a Gram matrix, or `σ²/w_j` is below the rounding error
    /// of a rank-deficient `A`.
    #[error(
        "the GP-GRIEF weight-space matrix P = σ²W⁻¹ + ΦᵀΦ ({p} × {p}) is not numerically \
         positive definite (Cholesky pivot {pivot} is not positive): build the statistics as \
         ΦᵀΦ of one basis (GriefStats::from_phi or GriefStats::accumulate), or use a larger \
         noise variance or smaller eigenfunction weights so that σ²/w_j stays above the \
         rounding error of ΦᵀΦ"
    )]
    WeightSpaceNotPositiveDefinite {
        /// Number of basis functions `p`.
        p: usize,
        /// Index of the first pivot that was not positive.
        pivot: usize,
    },
    /// The `n × n` matrix `K = ΦWΦᵀ + σ²I_n` of the GP-GRIEF data-space (function-space)
    /// evaluation ([`DualFit`](crate::grief::DualFit)) is numerically not positive definite:
    /// its Cholesky factorization met a non-positive or non-finite pivot. `K ⪰ σ²I` in exact
    /// arithmetic, so either `σ²` is below the rounding error of `ΦWΦᵀ` or the weights are
    /// so large that `ΦWΦᵀ` overflows.
    #[error(
        "the GP-GRIEF data-space matrix K = ΦWΦᵀ + σ²I ({n} × {n}) is not numerically \
         positive definite (Cholesky pivot {pivot} is not positive and finite): use a larger \
         noise variance or smaller eigenfunction weights so that σ² stays above the rounding \
         error of ΦWΦᵀ and ΦWΦᵀ stays finite"
    )]
    DataSpaceNotPositiveDefinite {
        /// Number of training points `n`.
        n: usize,
        /// Index of the first pivot that was not positive and finite.
        pivot: usize,
    },
    /// A factorization of a sparse (inducing-point) GP failed: `K_UU` or the system
    /// `σ²K_UU + ΦᵀΦ` is not numerically positive definite after the jitter ladder of
    /// [`SparseOptions::jitter`](crate::SparseOptions::jitter) (none by default), or
    /// FITC's diagonal has a non-positive entry. With zero jitter this is what the
    /// reference code reports as a crash.
    #[error(
        "{method} with {m} inducing points: {factor} failed (not numerically positive          definite; largest diagonal jitter tried {largest_jitter:e}); use fewer or          better-separated inducing points, or allow jitter (SparseOptions::jitter)"
    )]
    InducingCholesky {
        /// The approximation being fitted.
        method: crate::inducing::SparseMethod,
        /// Which factor failed.
        factor: crate::inducing::InducingFactor,
        /// Number of inducing points.
        m: usize,
        /// The largest jitter that was tried (0 without a ladder).
        largest_jitter: f64,
    },
}

impl ModelError {
    /// Converts a validation error of `gp-linalg` about non-finite data into
    /// [`ModelError::NonFinite`]; other errors are wrapped unchanged.
    pub(crate) fn from_finite_check(err: LinalgError) -> Self {
        match err {
            LinalgError::NonFinite {
                context,
                row,
                col,
                value,
            } => ModelError::NonFinite {
                context,
                row,
                col,
                value,
            },
            other => ModelError::Linalg(other),
        }
    }
}

/// The message of a point outside the grid, with the advice a model's user can act on.
struct OutsideGridAdvice<'a>(&'a StructuredError);

impl std::fmt::Display for OutsideGridAdvice<'_> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self.0 {
            StructuredError::OutsideGrid {
                point,
                dim,
                value,
                lo,
                hi,
                scheme,
            } => write!(
                f,
                "point {point} is outside the interpolation grid in dimension {dim}: coordinate \
                 {value} is not in [{lo}, {hi}], the region where the {scheme} stencil fits; \
                 widen the grid with the model options' grid.padding or grid.bounds \
                 (SkiOptions, GsgpOptions), or set grid.out_of_grid to OutOfGrid::Clamp"
            ),
            other => write!(f, "{other}"),
        }
    }
}

/// Result type of `gp-models`.
pub type Result<T, E = ModelError> = std::result::Result<T, E>;

impl ModelError {
    /// Wraps an error of `gp-structured`: a point outside the interpolation grid becomes
    /// [`ModelError::OutsideGrid`] with `context`, anything else [`ModelError::Structured`].
    pub(crate) fn from_structured(err: StructuredError, context: &'static str) -> Self {
        match err {
            err @ StructuredError::OutsideGrid { .. } => ModelError::OutsideGrid {
                context,
                source: err,
            },
            other => ModelError::Structured(other),
        }
    }
}

/// A byte count as people read it: binary units with three significant digits and the exact
/// count, e.g. `50.9 TiB (56000000000000 bytes)`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Bytes(pub u128);

impl std::fmt::Display for Bytes {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        const UNITS: [&str; 7] = ["KiB", "MiB", "GiB", "TiB", "PiB", "EiB", "ZiB"];
        let b = self.0;
        if b < 1024 {
            return write!(f, "{b} bytes");
        }
        let mut value = b as f64 / 1024.0;
        let mut unit = 0;
        while value >= 1024.0 && unit + 1 < UNITS.len() {
            value /= 1024.0;
            unit += 1;
        }
        let digits = if value >= 100.0 {
            0
        } else if value >= 10.0 {
            1
        } else {
            2
        };
        write!(f, "{value:.digits$} {} ({b} bytes)", UNITS[unit])
    }
}
