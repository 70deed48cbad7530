//! Efficiently factorized CG (EFCG, paper Algorithm 3 as corrected in GSGP spec §3.4).

use super::cg_result::{FactorizedCgResult, Recorder};
use super::options::FactorizedCgOptions;
use super::system::{check_system, FactorizedSystem, Products, StartVector};
use super::vector::{w_transpose_from, FactorizedVector};
use crate::cg::kernels::{axpy, dot};
use crate::error::Result;

/// Efficiently factorized conjugate gradients: the iterates of [`cg`](crate::cg()) on
/// `K̃ = W K_G Wᵀ + σ² I_n` for the right-hand side `z₀` (from `x = 0`), at one `K_G` and
/// one `S` product per iteration (plus one `K_G` product of set-up for `h = K_G g`).
///
/// Besides `r̂`, `p̂` and `x̂` it keeps the by-products of the double product
/// `B(r̂) = (Â r̂, S r̂)`: `ẑ = Â p̂`, `ŝ = S p̂`, `γ = gᵀp̂`, and `S x̂` (for `Wᵀx`). With
/// `â = ẑ + c_p h` and `c_a = σ² c_p` (the two parts of `K̃ p`), one iteration is
///
/// ```text
/// pᵀK̃p = ŝᵀâ + c_p gᵀâ + c_a γ + c_a c_p ρ;   α = ‖r‖² / pᵀK̃p
/// x̂ += α p̂;  c_x += α c_p;  r̂ −= α â;  c_r −= α c_a
/// (v̂, û) = B(r̂);  η = gᵀr̂;  ‖r‖² = r̂ᵀû + 2 c_r η + c_r² ρ
/// β = ‖r_new‖² / ‖r‖²;  p̂ = r̂ + β p̂;  c_p = c_r + β c_p;  ŝ = û + β ŝ;  ẑ = v̂ + β ẑ;  γ = η + β γ
/// ```
///
/// This is the corrected form of the paper's Algorithm 3 (spec §3.4): the paper's
/// curvature drops the terms with `h` (it uses `ẑ` where `â = ẑ + c_p h` is needed) and uses
/// `gᵀr̂` where `gᵀp̂` is needed, writes `‖r₀‖` for `‖r₀‖²`, leaves a coefficient `c^z`
/// undefined (it is `σ² c_p`) and omits `ρ` in the numerator of `β`.
///
/// Options, starting from `x₀ ≠ 0` and errors as for [`fcg`](super::fcg()).
///
/// ```
/// use faer::{Col, Mat};
/// use gp_linalg::DenseOperator;
/// use gp_solvers::factorized::{efcg, FactorizedCgOptions, OperatorSystem, StartVector};
///
/// // W: 6 data points on a 3-point grid (linear interpolation); K_G: a small SPD matrix.
/// let w = Mat::from_fn(6, 3, |i, j| {
///     let t = i as f64 * 0.4;
///     (1.0 - (t - j as f64).abs()).max(0.0)
/// });
/// let kg = Mat::from_fn(3, 3, |i, j| (-0.5 * ((i as f64 - j as f64) / 1.5).powi(2)).exp());
/// let s = w.transpose() * &w;
/// let sigma2 = 0.1;
/// let y = Col::from_fn(6, |i| (i as f64).sin());
///
/// let (kg_op, s_op) = (DenseOperator::new(kg.clone()), DenseOperator::new(s));
/// let system = OperatorSystem::new(&kg_op, &s_op, sigma2)?;
/// let start = StartVector::new(w.transpose() * &y, y.squared_norm_l2())?;
/// let opts = FactorizedCgOptions { tolerance: 1e-12, ..Default::default() };
/// let res = efcg(&system, &start, &opts)?;
///
/// // Expand x = W x̂ + c y and compare with the dense solve.
/// let x = res.solution.expand(&DenseOperator::new(w.clone()), y.as_ref())?;
/// let a = &w * &kg * w.transpose() + Mat::<f64>::identity(6, 6) * sigma2;
/// assert!((&a * &x - &y).norm_l2() < 1e-10);
/// # Ok::<(), gp_solvers::SolverError>(())
/// ```
pub fn efcg(
    system: &dyn FactorizedSystem,
    start: &StartVector,
    options: &FactorizedCgOptions,
) -> Result<FactorizedCgResult> {
    options.validate()?;
    let m = check_system(system, Some(start), "efcg (g = Wᵀz₀)")?;
    let ops = Products::new(system);
    let sigma2 = ops.sigma2;
    let g = start.g_slice();
    let rho = start.rho();
    let mut rec = Recorder::new(options, rho);
    let mut x = vec![0.0; m];
    let mut sx = vec![0.0; m];
    let mut cx = 0.0;
    if rec.running() {
        let mut h = vec![0.0; m];
        ops.kg(g, &mut h);
        let (mut r, mut cr) = (vec![0.0; m], 1.0);
        let (mut p, mut cp) = (vec![0.0; m], 1.0);
        // Â p̂, S p̂ and gᵀp̂ (p̂ = 0 at the start).
        let (mut z, mut s, mut gamma) = (vec![0.0; m], vec![0.0; m], 0.0);
        // B(r̂) and the hat part of K̃ p.
        let (mut v, mut u, mut a) = (vec![0.0; m], vec![0.0; m], vec![0.0; m]);
        while rec.running() {
            // K̃ p = W â + c_a z₀ with â = ẑ + c_p h, c_a = σ² c_p: no product.
            a.copy_from_slice(&z);
            axpy(cp, &h, &mut a);
            let ca = sigma2 * cp;
            let curvature = dot(&s, &a) + cp * dot(g, &a) + ca * gamma + ca * cp * rho;
            let Some(alpha) = rec.step_length(curvature) else {
                break;
            };
            axpy(alpha, &p, &mut x);
            axpy(alpha, &s, &mut sx);
            cx += alpha * cp;
            axpy(-alpha, &a, &mut r);
            cr -= alpha * ca;
            rec.record_iterate(&x, cx);
            // The only products of the iteration.
            ops.b(&r, &mut v, &mut u);
            let eta = dot(g, &r);
            let rr_new = dot(&r, &u) + 2.0 * cr * eta + cr * cr * rho;
            let Some(beta) = rec.complete_step(alpha, rr_new) else {
                break;
            };
            update_direction(&mut p, &r, beta);
            update_direction(&mut s, &u, beta);
            update_direction(&mut z, &v, beta);
            cp = cr + beta * cp;
            gamma = eta + beta * gamma;
        }
    }
    let wt = w_transpose_from(&sx, cx, g);
    Ok(rec.finish(FactorizedVector::from_slice(&x, cx), wt))
}

/// `p = r + β p`.
pub(crate) fn update_direction(p: &mut [f64], r: &[f64], beta: f64) {
    gp_linalg::vector::scale(beta, p);
    axpy(1.0, r, p);
}
