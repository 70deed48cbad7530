//! SOUND (spec §3.6; Figure 8): 59 309 audio samples on a 60 000-step time grid with gaps,
//! the SE kernel's products by FFT (Toeplitz over the full grid, the gaps zeroed), KMCG and
//! CG against VFE/FITC with `M = P` random or grid inducing inputs, scored by SMSE against
//! the true test targets; claim C9.

use std::sync::Arc;

use faer::ColRef;
use gp_models::kmcg::KmcgBasis;
use serde_json::json;

use super::curves::{Method, ProblemRun};
use super::hyper::{build_kernel, KernelKind, SOUND_HYPER};
use super::metrics::{inducing_count_structured, repetition_seeds};
use super::paper_table::Metric;
use super::problem_run::{run_problem, DenseRunOptions, KrylovPlan, Problem, Scoring};
use super::report_tables::{metric_table, paper_series, series, time_table};
use super::sound::SoundProblem;
use crate::error::BenchError;
use crate::experiment::{
    Check, Curve, Experiment, ExperimentOutput, NamedTable, RunContext, RunSize,
};

/// The experiment.
#[derive(Debug, Clone, Copy, Default)]
pub struct SoundFigure;

const TABLE_STEPS: [usize; 8] = [1, 5, 10, 20, 50, 100, 200, 500];

fn options(size: RunSize) -> DenseRunOptions {
    let (p_max, seeds) = match size {
        RunSize::Smoke => (10, 1),
        RunSize::Quick => (100, 2),
        RunSize::Full => (1000, 10),
    };
    let mut baseline_steps: Vec<usize> = TABLE_STEPS.to_vec();
    baseline_steps.extend([1000]);
    DenseRunOptions {
        p_max,
        timed_steps: baseline_steps.clone(),
        baseline_steps: baseline_steps.into_iter().filter(|&p| p <= p_max).collect(),
        baseline_seeds: repetition_seeds(seeds),
        krylov: KrylovPlan::Separate(KmcgBasis::Fom),
        textbook: false,
        grid_inducing: true,
        inducing_count: |_, p| inducing_count_structured(p),
    }
}

fn smse_at(r: &ProblemRun, m: Method, p: usize) -> Option<f64> {
    r.curve(m).and_then(|c| c.at(p)).map(|s| s.eps_f)
}

fn checks(r: &ProblemRun, p_max: usize) -> Vec<Check> {
    let kmcg10 = smse_at(r, Method::Kmcg, 10);
    let cg_before_30 = r.curve(Method::Cg).map(|c| {
        c.steps
            .iter()
            .filter(|s| s.p < 30)
            .map(|s| s.eps_f)
            .fold(f64::INFINITY, f64::min)
    });
    let random_min = [Method::Vfe, Method::Fitc]
        .iter()
        .filter_map(|&m| r.curve(m))
        .flat_map(|c| c.steps.iter().map(|s| s.eps_f))
        .fold(f64::INFINITY, f64::min);
    vec![
        Check::new(
            format!("C9: KMCG's SMSE ≤ 0.06 by P = 10 ({})", kmcg10.map_or("—".into(), |v| format!("{v:.4}"))),
            kmcg10.is_some_and(|v| v <= 0.06),
        ),
        Check::new(
            format!(
                "C9: CG's SMSE above 0.06 for every P < 30 (smallest {})",
                cg_before_30.map_or("—".into(), |v| format!("{v:.4}"))
            ),
            cg_before_30.is_some_and(|v| v > 0.06),
        ),
        Check::new(
            format!("C9: random-subset VFE/FITC stay above 0.5 for M = P ≤ {} (smallest {random_min:.4})", p_max.min(1000)),
            random_min.is_finite() && random_min > 0.5,
        ),
    ]
}

