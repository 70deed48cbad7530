//! Poisson regression (IterNCGP Sec. 5.1, App. C.2, Fig. 5): IterNCGP-CG with recycling
//! under a budget of 100 solver actions spread over 100, 20, 10 or 5 Newton steps, the test
//! NLL after every action (spec checks E1 and E2).

use std::ops::ControlFlow;

use faer::{Col, Mat};
use gp_kernels::fastmath::exp_nonpositive;
use gp_kernels::{Kernel, SquaredExponential};
use gp_linalg::{Cholesky, DenseOperator};
use gp_models::ncgp::{
    iterncgp, DenseLaplace, IterNcgpOptions, LaplaceOptions, Poisson, SharedOutputs, StepControl,
};
use gp_models::ModelError;
use gp_solvers::pls::{RecycleOptions, ResidualPolicy};
use rayon::prelude::*;
use serde_json::{json, Value};

use super::{median, training_marginals, MetricClock};
use crate::error::BenchError;
use crate::experiment::{
    Check, Curve, Experiment, ExperimentOutput, NamedTable, RunContext, RunSize, Series,
    SeriesStyle,
};
use crate::synthetic::poisson::{poisson_counts, PoissonOptions};
use crate::table::{fmt_seconds, Table};

/// The experiment.
#[derive(Debug, Clone, Copy, Default)]
pub struct PoissonSchedules;

/// Total solver actions of every schedule.
const BUDGET: usize = 100;
/// Cumulative budgets of check E1(b).
const BUDGET_MARKS: [usize; 2] = [25, 50];
/// Outer tolerance of the Poisson experiment (App. B.2).
const OUTER_TOLERANCE: f64 = 1e-3;
/// Test counts are drawn from count seed + this (fresh counts at the same inputs, spec §8).
const TEST_SEED_OFFSET: u64 = 1000;
/// Latent seeds searched for a draw in the wanted range of `max f`.
const LATENT_SEEDS_SEARCHED: u64 = 200;

/// A budget split: at most `max_outer` Newton steps of at most `max_inner` new actions.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
struct Schedule {
    max_outer: usize,
    max_inner: usize,
}

const fn schedule(max_outer: usize, max_inner: usize) -> Schedule {
    Schedule {
        max_outer,
        max_inner,
    }
}

/// The paper's four schedules, `j ≤ 1` first.
const ALL_SCHEDULES: [Schedule; 4] = [
    schedule(100, 1),
    schedule(20, 5),
    schedule(10, 10),
    schedule(5, 20),
];

impl Schedule {
    fn label(self) -> String {
        format!("j ≤ {} ({} steps)", self.max_inner, self.max_outer)
    }

    /// Spec §8's median final test NLL on its draw with max f = 2.46 (calibration only).
    fn prototype(self) -> &'static str {
        match self.max_inner {
            1 => "1.483 (≈41 actions)",
            5 => "1.482 (≈70)",
            10 => "1.483 (≈92)",
            _ => "15.98",
        }
    }
}

/// Per-size settings.
#[derive(Debug, Clone)]
struct Plan {
    draws: usize,
    schedules: Vec<Schedule>,
    /// Also the second latent draw with larger counts, undamped and with backtracking.
    overshoot: bool,
}

fn plan(size: RunSize) -> Plan {
    match size {
        RunSize::Smoke => Plan {
            draws: 2,
            schedules: vec![schedule(100, 1), schedule(10, 10)],
            overshoot: false,
        },
        RunSize::Quick => Plan {
            draws: 10,
            schedules: ALL_SCHEDULES.to_vec(),
            overshoot: false,
        },
        RunSize::Full => Plan {
            draws: 10,
            schedules: ALL_SCHEDULES.to_vec(),
            overshoot: true,
        },
    }
}

/// The latent draw kept fixed across runs.
#[derive(Debug, Clone, Copy)]
struct Latent {
    seed: u64,
    max_f: f64,
}

