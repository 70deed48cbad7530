//! The projected statistics of KMCG after `j` Krylov directions, grown one direction at a
//! time (spec `kmcg.md` §1.5, the incremental form).
//!
//! With `φ(x) = Sᵀk(X_M, x)` and `Σ = G = SᵀK_M S`, KMCG is the finite-rank model of §1.2:
//! `A = RᵀR + σ²G` with `R = k(X, X_M) S`. Bordering `S` by one direction borders `G`,
//! `H = RᵀR` and `A` by one column each, so both Cholesky factors grow by one row
//! (`O(j²)`), and so do `w = L_A⁻¹ Rᵀy`, `W₁ = L_G⁻¹ C` and `W_A = L_A⁻¹ C` with
//! `C = S ᵀk(X_M, X*)` (`O(j n*)`): the mean `W_Aᵀ w`, the variances
//! `k** − colsum(W₁²) + σ² colsum(W_A²)` and the evidence are updated by the new rows only,
//! never recomputed.

use gp_linalg::GrowingCholesky;

use crate::error::{ModelError, Result};

/// What one new direction `s_j` contributes (the new last columns of the bordered
/// matrices), however it was produced (FOM on `K_M` or on `K_M + σ²I`, Lanczos, a subset
/// `X_M`, a caller's own basis).
#[derive(Debug, Clone, PartialEq)]
pub struct KmcgColumns {
    /// `(SᵀK_M S)[0..=j, j]`: the new column of the projected kernel Gram (diagonal last).
    pub gram: Vec<f64>,
    /// `(RᵀR)[0..=j, j]` with `R = k(X, X_M) S` (`R = K S` when `M = N`).
    pub product_gram: Vec<f64>,
    /// `r_jᵀ y`, the new entry of `Rᵀy`.
    pub product_dot_y: f64,
    /// `s_jᵀ k(X_M, X*)`: the new row of `C` at the test points (empty without test points).
    pub test_row: Vec<f64>,
}

/// Why [`KmcgState::push`] did not take a direction.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum KmcgBreakdown {
    /// `SᵀK_M S` stopped being numerically positive definite (the Krylov space is exhausted
    /// or the basis lost conjugacy): its new pivot.
    ProjectedGram {
        /// The squared pivot that was not positive.
        pivot: f64,
    },
    /// `A = RᵀR + σ²SᵀK_M S` stopped being numerically positive definite: its new pivot.
    System {
        /// The squared pivot that was not positive.
        pivot: f64,
    },
}

impl std::fmt::Display for KmcgBreakdown {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Self::ProjectedGram { pivot } => {
                write!(f, "SᵀK_M S is not positive definite (pivot² {pivot:e})")
            }
            Self::System { pivot } => write!(
                f,
                "A = RᵀR + σ²SᵀK_M S is not positive definite (pivot² {pivot:e})"
            ),
        }
    }
}

