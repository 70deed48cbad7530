//! Symmetric eigendecomposition: reconstruction, ordering, orthogonality and errors.

use crate::common;

use common::{rand_mat, rand_spd, rng};
use faer::Mat;
use gp_linalg::{Cholesky, LinalgError, SymmetricEigen};

#[test]
fn reconstructs_random_symmetric_matrices() {
    let mut r = rng(41);
    for n in [1, 2, 17, 64, 150] {
        let b = rand_mat(&mut r, n, n);
        let a = &b + b.transpose();
        let eig = SymmetricEigen::new(a.as_ref()).unwrap();
        assert_eq!(eig.dim(), n);
        let norm = a.norm_l2();
        // A backward-stable EVD reconstructs A to O(n ε ‖A‖); 1e-12 ‖A‖ covers n ≤ 150.
        let err = (&eig.reconstruct() - &a).norm_l2();
        assert!(
            err <= 1e-12 * norm,
            "n={n}: ‖VΛVᵀ − A‖ = {err:e}, ‖A‖ = {norm:e}"
        );
        for i in 1..n {
            assert!(eig.values[i - 1] <= eig.values[i], "ascending order");
        }
        let vtv = eig.vectors.transpose() * &eig.vectors;
        let orth = (&vtv - Mat::<f64>::identity(n, n)).norm_max();
        assert!(orth <= 1e-12, "n={n}: VᵀV − I = {orth:e}");
    }
}

#[test]
fn log_det_matches_cholesky_and_rejects_indefinite() {
    let mut r = rng(42);
    let a = rand_spd(&mut r, 60);
    let eig = SymmetricEigen::new(a.as_ref()).unwrap();
    let chol = Cholesky::new(a.as_ref()).unwrap();
    assert!((eig.log_det().unwrap() - chol.log_det()).abs() <= 1e-10 * chol.log_det().abs());

    let indefinite = faer::mat![[1.0, 2.0], [2.0, 1.0]]; // eigenvalues −1 and 3
    let eig = SymmetricEigen::new(indefinite.as_ref()).unwrap();
    assert!(matches!(
        eig.log_det(),
        Err(LinalgError::NotPositive { index: 0, .. })
    ));
}

#[test]
fn errors_are_typed() {
    assert!(matches!(
        SymmetricEigen::new(Mat::<f64>::zeros(2, 3).as_ref()),
        Err(LinalgError::NotSquare { .. })
    ));
    let mut a = Mat::<f64>::identity(3, 3);
    a[(2, 1)] = f64::INFINITY;
    assert!(matches!(
        SymmetricEigen::new(a.as_ref()),
        Err(LinalgError::NonFinite { row: 2, col: 1, .. })
    ));
    let empty = SymmetricEigen::new(Mat::<f64>::zeros(0, 0).as_ref()).unwrap();
    assert_eq!(empty.log_det().unwrap(), 0.0);
}
