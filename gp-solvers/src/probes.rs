//! Random probe vectors for stochastic trace and log-determinant estimation.

use faer::{Mat, MatRef};
use rand::{Rng, RngCore, SeedableRng};
use rand_chacha::ChaCha8Rng;

use crate::error::{invalid, Result};
use crate::precond::{standard_normal, Preconditioner};

/// The law of the probes `z` (each with `E[z] = 0`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum ProbeDistribution {
    /// Rademacher (`±1` entries, `E[zzᵀ] = I`) without a preconditioner, `N(0, P)` with one
    /// (GPyTorch's choice). The default.
    #[default]
    Auto,
    /// Independent `±1` entries: `E[zzᵀ] = I`. Only without a preconditioner.
    Rademacher,
    /// `N(0, I)` without a preconditioner, `N(0, P)` with one (`E[zzᵀ] = P`).
    Gaussian,
}

/// Options of [`Probes::generate`].
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ProbeOptions {
    /// Number of probes `t`. Default 10 (GPyTorch's `num_trace_samples`).
    pub count: usize,
    /// Their law. Default [`ProbeDistribution::Auto`].
    pub distribution: ProbeDistribution,
    /// Seed of the ChaCha8 generator. Default 0.
    pub seed: u64,
}

impl Default for ProbeOptions {
    fn default() -> Self {
        Self {
            count: 10,
            distribution: ProbeDistribution::Auto,
            seed: 0,
        }
    }
}

/// Probe vectors `Z = [z_1..z_t]` with `E[z zᵀ] = P` (`P = I` without preconditioner) and
/// their preconditioned images `P⁻¹Z`.
///
/// With these, `tr(M) = E[(P⁻¹z)ᵀ M z]` for any `M`, and in particular
/// `tr(A⁻¹ ∂A) = E[(A⁻¹z)ᵀ ∂A (P⁻¹z)]`.
#[derive(Debug, Clone)]
pub struct Probes {
    z: Mat<f64>,
    precond_z: Mat<f64>,
    distribution: ProbeDistribution,
}

impl Probes {
    /// Draws `options.count` probes of order `n` from a ChaCha8 generator seeded with
    /// `options.seed`.
    ///
    /// Errors with [`SolverError::InvalidOptions`](crate::SolverError::InvalidOptions) for
    /// `count = 0` (an estimate from no probes is undefined, not 0), Rademacher probes with
    /// a preconditioner (their covariance is `I`, not `P`), or a preconditioner whose order
    /// is not `n`.
    pub fn generate(
        n: usize,
        precond: Option<&dyn Preconditioner>,
        options: &ProbeOptions,
    ) -> Result<Self> {
        let mut rng = ChaCha8Rng::seed_from_u64(options.seed);
        Self::with_rng(n, precond, options.distribution, options.count, &mut rng)
    }

    /// As [`generate`](Self::generate), drawing from a caller-supplied generator.
    pub fn with_rng(
        n: usize,
        precond: Option<&dyn Preconditioner>,
        distribution: ProbeDistribution,
        count: usize,
        rng: &mut dyn RngCore,
    ) -> Result<Self> {
        if count == 0 {
            return Err(invalid(
                "count",
                "the number of probes must be at least 1 (an estimate from no probes is \
                 undefined); use 10 or more for a useful estimate",
            ));
        }
        if let Some(p) = precond {
            if p.dim() != n {
                return Err(invalid(
                    "precond",
                    format!("the preconditioner has order {}, the probes {n}", p.dim()),
                ));
            }
        }
        let (z, used) = match (distribution, precond) {
            (ProbeDistribution::Rademacher, Some(_)) => {
                return Err(invalid(
                    "distribution",
                    "Rademacher probes have covariance I, but a preconditioned estimator \
                     needs covariance P; use Gaussian (or Auto) probes",
                ))
            }
            (ProbeDistribution::Auto | ProbeDistribution::Rademacher, None) => {
                let z = Mat::from_fn(
                    n,
                    count,
                    |_, _| if rng.random::<bool>() { 1.0 } else { -1.0 },
                );
                (z, ProbeDistribution::Rademacher)
            }
            (ProbeDistribution::Gaussian, None) => {
                (standard_normal(rng, n, count), ProbeDistribution::Gaussian)
            }
            (ProbeDistribution::Auto | ProbeDistribution::Gaussian, Some(p)) => {
                (p.sample(rng, count)?, ProbeDistribution::Gaussian)
            }
        };
        let precond_z = match precond {
            Some(p) => p.solve_block(z.as_ref())?,
            None => z.clone(),
        };
        Ok(Self {
            z,
            precond_z,
            distribution: used,
        })
    }

    /// Wraps caller-chosen probes (for example the unit vectors, or probes shared between
    /// estimators), computing `P⁻¹Z`. The estimators are unbiased only if
    /// `E[z zᵀ] = P`; the caller is responsible for that.
    ///
    /// Errors with [`LinalgError::NonFinite`](gp_linalg::LinalgError::NonFinite) for NaN or
    /// infinite entries and with
    /// [`SolverError::InvalidOptions`](crate::SolverError::InvalidOptions) (option `probes`)
    /// for a matrix without columns or with an all-zero column (of order `n > 0`): a zero
    /// probe contributes a term of exactly 0 and biases every estimate towards 0.
    pub fn from_matrix(z: Mat<f64>, precond: Option<&dyn Preconditioner>) -> Result<Self> {
        gp_linalg::validate::check_finite_mat(z.as_ref(), "the probes")?;
        if z.ncols() == 0 {
            return Err(invalid(
                "probes",
                "the probe matrix has no columns; an estimate needs at least one probe",
            ));
        }
        if z.nrows() > 0 {
            if let Some(j) = (0..z.ncols()).find(|&j| z.col(j).iter().all(|&v| v == 0.0)) {
                return Err(invalid(
                    "probes",
                    format!(
                        "probe column {j} is all zeros; probes need E[z zᵀ] = P (for example \
                         ±1 or standard normal entries), and a zero probe biases the \
                         estimate towards 0"
                    ),
                ));
            }
        }
        let precond_z = match precond {
            Some(p) => p.solve_block(z.as_ref())?,
            None => z.clone(),
        };
        Ok(Self {
            z,
            precond_z,
            distribution: ProbeDistribution::Auto,
        })
    }

    /// The probes `Z` (`n×t`).
    pub fn matrix(&self) -> MatRef<'_, f64> {
        self.z.as_ref()
    }

    /// `P⁻¹ Z` (`Z` itself without preconditioner).
    pub fn preconditioned(&self) -> MatRef<'_, f64> {
        self.precond_z.as_ref()
    }

    /// Number of probes `t`.
    pub fn count(&self) -> usize {
        self.z.ncols()
    }

    /// Order `n`.
    pub fn dim(&self) -> usize {
        self.z.nrows()
    }

    /// The law the probes were drawn from ([`ProbeDistribution::Auto`] for
    /// [`from_matrix`](Self::from_matrix)).
    pub fn distribution(&self) -> ProbeDistribution {
        self.distribution
    }
}
