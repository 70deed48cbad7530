//! What the factorized solvers need to know about an interpolated system: the
//! [`WeightSpaceSystem`] trait, an adaptor from two [`LinearOperator`]s and the
//! [`StartVector`] data.

use faer::reborrow::{Reborrow, ReborrowMut};
use faer::{Col, ColMut, ColRef};
use gp_linalg::validate::check_finite_slice;
use gp_linalg::vector::axpy_col;
use gp_linalg::LinearOperator;

use crate::cg::kernels::axpy;
use crate::error::{check_shape, invalid, Result};

/// An interpolated (SKI) system `K̃ = W K_G Wᵀ + σ² I_n` seen in weight space `ℝᵐ`: known
/// only through products with the prior covariance `K_G` of the grid weights and with the
/// Gram matrix `S = WᵀW` of the interpolation weights, plus the noise variance `σ²`.
///
/// The factorized solvers never touch `ℝⁿ`: every vector they keep is `W v̂ + c z₀` with
/// `v̂ ∈ ℝᵐ`, and their cost per iteration depends on `m` only. The data-space quantities they
/// need are the three numbers of a [`StartVector`] (computed once by the caller).
///
/// Contract: the prior covariance and the Gram matrix are symmetric positive semi-definite of
/// order [`dim`](Self::dim). The products return `Result` so that an operator's failure
/// reaches the solver's caller as a [`SolverError`](crate::SolverError) rather than as NaN in
/// a solution; the solvers also check every product's output for NaN and infinity and turn
/// it into an error.
pub trait WeightSpaceSystem: Send + Sync {
    /// Dimension `m` of the weight space (the number of grid points).
    fn dim(&self) -> usize;

    /// Writes `out = K_G v` (both of length `m`), the product with the prior covariance.
    fn apply_prior(&self, v: ColRef<'_, f64>, out: ColMut<'_, f64>) -> Result<()>;

    /// Writes `out = S v = WᵀW v` (both of length `m`), the product with the Gram matrix.
    fn apply_gram(&self, v: ColRef<'_, f64>, out: ColMut<'_, f64>) -> Result<()>;

    /// The noise variance `σ²` (finite and non-negative; `σ` is a standard deviation).
    fn noise_variance(&self) -> f64;

    /// The "double" product `B(v) = (Â v, S v)` with `Â = K_G S + σ² I`: writes
    /// `a_out = K_G (S v) + σ² v` and `s_out = S v`. Costs one Gram and one prior product;
    /// override only to fuse them.
    fn apply_b(
        &self,
        v: ColRef<'_, f64>,
        mut a_out: ColMut<'_, f64>,
        mut s_out: ColMut<'_, f64>,
    ) -> Result<()> {
        self.apply_gram(v, s_out.rb_mut())?;
        self.apply_prior(s_out.rb(), a_out.rb_mut())?;
        axpy_col(self.noise_variance(), v, a_out.rb_mut())?;
        Ok(())
    }
}

impl<T: WeightSpaceSystem + ?Sized> WeightSpaceSystem for &T {
    fn dim(&self) -> usize {
        (**self).dim()
    }
    fn apply_prior(&self, v: ColRef<'_, f64>, out: ColMut<'_, f64>) -> Result<()> {
        (**self).apply_prior(v, out)
    }
    fn apply_gram(&self, v: ColRef<'_, f64>, out: ColMut<'_, f64>) -> Result<()> {
        (**self).apply_gram(v, out)
    }
    fn noise_variance(&self) -> f64 {
        (**self).noise_variance()
    }
    fn apply_b(
        &self,
        v: ColRef<'_, f64>,
        a_out: ColMut<'_, f64>,
        s_out: ColMut<'_, f64>,
    ) -> Result<()> {
        (**self).apply_b(v, a_out, s_out)
    }
}

