//! Indefinite matrices and zero probes are reported, not turned into a residual trace or an
//! estimate of 0 (issue 11).

use faer::Mat;
use gp_linalg::DenseOperator;
use gp_solvers::{
    hutchinson_from_products, hutchinson_trace, slq_log_det, PivotedCholesky,
    PivotedCholeskyOptions, ProbeDistribution, ProbeOptions, Probes, SolverError,
};
use rand::SeedableRng;
use rand_chacha::ChaCha8Rng;

fn full_rank(k: usize) -> PivotedCholeskyOptions {
    PivotedCholeskyOptions {
        max_rank: k,
        ..Default::default()
    }
}

#[test]
fn pivoted_cholesky_of_an_indefinite_matrix_is_an_error_with_the_negative_pivot() {
    // Eigenvalues 3 and −1; the diagonal is positive, so only the residual reveals it.
    let a = Mat::from_fn(2, 2, |i, j| if i == j { 1.0 } else { 2.0 });
    match PivotedCholesky::new(&a, &full_rank(2)) {
        Err(SolverError::NotPositiveSemidefinite {
            step, index, value, ..
        }) => {
            // Either diagonal entry may be the first pivot; the other goes negative.
            assert_eq!(step, 1);
            assert!(index < 2);
            assert!((value - (-3.0)).abs() < 1e-12, "{value}");
        }
        other => panic!("expected NotPositiveSemidefinite, got {other:?}"),
    }
    // A 3×3 indefinite matrix with a dominant diagonal entry elsewhere.
    let b = faer::mat![[4.0, 0.0, 3.0], [0.0, 1.0, 0.0], [3.0, 0.0, 2.0]];
    let err = PivotedCholesky::new(&b, &full_rank(3)).unwrap_err();
    assert!(
        err.to_string().contains("not positive semi-definite"),
        "{err}"
    );
}

#[test]
fn pivoted_cholesky_of_psd_matrices_still_works() {
    // Rank-deficient PSD (rounding leaves tiny negative residuals that must be tolerated).
    let u = Mat::from_fn(6, 2, |i, j| {
        ((i + 1) as f64).powi(j as i32) + 0.1 * i as f64
    });
    let k = &u * u.transpose();
    let pc = PivotedCholesky::new(&k, &full_rank(6)).unwrap();
    assert_eq!(pc.rank(), 2);
    assert!(pc.residual_traces().iter().all(|t| *t >= 0.0));
}

#[test]
fn zero_probes_are_refused() {
    let opts = ProbeOptions {
        count: 0,
        ..ProbeOptions::default()
    };
    match Probes::generate(4, None, &opts) {
        Err(SolverError::InvalidOptions { name: "count", .. }) => {}
        other => panic!("expected InvalidOptions(count), got {other:?}"),
    }
    let mut rng = ChaCha8Rng::seed_from_u64(1);
    assert!(matches!(
        Probes::with_rng(4, None, ProbeDistribution::Gaussian, 0, &mut rng),
        Err(SolverError::InvalidOptions { name: "count", .. })
    ));
    // An all-zero probe column, or no columns at all.
    let mut z = Mat::from_fn(4, 3, |i, j| if (i + j) % 2 == 0 { 1.0 } else { -1.0 });
    for i in 0..4 {
        z[(i, 1)] = 0.0;
    }
    match Probes::from_matrix(z, None) {
        Err(SolverError::InvalidOptions {
            name: "probes",
            reason,
        }) => {
            assert!(reason.contains("column 1"), "{reason}")
        }
        other => panic!("expected InvalidOptions(probes), got {other:?}"),
    }
    assert!(matches!(
        Probes::from_matrix(Mat::zeros(4, 0), None),
        Err(SolverError::InvalidOptions { name: "probes", .. })
    ));
    // The estimators refuse an empty set of probes instead of returning 0.
    assert!(matches!(
        hutchinson_from_products(
            Mat::<f64>::zeros(4, 0).as_ref(),
            Mat::<f64>::zeros(4, 0).as_ref()
        ),
        Err(SolverError::InvalidOptions { name: "probes", .. })
    ));
    assert!(matches!(
        slq_log_det(&[], &[], 0.0),
        Err(SolverError::InvalidOptions { name: "probes", .. })
    ));
}

#[test]
fn valid_probes_still_estimate_the_trace() {
    let a = Mat::from_fn(3, 3, |i, j| if i == j { (i + 1) as f64 } else { 0.0 });
    // Scaled unit vectors: E[z zᵀ] = I over the three of them.
    let probes = Probes::from_matrix(Mat::<f64>::identity(3, 3) * 3f64.sqrt(), None).unwrap();
    let est = hutchinson_trace(&DenseOperator::new(a), &probes).unwrap();
    assert!((est.value - 6.0).abs() < 1e-12 * 3.0);
}
