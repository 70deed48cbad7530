//! Sufficient statistics `WᵀW`, `Wᵀy`, `yᵀy`, `n`: against forming `W` densely, exact
//! symmetry, stencil storage, merging and chunking independence, streaming from a generator,
//! on both paths (cell moments and point scatter), which must agree with each other, and the
//! rule that chooses between them.

use faer::{Col, Mat};
use gp_structured::sufficient_stats::{StatsPath, MOMENT_MIN_POINTS_PER_CELL};
use gp_structured::{
    InterpolationOptions, InterpolationScheme, InterpolationWeights, LinearOperator, OutOfGrid,
    RegularGrid, StatsAccumulator, StencilGram, StructuredError, SufficientStats,
};
use proptest::prelude::*;
use rand::{Rng, SeedableRng};
use rand_chacha::ChaCha8Rng;

fn opts(scheme: InterpolationScheme) -> InterpolationOptions {
    InterpolationOptions {
        scheme,
        out_of_grid: OutOfGrid::Error,
    }
}

/// Data clustered in part of `[0, 1]^d` (so some grid rows of `S` are empty) on a padded grid.
fn setup(
    sizes: &[usize],
    n: usize,
    scheme: InterpolationScheme,
    seed: u64,
) -> (RegularGrid, Mat<f64>, Col<f64>) {
    let d = sizes.len();
    let mut rng = ChaCha8Rng::seed_from_u64(seed);
    let x = Mat::from_fn(n, d, |_, _| {
        let u: f64 = rng.random();
        u * u
    });
    let y = Col::from_fn(n, |i| (3.0 * x[(i, 0)]).sin() + rng.random::<f64>() - 0.5);
    let corners = Mat::from_fn(2, d, |i, _| i as f64);
    let grid =
        RegularGrid::from_data(corners.as_ref(), sizes, scheme.recommended_padding()).unwrap();
    (grid, x, y)
}

fn rel_err(a: &Mat<f64>, b: &Mat<f64>) -> f64 {
    (a - b).norm_max() / b.norm_max().max(f64::MIN_POSITIVE)
}

const PATHS: [StatsPath; 3] = [
    StatsPath::Auto,
    StatsPath::CellMoments,
    StatsPath::PointScatter,
];

fn check_against_dense(sizes: &[usize], n: usize, scheme: InterpolationScheme, seed: u64) {
    for path in PATHS {
        check_path_against_dense(sizes, n, scheme, seed, path);
    }
}

fn check_path_against_dense(
    sizes: &[usize],
    n: usize,
    scheme: InterpolationScheme,
    seed: u64,
    path: StatsPath,
) {
    let (grid, x, y) = setup(sizes, n, scheme, seed);
    let o = opts(scheme);
    let stats = SufficientStats::compute_with_path(&grid, x.as_ref(), y.as_ref(), o, path).unwrap();
    let w = InterpolationWeights::new(&grid, x.as_ref(), o)
        .unwrap()
        .to_dense();
    let s_dense = w.transpose() * &w;
    let t_dense = w.transpose() * &y;
    let gram = stats.gram();
    let s = gram.to_dense();
    assert!(
        rel_err(&s, &s_dense) < 1e-12,
        "{path:?}: S rel err {}",
        rel_err(&s, &s_dense)
    );
    let t = Mat::from_fn(grid.num_points(), 1, |j, _| stats.wty()[j]);
    let td = Mat::from_fn(grid.num_points(), 1, |j, _| t_dense[j]);
    assert!(rel_err(&t, &td) < 1e-12, "t rel err {}", rel_err(&t, &td));
    let yty: f64 = y.iter().map(|v| v * v).sum();
    assert!((stats.yty() - yty).abs() <= 1e-12 * yty);
    assert_eq!(stats.num_points(), n);
    // Exactly symmetric, and at most (2w−1)^d non-zeros per row.
    let m = grid.num_points();
    for i in 0..m {
        for j in 0..m {
            assert_eq!(s[(i, j)], s[(j, i)]);
        }
    }
    let per_row = (2 * scheme.stencil_width() - 1).pow(sizes.len() as u32);
    assert_eq!(gram.stencil_len(), per_row);
    let csr = gram.to_csr().unwrap();
    assert_eq!(csr.nnz(), gram.nnz());
    for (i, row) in csr.outer_iterator().enumerate() {
        assert!(row.nnz() <= per_row);
        for (j, &v) in row.iter() {
            assert_eq!(v, s[(i, j)]);
            assert_ne!(v, 0.0);
        }
    }
    // Entry access, diagonal and the stencil product.
    for (i, j) in [(0, 0), (m / 2, m / 2 + 1), (m - 1, 0), (3, m - 2)] {
        assert_eq!(gram.entry(i, j).unwrap(), s[(i, j)]);
    }
    assert!(gram.entry(m, 0).is_none());
    let diag = gram.diagonal().unwrap();
    for i in 0..m {
        assert_eq!(diag[i], s[(i, i)]);
    }
    let mut rng = ChaCha8Rng::seed_from_u64(seed + 9);
    let v = Col::from_fn(m, |_| rng.random::<f64>() - 0.5);
    let sv = gram.apply(v.as_ref()).unwrap();
    let sv_dense = &s_dense * &v;
    let scale = s_dense.norm_max() * v.norm_l1();
    assert!((&sv - &sv_dense).norm_max() <= 1e-12 * scale);
}

