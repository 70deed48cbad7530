//! The SKI operator `W M Wᵀ + c I` on data space, for `M = K_G` (the model, `c = σ²`) and
//! for the derivatives `M = ∂K_G/∂θ` (`c = 0`).

use faer::reborrow::ReborrowMut;
use faer::{ColMut, ColRef, Mat, MatMut, MatRef};
use gp_linalg::validate::check_shape;
use gp_linalg::{LinearOperator, TransposeOperator};
use gp_structured::InterpolationWeights;

use crate::error::{ModelError, Result};

/// `W M Wᵀ + shift · I` (`n × n`) for interpolation weights `W` (`n × m`) and an `m × m`
/// operator `M`, applied as `W (M (Wᵀ v)) + shift · v`: one interpolation pass each way and
/// one product with `M` (`O(4^d n + m log m)` for cubic `W` and a Kronecker-Toeplitz `M`),
/// with `O(m)` memory per column.
///
/// Blocks of columns share the product with `M` ([`LinearOperator::matmat`]).
pub struct SkiOperator<'a> {
    w: &'a InterpolationWeights,
    inner: &'a dyn LinearOperator,
    shift: f64,
}

impl std::fmt::Debug for SkiOperator<'_> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("SkiOperator")
            .field("n", &self.w.num_rows())
            .field("m", &self.w.num_cols())
            .field("shift", &self.shift)
            .finish()
    }
}

impl<'a> SkiOperator<'a> {
    /// `W inner Wᵀ + shift · I`.
    ///
    /// Errors with [`ModelError::Linalg`] (a shape mismatch) if
    /// `inner` is not `m × m` for the `m` columns of `W`, and
    /// [`ModelError::InvalidOption`] for a non-finite shift.
    pub fn new(
        w: &'a InterpolationWeights,
        inner: &'a dyn LinearOperator,
        shift: f64,
    ) -> Result<Self> {
        let m = w.num_cols();
        check_shape(inner.shape(), (m, m), "SkiOperator::new (inner operator)")?;
        if !shift.is_finite() {
            return Err(ModelError::InvalidOption {
                name: "shift",
                reason: format!("the diagonal shift must be finite, got {shift}"),
            });
        }
        Ok(Self::from_parts(w, inner, shift))
    }

    /// As [`new`](Self::new) without the checks (the model's own operators).
    pub(crate) fn from_parts(
        w: &'a InterpolationWeights,
        inner: &'a dyn LinearOperator,
        shift: f64,
    ) -> Self {
        Self { w, inner, shift }
    }

    /// The diagonal shift `c`.
    pub fn shift(&self) -> f64 {
        self.shift
    }

    /// `M Wᵀ X` (`m × k`): the grid-side half of a product.
    fn inner_product(&self, x: MatRef<'_, f64>) -> Mat<f64> {
        let (m, k) = (self.w.num_cols(), x.ncols());
        let mut wt_x = Mat::<f64>::zeros(m, k);
        self.w.transposed().matmat(x, wt_x.as_mut());
        let mut inner = Mat::<f64>::zeros(m, k);
        self.inner.matmat(wt_x.as_ref(), inner.as_mut());
        inner
    }
}

impl LinearOperator for SkiOperator<'_> {
    fn nrows(&self) -> usize {
        self.w.num_rows()
    }

    fn ncols(&self) -> usize {
        self.w.num_rows()
    }

    fn matvec(&self, x: ColRef<'_, f64>, out: ColMut<'_, f64>) {
        self.matmat(x.as_mat(), out.as_mat_mut());
    }

    fn matmat(&self, x: MatRef<'_, f64>, mut out: MatMut<'_, f64>) {
        let inner = self.inner_product(x);
        if self.shift == 0.0 {
            self.w.matmat(inner.as_ref(), out.rb_mut());
            return;
        }
        // W u + σ² x in one pass over the rows. The shapes are the operator's own (the
        // trait's callers check them), so this cannot fail; if it did, NaN marks the block
        // for the solvers' finiteness checks instead of leaving it silently wrong.
        if self
            .w
            .matmat_plus_scaled(inner.as_ref(), self.shift, x, out.rb_mut())
            .is_err()
        {
            out.fill(f64::NAN);
        }
    }

    /// The curvatures `x_jᵀ (A x_j)` taken inside the final `W u + σ² x` pass, while each
    /// chunk of the output is in cache (the same bits as `vector::dot` after `matmat`).
    fn matmat_with_dots(&self, x: MatRef<'_, f64>, mut out: MatMut<'_, f64>) -> Vec<f64> {
        let inner = self.inner_product(x);
        let dots = if self.shift == 0.0 {
            self.w.matmat(inner.as_ref(), out.rb_mut());
            gp_linalg::vector::col_dots(x, out.as_ref())
                .ok()
                .map(|d| d.iter().copied().collect())
        } else {
            self.w
                .matmat_plus_scaled_dots(inner.as_ref(), self.shift, x, out.rb_mut())
                .ok()
        };
        // As in `matmat`: a failure cannot happen for the operator's own shapes; NaN marks it.
        dots.unwrap_or_else(|| {
            out.fill(f64::NAN);
            vec![f64::NAN; x.ncols()]
        })
    }
}
