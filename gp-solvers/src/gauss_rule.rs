//! The Gauss quadrature rule of a symmetric tridiagonal matrix in `O(k²)`: its eigenvalues
//! (the nodes) and the squared first components of its eigenvectors (the weights), by the
//! implicit QL iteration with Wilkinson shifts that tracks only the first row of the
//! eigenvector matrix (Golub & Welsch 1969). RR-SLQ needs the rule of every leading block
//! of a tridiagonal, which the dense eigen-solver would make `O(k⁴)`.

use crate::error::Result;
use crate::tridiagonal::SymTridiagonal;

/// Rotations allowed per eigenvalue before the dense eigen-solver takes over.
const MAX_SWEEPS: usize = 60;

/// `√(a² + b²)`: the plain formula where the sum of squares is safely inside the normal
/// range (no overflow, underflow or subnormal loss, so it is within about an ulp of the
/// exact value), libm's `hypot` otherwise. glibc's `hypot`, which rescales to be safe
/// everywhere, took more time than the rest of this QL iteration together (perf of the
/// RR-SLQ log determinants in `reproduce rtgps --only bias`).
#[inline]
fn pythag(a: f64, b: f64) -> f64 {
    const LOW: f64 = 1e-290;
    const HIGH: f64 = 1e290;
    let s = a * a + b * b;
    if s > LOW && s < HIGH {
        s.sqrt()
    } else {
        a.hypot(b)
    }
}

/// The nodes and weights of `e₁ᵀ f(T) e₁ = Σ_m w_m f(λ_m)` (`Σ w_m = 1`), unordered.
#[derive(Debug, Clone, PartialEq)]
pub struct GaussRule {
    /// The eigenvalues `λ_m` of `T` (the Ritz values).
    pub nodes: Vec<f64>,
    /// `w_m = V[0, m]²`.
    pub weights: Vec<f64>,
}

impl GaussRule {
    /// `Σ_m w_m f(λ_m)`.
    pub fn apply(&self, f: impl Fn(f64) -> f64) -> f64 {
        self.nodes
            .iter()
            .zip(&self.weights)
            .map(|(&l, &w)| w * f(l))
            .sum()
    }
}

impl SymTridiagonal {
    /// The Gauss quadrature rule of `T` (eigenvalues and squared first eigenvector
    /// components) in `O(k²)` time and `O(k)` memory. Empty for the empty matrix.
    ///
    /// ```
    /// use gp_solvers::SymTridiagonal;
    ///
    /// let t = SymTridiagonal::new(vec![2.0, 2.0, 2.0], vec![1.0, 0.5])?;
    /// let rule = t.gauss_rule()?;
    /// let dense = t.quadrature(|l| l.ln())?;
    /// assert!((rule.apply(f64::ln) - dense).abs() < 1e-14);
    /// # Ok::<(), gp_solvers::SolverError>(())
    /// ```
    pub fn gauss_rule(&self) -> Result<GaussRule> {
        let n = self.dim();
        let mut d = self.diagonal().to_vec();
        let mut e = self.off_diagonal().to_vec();
        e.push(0.0);
        let mut z = vec![0.0; n];
        if n > 0 {
            z[0] = 1.0;
        }
        for l in 0..n {
            let mut sweeps = 0;
            loop {
                // Find a small sub-diagonal entry to split the matrix.
                let mut m = l;
                while m + 1 < n {
                    let dd = d[m].abs() + d[m + 1].abs();
                    if e[m].abs() <= f64::EPSILON * dd {
                        break;
                    }
                    m += 1;
                }
                if m == l {
                    break;
                }
                sweeps += 1;
                if sweeps > MAX_SWEEPS {
                    return self.dense_rule();
                }
                let mut g = (d[l + 1] - d[l]) / (2.0 * e[l]);
                let mut r = pythag(g, 1.0);
                g = d[m] - d[l] + e[l] / (g + r.copysign(g));
                let (mut s, mut c, mut p) = (1.0, 1.0, 0.0);
                let mut underflow = false;
                let mut i = m;
                while i > l {
                    i -= 1;
                    let f = s * e[i];
                    let b = c * e[i];
                    r = pythag(f, g);
                    e[i + 1] = r;
                    if r == 0.0 {
                        d[i + 1] -= p;
                        e[m] = 0.0;
                        underflow = true;
                        break;
                    }
                    s = f / r;
                    c = g / r;
                    g = d[i + 1] - p;
                    r = (d[i] - g) * s + 2.0 * c * b;
                    p = s * r;
                    d[i + 1] = g + p;
                    g = c * r - b;
                    let zi1 = z[i + 1];
                    z[i + 1] = s * z[i] + c * zi1;
                    z[i] = c * z[i] - s * zi1;
                }
                if underflow {
                    continue;
                }
                d[l] -= p;
                e[l] = g;
                e[m] = 0.0;
            }
        }
        if d.iter().chain(&z).any(|v| !v.is_finite()) {
            return self.dense_rule();
        }
        Ok(GaussRule {
            nodes: d,
            weights: z.iter().map(|v| v * v).collect(),
        })
    }

