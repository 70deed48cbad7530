//! Seeded splits, k-fold partitions, and standardization with training statistics only.

use faer::{Col, Mat};
use gp_models::data::{k_fold, permutation, random_splits, train_test_split, Standardizer};

fn sorted(mut v: Vec<usize>) -> Vec<usize> {
    v.sort_unstable();
    v
}

#[test]
fn split_is_seeded_disjoint_and_covers_everything() {
    let a = train_test_split(101, 0.1, 7).expect("split");
    let b = train_test_split(101, 0.1, 7).expect("split");
    let c = train_test_split(101, 0.1, 8).expect("split");
    assert_eq!(a, b);
    assert_ne!(a, c);
    assert_eq!(a.test.len(), 10);
    assert_eq!(a.train.len(), 91);
    let all = sorted(a.train.iter().chain(&a.test).copied().collect());
    assert_eq!(all, (0..101).collect::<Vec<_>>());
}

#[test]
fn split_rejects_bad_arguments() {
    assert!(train_test_split(1, 0.5, 0).is_err());
    assert!(train_test_split(10, 0.0, 0).is_err());
    assert!(train_test_split(10, 1.0, 0).is_err());
    assert!(train_test_split(10, f64::NAN, 0).is_err());
    // Tiny fractions still leave one test point, large ones one training point.
    assert_eq!(train_test_split(10, 0.01, 0).expect("split").test.len(), 1);
    assert_eq!(train_test_split(10, 0.99, 0).expect("split").train.len(), 1);
}

#[test]
fn permutation_is_a_seeded_permutation() {
    let p = permutation(50, 3);
    assert_eq!(p, permutation(50, 3));
    assert_ne!(p, permutation(50, 4));
    assert_eq!(sorted(p), (0..50).collect::<Vec<_>>());
}

#[test]
fn random_splits_differ_per_split() {
    let s = random_splits(40, 0.25, 3, 11).expect("splits");
    assert_eq!(s.len(), 3);
    assert_ne!(s[0], s[1]);
    assert_eq!(s[1], train_test_split(40, 0.25, 12).expect("split"));
}

#[test]
fn k_fold_partitions_the_rows() {
    let n = 23;
    let folds = k_fold(n, 5, 1).expect("folds");
    assert_eq!(folds, k_fold(n, 5, 1).expect("folds"));
    assert_eq!(folds.len(), 5);
    let tests: Vec<usize> = folds.iter().flat_map(|f| f.test.clone()).collect();
    assert_eq!(sorted(tests), (0..n).collect::<Vec<_>>());
    for f in &folds {
        assert!(f.test.len() == 4 || f.test.len() == 5);
        assert_eq!(f.train.len() + f.test.len(), n);
        assert!(f.train.iter().all(|i| !f.test.contains(i)));
    }
    assert!(k_fold(3, 1, 0).is_err());
    assert!(k_fold(3, 4, 0).is_err());
}

#[test]
fn standardization_uses_training_statistics_only() {
    // Training rows: x = 1, 2, 3 (mean 2, sd √(2/3)), y = 10, 20, 30.
    let x_train = Mat::from_fn(3, 2, |i, j| if j == 0 { (i + 1) as f64 } else { 5.0 });
    let y_train = Col::from_fn(3, |i| 10.0 * (i + 1) as f64);
    let st = Standardizer::fit(x_train.as_ref(), y_train.as_ref()).expect("fit");
    let sd = (2.0f64 / 3.0).sqrt();
    assert!((st.x_mean[0] - 2.0).abs() < 1e-15);
    assert!((st.x_std[0] - sd).abs() < 1e-15);
    // A constant column is centred, not divided by zero.
    assert_eq!((st.x_mean[1], st.x_std[1]), (5.0, 1.0));
    assert!((st.y_mean - 20.0).abs() < 1e-12);
    assert!((st.y_std - 10.0 * sd).abs() < 1e-12);

    // Test rows far away are mapped with the training statistics, not their own.
    let x_test = Mat::from_fn(2, 2, |i, _| 100.0 + i as f64);
    let z = st.transform_x(x_test.as_ref()).expect("transform");
    assert!((z[(0, 0)] - (100.0 - 2.0) / sd).abs() < 1e-12);
    assert!((z[(1, 1)] - 96.0).abs() < 1e-12);
    let y_test = Col::from_fn(2, |i| 1000.0 * (i + 1) as f64);
    let zy = st.transform_y(y_test.as_ref());
    let back = st.inverse_y(zy.as_ref());
    assert!((back[1] - 2000.0).abs() < 1e-9);
    assert!((zy[0] - (1000.0 - 20.0) / (10.0 * sd)).abs() < 1e-9);

    assert!(st.transform_x(Mat::<f64>::zeros(1, 3).as_ref()).is_err());
    assert!(Standardizer::fit(
        Mat::<f64>::zeros(0, 2).as_ref(),
        Col::<f64>::zeros(0).as_ref()
    )
    .is_err());
}

