//! A sparse GP at every size of a nested sequence of inducing sets `U_{m₁} ⊂ U_{m₂} ⊂ …`
//! (the first `mₖ` rows of one [`InducingPoints`], e.g. a [`NestedSubsets`](crate::NestedSubsets) prefix): the
//! predictions and evidence that [`SparseGp::fit`](crate::SparseGp::fit) gives at each size, without refitting
//! from scratch.
//!
//! The kernel blocks `K_UU`, `K_UX`, `K_U*` are evaluated once for the largest set and each
//! size uses their leading rows. The Cholesky factor of a leading block of `K_UU` is the
//! leading block of the factor of `K_UU`, so `V = L_uu⁻¹K_UX` and `W₁ = L_uu⁻¹K_U*` are
//! computed once and `Qᵢᵢ`, `‖W₁_{:,j}‖²` are prefix sums over their rows. For SoR, DTC
//! and VFE (`λ ≡ 1`) the system `σ²K_UU + K_UX K_XU` nests the same way, so its factor,
//! `c = L⁻¹K_UX y` and `W₂ = L⁻¹K_U*` are also computed once: every size then costs
//! `O(m² + m N*)` after one `O(N m_max²)` pass, against `O(N m²)` per size for a refit.
//! FITC's `λ` changes with `m`, so its system is rebuilt per size (`O(N m²)`), still
//! sharing the kernel blocks and `V`.
//!
//! No jitter is added (as [`SparseOptions`](crate::SparseOptions)' default and the
//! paper's reference code): the first size whose factor does not exist ends the path, the
//! paper's "crash" ([`NestedSparsePath::crash`]). Factor existence is monotone in `m` in
//! exact arithmetic (leading blocks of a positive definite matrix are positive definite),
//! so the largest size that factors is found by bisection.

use faer::linalg::matmul::matmul;
use faer::linalg::triangular_solve::{
    solve_lower_triangular_in_place, solve_upper_triangular_in_place,
};
use faer::{Accum, Col, ColRef, Mat, MatRef};
use gp_kernels::Kernel;
use gp_linalg::{parallelism, Cholesky, JitterLadder};

use crate::error::{ModelError, Result};
use crate::inducing::factor::InducingFactor;
use crate::inducing::fit::{
    assemble_evidence, stable_system, Blocks, EvidenceParts, SparseEvidence,
};
use crate::inducing::model::check_sparse_data;
use crate::inducing::options::SparseMethod;
use crate::inducing::selection::InducingPoints;
use crate::validate::check_test_points;

/// The sparse GP on the first `m` inducing inputs.
#[derive(Debug, Clone, PartialEq)]
pub struct NestedSparseStep {
    /// The number of inducing inputs.
    pub m: usize,
    /// The predictive mean at the test inputs.
    pub mean: Col<f64>,
    /// The latent variance at the test inputs (clamped at 0 against round-off, as
    /// [`SparseGp::predict_latent_variance`](crate::SparseGp::predict_latent_variance)).
    pub latent_variance: Col<f64>,
    /// The evidence (as [`SparseGp::evidence`](crate::SparseGp::evidence)).
    pub evidence: SparseEvidence,
}

/// Where a path ended early: the size whose factor did not exist and which factor.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct NestedCrash {
    /// The first size that could not be fitted.
    pub m: usize,
    /// The factor that failed.
    pub factor: InducingFactor,
}

/// A sparse GP at each size of a nested sequence of inducing sets; see the module docs.
#[derive(Debug, Clone, PartialEq)]
pub struct NestedSparsePath {
    steps: Vec<NestedSparseStep>,
    crash: Option<NestedCrash>,
}

