//! The UCI sets of the RR-CG paper with the reference code's preprocessing (spec `rtgps.md`
//! §5.1, `experiments/load_data.py::load_uci_data`), in f64:
//!
//! 1. drop input columns whose variance (ddof = 1, as `torch.var`) over all rows is
//!    `≤ 1e−10` ([`VARIANCE_FLOOR`]);
//! 2. shuffle the rows with a seeded permutation ([`crate::data::permutation`], ChaCha8; the
//!    code's `torch.randperm` stream cannot be reproduced, so our splits differ from the
//!    paper's for the same seed number);
//! 3. optionally keep only the first `max_total` shuffled rows (quick runs; the split says
//!    so, [`RtgpsSplit::subset_label`]);
//! 4. scale every input column to `[−1, 1]` with the min and max of all kept rows (before
//!    splitting); a column that is constant among the kept rows (possible only with
//!    `max_total`) becomes 0 instead of the code's NaN;
//! 5. standardise `y` with the mean and standard deviation (ddof = 1, as `torch.std`) of all
//!    kept rows;
//! 6. train = the first `⌊0.64 n⌋` rows, valid = the next `⌊0.16 n⌋`, test = the rest.
//!
//! The rows come from gp-bench's UCI loader ([`crate::data::load_uci`], `uci/<name>/` in the
//! data directory). Without the data directory or the file, [`load_rtgps`] builds a labelled
//! synthetic stand-in of the same `n` and kept `d` ([`stand_in_raw`]) and preprocesses it the
//! same way.
//!
//! **Dimensions found.** After step 1, pol keeps 26 of 26 columns, bike 17 of 17, but
//! elevators keeps 16 of 18: its columns `x15` and `x17` (diffSaTime2, diffSaTime4) take
//! only 3 distinct values with variance ≈ 3.0e−12 and 5.4e−12, below the code's threshold.
//! The spec's table lists d = 18 (taken from Wang et al. 2019, not verified there);
//! keggundirected similarly keeps 26 of 27 (column `x10` is constant). [`RTGPS_SETS`] records
//! both numbers.

use std::path::Path;

use faer::{Col, Mat};
use gp_kernels::{RandomFourierFeatures, SquaredExponential};
use rand::{Rng, SeedableRng};
use rand_chacha::ChaCha8Rng;
use rand_distr::StandardNormal;

use crate::data::{load_uci, permutation, uci_known, DataOrigin, Dataset};
use crate::error::BenchError;

/// Input columns whose variance over all rows is at most this are dropped (the code's
/// `X.var(dim=-2) > 1e−10` keeps the others).
pub const VARIANCE_FLOOR: f64 = 1e-10;

/// Fraction of the (kept) rows that train: `⌊0.64 n⌋`.
pub const TRAIN_FRACTION: f64 = 0.64;

/// Fraction of the (kept) rows that validate: `⌊0.16 n⌋`; the test part is the rest.
pub const VALID_FRACTION: f64 = 0.16;

/// Noise variance of the stand-in's targets (its signal variance is 1).
pub const STAND_IN_NOISE_VARIANCE: f64 = 0.01;

/// Random Fourier frequencies of the stand-in's smooth target function.
pub const STAND_IN_FREQS: usize = 256;

/// A UCI set of the RR-CG paper's tables that the data directory holds.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct RtgpsSet {
    /// The folder name under `uci/` (the reference code's key).
    pub name: &'static str,
    /// The paper's name for it.
    pub paper_name: &'static str,
    /// Rows.
    pub n: usize,
    /// Input columns in the file.
    pub d_file: usize,
    /// The input dimension the spec's table gives (from Wang et al. 2019).
    pub d_paper: usize,
    /// Input columns left after dropping those with variance `≤ 1e−10`, as found on the
    /// data directory's files (checked by a test when `GP_DATA_DIR` is set).
    pub d_kept: usize,
}

