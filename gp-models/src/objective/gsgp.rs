//! The CG and RR-CG estimators on a [`Gsgp`] model: truncated or Russian-roulette
//! factorized CG in grid space, so that a model kept as sufficient statistics is trained
//! without truncation bias and with no cost that depends on `n`.
//!
//! Factorized CG (EFCG, FCG) from `x₀ = 0` has the iterates of CG on `K̂ = W K_G Wᵀ + σ²I`
//! in the representation `x_j = W x̂_j + c_j z₀`, so the CG series of `K̂⁻¹b` is the series
//! of the pairs `(x̂_j, c_j)` and its Russian-roulette estimate ([`RrSeries`]) is the
//! RR-CG estimate of [`krylov_estimate`](super::krylov_estimate) in that representation.
//! With `t = Wᵀy`, `q = yᵀy`, `S = WᵀW`, and `(x̂ᵢ, cᵢ)` two independent RR estimates of
//! `α = K̂⁻¹y` (start vector `z₀ = y`), `ξ_k ∈ ℝᵐ` Rademacher probes and `Û_k = Wᵀ K̂⁻¹ W ξ_k`
//! their mean RR estimates (simplified EFCG, or FCG from `z₀ = W ξ_k`):
//!
//! ```text
//! ∂ log p/∂θ     = ½ (Wᵀα₁)ᵀ (∂K_G/∂θ) (Wᵀα₂) − ½ (1/t) Σ_k Û_kᵀ (∂K_G/∂θ) ξ_k,  Wᵀαᵢ = S x̂ᵢ + cᵢ t
//! ∂ log p/∂log σ² = ½ σ² α₁ᵀα₂ − ½ (n − (1/t) Σ_k Û_kᵀ K_G ξ_k),
//!                  α₁ᵀα₂ = x̂₁ᵀ (Wᵀα₂) + c₁ (tᵀx̂₂ + c₂ q)
//! ```
//!
//! (the identities of [`gsgp::lml`](crate::gsgp::lml) with the converged solves replaced by
//! their RR estimates; each term is linear in each independent estimate, hence unbiased for
//! the series truncated at the law's largest depth). The value, when asked for, is
//! `tᵀx̄ + c̄ q` from the mean estimate and the RR-SLQ log determinant of the `m`-space
//! identity `log det K̂ = n log σ² + log det(I_r + Lᵀ S L/σ²)`
//! ([`gsgp::log_det`](crate::gsgp::log_det)), its CG series truncated by the same draws.

use faer::{Col, ColRef, Mat, MatRef};
use gp_kernels::Kernel;
use gp_linalg::LinearOperator;
use gp_solvers::factorized::{
    EfcgSimplifiedSolver, EfcgSolver, FactorizedCgOptions, FactorizedCgResult, FactorizedVector,
    FcgSolver, StartVector,
};
use gp_solvers::rr_cg::RrSeries;
use gp_solvers::truncation::TruncationLaw;
use gp_solvers::{cg, CgOptions, ProbeOptions, Probes};
use rand::RngCore;
use rayon::prelude::*;

use crate::cg_report::check_breakdown;
use crate::error::{ModelError, Result};
use crate::gsgp::log_det::SymmetrizedOperator;
use crate::gsgp::model::Gsgp;
use crate::gsgp::options::GsgpSolver;
use crate::gsgp::solve::check_factorized;
use crate::objective::estimator::{KrylovObjectiveOptions, ObjectiveEstimate};
use crate::objective::krylov::{
    depth_draws, depth_log_det, krylov_objective_estimate, KrylovDepth,
};

/// Caller-chosen probes of [`gsgp_krylov_estimate`].
#[derive(Debug, Clone)]
pub struct GsgpProbes {
    /// Probes of the log determinant, of dimension [`Gsgp::log_det_dim`] (used only when the
    /// value is asked for).
    pub log_det: Probes,
    /// Probes of the gradient's traces, one row per grid point (`E[ξξᵀ] = I`; `√m e_i` for
    /// all `i` makes the traces exact).
    pub trace: Probes,
}

