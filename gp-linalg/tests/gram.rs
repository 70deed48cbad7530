//! The lower-triangle Gram product against a plain `XᵀX`.

use faer::{Mat, Par};
use gp_linalg::gram::{add_gram_lower, mirror_lower};
use gp_linalg::LinalgError;

#[test]
fn lower_gram_plus_mirror_equals_the_full_product_and_accumulates() {
    let x = Mat::from_fn(37, 11, |i, j| ((i * 5 + j * 3) as f64 * 0.29).sin());
    let full = x.transpose() * &x;
    let mut a = Mat::<f64>::zeros(11, 11);
    // Two row blocks accumulate to the whole product; the upper triangle is never written.
    a[(0, 10)] = 123.0;
    add_gram_lower(a.as_mut(), x.as_ref().subrows(0, 20), Par::Seq).unwrap();
    add_gram_lower(a.as_mut(), x.as_ref().subrows(20, 17), Par::rayon(2)).unwrap();
    assert_eq!(a[(0, 10)], 123.0);
    mirror_lower(a.as_mut()).unwrap();
    for j in 0..11 {
        for i in 0..11 {
            assert!(
                (a[(i, j)] - full[(i, j)]).abs() <= 1e-13 * full.norm_max(),
                "({i}, {j}): {} vs {}",
                a[(i, j)],
                full[(i, j)]
            );
            assert_eq!(a[(i, j)], a[(j, i)]);
        }
    }
}

#[test]
fn wrong_shapes_are_typed_errors() {
    let x = Mat::<f64>::zeros(4, 3);
    let mut a = Mat::<f64>::zeros(3, 2);
    assert!(matches!(
        add_gram_lower(a.as_mut(), x.as_ref(), Par::Seq),
        Err(LinalgError::ShapeMismatch { .. })
    ));
    assert!(matches!(
        mirror_lower(a.as_mut()),
        Err(LinalgError::NotSquare { .. })
    ));
}