const fn set(
    name: &'static str,
    paper_name: &'static str,
    n: usize,
    d_file: usize,
    d_paper: usize,
    d_kept: usize,
) -> RtgpsSet {
    RtgpsSet {
        name,
        paper_name,
        n,
        d_file,
        d_paper,
        d_kept,
    }
}

/// The RR-CG paper's UCI sets available in the data directory (3DRoad is not), in the
/// paper's table order. Cholesky is only run on the first three.
pub const RTGPS_SETS: &[RtgpsSet] = &[
    set("pol", "PolTele", 15_000, 26, 26, 26),
    set("elevators", "Elevators", 16_599, 18, 18, 16),
    set("bike", "Bike", 17_379, 17, 17, 17),
    set("kin40k", "Kin40K", 40_000, 8, 8, 8),
    set("protein", "Protein", 45_730, 9, 9, 9),
    set("keggdirected", "KEGG", 48_827, 20, 20, 20),
    set("keggundirected", "KEGGU", 63_608, 27, 27, 26),
];

/// Looks a set up by its folder name or a paper's name (any case, e.g. `PolTele`).
///
/// Errors: [`BenchError::UnknownDataset`] listing the known names.
pub fn rtgps_set(name: &str) -> Result<&'static RtgpsSet, BenchError> {
    let unknown = || BenchError::UnknownDataset {
        name: name.to_string(),
        known: RTGPS_SETS
            .iter()
            .map(|s| format!("{} ({})", s.name, s.paper_name))
            .collect::<Vec<_>>()
            .join(", "),
    };
    let folder = uci_known(name).map_err(|_| unknown())?.name;
    RTGPS_SETS
        .iter()
        .find(|s| s.name == folder)
        .ok_or_else(unknown)
}

/// A preprocessed data set split into train, validation and test parts.
#[derive(Debug, Clone)]
pub struct RtgpsSplit {
    /// The data set's folder name (`pol`, `elevators`, `bike`, ...).
    pub name: String,
    /// Where the rows came from; [`DataOrigin::Synthetic`] for a stand-in.
    pub origin: DataOrigin,
    /// The seed of the shuffle (and of the stand-in, if any).
    pub seed: u64,
    /// Rows before `max_total` was applied.
    pub n_available: usize,
    /// Rows used (`n_train + n_valid + n_test`), after `max_total`.
    pub n: usize,
    /// Input columns after dropping the near-constant ones.
    pub d: usize,
    /// 0-based indices (in the file's columns) of the dropped input columns.
    pub dropped_columns: Vec<usize>,
    /// Training inputs (`⌊0.64 n⌋ × d`), in `[−1, 1]`.
    pub x_train: Mat<f64>,
    /// Training targets, standardised.
    pub y_train: Col<f64>,
    /// Validation inputs (`⌊0.16 n⌋ × d`).
    pub x_valid: Mat<f64>,
    /// Validation targets.
    pub y_valid: Col<f64>,
    /// Test inputs (the remaining rows).
    pub x_test: Mat<f64>,
    /// Test targets.
    pub y_test: Col<f64>,
    /// The mean of the raw targets subtracted (over all `n` used rows).
    pub y_mean: f64,
    /// The standard deviation (ddof = 1) of the raw targets divided by.
    pub y_std: f64,
}

impl RtgpsSplit {
    /// Whether the rows are a synthetic stand-in rather than the real data.
    pub fn is_stand_in(&self) -> bool {
        !self.origin.is_real()
    }

    /// Whether only the first `n < n_available` shuffled rows are used.
    pub fn is_subset(&self) -> bool {
        self.n < self.n_available
    }

    /// `"first 2000 of 15000 shuffled rows"` for a subset, `None` for all rows.
    pub fn subset_label(&self) -> Option<String> {
        self.is_subset().then(|| {
            format!(
                "first {} of {} shuffled rows (max_total)",
                self.n, self.n_available
            )
        })
    }