/// The KMCG estimate after `j` directions: mean and variances at fixed test points and the
/// negative log evidence, updated in `O(j² + j n*)` per direction.
///
/// ```
/// use faer::Mat;
/// use gp_models::kmcg::{KmcgColumns, KmcgState};
///
/// // K = [[2, 1], [1, 2]], y = (1, 0), σ² = 0.1, one test point equal to x₁ (k(X, x*) = K e₁).
/// let k = Mat::from_fn(2, 2, |i, j| if i == j { 2.0 } else { 1.0 });
/// let y = [1.0, 0.0];
/// let mut state = KmcgState::new(2, 0.1, 1.0, &[2.0])?;
/// // Two directions e₁, e₂ span everything: KMCG is then the exact GP.
/// for j in 0..2 {
///     let kz = |a: usize, b: usize| k[(a, b)];
///     state.push(&KmcgColumns {
///         gram: (0..=j).map(|i| kz(i, j)).collect(),
///         product_gram: (0..=j).map(|i| (0..2).map(|r| kz(r, i) * kz(r, j)).sum()).collect(),
///         product_dot_y: (0..2).map(|r| kz(r, j) * y[r]).sum(),
///         test_row: vec![kz(j, 0)],
///     })?;
/// }
/// // Exact mean at x₁: k(x₁, X)(K + σ²I)⁻¹y.
/// let a = Mat::from_fn(2, 2, |i, j| k[(i, j)] + if i == j { 0.1 } else { 0.0 });
/// let det = a[(0, 0)] * a[(1, 1)] - 1.0;
/// let alpha = [a[(1, 1)] / det, -1.0 / det];
/// let exact = 2.0 * alpha[0] + alpha[1];
/// assert!((state.mean()[0] - exact).abs() < 1e-12);
/// # Ok::<(), gp_models::ModelError>(())
/// ```
#[derive(Debug, Clone)]
pub struct KmcgState {
    n: usize,
    noise: f64,
    yty: f64,
    prior_variance: Vec<f64>,
    gram: GrowingCholesky,
    system: GrowingCholesky,
    /// `w = L_A⁻¹ Rᵀy`.
    w: Vec<f64>,
    /// `Rᵀy` (kept to extend `w`).
    u: Vec<f64>,
    /// Rows of `C`, `W₁ = L_G⁻¹ C` and `W_A = L_A⁻¹ C`, each `n*` long.
    c_rows: Vec<Vec<f64>>,
    w1_rows: Vec<Vec<f64>>,
    wa_rows: Vec<Vec<f64>>,
    mean: Vec<f64>,
    w1_colsum: Vec<f64>,
    wa_colsum: Vec<f64>,
    breakdown: Option<(usize, KmcgBreakdown)>,
}

impl KmcgState {
    /// An empty state (`j = 0`: mean 0, the prior variance) for `n` training points, noise
    /// variance `σ²`, `yᵀy`, and the prior variances `k(x*, x*)` at the test points (empty
    /// for no test points).
    ///
    /// Errors: `n = 0` ([`ModelError::EmptyData`]), a noise variance that is not finite and
    /// positive, a negative or non-finite `yᵀy` or prior variance.
    pub fn new(n: usize, noise_variance: f64, yty: f64, prior_variance: &[f64]) -> Result<Self> {
        if n == 0 {
            return Err(ModelError::EmptyData {
                context: "KmcgState::new",
                n,
                d: 1,
            });
        }
        if !(noise_variance.is_finite() && noise_variance > 0.0) {
            return Err(ModelError::InvalidNoise {
                value: noise_variance,
            });
        }
        if !(yty.is_finite() && yty >= 0.0) {
            return Err(ModelError::InvalidOption {
                name: "yty",
                reason: format!("yᵀy must be finite and non-negative, got {yty}"),
            });
        }
        if let Some((i, v)) = prior_variance
            .iter()
            .enumerate()
            .find(|(_, v)| !(v.is_finite() && **v >= 0.0))
        {
            return Err(ModelError::InvalidOption {
                name: "prior_variance",
                reason: format!(
                    "k(x*, x*) must be finite and non-negative, got {v} at test point {i}"
                ),
            });
        }
        let t = prior_variance.len();
        Ok(Self {
            n,
            noise: noise_variance,
            yty,
            prior_variance: prior_variance.to_vec(),
            gram: GrowingCholesky::new(),
            system: GrowingCholesky::new(),
            w: Vec::new(),
            u: Vec::new(),
            c_rows: Vec::new(),
            w1_rows: Vec::new(),
            wa_rows: Vec::new(),
            mean: vec![0.0; t],
            w1_colsum: vec![0.0; t],
            wa_colsum: vec![0.0; t],
            breakdown: None,
        })
    }

    /// Number of directions taken, `j`.
    pub fn steps(&self) -> usize {
        self.w.len()
    }

    /// Number of test points `n*`.
    pub fn n_test(&self) -> usize {
        self.prior_variance.len()
    }

    /// The noise variance `σ²`.
    pub fn noise_variance(&self) -> f64 {
        self.noise
    }

    /// The breakdown that stopped the state (the step it happened at, 1-based, and why), if
    /// any: the state then keeps the last valid estimate and takes no more directions.
    pub fn breakdown(&self) -> Option<(usize, KmcgBreakdown)> {
        self.breakdown
    }

