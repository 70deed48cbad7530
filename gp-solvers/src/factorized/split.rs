//! Splitting the start vector `z₀` into a part in `range(W)` and a remainder, so that the
//! factorized Krylov vectors `W v̂ + c z₀'` do not cancel (see [`split_start`]).

use super::system::Products;
use crate::cg::kernels::dot;
use crate::error::Result;

/// The split `z₀ = W ŷ₀ + z₀'` of a start vector known through `g = Wᵀz₀`: `ŷ₀` and `S ŷ₀`.
pub(crate) struct StartSplit {
    /// `ŷ₀`, the grid coefficients of the part of `z₀` taken into `range(W)`.
    pub(crate) y_hat: Vec<f64>,
    /// `S ŷ₀`.
    pub(crate) s_y_hat: Vec<f64>,
}

/// `ŷ₀ = α g` with `α = gᵀg / gᵀS g`: one steepest-descent step from `0` on `S ŷ = g`, whose
/// solution `S⁺g` gives the projection `W S⁺g` of `z₀` on `range(W)`. Costs one `S` product.
///
/// Why: in the representation `v = W v̂ + c z₀` of the factorized solvers, a start vector with
/// a large component in `range(W)` (the posterior mean's `z₀ = y`, whose smooth part lies in
/// `range(W)`) makes `W v̂` and `c z₀` large and nearly opposite once the Krylov vectors are
/// small: `‖c Wᵀz₀‖/‖Wᵀv‖` reached 60–75 at `n = 10⁵` and 220–230 at `n = 10⁶` on the
/// GSGP sine data (`m = 4096`), so `K_G (S v̂ + c g)` lost two to three more digits than
/// plain CG's products and EFCG took up to 25% more iterations than CG at `n = 10⁷`. With
/// `z₀' = z₀ − W ŷ₀` the solver runs on `g₀ = Wᵀz₀' = g − S ŷ₀` and `ρ₀ = ‖z₀'‖²`; the iterates
/// are the same in exact arithmetic whatever `ŷ₀` is. One step already removes the smooth
/// part: at `n = 10⁶` (three seeds) EFCG took 47, 58, 60 iterations after one step, 48, 57,
/// 58 after ten, against 57–66 without the split and 56–58 for plain CG.
///
/// Errors when the `S` product fails. Returns `None` when `g = 0` or the step is unusable (`gᵀS g ≤ 0` or not finite): then no
/// split is made.
pub(crate) fn split_start(ops: &Products<'_>, g: &[f64]) -> Result<Option<StartSplit>> {
    let gg = dot(g, g);
    if !(gg.is_finite() && gg > 0.0) {
        return Ok(None);
    }
    let mut sg = vec![0.0; g.len()];
    ops.s(g, &mut sg)?;
    let curvature = dot(g, &sg);
    if !(curvature.is_finite() && curvature > 0.0) {
        return Ok(None);
    }
    let alpha = gg / curvature;
    let y_hat: Vec<f64> = g.iter().map(|v| alpha * v).collect();
    gp_linalg::vector::scale(alpha, &mut sg);
    Ok(Some(StartSplit { y_hat, s_y_hat: sg }))
}