#[test]
fn matches_dense_cubic_d1_d2_d3() {
    check_against_dense(&[15], 300, InterpolationScheme::Cubic, 1);
    check_against_dense(&[9, 12], 500, InterpolationScheme::Cubic, 2);
    check_against_dense(&[8, 7, 9], 400, InterpolationScheme::Cubic, 3);
}

#[test]
fn matches_dense_linear_d1_d2_d3() {
    check_against_dense(&[12], 300, InterpolationScheme::Linear, 4);
    check_against_dense(&[6, 9], 500, InterpolationScheme::Linear, 5);
    check_against_dense(&[5, 6, 7], 400, InterpolationScheme::Linear, 6);
}

#[test]
fn many_points_per_cell() {
    // n ≫ m: the regime the moment accumulation is meant for; several parallel jobs.
    check_against_dense(&[8, 9], 60_000, InterpolationScheme::Cubic, 7);
}

fn sub(x: &Mat<f64>, y: &Col<f64>, a: usize, b: usize) -> (Mat<f64>, Col<f64>) {
    (
        x.subrows(a, b - a).to_owned(),
        Col::from_fn(b - a, |i| y[a + i]),
    )
}

fn assert_stats_close(a: &SufficientStats, b: &SufficientStats) {
    let (sa, sb) = (a.gram().values(), b.gram().values());
    let scale = sb.iter().fold(0.0f64, |m, v| m.max(v.abs()));
    let err = sa
        .iter()
        .zip(sb)
        .fold(0.0f64, |m, (u, v)| m.max((u - v).abs()));
    assert!(err <= 1e-12 * scale, "S differs by {err} (scale {scale})");
    let tscale = b.wty().norm_max();
    assert!((a.wty() - b.wty()).norm_max() <= 1e-12 * tscale);
    assert!((a.yty() - b.yty()).abs() <= 1e-12 * b.yty());
    assert_eq!(a.num_points(), b.num_points());
}