    /// The rule from the dense eigen-decomposition (the fallback).
    fn dense_rule(&self) -> Result<GaussRule> {
        let eig = self.eigen()?;
        Ok(GaussRule {
            nodes: (0..self.dim()).map(|m| eig.values[m]).collect(),
            weights: (0..self.dim())
                .map(|m| eig.vectors[(0, m)] * eig.vectors[(0, m)])
                .collect(),
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn pythag_is_within_two_ulp_of_hypot_and_safe_at_the_extremes() {
        let values: [f64; 12] = [
            0.0, 1e-320, 1e-300, 3e-160, 1e-150, 0.3, 1.0, 7.5, 1e150, 3e160, 1e300, 1e308,
        ];
        for &a in &values {
            for &b in &values {
                for (x, y) in [(a, b), (-a, b), (a, -b)] {
                    let exact = x.hypot(y);
                    let fast = pythag(x, y);
                    assert!(fast.is_finite(), "pythag({x}, {y}) = {fast}");
                    assert!(
                        (fast - exact).abs() <= 2.0 * f64::EPSILON * exact,
                        "pythag({x}, {y}) = {fast}, hypot {exact}"
                    );
                }
            }
        }
        assert!(pythag(f64::NAN, 1.0).is_nan());
        assert_eq!(pythag(f64::INFINITY, 1.0), f64::INFINITY);
    }

    #[test]
    fn the_rule_scales_with_the_matrix_far_from_one() {
        // Scaling T by s scales the nodes by s and leaves the weights unchanged; at 1e±250
        // the rotations' squares leave the normal range, so the `hypot` branch is taken.
        let diag = vec![2.0, 3.5, 1.25, 4.0, 2.5];
        let off = vec![0.7, -0.4, 0.9, 0.3];
        let base = SymTridiagonal::new(diag.clone(), off.clone())
            .and_then(|t| t.gauss_rule())
            .unwrap_or_else(|e| panic!("{e}"));
        for scale in [1e-250, 1e250] {
            let t = SymTridiagonal::new(
                diag.iter().map(|v| v * scale).collect(),
                off.iter().map(|v| v * scale).collect(),
            )
            .unwrap_or_else(|e| panic!("{e}"));
            let rule = t.gauss_rule().unwrap_or_else(|e| panic!("{e}"));
            let mut pairs: Vec<(f64, f64)> = rule
                .nodes
                .iter()
                .map(|l| l / scale)
                .zip(rule.weights)
                .collect();
            let mut expected: Vec<(f64, f64)> = base
                .nodes
                .iter()
                .copied()
                .zip(base.weights.iter().copied())
                .collect();
            pairs.sort_by(|a, b| a.0.total_cmp(&b.0));
            expected.sort_by(|a, b| a.0.total_cmp(&b.0));
            for ((l, w), (le, we)) in pairs.iter().zip(&expected) {
                assert!(
                    (l - le).abs() < 1e-13 * le.abs(),
                    "scale {scale}: node {l} vs {le}"
                );
                assert!((w - we).abs() < 1e-13, "scale {scale}: weight {w} vs {we}");
            }
        }
    }
}