impl Experiment for SoundFigure {
    fn name(&self) -> &'static str {
        "sound"
    }

    fn title(&self) -> &'static str {
        "SOUND: SMSE against P with Toeplitz (FFT) products"
    }

    fn paper_reference(&self) -> &'static str {
        "Figure 8 (numbers: spec Appendix C.3); claim C9"
    }

    fn describe_size(&self, size: RunSize) -> String {
        let o = options(size);
        format!(
            "N = 59 309 on a 60 000-point grid, 691 test points; SE ℓ = 10, sf² = 5.098e-3, σ² = 7.161e-5; P ≤ {}; \
             VFE/FITC with M = P at {:?}: {} random-subset seed(s) and one regular grid",
            o.p_max,
            o.baseline_steps,
            o.baseline_seeds.len()
        )
    }

    fn estimate_seconds(&self, size: RunSize) -> f64 {
        match size {
            RunSize::Smoke => 2.0,
            RunSize::Quick => 10.0,
            RunSize::Full => 900.0,
        }
    }

    fn run(&self, ctx: &RunContext<'_>) -> Result<ExperimentOutput, BenchError> {
        let o = options(ctx.size);
        ctx.progress.set_length(1);
        let sound = SoundProblem::load(ctx.data_dir.path.as_deref(), ctx.seed)?;
        let data = &sound.data;
        let kernel = build_kernel(
            KernelKind::SeArd,
            vec![SOUND_HYPER.lengthscale],
            SOUND_HYPER.signal_variance,
        )?;
        let problem = Problem {
            dataset: "SOUND".into(),
            kernel_label: "SE".into(),
            stand_in: sound.is_stand_in(),
            kernel,
            x: data.x_train.as_ref(),
            xs: data.x_test.as_ref(),
            k: Arc::new(sound.train_operator()?),
            // A failed product leaves an empty row, which the estimate refuses with a typed
            // length error.
            test_row: Box::new(|s: &[f64]| {
                sound
                    .cross_dot(ColRef::from_slice(s))
                    .map(|c| c.iter().copied().collect())
                    .unwrap_or_default()
            }),
            kss: vec![sound.test_prior_variance(); sound.n_test()],
            y: data.y_train.iter().copied().collect(),
            noise: SOUND_HYPER.noise_variance,
            scoring: Scoring::Smse(&data.y_test),
        };
        let run = run_problem(&problem, &o)?;
        ctx.progress.inc(1);
        let methods = [
            Method::Cg,
            Method::Kmcg,
            Method::Vfe,
            Method::Fitc,
            Method::VfeGrid,
            Method::FitcGrid,
        ];
        let steps: Vec<usize> = TABLE_STEPS
            .iter()
            .copied()
            .filter(|&p| p <= o.p_max)
            .collect();
        let runs = vec![run];
        let mut smse: Vec<_> = methods
            .iter()
            .filter_map(|&m| runs[0].curve(m))
            .map(|c| series(c, |s| Some(s.eps_f)))
            .collect();
        smse.extend(
            [Method::Cg, Method::Kmcg]
                .iter()
                .filter_map(|&m| paper_series(&runs[0], Metric::Smse, m, &steps)),
        );
        let mut notes = vec![
            "SMSE is against the true test targets (the exact GP is not computed here); it sits in the tables' \
             ε_f column. The paper's VFE/FITC rows average 10 random-subset runs and the grid run; ours keep \
             them apart."
                .to_string(),
        ];
        if runs[0].stand_in {
            notes.push("SOUND files not found: a labelled synthetic stand-in of the same layout ran; claims are not judged against the paper's data.".into());
        }
        Ok(ExperimentOutput {
            tables: vec![
                NamedTable {
                    title: "SMSE, ours (paper)".into(),
                    table: metric_table(&runs, Metric::Smse, &methods, &steps),
                },
                NamedTable {
                    title: "Time: cumulative for CG/KMCG, that step's from-scratch fit for VFE/FITC (first seed)".into(),
                    table: time_table(&runs),
                },
            ],
            notes,
            raw: json!({ "runs": runs }),
            curves: vec![Curve {
                file_stem: "sound-smse".into(),
                title: "SOUND: SMSE against P (Fig. 8)".into(),
                x_label: "steps P (= M for the baselines)".into(),
                y_label: "SMSE".into(),
                log_x: true,
                log_y: true,
                series: smse,
            }],
            checks: checks(&runs[0], o.p_max),
        })
    }
}
