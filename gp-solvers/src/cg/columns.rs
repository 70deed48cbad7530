//! The CG state's `n × m` blocks, stored column-major in one vector with column stride `n`,
//! so that every column (or any set of columns) can be borrowed as a plain slice at once:
//! the row-chunked passes of [`passes`](super::passes) update all columns in one sweep.

use faer::{Mat, MatMut, MatRef};

/// An `n × m` block, column-major with column stride `n`.
#[derive(Debug, Clone)]
pub(super) struct ColumnBlock {
    data: Vec<f64>,
    n: usize,
    m: usize,
}

impl ColumnBlock {
    /// The zero block.
    pub(super) fn zeros(n: usize, m: usize) -> Self {
        Self {
            data: vec![0.0; n * m],
            n,
            m,
        }
    }

    /// A copy of `a`.
    pub(super) fn from_mat(a: MatRef<'_, f64>) -> Self {
        Self {
            data: column_major(a),
            n: a.nrows(),
            m: a.ncols(),
        }
    }

    /// Column `c`.
    pub(super) fn col(&self, c: usize) -> &[f64] {
        &self.data[c * self.n..(c + 1) * self.n]
    }

    /// Column `c`, mutably.
    pub(super) fn col_mut(&mut self, c: usize) -> &mut [f64] {
        &mut self.data[c * self.n..(c + 1) * self.n]
    }

    /// The columns `cols` (each `< m`), in that order.
    pub(super) fn cols(&self, cols: &[usize]) -> Vec<&[f64]> {
        cols.iter().map(|&c| self.col(c)).collect()
    }

    /// The columns `cols` (strictly increasing, each `< m`) mutably, in that order.
    pub(super) fn cols_mut(&mut self, cols: &[usize]) -> Vec<&mut [f64]> {
        select_columns_mut(&mut self.data, self.n, cols)
    }

    /// A faer view of the block.
    pub(super) fn as_ref(&self) -> MatRef<'_, f64> {
        MatRef::from_column_major_slice(&self.data, self.n, self.m)
    }

    /// A mutable faer view of the block.
    pub(super) fn as_mut(&mut self) -> MatMut<'_, f64> {
        MatMut::from_column_major_slice_mut(&mut self.data, self.n, self.m)
    }

    /// The block as an owned faer matrix.
    pub(super) fn to_mat(&self) -> Mat<f64> {
        self.as_ref().to_owned()
    }
}

/// `a` as one column-major vector with column stride `nrows` (the layout of the CG state and
/// of [`CgSolver::step_accumulating`](super::CgSolver::step_accumulating)'s targets).
pub(crate) fn column_major(a: MatRef<'_, f64>) -> Vec<f64> {
    let mut data = Vec::with_capacity(a.nrows() * a.ncols());
    for c in 0..a.ncols() {
        data.extend(a.col(c).iter());
    }
    data
}

/// The columns `cols` (strictly increasing) of the column-major buffer `data` with column
/// stride `n`, as disjoint mutable slices in the order of `cols`.
pub(super) fn select_columns_mut<'a>(
    data: &'a mut [f64],
    n: usize,
    cols: &[usize],
) -> Vec<&'a mut [f64]> {
    let mut out = Vec::with_capacity(cols.len());
    let mut rest = data;
    let mut start = 0;
    for &c in cols {
        // Skip to column c, then split it off; `cols` increasing keeps the slices disjoint.
        let tail = std::mem::take(&mut rest);
        let (_, from_c) = tail.split_at_mut((c - start) * n);
        let (column, after) = from_c.split_at_mut(n);
        out.push(column);
        rest = after;
        start = c + 1;
    }
    out
}