impl NestedSparsePath {
    /// Fits `method` on the first `m` rows of `inducing` for every `m` in `sizes`
    /// (strictly increasing, each in `1..=inducing.len()`) and predicts at `x_test`.
    ///
    /// ```
    /// use faer::{Col, Mat};
    /// use gp_kernels::SquaredExponential;
    /// use gp_models::{InducingPoints, NestedSparsePath, SparseGp, SparseMethod};
    ///
    /// let x = Mat::from_fn(40, 1, |i, _| i as f64 / 8.0);
    /// let y = Col::from_fn(40, |i| (i as f64 / 8.0).sin());
    /// let xs = Mat::from_fn(5, 1, |i, _| 0.3 + i as f64);
    /// let kernel = SquaredExponential::new(vec![1.0], 1.0)?;
    /// let u = InducingPoints::given(Mat::from_fn(8, 1, |i, _| (7 * i % 40) as f64 / 8.0).as_ref())?;
    /// let path = NestedSparsePath::fit(&kernel, x.as_ref(), y.as_ref(), 0.01, &u, &[2, 5, 8],
    ///     SparseMethod::Vfe, xs.as_ref())?;
    /// // The last size is the fit on all eight points.
    /// let gp = SparseGp::fit(kernel, x.as_ref(), y.as_ref(), 0.01, &u, SparseMethod::Vfe)?;
    /// let last = &path.steps()[2];
    /// assert!((last.evidence.objective - gp.evidence().objective).abs() < 1e-9);
    /// assert!((last.mean[1] - gp.predict_mean(xs.as_ref())?[1]).abs() < 1e-9);
    /// # Ok::<(), gp_models::ModelError>(())
    /// ```
    ///
    /// Errors: those of [`SparseGp::fit`](crate::SparseGp::fit) for the data,
    /// [`ModelError::TestDim`] / [`ModelError::NonFinite`] for the test inputs,
    /// [`ModelError::InvalidOption`] for sizes that are empty, not strictly increasing, zero
    /// or beyond the inducing points. A factor that does not exist is not an error: the path
    /// stops there ([`crash`](Self::crash)).
    #[allow(clippy::too_many_arguments)]
    pub fn fit<K: Kernel + ?Sized>(
        kernel: &K,
        x: MatRef<'_, f64>,
        y: ColRef<'_, f64>,
        noise_variance: f64,
        inducing: &InducingPoints,
        sizes: &[usize],
        method: SparseMethod,
        x_test: MatRef<'_, f64>,
    ) -> Result<Self> {
        check_sparse_data(kernel, x, y, noise_variance, inducing)?;
        check_test_points(x_test, x.ncols())?;
        check_sizes(sizes, inducing.len())?;
        let m_max = sizes[sizes.len() - 1];
        let u = inducing.points().subrows(0, m_max);
        let kernels = KernelBlocks {
            kuu: kernel.matrix(u, u)?,
            kux: kernel.matrix(u, x)?,
            kus: kernel.matrix(u, x_test)?,
            diag_k: kernel.diag(x)?,
            diag_s: kernel.diag(x_test)?,
        };
        let Some((luu, reached)) = largest_prefix_factor(kernels.kuu.as_ref(), sizes) else {
            return Ok(Self {
                steps: Vec::new(),
                crash: Some(NestedCrash {
                    m: sizes[0],
                    factor: InducingFactor::Kuu,
                }),
            });
        };
        let r = luu.dim();
        let v = luu.solve_lower(kernels.kux.subrows(0, r))?;
        let w1 = luu.solve_lower(kernels.kus.subrows(0, r))?;
        let run = Run {
            kernels: &kernels,
            luu: &luu,
            v: &v,
            w1: &w1,
            y,
            s2: noise_variance,
            method,
        };
        let (steps, system_crash) = if method.is_fitc() {
            run.fitc(&sizes[..reached])?
        } else {
            run.nested(&sizes[..reached])?
        };
        let crash = system_crash.or_else(|| {
            (reached < sizes.len()).then(|| NestedCrash {
                m: sizes[reached],
                factor: InducingFactor::Kuu,
            })
        });
        Ok(Self { steps, crash })
    }

    /// The fitted sizes, in order (those before a crash).
    pub fn steps(&self) -> &[NestedSparseStep] {
        &self.steps
    }

    /// The first size that could not be fitted and its factor, if the path ended early.
    pub fn crash(&self) -> Option<NestedCrash> {
        self.crash
    }
}

/// Strictly increasing sizes in `1..=available`.
fn check_sizes(sizes: &[usize], available: usize) -> Result<()> {
    let bad = |reason: String| ModelError::InvalidOption {
        name: "sizes",
        reason,
    };
    if sizes.is_empty() {
        return Err(bad(
            "no sizes given: pass at least one number of inducing inputs".into(),
        ));
    }
    if sizes[0] == 0 {
        return Err(bad("a size of 0 inducing inputs: sizes start at 1".into()));
    }
    if let Some(w) = sizes.windows(2).find(|w| w[1] <= w[0]) {
        return Err(bad(format!(
            "sizes must increase strictly; {} is followed by {}",
            w[0], w[1]
        )));
    }
    let last = sizes[sizes.len() - 1];
    if last > available {
        return Err(bad(format!(
            "size {last} exceeds the {available} inducing inputs given"
        )));
    }
    Ok(())
}

/// The kernel blocks of the largest inducing set.
struct KernelBlocks {
    kuu: Mat<f64>,
    kux: Mat<f64>,
    kus: Mat<f64>,
    diag_k: Col<f64>,
    diag_s: Col<f64>,
}

