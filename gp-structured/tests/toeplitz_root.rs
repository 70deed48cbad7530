//! The circulant-embedding square root of a symmetric Toeplitz matrix: `F Fᵀ = T` for the
//! squared-exponential and Matérn kernels, products against the dense `F`, the search that
//! lengthens indefinite embeddings, and argument errors.

use faer::Mat;
use gp_structured::toeplitz_root::{find_embedding, CirculantRoot};
use gp_structured::{LinearOperator, StructuredError, TransposeOperator};

/// A stationary kernel as a function of the distance.
type Profile = Box<dyn Fn(f64) -> f64>;

/// The unit-scale stationary kernels at distance `r` (length scale `l`): the squared
/// exponential and the Matérn kernels of smoothness 1/2, 3/2 and 5/2, written out here so
/// the test does not depend on a kernel crate.
fn kernels(l: f64) -> Vec<(&'static str, Profile)> {
    let (s3, s5) = (3f64.sqrt(), 5f64.sqrt());
    vec![
        ("SE", Box::new(move |r: f64| (-0.5 * (r / l).powi(2)).exp())),
        ("Matérn 1/2", Box::new(move |r: f64| (-r / l).exp())),
        (
            "Matérn 3/2",
            Box::new(move |r: f64| (1.0 + s3 * r / l) * (-s3 * r / l).exp()),
        ),
        (
            "Matérn 5/2",
            Box::new(move |r: f64| {
                let u = r / l;
                (1.0 + s5 * u + 5.0 * u * u / 3.0) * (-s5 * u).exp()
            }),
        ),
    ]
}

/// `c_j = k(j h)` for `j < m` (unit spacing).
fn column(k: &dyn Fn(f64) -> f64, m: usize) -> Vec<f64> {
    (0..m).map(|j| k(j as f64)).collect()
}

/// `F Fᵀ = T` for the SE and Matérn kernels at length scales from well below to well
/// above the grid spacing, on grids of 5, 17 and 64 points (unit spacing), with and without
/// a folded output scale.
///
/// Tolerance: the clamped round-off eigenvalues move entries by at most `2 M ε λ_max`
/// (module documentation) and the two FFT round trips of `C^{1/2}` add
/// `O(ε log M · λ_max)`; with `λ_max ≤ Σ_j |k(jh)| ≤ 2.5 ℓ + 1` here that is below `1e-12`
/// relative to `c_0` for every case (measured worst: a few `1e-15`).
#[test]
fn root_reproduces_the_toeplitz_matrix() {
    for m in [5usize, 17, 64] {
        for lengthscale in [0.3, 1.0, 2.5, 6.0] {
            for (name, kernel) in kernels(lengthscale) {
                let c = column(&kernel, m);
                let lag = |j: usize| kernel(j as f64);
                let search = find_embedding(&c, Some(&lag), usize::MAX).unwrap();
                let spectrum = search.spectrum.expect("definite embedding");
                assert!(search.length >= 2 * m - 1);
                for scale in [1.0, 0.37] {
                    let root = CirculantRoot::new(m, &spectrum, scale).unwrap();
                    let f = root.to_dense();
                    assert_eq!((f.nrows(), f.ncols()), (m, search.length));
                    assert_eq!((root.order(), root.embedding_len()), (m, search.length));
                    let fft = &f * f.transpose();
                    let t = Mat::from_fn(m, m, |i, j| scale * c[i.abs_diff(j)]);
                    let err = (&fft - &t).norm_max() / (scale * c[0]);
                    assert!(
                        err < 1e-12,
                        "{name}, ℓ = {lengthscale}, m = {m}, scale {scale}: {err:e}"
                    );
                }
            }
        }
    }
}

