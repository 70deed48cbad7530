//! The data-based training start ([`DataScales`], [`TrainStart`]).

use faer::{Col, Mat};
use gp_kernels::SquaredExponential;
use gp_models::prelude::*;
use gp_models::{DataScales, StartUsed};

#[test]
fn data_scales_are_root_d_times_the_median_pairwise_difference() {
    // Column 0: 0, 1, 2, 3 → pairwise |Δ| = 1,2,3,1,2,1 → median (upper) 2.
    // Column 1: constant → falls back to 1. Column 2: 0,0,0,5 → median 0 → range 5.
    let x = Mat::from_fn(4, 3, |i, j| match j {
        0 => i as f64,
        1 => 7.0,
        _ => {
            if i == 3 {
                5.0
            } else {
                0.0
            }
        }
    });
    let y = Col::from_fn(4, |i| i as f64);
    let s = DataScales::from_data(x.as_ref(), y.as_ref()).unwrap();
    let r = 3f64.sqrt();
    assert!(
        (s.lengthscales[0] - 2.0 * r).abs() < 1e-14,
        "{:?}",
        s.lengthscales
    );
    assert!((s.lengthscales[1] - r).abs() < 1e-14);
    assert!((s.lengthscales[2] - 5.0 * r).abs() < 1e-14);
    assert!((s.target_variance - 1.25).abs() < 1e-14);
    let names: Vec<String> = [
        "log_lengthscale_2",
        "log_variance",
        "log_noise_variance",
        "log_period",
        "log_lengthscale",
    ]
    .iter()
    .map(|s| s.to_string())
    .collect();
    let p = s.log_params(&names, &[0.0, 0.0, 0.0, 0.7, 0.0]);
    assert!((p[0] - (5.0 * r).ln()).abs() < 1e-14);
    assert!((p[1] - 1.25f64.ln()).abs() < 1e-14);
    assert!((p[2] - 0.125f64.ln()).abs() < 1e-14);
    assert_eq!(p[3], 0.7, "unknown parameters keep their value");
    let geo = s.lengthscales.iter().map(|l| l.ln()).sum::<f64>() / 3.0;
    assert!((p[4] - geo).abs() < 1e-14);
}

#[test]
fn data_scales_refuse_bad_data() {
    let x = Mat::<f64>::zeros(0, 2);
    let y = Col::<f64>::zeros(0);
    assert!(matches!(
        DataScales::from_data(x.as_ref(), y.as_ref()),
        Err(ModelError::EmptyData { .. })
    ));
    let x = Mat::from_fn(3, 1, |i, _| if i == 1 { f64::NAN } else { 1.0 });
    let y = Col::<f64>::zeros(3);
    assert!(matches!(
        DataScales::from_data(x.as_ref(), y.as_ref()),
        Err(ModelError::NonFinite { .. })
    ));
    let y = Col::<f64>::zeros(2);
    assert!(matches!(
        DataScales::from_data(Mat::<f64>::zeros(3, 1).as_ref(), y.as_ref()),
        Err(ModelError::LengthMismatch { .. })
    ));
}

/// 64 inputs of unit variance, a target that depends on two of them. From `ℓ = 1` every
/// off-diagonal kernel entry is ≈ e⁻⁶⁴ and the gradient in every length scale vanishes to
/// rounding, so L-BFGS stops at once fitting noise only (pumadyn32nm in miniature); from
/// the data start it finds the signal.
#[test]
fn data_start_escapes_the_flat_region_of_short_length_scales() {
    let (n, d) = (120, 64);
    let mut state = 0x9e37_79b9_7f4a_7c15u64;
    let mut uniform = move || {
        state ^= state << 13;
        state ^= state >> 7;
        state ^= state << 17;
        (state >> 11) as f64 / (1u64 << 53) as f64
    };
    let x = Mat::from_fn(n, d, |_, _| 2.0 * 3f64.sqrt() * (uniform() - 0.5));
    let y = Col::from_fn(n, |i| {
        (x[(i, 0)]).sin() + 0.5 * x[(i, 1)] + 0.05 * (uniform() - 0.5)
    });
    let gp = ExactGp::fit(
        SquaredExponential::new(vec![1.0; d], 1.0).unwrap(),
        x.as_ref(),
        y.as_ref(),
        1.0,
    )
    .unwrap();
    let from_model = train(
        &gp,
        &TrainOptions {
            start: TrainStart::Model,
            ..TrainOptions::default()
        },
    )
    .unwrap();
    let from_data = train(&gp, &TrainOptions::default()).unwrap();
    assert_eq!(from_model.report.start, StartUsed::Model);
    assert_eq!(from_data.report.start, StartUsed::Data);
    let lml_model = from_model.model.log_marginal_likelihood();
    let lml_data = from_data.model.log_marginal_likelihood();
    assert!(
        lml_data > lml_model + 50.0,
        "data start {lml_data} vs model start {lml_model}\n{}\n{}",
        from_data.report,
        from_model.report
    );
    assert!(from_data
        .report
        .to_string()
        .contains("started from the data"));
}