/// One CG or RR-CG evaluation of `log p(y)` and its gradient (kernel's log
/// hyperparameters, then `log σ²`) for a [`Gsgp`] model, entirely in grid space (see the
/// module documentation for the formulas).
///
/// `depth` chooses truncated CG ([`KrylovDepth::Fixed`]) or RR-CG; the solves stop early
/// at `options.tolerance` (the remaining terms of the series are then zero, as in
/// [`rr_cg`](gp_solvers::rr_cg::rr_cg)). Without `probes`, `options.probes` Rademacher
/// probes of each kind are drawn from `rng`. The model's [`GsgpSolver`] is the factorized
/// CG used. `options.preconditioner_rank` does not apply (GSGP runs unpreconditioned).
///
/// Errors: [`ModelError::InvalidOption`] for fewer than two draws or a fixed depth of 0;
/// [`ModelError::LengthMismatch`] for probes of the wrong dimension;
/// [`ModelError::CgBreakdown`] and [`ModelError::Solver`] from the solves; those of
/// [`Gsgp::log_det_dim`] when the value is asked for; [`ModelError::UnsupportedKernel`]
/// for a grid kernel without Kronecker derivatives.
pub fn gsgp_krylov_estimate<K: Kernel>(
    gsgp: &Gsgp<K>,
    depth: KrylovDepth<'_>,
    options: &KrylovObjectiveOptions,
    probes: Option<GsgpProbes>,
    rng: &mut dyn RngCore,
) -> Result<ObjectiveEstimate> {
    let m = gsgp.grid().num_points();
    let n = gsgp.n_train() as f64;
    let sigma2 = gsgp.noise_variance();
    let mut fixed_law = None;
    let (law, draws) = depth_draws(depth, &mut fixed_law, rng)?;
    let (log_det_probes, trace_probes) = match probes {
        Some(p) => (options.with_value.then_some(p.log_det), p.trace),
        None => {
            let draw = |dim: usize, seed: u64| {
                let opts = ProbeOptions {
                    count: options.probes,
                    seed,
                    ..ProbeOptions::default()
                };
                Probes::generate(dim, None, &opts)
            };
            let trace = draw(m, rng.next_u64())?;
            let log_det = if options.with_value {
                Some(draw(gsgp.log_det_dim()?, rng.next_u64())?)
            } else {
                None
            };
            (log_det, trace)
        }
    };
    if trace_probes.dim() != m {
        return Err(ModelError::LengthMismatch {
            context: "GSGP trace probes (one row per grid point)",
            expected: m,
            found: trace_probes.dim(),
        });
    }
    let solver_options = FactorizedCgOptions {
        tolerance: options.tolerance,
        max_iterations: draws.iter().copied().max().unwrap_or(0),
        min_iterations: 0,
        ..FactorizedCgOptions::default()
    };
    let stats = gsgp.stats();
    let t_vec = stats.wty();
    let q = stats.yty();
    let gram = stats.gram();

    // α = K̂⁻¹y from z₀ = y: two independent estimates and their mean.
    let start = StartVector::new(t_vec.to_owned(), q)?;
    let (mean_series, iterations) =
        rr_factorized(gsgp, Start::Data(&start), law, &draws, &solver_options)?;
    let (first, second) = mean_series.independent_halves()?;
    let (x1, c1) = split_hat(&first);
    let (x2, c2) = split_hat(&second);
    let wt_alpha = |x: ColRef<'_, f64>, c: f64| -> Result<Col<f64>> {
        let mut out = gram.apply(x)?;
        gp_linalg::vector::axpy_col(c, t_vec, out.as_mut())?;
        Ok(out)
    };
    let wa1 = wt_alpha(x1.as_ref(), c1)?;
    let wa2 = wt_alpha(x2.as_ref(), c2)?;

    // Û_k = Wᵀ K̂⁻¹ W ξ_k, one factorized solve per probe.
    let xi = trace_probes.matrix();
    let count = xi.ncols();
    let solved = (0..count)
        .into_par_iter()
        .map(|k| -> Result<Col<f64>> {
            let probe = xi.col(k);
            let (series, _) =
                rr_factorized(gsgp, Start::RangeW(probe), law, &draws, &solver_options)?;
            let (x, c) = split_hat(&series.mean_estimate());
            // Wᵀ(W x̂ + c W ξ) = S (x̂ + c ξ) (c = 0 for the simplified EFCG).
            let mut v = x;
            gp_linalg::vector::axpy_col(c, probe, v.as_mut())?;
            Ok(gram.apply(v.as_ref())?)
        })
        .collect::<Result<Vec<_>>>()?;
    let u = Mat::from_fn(m, count, |i, k| solved[k][i]);

    let derivatives = gsgp.grid_kernel().derivatives()?;
    let mut gradient = Vec::with_capacity(derivatives.len() + 1);
    for dk in &derivatives {
        let fit = wa1.transpose() * &dk.apply(wa2.as_ref())?;
        let trace = contraction_mean(u.as_ref(), dk.apply_block(xi)?.as_ref());
        gradient.push(0.5 * (fit - trace));
    }
    let kg_xi = gsgp.grid_kernel().operator().apply_block(xi)?;
    let sigma2_trace = n - contraction_mean(u.as_ref(), kg_xi.as_ref());
    let alpha_dot = x1.transpose() * &wa2 + c1 * (t_vec.transpose() * &x2 + c2 * q);
    gradient.push(0.5 * (sigma2 * alpha_dot - sigma2_trace));

    let terms = match log_det_probes {
        Some(probes) => {
            let (x, c) = split_hat(&mean_series.mean_estimate());
            let fit = t_vec.transpose() * &x + c * q;
            Some((fit, rr_log_det(gsgp, &probes, law, &draws, depth, options)?))
        }
        None => None,
    };
    Ok(krylov_objective_estimate(
        terms,
        gsgp.n_train(),
        gradient,
        iterations,
    ))
}

