//! Truncation laws: moments against closed forms and simulation (spec §6 H14), the
//! survival/pmf relations, and the Russian-roulette and single-sample identities by
//! enumeration.

use gp_solvers::truncation::{Categorical, ExpDecay, Fixed, TruncationLaw};
use rand::SeedableRng;
use rand_chacha::ChaCha8Rng;

/// Mean and sd of the pmf by enumeration over the support.
fn enumerated_moments(law: &dyn TruncationLaw) -> (f64, f64, f64) {
    let support = law.min_support()..=law.max_support();
    let total: f64 = support.clone().map(|j| law.pmf(j)).sum();
    let mean: f64 = support.clone().map(|j| j as f64 * law.pmf(j)).sum();
    let var: f64 = support
        .map(|j| (j as f64 - mean).powi(2) * law.pmf(j))
        .sum();
    (total, mean, var.sqrt())
}

fn check_survival_is_tail_sum(law: &dyn TruncationLaw) {
    let mut tail = 0.0;
    for j in (law.min_support()..=law.max_support()).rev() {
        tail += law.pmf(j);
        let s = law.survival(j);
        assert!(
            (s - tail).abs() <= 1e-12 * tail.max(1e-300) + 1e-15,
            "P(J ≥ {j}) = {s}, tail sum {tail}"
        );
        // The weight is the reciprocal, to rounding, even where it is huge.
        assert!((law.weight(j) * s - 1.0).abs() < 1e-12, "weight at {j}");
    }
    assert_eq!(law.survival(law.min_support()), 1.0);
    assert_eq!(law.survival(1), 1.0);
    assert_eq!(law.weight(law.min_support()), 1.0);
    assert_eq!(law.survival(law.max_support() + 1), 0.0);
}

#[test]
fn exp_decay_h14_moments_closed_form_and_simulated() {
    // Spec §6 H14: ExpDecay(λ = 0.05, J_min = 80, J_max = N): mean 99.5 ± 0.3 and sd 20.0 ± 0.3
    // over 10⁵ draws, Σ P = 1, S(J_min) = 1.
    let law = ExpDecay::new(0.05, 80, 9600).unwrap();
    let (total, mean, sd) = enumerated_moments(&law);
    assert!((total - 1.0).abs() < 1e-12, "Σ P = {total}");
    assert!((law.mean() - mean).abs() < 1e-9, "{} vs {mean}", law.mean());
    assert!((law.sd() - sd).abs() < 1e-9, "{} vs {sd}", law.sd());
    // The table of spec §2.2.
    assert!((law.mean() - 99.50).abs() < 0.005);
    assert!((law.sd() - 20.00).abs() < 0.005);
    assert!(
        (law.mean_max_of_two() - 109.5).abs() < 0.05,
        "{}",
        law.mean_max_of_two()
    );
    assert!((law.weight(130) - 12.18).abs() < 0.005);
    assert!((law.weight(180) - 148.4).abs() < 0.05);
    assert_eq!(law.survival(80), 1.0);

    let mut rng = ChaCha8Rng::seed_from_u64(14);
    let draws: Vec<f64> = (0..100_000).map(|_| law.sample(&mut rng) as f64).collect();
    let m = draws.iter().sum::<f64>() / draws.len() as f64;
    let s = (draws.iter().map(|d| (d - m).powi(2)).sum::<f64>() / (draws.len() - 1) as f64).sqrt();
    assert!((m - 99.5).abs() < 0.3, "sample mean {m}");
    assert!((s - 20.0).abs() < 0.3, "sample sd {s}");
    assert!(draws.iter().all(|&d| (80.0..=9600.0).contains(&d)));
}

#[test]
fn exp_decay_other_rows_of_the_reference_table() {
    for (lambda, j_min, mean, sd, mean_max, w100) in [
        (0.05, 20, 39.50, 20.00, 49.5, 148.4),
        (0.05, 1, 20.50, 20.00, 30.5, 148.4),
        (0.10, 90, 99.51, 10.00, 104.5, 22026.0),
        (0.10, 10, 19.51, 10.00, 24.5, 22026.0),
    ] {
        let law = ExpDecay::new(lambda, j_min, 5000).unwrap();
        assert!(
            (law.mean() - mean).abs() < 0.01,
            "λ {lambda} j_min {j_min}: {}",
            law.mean()
        );
        assert!((law.sd() - sd).abs() < 0.01);
        assert!((law.mean_max_of_two() - mean_max).abs() < 0.05);
        let w = law.weight(j_min + 100);
        assert!((w - w100).abs() < 1e-4 * w100, "{w}");
    }
}

#[test]
fn exp_decay_short_support_and_the_tail() {
    // A short support where q^M matters, and the last term where 1 − cdf would cancel.
    let law = ExpDecay::new(0.3, 3, 12).unwrap();
    check_survival_is_tail_sum(&law);
    let (total, mean, sd) = enumerated_moments(&law);
    assert!((total - 1.0).abs() < 1e-14);
    assert!((law.mean() - mean).abs() < 1e-12);
    assert!((law.sd() - sd).abs() < 1e-12);
    // At the top the survival is the last pmf, not a cancelled difference.
    assert!((law.survival(12) / law.pmf(12) - 1.0).abs() < 1e-12);
    // A long support with λ = 0.05 far out: the weights are exact reciprocals.
    let long = ExpDecay::new(0.05, 80, 2000).unwrap();
    check_survival_is_tail_sum(&long);
    assert!(long.weight(1500).is_finite() && long.weight(1500) > 1e30);
    assert!(long.weight(2001).is_infinite());
}