    /// Adds one direction. Returns `Ok(true)` if it was taken, `Ok(false)` if the bordered
    /// `SᵀK_M S` or `A` is not numerically positive definite (the state is unchanged and
    /// frozen: [`breakdown`](Self::breakdown) says why; later calls return `Ok(false)`).
    ///
    /// Errors: columns of the wrong length (`j + 1` entries for the Gram columns, `n*` for
    /// the test row) or holding non-finite values.
    pub fn push(&mut self, columns: &KmcgColumns) -> Result<bool> {
        let j = self.steps();
        check_len(columns.gram.len(), j + 1, "KmcgColumns::gram")?;
        check_len(
            columns.product_gram.len(),
            j + 1,
            "KmcgColumns::product_gram",
        )?;
        check_len(
            columns.test_row.len(),
            self.n_test(),
            "KmcgColumns::test_row",
        )?;
        let finite = columns
            .gram
            .iter()
            .chain(&columns.product_gram)
            .chain(&columns.test_row)
            .chain(std::iter::once(&columns.product_dot_y))
            .all(|v| v.is_finite());
        if !finite {
            return Err(ModelError::InvalidOption {
                name: "KmcgColumns",
                reason: format!("direction {} has non-finite projected products", j + 1),
            });
        }
        if self.breakdown.is_some() {
            return Ok(false);
        }
        if let Err(e) = self.gram.push(&columns.gram) {
            self.breakdown = Some((
                j + 1,
                KmcgBreakdown::ProjectedGram {
                    pivot: pivot_of(&e),
                },
            ));
            return Ok(false);
        }
        let a_column: Vec<f64> = columns
            .product_gram
            .iter()
            .zip(&columns.gram)
            .map(|(h, g)| h + self.noise * g)
            .collect();
        if let Err(e) = self.system.push(&a_column) {
            self.gram.truncate(j);
            self.breakdown = Some((
                j + 1,
                KmcgBreakdown::System {
                    pivot: pivot_of(&e),
                },
            ));
            return Ok(false);
        }
        self.u.push(columns.product_dot_y);
        let wj = self.system.forward_entry(j, &self.w, columns.product_dot_y);
        self.w.push(wj);
        let w1 = next_row(&self.gram, j, &self.w1_rows, &columns.test_row);
        let wa = next_row(&self.system, j, &self.wa_rows, &columns.test_row);
        for t in 0..self.n_test() {
            self.mean[t] += wj * wa[t];
            self.w1_colsum[t] += w1[t] * w1[t];
            self.wa_colsum[t] += wa[t] * wa[t];
        }
        self.c_rows.push(columns.test_row.clone());
        self.w1_rows.push(w1);
        self.wa_rows.push(wa);
        Ok(true)
    }

    /// The predictive mean `f̂(x*) = k(x*, X_M) S A⁻¹ Rᵀy` at the test points.
    pub fn mean(&self) -> &[f64] {
        &self.mean
    }

    /// The latent variance `k** − ‖L_G⁻¹ c*‖² + σ²‖L_A⁻¹ c*‖²` (the DTC form, Eq. 16a).
    pub fn latent_variance(&self) -> Vec<f64> {
        (0..self.n_test())
            .map(|t| self.prior_variance[t] - self.w1_colsum[t] + self.noise * self.wa_colsum[t])
            .collect()
    }

    /// The predictive variance of an observation, latent variance `+ σ²` (what the paper
    /// compares).
    pub fn predictive_variance(&self) -> Vec<f64> {
        self.latent_variance()
            .into_iter()
            .map(|v| v + self.noise)
            .collect()
    }

    /// `yᵀ(Q + σ²I)⁻¹y = (yᵀy − wᵀw)/σ²` with `Q = R G⁻¹ Rᵀ` (the quadratic term; it
    /// decreases towards the exact `yᵀ(K + σ²I)⁻¹y` as directions are added).
    pub fn quadratic_term(&self) -> f64 {
        let wtw: f64 = self.w.iter().map(|v| v * v).sum();
        (self.yty - wtw) / self.noise
    }

    /// `ln|Q + σ²I| = ln|A| − ln|G| + (N − j) ln σ²` (it increases towards the exact
    /// `ln|K + σ²I|`).
    pub fn log_det(&self) -> f64 {
        self.system.log_det() - self.gram.log_det()
            + (self.n as f64 - self.steps() as f64) * self.noise.ln()
    }

