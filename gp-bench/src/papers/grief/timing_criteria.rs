//! Spec `grief.md` §4.4 criterion 18 (machine-relative timing) on Table 1's rows: GRIEF-I's
//! wall time per fold varies by at most 5× across the data sets, and GRIEF-II's grows with
//! `n`. Its third part (GRIEF-I faster than GRIEF-II on electric) needs electric, which the
//! data collection does not hold.

use gp_models::grief::dual::data_space_is_cheaper;

use crate::experiment::Check;
use crate::summary::spearman;
use crate::table::fmt_seconds;

/// The per-fold times of one Table 1 row, ours (mean over the folds shown) and the paper's.
#[derive(Debug, Clone)]
pub struct SetTiming {
    /// The paper's name of the set.
    pub name: &'static str,
    /// The set's size as the paper prints it.
    pub n: usize,
    /// Our mean wall time per fold of GRIEF-II, seconds.
    pub seconds_two: f64,
    /// Our mean wall time per fold of GRIEF-I, seconds.
    pub seconds_one: f64,
    /// The paper's GRIEF-II time per fold, hours.
    pub hours_two: f64,
    /// The paper's GRIEF-I time per fold, hours.
    pub hours_one: f64,
    /// Whether our GRIEF-I steps evaluate in the weight space (the paper's `O(p³)` form on
    /// every set) rather than the data space (`O(n²p)`, cheaper below `n ≈ 0.53 p`).
    pub weight_space: bool,
}

impl SetTiming {
    /// Whether the sampler of a fold with `n_train` training points and `p` eigenfunctions
    /// evaluates in the weight space (see [`data_space_is_cheaper`]).
    pub fn weight_space_for(n_train: usize, p: usize) -> bool {
        !data_space_is_cheaper(n_train, p)
    }
}

/// `max / min` of `values` with the names of the extremes.
fn spread<'a>(
    sets: &[&'a SetTiming],
    value: fn(&SetTiming) -> f64,
) -> Option<(f64, &'a str, f64, &'a str, f64)> {
    let lo = sets.iter().min_by(|a, b| value(a).total_cmp(&value(b)))?;
    let hi = sets.iter().max_by(|a, b| value(a).total_cmp(&value(b)))?;
    Some((
        value(hi) / value(lo),
        lo.name,
        value(lo),
        hi.name,
        value(hi),
    ))
}

/// Criterion 18's two checks on the rows shown (none for fewer than two rows).
pub fn criterion_18_checks(sets: &[SetTiming]) -> Vec<Check> {
    if sets.len() < 2 {
        return Vec::new();
    }
    let all: Vec<&SetTiming> = sets.iter().collect();
    let weight: Vec<&SetTiming> = sets.iter().filter(|s| s.weight_space).collect();
    let mut checks = Vec::new();
    if let (Some((ratio, lo, lo_s, hi, hi_s)), Some((paper, ..))) = (
        spread(&all, |s| s.seconds_one),
        spread(&all, |s| s.hours_one),
    ) {
        let weight_part = match spread(&weight, |s| s.seconds_one) {
            Some((r, ..)) if weight.len() >= 2 => format!(
                "; over the {} sets whose MALA steps evaluate in the weight space, the paper's \
                 O(p³) form, {r:.1}×: on the others the data-space form, O(n²p), is cheaper",
                weight.len()
            ),
            _ => String::new(),
        };
        checks.push(Check::new(
            format!(
                "GRIEF-I time per fold varies {ratio:.1}× across the {} sets shown, from {lo} ({}) \
                 to {hi} ({}) (criterion 18: at most 5×; the paper's times on the same sets \
                 {paper:.1}×){weight_part}",
                all.len(),
                fmt_seconds(lo_s),
                fmt_seconds(hi_s)
            ),
            ratio <= 5.0,
        ));
    }
    let n: Vec<f64> = sets.iter().map(|s| s.n as f64).collect();
    let ours = spearman(&n, &sets.iter().map(|s| s.seconds_two).collect::<Vec<_>>());
    let paper = spearman(&n, &sets.iter().map(|s| s.hours_two).collect::<Vec<_>>());
    checks.push(Check::new(
        format!(
            "GRIEF-II time per fold grows with n: Spearman ρ = {ours:.2} between n and the time \
             over the {} sets shown (criterion 18: at least the paper's own ρ over the same sets, \
             {paper:.2})",
            sets.len()
        ),
        ours >= paper,
    ));
    checks
}

#[cfg(test)]
mod tests {
    use super::*;

    fn set(name: &'static str, n: usize, two: f64, one: f64, weight_space: bool) -> SetTiming {
        SetTiming {
            name,
            n,
            seconds_two: two,
            seconds_one: one,
            hours_two: two / 3600.0,
            hours_one: 0.5,
            weight_space,
        }
    }

    #[test]
    fn the_checks_judge_spread_and_rank_correlation() {
        let flat = [
            set("a", 10, 1.0, 100.0, true),
            set("b", 100, 5.0, 300.0, true),
            set("c", 1000, 50.0, 120.0, true),
        ];
        let checks = criterion_18_checks(&flat);
        assert_eq!(checks.len(), 2);
        assert!(checks.iter().all(|c| c.met), "{checks:?}");
        let uneven = [
            set("a", 10, 9.0, 1.0, false),
            set("b", 100, 5.0, 300.0, true),
            set("c", 1000, 50.0, 120.0, true),
        ];
        let checks = criterion_18_checks(&uneven);
        assert!(
            !checks[0].met && checks[0].name.contains("300.0×"),
            "{checks:?}"
        );
        assert!(checks[0].name.contains("over the 2 sets"), "{checks:?}");
        // The paper's ρ is 1 here (its hours are ours / 3600 in `set`) and ours is 0.5.
        let slower_small = [
            set("a", 10, 9.0, 1.0, false),
            set("b", 100, 5.0, 300.0, true),
            set("c", 1000, 50.0, 120.0, true),
        ]
        .map(|mut s| {
            s.hours_two = s.n as f64;
            s
        });
        assert!(!criterion_18_checks(&slower_small)[1].met);
        assert!(criterion_18_checks(&flat[..1]).is_empty());
    }
}
