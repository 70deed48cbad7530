//! The paper's dense-data claims C1–C6 (spec §4.2) judged on our runs. The spec states them
//! for the paper's 8 data sets ("on ≥ 7 of 8"); on fewer problems the same fraction is
//! required (rounded up), and each check names the counts it saw.

use super::curves::{Method, ProblemRun};
use crate::experiment::Check;

/// `⌈num/den · total⌉`: the spec's "k of 8" scaled to `total` problems.
fn needed(num: usize, den: usize, total: usize) -> usize {
    (num * total).div_ceil(den)
}

/// `ε_f(CG)/ε_f(KMCG)` at `P = 10` and the fraction of steps `P ≤ 100` (both `> 1e-6`) where
/// KMCG's `ε_f` is below CG's.
pub fn c1(runs: &[ProblemRun]) -> Vec<Check> {
    let mut frac_ok = 0;
    let mut ratio_ok = 0;
    let mut detail = Vec::new();
    for r in runs {
        let (Some(cg), Some(km)) = (r.curve(Method::Cg), r.curve(Method::Kmcg)) else {
            continue;
        };
        let pairs = both_above(r, 100);
        let wins = pairs.iter().filter(|(a, b)| b < a).count();
        let frac = wins as f64 / pairs.len().max(1) as f64;
        let ratio = match (cg.at(10), km.at(10)) {
            (Some(a), Some(b)) if b.eps_f > 0.0 => a.eps_f / b.eps_f,
            _ => f64::NAN,
        };
        frac_ok += usize::from(pairs.is_empty() || frac >= 0.85);
        ratio_ok += usize::from(ratio >= 2.0);
        detail.push(format!(
            "{} {}: {:.2}, ×{:.1}",
            r.dataset, r.kernel, frac, ratio
        ));
    }
    let n = runs.len();
    vec![
        Check::new(
            format!(
                "C1: KMCG's ε_f below CG's on ≥ 85% of the steps P ≤ 100 on every problem ({frac_ok} of {n}; {})",
                detail.join("; ")
            ),
            frac_ok == n,
        ),
        Check::new(
            format!(
                "C1: ε_f(CG)/ε_f(KMCG) ≥ 2 at P = 10 on ≥ 7/8 of the problems ({ratio_ok} of {n}, need {})",
                needed(7, 8, n)
            ),
            ratio_ok >= needed(7, 8, n),
        ),
    ]
}

/// `(ε_f CG, ε_f KMCG)` at the steps `P ≤ p_max` where both are recorded and `> 1e-6`.
fn both_above(r: &ProblemRun, p_max: usize) -> Vec<(f64, f64)> {
    let (Some(cg), Some(km)) = (r.curve(Method::Cg), r.curve(Method::Kmcg)) else {
        return Vec::new();
    };
    cg.steps
        .iter()
        .filter(|s| s.p <= p_max)
        .filter_map(|s| km.at(s.p).map(|k| (s.eps_f, k.eps_f)))
        .filter(|(a, b)| *a > 1e-6 && *b > 1e-6)
        .collect()
}

/// C2: steps where `ε_f` grows by ×1.5 or more, KMCG no more often than CG.
pub fn c2(runs: &[ProblemRun]) -> Check {
    let mut ok = 0;
    let mut detail = Vec::new();
    for r in runs {
        let pairs = both_above(r, 100);
        let ups = |f: fn(&(f64, f64)) -> f64| {
            pairs
                .windows(2)
                .filter(|w| f(&w[1]) >= 1.5 * f(&w[0]))
                .count()
        };
        let (cg, km) = (ups(|p| p.0), ups(|p| p.1));
        ok += usize::from(km <= cg);
        detail.push(format!("{} {} {cg}/{km}", r.dataset, r.kernel));
    }
    let n = runs.len();
    Check::new(
        format!(
            "C2: ε_f up-moves (×1.5) of KMCG ≤ CG's on ≥ 7/8 of the problems ({ok} of {n}, need {}; CG/KMCG: {})",
            needed(7, 8, n),
            detail.join(", ")
        ),
        ok >= needed(7, 8, n),
    )
}

/// C3: the baselines start better (P = 1); KMCG is below both at P = 50.
pub fn c3(runs: &[ProblemRun]) -> Vec<Check> {
    let eps =
        |r: &ProblemRun, m: Method, p: usize| r.curve(m).and_then(|c| c.at(p)).map(|s| s.eps_f);
    let mut start_ok = 0;
    let mut start_n = 0;
    let mut mid_ok = 0;
    let mut mid_n = 0;
    for r in runs {
        let base1 = [eps(r, Method::Vfe, 1), eps(r, Method::Fitc, 1)]
            .into_iter()
            .flatten()
            .fold(f64::INFINITY, f64::min);
        if let Some(k1) = eps(r, Method::Kmcg, 1) {
            if base1.is_finite() {
                start_n += 1;
                start_ok += usize::from(base1 < k1);
            }
        }
        if let (Some(k), Some(v), Some(f)) = (
            eps(r, Method::Kmcg, 50),
            eps(r, Method::Vfe, 50),
            eps(r, Method::Fitc, 50),
        ) {
            mid_n += 1;
            mid_ok += usize::from(k < v && k < f);
        }
    }
    vec![
        Check::new(
            format!(
                "C3: min(ε_f VFE, FITC) < ε_f KMCG at P = 1 on ≥ 6/8 of the problems ({start_ok} of {start_n} with baselines, need {})",
                needed(6, 8, start_n)
            ),
            start_n > 0 && start_ok >= needed(6, 8, start_n),
        ),
        Check::new(
            format!("C3: KMCG below both baselines at P = 50 wherever they reached it ({mid_ok} of {mid_n}; none is not met)"),
            mid_n > 0 && mid_ok == mid_n,
        ),
    ]
}

