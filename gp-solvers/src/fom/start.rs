//! The checked start of a Krylov solver from `x₀ = 0`, shared by FOM and textbook CG.

use faer::ColRef;
use gp_linalg::LinearOperator;

use crate::cg::kernels::norm2;
use crate::error::{check_shape, invalid, Result};

/// What the checks of [`start_vector`] name in their messages.
pub(crate) struct StartContext {
    /// Context of a non-square operator.
    pub square: &'static str,
    /// Context of a right-hand side of the wrong length.
    pub rhs: &'static str,
    /// Name of the right-hand side in the non-finite and zero messages.
    pub name: &'static str,
    /// Message for a zero right-hand side.
    pub zero: &'static str,
}

/// The operator's order `n`, `b` copied and `‖b‖`, after checking that the operator is
/// square, `b` has `n` finite entries and is not zero.
pub(crate) fn start_vector(
    op: &dyn LinearOperator,
    b: ColRef<'_, f64>,
    context: &StartContext,
) -> Result<(usize, Vec<f64>, f64)> {
    let n = op.nrows();
    check_shape(op.shape(), (n, n), context.square)?;
    check_shape((b.nrows(), 1), (n, 1), context.rhs)?;
    gp_linalg::validate::check_finite_col(b, context.name)?;
    let b: Vec<f64> = (0..n).map(|i| b[i]).collect();
    let norm = norm2(&b);
    if norm == 0.0 {
        return Err(invalid("b", context.zero));
    }
    Ok((n, b, norm))
}