/// The first latent seed whose draw has `lo ≤ max f ≤ hi` (a deterministic search).
fn choose_latent(lo: f64, hi: f64) -> Result<Latent, BenchError> {
    for seed in 0..LATENT_SEEDS_SEARCHED {
        let data = poisson_counts(&PoissonOptions {
            latent_seed: seed,
            ..PoissonOptions::default()
        })?;
        let max_f = data.f.iter().copied().fold(f64::NEG_INFINITY, f64::max);
        if (lo..=hi).contains(&max_f) {
            return Ok(Latent { seed, max_f });
        }
    }
    Err(BenchError::InvalidArgument {
        name: "latent_seed",
        reason: format!("no latent seed below {LATENT_SEEDS_SEARCHED} has max f in [{lo}, {hi}]"),
    })
}

/// Training counts, test counts at the same inputs, and the dense prior.
struct Problem {
    y: Col<f64>,
    y_test: Col<f64>,
    /// `log y⋄!` of the test counts.
    test_log_factorial: Vec<f64>,
    k: Mat<f64>,
    op: DenseOperator,
    prior_variance: Col<f64>,
}

fn log_factorial(y: f64) -> f64 {
    (2..=(y as u64)).map(|k| (k as f64).ln()).sum()
}

fn problem(latent: Latent, count_seed: u64) -> Result<Problem, BenchError> {
    let options = PoissonOptions {
        latent_seed: latent.seed,
        count_seed,
        ..PoissonOptions::default()
    };
    let train = poisson_counts(&options)?;
    let test = poisson_counts(&PoissonOptions {
        count_seed: count_seed + TEST_SEED_OFFSET,
        ..options
    })?;
    let kernel = SquaredExponential::new(vec![options.lengthscale], options.outputscale)?;
    let k = kernel.matrix(train.x.as_ref(), train.x.as_ref())?;
    Ok(Problem {
        test_log_factorial: test.y.iter().map(|&y| log_factorial(y)).collect(),
        y: train.y,
        y_test: test.y,
        op: DenseOperator::new(k.clone()),
        k,
        prior_variance: Col::from_fn(options.n, |_| options.outputscale),
    })
}

/// Trapezoid nodes of [`log_predictive`].
const NODES: usize = 2001;
/// The rule covers `m ± HALF_WIDTH · σ`.
const HALF_WIDTH: f64 = 10.0;
/// `e^f` at the nodes is carried by multiplication with `e^{σh}` and recomputed exactly every
/// this many nodes (rounding drift at most `RESYNC · ε` relative).
const RESYNC: usize = 32;

/// `log ∫ Poisson(y | e^f) N(f; m, v) df` by the trapezoid rule on `NODES` equally spaced
/// points of `f ∈ [m − 10σ, m + 10σ]`, summed in log space (log-sum-exp). The integrand is
/// smooth with Gaussian tails, for which the trapezoid rule converges faster than any power
/// of the spacing; the mass beyond ±10σ is below `1e-22`. Used instead of the library's
/// Gauss–Hermite rule so that the experiment does not depend on it. Terms more than 40 below
/// the largest are skipped (relative contribution below `2001·e⁻⁴⁰ ≈ 1e-14`). `exp` is the
/// cost here, so `e^f` runs as a product along the grid (an underflowed `0` is exact to
/// rounding beside `y f`, an overflowed `∞` gives the right `−∞` term).
fn log_predictive(mean: f64, variance: f64, y: f64, log_factorial: f64) -> f64 {
    if variance <= 0.0 || !variance.is_finite() {
        return y * mean - mean.exp() - log_factorial;
    }
    let sd = variance.sqrt();
    let h = 2.0 * HALF_WIDTH / (NODES - 1) as f64;
    let step = (sd * h).exp();
    // log(h φ(t)) − log y! is the same for every node; the end weights are halved.
    let offset = h.ln() - 0.5 * (2.0 * std::f64::consts::PI).ln() - log_factorial;
    let mut terms = [0.0_f64; NODES];
    let mut rate = 0.0;
    for (k, term) in terms.iter_mut().enumerate() {
        let t = -HALF_WIDTH + h * k as f64;
        let f = mean + sd * t;
        rate = if k % RESYNC == 0 {
            exp_any_sign(f)
        } else {
            rate * step
        };
        let end = if k == 0 || k == NODES - 1 {
            -std::f64::consts::LN_2
        } else {
            0.0
        };
        *term = end - 0.5 * t * t + y * f - rate;
    }
    let top = terms.iter().copied().fold(f64::NEG_INFINITY, f64::max);
    if !top.is_finite() {
        return top;
    }
    let sum: f64 = terms
        .iter()
        .filter(|&&l| l - top > -40.0)
        .map(|&l| exp_nonpositive(l - top))
        .sum();
    offset + top + sum.ln()
}

