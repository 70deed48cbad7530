//! Small internal helpers: contiguous views of faer columns and checked index arithmetic.

use faer::reborrow::ReborrowMut;
use faer::{ColMut, ColRef};

use crate::error::{Result, StructuredError};

/// Borrows `x` as a slice, copying into `buf` only when its row stride is not 1.
pub(crate) fn col_as_slice<'a>(x: ColRef<'a, f64>, buf: &'a mut Vec<f64>) -> &'a [f64] {
    match x.try_as_col_major() {
        Some(c) => c.as_slice(),
        None => {
            buf.clear();
            buf.extend(x.iter().copied());
            buf.as_slice()
        }
    }
}

/// Runs `f` on a contiguous mutable slice for `out`, going through a temporary buffer when the
/// row stride of `out` is not 1.
pub(crate) fn with_out_slice(mut out: ColMut<'_, f64>, f: impl FnOnce(&mut [f64])) {
    match out.rb_mut().try_as_col_major_mut() {
        Some(c) => f(c.as_slice_mut()),
        None => {
            let mut tmp = vec![0.0; out.nrows()];
            f(&mut tmp);
            for (i, v) in tmp.into_iter().enumerate() {
                out[i] = v;
            }
        }
    }
}

/// Product of `sizes`, or an error naming `what` when it overflows `usize`.
pub(crate) fn checked_product(sizes: &[usize], what: &'static str) -> Result<usize> {
    sizes.iter().try_fold(1usize, |acc, &s| {
        acc.checked_mul(s)
            .ok_or_else(|| StructuredError::InvalidArgument {
                name: what,
                reason: format!(
                    "the product of the sizes {sizes:?} overflows the index type (usize)"
                ),
            })
    })
}

/// C-order (last index fastest) strides of a tensor with the given sizes.
pub(crate) fn c_strides(sizes: &[usize]) -> Vec<usize> {
    let mut strides = vec![1usize; sizes.len()];
    for l in (0..sizes.len().saturating_sub(1)).rev() {
        strides[l] = strides[l + 1].saturating_mul(sizes[l + 1]);
    }
    strides
}
