//! GRIEF Algorithm 1 (the p largest eigenvalues of a Kronecker product) against brute force.
//!
//! The brute force forms every product, sums the factor logarithms in the same order as the
//! algorithm (factor 1 first), and sorts by (value descending, flat index ascending), which
//! is the documented output order. Because the summation order is the same, exactly tied
//! values are bit-identical in both, so whole index lists can be compared, not only values.

use gp_linalg::LinalgError;
use gp_structured::{top_eigenvalues, StructuredError, TopEigenOptions};
use proptest::prelude::*;
use rand::{Rng, SeedableRng};
use rand_chacha::ChaCha8Rng;

/// All multi-indices in Kronecker order (last fastest) with their log sums, sorted by the
/// documented order.
fn brute_force(spectra: &[Vec<f64>]) -> Vec<(f64, Vec<usize>)> {
    let mut rows: Vec<(f64, Vec<usize>)> = vec![(0.0, vec![])];
    for s in spectra {
        let mut next = Vec::new();
        for (v, idx) in &rows {
            for (b, &x) in s.iter().enumerate() {
                let mut i = idx.clone();
                i.push(b);
                next.push((v + x.ln(), i));
            }
        }
        rows = next;
    }
    // Stable sort on the value keeps the flat (= lexicographic) order among equal values.
    rows.sort_by(|a, b| b.0.total_cmp(&a.0));
    rows
}

fn check_against_brute_force(spectra: &[Vec<f64>], p: usize) -> Result<(), TestCaseError> {
    let refs: Vec<&[f64]> = spectra.iter().map(Vec::as_slice).collect();
    let top = top_eigenvalues(&refs, p, &TopEigenOptions::default()).unwrap();
    let all = brute_force(spectra);
    let kept = p.min(all.len());
    prop_assert_eq!(top.len(), kept);
    prop_assert_eq!(top.num_factors(), spectra.len());
    prop_assert_eq!(top.floored(), 0);
    for (j, (value, idx)) in all.iter().take(kept).enumerate() {
        prop_assert_eq!(top.log_values()[j], *value);
        prop_assert_eq!(top.index(j).unwrap(), idx.as_slice());
        // The product of the selected factor eigenvalues is the reported eigenvalue.
        let product: f64 = idx.iter().zip(spectra).map(|(&i, s)| s[i]).product();
        prop_assert!((top.values()[j] - product).abs() <= 1e-12 * product);
    }
    prop_assert!(top.index(kept).is_none());
    Ok(())
}

fn spectra_strategy() -> impl Strategy<Value = (Vec<usize>, u64)> {
    (prop::collection::vec(1usize..=6, 1..=5), any::<u64>())
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(256))]

    #[test]
    fn random_spectra_match_brute_force((dims, seed) in spectra_strategy(), p_frac in 0.0f64..1.2) {
        let mut rng = ChaCha8Rng::seed_from_u64(seed);
        let spectra: Vec<Vec<f64>> = dims
            .iter()
            .map(|&m| (0..m).map(|_| rng.random_range(1e-3..10.0)).collect())
            .collect();
        let n: usize = dims.iter().product();
        let p = (p_frac * n as f64).round() as usize;
        check_against_brute_force(&spectra, p)?;
    }

    #[test]
    fn tied_spectra_match_brute_force_including_tie_order(
        (dims, seed) in spectra_strategy(),
        p_frac in 0.0f64..1.2,
    ) {
        // Every factor eigenvalue is 1 or c: products are c^k, and every sum of logs with
        // k copies of log c is computed identically (adding log 1 = 0 is exact), so equal
        // products are exact ties in floating point too.
        let mut rng = ChaCha8Rng::seed_from_u64(seed);
        let c = rng.random_range(0.2..5.0);
        let spectra: Vec<Vec<f64>> = dims
            .iter()
            .map(|&m| (0..m).map(|_| if rng.random_bool(0.5) { 1.0 } else { c }).collect())
            .collect();
        let n: usize = dims.iter().product();
        let p = (p_frac * n as f64).round() as usize;
        check_against_brute_force(&spectra, p)?;
    }
}

#[test]
fn worked_example_from_the_spec() {
    let top = top_eigenvalues(
        &[&[4.0, 1.0], &[3.0, 2.0, 0.5]],
        3,
        &TopEigenOptions::default(),
    )
    .unwrap();
    assert_eq!(top.indices(), &[0, 0, 0, 1, 1, 0]);
    let expected = [12.0f64, 8.0, 3.0];
    for (l, e) in top.log_values().iter().zip(expected) {
        assert!((l - e.ln()).abs() < 1e-14);
    }
}