/// `eˣ` from [`exp_nonpositive`] (`1 / e⁻ˣ` for `x > 0`: one more rounding; `∞` from
/// `x > 708` on, where `exp` overflows only past 709.78, which changes nothing here: such a
/// rate makes its node's term `−∞` or `−10³⁰⁷`, both nothing beside the others). The rule
/// calls `exp` 2001 times per test point, and this inlined Rust version is cheaper than the
/// platform call; it also never met the glibc stall after faer's eigensolver on Intel CPUs
/// (see `gp_linalg::simd::clear_upper_vector_state`), which made this experiment 85 s
/// instead of 6 s on a Xeon. The values agree to a few ulp.
fn exp_any_sign(x: f64) -> f64 {
    if x <= 0.0 {
        exp_nonpositive(x)
    } else {
        1.0 / exp_nonpositive(-x)
    }
}

/// Mean `−log p(y⋄ | latent marginals)` over the test points; a non-finite value (an
/// overflowed iterate) counts as `+∞`.
fn test_nll(problem: &Problem, mean: &[f64], variance: &[f64]) -> f64 {
    let n = problem.y_test.nrows();
    // The 2001-node rule per point is the whole cost of this experiment (perf: 92%), so the
    // points are split over rayon; the terms are then added in order, as a sequential pass
    // would, so the value does not depend on the split.
    let terms: Vec<f64> = (0..n)
        .into_par_iter()
        .map(|i| {
            -log_predictive(
                mean[i],
                variance[i],
                problem.y_test[i],
                problem.test_log_factorial[i],
            )
        })
        .collect();
    let total: f64 = terms.iter().sum();
    let nll = total / n.max(1) as f64;
    if nll.is_finite() {
        nll
    } else {
        f64::INFINITY
    }
}

/// Mean width `2 · 1.96 σ` of the 95 % latent band at the training inputs.
fn band_width(variance: &[f64]) -> f64 {
    let total: f64 = variance
        .iter()
        .map(|v| 2.0 * 1.96 * v.max(0.0).sqrt())
        .sum();
    total / variance.len().max(1) as f64
}

/// One run of a schedule.
#[derive(Debug, Clone)]
struct Outcome {
    /// `(cumulative actions, test NLL)`: the prior at 0, then after every action.
    trace: Vec<(usize, f64)>,
    /// The divergence error, if the undamped Newton iteration left the finite range.
    diverged: Option<String>,
    outer_steps: usize,
    actions: usize,
    seconds: f64,
    /// Band width after the first action (E2).
    width_first: Option<f64>,
    /// Band width of the last belief.
    width_end: f64,
    /// Why the run ended (`Converged`, `BudgetSpent`, …, or `Diverged`).
    stop: String,
    /// The last Newton step's accepted length (1 when undamped).
    last_step_length: f64,
}

impl Outcome {
    /// The test NLL after the run: `+∞` if it diverged.
    fn final_nll(&self) -> f64 {
        if self.diverged.is_some() {
            return f64::INFINITY;
        }
        self.trace.last().map_or(f64::INFINITY, |p| p.1)
    }

    /// The test NLL once `budget` actions are spent: the last value at or before `budget`
    /// (a run that ended earlier keeps its final value); `+∞` if the run diverged before
    /// spending `budget`.
    fn at_budget(&self, budget: usize) -> f64 {
        let reached = self.trace.last().is_some_and(|p| p.0 >= budget);
        if self.diverged.is_some() && !reached {
            return f64::INFINITY;
        }
        self.trace
            .iter()
            .take_while(|p| p.0 <= budget)
            .last()
            .map_or(f64::INFINITY, |p| p.1)
    }

    fn to_json(&self) -> Value {
        json!({
            "diverged": self.diverged,
            "outer_steps": self.outer_steps,
            "actions": self.actions,
            "solver_seconds": self.seconds,
            "width_first": self.width_first,
            "width_end": self.width_end,
            "stop": self.stop,
            "last_step_length": self.last_step_length,
            "trace": self.trace.iter().map(|p| json!([p.0, if p.1.is_finite() { json!(p.1) } else { json!("inf") }])).collect::<Vec<_>>(),
        })
    }
}

