//! Interpolation weights `W`: definition, exactness properties, out-of-grid policy, and the
//! factorized / CSR / transposed products against the dense matrix.

use approx::assert_relative_eq;
use faer::{Col, Mat};
use gp_structured::{
    cell_order, permute_rows, CsrInterpolation, InterpolationOptions, InterpolationScheme,
    InterpolationWeights, LinearOperator, OutOfGrid, RegularGrid, StructuredError,
    TransposeOperator,
};
use proptest::prelude::*;
use rand::{Rng, SeedableRng};
use rand_chacha::ChaCha8Rng;

const CUBIC: InterpolationOptions = InterpolationOptions {
    scheme: InterpolationScheme::Cubic,
    out_of_grid: OutOfGrid::Error,
};
const LINEAR: InterpolationOptions = InterpolationOptions {
    scheme: InterpolationScheme::Linear,
    out_of_grid: OutOfGrid::Error,
};

/// A grid on `[0, 1]^d` (padded as recommended) and `n` uniform points in `[0, 1]^d`.
fn setup(
    sizes: &[usize],
    n: usize,
    scheme: InterpolationScheme,
    seed: u64,
) -> (RegularGrid, Mat<f64>) {
    let d = sizes.len();
    let mut rng = ChaCha8Rng::seed_from_u64(seed);
    let x = Mat::from_fn(n, d, |_, _| rng.random::<f64>());
    let corners = Mat::from_fn(2, d, |i, _| i as f64);
    let grid =
        RegularGrid::from_data(corners.as_ref(), sizes, scheme.recommended_padding()).unwrap();
    (grid, x)
}

fn random_col(n: usize, seed: u64) -> Col<f64> {
    let mut rng = ChaCha8Rng::seed_from_u64(seed);
    Col::from_fn(n, |_| rng.random::<f64>() * 2.0 - 1.0)
}

fn max_abs(m: &Mat<f64>) -> f64 {
    m.norm_max()
}

#[test]
fn keys_kernel_values() {
    let c = InterpolationScheme::Cubic;
    assert_eq!(c.kernel(0.0), 1.0);
    assert_eq!(c.kernel(1.0), 0.0);
    assert_eq!(c.kernel(2.0), 0.0);
    assert_eq!(c.kernel(2.5), 0.0);
    assert_relative_eq!(c.kernel(0.5), 1.5 * 0.125 - 2.5 * 0.25 + 1.0);
    assert_relative_eq!(c.kernel(-1.5), -0.5 * 3.375 + 2.5 * 2.25 - 6.0 + 2.0);
    assert_eq!(InterpolationScheme::Linear.kernel(0.25), 0.75);
    assert_eq!(InterpolationScheme::default(), InterpolationScheme::Cubic);
}

/// Every entry of W equals the tensor product of the 1-D kernel at the normalized distances.
#[test]
fn entries_match_the_kernel_definition() {
    for (opts, sizes) in [
        (CUBIC, vec![9usize, 7, 8]),
        (LINEAR, vec![5, 6, 4]),
        (CUBIC, vec![12]),
    ] {
        let (grid, x) = setup(&sizes, 25, opts.scheme, 1);
        let w = InterpolationWeights::new(&grid, x.as_ref(), opts).unwrap();
        let dense = w.to_dense();
        let pts = grid.points();
        for i in 0..x.nrows() {
            for j in 0..grid.num_points() {
                let mut expect = 1.0;
                for (l, a) in grid.axes().iter().enumerate() {
                    expect *= opts.scheme.kernel((x[(i, l)] - pts[(j, l)]) / a.spacing());
                }
                assert!(
                    (dense[(i, j)] - expect).abs() < 1e-14,
                    "{i} {j}: {} vs {expect}",
                    dense[(i, j)]
                );
            }
        }
        // Structural count of entries per row.
        let wd = opts.scheme.stencil_width().pow(sizes.len() as u32);
        assert_eq!(w.entries_per_row(), wd);
        let (cols, vals) = w.row(3).unwrap();
        assert_eq!(cols.len(), wd);
        assert!(cols.windows(2).all(|c| c[0] < c[1]));
        for (c, v) in cols.iter().zip(&vals) {
            assert!((dense[(3, *c)] - *v).abs() <= 1e-15);
        }
    }
}

