//! JSON save and load: exact round trips and typed errors for damaged files.

mod common;

use common::*;
use gp_kernels::SquaredExponential;
use gp_models::{ExactGp, FitOptions, ModelError};
use gp_models::{GpModel, PredictRequest};

fn model() -> ExactGp<SquaredExponential> {
    let (x, y) = toy_data(35, 2, 3.0, 21);
    let opts = FitOptions {
        constant_mean: true,
        ..FitOptions::default()
    };
    let kernel = SquaredExponential::new(vec![0.37, 1.1], 2.3).unwrap();
    ExactGp::fit_with_options(kernel, x.as_ref(), y.as_ref(), 0.0123, &opts).unwrap()
}

fn bits(c: &faer::Col<f64>) -> Vec<u64> {
    (0..c.nrows()).map(|i| c[i].to_bits()).collect()
}

#[test]
fn round_trip_reproduces_predictions_exactly() {
    let gp = model();
    let (xt, _) = toy_data(25, 2, 4.0, 22);
    let text = gp.to_json_string().unwrap();
    let back = ExactGp::<SquaredExponential>::from_json_str(&text).unwrap();
    let mut buf = Vec::new();
    gp.save_json(&mut buf).unwrap();
    assert_eq!(buf, text.as_bytes());
    let back2 = ExactGp::<SquaredExponential>::load_json(buf.as_slice()).unwrap();
    for m in [&back, &back2] {
        assert_eq!(m.kernel(), gp.kernel());
        assert_eq!(m.noise_variance().to_bits(), gp.noise_variance().to_bits());
        assert_eq!(m.options(), gp.options());
        assert_eq!(m.log_params(), gp.log_params());
        let (a, b) = (
            gp.predict(xt.as_ref(), &PredictRequest::default()).unwrap(),
            m.predict(xt.as_ref(), &PredictRequest::default()).unwrap(),
        );
        assert_eq!(bits(&a.mean), bits(&b.mean));
        assert_eq!(bits(&a.variance), bits(&b.variance));
        assert_eq!(
            gp.log_marginal_likelihood().to_bits(),
            m.log_marginal_likelihood().to_bits()
        );
        assert_eq!(m.train_x(), gp.train_x());
    }
}

fn edit(text: &str, key: &str, value: &str) -> String {
    let mut v: serde_json::Value = serde_json::from_str(text).unwrap();
    v[key] = serde_json::from_str(value).unwrap();
    v.to_string()
}

fn load(text: &str) -> Result<ExactGp<SquaredExponential>, ModelError> {
    ExactGp::<SquaredExponential>::from_json_str(text)
}

#[test]
fn damaged_files_give_typed_errors() {
    let text = model().to_json_string().unwrap();
    assert!(matches!(
        load(&edit(&text, "version", "2")),
        Err(ModelError::UnsupportedVersion {
            found: 2,
            supported: 1,
            ..
        })
    ));
    assert!(matches!(
        load(&edit(&text, "format", "\"something.else\"")),
        Err(ModelError::Serialization { .. })
    ));
    assert!(matches!(
        load(&text[..text.len() / 2]),
        Err(ModelError::Serialization { .. })
    ));
    assert!(matches!(load(""), Err(ModelError::Serialization { .. })));
    assert!(matches!(
        load(&edit(&text, "n", "34")),
        Err(ModelError::LengthMismatch { .. })
    ));
    assert!(matches!(
        load(&edit(&text, "d", "3")),
        Err(ModelError::LengthMismatch { .. })
    ));
    assert!(matches!(
        load(&edit(&text, "y", "[1.0, 2.0]")),
        Err(ModelError::LengthMismatch { .. })
    ));
    assert!(matches!(
        load(&edit(&text, "noise_variance", "-1.0")),
        Err(ModelError::InvalidNoise { .. })
    ));
    assert!(matches!(
        load(&edit(&text, "noise_variance", "null")),
        Err(ModelError::Serialization { .. })
    ));
    let empty = edit(&edit(&edit(&text, "n", "0"), "x", "[]"), "y", "[]");
    assert!(matches!(load(&empty), Err(ModelError::EmptyData { .. })));
    let no_cols = edit(&edit(&text, "d", "0"), "x", "[]");
    assert!(matches!(load(&no_cols), Err(ModelError::EmptyData { .. })));
    assert!(matches!(
        load(&edit(&text, "d", "18446744073709551615")),
        Err(ModelError::Serialization { .. }) | Err(ModelError::LengthMismatch { .. })
    ));
    assert!(matches!(
        load(&edit(&text, "x", "[1.0]")),
        Err(ModelError::LengthMismatch { .. })
    ));
    // A number too large for f64 does not parse.
    let huge = text.replacen("\"noise_variance\":", "\"noise_variance\":1e999,\"_\":", 1);
    assert!(matches!(load(&huge), Err(ModelError::Serialization { .. })));
    // A kernel with a negative length scale (serde bypasses its constructor).
    let mut v: serde_json::Value = serde_json::from_str(&text).unwrap();
    v["kernel"]["params"]["lengthscales"][0] = serde_json::json!(-0.5);
    assert!(matches!(load(&v.to_string()), Err(ModelError::Kernel(_))));
    // A kernel of the wrong input dimension.
    let mut v: serde_json::Value = serde_json::from_str(&text).unwrap();
    v["kernel"]["params"]["lengthscales"] = serde_json::json!([1.0]);
    assert!(matches!(
        load(&v.to_string()),
        Err(ModelError::KernelDim { .. })
    ));
    // A reader that fails.
    struct Broken;
    impl std::io::Read for Broken {
        fn read(&mut self, _: &mut [u8]) -> std::io::Result<usize> {
            Err(std::io::Error::other("disk on fire"))
        }
    }
    assert!(matches!(
        ExactGp::<SquaredExponential>::load_json(Broken),
        Err(ModelError::Serialization { .. })
    ));
}
