//! The feature matrix `Φ` and the chain rule from `∂L/∂Φ` to the kernel's log
//! hyperparameters.
//!
//! With `F` frequencies `ω_f = t_f · g_f ⊘ ℓ`, `Z = XΩᵀ` (`z_{if} = ω_fᵀx_i`) and
//! `c = sqrt(s/F)`, the features are stored as two blocks, `Φ = [C | S]` with `C = c cos Z`
//! and `S = c sin Z` (`n × 2F`; a column permutation of the interleaved cos/sin pairs of the
//! spec, which changes neither `ΦΦᵀ` nor the objective). Then
//!
//! ```text
//! ∂Φ/∂log s        = Φ/2
//! ∂z_{if}/∂log ℓ_d = −x_{id} ω_{fd}
//! ∂C_{if}/∂z_{if}  = −S_{if},   ∂S_{if}/∂z_{if} = C_{if}
//! ```
//!
//! so for `Q = [Q_C | Q_S] = ∂L/∂Φ`: `∂L/∂log s = ½ ⟨Q, Φ⟩` and, with
//! `R = Q_S ∘ C − Q_C ∘ S` (`R_{if} = ∂L/∂z_{if}`), `∂L/∂log ℓ_d = −Σ_f ω_{fd} (XᵀR)_{df}`
//! (`O(n F d)`).

use faer::linalg::matmul::matmul;
use faer::{Accum, ColMut, Mat, MatRef, Par};
use gp_linalg::parallelism_for;
use rayon::prelude::*;

/// Flops of gemm that take about as long as one `f64::sin_cos` (~20 ns against ~38 GFLOP/s),
/// so that [`parallelism_for`] splits the `n F` sines and cosines once they take about a
/// millisecond.
const SIN_COS_FLOPS: f64 = 500.0;

/// `cos Z` and `sin Z` for the frequencies of the largest evaluation: every evaluation with
/// fewer (nested) frequencies takes its columns from these, so the `n F` sines and cosines
/// are computed once.
pub(crate) struct Trig {
    /// `ω` (`F × d`).
    omega: Mat<f64>,
    /// `cos Z` (`n × F`).
    cos: Mat<f64>,
    /// `sin Z` (`n × F`).
    sin: Mat<f64>,
}

impl Trig {
    /// `cos` and `sin` of `Z = XΩᵀ` for points `x` (`n × d`) and frequencies `omega`
    /// (`F × d`).
    pub fn new(x: MatRef<'_, f64>, omega: Mat<f64>) -> Self {
        let (n, f) = (x.nrows(), omega.nrows());
        let mut sin = Mat::<f64>::zeros(n, f);
        let par = parallelism_for(2.0 * (n * f * x.ncols()) as f64);
        matmul(sin.as_mut(), Accum::Replace, x, omega.transpose(), 1.0, par);
        let mut cos = Mat::<f64>::zeros(n, f);
        let column = |(z, c): (ColMut<'_, f64>, ColMut<'_, f64>)| {
            for (zi, ci) in z.iter_mut().zip(c.iter_mut()) {
                let (s, c) = zi.sin_cos();
                *ci = c;
                *zi = s;
            }
        };
        // Column by column, so the values do not depend on the split. One libm `sin_cos`
        // takes about as long as `SIN_COS_FLOPS` flops of gemm: in the RR-SLQ bias figure
        // (`reproduce rtgps --only bias`) these calls were ~20% of the run on one thread.
        match parallelism_for(SIN_COS_FLOPS * (n * f) as f64) {
            Par::Seq => sin.col_iter_mut().zip(cos.col_iter_mut()).for_each(column),
            Par::Rayon(_) => sin
                .par_col_iter_mut()
                .zip(cos.par_col_iter_mut())
                .for_each(column),
        }
        Self { omega, cos, sin }
    }

    /// Number of frequencies held.
    pub fn num_freqs(&self) -> usize {
        self.omega.nrows()
    }

    /// The features of the first `num_freqs` frequencies (`≤ self.num_freqs()`) with output
    /// scale `variance`.
    pub fn features(&self, num_freqs: usize, variance: f64) -> Features {
        let n = self.cos.nrows();
        let c = (variance / num_freqs as f64).sqrt();
        let mut phi = Mat::<f64>::zeros(n, 2 * num_freqs);
        for q in 0..num_freqs {
            for (dst, src) in [(q, &self.cos), (num_freqs + q, &self.sin)] {
                for (p, v) in phi
                    .col_as_slice_mut(dst)
                    .iter_mut()
                    .zip(src.col_as_slice(q))
                {
                    *p = c * v;
                }
            }
        }
        Features {
            omega: self.omega.subrows(0, num_freqs).to_owned(),
            phi,
        }
    }
}

/// The frequencies and the feature matrix of one evaluation.
pub(crate) struct Features {
    /// `ω` (`F × d`).
    pub omega: Mat<f64>,
    /// `Φ = [C | S]` (`n × 2F`).
    pub phi: Mat<f64>,
}

/// `[∂L/∂log ℓ₀, …, ∂L/∂log ℓ_{d−1}, ∂L/∂log s]` from `q = ∂L/∂Φ` (`n × 2F`, the layout
/// of `Φ`).
pub(crate) fn kernel_grad(x: MatRef<'_, f64>, feats: &Features, q: &Mat<f64>) -> Vec<f64> {
    let (n, d, f) = (x.nrows(), x.ncols(), feats.omega.nrows());
    let phi = &feats.phi;
    let mut r = Mat::<f64>::zeros(n, f);
    let mut inner = 0.0;
    for k in 0..f {
        let (pc, ps) = (phi.col_as_slice(k), phi.col_as_slice(f + k));
        let (qc, qs) = (q.col_as_slice(k), q.col_as_slice(f + k));
        for (i, ri) in r.col_as_slice_mut(k).iter_mut().enumerate() {
            *ri = qs[i] * pc[i] - qc[i] * ps[i];
            inner += qc[i] * pc[i] + qs[i] * ps[i];
        }
    }
    let mut xtr = Mat::<f64>::zeros(d, f);
    let par = parallelism_for(2.0 * (n * f * d) as f64);
    matmul(
        xtr.as_mut(),
        Accum::Replace,
        x.transpose(),
        r.as_ref(),
        1.0,
        par,
    );
    let mut grad: Vec<f64> = (0..d)
        .map(|dd| {
            -(0..f)
                .map(|k| feats.omega[(k, dd)] * xtr[(dd, k)])
                .sum::<f64>()
        })
        .collect();
    grad.push(0.5 * inner);
    grad
}