/// Runs one schedule on one count draw, recording the test NLL after every action.
fn run_schedule(
    problem: &Problem,
    schedule: Schedule,
    step_control: StepControl,
) -> Result<Outcome, BenchError> {
    let shared = SharedOutputs::new(&problem.op, 1)?;
    let options = IterNcgpOptions {
        max_inner: Some(schedule.max_inner),
        recycling: Some(RecycleOptions::default()),
        outer_tolerance: OUTER_TOLERANCE,
        max_outer: schedule.max_outer,
        action_budget: Some(BUDGET),
        step_control,
        ..IterNcgpOptions::default()
    };
    let n = problem.y.nrows();
    let mut trace = Vec::new();
    let (mut width_first, mut width_end) = (None, f64::NAN);
    let mut failure = None;
    let mut clock = MetricClock::start();
    let result = iterncgp(
        &shared,
        Col::zeros(n).as_ref(),
        problem.y.as_ref(),
        &Poisson::new(),
        &mut ResidualPolicy,
        &options,
        &mut |p| {
            // j = 0 of later steps costs no action: the curve has one point per action.
            if p.inner == 0 && p.outer > 0 {
                return ControlFlow::Continue(());
            }
            clock.observe(
                || match training_marginals(&problem.op, &problem.prior_variance, p) {
                    Ok((mean, var)) => {
                        trace.push((p.total_actions, test_nll(problem, &mean, &var)));
                        width_end = band_width(&var);
                        if p.total_actions == 1 && width_first.is_none() {
                            width_first = Some(width_end);
                        }
                        ControlFlow::Continue(())
                    }
                    Err(e) => {
                        failure = Some(e);
                        ControlFlow::Break(())
                    }
                },
            )
        },
    );
    let seconds = clock.solver_seconds();
    if let Some(e) = failure {
        return Err(e);
    }
    let actions = trace.last().map_or(0, |p| p.0);
    match result {
        Ok(run) => Ok(Outcome {
            trace,
            diverged: None,
            outer_steps: run.steps.len(),
            actions: run.total_actions,
            seconds,
            width_first,
            width_end,
            stop: format!("{:?}", run.stop),
            last_step_length: run.steps.last().map_or(f64::NAN, |s| s.step_length),
        }),
        // The undamped overshoot (spec §7.1) is a result, not a harness failure.
        Err(ModelError::NewtonDiverged { step, reason }) => Ok(Outcome {
            trace,
            diverged: Some(format!("Newton step {step}: {reason}")),
            outer_steps: step,
            actions,
            seconds,
            width_first,
            width_end,
            stop: "Diverged".into(),
            last_step_length: f64::NAN,
        }),
        Err(e) => Err(e.into()),
    }
}

/// The exact Laplace approximation (dense Newton to tolerance 1e-8) and its test NLL with the
/// covariance `K − K (K + W⁻¹)⁻¹ K` at the mode. Falls back to backtracking when undamped
/// Newton diverges (the mode is the same: `Ψ` is concave). Returns the NLL and whether the
/// fallback was used.
fn exact_laplace(problem: &Problem) -> Result<(f64, bool), BenchError> {
    let n = problem.y.nrows();
    let fit = |step_control| {
        DenseLaplace::fit(
            problem.k.as_ref(),
            Col::zeros(n).as_ref(),
            problem.y.as_ref(),
            &Poisson::new(),
            &LaplaceOptions {
                tolerance: 1e-8,
                max_steps: 500,
                step_control,
                ..LaplaceOptions::default()
            },
        )
    };
    let (laplace, fallback) = match fit(StepControl::Undamped) {
        Ok(l) => (l, false),
        Err(ModelError::NewtonDiverged { .. }) => {
            (fit(StepControl::Backtracking { max_halvings: 30 })?, true)
        }
        Err(e) => return Err(e.into()),
    };
    let f = laplace.f;
    let khat = Mat::from_fn(n, n, |i, j| {
        problem.k[(i, j)] + if i == j { (-f[i]).exp() } else { 0.0 }
    });
    // diag(K K̂⁻¹ K) = column norms of L⁻¹ K with K̂ = L Lᵀ.
    let a = Cholesky::new(khat.as_ref())?.solve_lower(problem.k.as_ref())?;
    let variance: Vec<f64> = (0..n)
        .map(|j| problem.k[(j, j)] - (0..n).map(|r| a[(r, j)].powi(2)).sum::<f64>())
        .collect();
    let mean: Vec<f64> = f.iter().copied().collect();
    Ok((test_nll(problem, &mean, &variance), fallback))
}

