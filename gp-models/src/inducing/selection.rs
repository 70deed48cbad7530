//! Choosing the inducing inputs `U`: nested random subsets of the training rows, a regular
//! grid over the data's bounding box, or points the caller gives.

use faer::{Mat, MatRef};
use gp_linalg::validate::check_finite_mat;

use crate::data::permutation;
use crate::error::{ModelError, Result};

/// The inducing inputs `U` (`m × d`, one point per row) of a
/// [`SparseGp`](crate::SparseGp), with the training rows they were taken from when they
/// are a subset.
///
/// ```
/// use faer::Mat;
/// use gp_models::{InducingPoints, NestedSubsets};
///
/// let x = Mat::from_fn(50, 1, |i, _| i as f64);
/// // Nested random subsets: one permutation, prefixes of growing length.
/// let order = NestedSubsets::new(x.nrows(), 7);
/// let small = order.take(x.as_ref(), 5)?;
/// let large = order.take(x.as_ref(), 10)?;
/// assert_eq!(small.rows(), Some(&large.rows().unwrap()[..5]));
/// // A regular grid over the data's range: linspace(0, 49, 8).
/// let grid = InducingPoints::grid(x.as_ref(), &[8])?;
/// assert_eq!((grid.len(), grid.points()[(7, 0)]), (8, 49.0));
/// # Ok::<(), gp_models::ModelError>(())
/// ```
#[derive(Debug, Clone, PartialEq)]
pub struct InducingPoints {
    points: Mat<f64>,
    rows: Option<Vec<usize>>,
}

impl InducingPoints {
    /// Caller-given points `u` (`m × d`).
    ///
    /// Errors: [`ModelError::EmptyData`] for no rows or no columns,
    /// [`ModelError::NonFinite`] for a NaN or infinite entry.
    pub fn given(u: MatRef<'_, f64>) -> Result<Self> {
        check_points(u)?;
        Ok(Self {
            points: u.to_owned(),
            rows: None,
        })
    }

    /// The first `m` rows of a random permutation of the training rows of `x` seeded by
    /// `seed` (see [`NestedSubsets`] to take several nested sizes from one permutation).
    ///
    /// Errors: those of [`NestedSubsets::take`].
    pub fn random_subset(x: MatRef<'_, f64>, m: usize, seed: u64) -> Result<Self> {
        NestedSubsets::new(x.nrows(), seed).take(x, m)
    }

    /// A regular grid over the bounding box of the training points `x`: along axis `l`,
    /// `counts[l]` points `linspace(min x_l, max x_l, counts[l])` (one point, the minimum,
    /// when `counts[l] = 1`), and the Cartesian product of the axes, the last axis varying
    /// fastest. In 1-D this is the reference code's `linspace(min X, max X, m)`.
    ///
    /// Errors: [`ModelError::EmptyData`] for an empty `x`, [`ModelError::NonFinite`],
    /// [`ModelError::LengthMismatch`] unless there is one count per column of `x`,
    /// [`ModelError::InvalidOption`] for a zero count or a product that overflows.
    pub fn grid(x: MatRef<'_, f64>, counts: &[usize]) -> Result<Self> {
        check_points(x)?;
        let d = x.ncols();
        let lo: Vec<f64> = (0..d)
            .map(|l| x.col(l).iter().copied().fold(f64::INFINITY, f64::min))
            .collect();
        let hi: Vec<f64> = (0..d)
            .map(|l| x.col(l).iter().copied().fold(f64::NEG_INFINITY, f64::max))
            .collect();
        Self::grid_between(&lo, &hi, counts)
    }

    /// A regular grid over the box `[lo, hi]`: `counts[l]` points
    /// `linspace(lo[l], hi[l], counts[l])` along axis `l`, the last axis varying fastest.
    ///
    /// Errors: [`ModelError::LengthMismatch`] unless the three slices have one entry per
    /// axis, [`ModelError::EmptyData`] for no axes, [`ModelError::InvalidOption`] for
    /// non-finite bounds, `lo > hi`, a zero count or a product that overflows.
    pub fn grid_between(lo: &[f64], hi: &[f64], counts: &[usize]) -> Result<Self> {
        let d = lo.len();
        if d == 0 {
            return Err(ModelError::EmptyData {
                context: "a grid of inducing points",
                n: 0,
                d: 0,
            });
        }
        for (len, context) in [
            (hi.len(), "upper grid bounds"),
            (counts.len(), "grid counts"),
        ] {
            if len != d {
                return Err(ModelError::LengthMismatch {
                    context,
                    expected: d,
                    found: len,
                });
            }
        }
        let axes = (0..d)
            .map(|l| {
                if !(lo[l].is_finite() && hi[l].is_finite() && lo[l] <= hi[l]) {
                    return Err(ModelError::InvalidOption {
                        name: "grid bounds",
                        reason: format!(
                            "axis {l} needs finite bounds with lo ≤ hi, got [{}, {}]",
                            lo[l], hi[l]
                        ),
                    });
                }
                if counts[l] == 0 {
                    return Err(ModelError::InvalidOption {
                        name: "grid counts",
                        reason: format!("axis {l} needs at least one point, got 0"),
                    });
                }
                Ok(linspace(lo[l], hi[l], counts[l]))
            })
            .collect::<Result<Vec<_>>>()?;
        let m = counts
            .iter()
            .try_fold(1usize, |acc, &c| acc.checked_mul(c))
            .ok_or_else(|| ModelError::InvalidOption {
                name: "grid counts",
                reason: format!("the product of {counts:?} overflows"),
            })?;
        // Row r's coordinates are the mixed-radix digits of r, the last axis least
        // significant (varying fastest).
        let points = Mat::from_fn(m, d, |r, l| {
            let stride: usize = counts[l + 1..].iter().product();
            axes[l][(r / stride) % counts[l]]
        });
        Ok(Self { points, rows: None })
    }

