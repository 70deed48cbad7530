//! The `p` largest eigenvalues of a Kronecker product and their multi-indices, without
//! forming the `N = Π m_l` eigenvalues (GP-GRIEF, Evans & Nair 2018, Algorithm 1).
//!
//! Work in log space: after the first `l` factors keep only the `p` largest partial sums
//! `Σ_{j≤l} log λ_j[i_j]`; extend each by every eigenvalue of the next factor and keep the `p`
//! largest again. Because all eigenvalues are positive, a prefix that is not among the `p`
//! largest cannot start one of the `p` largest products, so the truncation is exact. Cost
//! `O(d · p · m̄ · log(p m̄))`; `N` is never formed, so it may exceed `u64`.
//!
//! **Non-positive eigenvalues** (round-off of nearly singular kernel matrices) would break
//! both the logarithm and the monotonicity. To keep both, each
//! factor's eigenvalues are floored at `ε · max λ_l` with `ε =`
//! [`TopEigenOptions::relative_floor`] (default `1e-14`) before taking logarithms; the
//! number of floored entries is reported. With `ε = 0` a non-positive eigenvalue is an
//! error. A factor with no positive eigenvalue is always an error.
//!
//! **Order and ties.** The result is sorted by decreasing computed log-eigenvalue; entries
//! with *equal* computed values are ordered by increasing multi-index in lexicographic order
//! (the same as increasing flat index in the Kronecker order, last factor fastest). This
//! tie-break is applied at every truncation, so among exactly tied candidates at the cut the
//! lexicographically smallest multi-indices are kept. Mathematically equal products whose
//! logarithms were summed in a different order (e.g. the same spectra in three or more
//! factors) can differ in the last bit and are then ordered by value.

use gp_linalg::validate::check_finite_slice;
use gp_linalg::LinalgError;

use crate::error::{Result, StructuredError};

/// Options of [`top_eigenvalues`].
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct TopEigenOptions {
    /// Eigenvalues of a factor below `relative_floor · (its largest eigenvalue)` are raised to
    /// that floor before taking logarithms. In `[0, 1)`; `0` turns non-positive eigenvalues
    /// into an error instead. Default `1e-14`.
    pub relative_floor: f64,
}

impl Default for TopEigenOptions {
    fn default() -> Self {
        Self {
            relative_floor: 1e-14,
        }
    }
}

/// The result of [`top_eigenvalues`]: `p' = min(p, N)` log-eigenvalues in descending order
/// and their multi-indices.
#[derive(Debug, Clone, PartialEq)]
pub struct TopEigenvalues {
    log_values: Vec<f64>,
    /// Row-major `p' × d`.
    indices: Vec<usize>,
    num_factors: usize,
    floored: usize,
}

impl TopEigenvalues {
    /// Number of eigenvalues kept, `p' = min(p, N)`.
    pub fn len(&self) -> usize {
        self.log_values.len()
    }

    /// Whether no eigenvalue was kept (`p = 0`).
    pub fn is_empty(&self) -> bool {
        self.log_values.is_empty()
    }

    /// Number of factors `d` (the length of each multi-index).
    pub fn num_factors(&self) -> usize {
        self.num_factors
    }

    /// `log λ_j`, descending.
    pub fn log_values(&self) -> &[f64] {
        &self.log_values
    }

    /// `λ_j = exp(log λ_j)`, descending (may underflow to 0 or overflow for large `d`; prefer
    /// [`log_values`](Self::log_values)).
    pub fn values(&self) -> Vec<f64> {
        self.log_values.iter().map(|l| l.exp()).collect()
    }

    /// The multi-index `(i₁, …, i_d)` of the `j`-th largest eigenvalue, or `None` if `j ≥ p'`.
    pub fn index(&self, j: usize) -> Option<&[usize]> {
        let d = self.num_factors;
        (j < self.len()).then(|| &self.indices[j * d..(j + 1) * d])
    }

    /// All multi-indices, row-major `p' × d` (row `j` belongs to the `j`-th largest).
    pub fn indices(&self) -> &[usize] {
        &self.indices
    }

    /// How many factor eigenvalues were raised to the floor (see [`TopEigenOptions`]).
    pub fn floored(&self) -> usize {
        self.floored
    }
}

