//! The Gauss quadrature rule of a symmetric tridiagonal matrix in `O(k²)`: its eigenvalues
//! (the nodes) and the squared first components of its eigenvectors (the weights), by the
//! implicit QL iteration with Wilkinson shifts that tracks only the first row of the
//! eigenvector matrix (Golub & Welsch 1969). RR-SLQ needs the rule of every leading block
//! of a tridiagonal, which the dense eigen-solver would make `O(k⁴)`.

use crate::error::Result;
use crate::tridiagonal::SymTridiagonal;

/// Rotations allowed per eigenvalue before the dense eigen-solver takes over.
const MAX_SWEEPS: usize = 60;

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
                let mut r = g.hypot(1.0);
                g = d[m] - d[l] + e[l] / (g + r.copysign(g));
                let (mut s, mut c, mut p) = (1.0, 1.0, 0.0);
                let mut underflow = false;
                let mut i = m;
                while i > l {
                    i -= 1;
                    let f = s * e[i];
                    let b = c * e[i];
                    r = f.hypot(g);
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
