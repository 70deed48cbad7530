//! Data utilities for users of the models: standardisation with the training part's
//! statistics and its inverse ([`Standardizer`]), scikit-learn's `normalize_y` for any
//! model ([`NormalizedY`]), points and targets from plain slices and `Vec`s
//! ([`points_from_rows`], [`points_from_row_major`], [`targets`]), and seeded train/test splits and k-fold
//! partitions ([`permutation`], [`train_test_split`], [`random_splits`], [`k_fold`]).
//!
//! They live here, not in the benchmark harness, so that a downstream user can prepare
//! data the way the reproductions do without depending on `gp-bench`.
//!
//! ```
//! use faer::{Col, Mat};
//! use gp_models::data::{k_fold, train_test_split, Standardizer};
//!
//! let x = Mat::from_fn(20, 2, |i, j| (i * (j + 1)) as f64);
//! let y = Col::from_fn(20, |i| 100.0 + 3.0 * i as f64);
//!
//! // A seeded 75 / 25 split of the rows; the same seed gives the same split.
//! let split = train_test_split(x.nrows(), 0.25, 7)?;
//! assert_eq!((split.train.len(), split.test.len()), (15, 5));
//! let x_train = Mat::from_fn(split.train.len(), 2, |i, j| x[(split.train[i], j)]);
//! let y_train = Col::from_fn(split.train.len(), |i| y[split.train[i]]);
//!
//! // Statistics of the training rows only; predictions go back to the original units.
//! let st = Standardizer::fit(x_train.as_ref(), y_train.as_ref())?;
//! let z = st.transform_y(y_train.as_ref());
//! let back = st.inverse_y(z.as_ref());
//! assert!((back[0] - y_train[0]).abs() < 1e-9);
//! let sd = st.inverse_std(Col::from_fn(1, |_| 1.0).as_ref());
//! assert!((sd[0] - st.y_std).abs() < 1e-12);
//!
//! // Ten folds whose test blocks partition the rows.
//! let folds = k_fold(x.nrows(), 10, 0)?;
//! assert_eq!(folds.iter().map(|f| f.test.len()).sum::<usize>(), 20);
//! # Ok::<(), gp_models::ModelError>(())
//! ```

pub mod convert;
pub mod normalize_y;
pub mod split;
pub mod standardize;

pub use convert::{points_from_row_major, points_from_rows, targets};
pub use normalize_y::NormalizedY;
pub use split::{k_fold, permutation, random_splits, train_test_split, Split};
pub use standardize::Standardizer;
