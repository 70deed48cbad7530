//! Extreme but valid inputs (length scales near the bottom of the f64 range, coordinates
//! near ±f64::MAX) give finite values and gradients, never NaN (issue 11), and ordinary
//! inputs give what the code gave before the fix (reference bits recorded from it).

use crate::common;

use faer::Mat;
use gp_kernels::{
    FactorKind, Kernel, KernelError, Matern, MaternNu, ProductKernel, SquaredExponential,
};

/// Values recorded with the code before issue 11, per kernel of `common::all_kernels`:
/// `eval`, `eval_with_grad` (value, 3 derivatives), then for 4 entries of a 5-point set:
/// `matrix`, `matrix_and_grads` value and its 3 derivatives.
#[rustfmt::skip]
const REFERENCE: &[(&str, &[u64])] = &[
    ("SE", &[0x3fe2b135aafdb52e, 0x3fe2b135aafdb52e, 0x3fe86a11da1c5a5e, 0x3fda82c781c2996f, 0x3fe2b135aafdb52e, 0x3fed7ce9a83f3b50, 0x3fed7ce9a83f3b50, 0x3feca6c5251807db, 0x3fbf1ca02df3ccf1, 0x3fed7ce9a83f3b50, 0x3fb82d14db4e1772, 0x3fb82d14db4e1772, 0x3fd77d837e90ff10, 0x3fc56ef019c6f57f, 0x3fb82d14db4e1772, 0x3fc68890c5e777fd, 0x3fc68890c5e777fd, 0x3fe5e4ed36fd95c3, 0x3fb7c63c719b8422, 0x3fc68890c5e777fd, 0x3f425ff0bbe99c01, 0x3f425ff0bbe99c01, 0x3f81da8086ef4294, 0x3f2aed081f6ae3e4, 0x3f425ff0bbe99c01]),
    ("Matern12", &[0x3fd8c2ec88c3ecf0, 0x3fd8c2ec88c3ecf0, 0x3fd6c836ed41fc59, 0x3fc8bd0ab6767496, 0x3fd8c2ec88c3ecf0, 0x3fe1e87c3fa2f49c, 0x3fe1e87c3fa2f49c, 0x3fe0905d9e13c9b1, 0x3fb1fc7f2f8d54f8, 0x3fe1e87c3fa2f49c, 0x3fc2f92db37e3a38, 0x3fc2f92db37e3a38, 0x3fceff17ccd48501, 0x3fbc4840db00a13a, 0x3fc2f92db37e3a38, 0x3fc90e08a5c1bf18, 0x3fc90e08a5c1bf18, 0x3fd72c95bfa7c659, 0x3fa92a0803e1708e, 0x3fc90e08a5c1bf18, 0x3f9e56c518798a9c, 0x3f9e56c518798a9c, 0x3fbd8f2cd9017ff4, 0x3f664a3dde7f8405, 0x3f9e56c518798a9c]),
    ("Matern32", &[0x3fde4b9d51f5b787, 0x3fde4b9d51f5b787, 0x3fe129060342764f, 0x3fd2a24383e4e3bf, 0x3fde4b9d51f5b787, 0x3fe766cfa5ea9e90, 0x3fe766cfa5ea9e90, 0x3fe831878d77955b, 0x3fba456243199bc8, 0x3fe766cfa5ea9e90, 0x3fc106b02c3e408e, 0x3fc106b02c3e408e, 0x3fd36269a74741bb, 0x3fc1afe0852110ff, 0x3fc106b02c3e408e, 0x3fc8f77f06e50887, 0x3fc8f77f06e50887, 0x3fdf602ca0f2bde5, 0x3fb108f57b8d031d, 0x3fc8f77f06e50887, 0x3f89e0fdd4a5b3b2, 0x3f89e0fdd4a5b3b2, 0x3fb31333caeb64fb, 0x3f5cc4a1f29b08a6, 0x3f89e0fdd4a5b3b2]),
    ("Matern52", &[0x3fe02174f06d8a47, 0x3fe02174f06d8a47, 0x3fe3753f34e1bc5c, 0x3fd520ffd8facb1c, 0x3fe02174f06d8a47, 0x3fe95c17e93dd07a, 0x3fe95c17e93dd07a, 0x3fea824a3f1fa026, 0x3fbcc90bd5eb073a, 0x3fe95c17e93dd07a, 0x3fbf94d3c97862d0, 0x3fbf94d3c97862d0, 0x3fd48481f62e65c4, 0x3fc2b891d8133f8c, 0x3fbf94d3c97862d0, 0x3fc85e3a9e515f4d, 0x3fc85e3a9e515f4d, 0x3fe13936d14b87f0, 0x3fb2b3d83ebf398d, 0x3fc85e3a9e515f4d, 0x3f7fef2d0c8c0b42, 0x3f7fef2d0c8c0b42, 0x3fac27aad851abff, 0x3f553b25093ce0b8, 0x3f7fef2d0c8c0b42]),
    ("Product(SE, M32)", &[0x3fde790c4137adb7, 0x3fde790c4137adb7, 0x3fe3e68fd6ffca45, 0x3fda5e52a39eaa4c, 0x3fde790c4137adb7, 0x3feb5aca3d3bac48, 0x3feb5aca3d3bac47, 0x3fea9423b1418e48, 0x3fca934ed7748c2d, 0x3feb5aca3d3bac47, 0x3fb353363a994d31, 0x3fb353363a994d2d, 0x3fd2c6df5fe946a9, 0x3fbf171f2c878424, 0x3fb353363a994d2d, 0x3fc2d375246a4767, 0x3fc2d375246a4765, 0x3fe24abe0b66d89a, 0x3fba63bf50a53900, 0x3fc2d375246a4765, 0x3f3fb07f74dd7466, 0x3f3fb07f74dd7457, 0x3f7eca5e2a71d13c, 0x3f3100b8bed6442b, 0x3f3fb07f74dd7457]),
    ("Product(M12, M52)", &[0x3fd431d1fca9e6b4, 0x3fd431d1fca9e6b3, 0x3fd7145db30b50cd, 0x3fd0eda0f90c43d7, 0x3fd431d1fca9e6b3, 0x3fe13c17eca17445, 0x3fe13c17eca17446, 0x3fe0fd1044adc6ba, 0x3fbb07217b202179, 0x3fe13c17eca17446, 0x3fb422c0634597eb, 0x3fb422c0634597e8, 0x3fc3d91cb9a0071d, 0x3fc111e281594dca, 0x3fb422c0634597e8, 0x3fc3b1357aff3285, 0x3fc3b1357aff3284, 0x3fd369310f2ec06d, 0x3fb9eff0602efb19, 0x3fc3b1357aff3284, 0x3f9854ae41c4c2a7, 0x3f9854ae41c4c2a4, 0x3fb7fbb314f17e09, 0x3f879747ef541ff6, 0x3f9854ae41c4c2a4]),
];

