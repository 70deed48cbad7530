//! The dense experiments (spec §3.1–3.4; Figures 4–6, 9, 11–15): every method against `P`
//! on each data set and kernel, with the authors' fixed hyperparameters (Appendix A) on our
//! own 2-fold split, the paper's numbers (Appendix C) beside ours and the claims C1–C6.

use serde_json::json;

use super::claims;
use super::curves::{Method, ProblemRun};
use super::dense::SPLIT_SEED;
use super::hyper::{DenseSet, KernelKind};
use super::metrics::{inducing_count_dense, repetition_seeds};
use super::paper_table::Metric;
use super::problem_cache::DenseProblems;
use super::problem_run::{run_dense, DenseRunOptions, KrylovPlan};
use super::report_tables::{metric_table, paper_series, series, time_curve, time_table};
use crate::error::BenchError;
use crate::experiment::{
    Curve, Experiment, ExperimentOutput, NamedTable, RunContext, RunSize, Series,
};
use crate::fold_cache::FoldCache;
use gp_models::kmcg::KmcgBasis;

/// The experiment.
#[derive(Debug, Clone, Copy, Default)]
pub struct DenseFigures;

/// The steps of the report's tables (the appendix's columns).
pub const TABLE_STEPS: [usize; 7] = [1, 2, 5, 10, 20, 50, 100];

struct Plan {
    sets: Vec<DenseSet>,
    kinds: Vec<KernelKind>,
    options: DenseRunOptions,
}

/// The runner's options at `size`: CG/KMCG at every step `P ≤ 100` (20 at smoke), the
/// baselines at 4, 13 or all 100 steps with 1, 3 or the paper's 10 seeds, timed from
/// scratch at the table's steps.
pub fn run_options(size: RunSize) -> DenseRunOptions {
    let (p_max, baseline_steps, seeds) = match size {
        RunSize::Smoke => (20, vec![1, 5, 10, 20], 1),
        RunSize::Quick => (100, vec![1, 2, 3, 5, 7, 10, 15, 20, 30, 40, 50, 70, 100], 3),
        RunSize::Full => (100, (1..=100).collect(), 10),
    };
    DenseRunOptions {
        krylov: KrylovPlan::Separate(KmcgBasis::Fom),
        textbook: true,
        grid_inducing: false,
        inducing_count: inducing_count_dense,
        p_max,
        timed_steps: match size {
            RunSize::Smoke => vec![1, 5, 10, 20],
            _ => TABLE_STEPS.to_vec(),
        },
        baseline_steps,
        baseline_seeds: repetition_seeds(seeds),
    }
}

fn plan(size: RunSize) -> Plan {
    let (sets, kinds) = match size {
        RunSize::Smoke => (vec![DenseSet::Mpg, DenseSet::Toy], vec![KernelKind::SeArd]),
        RunSize::Quick => (DenseSet::QUICK.to_vec(), KernelKind::ALL.to_vec()),
        RunSize::Full => (DenseSet::ALL.to_vec(), KernelKind::ALL.to_vec()),
    };
    Plan {
        sets,
        kinds,
        options: run_options(size),
    }
}

/// The problems of a run at `size` as the fold cache keys them. The settings name every
/// option of [`run_options`] (bump the version when the code changes a result).
fn problems(size: RunSize) -> DenseProblems {
    let Plan {
        sets,
        kinds,
        options: o,
    } = plan(size);
    DenseProblems {
        experiment: "kmcg/dense",
        sets,
        kinds,
        settings: format!(
            "kmcg dense v2; {size:?}; krylov {:?}; textbook {}; grid inducing {}; M = ceil(sqrt(NP)); \
             P <= {}; baseline steps {:?}; seeds {:?}; timed {:?}",
            o.krylov, o.textbook, o.grid_inducing, o.p_max, o.baseline_steps, o.baseline_seeds, o.timed_steps
        ),
        cost: full_problem_cost,
    }
}