#[test]
fn merge_is_associative_and_chunking_does_not_matter() {
    let scheme = InterpolationScheme::Cubic;
    let (grid, x, y) = setup(&[7, 8, 6], 3000, scheme, 21);
    let o = opts(scheme);
    let whole = SufficientStats::compute(&grid, x.as_ref(), y.as_ref(), o).unwrap();
    let part = |a, b| {
        let (xs, ys) = sub(&x, &y, a, b);
        SufficientStats::compute(&grid, xs.as_ref(), ys.as_ref(), o).unwrap()
    };
    let (a, b, c) = (part(0, 1000), part(1000, 1700), part(1700, 3000));
    let left = a.clone().merge(&b).unwrap().merge(&c).unwrap();
    let right = a.clone().merge(&b.clone().merge(&c).unwrap()).unwrap();
    let swapped = c.clone().merge(&a).unwrap().merge(&b).unwrap();
    assert_stats_close(&left, &whole);
    assert_stats_close(&right, &whole);
    assert_stats_close(&swapped, &whole);
    // The empty statistics are the identity.
    let e = SufficientStats::empty(&grid, o).unwrap();
    assert_eq!(e.clone().merge(&whole).unwrap(), whole);
    // Different chunk sizes through the streaming entry point.
    for chunk in [1usize, 7, 500, 5000] {
        let chunks: Vec<(Mat<f64>, Col<f64>)> = (0..3000)
            .step_by(chunk)
            .map(|a| sub(&x, &y, a, (a + chunk).min(3000)))
            .collect();
        let s = SufficientStats::from_chunks(&grid, o, chunks).unwrap();
        assert_stats_close(&s, &whole);
    }
    // Accumulators merge the same way.
    let mut acc1 = StatsAccumulator::new(&grid, o).unwrap();
    let mut acc2 = StatsAccumulator::new(&grid, o).unwrap();
    acc1.add_chunk(x.subrows(0, 1200), y.subrows(0, 1200))
        .unwrap();
    acc2.add_chunk(x.subrows(1200, 1800), y.subrows(1200, 1800))
        .unwrap();
    let merged = acc1.merge(acc2).unwrap();
    assert_eq!(merged.num_points(), 3000);
    assert_stats_close(&merged.finish().unwrap(), &whole);
}

#[test]
fn streams_from_a_generator() {
    let scheme = InterpolationScheme::Linear;
    let sizes = [6usize, 5];
    let corners = Mat::from_fn(2, 2, |i, _| i as f64);
    let grid = RegularGrid::from_data(corners.as_ref(), &sizes, 1).unwrap();
    let o = opts(scheme);
    let gen = (0..50u64).map(|c| {
        let mut rng = ChaCha8Rng::seed_from_u64(c);
        let x = Mat::from_fn(2000, 2, |_, _| rng.random::<f64>());
        let y = Col::from_fn(2000, |i| x[(i, 0)] - x[(i, 1)]);
        (x, y)
    });
    let s = SufficientStats::from_chunks(&grid, o, gen).unwrap();
    assert_eq!(s.num_points(), 100_000);
    // Every row of W sums to one, so the entries of S sum to n and those of t to Σ y. Each
    // stored off-diagonal value stands for two entries; the diagonal comes first in a row.
    let gram = s.gram();
    let total: f64 = gram
        .values()
        .chunks_exact(gram.row_len())
        .map(|row| row[0] + 2.0 * row[1..].iter().sum::<f64>())
        .sum();
    assert!((total - 1e5).abs() < 1e-8);
    let s2 = SufficientStats::from_chunks(&grid, o, std::iter::empty()).unwrap();
    assert_eq!(s2.num_points(), 0);
    assert_eq!(s2.gram().nnz(), 0);
}

#[test]
fn errors_are_typed_and_leave_the_accumulator_unchanged() {
    let scheme = InterpolationScheme::Cubic;
    let (grid, x, y) = setup(&[8, 8], 50, scheme, 31);
    let o = opts(scheme);
    let short = Col::from_fn(49, |i| y[i]);
    assert!(SufficientStats::compute(&grid, x.as_ref(), short.as_ref(), o).is_err());
    let mut bad_y = y.clone();
    bad_y[3] = f64::NAN;
    assert!(SufficientStats::compute(&grid, x.as_ref(), bad_y.as_ref(), o).is_err());
    let mut outside = x.clone();
    outside[(40, 1)] = 5.0;
    let e = SufficientStats::compute(&grid, outside.as_ref(), y.as_ref(), o).unwrap_err();
    assert!(matches!(
        e,
        StructuredError::OutsideGrid {
            point: 40,
            dim: 1,
            ..
        }
    ));
    let mut acc = StatsAccumulator::new(&grid, o).unwrap();
    acc.add_chunk(x.subrows(0, 10), y.subrows(0, 10)).unwrap();
    assert!(acc.add_chunk(outside.as_ref(), y.as_ref()).is_err());
    assert_eq!(acc.num_points(), 10);
    let only10 = SufficientStats::compute(&grid, x.subrows(0, 10), y.subrows(0, 10), o).unwrap();
    assert_stats_close(&acc.finish().unwrap(), &only10);
    // Merging statistics of different grids or schemes.
    let other = RegularGrid::from_bounds(&[0.0, 0.0], &[1.0, 1.0], &[8, 8]).unwrap();
    let a = SufficientStats::empty(&grid, o).unwrap();
    let b = SufficientStats::empty(&other, o).unwrap();
    assert!(a.clone().merge(&b).is_err());
    let c = SufficientStats::empty(&grid, opts(InterpolationScheme::Linear)).unwrap();
    assert!(a.merge(&c).is_err());
    assert!(StencilGram::zeros(&[], 3).is_err());
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(24))]
    #[test]
    fn random_shapes_match_dense(
        sizes in prop::collection::vec(6usize..9, 1..4),
        n in 1usize..120,
        cubic in any::<bool>(),
        seed in 0u64..10_000,
    ) {
        let scheme = if cubic { InterpolationScheme::Cubic } else { InterpolationScheme::Linear };
        check_against_dense(&sizes, n, scheme, seed);
    }
}

