//! Figure 1: the bias of truncated CG and of random Fourier features on the two terms of
//! the log marginal likelihood, and the unbiasedness of RR-CG and SS-RFF (H1, H2, H4, H5,
//! H7), on a PolTele training subset at the hyperparameters of the reference code's figure
//! (isotropic RBF, ℓ = 0.366, s = 0.375, σ² = 0.0163).

use std::sync::Arc;

use gp_kernels::SquaredExponential;
use gp_models::objective::rff::{Compute, RffObjective, SpectralDraws, SsRff, SsRffOptions};
use gp_models::objective::{
    cholesky_estimate, krylov_estimate, DenseKernelCovariance, KrylovDepth, KrylovObjectiveOptions,
};
use gp_solvers::truncation::{ExpDecay, TruncationLaw};
use rand::SeedableRng;
use rand_chacha::ChaCha8Rng;
use serde_json::json;

use super::data::load_rtgps;
use crate::error::BenchError;
use crate::experiment::{Check, Experiment, ExperimentOutput, NamedTable, RunContext, RunSize};
use crate::table::{fmt_seconds, Table};

/// The experiment.
#[derive(Debug, Clone, Copy, Default)]
pub struct BiasFigure;

/// The hyperparameters of the reference code's Figure 1.
const LENGTHSCALE: f64 = 0.366;
const OUTPUTSCALE: f64 = 0.375;
const NOISE: f64 = 0.0163;

struct Plan {
    /// Points of the whole subset (its 64% are the training points used).
    total: usize,
    draws: usize,
    cg_iterations: &'static [usize],
    rr_j_min: &'static [usize],
    rff_freqs: &'static [usize],
}

fn plan(size: RunSize) -> Plan {
    match size {
        RunSize::Smoke => Plan {
            total: 250,
            draws: 30,
            cg_iterations: &[5, 20],
            rr_j_min: &[10],
            rff_freqs: &[25, 50],
        },
        RunSize::Quick => Plan {
            total: 625,
            draws: 80,
            cg_iterations: &[5, 10, 20, 40],
            rr_j_min: &[1, 10, 30],
            rff_freqs: &[25, 50, 100, 150],
        },
        RunSize::Full => Plan {
            total: 1563,
            draws: 1000,
            cg_iterations: &[5, 10, 20, 40, 80],
            rr_j_min: &[1, 20, 60],
            rff_freqs: &[50, 100, 200, 300, 400],
        },
    }
}

/// Mean and standard error of the mean.
fn mean_se(v: &[f64]) -> (f64, f64) {
    let m = v.len() as f64;
    let mean = v.iter().sum::<f64>() / m;
    let var = v.iter().map(|x| (x - mean).powi(2)).sum::<f64>() / (m - 1.0).max(1.0);
    (mean, (var / m).sqrt())
}

/// One estimator's samples of the two terms.
struct Row {
    method: String,
    work: String,
    fit: (f64, f64),
    log_det: (f64, f64),
    /// Sample standard deviation of one draw's `yᵀK⁻¹y + log|K|` (−2 log p up to a
    /// constant).
    sum_sd: f64,
    /// Wall time per draw, seconds.
    seconds_per_draw: f64,
}

impl Row {
    fn new(method: String, work: String, fits: &[f64], lds: &[f64], seconds: f64) -> Self {
        let sums: Vec<f64> = fits.iter().zip(lds).map(|(a, b)| a + b).collect();
        let (_, se) = mean_se(&sums);
        Self {
            method,
            work,
            fit: mean_se(fits),
            log_det: mean_se(lds),
            sum_sd: se * (sums.len() as f64).sqrt(),
            seconds_per_draw: seconds / fits.len().max(1) as f64,
        }
    }

    /// `sd · √(seconds per draw)`: the standard error a fixed time budget reaches is
    /// proportional to it (H8's "SE per unit cost").
    fn se_per_unit_cost(&self) -> f64 {
        self.sum_sd * self.seconds_per_draw.sqrt()
    }
}