#[test]
fn rows_sum_to_one_and_quadratics_are_reproduced() {
    for sizes in [vec![10usize], vec![8, 11], vec![7, 9, 8]] {
        let d = sizes.len();
        let (grid, x) = setup(&sizes, 200, InterpolationScheme::Cubic, 7);
        let w = InterpolationWeights::new(&grid, x.as_ref(), CUBIC).unwrap();
        let ones = Col::<f64>::ones(grid.num_points());
        let s = w.apply(ones.as_ref()).unwrap();
        for i in 0..x.nrows() {
            assert!((s[i] - 1.0).abs() < 1e-14);
        }
        // f(x) = 0.3 + Σ c_l x_l + Σ_{l≤k} c_lk x_l x_k.
        let f = |p: &[f64]| {
            let mut v = 0.3;
            for l in 0..d {
                v += (l as f64 + 1.0) * 0.7 * p[l];
                for k in l..d {
                    v += (0.5 - 0.2 * (l + 2 * k) as f64) * p[l] * p[k];
                }
            }
            v
        };
        let pts = grid.points();
        let fg = Col::from_fn(grid.num_points(), |j| {
            f(&(0..d).map(|l| pts[(j, l)]).collect::<Vec<_>>())
        });
        let fx = w.apply(fg.as_ref()).unwrap();
        for i in 0..x.nrows() {
            let exact = f(&(0..d).map(|l| x[(i, l)]).collect::<Vec<_>>());
            assert!(
                (fx[i] - exact).abs() < 1e-12 * (1.0 + exact.abs()),
                "{} vs {exact}",
                fx[i]
            );
        }
        // A cubic is not reproduced exactly (sanity check that the test has teeth).
        let cub = Col::from_fn(grid.num_points(), |j| pts[(j, 0)].powi(3));
        let cx = w.apply(cub.as_ref()).unwrap();
        let err = (0..x.nrows())
            .map(|i| (cx[i] - x[(i, 0)].powi(3)).abs())
            .fold(0.0, f64::max);
        assert!(err > 1e-8);
    }
}

#[test]
fn linear_reproduces_affine_functions() {
    let (grid, x) = setup(&[5, 7], 100, InterpolationScheme::Linear, 3);
    let w = InterpolationWeights::new(&grid, x.as_ref(), LINEAR).unwrap();
    let pts = grid.points();
    let fg = Col::from_fn(grid.num_points(), |j| {
        1.0 + 2.0 * pts[(j, 0)] - 3.0 * pts[(j, 1)]
    });
    let fx = w.apply(fg.as_ref()).unwrap();
    for i in 0..x.nrows() {
        assert!((fx[i] - (1.0 + 2.0 * x[(i, 0)] - 3.0 * x[(i, 1)])).abs() < 1e-13);
    }
}

#[test]
fn point_on_a_node_gets_weight_one() {
    let grid = RegularGrid::from_bounds(&[0.0, 0.0], &[9.0, 9.0], &[10, 10]).unwrap();
    let x = Mat::from_fn(1, 2, |_, l| [4.0, 8.0][l]);
    let w = InterpolationWeights::new(&grid, x.as_ref(), CUBIC).unwrap();
    let dense = w.to_dense();
    let j = grid.flat_index(&[4, 8]).unwrap();
    assert_eq!(dense[(0, j)], 1.0);
    assert_eq!(dense.col_iter().map(|c| c[0].abs()).sum::<f64>(), 1.0);
}