/// `F v`, `Fᵀ u` and the [`Transposed`](gp_structured::Transposed) wrapper are the products
/// of the dense `F`.
#[test]
fn products_match_the_dense_factor() {
    let (_, kernel) = kernels(2.0).swap_remove(0);
    let m = 17;
    let c = column(&kernel, m);
    let lag = |j: usize| kernel(j as f64);
    let search = find_embedding(&c, Some(&lag), usize::MAX).unwrap();
    let root = CirculantRoot::new(m, search.spectrum.as_deref().unwrap(), 2.0).unwrap();
    let f = root.to_dense();
    let big = root.ncols();
    let v = Mat::from_fn(big, 3, |i, j| ((i * 7 + j * 3) % 11) as f64 - 5.0);
    let u = Mat::from_fn(m, 3, |i, j| ((i * 5 + j) % 7) as f64 - 3.0);
    let fv = root.apply_block(v.as_ref()).unwrap();
    let ftu = root.apply_transpose_block(u.as_ref()).unwrap();
    let want_fv = &f * &v;
    let want_ftu = f.transpose() * &u;
    // Round-off of two FFTs of length M against a dense product: ~1e-15 relative.
    assert!((&fv - &want_fv).norm_max() < 1e-12 * want_fv.norm_max());
    assert!((&ftu - &want_ftu).norm_max() < 1e-12 * want_ftu.norm_max());
    let wrapped = root.transposed().apply_block(u.as_ref()).unwrap();
    assert_eq!(wrapped, ftu);
    let one = root.apply_transpose(u.col(1)).unwrap();
    assert_eq!(one, ftu.col(1).to_owned());
    assert!(root.apply_transpose(v.col(0)).is_err());
}

/// A kernel that has not decayed over the grid makes the smallest embedding indefinite;
/// with the kernel's lags the search lengthens it until it is definite (and `F Fᵀ = T`
/// still holds), without them it reports the indefinite embedding.
#[test]
fn long_length_scales_lengthen_the_embedding() {
    let (_, kernel) = kernels(30.0).swap_remove(0);
    let m = 17;
    let c = column(&kernel, m);
    let zero_padded = find_embedding(&c, None, usize::MAX).unwrap();
    assert!(zero_padded.spectrum.is_none());
    assert_eq!(zero_padded.length, 36);
    assert!(zero_padded.min_eigenvalue < -1e-3 * zero_padded.max_eigenvalue);
    let lag = |j: usize| kernel(j as f64);
    let limited = find_embedding(&c, Some(&lag), 100).unwrap();
    assert!(limited.spectrum.is_none() && limited.length <= 100);
    let search = find_embedding(&c, Some(&lag), usize::MAX).unwrap();
    // Definite once M/2 ≳ 8.5 ℓ = 255 spacings.
    assert!(search.length > 400, "length {}", search.length);
    let spectrum = search.spectrum.expect("definite after lengthening");
    let f = CirculantRoot::new(m, &spectrum, 1.0).unwrap().to_dense();
    let t = Mat::from_fn(m, m, |i, j| c[i.abs_diff(j)]);
    // λ_max ≈ √(2π) ℓ ≈ 75 here, M ≈ 600: the clamp bound 2 M ε λ_max ≈ 2e-11.
    assert!((&f * f.transpose() - &t).norm_max() < 1e-10);
}

#[test]
fn invalid_arguments_are_errors() {
    let spectrum = [4.0, 1.0, 0.5, 1.0];
    let invalid = |r: Result<CirculantRoot, StructuredError>| {
        matches!(r, Err(StructuredError::InvalidArgument { .. }))
    };
    assert!(invalid(CirculantRoot::new(0, &spectrum, 1.0)));
    assert!(invalid(CirculantRoot::new(5, &spectrum, 1.0)));
    assert!(invalid(CirculantRoot::new(2, &spectrum, -1.0)));
    assert!(invalid(CirculantRoot::new(2, &spectrum, f64::NAN)));
    assert!(invalid(CirculantRoot::new(2, &[4.0, 1.0, 0.5, 2.0], 1.0)));
    assert!(invalid(CirculantRoot::new(
        2,
        &[4.0, f64::INFINITY, 0.5, f64::INFINITY],
        1.0
    )));
    assert!(CirculantRoot::new(2, &spectrum, 1.0).is_ok());
    assert!(find_embedding(&[1.0, f64::NAN], None, usize::MAX).is_err());
    // Order 4 embeds in length 8, whose lag 4 comes from the lag function.
    let bad_lag = |_: usize| f64::NAN;
    let c = [1.0, 0.5, 0.2, 0.1];
    assert!(find_embedding(&c, Some(&bad_lag), usize::MAX).is_err());
    assert!(find_embedding(&c, None, usize::MAX).is_ok());
}