fn close(a: f64, b: f64) -> bool {
    a.to_bits() == b.to_bits() || (a - b).abs() <= 1e-15 * a.abs().max(b.abs())
}

#[test]
fn ordinary_inputs_match_the_values_before_the_fix() {
    let pts = Mat::from_fn(5, 2, |i, k| ((i * 37 + k * 11) % 17) as f64 * 0.23 - 1.7);
    for ((name, k), (ref_name, reference)) in common::all_kernels().into_iter().zip(REFERENCE) {
        assert_eq!(name, *ref_name);
        let (x, z) = ([0.3, -1.2], [1.1, 0.4]);
        let mut g = vec![0.0; 3];
        let v = k.eval(&x, &z);
        let v2 = k.eval_with_grad(&x, &z, &mut g);
        let m = k.matrix(pts.as_ref(), pts.as_ref()).unwrap();
        let (km, gm) = k.matrix_and_grads(pts.as_ref()).unwrap();
        let mut vals = vec![v, v2, g[0], g[1], g[2]];
        for (i, j) in [(0, 1), (1, 3), (2, 4), (4, 0)] {
            vals.push(m[(i, j)]);
            vals.push(km[(i, j)]);
            for gq in &gm {
                vals.push(gq[(i, j)]);
            }
        }
        assert_eq!(vals.len(), reference.len());
        for (q, (&got, &want)) in vals.iter().zip(reference.iter()).enumerate() {
            let want = f64::from_bits(want);
            assert!(close(got, want), "{name} value {q}: {got:e} vs {want:e}");
        }
    }
}