/// `(1/t) Σ_k a[:, k]ᵀ b[:, k]`.
fn contraction_mean(a: MatRef<'_, f64>, b: MatRef<'_, f64>) -> f64 {
    let t = a.ncols();
    (0..t).map(|k| a.col(k).transpose() * b.col(k)).sum::<f64>() / t.max(1) as f64
}

/// A flat factorized iterate `[x̂ | c]` as `(x̂, c)`.
fn split_hat(flat: &[f64]) -> (Col<f64>, f64) {
    let m = flat.len() - 1;
    (Col::from_fn(m, |i| flat[i]), flat[m])
}

/// The right-hand side of a factorized solve.
enum Start<'a> {
    /// `z₀ = y`, given by `(Wᵀy, yᵀy)`.
    Data(&'a StartVector),
    /// `z₀ = W ξ` for a grid vector `ξ`.
    RangeW(ColRef<'a, f64>),
}

/// One of the model's factorized solvers, stepped by [`rr_factorized`].
enum Stepper<'a> {
    Efcg(EfcgSolver<'a>),
    Fcg(FcgSolver<'a>),
    Simplified(EfcgSimplifiedSolver<'a>),
}

impl Stepper<'_> {
    /// One step; the iterate after it, `None` once the solve has stopped.
    fn step(&mut self) -> Result<Option<FactorizedVector>> {
        let stepped = match self {
            Stepper::Efcg(s) => s.step()?.is_some(),
            Stepper::Fcg(s) => s.step()?.is_some(),
            Stepper::Simplified(s) => s.step()?.is_some(),
        };
        Ok(stepped.then(|| match self {
            Stepper::Efcg(s) => s.solution(),
            Stepper::Fcg(s) => s.solution(),
            Stepper::Simplified(s) => s.solution(),
        }))
    }

    /// The solve's record (for its breakdown status).
    fn finish(self) -> Result<FactorizedCgResult> {
        Ok(match self {
            Stepper::Efcg(s) => s.finish(),
            Stepper::Fcg(s) => s.finish()?,
            Stepper::Simplified(s) => s.finish(),
        })
    }
}

/// Runs the model's factorized CG for `start` up to the largest draw and returns the RR
/// accumulators of its iterates `[x̂ | c]` (length `m + 1`) and the steps taken.
fn rr_factorized<'a, K: Kernel>(
    gsgp: &Gsgp<K>,
    start: Start<'_>,
    law: &'a dyn TruncationLaw,
    draws: &[usize],
    options: &FactorizedCgOptions,
) -> Result<(RrSeries<'a>, usize)> {
    let system = gsgp.system()?;
    let m = gsgp.grid().num_points();
    let context = match start {
        Start::Data(_) => "the GSGP RR-CG solve for α = K̂⁻¹y",
        Start::RangeW(_) => "the GSGP RR-CG trace solves Wᵀ K̂⁻¹ W ξ",
    };
    let mut stepper = match (start, gsgp.options().solver) {
        (Start::Data(s), GsgpSolver::Efcg) => Stepper::Efcg(EfcgSolver::new(&system, s, options)?),
        (Start::Data(s), _) => Stepper::Fcg(FcgSolver::new(&system, s, options)?),
        (Start::RangeW(xi), GsgpSolver::Efcg) => {
            Stepper::Simplified(EfcgSimplifiedSolver::new(&system, xi, options)?)
        }
        (Start::RangeW(xi), _) => {
            let g = gsgp.stats().gram().apply(xi)?;
            let rho = (xi.transpose() * &g).max(0.0);
            // A probe in the null space of W: nothing to solve.
            let g = if rho == 0.0 { Col::zeros(g.nrows()) } else { g };
            Stepper::Fcg(FcgSolver::new(
                &system,
                &StartVector::new(g, rho)?,
                options,
            )?)
        }
    };
    let mut series = RrSeries::new(law, draws, m + 1)?;
    let mut flat = vec![0.0; m + 1];
    while series.terms() < series.max_draw() {
        let Some(iterate) = stepper.step()? else {
            break;
        };
        for (f, v) in flat.iter_mut().zip(iterate.hat.iter()) {
            *f = *v;
        }
        flat[m] = iterate.coeff;
        series.push_iterate(&flat)?;
    }
    let steps = series.terms();
    check_factorized(&stepper.finish()?, context, 0)?;
    Ok((series, steps))
}

/// The (RR-)SLQ estimate of `log det K̂ = n log σ² + log det(I_r + Lᵀ S L/σ²)` with the CG
/// series on the symmetrized operator truncated by `draws`.
fn rr_log_det<K: Kernel>(
    gsgp: &Gsgp<K>,
    probes: &Probes,
    law: &dyn TruncationLaw,
    draws: &[usize],
    depth: KrylovDepth<'_>,
    options: &KrylovObjectiveOptions,
) -> Result<f64> {
    let factor = gsgp.log_det_factor()?;
    let r = factor.rank();
    if probes.dim() != r {
        return Err(ModelError::LengthMismatch {
            context: "GSGP log-determinant probes (dimension log_det_dim())",
            expected: r,
            found: probes.dim(),
        });
    }
    let op = SymmetrizedOperator {
        factor,
        noise_variance: gsgp.noise_variance(),
    };
    let cg_options = CgOptions {
        tolerance: options.tolerance,
        max_iterations: draws.iter().copied().max().unwrap_or(0),
        min_iterations: 0,
        ..CgOptions::default()
    };
    let res = cg(&op, probes.matrix(), None, &cg_options)?;
    check_breakdown(&res, "the GSGP RR-SLQ solve on I + LᵀSL/σ²")?;
    let offset = gsgp.n_train() as f64 * gsgp.noise_variance().ln();
    depth_log_det(&res.columns, depth, law, draws, r, offset, options)
}