    /// The points (`m × d`).
    pub fn points(&self) -> MatRef<'_, f64> {
        self.points.as_ref()
    }

    /// Number of inducing points `m`.
    pub fn len(&self) -> usize {
        self.points.nrows()
    }

    /// Whether there are no points (never true for points built by this type's
    /// constructors).
    pub fn is_empty(&self) -> bool {
        self.points.nrows() == 0
    }

    /// Input dimension `d`.
    pub fn dim(&self) -> usize {
        self.points.ncols()
    }

    /// The training rows the points were taken from, in order (`None` unless they are a
    /// subset of the training points).
    pub fn rows(&self) -> Option<&[usize]> {
        self.rows.as_deref()
    }
}

/// One seeded random order of the `n` training rows whose prefixes are the inducing sets:
/// the first `m` rows for size `m`, so the sets are nested as `m` grows (the reference
/// code's per-seed permutation).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct NestedSubsets {
    order: Vec<usize>,
}

impl NestedSubsets {
    /// The permutation of `0..n` seeded by `seed` ([`crate::data::permutation`], ChaCha8:
    /// the same on every platform).
    pub fn new(n: usize, seed: u64) -> Self {
        Self {
            order: permutation(n, seed),
        }
    }

    /// The whole permutation.
    pub fn order(&self) -> &[usize] {
        &self.order
    }

    /// The first `m` rows of the permutation.
    ///
    /// Errors: [`ModelError::InvalidOption`] for `m = 0` or `m > n`.
    pub fn rows(&self, m: usize) -> Result<&[usize]> {
        let n = self.order.len();
        if m == 0 || m > n {
            return Err(ModelError::InvalidOption {
                name: "m (number of inducing points)",
                reason: format!("a subset of {n} training rows needs 1 ≤ m ≤ {n}, got {m}"),
            });
        }
        Ok(&self.order[..m])
    }

    /// The inducing points: the rows of `x` at the first `m` positions of the permutation.
    ///
    /// Errors: [`ModelError::LengthMismatch`] when `x` does not have the `n` rows the
    /// permutation was made for, [`ModelError::EmptyData`], [`ModelError::NonFinite`], and
    /// those of [`rows`](Self::rows).
    pub fn take(&self, x: MatRef<'_, f64>, m: usize) -> Result<InducingPoints> {
        if x.nrows() != self.order.len() {
            return Err(ModelError::LengthMismatch {
                context: "training rows (the subset permutation's length)",
                expected: self.order.len(),
                found: x.nrows(),
            });
        }
        check_points(x)?;
        let rows = self.rows(m)?.to_vec();
        let points = Mat::from_fn(m, x.ncols(), |r, l| x[(rows[r], l)]);
        Ok(InducingPoints {
            points,
            rows: Some(rows),
        })
    }
}

/// At least one row and one column, all finite.
fn check_points(u: MatRef<'_, f64>) -> Result<()> {
    if u.nrows() == 0 || u.ncols() == 0 {
        return Err(ModelError::EmptyData {
            context: "choosing inducing points",
            n: u.nrows(),
            d: u.ncols(),
        });
    }
    check_finite_mat(u, "the inducing points").map_err(ModelError::from_finite_check)
}

/// `size` evenly spaced points from `lo` to `hi`, both ends exact (`[lo]` when `size = 1`,
/// as `numpy.linspace`).
fn linspace(lo: f64, hi: f64, size: usize) -> Vec<f64> {
    if size <= 1 {
        return vec![lo; size];
    }
    let step = (hi - lo) / (size - 1) as f64;
    (0..size)
        .map(|k| {
            if k + 1 == size {
                hi
            } else {
                lo + step * k as f64
            }
        })
        .collect()
}