#[test]
fn geometric_is_exp_decay_with_ratio() {
    let g = ExpDecay::geometric(0.5, 2, 30).unwrap();
    let e = ExpDecay::new(std::f64::consts::LN_2, 2, 30).unwrap();
    for j in 1..=31 {
        assert!((g.pmf(j) - e.pmf(j)).abs() < 1e-15);
        assert!((g.survival(j) - e.survival(j)).abs() < 1e-15);
    }
    assert!(ExpDecay::geometric(1.0, 1, 3).is_err());
}

#[test]
fn categorical_laws() {
    let law = Categorical::one_over_j(1.0, 5, 14).unwrap();
    check_survival_is_tail_sum(&law);
    let h: f64 = (1..=10).map(|k| 1.0 / k as f64).sum();
    assert!((law.pmf(5) - 1.0 / h).abs() < 1e-15);
    assert!((law.pmf(14) - 0.1 / h).abs() < 1e-15);
    let (total, mean, sd) = enumerated_moments(&law);
    assert!((total - 1.0).abs() < 1e-14);
    assert!((law.mean() - mean).abs() < 1e-12 && (law.sd() - sd).abs() < 1e-12);

    // The reference code's SS-RFF example: OneOverJ(min 700, max 1500, step 100): k ∈ 1..8,
    // D = 700 + 100 k, E[D] ≈ 994.
    let k_law = Categorical::one_over_j(1.0, 1, 8).unwrap();
    let expected_d = 700.0 + 100.0 * k_law.mean();
    assert!((expected_d - 994.0).abs() < 1.0, "{expected_d}");

    // Sampling follows the table.
    let uni = Categorical::uniform(3, 6).unwrap();
    check_survival_is_tail_sum(&uni);
    let mut rng = ChaCha8Rng::seed_from_u64(3);
    let mut counts = [0usize; 4];
    let draws = 40_000;
    for _ in 0..draws {
        counts[uni.sample(&mut rng) - 3] += 1;
    }
    for c in counts {
        // Binomial sd = sqrt(n p (1 − p)) ≈ 86.6; 4 sd.
        assert!((c as f64 - 10_000.0).abs() < 4.0 * 86.7, "{counts:?}");
    }
    // Zero leading mass moves the support.
    let shifted = Categorical::new(1, &[0.0, 0.0, 1.0, 3.0]).unwrap();
    assert_eq!(shifted.min_support(), 3);
    assert_eq!(shifted.survival(3), 1.0);
    assert!((shifted.survival(4) - 0.75).abs() < 1e-15);
    assert_eq!(
        shifted.sample(&mut rng).max(3),
        shifted.sample(&mut rng).max(3)
    );
}

#[test]
fn fixed_law_is_plain_truncation() {
    let law = Fixed::new(7).unwrap();
    assert_eq!(law.sample(&mut ChaCha8Rng::seed_from_u64(0)), 7);
    assert!((1..=7).all(|j| law.weight(j) == 1.0));
    assert_eq!(law.survival(8), 0.0);
    assert_eq!((law.mean(), law.sd()), (7.0, 0.0));
    assert_eq!(law.mean_max_of_two(), 7.0);
}

#[test]
fn russian_roulette_and_single_sample_identities_by_enumeration() {
    // ψ = Σ Δ_j with Δ_j = 2^{−j} (the reference code's self-test) and a sign-changing
    // series: Σ_J P(J) Σ_{j ≤ J} Δ_j w_j = Σ_{j ≤ J_max} Δ_j and Σ_J P(J) Δ_J / P(J) = Σ Δ_j.
    let laws: Vec<Box<dyn TruncationLaw>> = vec![
        Box::new(ExpDecay::new(0.1, 3, 60).unwrap()),
        Box::new(ExpDecay::new(0.7, 1, 40).unwrap()),
        Box::new(Categorical::one_over_j(1.0, 2, 50).unwrap()),
        Box::new(Fixed::new(25).unwrap()),
    ];
    for law in &laws {
        let top = law.max_support();
        for series in [
            (1..=top).map(|j| 0.5f64.powi(j as i32)).collect::<Vec<_>>(),
            (1..=top).map(|j| (j as f64).cos() / j as f64).collect(),
        ] {
            let exact: f64 = series.iter().sum();
            let rr: f64 = (law.min_support()..=top)
                .map(|big_j| {
                    let est: f64 = (1..=big_j).map(|j| series[j - 1] * law.weight(j)).sum();
                    law.pmf(big_j) * est
                })
                .sum();
            assert!(
                (rr - exact).abs() < 1e-12 * exact.abs().max(1.0),
                "{law:?}: {rr} vs {exact}"
            );
            if law.min_support() == 1 {
                let ss: f64 = (1..=top)
                    .filter(|&j| law.pmf(j) > 0.0)
                    .map(|j| law.pmf(j) * series[j - 1] / law.pmf(j))
                    .sum();
                assert!((ss - exact).abs() < 1e-12);
            }
        }
    }
}

#[test]
fn invalid_laws_are_refused() {
    assert!(ExpDecay::new(0.0, 1, 10).is_err());
    assert!(ExpDecay::new(f64::NAN, 1, 10).is_err());
    assert!(ExpDecay::new(0.1, 0, 10).is_err());
    assert!(ExpDecay::new(0.1, 11, 10).is_err());
    assert!(Categorical::new(1, &[]).is_err());
    assert!(Categorical::new(1, &[0.0, 0.0]).is_err());
    assert!(Categorical::new(1, &[1.0, -1.0]).is_err());
    assert!(Categorical::one_over_j(-1.0, 1, 3).is_err());
    assert!(Fixed::new(0).is_err());
    let err = ExpDecay::new(0.1, 5, 2).unwrap_err().to_string();
    assert!(err.contains("j_min"), "{err}");
}