/// Every kernel type in 1 and 2 dimensions with length scale `l` and variance 1.3.
fn kernels_with_lengthscale(l: f64) -> Vec<(String, Box<dyn Kernel>)> {
    let mut out: Vec<(String, Box<dyn Kernel>)> = Vec::new();
    for d in [1usize, 2] {
        let ls = vec![l; d];
        out.push((
            format!("SE d={d}"),
            Box::new(SquaredExponential::new(ls.clone(), 1.3).unwrap()),
        ));
        for nu in [MaternNu::Half, MaternNu::ThreeHalves, MaternNu::FiveHalves] {
            out.push((
                format!("Matern {nu:?} d={d}"),
                Box::new(Matern::new(nu, ls.clone(), 1.3).unwrap()),
            ));
        }
        let kinds = [
            FactorKind::SquaredExponential,
            FactorKind::Matern(MaternNu::Half),
        ];
        out.push((
            format!("Product d={d}"),
            Box::new(ProductKernel::new(kinds[..d].to_vec(), ls, 1.3).unwrap()),
        ));
    }
    out
}

/// `(value, gradient)` through `eval_with_grad`, checking `eval` agrees.
fn value_and_grad(k: &dyn Kernel, x: &[f64], z: &[f64]) -> (f64, Vec<f64>) {
    let mut g = vec![0.0; k.n_params()];
    let v = k.eval_with_grad(x, z, &mut g);
    assert_eq!(v.to_bits(), k.eval(x, z).to_bits());
    (v, g)
}

#[test]
fn tiny_lengthscale_gives_the_analytic_limit() {
    for (name, k) in kernels_with_lengthscale(1e-308) {
        let d = k.input_dim();
        let x = vec![0.5; d];
        let mut z = x.clone();
        z[0] = 1.5;
        // x ≠ z: k = 0 and every derivative 0.
        let (v, g) = value_and_grad(k.as_ref(), &x, &z);
        assert_eq!(v, 0.0, "{name}");
        assert!(g.iter().all(|&gi| gi == 0.0), "{name}: {g:?}");
        // x = z: k = σ², ∂k/∂ log ℓ = 0, ∂k/∂ log σ² = σ².
        let (v, g) = value_and_grad(k.as_ref(), &x, &x);
        assert_eq!(v, 1.3, "{name}");
        assert!(g[..d].iter().all(|&gi| gi == 0.0), "{name}: {g:?}");
        assert_eq!(g[d], 1.3, "{name}");
        // The dense builders agree (and hold no NaN).
        let pts = Mat::from_fn(3, d, |i, _| i as f64);
        let (km, grads) = k.matrix_and_grads(pts.as_ref()).unwrap();
        for j in 0..3 {
            for i in 0..3 {
                let want = if i == j { 1.3 } else { 0.0 };
                assert_eq!(km[(i, j)], want, "{name}");
                assert_eq!(k.matrix(pts.as_ref(), pts.as_ref()).unwrap()[(i, j)], want);
                for (q, gq) in grads.iter().enumerate() {
                    let want = if q == d && i == j { 1.3 } else { 0.0 };
                    assert_eq!(gq[(i, j)], want, "{name} dK/dθ{q} ({i}, {j})");
                }
            }
        }
    }
}

#[test]
fn coordinates_near_the_f64_limit_give_finite_values_and_gradients() {
    for l in [1.0, 1e-300, 1e308] {
        for (name, k) in kernels_with_lengthscale(l) {
            let d = k.input_dim();
            let x = vec![1e308; d];
            let z = vec![-1e308; d];
            let (v, g) = value_and_grad(k.as_ref(), &x, &z);
            assert!(
                v.is_finite() && g.iter().all(|gi| gi.is_finite()),
                "{name} ℓ={l}: {v} {g:?}"
            );
            if l <= 1.0 {
                // |x − z|/ℓ ≥ 2e308: the kernel and its derivatives vanish.
                assert_eq!(v, 0.0, "{name} ℓ={l}");
                assert!(g.iter().all(|&gi| gi == 0.0), "{name} ℓ={l}: {g:?}");
            } else {
                // (x − z)/ℓ = 2 per dimension: not the 0 an overflowed difference would give.
                assert!(v > 1e-3, "{name} ℓ={l}: {v}");
            }
            let (v, g) = value_and_grad(k.as_ref(), &x, &x);
            assert_eq!(v, 1.3, "{name} ℓ={l}");
            assert!(g[..d].iter().all(|&gi| gi == 0.0), "{name} ℓ={l}: {g:?}");
        }
    }
}