/// Every schedule's outcomes on every count draw of one latent draw, plus the exact LA.
struct Study {
    latent: Latent,
    step_control: StepControl,
    runs: Vec<(Schedule, Vec<Outcome>)>,
    exact: Vec<f64>,
    exact_fallbacks: usize,
}

fn study(
    ctx: &RunContext<'_>,
    latent: Latent,
    plan: &Plan,
    step_control: StepControl,
) -> Result<Study, BenchError> {
    let mut runs: Vec<(Schedule, Vec<Outcome>)> =
        plan.schedules.iter().map(|&s| (s, Vec::new())).collect();
    let (mut exact, mut exact_fallbacks) = (Vec::new(), 0);
    for draw in 0..plan.draws as u64 {
        ctx.progress.set_message(format!(
            "latent seed {} (max f {:.2}), counts {draw}",
            latent.seed, latent.max_f
        ));
        let prob = problem(latent, draw)?;
        let (nll, fallback) = exact_laplace(&prob)?;
        exact.push(nll);
        exact_fallbacks += usize::from(fallback);
        for (s, outcomes) in runs.iter_mut() {
            outcomes.push(run_schedule(&prob, *s, step_control)?);
        }
        ctx.progress.inc(1);
    }
    Ok(Study {
        latent,
        step_control,
        runs,
        exact,
        exact_fallbacks,
    })
}

fn fmt_nll(v: f64) -> String {
    if !v.is_finite() {
        "diverged (∞)".into()
    } else if v >= 1e3 {
        format!("{v:.3e}")
    } else {
        format!("{v:.4}")
    }
}

/// `Converged 7, BudgetSpent 3`: how the runs ended.
fn stop_counts(outcomes: &[Outcome]) -> String {
    let mut counts: Vec<(&str, usize)> = Vec::new();
    for o in outcomes {
        match counts.iter_mut().find(|c| c.0 == o.stop) {
            Some(c) => c.1 += 1,
            None => counts.push((&o.stop, 1)),
        }
    }
    counts
        .iter()
        .map(|(s, n)| format!("{s} {n}"))
        .collect::<Vec<_>>()
        .join(", ")
}

impl Study {
    fn medians(outcomes: &[Outcome], value: impl Fn(&Outcome) -> f64) -> f64 {
        median(&outcomes.iter().map(value).collect::<Vec<_>>())
    }

    fn table(&self, with_prototype: bool) -> Table {
        let mut headers = vec![
            "schedule".to_string(),
            "median final test NLL".into(),
            "median @25".into(),
            "median @50".into(),
            "actions used (median)".into(),
            "outer steps (median)".into(),
            "diverged runs".into(),
            "solver time (median)".into(),
            "ended by (runs)".into(),
        ];
        if with_prototype {
            headers.push("prototype, spec §8 (draw max f 2.46)".into());
        }
        let mut table = Table::new(headers);
        for (s, outcomes) in &self.runs {
            let diverged = outcomes.iter().filter(|o| o.diverged.is_some()).count();
            let mut row = vec![
                s.label(),
                fmt_nll(Self::medians(outcomes, Outcome::final_nll)),
                fmt_nll(Self::medians(outcomes, |o| o.at_budget(BUDGET_MARKS[0]))),
                fmt_nll(Self::medians(outcomes, |o| o.at_budget(BUDGET_MARKS[1]))),
                format!("{:.0}", Self::medians(outcomes, |o| o.actions as f64)),
                format!("{:.0}", Self::medians(outcomes, |o| o.outer_steps as f64)),
                format!("{diverged}/{}", outcomes.len()),
                fmt_seconds(Self::medians(outcomes, |o| o.seconds)),
                stop_counts(outcomes),
            ];
            if with_prototype {
                row.push(s.prototype().into());
            }
            table.row(row);
        }
        let mut row = vec![
            "exact Laplace (dense Newton)".to_string(),
            fmt_nll(median(&self.exact)),
            String::new(),
            String::new(),
            String::new(),
            String::new(),
            String::new(),
            String::new(),
            String::new(),
        ];
        if with_prototype {
            row.push("1.483".into());
        }
        table.row(row);
        table
    }