#[test]
fn exact_ties_keep_the_lexicographically_first() {
    // All six products equal 6: keep (0,0), (0,1), (1,0), (1,1).
    let top = top_eigenvalues(
        &[&[2.0, 2.0, 2.0], &[3.0, 3.0]],
        4,
        &TopEigenOptions::default(),
    )
    .unwrap();
    assert_eq!(top.indices(), &[0, 0, 0, 1, 1, 0, 1, 1]);
    // Three factors of ones: the first five multi-indices in flat order.
    let ones = [1.0; 3];
    let top = top_eigenvalues(&[&ones, &ones, &ones], 5, &TopEigenOptions::default()).unwrap();
    assert_eq!(
        top.indices(),
        &[0, 0, 0, 0, 0, 1, 0, 0, 2, 0, 1, 0, 0, 1, 1]
    );
    // Ties behind a strictly larger value.
    let top = top_eigenvalues(
        &[&[1.0, 5.0, 1.0], &[2.0, 2.0]],
        3,
        &TopEigenOptions::default(),
    )
    .unwrap();
    assert_eq!(top.indices(), &[1, 0, 1, 1, 0, 0]);
}

#[test]
fn non_positive_eigenvalues_are_floored_or_rejected() {
    let spectra: [&[f64]; 2] = [&[2.0, 0.0, -1e-3], &[1.0, 0.5]];
    let top = top_eigenvalues(&spectra, 6, &TopEigenOptions::default()).unwrap();
    assert_eq!(top.floored(), 2);
    assert_eq!(top.len(), 6);
    let floor = 1e-14 * 2.0;
    assert!((top.values()[5] - floor * 0.5).abs() < 1e-12 * floor);
    assert!(top.log_values().iter().all(|v| v.is_finite()));
    // The floored pair are ties; flat order decides: (1, 0) before (2, 0).
    assert_eq!(top.index(2), Some(&[1, 0][..]));
    assert_eq!(top.index(3), Some(&[2, 0][..]));

    let strict = TopEigenOptions {
        relative_floor: 0.0,
    };
    assert!(matches!(
        top_eigenvalues(&spectra, 2, &strict),
        Err(StructuredError::Linalg(LinalgError::NotPositive {
            index: 1,
            ..
        }))
    ));
    assert!(matches!(
        top_eigenvalues(&[&[0.0, -1.0]], 1, &TopEigenOptions::default()),
        Err(StructuredError::Linalg(LinalgError::NotPositive { .. }))
    ));
    assert!(matches!(
        top_eigenvalues(&[&[1.0, f64::NAN]], 1, &TopEigenOptions::default()),
        Err(StructuredError::Linalg(LinalgError::NonFinite { .. }))
    ));
    assert!(top_eigenvalues(&[], 1, &TopEigenOptions::default()).is_err());
    assert!(top_eigenvalues(&[&[]], 1, &TopEigenOptions::default()).is_err());
    let bad = TopEigenOptions {
        relative_floor: 1.5,
    };
    assert!(top_eigenvalues(&[&[1.0]], 1, &bad).is_err());
}

#[test]
fn huge_products_never_form_n() {
    // 200 factors of 10 eigenvalues: N = 10²⁰⁰ overflows every integer type.
    let mut rng = ChaCha8Rng::seed_from_u64(5);
    let spectra: Vec<Vec<f64>> = (0..200)
        .map(|_| (0..10).map(|_| rng.random_range(0.5..2.0)).collect())
        .collect();
    let refs: Vec<&[f64]> = spectra.iter().map(Vec::as_slice).collect();
    let top = top_eigenvalues(&refs, 1000, &TopEigenOptions::default()).unwrap();
    assert_eq!(top.len(), 1000);
    assert_eq!(top.indices().len(), 200_000);
    // The largest is the product of the factor maxima.
    let best: f64 = spectra
        .iter()
        .map(|s| s.iter().copied().fold(0.0, f64::max).ln())
        .sum();
    assert!((top.log_values()[0] - best).abs() < 1e-10);
    assert!(top.log_values().windows(2).all(|w| w[0] >= w[1]));
}

#[test]
fn p_zero_and_p_beyond_n() {
    let top = top_eigenvalues(&[&[1.0, 2.0]], 0, &TopEigenOptions::default()).unwrap();
    assert!(top.is_empty());
    let top = top_eigenvalues(&[&[1.0, 2.0]], 10, &TopEigenOptions::default()).unwrap();
    assert_eq!(top.len(), 2);
    assert_eq!(top.indices(), &[1, 0]);
}