    /// What identifies the split whatever the data directory is called: name, sizes, seed,
    /// whether the rows are real or a stand-in, and the subset. The fold cache compares it,
    /// so that a training recorded with `GP_DATA_DIR=/abs/path` is reused under a relative
    /// path to the same files, and one recorded on a stand-in is not taken for the real set.
    pub fn identity(&self) -> String {
        let origin = if self.origin.is_real() {
            "real"
        } else {
            "synthetic stand-in"
        };
        self.line(origin)
    }

    /// One line for reports: name, sizes, origin and subset.
    pub fn describe(&self) -> String {
        self.line(&self.origin.describe())
    }

    /// Name, sizes and seed, then `origin`, then the subset label if any.
    fn line(&self, origin: &str) -> String {
        let mut s = format!(
            "{}: n = {} (train {}, valid {}, test {}), d = {}, seed {}; {origin}",
            self.name,
            self.n,
            self.x_train.nrows(),
            self.x_valid.nrows(),
            self.x_test.nrows(),
            self.d,
            self.seed,
        );
        if let Some(label) = self.subset_label() {
            s.push_str("; ");
            s.push_str(&label);
        }
        s
    }
}

/// Loads `name` (folder or paper name) from `data_dir/uci/<name>/`, or builds its labelled
/// stand-in when `data_dir` is `None` or the file is missing, and preprocesses it (module
/// docs) with `seed`, keeping the first `max_total` shuffled rows when given.
///
/// Errors: [`BenchError::UnknownDataset`]; the UCI loader's errors for a malformed file;
/// [`BenchError::BadData`] when a real file keeps a different number of columns than
/// [`RtgpsSet::d_kept`]; those of [`preprocess`].
pub fn load_rtgps(
    name: &str,
    data_dir: Option<&Path>,
    seed: u64,
    max_total: Option<usize>,
) -> Result<RtgpsSplit, BenchError> {
    let set = rtgps_set(name)?;
    let raw = match data_dir.map(|dir| load_uci(set.name, dir)) {
        Some(Ok(uci)) => Some(uci.data),
        Some(Err(BenchError::MissingFile { .. })) | None => None,
        Some(Err(e)) => return Err(e),
    };
    let Some(raw) = raw else {
        return preprocess(stand_in_raw(set, seed)?, seed, max_total);
    };
    let split = preprocess(raw, seed, max_total)?;
    if split.d != set.d_kept {
        return Err(BenchError::BadData {
            name: set.name.into(),
            reason: format!(
                "{} input columns left after dropping those with variance ≤ {VARIANCE_FLOOR:e} \
                 (dropped {:?}), expected {}",
                split.d, split.dropped_columns, set.d_kept
            ),
        });
    }
    Ok(split)
}

/// The raw stand-in for `set` (before preprocessing): `n × d_kept` inputs uniform in
/// `[−1, 1]`, and targets `f(x) + ε` where `f` is one draw of a GP with an isotropic SE kernel
/// (lengthscale `0.75 √d`, variance 1) approximated by [`STAND_IN_FREQS`] random Fourier
/// frequencies, `ε ~ N(0, 0.01)`. Deterministic in `seed`; labelled
/// [`DataOrigin::Synthetic`].
///
/// Errors: none expected (kernel construction with valid constants).
pub fn stand_in_raw(set: &RtgpsSet, seed: u64) -> Result<Dataset, BenchError> {
    let (n, d) = (set.n, set.d_kept);
    let mut rng = ChaCha8Rng::seed_from_u64(seed ^ 0x5254_4750_5353);
    let x = Mat::from_fn(n, d, |_, _| 2.0 * rng.random::<f64>() - 1.0);
    let lengthscale = 0.75 * (d as f64).sqrt();
    let kernel = SquaredExponential::isotropic(d, lengthscale, 1.0)?;
    let rff = RandomFourierFeatures::sample(&kernel, STAND_IN_FREQS, &mut rng)?;
    let weights = Col::from_fn(rff.num_basis(), |_| rng.sample::<f64, _>(StandardNormal));
    let f = rff.features(x.as_ref())? * &weights;
    let noise_sd = STAND_IN_NOISE_VARIANCE.sqrt();
    let y = Col::from_fn(n, |i| {
        f[i] + noise_sd * rng.sample::<f64, _>(StandardNormal)
    });
    Ok(Dataset {
        name: set.name.to_string(),
        x,
        y,
        feature_names: (1..=d).map(|j| format!("x{j}")).collect(),
        target_name: "y".into(),
        origin: DataOrigin::Synthetic(format!(
            "{n} × {d} uniform on [−1,1]^{d}, y = GP(SE, ℓ = {lengthscale:.3}, s = 1) draw \
             ({STAND_IN_FREQS} random Fourier frequencies) + N(0, {STAND_IN_NOISE_VARIANCE}) \
             (seed {seed}) standing in for `{}` ({})",
            set.name, set.paper_name
        )),
    })
}