#[test]
fn standardizer_maps_predictions_back_to_original_units() {
    // y = 10, 20, 30: mean 20, sd 10·√(2/3).
    let x = Mat::from_fn(3, 1, |i, _| i as f64);
    let y = Col::from_fn(3, |i| 10.0 * (i + 1) as f64);
    let st = Standardizer::fit(x.as_ref(), y.as_ref()).expect("fit");
    let sd = 10.0 * (2.0f64 / 3.0).sqrt();
    let mean = st.inverse_y(Col::from_fn(2, |i| i as f64).as_ref());
    assert!((mean[0] - 20.0).abs() < 1e-12 && (mean[1] - (20.0 + sd)).abs() < 1e-12);
    let var = st.inverse_variance(Col::from_fn(1, |_| 0.25).as_ref());
    assert!((var[0] - 0.25 * sd * sd).abs() < 1e-12);
    let s = st.inverse_std(Col::from_fn(1, |_| 0.5).as_ref());
    assert!((s[0] - 0.5 * sd).abs() < 1e-12);
    assert!((var[0].sqrt() - s[0]).abs() < 1e-12);
    // Mismatched lengths and empty data are typed errors.
    assert!(matches!(
        Standardizer::fit(x.as_ref(), Col::<f64>::zeros(2).as_ref()),
        Err(gp_models::ModelError::LengthMismatch { .. })
    ));
    assert!(matches!(
        Standardizer::fit(
            Mat::<f64>::zeros(0, 1).as_ref(),
            Col::<f64>::zeros(0).as_ref()
        ),
        Err(gp_models::ModelError::EmptyData { .. })
    ));
}

#[test]
fn points_and_targets_from_plain_containers() {
    use gp_models::data::{points_from_row_major, points_from_rows, targets};
    use gp_models::ModelError;
    let rows = vec![vec![1.0, 2.0], vec![3.0, 4.0], vec![5.0, 6.0]];
    let a = points_from_rows(&rows).unwrap();
    let b = points_from_row_major(&[1.0, 2.0, 3.0, 4.0, 5.0, 6.0], 2).unwrap();
    assert_eq!(a, b);
    assert_eq!((a.nrows(), a.ncols(), a[(2, 1)]), (3, 2, 6.0));
    let arrays = [[1.0, 2.0], [3.0, 4.0]];
    assert_eq!(points_from_rows(&arrays).unwrap()[(1, 0)], 3.0);
    assert_eq!(targets(&[1.5, 2.5])[1], 2.5);
    let ragged = vec![vec![1.0, 2.0], vec![3.0]];
    assert!(matches!(
        points_from_rows(&ragged),
        Err(ModelError::LengthMismatch {
            expected: 2,
            found: 1,
            ..
        })
    ));
    let none: Vec<Vec<f64>> = Vec::new();
    assert!(matches!(
        points_from_rows(&none),
        Err(ModelError::EmptyData { .. })
    ));
    assert!(matches!(
        points_from_row_major(&[1.0, 2.0, 3.0], 2),
        Err(ModelError::LengthMismatch { .. })
    ));
    assert!(matches!(
        points_from_row_major(&[1.0], 0),
        Err(ModelError::EmptyData { .. })
    ));
}