#[test]
fn points_outside_the_grid_are_a_typed_error_or_clamped() {
    let grid = RegularGrid::from_bounds(&[0.0, 0.0], &[9.0, 9.0], &[10, 10]).unwrap();
    // Cubic: valid region [1, 8] per dimension.
    let x = Mat::from_fn(3, 2, |i, l| [[2.0, 3.0], [5.0, 0.5], [8.0, 1.0]][i][l]);
    let e = InterpolationWeights::new(&grid, x.as_ref(), CUBIC).unwrap_err();
    match e {
        StructuredError::OutsideGrid {
            point,
            dim,
            value,
            lo,
            hi,
            scheme,
        } => {
            assert_eq!((point, dim, value, scheme), (1, 1, 0.5, "cubic"));
            assert_relative_eq!(lo, 1.0);
            assert_relative_eq!(hi, 8.0);
        }
        other => panic!("unexpected error {other:?}"),
    }
    // The boundary of the valid region itself is fine (rows 0 and 2).
    let ok = Mat::from_fn(2, 2, |i, l| [[1.0, 8.0], [8.0, 1.0]][i][l]);
    assert!(InterpolationWeights::new(&grid, ok.as_ref(), CUBIC).is_ok());
    // Linear: the whole grid is valid.
    assert!(InterpolationWeights::new(&grid, x.as_ref(), LINEAR).is_ok());
    let far = Mat::from_fn(1, 2, |_, l| [9.5, 3.0][l]);
    assert!(matches!(
        InterpolationWeights::new(&grid, far.as_ref(), LINEAR),
        Err(StructuredError::OutsideGrid { dim: 0, .. })
    ));
    // Clamp: the row equals that of the clamped point and still sums to one.
    let clamp = InterpolationOptions {
        out_of_grid: OutOfGrid::Clamp,
        ..CUBIC
    };
    let wc = InterpolationWeights::new(&grid, x.as_ref(), clamp)
        .unwrap()
        .to_dense();
    let xc = Mat::from_fn(3, 2, |i, l| x[(i, l)].clamp(1.0, 8.0));
    let wr = InterpolationWeights::new(&grid, xc.as_ref(), CUBIC)
        .unwrap()
        .to_dense();
    assert!(max_abs(&(&wc - &wr)) < 1e-15);
    // Non-finite coordinates are always errors.
    let nan = Mat::from_fn(1, 2, |_, l| [f64::NAN, 3.0][l]);
    assert!(InterpolationWeights::new(&grid, nan.as_ref(), clamp).is_err());
    let inf = Mat::from_fn(1, 2, |_, l| [3.0, f64::INFINITY][l]);
    assert!(InterpolationWeights::new(&grid, inf.as_ref(), clamp).is_err());
}

#[test]
fn shape_and_grid_errors() {
    let grid = RegularGrid::from_bounds(&[0.0, 0.0], &[1.0, 1.0], &[3, 10]).unwrap();
    let x = Mat::from_fn(2, 2, |_, _| 0.5);
    // Cubic needs 4 points per axis.
    assert!(matches!(
        InterpolationWeights::new(&grid, x.as_ref(), CUBIC),
        Err(StructuredError::InvalidArgument { name: "grid", .. })
    ));
    let x3 = Mat::from_fn(2, 3, |_, _| 0.5);
    assert!(InterpolationWeights::new(&grid, x3.as_ref(), LINEAR).is_err());
    let w = InterpolationWeights::new(&grid, x.as_ref(), LINEAR).unwrap();
    assert!(w.apply(Col::<f64>::zeros(5).as_ref()).is_err());
    assert!(w.apply_transpose(Col::<f64>::zeros(5).as_ref()).is_err());
}