/// The part sizes `(train, valid, test)` of `n` rows: `⌊0.64 n⌋`, `⌊0.16 n⌋`, the rest (the
/// same floating-point expression as the code's `floor(0.64 * n)`).
pub fn split_sizes(n: usize) -> (usize, usize, usize) {
    let train = (TRAIN_FRACTION * n as f64).floor() as usize;
    let valid = (VALID_FRACTION * n as f64).floor() as usize;
    (train, valid, n - train - valid)
}

/// Variance with ddof = 1 (0 for fewer than two values).
fn sample_variance(values: impl Iterator<Item = f64> + Clone) -> f64 {
    let (count, sum) = values
        .clone()
        .fold((0usize, 0.0), |(c, s), v| (c + 1, s + v));
    if count < 2 {
        return 0.0;
    }
    let mean = sum / count as f64;
    values.map(|v| (v - mean) * (v - mean)).sum::<f64>() / (count - 1) as f64
}

/// Preprocesses `raw` as the reference code does (module docs, steps 1–6) with the shuffle
/// seeded by `seed`, keeping the first `max_total` shuffled rows when given.
///
/// Errors: [`BenchError::InvalidArgument`] for `max_total` of 0 or above the number of rows;
/// [`BenchError::BadData`] when fewer than 7 rows are used (a part would be empty), when every
/// input column is (near-)constant, or when the targets are constant.
pub fn preprocess(
    raw: Dataset,
    seed: u64,
    max_total: Option<usize>,
) -> Result<RtgpsSplit, BenchError> {
    let n_available = raw.len();
    let n = match max_total {
        Some(m) if m == 0 || m > n_available => {
            return Err(BenchError::InvalidArgument {
                name: "max_total",
                reason: format!("must be in 1..={n_available} for `{}`, got {m}", raw.name),
            })
        }
        Some(m) => m,
        None => n_available,
    };
    let bad = |reason: String| BenchError::BadData {
        name: raw.name.clone(),
        reason,
    };
    let (n_train, n_valid, n_test) = split_sizes(n);
    if n_train == 0 || n_valid == 0 || n_test == 0 {
        return Err(bad(format!(
            "{n} rows give an empty part (train {n_train}, valid {n_valid}, test {n_test}); \
             need at least 7"
        )));
    }
    let (kept, dropped_columns): (Vec<usize>, Vec<usize>) = (0..raw.dim())
        .partition(|&j| sample_variance((0..n_available).map(|i| raw.x[(i, j)])) > VARIANCE_FLOOR);
    if kept.is_empty() {
        return Err(bad(format!(
            "every one of the {} input columns has variance ≤ {VARIANCE_FLOOR:e}",
            raw.dim()
        )));
    }
    let rows = &permutation(n_available, seed)[..n];
    let d = kept.len();
    let ranges: Vec<(f64, f64)> = kept
        .iter()
        .map(|&j| {
            rows.iter()
                .map(|&i| raw.x[(i, j)])
                .fold((f64::INFINITY, f64::NEG_INFINITY), |(lo, hi), v| {
                    (lo.min(v), hi.max(v))
                })
        })
        .collect();
    let x = Mat::from_fn(n, d, |r, c| {
        let (lo, hi) = ranges[c];
        if hi > lo {
            2.0 * (raw.x[(rows[r], kept[c])] - lo) / (hi - lo) - 1.0
        } else {
            0.0
        }
    });
    let y_raw = || rows.iter().map(|&i| raw.y[i]);
    let y_mean = y_raw().sum::<f64>() / n as f64;
    let y_std = sample_variance(y_raw()).sqrt();
    if !(y_std > 0.0 && y_std.is_finite()) {
        return Err(bad(format!(
            "the targets of the {n} rows used are constant (std {y_std})"
        )));
    }
    let y = Col::from_fn(n, |r| (raw.y[rows[r]] - y_mean) / y_std);
    let part_x = |start: usize, len: usize| x.subrows(start, len).to_owned();
    let part_y = |start: usize, len: usize| y.subrows(start, len).to_owned();
    Ok(RtgpsSplit {
        name: raw.name.clone(),
        origin: raw.origin.clone(),
        seed,
        n_available,
        n,
        d,
        dropped_columns,
        x_train: part_x(0, n_train),
        y_train: part_y(0, n_train),
        x_valid: part_x(n_train, n_valid),
        y_valid: part_y(n_train, n_valid),
        x_test: part_x(n_train + n_valid, n_test),
        y_test: part_y(n_train + n_valid, n_test),
        y_mean,
        y_std,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    /// 50 rows: x1 informative, x2 constant, x3 near-constant (variance ~1e−12), x4 informative;
    /// y a function of the row index.
    fn toy_raw() -> Dataset {
        let n = 50;
        Dataset {
            name: "toy".into(),
            x: Mat::from_fn(n, 4, |i, j| match j {
                0 => (i as f64 * 0.37).sin() * 10.0,
                1 => 3.0,
                2 => 1e-6 * (i % 2) as f64,
                _ => i as f64,
            }),
            y: Col::from_fn(n, |i| 100.0 + 5.0 * (i as f64 * 0.11).cos()),
            feature_names: (1..=4).map(|j| format!("x{j}")).collect(),
            target_name: "y".into(),
            origin: DataOrigin::Synthetic("test rows".into()),
        }
    }

    /// The split's parts stacked back in order: inputs and targets of all `n` rows.
    fn stacked(s: &RtgpsSplit) -> (Mat<f64>, Col<f64>) {
        let parts = [
            (&s.x_train, &s.y_train),
            (&s.x_valid, &s.y_valid),
            (&s.x_test, &s.y_test),
        ];
        let mut rows = Vec::new();
        for (x, y) in parts {
            for i in 0..x.nrows() {
                rows.push(((0..x.ncols()).map(|j| x[(i, j)]).collect::<Vec<_>>(), y[i]));
            }
        }
        (
            Mat::from_fn(rows.len(), s.d, |i, j| rows[i].0[j]),
            Col::from_fn(rows.len(), |i| rows[i].1),
        )
    }

    #[test]
    fn drops_near_constant_columns_and_scales_to_the_unit_box() {
        let s = preprocess(toy_raw(), 3, None).unwrap();
        assert_eq!(s.dropped_columns, vec![1, 2]);
        assert_eq!((s.n, s.d, s.n_available), (50, 2, 50));
        let (x, _) = stacked(&s);
        for j in 0..s.d {
            let col: Vec<f64> = (0..x.nrows()).map(|i| x[(i, j)]).collect();
            let lo = col.iter().copied().fold(f64::INFINITY, f64::min);
            let hi = col.iter().copied().fold(f64::NEG_INFINITY, f64::max);
            assert_eq!((lo, hi), (-1.0, 1.0), "column {j}");
        }
    }

    #[test]
    fn targets_are_standardised_over_all_rows() {
        let s = preprocess(toy_raw(), 3, None).unwrap();
        let (_, y) = stacked(&s);
        let n = y.nrows() as f64;
        let mean = y.iter().sum::<f64>() / n;
        let var = y.iter().map(|v| (v - mean).powi(2)).sum::<f64>() / (n - 1.0);
        assert!(mean.abs() < 1e-12, "mean {mean}");
        assert!((var - 1.0).abs() < 1e-12, "variance {var}");
        let raw = toy_raw();
        let raw_mean = raw.y.iter().sum::<f64>() / 50.0;
        assert!((s.y_mean - raw_mean).abs() < 1e-12);
        // The first training target is the raw target of the first shuffled row.
        let first = permutation(50, 3)[0];
        assert!((s.y_train[0] * s.y_std + s.y_mean - raw.y[first]).abs() < 1e-12);
    }

    #[test]
    fn split_sizes_follow_the_code() {
        assert_eq!(split_sizes(15_000), (9_600, 2_400, 3_000));
        assert_eq!(split_sizes(16_599), (10_623, 2_655, 3_321));
        assert_eq!(split_sizes(17_379), (11_122, 2_780, 3_477));
        let s = preprocess(toy_raw(), 3, None).unwrap();
        assert_eq!(
            (s.x_train.nrows(), s.x_valid.nrows(), s.x_test.nrows()),
            (32, 8, 10)
        );
        assert_eq!(
            (s.y_train.nrows(), s.y_valid.nrows(), s.y_test.nrows()),
            (32, 8, 10)
        );
    }

    #[test]
    fn same_seed_same_split_other_seed_other_split() {
        let a = preprocess(toy_raw(), 11, None).unwrap();
        let b = preprocess(toy_raw(), 11, None).unwrap();
        let c = preprocess(toy_raw(), 12, None).unwrap();
        assert_eq!((&a.x_train, &a.y_test), (&b.x_train, &b.y_test));
        assert_ne!(a.y_train, c.y_train);
        // The same rows overall: the statistics do not depend on the shuffle.
        assert!((a.y_mean - c.y_mean).abs() < 1e-12);
    }

    #[test]
    fn max_total_keeps_the_first_shuffled_rows_and_says_so() {
        let full = preprocess(toy_raw(), 5, None).unwrap();
        assert_eq!(full.subset_label(), None);
        let s = preprocess(toy_raw(), 5, Some(20)).unwrap();
        assert_eq!((s.n, s.n_available), (20, 50));
        assert!(s.is_subset());
        assert!(s.describe().contains("first 20 of 50 shuffled rows"));
        assert_eq!(
            (s.x_train.nrows(), s.x_valid.nrows(), s.x_test.nrows()),
            (12, 3, 5)
        );
        // Statistics are those of the kept rows: their y is standardised again.
        let (x, y) = stacked(&s);
        assert!(y.iter().sum::<f64>().abs() < 1e-12);
        assert!(x
            .col_iter()
            .all(|c| c.iter().all(|v| (-1.0..=1.0).contains(v))));
        for bad in [0, 51] {
            assert!(matches!(
                preprocess(toy_raw(), 5, Some(bad)),
                Err(BenchError::InvalidArgument {
                    name: "max_total",
                    ..
                })
            ));
        }
        assert!(matches!(
            preprocess(toy_raw(), 5, Some(6)),
            Err(BenchError::BadData { .. })
        ));
    }

    #[test]
    fn constant_targets_and_all_constant_inputs_are_errors() {
        let mut raw = toy_raw();
        raw.y = Col::from_fn(50, |_| 2.0);
        assert!(matches!(
            preprocess(raw, 0, None),
            Err(BenchError::BadData { .. })
        ));
        let mut raw = toy_raw();
        raw.x = Mat::from_fn(50, 2, |_, _| 1.0);
        assert!(matches!(
            preprocess(raw, 0, None),
            Err(BenchError::BadData { .. })
        ));
    }

    #[test]
    fn names_resolve_by_folder_or_paper_name() {
        assert_eq!(rtgps_set("PolTele").unwrap().name, "pol");
        assert_eq!(rtgps_set("ELEVATORS").unwrap().n, 16_599);
        assert_eq!(rtgps_set("KEGGU").unwrap().name, "keggundirected");
        assert!(matches!(
            rtgps_set("wine"),
            Err(BenchError::UnknownDataset { .. })
        ));
        assert!(matches!(
            rtgps_set("nonsense"),
            Err(BenchError::UnknownDataset { .. })
        ));
    }

    #[test]
    fn stand_in_is_labelled_sized_and_seeded() {
        let dir = tempfile::tempdir().unwrap();
        // An existing data directory without the file falls back to the stand-in as well.
        for data_dir in [None, Some(dir.path())] {
            let s = load_rtgps("bike", data_dir, 7, Some(2_000)).unwrap();
            assert!(s.is_stand_in());
            assert!(s.describe().contains("SYNTHETIC STAND-IN"));
            assert_eq!((s.n_available, s.n, s.d), (17_379, 2_000, 17));
            assert!(s.dropped_columns.is_empty());
        }
        let a = load_rtgps("pol", None, 1, None).unwrap();
        assert_eq!((a.n, a.d), (15_000, 26));
        assert_eq!(a.x_train.nrows(), 9_600);
        let b = load_rtgps("pol", None, 1, None).unwrap();
        assert_eq!((&a.x_train, &a.y_train), (&b.x_train, &b.y_train));
        let c = load_rtgps("pol", None, 2, None).unwrap();
        assert_ne!(a.y_train, c.y_train);
    }

    #[test]
    fn stand_in_targets_are_smooth_not_noise() {
        // The GP draw carries most of the variance: neighbouring points (by input distance)
        // have correlated targets. Check that a 1-nearest-neighbour predictor beats the mean.
        let set = rtgps_set("bike").unwrap();
        let raw = stand_in_raw(set, 3).unwrap();
        let (m, d) = (400, raw.dim());
        let dist2 = |a: usize, b: usize| {
            (0..d)
                .map(|j| (raw.x[(a, j)] - raw.x[(b, j)]).powi(2))
                .sum::<f64>()
        };
        let mean = (0..m).map(|i| raw.y[i]).sum::<f64>() / m as f64;
        let (mut err_nn, mut err_mean) = (0.0, 0.0);
        for i in 0..m {
            let nn = (0..m)
                .filter(|&k| k != i)
                .min_by(|&a, &b| dist2(i, a).total_cmp(&dist2(i, b)))
                .unwrap();
            err_nn += (raw.y[i] - raw.y[nn]).powi(2);
            err_mean += (raw.y[i] - mean).powi(2);
        }
        assert!(err_nn < err_mean, "1-NN {err_nn} vs mean {err_mean}");
    }

    /// With `GP_DATA_DIR` set: every set (pol, elevators, bike, then the four larger ones)
    /// loads with the documented rows and kept columns and the code's split sizes. Prints
    /// what it finds (run with `--nocapture` to see it).
    #[test]
    fn real_sets_match_the_documented_shapes() {
        let Some(dir) = std::env::var_os(crate::data::DATA_DIR_ENV).filter(|v| !v.is_empty())
        else {
            eprintln!("GP_DATA_DIR not set: skipping the real RR-CG data shapes");
            return;
        };
        let dir = std::path::PathBuf::from(dir);
        for set in RTGPS_SETS {
            let s = load_rtgps(set.name, Some(&dir), 10, None).unwrap();
            println!(
                "{} ({}): n = {}, d = {} after dropping {:?} of {} file columns (spec table: \
                 {} × {}); train/valid/test = {}/{}/{}; raw y mean {:.6}, std {:.6}",
                set.name,
                set.paper_name,
                s.n,
                s.d,
                s.dropped_columns,
                set.d_file,
                set.n,
                set.d_paper,
                s.x_train.nrows(),
                s.x_valid.nrows(),
                s.x_test.nrows(),
                s.y_mean,
                s.y_std
            );
            assert!(!s.is_stand_in(), "{}", s.describe());
            assert_eq!((s.n, s.d), (set.n, set.d_kept), "{}", set.name);
            assert_eq!(
                (s.x_train.nrows(), s.x_valid.nrows(), s.x_test.nrows()),
                split_sizes(set.n)
            );
        }
    }
}
