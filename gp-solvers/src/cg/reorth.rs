//! Full re-orthogonalization of CG residuals in the `P⁻¹` inner product.

use faer::linalg::matmul::matmul;
use faer::{Accum, Col, ColRef, MatMut, MatRef};

/// The normalized previous residuals `r̃_i = r_i / √(r_iᵀP⁻¹r_i)` and their preconditioned
/// images `s̃_i = P⁻¹ r̃_i`, stored column-major.
#[derive(Debug, Clone, Default)]
pub(crate) struct ReorthBasis {
    n: usize,
    r: Vec<f64>,
    s: Vec<f64>,
}

impl ReorthBasis {
    pub(crate) fn new(n: usize) -> Self {
        Self {
            n,
            r: Vec::new(),
            s: Vec::new(),
        }
    }

    fn len(&self) -> usize {
        self.r.len().checked_div(self.n).unwrap_or(0)
    }

    /// Adds `(r, s)` scaled by `1/√(rᵀs)` (`rz = rᵀs > 0`).
    pub(crate) fn push(&mut self, r: &[f64], s: &[f64], rz: f64) {
        let inv = 1.0 / rz.sqrt();
        self.r.extend(r.iter().map(|v| v * inv));
        self.s.extend(s.iter().map(|v| v * inv));
    }

    /// Removes from `r` its `P⁻¹`-components along the basis, and the matching components
    /// from `s = P⁻¹ r` (by linearity, without another preconditioner solve). Classical
    /// Gram–Schmidt, twice ("twice is enough").
    pub(crate) fn orthogonalize(&self, r: &mut [f64], s: &mut [f64]) {
        let k = self.len();
        if k == 0 {
            return;
        }
        let rb = MatRef::from_column_major_slice(&self.r, self.n, k);
        let sb = MatRef::from_column_major_slice(&self.s, self.n, k);
        let par = gp_linalg::parallelism();
        let mut c = Col::<f64>::zeros(k);
        for _ in 0..2 {
            // c = S̃ᵀ r = R̃ᵀ P⁻¹ r.
            let rv = MatRef::from_column_major_slice(&*r, self.n, 1);
            matmul(c.as_mat_mut(), Accum::Replace, sb.transpose(), rv, 1.0, par);
            sub_block(r, rb, c.as_ref(), self.n);
            sub_block(s, sb, c.as_ref(), self.n);
        }
    }
}

/// `v −= B c`.
fn sub_block(v: &mut [f64], b: MatRef<'_, f64>, c: ColRef<'_, f64>, n: usize) {
    let out = MatMut::from_column_major_slice_mut(v, n, 1);
    matmul(
        out,
        Accum::Add,
        b,
        c.as_mat(),
        -1.0,
        gp_linalg::parallelism(),
    );
}