fn check_products(sizes: &[usize], n: usize, opts: InterpolationOptions, seed: u64) {
    let (grid, x) = setup(sizes, n, opts.scheme, seed);
    let w = InterpolationWeights::new(&grid, x.as_ref(), opts).unwrap();
    let dense = w.to_dense();
    let m = grid.num_points();
    let v = random_col(m, seed + 1);
    let u = random_col(n, seed + 2);
    let wv = &dense * &v;
    let wtu = dense.transpose() * &u;
    let tol = 1e-13;
    let fw = w.apply(v.as_ref()).unwrap();
    let ft = w.apply_transpose(u.as_ref()).unwrap();
    assert!((&fw - &wv).norm_max() <= tol * (1.0 + wv.norm_max()));
    assert!((&ft - &wtu).norm_max() <= tol * (1.0 + wtu.norm_max()));
    // The transpose as an operator, with a strided (non-contiguous) input column.
    let rowmajor = Mat::from_fn(2, n, |r, i| if r == 0 { u[i] } else { 0.0 });
    let strided = rowmajor.row(0).transpose();
    let tt = w.transposed().apply(strided).unwrap();
    assert!((&tt - &wtu).norm_max() <= tol * (1.0 + wtu.norm_max()));
    assert_eq!(w.transposed().shape(), (m, n));
    // CSR agrees entry by entry and in both products.
    let csr = CsrInterpolation::from_weights(&w).unwrap();
    assert_eq!(csr.matrix().nnz(), n * w.entries_per_row());
    // (The factorized product multiplies the 1-D weights in another order: round-off only.)
    assert!((&csr.to_dense() - &dense).norm_max() <= 1e-15);
    let cw = csr.apply(v.as_ref()).unwrap();
    let ct = csr.apply_transpose(u.as_ref()).unwrap();
    assert!((&cw - &wv).norm_max() <= tol * (1.0 + wv.norm_max()));
    assert!((&ct - &wtu).norm_max() <= tol * (1.0 + wtu.norm_max()));
    // Blocks of columns.
    let block = Mat::from_fn(m, 3, |j, c| ((j * 7 + c * 3) % 11) as f64 - 5.0);
    let wb = w.apply_block(block.as_ref()).unwrap();
    assert!((&wb - &dense * &block).norm_max() < 1e-12);
}

#[test]
fn products_match_dense_including_many_rows() {
    check_products(&[9, 6, 7], 40, CUBIC, 11);
    check_products(&[5, 4, 6], 40, LINEAR, 12);
    check_products(&[30], 9000, CUBIC, 13); // several parallel row blocks
    check_products(&[20, 15], 10_000, LINEAR, 14);
}

/// `Wᵀ V` with the points in cell order, where the 3-D scatter sums runs of rows that share
/// a stencil before adding them to the grid (runs longer than its 32-row cap and across its
/// 256-row tiles on the 6×6×6 grid), against the dense `Wᵀ V`: sums of a few thousand
/// terms of size ≤ 1, so 1e-12 relative to the largest entry bounds the rounding.
#[test]
fn transpose_products_in_cell_order_match_dense() {
    for sizes in [&[6, 6, 6][..], &[9, 7, 8][..]] {
        let (grid, x) = setup(sizes, 3000, InterpolationScheme::Cubic, 17);
        let perm = cell_order(&grid, x.as_ref(), CUBIC).unwrap();
        let xs = permute_rows(x.as_ref(), &perm).unwrap();
        let w = InterpolationWeights::new(&grid, xs.as_ref(), CUBIC).unwrap();
        let dense = w.to_dense();
        let mut rng = ChaCha8Rng::seed_from_u64(18);
        let v = Mat::from_fn(3000, 11, |_, _| rng.random::<f64>() - 0.5);
        let expected = dense.transpose() * &v;
        let mut got = Mat::<f64>::zeros(grid.num_points(), 11);
        w.matmat_transpose(v.as_ref(), got.as_mut());
        let scale = max_abs(&expected);
        assert!(max_abs(&(&got - &expected)) <= 1e-12 * scale, "{sizes:?}");
        let mut single = Col::<f64>::zeros(grid.num_points());
        w.matvec_transpose(v.col(3), single.as_mut());
        assert!(
            (&single - expected.col(3)).norm_max() <= 1e-12 * scale,
            "{sizes:?}"
        );
    }
}