/// A [`WeightSpaceSystem`] made of two [`LinearOperator`]s (the prior covariance `K_G` and the
/// Gram matrix `S`, both `m×m`) and `σ²`.
///
/// Shapes are checked once by [`new`](Self::new); each product checks the lengths of its
/// vectors (a wrong length is a [`SolverError::ShapeMismatch`](crate::SolverError::ShapeMismatch),
/// not a panic) and its output (NaN or infinity is a
/// [`LinalgError::NonFinite`](gp_linalg::LinalgError::NonFinite)).
///
/// ```
/// use faer::Mat;
/// use gp_linalg::DenseOperator;
/// use gp_solvers::factorized::{OperatorSystem, WeightSpaceSystem};
///
/// let kg = DenseOperator::new(Mat::<f64>::identity(3, 3));
/// let s = DenseOperator::new(Mat::<f64>::identity(3, 3) * 2.0);
/// let sys = OperatorSystem::new(&kg, &s, 0.1)?;
/// assert_eq!(sys.dim(), 3);
/// # Ok::<(), gp_solvers::SolverError>(())
/// ```
#[derive(Clone, Copy)]
pub struct OperatorSystem<'a> {
    kg: &'a dyn LinearOperator,
    s: &'a dyn LinearOperator,
    noise_variance: f64,
}

impl std::fmt::Debug for OperatorSystem<'_> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("OperatorSystem")
            .field("m", &self.kg.nrows())
            .field("noise_variance", &self.noise_variance)
            .finish()
    }
}

impl<'a> OperatorSystem<'a> {
    /// Wraps the prior covariance `K_G` and the Gram matrix `S = WᵀW`.
    ///
    /// Errors with [`SolverError::ShapeMismatch`](crate::SolverError::ShapeMismatch) unless
    /// both are square of the same order, and with
    /// [`SolverError::InvalidOptions`](crate::SolverError::InvalidOptions) unless
    /// `noise_variance` is finite and non-negative.
    pub fn new(
        kg: &'a dyn LinearOperator,
        s: &'a dyn LinearOperator,
        noise_variance: f64,
    ) -> Result<Self> {
        let m = kg.nrows();
        check_shape(
            kg.shape(),
            (m, m),
            "OperatorSystem::new (K_G must be square)",
        )?;
        check_shape(s.shape(), (m, m), "OperatorSystem::new (S = WᵀW)")?;
        check_noise_variance(noise_variance)?;
        Ok(Self {
            kg,
            s,
            noise_variance,
        })
    }
}

/// `out = op v` with the lengths checked before (`LinearOperator::matvec` may panic on a
/// wrong length) and the output checked after.
fn checked_matvec(
    op: &dyn LinearOperator,
    v: ColRef<'_, f64>,
    mut out: ColMut<'_, f64>,
    context: &'static str,
) -> Result<()> {
    let m = op.nrows();
    check_shape((v.nrows(), 1), (m, 1), context)?;
    check_shape((out.nrows(), 1), (m, 1), context)?;
    op.matvec(v, out.rb_mut());
    gp_linalg::validate::check_finite_col(out.rb(), context)?;
    Ok(())
}

impl WeightSpaceSystem for OperatorSystem<'_> {
    fn dim(&self) -> usize {
        self.kg.nrows()
    }
    fn apply_prior(&self, v: ColRef<'_, f64>, out: ColMut<'_, f64>) -> Result<()> {
        checked_matvec(self.kg, v, out, "OperatorSystem::apply_prior (K_G v)")
    }
    fn apply_gram(&self, v: ColRef<'_, f64>, out: ColMut<'_, f64>) -> Result<()> {
        checked_matvec(self.s, v, out, "OperatorSystem::apply_gram (S v)")
    }
    fn noise_variance(&self) -> f64 {
        self.noise_variance
    }
}

/// The data-space start vector `z₀ ∈ ℝⁿ` of a factorized solve, known through
/// `g = Wᵀz₀ ∈ ℝᵐ` and `ρ = z₀ᵀz₀` (one pass over the data, done by the caller).
///
/// For CG, `z₀` is the initial residual `r₀ = b − K̃ x₀` (`= b` from `x₀ = 0`); for Lanczos
/// it is the (unnormalized) start vector. Every vector the solvers return is
/// `W v̂ + c z₀` for this `z₀`.
#[derive(Debug, Clone, PartialEq)]
pub struct StartVector {
    g: Vec<f64>,
    rho: f64,
}