#[test]
fn dense_builders_refuse_coordinates_whose_differences_overflow() {
    for (name, k) in common::all_kernels() {
        let x = Mat::from_fn(2, 2, |i, _| if i == 0 { 1e308 } else { -1e308 });
        let err = k.matrix(x.as_ref(), x.as_ref()).unwrap_err();
        assert!(
            matches!(err, KernelError::InvalidArgument { name: "points", .. }),
            "{name}: {err}"
        );
        assert!(k.matrix_and_grads(x.as_ref()).is_err(), "{name}");
        assert!(k.diag(x.as_ref()).is_err(), "{name}");
    }
}

#[test]
fn lengthscales_without_a_finite_reciprocal_are_refused() {
    assert!(SquaredExponential::new(vec![1e-309], 1.0).is_err());
    assert!(Matern::new(MaternNu::Half, vec![1e-309], 1.0).is_err());
    let mut k = SquaredExponential::new(vec![1.0], 1.0).unwrap();
    assert!(k.set_log_params(&[(1e-309f64).ln(), 0.0]).is_err());
    assert!(SquaredExponential::new(vec![1e-308], 1.0).is_ok());
}

#[test]
fn unchecked_evaluation_of_wrong_length_slices_is_nan_never_truncated() {
    for (name, k) in common::all_kernels() {
        let (good, short, long) = ([0.1, 0.2], [0.1], [0.1, 0.2, 0.3]);
        for (x, z) in [
            (&good[..], &short[..]),
            (&long[..], &good[..]),
            (&short[..], &short[..]),
        ] {
            assert!(k.eval(x, z).is_nan(), "{name}: eval {x:?} {z:?}");
            let mut g = vec![0.0; 3];
            assert!(k.eval_with_grad(x, z, &mut g).is_nan(), "{name}");
            assert!(g.iter().all(|v| v.is_nan()), "{name}: {g:?}");
            assert!(k.try_eval(x, z).is_err(), "{name}");
            assert!(k.try_eval_with_grad(x, z, &mut g).is_err(), "{name}");
        }
        for x in [&short[..], &long[..]] {
            assert!(k.diag_entry(x).is_nan(), "{name}");
            assert!(matches!(
                k.try_diag_entry(x),
                Err(KernelError::PointLength { expected: 2, .. })
            ));
        }
        // A gradient buffer of the wrong length.
        let mut g = vec![0.0; 2];
        assert!(k.eval_with_grad(&good, &good, &mut g).is_nan(), "{name}");
        assert!(matches!(
            k.try_eval_with_grad(&good, &good, &mut g),
            Err(KernelError::ParamCount {
                expected: 3,
                found: 2,
                ..
            })
        ));
        // The checked entry points agree with the unchecked ones on valid input.
        let mut g = vec![0.0; 3];
        let mut h = vec![0.0; 3];
        let z = [0.7, -0.4];
        assert_eq!(k.try_eval(&good, &z).unwrap(), k.eval(&good, &z));
        assert_eq!(
            k.try_eval_with_grad(&good, &z, &mut g).unwrap(),
            k.eval_with_grad(&good, &z, &mut h)
        );
        assert_eq!(g, h);
        assert_eq!(k.try_diag_entry(&good).unwrap(), k.diag_entry(&good));
        assert!(k.try_eval(&[f64::NAN, 0.0], &z).is_err(), "{name}");
    }
}

#[test]
fn matern12_gradient_near_coincident_points_with_a_large_variance_is_finite() {
    // r = 1e-150: g'(r²) = −e^{−r}/(2r) ≈ −5e149 overflows when multiplied by σ² = 1e200
    // first; the true derivative is σ² e^{−r} t²/r ≈ 1e200 · 1e-150 = 1e50.
    let k = Matern::new(MaternNu::Half, vec![1.0], 1e200).unwrap();
    let (x, z) = ([0.0], [1e-150]);
    let (_, g) = value_and_grad(&k, &x, &z);
    assert!((g[0] - 1e50).abs() <= 1e-12 * 1e50, "{g:?}");
    let pts = Mat::from_fn(2, 1, |i, _| if i == 0 { 0.0 } else { 1e-150 });
    let (_, grads) = k.matrix_and_grads(pts.as_ref()).unwrap();
    assert!(
        (grads[0][(1, 0)] - 1e50).abs() <= 1e-12 * 1e50,
        "{:?}",
        grads[0][(1, 0)]
    );
}