#[test]
fn cell_order_sorts_by_stencil_start_and_permutes_rows() {
    let (grid, x) = setup(&[8, 9, 7], 300, InterpolationScheme::Cubic, 5);
    let perm = cell_order(&grid, x.as_ref(), CUBIC).unwrap();
    let mut seen = perm.clone();
    seen.sort_unstable();
    assert_eq!(seen, (0..300).collect::<Vec<_>>());
    let xs = permute_rows(x.as_ref(), &perm).unwrap();
    let ws = InterpolationWeights::new(&grid, xs.as_ref(), CUBIC).unwrap();
    assert!(ws.stencil_starts().windows(2).all(|s| s[0] <= s[1]));
    let w = InterpolationWeights::new(&grid, x.as_ref(), CUBIC).unwrap();
    let (dw, dws) = (w.to_dense(), ws.to_dense());
    for k in 0..300 {
        for j in 0..grid.num_points() {
            assert_eq!(dws[(k, j)], dw[(perm[k], j)]);
        }
    }
    assert!(permute_rows(x.as_ref(), &perm[..10]).is_err());
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(40))]
    #[test]
    fn random_shapes_match_dense(
        sizes in prop::collection::vec(6usize..10, 1..4),
        n in 1usize..40,
        cubic in any::<bool>(),
        seed in 0u64..10_000,
    ) {
        let opts = if cubic { CUBIC } else { LINEAR };
        check_products(&sizes, n, opts, seed);
        let (grid, x) = setup(&sizes, n, opts.scheme, seed);
        let w = InterpolationWeights::new(&grid, x.as_ref(), opts).unwrap();
        let s = w.apply(Col::<f64>::ones(grid.num_points()).as_ref()).unwrap();
        for i in 0..n {
            prop_assert!((s[i] - 1.0).abs() < 1e-14);
        }
    }
}

/// Runs `f` on a rayon pool of `threads` threads.
fn on_pool<T: Send>(threads: usize, f: impl FnOnce() -> T + Send) -> T {
    rayon::ThreadPoolBuilder::new()
        .num_threads(threads)
        .build()
        .unwrap()
        .install(f)
}

#[test]
fn transpose_product_does_not_depend_on_the_thread_count() {
    // Enough rows for several row blocks (4096 rows each), so that a block count tied to the
    // pool size would sum in a different order on 1, 2 and 3 threads.
    for (sizes, n, scheme) in [
        (vec![300], 20_000, InterpolationScheme::Cubic),
        (vec![40, 30], 30_000, InterpolationScheme::Cubic),
        (vec![12, 10, 9], 25_000, InterpolationScheme::Linear),
    ] {
        let (grid, x) = setup(&sizes, n, scheme, 21);
        let opts = InterpolationOptions {
            scheme,
            out_of_grid: OutOfGrid::Error,
        };
        let w = InterpolationWeights::new(&grid, x.as_ref(), opts).unwrap();
        let csr = CsrInterpolation::from_weights(&w).unwrap();
        let v = random_col(n, 5);
        let products = |threads| {
            on_pool(threads, || {
                (
                    w.apply_transpose(v.as_ref()).unwrap(),
                    csr.apply_transpose(v.as_ref()).unwrap(),
                )
            })
        };
        let (one, one_csr) = products(1);
        for threads in [2, 3] {
            let (got, got_csr) = products(threads);
            let same = |a: &Col<f64>, b: &Col<f64>| {
                a.iter()
                    .zip(b.iter())
                    .all(|(p, q)| p.to_bits() == q.to_bits())
            };
            assert!(same(&one, &got), "factorized, {sizes:?}, {threads} threads");
            assert!(
                same(&one_csr, &got_csr),
                "CSR, {sizes:?}, {threads} threads"
            );
        }
    }
}