/// The relative cost of one problem of `set` at `--full`: the baselines dominate, each
/// fit `O(N M²)` with `M² = NP`, so `N²` (the training half's size, squared).
fn full_problem_cost(set: DenseSet) -> f64 {
    let n = set.rows().div_ceil(2) as f64;
    n * n
}

fn curves_for(r: &ProblemRun) -> Vec<Curve> {
    let stem = format!(
        "dense-{}-{}",
        r.dataset.to_lowercase(),
        if r.kernel.starts_with("SE") {
            "se"
        } else {
            "matern"
        }
    );
    let main = [Method::Cg, Method::Kmcg, Method::Vfe, Method::Fitc];
    let mut eps_f: Vec<Series> = main
        .iter()
        .filter_map(|&m| r.curve(m))
        .map(|c| series(c, |s| Some(s.eps_f)))
        .collect();
    eps_f.extend(
        [Method::Cg, Method::Kmcg]
            .iter()
            .filter_map(|&m| paper_series(r, Metric::EpsF, m, &TABLE_STEPS)),
    );
    let var_methods = [Method::Kmcg, Method::Vfe, Method::Fitc];
    let eps_var: Vec<Series> = var_methods
        .iter()
        .filter_map(|&m| r.curve(m))
        .map(|c| series(c, |s| s.eps_var))
        .collect();
    let eps_ev: Vec<Series> = var_methods
        .iter()
        .filter_map(|&m| r.curve(m))
        .map(|c| series(c, |s| s.eps_ev))
        .collect();
    let tb = [
        Method::Cg,
        Method::Kmcg,
        Method::CgTextbook,
        Method::KmcgTextbook,
    ];
    let fig15: Vec<Series> = tb
        .iter()
        .filter_map(|&m| r.curve(m))
        .map(|c| series(c, |s| Some(s.eps_f)))
        .collect();
    let title = |what: &str| format!("{} ({}): {what}", r.dataset, r.kernel);
    let curve = |suffix: &str, what: &str, y: &str, s: Vec<Series>| Curve {
        file_stem: format!("{stem}-{suffix}"),
        title: title(what),
        x_label: "steps P".into(),
        y_label: y.into(),
        log_x: false,
        log_y: true,
        series: s,
    };
    vec![
        curve(
            "eps-f",
            "relative error of the mean (Figs. 4/11)",
            "ε_f",
            eps_f,
        ),
        curve(
            "eps-var",
            "relative error of the predictive variance (Figs. 5/12)",
            "ε_var",
            eps_var,
        ),
        curve(
            "eps-ev",
            "relative error of −log evidence (Figs. 6/13; VFE with the textbook sign)",
            "ε_ev",
            eps_ev,
        ),
        curve("fig15", "textbook CG against FOM (Fig. 15)", "ε_f", fig15),
        time_curve(
            r,
            format!("{stem}-time"),
            title("relative error of the mean against wall time (Figs. 9/14)"),
            "ε_f",
        ),
    ]
}

