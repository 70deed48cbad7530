//! The fast stencil product `S x` against the straightforward product with the CSR form of
//! `S`: tiny grids where every node is a boundary node, grids with empty regions, linear and
//! cubic stencils, the sequential and the parallel path, strided vectors, thread-count
//! independence and the refresh of the cached empty-row flags after a merge.

use faer::{Col, ColRef, Mat};
use gp_structured::{
    InterpolationOptions, InterpolationScheme, LinearOperator, OutOfGrid, RegularGrid, StencilGram,
    SufficientStats,
};
use rand::{Rng, SeedableRng};
use rand_chacha::ChaCha8Rng;

/// Stored values from which the product runs in parallel (mirrors the library's threshold;
/// only used to check that the test grids cover both paths).
const PAR_MIN_VALUES: usize = 1 << 20;

fn opts(scheme: InterpolationScheme) -> InterpolationOptions {
    InterpolationOptions {
        scheme,
        out_of_grid: OutOfGrid::Error,
    }
}

/// Statistics of `n` uniform points in the box `[lo_l, hi_l]` of `[0, 1]^d`, on a grid of the
/// given sizes over `[0, 1]^d` (padded), so nodes far from the box have all-zero rows.
fn stats_in_box(
    sizes: &[usize],
    n: usize,
    lo: &[f64],
    hi: &[f64],
    scheme: InterpolationScheme,
    seed: u64,
) -> SufficientStats {
    let d = sizes.len();
    let mut rng = ChaCha8Rng::seed_from_u64(seed);
    let x = Mat::from_fn(n, d, |_, l| lo[l] + (hi[l] - lo[l]) * rng.random::<f64>());
    let y = Col::from_fn(n, |i| (2.0 * x[(i, 0)]).cos() + rng.random::<f64>());
    let corners = Mat::from_fn(2, d, |i, _| i as f64);
    let grid =
        RegularGrid::from_data(corners.as_ref(), sizes, scheme.recommended_padding()).unwrap();
    SufficientStats::compute(&grid, x.as_ref(), y.as_ref(), opts(scheme)).unwrap()
}

fn full(d: usize) -> (Vec<f64>, Vec<f64>) {
    (vec![0.0; d], vec![1.0; d])
}

fn random_vec(m: usize, seed: u64) -> Col<f64> {
    let mut rng = ChaCha8Rng::seed_from_u64(seed);
    Col::from_fn(m, |_| rng.random::<f64>() - 0.5)
}

/// `out_i = Σ_j S_ij x_j` from the CSR form, and the scale `Σ_j |S_ij x_j|` of each entry.
fn reference(gram: &StencilGram, x: ColRef<'_, f64>) -> (Vec<f64>, Vec<f64>) {
    let csr = gram.to_csr().unwrap();
    csr.outer_iterator()
        .map(|row| {
            row.iter().fold((0.0, 0.0), |(s, a), (j, &v)| {
                (s + v * x[j], a + (v * x[j]).abs())
            })
        })
        .unzip()
}

/// Asserts `S x` equals the reference to `1e-14` relative to the scale of each entry, and
/// returns the product.
fn check_product(gram: &StencilGram, x: ColRef<'_, f64>) -> Col<f64> {
    let m = gram.order();
    let mut out = Col::from_fn(m, |_| f64::NAN);
    gram.matvec(x, out.as_mut());
    let (want, scale) = reference(gram, x);
    let norm = scale.iter().fold(0.0f64, |a, &b| a.max(b));
    for i in 0..m {
        let err = (out[i] - want[i]).abs();
        assert!(
            err <= 1e-14 * scale[i] + 1e-300,
            "row {i} of {m}: {} vs {} (scale {})",
            out[i],
            want[i],
            scale[i]
        );
        if scale[i] == 0.0 {
            assert_eq!(out[i], 0.0, "row {i} should be exactly zero");
        }
    }
    assert!(norm > 0.0 || gram.nnz() == 0);
    out
}

fn check_case(
    sizes: &[usize],
    n: usize,
    lo: &[f64],
    hi: &[f64],
    scheme: InterpolationScheme,
    seed: u64,
) -> SufficientStats {
    let stats = stats_in_box(sizes, n, lo, hi, scheme, seed);
    let gram = stats.gram();
    assert!(gram.nnz() > 0);
    let x = random_vec(gram.order(), seed + 1);
    // Twice: the first call also computes the empty-row flags, the second uses them.
    let a = check_product(gram, x.as_ref());
    let b = check_product(gram, x.as_ref());
    assert_eq!(a, b);
    stats
}

#[test]
fn tiny_grids_where_all_or_most_nodes_are_boundary_nodes() {
    use InterpolationScheme::{Cubic, Linear};
    for (sizes, scheme) in [
        // Cubic (r = 3) needs 7 nodes per dimension for one interior node, and the padded
        // data-fitted grid at least 6: all nodes are boundary nodes on these grids.
        (vec![6], Cubic),
        (vec![6, 6], Cubic),
        (vec![6, 6, 6], Cubic),
        // One interior node at most.
        (vec![7], Cubic),
        (vec![7, 6], Cubic),
        (vec![6, 7, 7], Cubic),
        (vec![8], Cubic),
        // Linear (r = 1) needs 4 nodes: 2 of 4 per dimension are boundary nodes.
        (vec![4], Linear),
        (vec![4, 4], Linear),
        (vec![4, 5, 4], Linear),
    ] {
        let (lo, hi) = full(sizes.len());
        check_case(&sizes, 200, &lo, &hi, scheme, 3);
    }
}

