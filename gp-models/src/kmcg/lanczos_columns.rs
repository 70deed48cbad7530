//! The KMCG columns from the Lanczos recurrence on `B = K + cI` started at `q₁ = y/‖y‖`.
//!
//! `B Q_j = Q_j T_j + β_j q_{j+1} e_jᵀ` gives, with `T̃ = T_j − cI`:
//! `G = Q_jᵀK Q_j = T̃` (tridiagonal), `R = K Q_j = Q_j T̃ + β_j q_{j+1} e_jᵀ`, so
//! `H = RᵀR = T̃² + β_j² e_j e_jᵀ` (the leading block of `H_{j+1}` is `H_j`, as bordering
//! needs), and `u = Rᵀy = ‖y‖ T̃ e₁` (`q_{j+1} ⟂ q₁`). Every column costs `O(1)`: the only
//! `O(N)` work per step is the Lanczos step and the test row.

use super::state::KmcgColumns;

/// The coefficients seen so far: `α_i − c` and `β_i`.
#[derive(Debug, Clone, Default)]
pub struct LanczosColumns {
    y_norm: f64,
    shift: f64,
    diag: Vec<f64>,
    off: Vec<f64>,
}

impl LanczosColumns {
    /// For `‖y‖` and the shift `c` of the operator Lanczos runs on.
    pub fn new(y_norm: f64, shift: f64) -> Self {
        Self {
            y_norm,
            shift,
            ..Self::default()
        }
    }

    /// The columns for step `j` from its diagonal `α_j` and the next off-diagonal `β_j`
    /// (the norm of the re-orthogonalised residual; 0 if the space became invariant).
    pub fn next(&mut self, alpha: f64, beta: f64, test_row: Vec<f64>) -> KmcgColumns {
        let j = self.diag.len();
        self.diag.push(alpha - self.shift);
        let a = &self.diag;
        let b = &self.off; // β_1 … β_{j−1} (0-based: b[i] couples i and i+1)
        let mut gram = vec![0.0; j + 1];
        gram[j] = a[j];
        if j >= 1 {
            gram[j - 1] = b[j - 1];
        }
        let mut product_gram = vec![0.0; j + 1];
        let below = if j >= 1 { b[j - 1] } else { 0.0 };
        product_gram[j] = below * below + a[j] * a[j] + beta * beta;
        if j >= 1 {
            product_gram[j - 1] = b[j - 1] * (a[j - 1] + a[j]);
        }
        if j >= 2 {
            product_gram[j - 2] = b[j - 2] * b[j - 1];
        }
        let product_dot_y = match j {
            0 => self.y_norm * a[0],
            1 => self.y_norm * b[0],
            _ => 0.0,
        };
        self.off.push(beta);
        KmcgColumns {
            gram,
            product_gram,
            product_dot_y,
            test_row,
        }
    }
}
