//! The SOUND data (spec `gsgp.md` §4.2): 59 309 training and 691 test points on the integer
//! time index 1..60 000, from the data directory, or a labelled synthetic stand-in of the
//! same layout when the files are missing.

use faer::{Col, Mat};
use rand::{Rng, SeedableRng};
use rand_chacha::ChaCha8Rng;
use rand_distr::StandardNormal;

use crate::data::catalog::load_known;
use crate::data::DataOrigin;
use crate::error::BenchError;

/// Number of held-out SOUND points.
pub const SOUND_TEST: usize = 691;
/// Number of SOUND training points.
pub const SOUND_TRAIN: usize = 59_309;
/// Length of the signal (time indices 1..=60 000).
pub const SOUND_LEN: usize = 60_000;

/// The SOUND train/test split.
#[derive(Debug, Clone)]
pub struct SoundData {
    /// Training inputs (`n × 1`, time indices).
    pub x_train: Mat<f64>,
    /// Training targets.
    pub y_train: Col<f64>,
    /// Test inputs (`691 × 1`).
    pub x_test: Mat<f64>,
    /// Test targets.
    pub y_test: Col<f64>,
    /// Where the values came from.
    pub origin: DataOrigin,
}

impl SoundData {
    /// SMAE of `pred` on the test set: MAE normalized by the zero predictor's MAE,
    /// `mean|y − ŷ| / mean|y|` (spec §4.2, §6.5).
    pub fn smae(&self, pred: &Col<f64>) -> f64 {
        let n = self.y_test.nrows().max(1) as f64;
        let mae = (0..self.y_test.nrows())
            .map(|i| (self.y_test[i] - pred[i]).abs())
            .sum::<f64>()
            / n;
        let base = self.y_test.iter().map(|v| v.abs()).sum::<f64>() / n;
        mae / base
    }
}

/// The real SOUND files from `data_dir`, or the [`stand_in`] when they are missing (other
/// errors, like a malformed file, are returned).
///
/// Errors: the CSV loader's; [`BenchError::BadData`] when the files do not split 59 309 /
/// 691 or are not 1-D.
pub fn load_sound(data_dir: Option<&std::path::Path>, seed: u64) -> Result<SoundData, BenchError> {
    match load_known("sound", data_dir) {
        Ok(loaded) => {
            let data = loaded.data;
            let n_train = loaded.train_rows.unwrap_or(SOUND_TRAIN);
            if data.dim() != 1 || data.len() <= n_train {
                return Err(BenchError::BadData {
                    name: "sound".into(),
                    reason: format!(
                        "expected 1-D inputs and more than {n_train} rows, got {} × {}",
                        data.len(),
                        data.dim()
                    ),
                });
            }
            let n_test = data.len() - n_train;
            Ok(SoundData {
                x_train: data.x.subrows(0, n_train).to_owned(),
                y_train: data.y.subrows(0, n_train).to_owned(),
                x_test: data.x.subrows(n_train, n_test).to_owned(),
                y_test: data.y.subrows(n_train, n_test).to_owned(),
                origin: data.origin,
            })
        }
        Err(BenchError::MissingFile { .. }) => Ok(stand_in(seed)),
        Err(e) => Err(e),
    }
}

/// A synthetic stand-in with SOUND's layout: time indices 1..60 000, 56 held-out gaps
/// totalling 691 points, and a signal of amplitude-modulated sinusoids (periods 20–200
/// samples, amplitude ≈ 0.05) plus noise of standard deviation 0.0085. Its SMAE says nothing
/// about the paper's numbers.
pub fn stand_in(seed: u64) -> SoundData {
    let mut rng = ChaCha8Rng::seed_from_u64(seed ^ 0x50_u64);
    // 56 gaps: 19 of 13 points and 37 of 12 points (19·13 + 37·12 = 691), evenly spread.
    let gaps = 56;
    let mut is_test = vec![false; SOUND_LEN];
    for g in 0..gaps {
        let len = if g < 19 { 13 } else { 12 };
        let start = 500 + g * (SOUND_LEN - 1000) / gaps;
        for flag in is_test.iter_mut().skip(start).take(len) {
            *flag = true;
        }
    }
    let freqs: Vec<(f64, f64, f64)> = (0..6)
        .map(|_| {
            let period = 20.0 + 180.0 * rng.random::<f64>();
            let phase = std::f64::consts::TAU * rng.random::<f64>();
            let amp = 0.01 + 0.02 * rng.random::<f64>();
            (std::f64::consts::TAU / period, phase, amp)
        })
        .collect();
    let signal = |t: f64| {
        let env = 0.5 + 0.5 * (std::f64::consts::TAU * t / 7000.0).sin();
        env * freqs
            .iter()
            .map(|(w, p, a)| a * (w * t + p).sin())
            .sum::<f64>()
    };
    let (mut xtr, mut ytr, mut xte, mut yte) = (Vec::new(), Vec::new(), Vec::new(), Vec::new());
    for (i, &test) in is_test.iter().enumerate() {
        let t = (i + 1) as f64;
        let y = signal(t) + 0.0085 * rng.sample::<f64, _>(StandardNormal);
        if test {
            xte.push(t);
            yte.push(y);
        } else {
            xtr.push(t);
            ytr.push(y);
        }
    }
    SoundData {
        x_train: Mat::from_fn(xtr.len(), 1, |i, _| xtr[i]),
        y_train: Col::from_fn(ytr.len(), |i| ytr[i]),
        x_test: Mat::from_fn(xte.len(), 1, |i, _| xte[i]),
        y_test: Col::from_fn(yte.len(), |i| yte[i]),
        origin: DataOrigin::Synthetic(format!(
            "SOUND-shaped stand-in: {SOUND_TRAIN} + {SOUND_TEST} time indices in 56 gaps, \
             modulated sinusoids + N(0, 0.0085²) noise (seed {seed})"
        )),
    }
}

/// SKI/GSGP options for SOUND with `m` grid points: explicit bounds
/// `[1 − 2h, 60 000 + 2h]`, `h = 59 999 / (m − 5)`, so that every point has its full cubic
/// stencil (the reference uses `[1, 60 000]` and drops the missing neighbours) and, for
/// `m = 60 004`, every point sits on a grid node (`h = 1`), as the reference's `m = 60K` grid.
pub fn sound_bounds(m: usize) -> Vec<(f64, f64)> {
    let h = (SOUND_LEN as f64 - 1.0) / (m.max(6) as f64 - 5.0);
    vec![(1.0 - 2.0 * h, SOUND_LEN as f64 + 2.0 * h)]
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn stand_in_has_sound_layout() {
        let s = stand_in(1);
        assert_eq!(s.x_train.nrows(), SOUND_TRAIN);
        assert_eq!(s.x_test.nrows(), SOUND_TEST);
        assert!(!s.origin.is_real());
    }

    #[test]
    fn bounds_put_points_on_nodes_at_60004() {
        let b = sound_bounds(60_004);
        assert!((b[0].0 + 1.0).abs() < 1e-12 && (b[0].1 - 60_002.0).abs() < 1e-9);
    }

    #[test]
    fn smae_of_zero_predictor_is_one() {
        let s = stand_in(2);
        let zero = Col::zeros(s.y_test.nrows());
        assert!((s.smae(&zero) - 1.0).abs() < 1e-12);
    }
}
