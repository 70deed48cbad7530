//! Vector kernels and block helpers against plain loops, on both sides of the parallel
//! threshold.

use crate::common;

use common::{assert_close, rand_mat, rng};
use faer::{Col, Mat};
use gp_linalg::vector::{
    axpy, axpy_col, col_dots, col_norms, cross_gram, dot, dot_col, gram, norm2, norm2_col,
    norm_inf, norm_inf_col, scale, scale_col, CHUNK, PARALLEL_THRESHOLD,
};
use gp_linalg::LinalgError;
use rand::Rng;

fn rand_vec(seed: u64, n: usize) -> Vec<f64> {
    let mut r = rng(seed);
    (0..n).map(|_| r.random_range(-1.0..1.0)).collect()
}

/// Plain loops; for sums of n terms of size ≤ 1 the rounding differences between summation
/// orders are bounded by n ε, so the comparisons use that bound.
fn naive_dot(x: &[f64], y: &[f64]) -> f64 {
    x.iter().zip(y).map(|(a, b)| a * b).sum()
}

#[test]
fn kernels_match_naive_loops_below_and_above_the_threshold() {
    for (seed, n) in [
        (71, 0),
        (72, 1),
        (73, 1000),
        (74, PARALLEL_THRESHOLD + 12345),
    ] {
        let x = rand_vec(seed, n);
        let y = rand_vec(seed + 1, n);
        let tol = (n as f64 + 1.0) * f64::EPSILON;
        assert!((dot(&x, &y).unwrap() - naive_dot(&x, &y)).abs() <= tol);
        let nrm = naive_dot(&x, &x).sqrt();
        assert!((norm2(&x) - nrm).abs() <= tol * (1.0 + nrm));
        let inf = x.iter().fold(0.0_f64, |m, v| m.max(v.abs()));
        assert_eq!(norm_inf(&x), inf);

        let mut z = y.clone();
        axpy(0.5, &x, &mut z).unwrap();
        assert!(z
            .iter()
            .zip(x.iter().zip(&y))
            .all(|(zi, (xi, yi))| *zi == yi + 0.5 * xi));
        let mut s = x.clone();
        scale(-3.0, &mut s);
        assert!(s.iter().zip(&x).all(|(si, xi)| *si == -3.0 * xi));
    }
}

#[test]
fn parallel_reduction_equals_chunked_sequential_sum() {
    // Above the threshold the chunk sums are added in order, so the result is bit-identical
    // to the sequential chunked sum (and independent of the number of threads).
    let n = 3 * PARALLEL_THRESHOLD + 17;
    let x = rand_vec(75, n);
    let y = rand_vec(76, n);
    let want: f64 = x
        .chunks(CHUNK)
        .zip(y.chunks(CHUNK))
        .map(|(a, b)| dot(a, b).unwrap()) // one chunk each: a sequential sum
        .sum();
    assert_eq!(dot(&x, &y).unwrap(), want);
}

#[test]
fn norms_are_safe_from_overflow_underflow_and_propagate_nan() {
    // The rescaled pass costs a rounding or two.
    assert!((norm2(&[3e200, 4e200]) - 5e200).abs() <= 4.0 * f64::EPSILON * 5e200);
    assert!((norm2(&[3e-200, 4e-200]) - 5e-200).abs() <= 4.0 * f64::EPSILON * 5e-200);
    assert_eq!(norm2(&[]), 0.0);
    assert_eq!(norm2(&[0.0, 0.0]), 0.0);
    assert!(norm2(&[1.0, f64::NAN]).is_nan());
    assert!(norm_inf(&[f64::NAN, 1.0]).is_nan());
    assert!(norm_inf(&[1.0, f64::NAN]).is_nan());
    assert_eq!(norm2(&[1.0, f64::INFINITY]), f64::INFINITY);
}

#[test]
fn length_mismatch_is_an_error() {
    assert!(matches!(
        dot(&[1.0, 2.0], &[1.0]),
        Err(LinalgError::ShapeMismatch { .. })
    ));
    assert!(matches!(
        axpy(1.0, &[1.0, 2.0], &mut [1.0]),
        Err(LinalgError::ShapeMismatch { .. })
    ));
    let a = Mat::<f64>::zeros(3, 2);
    assert!(matches!(
        col_dots(a.as_ref(), Mat::<f64>::zeros(3, 3).as_ref()),
        Err(LinalgError::ShapeMismatch { .. })
    ));
    assert!(matches!(
        cross_gram(a.as_ref(), Mat::<f64>::zeros(4, 2).as_ref()),
        Err(LinalgError::ShapeMismatch { .. })
    ));
}

