//! The GP-GRIEF Table 1 fold runner: the `p` rule of GRIEF-II, and one fold of every method
//! at tiny settings (the real `challenger` fold when `GP_DATA_DIR` is set, a synthetic
//! problem otherwise) with finite, sensible test errors.

use faer::{Col, Mat};
use gp_bench::data::{DataOrigin, Dataset};
use gp_bench::papers::grief::grief_fold::{run_grief_fold, type_two_p, GriefFoldOptions};
use gp_models::sampling::MalaOptions;

#[test]
fn type_two_p_follows_the_paper_column() {
    // Table 1's p (II) column: 10 for challenger (n = 23), 100 for n in 100..999, 1000
    // from concrete (n = 1030) on.
    for (n, p) in [
        (23, 10),
        (100, 100),
        (767, 100),
        (1030, 1000),
        (2_049_280, 1000),
        (9, 1),
    ] {
        assert_eq!(type_two_p(n), p, "n = {n}");
    }
}

fn synthetic(n: usize, seed: u64) -> Dataset {
    let x = Mat::from_fn(n, 3, |i, j| {
        ((i as u64 * (2 * j as u64 + 5) + seed) as f64 * 0.37).sin()
    });
    let y = Col::from_fn(n, |i| {
        3.0 + 2.0 * (x[(i, 0)] * 2.0).sin() + x[(i, 1)] * x[(i, 2)]
    });
    Dataset {
        name: "synthetic".into(),
        x,
        y,
        feature_names: vec!["x1".into(), "x2".into(), "x3".into()],
        target_name: "y".into(),
        origin: DataOrigin::Synthetic("a smooth 3-D function".into()),
    }
}

#[test]
fn one_fold_of_every_method_predicts_better_than_the_mean() {
    let (train, test, name) = match std::env::var_os("GP_DATA_DIR").filter(|v| !v.is_empty()) {
        Some(dir) => {
            let data = gp_bench::data::load_uci("challenger", std::path::Path::new(&dir))
                .expect("challenger in the data directory");
            let (train, test) = data.fold(0).expect("fold 0");
            (train, test, "challenger fold 0")
        }
        None => {
            eprintln!("GP_DATA_DIR not set: the fold runner runs on a synthetic stand-in");
            (synthetic(120, 1), synthetic(30, 7), "synthetic")
        }
    };
    let options = GriefFoldOptions {
        n_full: train.len() + test.len(),
        init_points: 1000,
        init_restarts: 1,
        max_iterations: 30,
        exact_max_train: Some(5000),
        p_type_one: 50,
        mala: MalaOptions {
            iterations: 80,
            burn_in: 20,
            thin: 10,
            ..MalaOptions::default()
        },
        seed: 3,
        progress: false,
    };
    let r = run_grief_fold(&train, &test, &options).expect("fold runs");
    let mean = train.y.iter().sum::<f64>() / train.len() as f64;
    let mean_rmse =
        (test.y.iter().map(|v| (v - mean).powi(2)).sum::<f64>() / test.len() as f64).sqrt();
    let exact = r
        .exact
        .as_ref()
        .expect("small training part gets the exact GP");
    for (method, rmse) in [
        ("exact", exact.rmse),
        ("GRIEF-II", r.type_two.rmse),
        ("GRIEF-I", r.type_one.rmse),
    ] {
        assert!(rmse.is_finite() && rmse > 0.0, "{name} {method}: {rmse}");
        if name == "synthetic" {
            assert!(
                rmse < 0.5 * mean_rmse,
                "{name} {method}: {rmse} vs mean {mean_rmse}"
            );
        }
    }
    assert!(r.type_two.p >= 1 && r.type_one.p >= 1 && r.log10_m > 0.0);
}