impl Experiment for DenseFigures {
    fn name(&self) -> &'static str {
        "dense"
    }

    fn title(&self) -> &'static str {
        "Dense data sets: CG, KMCG, VFE and FITC against the number of steps P"
    }

    fn paper_reference(&self) -> &'static str {
        "Figures 4–6, 9, 11–15 (numbers: spec Appendix C); claims C1–C6 (spec §4.2)"
    }

    fn describe_size(&self, size: RunSize) -> String {
        let p = plan(size);
        format!(
            "{} × {}; CG/KMCG every step P ≤ {}; VFE/FITC at {} steps × {} seeds (M = ⌈√(NP)⌉ nested random inputs); Appendix A hyperparameters on our 2-fold split (seed {SPLIT_SEED})",
            p.sets.iter().map(|s| s.name()).collect::<Vec<_>>().join(", "),
            p.kinds.iter().map(|k| k.label()).collect::<Vec<_>>().join(" and "),
            p.options.p_max,
            p.options.baseline_steps.len(),
            p.options.baseline_seeds.len()
        )
    }

    /// `--full`: measured 3266 s (all 16 problems, one core, another run on the second).
    fn estimate_seconds(&self, size: RunSize) -> f64 {
        match size {
            RunSize::Smoke => 3.0,
            RunSize::Quick => 20.0,
            RunSize::Full => 3300.0,
        }
    }

    fn estimate_seconds_remaining(
        &self,
        size: RunSize,
        folds: Option<usize>,
        sets: Option<&[String]>,
        fold_cache: Option<&FoldCache>,
        _seed: u64,
        _seeds: usize,
    ) -> f64 {
        problems(size).remaining_seconds(
            self.estimate_seconds_with_folds(size, folds),
            sets,
            fold_cache,
        )
    }

    fn run(&self, ctx: &RunContext<'_>) -> Result<ExperimentOutput, BenchError> {
        let p = plan(ctx.size);
        let done = problems(ctx.size).run(ctx, |problem| run_dense(problem, &p.options))?;
        let mut notes: Vec<String> = done
            .problems
            .iter()
            .filter_map(|problem| {
                let why = problem.stand_in.as_ref()?;
                Some(format!("{}: {why}", problem.name))
            })
            .collect();
        notes.extend(done.note(ctx.fold_cache));
        let runs: Vec<ProblemRun> = done.results.into_iter().flatten().collect();
        notes.dedup();
        notes.push(
            "Hyperparameters: the authors' optimised values (spec Appendix A) held fixed on our own split \
             (we cannot replicate MATLAB's rng(0) split), as spec §6 item 10 recommends; absolute ε move by \
             about 2× against the paper's, so only orderings and crossings are judged (C1–C6). Paper values \
             (means over 10 seeds, from the authors' result files) are in parentheses; baselines here average \
             fewer seeds at --quick."
                .into(),
        );
        notes.push(
            "ε_ev of VFE uses the textbook −ELBO = nlZ_DTC + trace term in the figure; the ε_ev table gives the \
             paper's plotted (mis-signed) nlZ_DTC − trace term for comparability (spec §5 item 6)."
                .into(),
        );
        let mut checks = claims::c1(&runs);
        checks.push(claims::c2(&runs));
        checks.extend(claims::c3(&runs));
        checks.push(claims::c4(&runs));
        checks.extend(claims::c5(&runs));
        checks.extend(claims::c6(&runs, p.options.p_max));
        let all = [
            Method::Cg,
            Method::Kmcg,
            Method::Vfe,
            Method::Fitc,
            Method::CgTextbook,
            Method::KmcgTextbook,
        ];
        let tables = vec![
            NamedTable {
                title: "ε_f, ours (paper)".into(),
                table: metric_table(&runs, Metric::EpsF, &all, &TABLE_STEPS),
            },
            NamedTable {
                title: "ε_var, ours (paper)".into(),
                table: metric_table(
                    &runs,
                    Metric::EpsVar,
                    &[Method::Kmcg, Method::Vfe, Method::Fitc],
                    &TABLE_STEPS,
                ),
            },
            NamedTable {
                title: "ε_ev, ours (paper); VFE in the paper's plotted sign".into(),
                table: metric_table(
                    &runs,
                    Metric::EpsEv,
                    &[Method::Kmcg, Method::Vfe, Method::Fitc],
                    &TABLE_STEPS,
                ),
            },
            NamedTable {
                title:
                    "Time: cumulative for CG/KMCG, a from-scratch fit and prediction at that step for VFE/FITC (first seed)"
                        .into(),
                table: time_table(&runs),
            },
        ];
        Ok(ExperimentOutput {
            tables,
            notes,
            raw: json!({ "runs": runs }),
            curves: runs.iter().flat_map(curves_for).collect(),
            checks,
        })
    }
}