#[test]
fn column_variants_handle_strided_columns() {
    let mut r = rng(77);
    let m = rand_mat(&mut r, 6, 9);
    // Rows of a column-major matrix are strided columns of its transpose.
    let xs = m.transpose().col(1);
    let ys = m.transpose().col(4);
    let xv: Vec<f64> = xs.iter().copied().collect();
    let yv: Vec<f64> = ys.iter().copied().collect();
    assert_eq!(dot_col(xs, ys).unwrap(), dot(&xv, &yv).unwrap());
    assert_eq!(norm2_col(xs), norm2(&xv));
    assert_eq!(norm_inf_col(xs), norm_inf(&xv));

    let mut t = m.transpose().to_owned().transpose().to_owned(); // a copy of m
    let mut yt = Col::from_fn(9, |i| yv[i]);
    axpy_col(2.0, xs, yt.as_mut()).unwrap();
    // Strided destination: row 4 of `t`.
    axpy_col(2.0, xs, t.as_mut().transpose_mut().col_mut(4)).unwrap();
    for j in 0..9 {
        assert_eq!(t[(4, j)], yt[j]);
        assert_eq!(yt[j], yv[j] + 2.0 * xv[j]);
    }
    scale_col(0.5, t.as_mut().transpose_mut().col_mut(0));
    for j in 0..9 {
        assert_eq!(t[(0, j)], 0.5 * m[(0, j)]);
    }
}

#[test]
fn block_helpers_match_dense() {
    let mut r = rng(78);
    let a = rand_mat(&mut r, 150, 7);
    let b = rand_mat(&mut r, 150, 7);
    let g = gram(a.as_ref());
    assert_close(g.as_ref(), (a.transpose() * &a).as_ref(), 1e-13, "gram");
    let c = cross_gram(a.as_ref(), b.as_ref()).unwrap();
    let atb = a.transpose() * &b;
    assert_close(c.as_ref(), atb.as_ref(), 1e-13, "cross_gram");
    let d = col_dots(a.as_ref(), b.as_ref()).unwrap();
    let want = Col::from_fn(7, |j| atb[(j, j)]);
    assert_close(d.as_mat(), want.as_mat(), 1e-13, "col_dots");
    let n = col_norms(a.as_ref());
    let want = Col::from_fn(7, |j| g[(j, j)].sqrt());
    assert_close(n.as_mat(), want.as_mat(), 1e-13, "col_norms");
    assert_eq!(gram(Mat::<f64>::zeros(5, 0).as_ref()).nrows(), 0);
}

/// `dot_chunks` interleaves up to four pairs of a common length; every value must be
/// `dot_chunk`'s bits, whatever the grouping: runs of equal and unequal lengths, lengths
/// with and without a tail of fewer than four, pairs of unequal lengths (which `dot_chunk`
/// handles its own way), and an output shorter than the pairs.
#[test]
fn dot_chunks_equal_dot_chunk_bit_for_bit() {
    use gp_linalg::vector::{dot_chunk, dot_chunks};
    let lengths = [
        8192, 8192, 8192, 8192, 8192, 8190, 8190, 3, 0, 8191, 8191, 1, 4, 4, 4,
    ];
    let xs: Vec<Vec<f64>> = lengths
        .iter()
        .enumerate()
        .map(|(k, &n)| rand_vec(300 + k as u64, n))
        .collect();
    let ys: Vec<Vec<f64>> = lengths
        .iter()
        .enumerate()
        .map(|(k, &n)| rand_vec(400 + k as u64, n + k % 2))
        .collect();
    let pairs: Vec<(&[f64], &[f64])> = xs
        .iter()
        .zip(&ys)
        .map(|(x, y)| (x.as_slice(), y.as_slice()))
        .collect();
    for count in 0..=pairs.len() {
        let mut out = vec![f64::NAN; count + 1];
        dot_chunks(&pairs[..count], &mut out);
        for (k, (x, y)) in pairs[..count].iter().enumerate() {
            assert_eq!(
                out[k].to_bits(),
                dot_chunk(x, y).to_bits(),
                "pair {k} of {count}"
            );
        }
        assert!(out[count].is_nan(), "entries past the pairs are left alone");
    }
    let mut short = vec![0.0; 2];
    dot_chunks(&pairs, &mut short);
    assert_eq!(
        short[1].to_bits(),
        dot_chunk(pairs[1].0, pairs[1].1).to_bits()
    );

    // Both kernels run an AVX2 build where the CPU has one: the same bits as the baseline.
    let all = |out: &mut Vec<f64>| {
        dot_chunks(&pairs, out);
        out.extend(pairs.iter().map(|(x, y)| dot_chunk(x, y)));
    };
    let (mut fast, mut baseline) = (vec![0.0; pairs.len()], vec![0.0; pairs.len()]);
    all(&mut fast);
    let previous = gp_linalg::simd::set_max_simd_level(gp_linalg::simd::SimdLevel::Baseline);
    all(&mut baseline);
    gp_linalg::simd::set_max_simd_level(previous);
    let bits = |v: &[f64]| v.iter().map(|x| x.to_bits()).collect::<Vec<_>>();
    assert_eq!(bits(&fast), bits(&baseline));
}