impl Experiment for BiasFigure {
    fn name(&self) -> &'static str {
        "bias"
    }

    fn title(&self) -> &'static str {
        "Figure 1: CG and RFF are biased on both terms of log p(y); RR-CG and SS-RFF are not"
    }

    fn paper_reference(&self) -> &'static str {
        "RTGPS §5 Fig. 1 (spec rtgps.md §5.7, §6 H1, H2, H4, H5, H7, H8)"
    }

    fn describe_size(&self, size: RunSize) -> String {
        let p = plan(size);
        format!(
            "PolTele subset of {} points (train 64%), {} draws per estimator, CG J ∈ {:?}, RR-CG λ = 0.05 with J_min ∈ {:?}, RFF D ∈ {:?}, SS-RFF with an exact top term",
            p.total, p.draws, p.cg_iterations, p.rr_j_min, p.rff_freqs
        )
    }

    fn estimate_seconds(&self, size: RunSize) -> f64 {
        match size {
            RunSize::Smoke => 2.0,
            RunSize::Quick => 12.0,
            RunSize::Full => 600.0,
        }
    }

    fn run(&self, ctx: &RunContext<'_>) -> Result<ExperimentOutput, BenchError> {
        let p = plan(ctx.size);
        let split = load_rtgps("pol", ctx.data_dir.path.as_deref(), ctx.seed, Some(p.total))?;
        let (x, y) = (split.x_train.as_ref(), split.y_train.as_ref());
        let n = x.nrows();
        let kernel = SquaredExponential::isotropic(x.ncols(), LENGTHSCALE, OUTPUTSCALE)?;
        let exact = cholesky_estimate(&kernel, x, y, NOISE)?;
        let (exact_fit, exact_ld) = (
            exact.data_fit.unwrap_or(f64::NAN),
            exact.log_det.unwrap_or(f64::NAN),
        );
        let mut rng = ChaCha8Rng::seed_from_u64(ctx.seed + 101);
        let opts = KrylovObjectiveOptions::default();
        let cov = DenseKernelCovariance::new(&kernel, x, NOISE, &opts)?;
        let mut rows = Vec::new();
        let total = p.cg_iterations.len() + p.rr_j_min.len() + p.rff_freqs.len() + 1;
        ctx.progress.set_length(total as u64);
        let sample = |depth: KrylovDepth<'_>,
                      rng: &mut ChaCha8Rng|
         -> Result<(Vec<f64>, Vec<f64>, f64), BenchError> {
            let clock = std::time::Instant::now();
            let mut fits = Vec::with_capacity(p.draws);
            let mut lds = Vec::with_capacity(p.draws);
            for _ in 0..p.draws {
                let e = krylov_estimate(&cov, y.as_mat(), depth, &opts, None, rng)?;
                fits.push(e.data_fit.unwrap_or(f64::NAN));
                lds.push(e.log_det.unwrap_or(f64::NAN));
            }
            Ok((fits, lds, clock.elapsed().as_secs_f64()))
        };
        for &j in p.cg_iterations {
            let (fits, lds, seconds) = sample(KrylovDepth::Fixed(j), &mut rng)?;
            rows.push(Row::new(
                format!("CG({j})"),
                format!("{j} iterations"),
                &fits,
                &lds,
                seconds,
            ));
            ctx.progress.inc(1);
        }
        let mut rr_rows = Vec::new();
        for &j_min in p.rr_j_min {
            let law: Arc<dyn TruncationLaw> = Arc::new(ExpDecay::new(0.05, j_min, n)?);
            let depth = KrylovDepth::Random {
                law: law.as_ref(),
                draws: 2,
            };
            let (fits, lds, seconds) = sample(depth, &mut rng)?;
            rr_rows.push(rows.len());
            rows.push(Row::new(
                format!("RR-CG(J_min = {j_min})"),
                format!(
                    "E[J] = {:.1}, E[max(J₁,J₂)] = {:.1}",
                    law.mean(),
                    law.mean_max_of_two()
                ),
                &fits,
                &lds,
                seconds,
            ));
            ctx.progress.inc(1);
        }
        let objective = RffObjective::new(kernel.clone(), x, y, NOISE)?;
        let mut rff_rows = Vec::new();
        for &freqs in p.rff_freqs {
            let clock = std::time::Instant::now();
            let mut fits = Vec::with_capacity(p.draws);
            let mut lds = Vec::with_capacity(p.draws);
            for _ in 0..p.draws {
                let draws = SpectralDraws::sample(&kernel, freqs, &mut rng)?;
                let t = objective.rff(&draws, freqs, Compute::Value)?;
                fits.push(t.data_fit);
                lds.push(t.log_det);
            }
            rff_rows.push(rows.len());
            rows.push(Row::new(
                format!("RFF({freqs})"),
                format!("{freqs} frequencies"),
                &fits,
                &lds,
                clock.elapsed().as_secs_f64(),
            ));
            ctx.progress.inc(1);
        }
        // SS-RFF up to n/2 frequencies, the top term exact (spec §3.1): base m₀ = n/20,
        // step c = n/20, H = 9 terms.
        let step = (n / 20).max(1);
        let ss_options = SsRffOptions {
            base_freqs: step,
            step,
            terms: 9,
            exponent: 1.0,
            top_exact: true,
        };
        let ss = SsRff::new(ss_options)?;
        let clock = std::time::Instant::now();
        let mut fits = Vec::with_capacity(p.draws);
        let mut lds = Vec::with_capacity(p.draws);
        for _ in 0..p.draws {
            let e = ss.estimate(&objective, &mut rng, Compute::Value)?;
            fits.push(e.terms.data_fit);
            lds.push(e.terms.log_det);
        }
        let ss_row = rows.len();
        rows.push(Row::new(
            "SS-RFF (exact top)".into(),
            format!(
                "E[D] = {:.0}, top {} frequencies",
                ss.expected_num_freqs(),
                ss.top_freqs()
            ),
            &fits,
            &lds,
            clock.elapsed().as_secs_f64(),
        ));
        ctx.progress.inc(1);

        let mut table = Table::new([
            "estimator",
            "work",
            "yᵀK⁻¹y − exact (± SE)",
            "z",
            "log|K| − exact (± SE)",
            "z",
            "sd of yᵀK⁻¹y + log|K| per draw",
            "time per draw",
            "sd · √time (H8)",
        ]);
        let z = |v: (f64, f64), exact: f64| (v.0 - exact) / v.1.max(1e-300);
        // A deterministic term (CG's data fit: y is the start vector) has a rounding-level
        // spread; its z-score means nothing.
        let z_cell = |v: (f64, f64), exact: f64| {
            if v.1 <= 1e-10 * v.0.abs() {
                "— (deterministic)".to_string()
            } else {
                format!("{:+.1}", z(v, exact))
            }
        };
        for r in &rows {
            table.row([
                r.method.clone(),
                r.work.clone(),
                format!("{:+.4e} ± {:.1e}", r.fit.0 - exact_fit, r.fit.1),
                z_cell(r.fit, exact_fit),
                format!("{:+.4e} ± {:.1e}", r.log_det.0 - exact_ld, r.log_det.1),
                z_cell(r.log_det, exact_ld),
                format!("{:.3e}", r.sum_sd),
                fmt_seconds(r.seconds_per_draw),
                format!("{:.3e}", r.se_per_unit_cost()),
            ]);
        }
        let cg5 = &rows[0];
        let mut checks = vec![
            Check::new(
                format!("H1: {} under-estimates yᵀK⁻¹y", cg5.method),
                cg5.fit.0 < exact_fit,
            ),
            Check::new(
                format!(
                    "H2: {} over-estimates log|K| by more than 4 SE (z = {:+.1})",
                    cg5.method,
                    z(cg5.log_det, exact_ld)
                ),
                z(cg5.log_det, exact_ld) > 4.0,
            ),
        ];
        for &i in &rr_rows {
            let r = &rows[i];
            checks.push(Check::new(
                format!(
                    "H5: {} unbiased on both terms (|z| < 4: {:+.1}, {:+.1})",
                    r.method,
                    z(r.fit, exact_fit),
                    z(r.log_det, exact_ld)
                ),
                z(r.fit, exact_fit).abs() < 4.0 && z(r.log_det, exact_ld).abs() < 4.0,
            ));
        }
        for &i in &rff_rows {
            let r = &rows[i];
            checks.push(Check::new(
                format!(
                    "H4: {} over-estimates yᵀK⁻¹y and under-estimates log|K| (z = {:+.1}, {:+.1})",
                    r.method,
                    z(r.fit, exact_fit),
                    z(r.log_det, exact_ld)
                ),
                z(r.fit, exact_fit) > 4.0 && z(r.log_det, exact_ld) < -4.0,
            ));
        }
        let r = &rows[ss_row];
        checks.push(Check::new(
            format!(
                "H7: SS-RFF unbiased on both terms (|z| < 4: {:+.1}, {:+.1})",
                z(r.fit, exact_fit),
                z(r.log_det, exact_ld)
            ),
            z(r.fit, exact_fit).abs() < 4.0 && z(r.log_det, exact_ld).abs() < 4.0,
        ));
        // H8 at similar cost: the RR-CG row whose time per draw is nearest SS-RFF's.
        if let Some(&rr) = rr_rows.iter().min_by(|&&a, &&b| {
            let gap = |i: usize| (rows[i].seconds_per_draw / r.seconds_per_draw).ln().abs();
            gap(a).total_cmp(&gap(b))
        }) {
            let rr = &rows[rr];
            let ratio = r.se_per_unit_cost() / rr.se_per_unit_cost();
            checks.push(Check::new(
                format!(
                    "H8: SS-RFF's standard error per unit cost over {}'s (the RR-CG row nearest \
                     in time per draw: {} vs {}) above 3: {ratio:.1}",
                    rr.method,
                    fmt_seconds(r.seconds_per_draw),
                    fmt_seconds(rr.seconds_per_draw)
                ),
                ratio > 3.0,
            ));
        }
        let raw = json!({
            "data": split.describe(),
            "hyperparameters": {"lengthscale": LENGTHSCALE, "outputscale": OUTPUTSCALE, "noise": NOISE},
            "exact": {"data_fit": exact_fit, "log_det": exact_ld},
            "rows": rows.iter().map(|r| json!({
                "method": r.method, "work": r.work,
                "data_fit": {"mean": r.fit.0, "se": r.fit.1},
                "log_det": {"mean": r.log_det.0, "se": r.log_det.1},
                "sum_sd": r.sum_sd,
                "seconds_per_draw": r.seconds_per_draw,
            })).collect::<Vec<_>>(),
        });
        Ok(ExperimentOutput {
            tables: vec![NamedTable {
                title: format!(
                    "Figure 1: estimator minus Cholesky on {} (exact yᵀK⁻¹y = {exact_fit:.4}, log|K| = {exact_ld:.4}; {} draws each)",
                    split.describe(),
                    p.draws
                ),
                table,
            }],
            notes: vec![
                "CG and RR-CG: 10 Gaussian/Rademacher probes per draw, SLQ with the whitened probe norm (unbiased for the depth-J quadrature), RR-SLQ (Appendix C) for RR-CG, no preconditioner (n < 2000). RFF: fresh frequencies per draw. SS-RFF: nested frequencies, p(k) ∝ 1/k, the last term the exact GP (pitfall 9).".into(),
            ],
            raw,
            curves: Vec::new(),
            checks,
        })
    }
}