/// C4: at P = 100 VFE's variance error is below KMCG's on all but at most one data set per
/// kernel (the spec counts per kernel: 5 of 6 SE, 6 of 7 Matérn, MPG the exception).
pub fn c4(runs: &[ProblemRun]) -> Check {
    let var =
        |r: &ProblemRun, m: Method| r.curve(m).and_then(|c| c.at(100)).and_then(|s| s.eps_var);
    let mut kernels: Vec<&str> = runs.iter().map(|r| r.kernel.as_str()).collect();
    kernels.sort_unstable();
    kernels.dedup();
    let mut met = true;
    let mut judged = false;
    let mut detail = Vec::new();
    for k in kernels {
        let (mut ok, mut n) = (0, 0);
        for r in runs.iter().filter(|r| r.kernel == k) {
            if let (Some(v), Some(km)) = (var(r, Method::Vfe), var(r, Method::Kmcg)) {
                n += 1;
                ok += usize::from(v < km);
            }
        }
        if n > 0 {
            judged = true;
            met &= ok + 1 >= n;
        }
        detail.push(format!("{k}: {ok} of {n}"));
    }
    Check::new(
        format!(
            "C4: ε_var VFE < KMCG at P = 100 on all but ≤ 1 data set per kernel ({})",
            detail.join("; ")
        ),
        met && judged,
    )
}

/// `ε_ev(P = 100)` at or below this counts as converged for C5's overshoot check (the
/// paper's own MPG and TOY curves decline to 1e-3 and below by P = 100 on N ≈ 200; the
/// larger sets stay above 0.02).
const CONVERGED_EV: f64 = 1e-2;

/// C5: KMCG's `nlZ_hat − nlZ` is positive at P = 1 and turns negative by P = 40, and `ε_ev`
/// at P = 100 exceeds twice its minimum where not converged.
pub fn c5(runs: &[ProblemRun]) -> Vec<Check> {
    let mut flip_ok = 0;
    let mut over_ok = 0;
    let mut over_n = 0;
    let mut detail = Vec::new();
    for r in runs {
        let Some(km) = r.curve(Method::Kmcg) else {
            continue;
        };
        let first_pos = km
            .steps
            .first()
            .and_then(|s| s.nlz_error)
            .is_some_and(|e| e > 0.0);
        let flip = km
            .steps
            .iter()
            .find(|s| s.nlz_error.is_some_and(|e| e < 0.0))
            .map(|s| s.p);
        flip_ok += usize::from(first_pos && flip.is_some_and(|p| p <= 40));
        detail.push(format!(
            "{} {} {}",
            r.dataset,
            r.kernel,
            flip.map_or("none".into(), |p| p.to_string())
        ));
        let evs: Vec<f64> = km
            .steps
            .iter()
            .filter(|s| s.p <= 100)
            .filter_map(|s| s.eps_ev)
            .collect();
        if let (Some(at100), true) = (km.at(100).and_then(|s| s.eps_ev), !evs.is_empty()) {
            if at100 > CONVERGED_EV {
                over_n += 1;
                let min = evs.iter().copied().fold(f64::INFINITY, f64::min);
                over_ok += usize::from(at100 > 2.0 * min);
            }
        }
    }
    let n = runs.len();
    vec![
        Check::new(
            format!(
                "C5: nlZ_KMCG − nlZ > 0 at P = 1, < 0 by P = 40, on ≥ 7/8 of the problems ({flip_ok} of {n}, need {}; first negative P: {})",
                needed(7, 8, n),
                detail.join(", ")
            ),
            flip_ok >= needed(7, 8, n),
        ),
        Check::new(
            format!(
                "C5: KMCG's ε_ev at P = 100 > 2 × its minimum over P ≤ 100 where not converged (ε_ev(100) > {CONVERGED_EV}) ({over_ok} of {over_n})"
            ),
            over_n > 0 && over_ok == over_n,
        ),
    ]
}

/// C6: KMCG on textbook-CG directions breaks down by P = 100; on FOM it survives 100 steps or
/// reaches N (TOY-SE, whose Krylov space is exhausted near P = 50, excepted as in the spec).
pub fn c6(runs: &[ProblemRun], p_max: usize) -> Vec<Check> {
    let mut tb_ok = 0;
    let mut fom_ok = 0;
    let mut detail = Vec::new();
    for r in runs {
        let tb = r.curve(Method::KmcgTextbook).map_or(0, |c| c.last_good);
        let tb_broke = r
            .curve(Method::KmcgTextbook)
            .is_some_and(|c| c.crashed > 0 && c.last_good < 100);
        tb_ok += usize::from(tb_broke);
        let fom = r.curve(Method::Kmcg).map_or(0, |c| c.last_good);
        let toy_se = r.dataset == "TOY" && r.kernel.starts_with("SE");
        fom_ok += usize::from(fom >= p_max.min(100) || toy_se);
        detail.push(format!("{} {} {tb}/{fom}", r.dataset, r.kernel));
    }
    let n = runs.len();
    vec![
        Check::new(
            format!("C6: KMCG on textbook CG breaks down at P ≤ 100 on every problem ({tb_ok} of {n}; last good step textbook/FOM: {})", detail.join(", ")),
            tb_ok == n,
        ),
        Check::new(
            format!("C6: KMCG on FOM survives {} steps on every problem (TOY-SE excepted) ({fom_ok} of {n})", p_max.min(100)),
            fom_ok == n,
        ),
    ]
}