#[test]
fn small_grids_d1_d2_d3_linear_and_cubic() {
    use InterpolationScheme::{Cubic, Linear};
    for (sizes, scheme) in [
        (vec![40], Cubic),
        (vec![17, 23], Cubic),
        (vec![9, 11, 10], Cubic),
        (vec![50], Linear),
        (vec![12, 15], Linear),
        (vec![7, 8, 9], Linear),
    ] {
        let (lo, hi) = full(sizes.len());
        check_case(&sizes, 3000, &lo, &hi, scheme, 5);
    }
}

#[test]
fn grids_with_empty_regions() {
    use InterpolationScheme::{Cubic, Linear};
    for (sizes, lo, hi, scheme) in [
        (vec![60], vec![0.2], vec![0.5], Cubic),
        (vec![20, 24], vec![0.0, 0.5], vec![0.4, 1.0], Cubic),
        (
            vec![12, 10, 14],
            vec![0.5, 0.0, 0.1],
            vec![1.0, 1.0, 0.4],
            Cubic,
        ),
        (
            vec![12, 10, 14],
            vec![0.5, 0.0, 0.1],
            vec![1.0, 1.0, 0.4],
            Linear,
        ),
    ] {
        let stats = check_case(&sizes, 2000, &lo, &hi, scheme, 11);
        let gram = stats.gram();
        let h = gram.row_len();
        let empty = gram
            .values()
            .chunks_exact(h)
            .filter(|r| r.iter().all(|v| *v == 0.0))
            .count();
        assert!(
            empty > gram.order() / 4,
            "{sizes:?}: only {empty} empty rows"
        );
    }
}

#[test]
fn parallel_path_d1_d2_d3() {
    use InterpolationScheme::Cubic;
    for (sizes, lo, hi) in [
        (vec![300_000], vec![0.0], vec![0.7]),
        (vec![220, 200], vec![0.0, 0.3], vec![1.0, 1.0]),
        (vec![19, 18, 18], vec![0.0, 0.0, 0.0], vec![0.6, 1.0, 1.0]),
    ] {
        let stats = check_case(&sizes, 20_000, &lo, &hi, Cubic, 17);
        assert!(stats.gram().values().len() >= PAR_MIN_VALUES);
    }
}

#[test]
fn result_does_not_depend_on_the_thread_count() {
    let stats = stats_in_box(
        &[19, 18, 18],
        20_000,
        &[0.1, 0.0, 0.0],
        &[0.8, 1.0, 1.0],
        InterpolationScheme::Cubic,
        23,
    );
    let gram = stats.gram();
    let x = random_vec(gram.order(), 29);
    let run = |threads: usize| {
        let pool = rayon::ThreadPoolBuilder::new()
            .num_threads(threads)
            .build()
            .unwrap();
        pool.install(|| gram.apply(x.as_ref()).unwrap())
    };
    let one = run(1);
    for threads in [2, 3, 4] {
        assert_eq!(run(threads), one, "{threads} threads");
    }
}

#[test]
fn strided_vectors_and_blocks() {
    let stats = stats_in_box(
        &[9, 8, 10],
        3000,
        &[0.0, 0.2, 0.0],
        &[1.0, 0.7, 1.0],
        InterpolationScheme::Cubic,
        31,
    );
    let gram = stats.gram();
    let m = gram.order();
    let x = random_vec(m, 37);
    let want = gram.apply(x.as_ref()).unwrap();
    // Row views of `2 × m` matrices have stride 2.
    let xs = Mat::from_fn(2, m, |i, j| if i == 0 { x[j] } else { f64::NAN });
    let mut out = Mat::<f64>::zeros(2, m);
    gram.matvec(
        xs.row(0).transpose(),
        out.as_mut().row_mut(1).transpose_mut(),
    );
    for j in 0..m {
        assert_eq!(out[(1, j)], want[j]);
    }
    // Blocks agree column by column.
    let xb = Mat::from_fn(m, 3, |i, c| x[i] * (c as f64 + 1.0));
    let ob = gram.apply_block(xb.as_ref()).unwrap();
    for c in 0..3 {
        let oc = gram.apply(xb.col(c)).unwrap();
        for i in 0..m {
            assert_eq!(ob[(i, c)], oc[i]);
        }
    }
}

#[test]
fn merge_refreshes_the_empty_row_flags() {
    // `a` has data only in the lower half, `b` only in the upper half: after the merge the
    // rows that were empty in `a` (and flagged so by its first product) are not.
    let scheme = InterpolationScheme::Cubic;
    let sizes = [10, 12, 9];
    let a = stats_in_box(&sizes, 2000, &[0.0; 3], &[0.4, 1.0, 1.0], scheme, 41);
    let b = stats_in_box(&sizes, 2000, &[0.6, 0.0, 0.0], &[1.0; 3], scheme, 43);
    let x = random_vec(a.gram().order(), 47);
    let before = check_product(a.gram(), x.as_ref());
    let merged = a.merge(&b).unwrap();
    let after = check_product(merged.gram(), x.as_ref());
    assert_ne!(before, after);
    let b_only = check_product(b.gram(), x.as_ref());
    for i in 0..after.nrows() {
        assert!((after[i] - before[i] - b_only[i]).abs() <= 1e-12 * (1.0 + after[i].abs()));
    }
}

#[test]
fn zero_stencils_of_any_radius() {
    for (sizes, radius) in [
        (vec![5], 0),
        (vec![5], 2),
        (vec![4, 3], 2),
        (vec![3, 4, 2], 4),
        (vec![6, 5, 4], 1),
    ] {
        let gram = StencilGram::zeros(&sizes, radius).unwrap();
        let x = random_vec(gram.order(), 53);
        let out = gram.apply(x.as_ref()).unwrap();
        assert!(out.iter().all(|v| *v == 0.0));
        // Equality ignores the cached flags.
        assert_eq!(gram, StencilGram::zeros(&sizes, radius).unwrap());
    }
}