/// Bitwise equality of two sets of statistics.
fn identical(a: &SufficientStats, b: &SufficientStats) -> bool {
    a.yty().to_bits() == b.yty().to_bits() && identical_s_and_t(a, b)
}

/// Bitwise equality of `S` and `t` (and the same number of points).
fn identical_s_and_t(a: &SufficientStats, b: &SufficientStats) -> bool {
    a.num_points() == b.num_points()
        && a.wty()
            .iter()
            .zip(b.wty().iter())
            .all(|(u, v)| u.to_bits() == v.to_bits())
        && a.gram()
            .values()
            .iter()
            .zip(b.gram().values())
            .all(|(u, v)| u.to_bits() == v.to_bits())
}

#[test]
fn results_do_not_depend_on_thread_scheduling() {
    // Work is assigned statically and summed in a fixed order, so repeated runs on the same
    // pool give the same bits (a model fitted twice must not differ), on both paths.
    let (grid, x, y) = setup(&[12, 11, 10], 20_000, InterpolationScheme::Cubic, 9);
    let o = opts(InterpolationScheme::Cubic);
    let chunks = || {
        (0..x.nrows()).step_by(700).map(|s| {
            let len = 700.min(x.nrows() - s);
            (
                x.as_ref().subrows(s, len).to_owned(),
                y.as_ref().subrows(s, len).to_owned(),
            )
        })
    };
    for path in PATHS {
        let first =
            SufficientStats::compute_with_path(&grid, x.as_ref(), y.as_ref(), o, path).unwrap();
        let streamed = SufficientStats::from_chunks_with_path(&grid, o, chunks(), path).unwrap();
        for _ in 0..5 {
            let again =
                SufficientStats::compute_with_path(&grid, x.as_ref(), y.as_ref(), o, path).unwrap();
            assert!(identical(&first, &again), "{path:?}");
            let again = SufficientStats::from_chunks_with_path(&grid, o, chunks(), path).unwrap();
            assert!(identical(&streamed, &again), "{path:?}");
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
fn point_scatter_does_not_depend_on_the_thread_count() {
    // The scatter's summation order is a function of the grid and the data only (slabs, sort
    // keys, buffer flushes), so any pool gives the same bits; here on a grid with many slabs.
    let scheme = InterpolationScheme::Cubic;
    let (grid, x, y) = setup(&[70, 9, 8], 30_000, scheme, 13);
    let o = opts(scheme);
    let p = StatsPath::PointScatter;
    let chunks = || {
        (0..x.nrows()).step_by(4_000).map(|s| {
            let len = 4_000.min(x.nrows() - s);
            (
                x.as_ref().subrows(s, len).to_owned(),
                y.as_ref().subrows(s, len).to_owned(),
            )
        })
    };
    let one = on_pool(1, || {
        SufficientStats::compute_with_path(&grid, x.as_ref(), y.as_ref(), o, p).unwrap()
    });
    let one_streamed = on_pool(1, || {
        SufficientStats::from_chunks_with_path(&grid, o, chunks(), p).unwrap()
    });
    for threads in [2, 3, 4] {
        let many = on_pool(threads, || {
            SufficientStats::compute_with_path(&grid, x.as_ref(), y.as_ref(), o, p).unwrap()
        });
        assert!(identical(&one, &many), "{threads} threads");
        let streamed = on_pool(threads, || {
            SufficientStats::from_chunks_with_path(&grid, o, chunks(), p).unwrap()
        });
        assert!(
            identical(&one_streamed, &streamed),
            "{threads} threads, streamed"
        );
    }
    // The streamed pass scatters the same points in the same order (one buffer flush either
    // way), so S and t are the same bits; yᵀy is summed per chunk.
    assert!(one
        .gram()
        .values()
        .iter()
        .zip(one_streamed.gram().values())
        .all(|(u, v)| u.to_bits() == v.to_bits()));
    assert!(one
        .wty()
        .iter()
        .zip(one_streamed.wty().iter())
        .all(|(u, v)| u.to_bits() == v.to_bits()));
    assert!((one.yty() - one_streamed.yty()).abs() <= 1e-13 * one.yty());
}

/// Largest relative difference of `S` and `t` between two sets of statistics.
fn path_difference(a: &SufficientStats, b: &SufficientStats) -> (f64, f64) {
    let (sa, sb) = (a.gram().values(), b.gram().values());
    let scale = sb.iter().fold(0.0f64, |m, v| m.max(v.abs()));
    let ds = sa
        .iter()
        .zip(sb)
        .fold(0.0f64, |m, (u, v)| m.max((u - v).abs()))
        / scale;
    let dt = (a.wty() - b.wty()).norm_max() / b.wty().norm_max();
    (ds, dt)
}

#[test]
fn the_two_paths_agree_d1_d2_d3_linear_and_cubic() {
    // Sparse (about one point per cell) and dense (hundreds per cell) data on each shape.
    for scheme in [InterpolationScheme::Linear, InterpolationScheme::Cubic] {
        for (sizes, n) in [
            (vec![40], 30),
            (vec![40], 20_000),
            (vec![25, 30], 600),
            (vec![12, 14], 30_000),
            (vec![20, 18, 16], 3_000),
            (vec![9, 8, 10], 40_000),
        ] {
            let (grid, x, y) = setup(&sizes, n, scheme, 17);
            let o = opts(scheme);
            let m = SufficientStats::compute_with_path(
                &grid,
                x.as_ref(),
                y.as_ref(),
                o,
                StatsPath::CellMoments,
            )
            .unwrap();
            let s = SufficientStats::compute_with_path(
                &grid,
                x.as_ref(),
                y.as_ref(),
                o,
                StatsPath::PointScatter,
            )
            .unwrap();
            let (ds, dt) = path_difference(&s, &m);
            assert!(
                ds <= 1e-12 && dt <= 1e-12,
                "{sizes:?} {scheme:?} n={n}: S {ds:e}, t {dt:e}"
            );
            assert!((s.yty() - m.yty()).abs() <= 1e-12 * m.yty());
            assert_eq!(s.num_points(), m.num_points());
            // Both are exactly symmetric.
            for stats in [&s, &m] {
                let g = stats.gram();
                let mm = g.order();
                for (i, j) in [(0, 1), (mm / 2, mm / 2 + 1), (mm / 3, mm / 3 + 2)] {
                    let j = j.min(mm - 1);
                    assert_eq!(g.entry(i, j), g.entry(j, i));
                }
            }
        }
    }
}

#[test]
fn point_scatter_streams_merges_and_reports_errors() {
    let scheme = InterpolationScheme::Cubic;
    let (grid, x, y) = setup(&[30, 8, 7], 5_000, scheme, 23);
    let o = opts(scheme);
    let p = StatsPath::PointScatter;
    let whole = SufficientStats::compute_with_path(
        &grid,
        x.as_ref(),
        y.as_ref(),
        o,
        StatsPath::CellMoments,
    )
    .unwrap();
    for chunk in [1usize, 333, 5_000] {
        let chunks: Vec<(Mat<f64>, Col<f64>)> = (0..5_000)
            .step_by(chunk)
            .map(|a| sub(&x, &y, a, (a + chunk).min(5_000)))
            .collect();
        let s = SufficientStats::from_chunks_with_path(&grid, o, chunks, p).unwrap();
        assert_stats_close(&s, &whole);
    }
    // Accumulators on the scatter path, merged with each other and with a moment one.
    let mut a = StatsAccumulator::with_path(&grid, o, p).unwrap();
    assert_eq!(a.path(), StatsPath::PointScatter);
    let mut b = StatsAccumulator::with_path(&grid, o, p).unwrap();
    let mut c = StatsAccumulator::with_path(&grid, o, StatsPath::CellMoments).unwrap();
    assert_eq!(c.path(), StatsPath::CellMoments);
    a.add_chunk(x.subrows(0, 2_000), y.subrows(0, 2_000))
        .unwrap();
    b.add_chunk(x.subrows(2_000, 1_000), y.subrows(2_000, 1_000))
        .unwrap();
    c.add_chunk(x.subrows(3_000, 2_000), y.subrows(3_000, 2_000))
        .unwrap();
    // An error leaves the accumulator unchanged.
    let mut outside = x.subrows(0, 10).to_owned();
    outside[(7, 2)] = -3.0;
    let e = a.add_chunk(outside.as_ref(), y.subrows(0, 10)).unwrap_err();
    assert!(matches!(
        e,
        StructuredError::OutsideGrid {
            point: 7,
            dim: 2,
            ..
        }
    ));
    assert_eq!(a.num_points(), 2_000);
    let ab = a.clone().merge(b.clone()).unwrap();
    assert_eq!(ab.path(), StatsPath::PointScatter);
    let abc = ab.merge(c.clone()).unwrap();
    assert_eq!(abc.path(), StatsPath::PointScatter);
    assert_eq!(abc.num_points(), 5_000);
    assert_stats_close(&abc.finish().unwrap(), &whole);
    let cab = c.merge(a.merge(b).unwrap()).unwrap();
    assert_stats_close(&cab.finish().unwrap(), &whole);
    // Errors of the whole-data entry point name the global row.
    let mut bad = x.clone();
    bad[(4_321, 0)] = f64::INFINITY;
    let e = SufficientStats::compute_with_path(&grid, bad.as_ref(), y.as_ref(), o, p).unwrap_err();
    assert!(matches!(
        e,
        StructuredError::OutsideGrid {
            point: 4_321,
            dim: 0,
            ..
        }
    ));
    // No data: all zero, like the moment path.
    let none = SufficientStats::from_chunks_with_path(&grid, o, std::iter::empty(), p).unwrap();
    assert_eq!(none, SufficientStats::empty(&grid, o).unwrap());
}

#[test]
fn points_on_nodes_give_exact_zeros_on_both_paths() {
    // Every point on a grid node: cubic weights (0, 1, 0, 0), so S is diagonal.
    let grid = RegularGrid::from_bounds(&[0.0, 0.0], &[9.0, 9.0], &[10, 10]).unwrap();
    let x = Mat::from_fn(49, 2, |i, l| {
        (2 + if l == 0 { i / 7 } else { i % 7 }) as f64
    });
    let y = Col::from_fn(49, |i| i as f64);
    let o = opts(InterpolationScheme::Cubic);
    for path in [StatsPath::CellMoments, StatsPath::PointScatter] {
        let s = SufficientStats::compute_with_path(&grid, x.as_ref(), y.as_ref(), o, path).unwrap();
        assert_eq!(s.gram().nnz(), 49, "{path:?}");
        let diag = s.gram().diagonal().unwrap();
        assert_eq!(diag.iter().sum::<f64>(), 49.0);
    }
}

#[test]
fn auto_takes_moments_for_dense_data_and_the_scatter_for_sparse_data() {
    let cubic = InterpolationScheme::Cubic;
    // 30³ grid (27³ cells), 10^6 points: about 50 per cell.
    let dense = SufficientStats::plan(&[30, 30, 30], cubic, Some(1_000_000));
    assert_eq!(dense.path, StatsPath::CellMoments);
    assert!(dense.points_per_cell.unwrap() >= MOMENT_MIN_POINTS_PER_CELL);
    // 100×100×80 grid, 10^6 points: 1.4 per cell.
    let fine = SufficientStats::plan(&[100, 100, 80], cubic, Some(1_000_000));
    assert_eq!(fine.path, StatsPath::PointScatter);
    // The scatter needs the stencil (its stored half), t and a buffer of at most 1/8 of the
    // stencil.
    let m = 800_000u128;
    assert_eq!(fine.output_bytes, 8 * m * (172 + 1));
    assert!(fine.scratch_bytes <= fine.output_bytes / 8);
    // The radar grid of Table 1 at n = 10.5M: the moment records alone would be tens of GiB.
    let radar = SufficientStats::plan(&[400, 400, 40], cubic, Some(10_500_000));
    assert_eq!(radar.path, StatsPath::PointScatter);
    assert!(radar.peak_bytes() < 10u128 << 30);
    // Unknown n: the moments when they fit in memory, the scatter when they cannot.
    assert_eq!(
        SufficientStats::plan(&[30, 30, 30], cubic, None).path,
        StatsPath::CellMoments
    );
    assert_eq!(
        SufficientStats::plan(&[4000, 4000, 400], cubic, None).path,
        StatsPath::PointScatter
    );
    // What the entry points do follows the plan: a streamed dense pass with an exact length
    // (the moment path's result depends on the thread count, the scatter's does not, so
    // compare with both forced paths).
    let (grid, x, y) = setup(&[8, 8], 20_000, cubic, 5);
    let o = opts(cubic);
    assert_eq!(
        SufficientStats::plan(grid.sizes(), cubic, Some(20_000)).path,
        StatsPath::CellMoments
    );
    let chunks = || {
        (0..20_000)
            .step_by(1_000)
            .map(|a| sub(&x, &y, a, a + 1_000))
    };
    let auto = SufficientStats::from_chunks(&grid, o, chunks()).unwrap();
    let forced =
        SufficientStats::from_chunks_with_path(&grid, o, chunks(), StatsPath::CellMoments).unwrap();
    assert!(identical(&auto, &forced));
    let (grid, x, y) = setup(&[40, 40], 2_000, cubic, 5);
    let auto = SufficientStats::compute(&grid, x.as_ref(), y.as_ref(), o).unwrap();
    let forced = SufficientStats::compute_with_path(
        &grid,
        x.as_ref(),
        y.as_ref(),
        o,
        StatsPath::PointScatter,
    )
    .unwrap();
    assert!(identical(&auto, &forced));
}

/// A statistic rebuilt from its parts (as a saved model reads them back) equals it, and
/// each part is checked.
#[test]
fn from_parts_of_a_statistic_is_the_statistic() {
    for (sizes, scheme) in [
        (vec![12, 9], InterpolationScheme::Cubic),
        (vec![10, 7, 6], InterpolationScheme::Linear),
    ] {
        let (grid, x, y) = setup(&sizes, 150, scheme, 31);
        let s = SufficientStats::compute(&grid, x.as_ref(), y.as_ref(), opts(scheme)).unwrap();
        let radius = s.gram().radius();
        let gram = StencilGram::from_values(&sizes, radius, s.gram().values().to_vec()).unwrap();
        assert_eq!(&gram, s.gram());
        let parts = |gram: StencilGram, wty: Col<f64>, yty: f64, n: usize| {
            SufficientStats::from_parts(grid.clone(), s.options(), gram, wty, yty, n)
        };
        let back = parts(gram.clone(), s.wty().to_owned(), s.yty(), s.num_points()).unwrap();
        assert!(identical(&back, &s));
        assert_eq!(back, s);

        let bad = |r: Result<SufficientStats, StructuredError>| {
            matches!(r, Err(StructuredError::InvalidArgument { .. }))
        };
        let wty = || s.wty().to_owned();
        assert!(bad(parts(gram.clone(), wty(), s.yty(), 0)));
        assert!(bad(parts(gram.clone(), wty(), -1.0, 5)));
        assert!(bad(parts(gram.clone(), wty(), f64::NAN, 5)));
        assert!(bad(parts(gram.clone(), Col::zeros(3), s.yty(), 5)));
        let mut nan = wty();
        nan[2] = f64::INFINITY;
        assert!(matches!(
            parts(gram.clone(), nan, s.yty(), 5),
            Err(StructuredError::Linalg(_))
        ));
        // A stencil of the other scheme's radius, or on another grid.
        let other = StencilGram::zeros(&sizes, if radius == 3 { 1 } else { 3 }).unwrap();
        assert!(bad(parts(other, wty(), s.yty(), 5)));
        let mut smaller = sizes.clone();
        smaller[0] -= 1;
        let other = StencilGram::zeros(&smaller, radius).unwrap();
        assert!(bad(parts(other, wty(), s.yty(), 5)));
    }
}

#[test]
fn stencil_values_are_checked() {
    let g = StencilGram::zeros(&[5, 4], 1).unwrap();
    let len = g.values().len();
    assert_eq!(len, 20 * g.row_len());
    let bad = |v: Vec<f64>| {
        matches!(
            StencilGram::from_values(&[5, 4], 1, v),
            Err(StructuredError::InvalidArgument { name: "values", .. })
        )
    };
    assert!(bad(vec![0.0; len - 1]));
    assert!(bad(vec![0.0; len + 1]));
    let mut v = vec![0.0; len];
    v[7] = f64::NAN;
    assert!(bad(v));
    // The last node's entries after the diagonal all leave the grid.
    let mut v = vec![1.0; len];
    assert!(bad(v.clone()));
    for (j, row) in v.chunks_exact_mut(g.row_len()).enumerate() {
        let multi = [j / 4, j % 4];
        for (t, val) in row.iter_mut().enumerate() {
            let delta = g.stencil_offset(g.stencil_len() / 2 + t).unwrap();
            let inside = (0..2).all(|l| {
                let i = multi[l] as isize + delta[l];
                i >= 0 && (i as usize) < [5, 4][l]
            });
            if !inside {
                *val = 0.0;
            }
        }
    }
    let ok = StencilGram::from_values(&[5, 4], 1, v.clone()).unwrap();
    assert_eq!(ok.values(), v.as_slice());
    assert!(matches!(
        StencilGram::from_values(&[], 1, vec![]),
        Err(StructuredError::InvalidArgument { .. })
    ));
}

/// The cell moments of `x, y` added by one accumulator, `rows` points per chunk.
fn moments_in_chunks(
    grid: &RegularGrid,
    scheme: InterpolationScheme,
    x: &Mat<f64>,
    y: &Col<f64>,
    rows: usize,
) -> SufficientStats {
    let mut acc = StatsAccumulator::with_path(grid, opts(scheme), StatsPath::CellMoments).unwrap();
    let mut s = 0;
    while s < x.nrows() {
        let (xs, ys) = sub(x, y, s, (s + rows).min(x.nrows()));
        acc.add_chunk(xs.as_ref(), ys.as_ref()).unwrap();
        s += rows;
    }
    acc.finish().unwrap()
}

#[test]
fn cell_moment_kernel_batches_and_builds_give_the_bits_of_point_by_point_sums() {
    // The moment kernel updates each cell's record for up to 64 of its points at a time (in
    // the AVX2 build where the CPU has it) and contracts the moments over unordered pairs;
    // each entry still receives its points' terms one at a time, in order. So one big chunk
    // (batches of many points per cell, some longer than a batch), chunks of one point (no
    // batching), and the baseline build all give the same bits.
    use gp_linalg::simd::{set_max_simd_level, SimdLevel};
    for (sizes, scheme, n) in [
        (vec![7], InterpolationScheme::Cubic, 2_000),
        (vec![7, 6], InterpolationScheme::Cubic, 3_000),
        (vec![7, 6, 6], InterpolationScheme::Cubic, 4_000),
        (vec![5, 4, 4], InterpolationScheme::Linear, 4_000),
        (vec![6, 6, 6, 6], InterpolationScheme::Cubic, 1_500),
    ] {
        let (grid, x, y) = setup(&sizes, n, scheme, 41);
        let whole = moments_in_chunks(&grid, scheme, &x, &y, n);
        let single = moments_in_chunks(&grid, scheme, &x, &y, 1);
        // (yᵀy is summed in the order the points are visited, by cell within a chunk.)
        assert!(
            identical_s_and_t(&whole, &single),
            "{sizes:?} {scheme:?}: batched ≠ point by point"
        );
        assert!((whole.yty() - single.yty()).abs() <= 1e-12 * single.yty());
        let previous = set_max_simd_level(SimdLevel::Baseline);
        let baseline = moments_in_chunks(&grid, scheme, &x, &y, n);
        set_max_simd_level(previous);
        assert!(
            identical(&whole, &baseline),
            "{sizes:?} {scheme:?}: dispatched ≠ baseline"
        );
    }
}