/// The `min(p, N)` largest eigenvalues of `K₁ ⊗ … ⊗ K_d` from the factor spectra
/// `spectra[l]` (any order), with their multi-indices, without forming the `N` products.
/// See the [module documentation](self) for the floor for non-positive eigenvalues and the
/// tie order.
///
/// Errors: no factors, an empty or non-finite spectrum, a factor with no positive eigenvalue,
/// a non-positive eigenvalue when `relative_floor = 0`, or `relative_floor` outside `[0, 1)`.
///
/// ```
/// use gp_structured::top_eigen::{top_eigenvalues, TopEigenOptions};
///
/// // Two factors: λ¹ = [4, 1], λ² = [3, 2, 0.5], p = 3.
/// let top = top_eigenvalues(&[&[4.0, 1.0], &[3.0, 2.0, 0.5]], 3, &TopEigenOptions::default())?;
/// assert_eq!(top.indices(), &[0, 0, 0, 1, 1, 0]);
/// let v = top.values();
/// assert!((v[0] - 12.0).abs() < 1e-12 && (v[1] - 8.0).abs() < 1e-12 && (v[2] - 3.0).abs() < 1e-12);
/// # Ok::<(), gp_structured::StructuredError>(())
/// ```
pub fn top_eigenvalues(
    spectra: &[&[f64]],
    p: usize,
    options: &TopEigenOptions,
) -> Result<TopEigenvalues> {
    let eps = options.relative_floor;
    if !(0.0..1.0).contains(&eps) {
        return Err(StructuredError::InvalidArgument {
            name: "relative_floor",
            reason: format!("must be in [0, 1), got {eps}"),
        });
    }
    if spectra.is_empty() {
        return Err(StructuredError::InvalidArgument {
            name: "spectra",
            reason: "a Kronecker product needs at least one factor".to_string(),
        });
    }
    let mut floored = 0;
    let mut logs = Vec::with_capacity(spectra.len());
    for (l, s) in spectra.iter().enumerate() {
        if s.is_empty() {
            return Err(StructuredError::InvalidArgument {
                name: "spectra",
                reason: format!("the spectrum of factor {l} is empty"),
            });
        }
        check_finite_slice(s, "factor spectrum")?;
        let max = s.iter().copied().fold(f64::NEG_INFINITY, f64::max);
        if max <= 0.0 {
            return Err(LinalgError::NotPositive {
                context: "top_eigenvalues (largest eigenvalue of a factor)",
                index: l,
                value: max,
            }
            .into());
        }
        let floor = eps * max;
        let mut factor_logs = Vec::with_capacity(s.len());
        for (i, &v) in s.iter().enumerate() {
            if v <= 0.0 && floor == 0.0 {
                return Err(LinalgError::NotPositive {
                    context: "top_eigenvalues (with relative_floor = 0)",
                    index: i,
                    value: v,
                }
                .into());
            }
            if v < floor {
                floored += 1;
                factor_logs.push(floor.ln());
            } else {
                factor_logs.push(v.ln());
            }
        }
        logs.push(factor_logs);
    }
    let refs: Vec<&[f64]> = logs.iter().map(Vec::as_slice).collect();
    let (log_values, indices) = top_log_sums(&refs, p);
    Ok(TopEigenvalues {
        log_values,
        indices,
        num_factors: spectra.len(),
        floored,
    })
}

/// Algorithm 1 on finite log-spectra: the `min(p, N)` largest sums `Σ_l logs[l][i_l]`, in
/// the order (value descending, multi-index lexicographically ascending), and their
/// multi-indices (row-major `p' × d`).
fn top_log_sums(logs: &[&[f64]], p: usize) -> (Vec<f64>, Vec<usize>) {
    // Current rows: partial sums and their multi-indices (width = factors done so far).
    let mut values = vec![0.0];
    let mut indices: Vec<usize> = Vec::new();
    if p == 0 {
        return (Vec::new(), Vec::new());
    }
    for (width, factor) in logs.iter().enumerate() {
        // Candidate (row a, new index b) with value values[a] + factor[b].
        let mut cand: Vec<(f64, usize, usize)> = Vec::with_capacity(values.len() * factor.len());
        for (a, &v) in values.iter().enumerate() {
            for (b, &f) in factor.iter().enumerate() {
                cand.push((v + f, a, b));
            }
        }
        let prefix = |a: usize| &indices[a * width..(a + 1) * width];
        let order = |x: &(f64, usize, usize), y: &(f64, usize, usize)| {
            y.0.total_cmp(&x.0)
                .then_with(|| prefix(x.1).cmp(prefix(y.1)))
                .then_with(|| x.2.cmp(&y.2))
        };
        if cand.len() > p {
            cand.select_nth_unstable_by(p - 1, order);
            cand.truncate(p);
        }
        cand.sort_unstable_by(order);
        let mut next = Vec::with_capacity(cand.len() * (width + 1));
        for &(_, a, b) in &cand {
            next.extend_from_slice(prefix(a));
            next.push(b);
        }
        values = cand.iter().map(|c| c.0).collect();
        indices = next;
    }
    (values, indices)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn worked_example() {
        let top = top_eigenvalues(
            &[&[4.0, 1.0], &[3.0, 2.0, 0.5]],
            3,
            &TopEigenOptions::default(),
        )
        .ok();
        let top = top.as_ref();
        assert_eq!(top.map(|t| t.indices()), Some(&[0, 0, 0, 1, 1, 0][..]));
    }
}