    fn j1(&self) -> Option<&Vec<Outcome>> {
        self.runs
            .iter()
            .find(|(s, _)| s.max_inner == 1)
            .map(|(_, o)| o)
    }

    /// E1(a), E1(b) at both budgets, E1(c) and E2.
    fn checks(&self) -> Vec<Check> {
        let Some(j1) = self.j1() else {
            return Vec::new();
        };
        let others: Vec<&(Schedule, Vec<Outcome>)> =
            self.runs.iter().filter(|(s, _)| s.max_inner != 1).collect();
        let mut checks = Vec::new();
        let compare = |what: &str, value: &dyn Fn(&Outcome) -> f64| {
            let ours = Self::medians(j1, value);
            let theirs: Vec<String> = others
                .iter()
                .map(|(s, o)| format!("j ≤ {}: {}", s.max_inner, fmt_nll(Self::medians(o, value))))
                .collect();
            let met = ours.is_finite()
                && others
                    .iter()
                    .all(|(_, o)| ours <= Self::medians(o, value) + 0.01);
            Check::new(
                format!(
                    "E1: median test NLL {what} of j ≤ 1 ({}) ≤ every other schedule's + 0.01 ({})",
                    fmt_nll(ours),
                    theirs.join(", ")
                ),
                met,
            )
        };
        checks.push(compare("at the end (a)", &Outcome::final_nll));
        for b in BUDGET_MARKS {
            checks.push(compare(&format!("after {b} actions (b)"), &|o| {
                o.at_budget(b)
            }));
        }
        let within = j1
            .iter()
            .zip(&self.exact)
            .filter(|(o, e)| (o.final_nll() - *e).abs() <= 0.02)
            .count();
        checks.push(Check::new(
            format!(
                "E1(c): j ≤ 1 ends within 0.02 of the exact-LA test NLL in ≥ 9/10 of the runs \
                 ({within}/{}; latent max f {:.2} ≤ 2.5)",
                j1.len(),
                self.latent.max_f
            ),
            !j1.is_empty() && 10 * within >= 9 * j1.len(),
        ));
        let prior = 2.0 * 1.96 * PoissonOptions::default().outputscale.sqrt();
        let contracted = j1.iter().all(|o| {
            o.diverged.is_none() && o.width_first.is_some_and(|w| o.width_end < w && w < prior)
        });
        let firsts: Vec<f64> = j1.iter().filter_map(|o| o.width_first).collect();
        let ends: Vec<f64> = j1.iter().map(|o| o.width_end).collect();
        checks.push(Check::new(
            format!(
                "E2: j ≤ 1 mean 95 % latent band width at the training inputs, end < after \
                 action 1 < prior {prior:.2}, in every run (medians {:.2} < {:.2})",
                median(&ends),
                median(&firsts)
            ),
            !j1.is_empty() && contracted,
        ));
        checks
    }

    /// Median test NLL against cumulative actions per schedule (finite medians only).
    fn curve(&self, file_stem: &str, title: String) -> Curve {
        let mut series: Vec<Series> = self
            .runs
            .iter()
            .map(|(s, outcomes)| {
                let last = outcomes.iter().map(|o| o.actions).max().unwrap_or(0);
                let points = (0..=last)
                    .map(|b| (b as f64, Self::medians(outcomes, |o| o.at_budget(b))))
                    .filter(|p| p.1.is_finite())
                    .collect();
                Series {
                    name: s.label(),
                    points,
                    style: SeriesStyle::Line,
                }
            })
            .collect();
        let exact = median(&self.exact);
        if exact.is_finite() {
            series.push(Series {
                name: "exact Laplace (median)".into(),
                points: vec![(0.0, exact), (BUDGET as f64, exact)],
                style: SeriesStyle::Line,
            });
        }
        Curve {
            file_stem: file_stem.into(),
            title,
            x_label: "cumulative solver actions".into(),
            y_label: "median test NLL".into(),
            log_x: false,
            log_y: true,
            series,
        }
    }