    /// The negative log evidence `½[quadratic + ln|Q + σ²I| + N ln 2π]` (Eq. 16b; the paper
    /// labels it `ln Ẑ` but it is `−ln p(y)`).
    pub fn neg_log_evidence(&self) -> f64 {
        0.5 * (self.quadratic_term()
            + self.log_det()
            + self.n as f64 * (2.0 * std::f64::consts::PI).ln())
    }

    /// The rows of `C = Sᵀk(X_M, X*)` seen so far (`j` rows of `n*`): with the CG
    /// coefficients `a` of the same run, `Cᵀa` is CG's own mean at the test points.
    pub fn test_rows(&self) -> &[Vec<f64>] {
        &self.c_rows
    }

    /// The projected kernel `k_M(x*_a, x*_b) = c_aᵀ G⁻¹ c_b` between the test points
    /// (Eq. 14; `n* × n*`): the posterior mean of the kernel given `SᵀK_M S`.
    pub fn projected_kernel(&self) -> faer::Mat<f64> {
        let t = self.n_test();
        faer::Mat::from_fn(t, t, |a, b| self.w1_rows.iter().map(|r| r[a] * r[b]).sum())
    }

    /// The posterior uncertainty about the kernel value, `ψ_M(k(a, b), k(a, b)) =
    /// ½[k(a,a)k(b,b) + k(a,b)² − k_M(a,a)k_M(b,b) − k_M(a,b)²]` with `w = k` and scale
    /// `γ = 1` (§1.3), given the prior kernel `k(X*, X*)` between the test points.
    ///
    /// Errors: a prior matrix that is not `n* × n*`.
    pub fn kernel_uncertainty(&self, prior: faer::MatRef<'_, f64>) -> Result<faer::Mat<f64>> {
        let t = self.n_test();
        check_len(
            prior.nrows(),
            t,
            "KmcgState::kernel_uncertainty: rows of k(X*, X*)",
        )?;
        check_len(
            prior.ncols(),
            t,
            "KmcgState::kernel_uncertainty: columns of k(X*, X*)",
        )?;
        let km = self.projected_kernel();
        Ok(faer::Mat::from_fn(t, t, |a, b| {
            0.5 * (prior[(a, a)] * prior[(b, b)] + prior[(a, b)].powi(2)
                - km[(a, a)] * km[(b, b)]
                - km[(a, b)].powi(2))
        }))
    }

    /// The Cholesky factor of the projected Gram `G = SᵀK_M S`.
    pub fn gram_factor(&self) -> &GrowingCholesky {
        &self.gram
    }

    /// The Cholesky factor of `A = RᵀR + σ²G`.
    pub fn system_factor(&self) -> &GrowingCholesky {
        &self.system
    }

    /// The coefficients `A⁻¹Rᵀy` in the basis `S` (so the mean at any point is
    /// `k(x, X_M) S A⁻¹Rᵀy`).
    pub fn weights(&self) -> Vec<f64> {
        let mut b = self.w.clone();
        // A⁻¹Rᵀy = L_A⁻ᵀ w; the factor has exactly j rows.
        let _ = self.system.solve_upper_in_place(&mut b);
        b
    }
}

/// The next row of `L⁻¹ C` given the previous rows and the new row of `C`.
fn next_row(l: &GrowingCholesky, j: usize, previous: &[Vec<f64>], c_row: &[f64]) -> Vec<f64> {
    let lrow = l.row(j);
    let mut out = c_row.to_vec();
    for (i, prev) in previous.iter().enumerate() {
        let lji = lrow[i];
        for (o, p) in out.iter_mut().zip(prev) {
            *o -= lji * p;
        }
    }
    let d = lrow[j];
    out.iter_mut().for_each(|v| *v /= d);
    out
}

fn pivot_of(e: &gp_linalg::LinalgError) -> f64 {
    match e {
        gp_linalg::LinalgError::BorderBreakdown { pivot, .. } => *pivot,
        _ => f64::NAN,
    }
}

fn check_len(found: usize, expected: usize, context: &'static str) -> Result<()> {
    if found == expected {
        Ok(())
    } else {
        Err(ModelError::LengthMismatch {
            context,
            expected,
            found,
        })
    }
}