/// The Cholesky factor (no jitter) of the largest leading block `a[..m, ..m]` over
/// `m ∈ sizes` that factors, with the number of sizes it covers; `None` when even the
/// first does not.
fn largest_prefix_factor(a: MatRef<'_, f64>, sizes: &[usize]) -> Option<(Cholesky, usize)> {
    let factor = |k: usize| {
        let m = sizes[k - 1];
        Cholesky::with_jitter(a.submatrix(0, 0, m, m), &JitterLadder::none()).ok()
    };
    // The common case: every size factors.
    if let Some(l) = factor(sizes.len()) {
        return Some((l, sizes.len()));
    }
    // Bisect on the count of sizes k: `lo` factors (or is 0), `hi` does not.
    let (mut lo, mut hi) = (0, sizes.len());
    let mut best = None;
    while hi - lo > 1 {
        let mid = lo + (hi - lo) / 2;
        match factor(mid) {
            Some(l) => {
                lo = mid;
                best = Some(l);
            }
            None => hi = mid,
        }
    }
    if lo == 0 {
        return None;
    }
    let l = match best {
        Some(l) => l,
        None => factor(lo)?,
    };
    Some((l, lo))
}

/// What every size reads.
struct Run<'a> {
    kernels: &'a KernelBlocks,
    luu: &'a Cholesky,
    /// `L_uu⁻¹ K_UX` (`r × N`).
    v: &'a Mat<f64>,
    /// `L_uu⁻¹ K_U*` (`r × N*`).
    w1: &'a Mat<f64>,
    y: ColRef<'a, f64>,
    s2: f64,
    method: SparseMethod,
}

/// Running sums of squares over the rows of a matrix, column by column, extended to a
/// new row count at each size.
struct PrefixSquares {
    sums: Vec<f64>,
    rows: usize,
}

impl PrefixSquares {
    fn new(columns: usize) -> Self {
        Self {
            sums: vec![0.0; columns],
            rows: 0,
        }
    }

    /// Adds the rows `self.rows..rows` of `a`.
    fn extend_to(&mut self, a: &Mat<f64>, rows: usize) {
        for (j, s) in self.sums.iter_mut().enumerate() {
            for r in self.rows..rows {
                *s += a[(r, j)] * a[(r, j)];
            }
        }
        self.rows = rows;
    }
}

/// `2 Σ_{a<m} ln L_aa`: the log-determinant of the leading `m × m` block.
fn leading_log_det(l: MatRef<'_, f64>, m: usize) -> f64 {
    2.0 * (0..m).map(|a| l[(a, a)].ln()).sum::<f64>()
}