/// The fused `W x + α v` equals the product followed by adding `α v`, bit for bit, on the
/// specialised cubic stencils (d = 1, 2, 3), the general path (linear) and more rows than one
/// parallel chunk; wrong lengths are typed errors.
#[test]
fn fused_shift_equals_product_then_shift_bitwise() {
    for (sizes, n, opts) in [
        (&[40][..], 9000, CUBIC),
        (&[12, 9][..], 500, CUBIC),
        (&[7, 6, 8][..], 300, CUBIC),
        (&[9, 7][..], 400, LINEAR),
    ] {
        let (grid, x) = setup(sizes, n, opts.scheme, 21);
        let w = InterpolationWeights::new(&grid, x.as_ref(), opts).unwrap();
        let u = random_col(grid.num_points(), 22);
        let v = random_col(n, 23);
        let alpha = 0.037;
        let mut two_pass = w.apply(u.as_ref()).unwrap();
        for i in 0..n {
            two_pass[i] += alpha * v[i];
        }
        let mut fused = Col::<f64>::zeros(n);
        w.matvec_plus_scaled(u.as_ref(), alpha, v.as_ref(), fused.as_mut())
            .unwrap();
        for i in 0..n {
            assert_eq!(
                fused[i].to_bits(),
                two_pass[i].to_bits(),
                "{sizes:?}, row {i}"
            );
        }
    }
    let (grid, x) = setup(&[10], 20, InterpolationScheme::Cubic, 1);
    let w = InterpolationWeights::new(&grid, x.as_ref(), CUBIC).unwrap();
    let (u, v) = (Col::<f64>::zeros(grid.num_points()), Col::<f64>::zeros(20));
    let mut out = Col::<f64>::zeros(20);
    for (u_len, v_len, out_len) in [
        (3, 20, 20),
        (grid.num_points(), 19, 20),
        (grid.num_points(), 20, 21),
    ] {
        let mut o = Col::<f64>::zeros(out_len);
        let err = w
            .matvec_plus_scaled(
                u.subrows(0, u_len.min(u.nrows())).as_ref(),
                1.0,
                Col::<f64>::zeros(v_len).as_ref(),
                o.as_mut(),
            )
            .unwrap_err();
        assert!(
            matches!(err, StructuredError::InvalidArgument { .. }),
            "{err}"
        );
    }
    w.matvec_plus_scaled(u.as_ref(), 1.0, v.as_ref(), out.as_mut())
        .unwrap();
}

/// The cubic products in 1, 2 and 3 dimensions run in an AVX2 build where the CPU has it;
/// capping the dispatch level runs the baseline build through the same public calls, and
/// both give the same bits.
#[test]
fn dispatched_products_equal_the_baseline_build_bit_for_bit() {
    for sizes in [&[300][..], &[30, 20][..], &[12, 10, 9][..]] {
        dispatched_equals_baseline(sizes);
    }
}

fn dispatched_equals_baseline(sizes: &[usize]) {
    use gp_linalg::simd::{set_max_simd_level, SimdLevel};
    let n = 10_000;
    let (grid, x) = setup(sizes, n, InterpolationScheme::Cubic, 31);
    let u = random_col(grid.num_points(), 32);
    let v = random_col(n, 33);
    // Locating the points (building W) is dispatched too.
    let run = || {
        let w = InterpolationWeights::new(&grid, x.as_ref(), CUBIC).unwrap();
        let wu = w.apply(u.as_ref()).unwrap();
        let wtv = w.apply_transpose(v.as_ref()).unwrap();
        let mut fused = Col::<f64>::zeros(n);
        w.matvec_plus_scaled(u.as_ref(), 0.5, v.as_ref(), fused.as_mut())
            .unwrap();
        [wu, wtv, fused]
    };
    let dispatched = run();
    let previous = set_max_simd_level(SimdLevel::Baseline);
    let baseline = run();
    set_max_simd_level(previous);
    for (a, b) in dispatched.iter().zip(&baseline) {
        let bits = |c: &Col<f64>| c.iter().map(|x| x.to_bits()).collect::<Vec<_>>();
        assert_eq!(bits(a), bits(b), "{sizes:?}");
    }
}