    fn to_json(&self) -> Value {
        json!({
            "latent_seed": self.latent.seed,
            "latent_max_f": self.latent.max_f,
            "step_control": format!("{:?}", self.step_control),
            "exact_laplace_test_nll": self.exact,
            "exact_backtracking_fallbacks": self.exact_fallbacks,
            "schedules": self.runs.iter().map(|(s, o)| json!({
                "max_outer": s.max_outer,
                "max_inner": s.max_inner,
                "runs": o.iter().map(Outcome::to_json).collect::<Vec<_>>(),
            })).collect::<Vec<_>>(),
        })
    }
}

impl Experiment for PoissonSchedules {
    fn name(&self) -> &'static str {
        "poisson"
    }

    fn title(&self) -> &'static str {
        "Poisson regression: one solver action per Newton step is most efficient (Fig. 5; E1, E2)"
    }

    fn paper_reference(&self) -> &'static str {
        "IterNCGP Sec. 5.1, App. C.2, Fig. 5 (spec ncgp.md §4.2, checks E1 and E2)"
    }

    fn describe_size(&self, size: RunSize) -> String {
        let p = plan(size);
        format!(
            "N = 100, {} count draw(s), schedules {}{}",
            p.draws,
            p.schedules
                .iter()
                .map(|s| format!("({}, {})", s.max_outer, s.max_inner))
                .collect::<Vec<_>>()
                .join(", "),
            if p.overshoot {
                "; plus a latent draw with max f ≈ 4, undamped and with backtracking"
            } else {
                ""
            }
        )
    }

    fn estimate_seconds(&self, size: RunSize) -> f64 {
        match size {
            RunSize::Smoke => 2.0,
            // Measured: 5.2 s and 11.5 s on the 2-core machine (the quadrature dominates).
            RunSize::Quick => 6.0,
            RunSize::Full => 14.0,
        }
    }

    fn run(&self, ctx: &RunContext<'_>) -> Result<ExperimentOutput, BenchError> {
        let p = plan(ctx.size);
        let studies = if p.overshoot { 3 } else { 1 };
        ctx.progress.set_length((p.draws * studies) as u64);
        // The draw the checks use: max f ≤ 2.5 (spec §7.1, E1(c)); the lower bound keeps the
        // counts as large as the paper's setup gives (the prototype's draws had 2.46, 2.47).
        let main = study(ctx, choose_latent(2.0, 2.5)?, &p, StepControl::Undamped)?;
        let mut tables = vec![NamedTable {
            title: format!(
                "Fig. 5 / E1: test NLL under a budget of {BUDGET} actions (latent seed {}, max f \
                 {:.2}; {} count draws)",
                main.latent.seed, main.latent.max_f, p.draws
            ),
            table: main.table(true),
        }];
        let checks = main.checks();
        let mut curves = vec![main.curve(
            "fig5-test-nll",
            format!(
                "Fig. 5: median test NLL against cumulative actions (latent max f {:.2})",
                main.latent.max_f
            ),
        )];
        let mut notes = vec![
            format!(
                "Data: App. C.2, N = 100 inputs equally spaced on [0, 1], one latent draw \
                 f ~ GP(0, 5·RBF(0.1)) fixed across runs: latent seed {} (the first of seeds \
                 0, 1, 2, … whose max f lies in [2.0, 2.5]; its max f = {:.3}). Counts \
                 y ~ Poisson(e^f) redrawn per run (count seeds 0..{}); the test set is fresh \
                 counts at the same inputs (count seed + {TEST_SEED_OFFSET}, spec §8's choice).",
                main.latent.seed,
                main.latent.max_f,
                p.draws.saturating_sub(1)
            ),
            format!(
                "IterNCGP-CG, recycling without compression, undamped (the paper), outer \
                 tolerance {OUTER_TOLERANCE}, a budget of {BUDGET} new actions over the run. Test \
                 NLL = mean −log p(y⋄ | latent marginals) at the training inputs after every \
                 action, by a 2001-point trapezoid rule over m ± 10σ in log space (not the \
                 paper's Monte Carlo with 10⁵ samples). NLL at a budget b = the value after the \
                 last action ≤ b (a run that stopped earlier keeps its final value); a diverged \
                 run (NewtonDiverged) counts as +∞. Exact Laplace: dense Newton to tolerance \
                 1e-8 with the covariance at the mode ({} of {} draws needed the backtracking \
                 fallback).",
                main.exact_fallbacks, p.draws
            ),
            "The prototype column is spec §8's NumPy prototype on a different latent draw \
             (max f 2.46), calibration only: the paper shows Fig. 5 as a figure without numbers."
                .into(),
        ];
        let mut raw = vec![main.to_json()];
        if p.overshoot {
            let latent = choose_latent(3.5, 4.5)?;
            for (control, key, label) in [
                (StepControl::Undamped, "undamped", "undamped (paper)"),
                (
                    StepControl::Backtracking { max_halvings: 30 },
                    "backtracking",
                    "backtracking on Ψ, ≤ 30 halvings (our extension)",
                ),
            ] {
                let s = study(ctx, latent, &p, control)?;
                tables.push(NamedTable {
                    title: format!(
                        "Overshoot draw (spec §7.1): latent seed {}, max f {:.2}, {label}",
                        latent.seed, latent.max_f
                    ),
                    table: s.table(false),
                });
                curves.push(s.curve(
                    &format!("fig5-overshoot-{key}"),
                    format!("Median test NLL, latent max f {:.2}, {label}", latent.max_f),
                ));
                raw.push(s.to_json());
            }
            notes.push(format!(
                "Full only: a second latent draw (seed {}, the first with max f in [3.5, 4.5]) \
                 shows the undamped overshoot of spec §7.1 (prototype: j ≥ 5 diverged on such \
                 draws); the backtracking table is our extension, not the paper's method. No \
                 checks are judged on it. With backtracking a halved step also shortens \
                 ‖g_{{i+1}} − g_i‖, so the outer rule (relative change ≤ 1e-3) can end a run \
                 before the mode (column \"ended by\"; last step lengths in results.json).",
                latent.seed
            ));
        }
        Ok(ExperimentOutput {
            tables,
            notes,
            raw: json!({ "studies": raw }),
            curves,
            checks,
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn trapezoid_predictive_is_a_distribution_with_the_right_mean() {
        // Σ_y p(y) = 1 and E[y] = E[e^f] = exp(m + v/2) for f ~ N(m, v).
        let (m, v) = (1.0, 0.25);
        let probs: Vec<f64> = (0..200)
            .map(|y| log_predictive(m, v, y as f64, log_factorial(y as f64)).exp())
            .collect();
        let total: f64 = probs.iter().sum();
        let mean: f64 = probs.iter().enumerate().map(|(y, p)| y as f64 * p).sum();
        assert!((total - 1.0).abs() < 1e-10, "{total}");
        assert!((mean - (m + v / 2.0_f64).exp()).abs() < 1e-9, "{mean}");
        // Zero variance: the plain Poisson log pmf.
        let direct = 3.0 * 0.2 - 0.2_f64.exp() - log_factorial(3.0);
        assert!((log_predictive(0.2, 0.0, 3.0, log_factorial(3.0)) - direct).abs() < 1e-14);
    }

    #[test]
    fn budget_values_treat_divergence_as_infinite() {
        let o = Outcome {
            trace: vec![(0, 3.0), (1, 2.0), (2, 1.5)],
            diverged: None,
            outer_steps: 2,
            actions: 2,
            seconds: 0.0,
            width_first: Some(8.0),
            width_end: 2.0,
            stop: "Converged".into(),
            last_step_length: 1.0,
        };
        assert_eq!(o.at_budget(1), 2.0);
        assert_eq!(o.at_budget(50), 1.5);
        let d = Outcome {
            diverged: Some("overflow".into()),
            ..o
        };
        assert_eq!(d.at_budget(1), 2.0);
        assert_eq!(d.at_budget(50), f64::INFINITY);
        assert_eq!(d.final_nll(), f64::INFINITY);
    }
}
