//! The kernels the RFF objective differentiates: stationary ARD kernels whose log
//! hyperparameters are `[log ℓ₀, …, log ℓ_{d−1}, log s]`.

use gp_kernels::{ArdParams, Kernel, Matern, SquaredExponential};

mod sealed {
    /// Only the kernels of this module implement [`RffKernel`](super::RffKernel): the
    /// gradient assumes their parameter layout.
    pub trait Sealed {}
    impl Sealed for gp_kernels::SquaredExponential {}
    impl Sealed for gp_kernels::Matern {}
}

/// A stationary ARD kernel with a random-Fourier-feature objective and its analytic
/// gradient: [`SquaredExponential`] (Gaussian spectral density) and [`Matern`] (Student-t).
///
/// Frequencies are reparameterised as `ω_f = t_f · g_f ⊘ ℓ` with `g_f ~ N(0, I_d)` and a
/// scale `t_f` that is 1 for the squared exponential and `sqrt(2ν/u_f)`, `u_f ~ χ²_{2ν}`, for
/// Matérn-ν (spec `rtgps.md` §1.5); `g_f` and `t_f` are drawn once
/// ([`SpectralDraws`](super::SpectralDraws)) and held fixed, so the gradient flows into `ℓ`.
/// The kernel's log hyperparameters are `[log ℓ₀, …, log ℓ_{d−1}, log s]` (the trait is
/// sealed because the gradient relies on this layout).
pub trait RffKernel: Kernel + Clone + sealed::Sealed {
    /// The length scales `ℓ` and the output scale `s`.
    fn ard_params(&self) -> &ArdParams;

    /// The degrees of freedom `2ν` of the Student-t spectral density, or `None` for a
    /// Gaussian one.
    fn student_t_dof(&self) -> Option<f64>;
}

impl RffKernel for SquaredExponential {
    fn ard_params(&self) -> &ArdParams {
        self.params()
    }
    fn student_t_dof(&self) -> Option<f64> {
        None
    }
}

impl RffKernel for Matern {
    fn ard_params(&self) -> &ArdParams {
        self.params()
    }
    fn student_t_dof(&self) -> Option<f64> {
        Some(2.0 * self.nu().value())
    }
}
