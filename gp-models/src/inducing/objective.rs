//! The gradient of a sparse GP's objective (nlZ, or VFE's −ELBO) with respect to the
//! kernel's log hyperparameters and `log σ²`, in `O(N m² + N m p)` without any `N × N`
//! matrix.
//!
//! Write the training covariance as `C = Q + G` with `G = σ² diag(λ)` (diagonal),
//! `B = K_UU⁻¹K_UX` and `W = C⁻¹ − ααᵀ`, `α = C⁻¹y`. Then `dnlZ = ½ tr(W dC)`, and with
//! `dQ = dK_XU B + Bᵀ dK_UX − Bᵀ dK_UU B` and FITC's `dGᵢᵢ = dkᵢᵢ − dQᵢᵢ + dσ²`:
//!
//! ```text
//! dF = Σᵢⱼ Rⱼᵢ d(K_XU)ᵢⱼ − ½ Σₐᵦ Sₐᵦ d(K_UU)ₐᵦ + ½ Σᵢ cᵢ dkᵢᵢ + (noise term)
//! R = B W − B diag(c),   S = R Bᵀ
//! ```
//!
//! with `c = diag(W)` for FITC, `c = 0` for SoR and DTC, and `c = 1/σ²` for VFE, whose
//! trace term `tr(K − Q)/(2σ²)` has exactly that form. The `m × N` and `m × m` products
//! come from the factors (Woodbury): `B C⁻¹ = (LLᵀ)⁻¹ K_UX diag(1/λ) =: E`, `B α = β`,
//! `α = (y − K_XU β) ./ (σ²λ)`, `diag(C⁻¹)ᵢ = (1 − (K_XU E)ᵢᵢ)/(σ²λᵢ)`, so `B W = E − βαᵀ`.
//! The noise term is `½ σ² tr(W)` per unit of `log σ²` (minus the penalty for VFE). The
//! jitter, if any, is held fixed.

use faer::{Col, Mat};
use gp_kernels::Kernel;

use crate::error::Result;
use crate::inducing::model::SparseGp;
use crate::inducing::options::SparseMethod;

impl<K: Kernel> SparseGp<K> {
    /// The gradient of the objective ([`SparseEvidence::objective`](crate::SparseEvidence):
    /// nlZ, or −ELBO for VFE) with respect to every log hyperparameter, in the order of
    /// [`param_names`](Self::param_names) (the kernel's, then `log σ²`).
    ///
    /// Errors: only a shape error of the triangular solves, which the fitted factors rule
    /// out.
    pub fn objective_grad(&self) -> Result<Vec<f64>> {
        let f = &self.factors;
        let (n, m) = (self.n_train(), self.inducing.len());
        let s2 = self.noise_variance;
        let lambda = &f.lambda;
        // B = L_uu⁻ᵀ V = K_UU⁻¹ K_UX.
        let mut bmat = f.v.clone();
        f.luu.solve_upper_in_place(bmat.as_mut())?;
        // E = (LLᵀ)⁻¹ K_UX diag(1/λ) = B C⁻¹.
        let mut e = Mat::from_fn(m, n, |a, i| f.kux[(a, i)] / lambda[i]);
        f.system.solve_in_place(e.as_mut())?;
        let g = Col::from_fn(n, |i| s2 * lambda[i]);
        let alpha = Col::from_fn(n, |i| {
            let kb: f64 = (0..m).map(|a| f.kux[(a, i)] * f.beta[a]).sum();
            (self.y[i] - kb) / g[i]
        });
        let cinv_diag = Col::from_fn(n, |i| {
            let ke: f64 = (0..m).map(|a| f.kux[(a, i)] * e[(a, i)]).sum();
            (1.0 - ke) / g[i]
        });
        let c = Col::from_fn(n, |i| match self.method() {
            SparseMethod::Fitc => cinv_diag[i] - alpha[i] * alpha[i],
            SparseMethod::Vfe if f.penalty_active => 1.0 / s2,
            _ => 0.0,
        });
        // R = E − βαᵀ − B diag(c) (m × N); S = R Bᵀ (m × m, symmetrized).
        let r = Mat::from_fn(m, n, |a, i| {
            e[(a, i)] - f.beta[a] * alpha[i] - bmat[(a, i)] * c[i]
        });
        let mut s = &r * bmat.transpose();
        for a in 0..m {
            for b in a + 1..m {
                let t = 0.5 * (s[(a, b)] + s[(b, a)]);
                s[(a, b)] = t;
                s[(b, a)] = t;
            }
        }
        let p = self.kernel.n_params();
        let mut grad = vec![0.0; p + 1];
        let mut dk = vec![0.0; p];
        let (x, u) = (self.x.as_ref(), self.inducing.points());
        let row = |mat: faer::MatRef<'_, f64>, i: usize| -> Vec<f64> {
            (0..mat.ncols()).map(|l| mat[(i, l)]).collect()
        };
        let u_rows: Vec<Vec<f64>> = (0..m).map(|a| row(u, a)).collect();
        for i in 0..n {
            let xi = row(x, i);
            for (a, ua) in u_rows.iter().enumerate() {
                self.kernel.eval_with_grad(ua, &xi, &mut dk);
                for (gq, d) in grad.iter_mut().zip(&dk) {
                    *gq += r[(a, i)] * d;
                }
            }
            if c[i] != 0.0 {
                self.kernel.eval_with_grad(&xi, &xi, &mut dk);
                for (gq, d) in grad.iter_mut().zip(&dk) {
                    *gq += 0.5 * c[i] * d;
                }
            }
        }
        for a in 0..m {
            for b in 0..m {
                self.kernel.eval_with_grad(&u_rows[a], &u_rows[b], &mut dk);
                for (gq, d) in grad.iter_mut().zip(&dk) {
                    *gq -= 0.5 * s[(a, b)] * d;
                }
            }
        }
        let trace_w: f64 = (0..n).map(|i| cinv_diag[i] - alpha[i] * alpha[i]).sum();
        let mut noise = 0.5 * s2 * trace_w;
        if self.method() == SparseMethod::Vfe {
            // ∂/∂ log σ² of tr(K − Q)/(2σ²) is minus itself (zero when clipped).
            noise -= f.evidence.trace_penalty;
        }
        grad[p] = noise;
        Ok(grad)
    }
}