impl StartVector {
    /// From `g = Wᵀz₀` and `ρ = ‖z₀‖²`.
    ///
    /// Errors with a [`LinalgError::NonFinite`](gp_linalg::LinalgError::NonFinite) if `g`
    /// holds NaN or infinity, and with
    /// [`SolverError::InvalidOptions`](crate::SolverError::InvalidOptions) if `ρ` is not
    /// finite and non-negative, or `ρ = 0` while `g ≠ 0` (impossible for `z₀ = 0`).
    pub fn new(g: Col<f64>, rho: f64) -> Result<Self> {
        gp_linalg::validate::check_finite_col(g.as_ref(), "the start vector's g = Wᵀz₀")?;
        if !(rho.is_finite() && rho >= 0.0) {
            return Err(invalid(
                "rho",
                format!("ρ = ‖z₀‖² must be finite and non-negative, got {rho}"),
            ));
        }
        if rho == 0.0 && g.iter().any(|&v| v != 0.0) {
            return Err(invalid("rho", "ρ = ‖z₀‖² = 0 but g = Wᵀz₀ is not zero"));
        }
        Ok(Self {
            g: g.iter().copied().collect(),
            rho,
        })
    }

    /// `g = Wᵀz₀`.
    pub fn g(&self) -> ColRef<'_, f64> {
        ColRef::from_slice(&self.g)
    }

    /// `ρ = ‖z₀‖²`.
    pub fn rho(&self) -> f64 {
        self.rho
    }

    /// `‖z₀‖₂`.
    pub fn norm(&self) -> f64 {
        self.rho.sqrt()
    }

    pub(crate) fn g_slice(&self) -> &[f64] {
        &self.g
    }
}

/// Checks `σ²`: finite and non-negative.
pub(crate) fn check_noise_variance(sigma2: f64) -> Result<()> {
    if sigma2.is_finite() && sigma2 >= 0.0 {
        Ok(())
    } else {
        Err(invalid(
            "noise_variance",
            format!("σ² must be finite and non-negative, got {sigma2}"),
        ))
    }
}

/// Checks a system and a start vector against each other; returns `m`.
pub(crate) fn check_system(
    system: &dyn WeightSpaceSystem,
    start: Option<&StartVector>,
    context: &'static str,
) -> Result<usize> {
    let m = system.dim();
    check_noise_variance(system.noise_variance())?;
    if let Some(start) = start {
        check_shape((start.g.len(), 1), (m, 1), context)?;
    }
    Ok(m)
}

/// Slice-based wrappers around the trait's products. Each checks its output, so that NaN or
/// infinity from a system that does not check its own products ends the solve with an error
/// instead of being carried into the solution.
pub(crate) struct Products<'a> {
    pub(crate) system: &'a dyn WeightSpaceSystem,
    pub(crate) sigma2: f64,
}

impl<'a> Products<'a> {
    pub(crate) fn new(system: &'a dyn WeightSpaceSystem) -> Self {
        Self {
            system,
            sigma2: system.noise_variance(),
        }
    }

    /// `out = K_G v`.
    pub(crate) fn kg(&self, v: &[f64], out: &mut [f64]) -> Result<()> {
        self.system
            .apply_prior(ColRef::from_slice(v), ColMut::from_slice_mut(out))?;
        check_finite_slice(out, "the system's prior product K_G v")?;
        Ok(())
    }

    /// `out = S v`.
    pub(crate) fn s(&self, v: &[f64], out: &mut [f64]) -> Result<()> {
        self.system
            .apply_gram(ColRef::from_slice(v), ColMut::from_slice_mut(out))?;
        check_finite_slice(out, "the system's Gram product S v")?;
        Ok(())
    }

    /// `(a_out, s_out) = (Â v, S v)`.
    pub(crate) fn b(&self, v: &[f64], a_out: &mut [f64], s_out: &mut [f64]) -> Result<()> {
        self.system.apply_b(
            ColRef::from_slice(v),
            ColMut::from_slice_mut(a_out),
            ColMut::from_slice_mut(s_out),
        )?;
        check_finite_slice(s_out, "the system's Gram product S v")?;
        check_finite_slice(a_out, "the system's product Â v = K_G S v + σ² v")?;
        Ok(())
    }

    /// The factorized product `𝒜(v̂, c) = (Â v̂ + c h, σ² c)`; `s_out` receives `S v̂`.
    pub(crate) fn factorized(
        &self,
        v: &[f64],
        c: f64,
        h: &[f64],
        a_out: &mut [f64],
        s_out: &mut [f64],
    ) -> Result<f64> {
        self.b(v, a_out, s_out)?;
        axpy(c, h, a_out);
        Ok(self.sigma2 * c)
    }
}