/// Products with blocks of columns (twelve per pass over the rows for the cubic stencils in
/// 1, 2 and 3 dimensions) equal the column-by-column products bit for bit, for `W X`,
/// `Wᵀ V` and `W X + α V`, with one and two passes of columns, more rows than one parallel
/// chunk and one `Wᵀ` block, in every dispatched build; the linear stencil takes the column
/// loop; wrong shapes of `W X + α V` are typed errors.
#[test]
fn block_products_equal_column_by_column_products_bitwise() {
    use gp_linalg::simd::{set_max_simd_level, SimdLevel};
    // `ordered`: points in cell order, so the 3-D scatters sum runs of rows with one stencil
    // (the data span 4 × 2 × 3 cells of the 9×7×8 grid, about 375 points each, and one cell
    // of the 6×6×6 grid: runs cut at 32 rows and at the 256-row tiles, and runs that end
    // where the stencil changes).
    for (sizes, n, opts, ordered) in [
        (&[60][..], 9000, CUBIC, false),
        (&[14, 11][..], 5000, CUBIC, false),
        (&[9, 7, 8][..], 9000, CUBIC, false),
        (&[9, 7, 8][..], 9000, CUBIC, true),
        (&[6, 6, 6][..], 9000, CUBIC, true),
        (&[9, 7][..], 400, LINEAR, false),
    ] {
        let (grid, x) = setup(sizes, n, opts.scheme, 41);
        let x = if ordered {
            let perm = cell_order(&grid, x.as_ref(), opts).unwrap();
            permute_rows(x.as_ref(), &perm).unwrap()
        } else {
            x
        };
        let w = InterpolationWeights::new(&grid, x.as_ref(), opts).unwrap();
        let m = grid.num_points();
        let mut rng = ChaCha8Rng::seed_from_u64(42);
        for k in [2usize, 11, 13] {
            let xg = Mat::from_fn(m, k, |_, _| rng.random::<f64>() - 0.5);
            let v = Mat::from_fn(n, k, |_, _| rng.random::<f64>() - 0.5);
            let alpha = 0.037;
            let columns = || {
                let mut wx = Mat::<f64>::zeros(n, k);
                let mut wtv = Mat::<f64>::zeros(m, k);
                let mut shifted = Mat::<f64>::zeros(n, k);
                for j in 0..k {
                    w.matvec(xg.col(j), wx.as_mut().col_mut(j));
                    w.matvec_transpose(v.col(j), wtv.as_mut().col_mut(j));
                    w.matvec_plus_scaled(xg.col(j), alpha, v.col(j), shifted.as_mut().col_mut(j))
                        .unwrap();
                }
                [wx, wtv, shifted]
            };
            let blocks = || {
                let mut wx = Mat::<f64>::zeros(n, k);
                let mut wtv = Mat::<f64>::zeros(m, k);
                let mut shifted = Mat::<f64>::zeros(n, k);
                w.matmat(xg.as_ref(), wx.as_mut());
                w.matmat_transpose(v.as_ref(), wtv.as_mut());
                w.matmat_plus_scaled(xg.as_ref(), alpha, v.as_ref(), shifted.as_mut())
                    .unwrap();
                [wx, wtv, shifted]
            };
            let reference = columns();
            for level in [SimdLevel::Avx512, SimdLevel::Avx2Fma, SimdLevel::Baseline] {
                let previous = set_max_simd_level(level);
                let got = blocks();
                set_max_simd_level(previous);
                for (a, b) in got.iter().zip(&reference) {
                    for j in 0..k {
                        for i in 0..a.nrows() {
                            assert_eq!(
                                a[(i, j)].to_bits(),
                                b[(i, j)].to_bits(),
                                "{sizes:?}, k {k}, {level:?}, ({i}, {j})"
                            );
                        }
                    }
                }
            }
        }
    }
    let (grid, x) = setup(&[10, 9], 50, InterpolationScheme::Cubic, 1);
    let w = InterpolationWeights::new(&grid, x.as_ref(), CUBIC).unwrap();
    let m = grid.num_points();
    for (xs, vs, os) in [
        ((m - 1, 3), (50, 3), (50, 3)),
        ((m, 3), (49, 3), (50, 3)),
        ((m, 3), (50, 2), (50, 3)),
        ((m, 3), (50, 3), (50, 4)),
    ] {
        let mut out = Mat::<f64>::zeros(os.0, os.1);
        let err = w
            .matmat_plus_scaled(
                Mat::<f64>::zeros(xs.0, xs.1).as_ref(),
                1.0,
                Mat::<f64>::zeros(vs.0, vs.1).as_ref(),
                out.as_mut(),
            )
            .unwrap_err();
        assert!(
            matches!(err, StructuredError::InvalidArgument { .. }),
            "{err}"
        );
    }
}