impl Run<'_> {
    fn n(&self) -> usize {
        self.v.ncols()
    }

    /// The prior variance minus the `W₁` prefix (not for SoR), plus `σ²` times the `W₂`
    /// sums, clamped at 0.
    fn latent_variance(&self, w1: &PrefixSquares, w2: &[f64]) -> Col<f64> {
        let sor = self.method == SparseMethod::Sor;
        Col::from_fn(w2.len(), |j| {
            let mut v = self.s2 * w2[j];
            if !sor {
                v += self.kernels.diag_s[j] - w1.sums[j];
            }
            v.max(0.0)
        })
    }

    /// `K_U*[..m]ᵀ β`.
    fn mean(&self, beta: &Mat<f64>) -> Col<f64> {
        let m = beta.nrows();
        let ns = self.kernels.kus.ncols();
        let mut mean = Mat::<f64>::zeros(ns, 1);
        matmul(
            mean.as_mut(),
            Accum::Replace,
            self.kernels.kus.subrows(0, m).transpose(),
            beta.as_ref(),
            1.0,
            parallelism(),
        );
        Col::from_fn(ns, |j| mean[(j, 0)])
    }

    /// SoR, DTC, VFE: one system for all sizes.
    fn nested(&self, sizes: &[usize]) -> Result<(Vec<NestedSparseStep>, Option<NestedCrash>)> {
        let k = self.kernels;
        let r = self.luu.dim();
        let kux = k.kux.subrows(0, r);
        let mut system = Mat::from_fn(r, r, |a, b| self.s2 * k.kuu[(a, b)]);
        matmul(
            system.as_mut(),
            Accum::Add,
            kux,
            kux.transpose(),
            1.0,
            parallelism(),
        );
        let Some((l, reached)) = largest_prefix_factor(system.as_ref(), sizes) else {
            let crash = NestedCrash {
                m: sizes[0],
                factor: InducingFactor::System,
            };
            return Ok((Vec::new(), Some(crash)));
        };
        let r2 = l.dim();
        let mut c = Mat::<f64>::zeros(r2, 1);
        matmul(
            c.as_mut(),
            Accum::Replace,
            k.kux.subrows(0, r2),
            self.y.as_mat(),
            1.0,
            parallelism(),
        );
        l.solve_lower_in_place(c.as_mut())?;
        let w2 = l.solve_lower(k.kus.subrows(0, r2))?;
        let btb: f64 = self.y.iter().map(|t| t * t).sum();
        let trace_k: f64 = k.diag_k.iter().sum();
        let (mut q, mut w1, mut w2s) = (
            PrefixSquares::new(self.n()),
            PrefixSquares::new(k.kus.ncols()),
            PrefixSquares::new(k.kus.ncols()),
        );
        let mut ctc = 0.0;
        let mut steps = Vec::with_capacity(reached);
        for &m in &sizes[..reached] {
            for a in q.rows..m {
                ctc += c[(a, 0)] * c[(a, 0)];
            }
            q.extend_to(self.v, m);
            w1.extend_to(self.w1, m);
            w2s.extend_to(&w2, m);
            let mut beta = c.subrows(0, m).to_owned();
            solve_upper_triangular_in_place(
                l.factor().submatrix(0, 0, m, m).transpose(),
                beta.as_mut(),
                parallelism(),
            );
            let (evidence, _) = assemble_evidence(&EvidenceParts {
                method: self.method,
                n: self.n(),
                m,
                s2: self.s2,
                data_fit: (btb - ctc) / self.s2,
                log_det_system: leading_log_det(l.factor(), m),
                log_det_kuu: leading_log_det(self.luu.factor(), m),
                sum_ln_lambda: 0.0,
                trace_k,
                trace_q: q.sums.iter().sum(),
            });
            steps.push(NestedSparseStep {
                m,
                mean: self.mean(&beta),
                latent_variance: self.latent_variance(&w1, &w2s.sums),
                evidence,
            });
        }
        let crash = (reached < sizes.len()).then(|| NestedCrash {
            m: sizes[reached],
            factor: InducingFactor::System,
        });
        Ok((steps, crash))
    }

    /// FITC: the system rebuilt per size from the shared blocks.
    fn fitc(&self, sizes: &[usize]) -> Result<(Vec<NestedSparseStep>, Option<NestedCrash>)> {
        let k = self.kernels;
        let mut q = PrefixSquares::new(self.n());
        let mut w1 = PrefixSquares::new(k.kus.ncols());
        let mut steps = Vec::with_capacity(sizes.len());
        for &m in sizes {
            q.extend_to(self.v, m);
            w1.extend_to(self.w1, m);
            let blocks = Blocks {
                kuu: k.kuu.submatrix(0, 0, m, m),
                log_det_kuu: leading_log_det(self.luu.factor(), m),
                kuu_jitter: 0.0,
                kux: k.kux.subrows(0, m),
                q_diag: &q.sums,
                diag_k: k.diag_k.as_ref(),
            };
            let stable =
                match stable_system(&blocks, self.y, self.s2, self.method, &JitterLadder::none()) {
                    Ok(s) => s,
                    Err(ModelError::InducingCholesky { factor, .. }) => {
                        return Ok((steps, Some(NestedCrash { m, factor })));
                    }
                    Err(e) => return Err(e),
                };
            let mut w2 = k.kus.subrows(0, m).to_owned();
            solve_lower_triangular_in_place(stable.system.factor(), w2.as_mut(), parallelism());
            let w2_sums: Vec<f64> = (0..w2.ncols())
                .map(|j| w2.col(j).iter().map(|t| t * t).sum())
                .collect();
            let beta = Mat::from_fn(m, 1, |a, _| stable.beta[a]);
            steps.push(NestedSparseStep {
                m,
                mean: self.mean(&beta),
                latent_variance: self.latent_variance(&w1, &w2_sums),
                evidence: stable.evidence,
            });
        }
        Ok((steps, None))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_largest_factored_prefix_is_found_by_bisection() {
        // Positive definite up to order 5, indefinite from order 6 on.
        let a = Mat::from_fn(8, 8, |i, j| match (i == j, i < 5) {
            (true, true) => 2.0,
            (true, false) => -1.0,
            _ => 0.1 / (1.0 + (i as f64 - j as f64).abs()),
        });
        let sizes = [1, 2, 4, 5, 6, 8];
        let (l, k) = largest_prefix_factor(a.as_ref(), &sizes).unwrap();
        assert_eq!((k, l.dim()), (4, 5));
        let (l, k) = largest_prefix_factor(a.as_ref(), &sizes[..3]).unwrap();
        assert_eq!((k, l.dim()), (3, 4));
        assert!(largest_prefix_factor(a.as_ref(), &[6, 7]).is_none());
        let (l, k) = largest_prefix_factor(a.as_ref(), &[5, 6, 7]).unwrap();
        assert_eq!((k, l.dim()), (1, 5));
    }

    #[test]
    fn sizes_are_checked() {
        for (sizes, what) in [
            (&[][..], "no sizes"),
            (&[0, 2][..], "0"),
            (&[2, 2][..], "increase"),
            (&[3, 9][..], "exceeds"),
        ] {
            let err = check_sizes(sizes, 5).unwrap_err().to_string();
            assert!(err.contains(what), "{err}");
        }
        assert!(check_sizes(&[1, 5], 5).is_ok());
    }
}