/// `diag(W K_G Wᵀ)` for `K_G = s ⊗ T(c_l)` against the dense product, in one to three
/// dimensions, cubic and linear, with clamped points outside the grid and more rows than one
/// parallel chunk; the cross term `W K_G Wᵀ` whole on the smaller sets.
#[test]
fn toeplitz_kronecker_diagonal_matches_the_dense_product() {
    let clamped = InterpolationOptions {
        scheme: InterpolationScheme::Cubic,
        out_of_grid: OutOfGrid::Clamp,
    };
    let mut previous: Option<InterpolationWeights> = None;
    for (sizes, n, opts, seed) in [
        (vec![30], 9000, CUBIC, 21),
        (vec![9, 6], 50, LINEAR, 22),
        (vec![9, 6, 7], 60, CUBIC, 23),
        (vec![8, 7, 6], 40, clamped, 24),
    ] {
        let (grid, mut x) = setup(&sizes, n, opts.scheme, seed);
        if opts.out_of_grid == OutOfGrid::Clamp {
            // Some points beyond the padded grid on either side.
            for i in (0..n).step_by(5) {
                x[(i, 0)] = if i % 2 == 0 { -0.9 } else { 1.8 };
            }
        }
        let w = InterpolationWeights::new(&grid, x.as_ref(), opts).unwrap();
        // Squared-exponential first columns with a different length scale per axis.
        let columns: Vec<Vec<f64>> = sizes
            .iter()
            .enumerate()
            .map(|(l, &m)| {
                (0..m)
                    .map(|k| (-0.5 * (k as f64 / (1.5 + l as f64)).powi(2)).exp())
                    .collect()
            })
            .collect();
        let scale = 1.7;
        let mut k = Mat::from_fn(1, 1, |_, _| scale);
        for c in &columns {
            let t = Mat::from_fn(c.len(), c.len(), |i, j| c[i.abs_diff(j)]);
            k = k.kron(&t);
        }
        let dense = w.to_dense();
        let expected = &dense * &k * dense.transpose();
        let refs: Vec<&[f64]> = columns.iter().map(Vec::as_slice).collect();
        let diagonal = w.toeplitz_kronecker_diagonal(scale, &refs).unwrap();
        assert_eq!(diagonal.len(), n);
        for (i, value) in diagonal.iter().enumerate() {
            assert_relative_eq!(
                *value,
                expected[(i, i)],
                max_relative = 1e-12,
                epsilon = 1e-14
            );
        }
        // The cross term of the points with themselves is the whole matrix; with points on
        // another grid it is an error.
        if n <= 100 {
            let cross = w.toeplitz_kronecker_cross(&w, scale, &refs).unwrap();
            assert!((&cross - &expected).norm_max() <= 1e-12 * expected.norm_max());
        }
        if let Some(previous) = &previous {
            assert!(w.toeplitz_kronecker_cross(previous, scale, &refs).is_err());
        }
        // One column short, a column of the wrong length, a non-finite scale.
        assert!(w.toeplitz_kronecker_diagonal(scale, &refs[1..]).is_err());
        let short = [&columns[0][..2]];
        if sizes.len() == 1 {
            assert!(w.toeplitz_kronecker_diagonal(scale, &short).is_err());
        }
        assert!(w.toeplitz_kronecker_diagonal(f64::NAN, &refs).is_err());
        previous = Some(w);
    }
}
