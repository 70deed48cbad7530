//! JSON save and load: exact round trips and typed errors for damaged files.

use crate::common;

use common::*;
use gp_kernels::SquaredExponential;
use gp_models::grid::GridSettings;
use gp_models::{EstimatorSettings, KrylovSettings};
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
    // A kernel with a negative length scale: refused while reading (gp-kernels runs its
    // constructor's checks on deserialization), with the kernel's own message.
    let mut v: serde_json::Value = serde_json::from_str(&text).unwrap();
    v["kernel"]["params"]["lengthscales"][0] = serde_json::json!(-0.5);
    let err = load(&v.to_string()).unwrap_err();
    assert!(matches!(err, ModelError::Serialization { .. }), "{err:?}");
    assert!(err.to_string().contains("strictly positive"), "{err}");
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

// ---- Every model: the same round trip and the same typed errors. ----

use gp_models::iterative::{ITERATIVE_GP_FORMAT, ITERATIVE_GP_FORMAT_VERSION};
use gp_models::ski::{SKI_FORMAT, SKI_FORMAT_VERSION};
use gp_models::{IterativeGp, IterativeOptions, LmlRequest, Ski, SkiOptions};

fn iterative_model() -> IterativeGp<SquaredExponential> {
    let (x, y) = toy_data(35, 2, 3.0, 21);
    // Every option away from its default, so that a field lost on the way shows.
    let opts = IterativeOptions {
        krylov: KrylovSettings {
            tolerance: 3e-3,
            max_iterations: 400,
            min_iterations: 11,
            prediction_tolerance: 1e-7,
            variance_tolerance: 3e-9,
        },
        estimator: EstimatorSettings {
            probes: 7,
            slq_scaling: gp_solvers::SlqScaling::Dimension,
            seed: 17,
        },
        max_lanczos_iterations: Some(15),
        preconditioner_rank: 4,
        constant_mean: true,
    };
    let kernel = SquaredExponential::new(vec![0.37, 1.1], 2.3).unwrap();
    IterativeGp::fit_with_options(kernel, x.as_ref(), y.as_ref(), 0.0123, &opts).unwrap()
}

fn ski_model() -> Ski<SquaredExponential> {
    let (x, y) = toy_data(60, 2, 3.0, 23);
    // The default (data-derived) grid, a linear scheme and clamping: the saved grid and
    // the enum records are what is tested.
    let opts = SkiOptions {
        grid: GridSettings {
            scheme: gp_structured::InterpolationScheme::Linear,
            out_of_grid: gp_structured::OutOfGrid::Clamp,
            memory_limit: Some(1 << 30),
            ..GridSettings::default()
        },
        krylov: KrylovSettings {
            tolerance: 5e-3,
            min_iterations: 9,
            ..KrylovSettings::default()
        },
        estimator: EstimatorSettings {
            probes: 6,
            slq_scaling: gp_solvers::SlqScaling::Dimension,
            seed: 5,
        },
        preconditioner_rank: 3,
    };
    let kernel = SquaredExponential::new(vec![0.6, 0.9], 1.7).unwrap();
    Ski::fit(kernel, x.as_ref(), y.as_ref(), 0.02, &opts).unwrap()
}

/// Checks that `text` (what `to_json_string` gave) is a `format` file of `version` and what
/// `save` writes, and reads the model back twice: from the string with `from_str` and
/// through a reader with `load`.
fn read_back<M>(
    text: &str,
    (format, version): (&str, u32),
    save: impl FnOnce(&mut Vec<u8>) -> Result<(), ModelError>,
    from_str: impl Fn(&str) -> Result<M, ModelError>,
    load: impl Fn(&[u8]) -> Result<M, ModelError>,
) -> [M; 2] {
    let v: serde_json::Value = serde_json::from_str(text).unwrap();
    assert_eq!(v["format"], format);
    assert_eq!(v["version"], version);
    let mut buf = Vec::new();
    save(&mut buf).unwrap();
    assert_eq!(buf, text.as_bytes());
    [from_str(text).unwrap(), load(buf.as_slice()).unwrap()]
}

/// Same log parameters, bit-identical predictions (mean and variances) and, for the
/// stochastic models, a bit-identical LML estimate from the same seed.
fn assert_same_model<M: GpModel>(a: &M, b: &M, x_test: faer::MatRef<'_, f64>) {
    assert_eq!(a.log_params(), b.log_params());
    assert_eq!(a.param_names(), b.param_names());
    let (pa, pb) = (
        a.predict(x_test, &PredictRequest::default()).unwrap(),
        b.predict(x_test, &PredictRequest::default()).unwrap(),
    );
    assert_eq!(bits(&pa.mean), bits(&pb.mean));
    assert_eq!(bits(&pa.variance), bits(&pb.variance));
    let (la, lb) = (
        a.lml(&LmlRequest::default()).unwrap(),
        b.lml(&LmlRequest::default()).unwrap(),
    );
    assert_eq!(la.lml.to_bits(), lb.lml.to_bits());
}

#[test]
fn iterative_round_trip_reproduces_predictions_exactly() {
    let gp = iterative_model();
    let (xt, _) = toy_data(25, 2, 4.0, 22);
    let text = gp.to_json_string().unwrap();
    let reloaded = read_back(
        &text,
        (ITERATIVE_GP_FORMAT, ITERATIVE_GP_FORMAT_VERSION),
        |buf| gp.save_json(buf),
        load_iterative,
        |r| IterativeGp::<SquaredExponential>::load_json(r),
    );
    for m in &reloaded {
        assert_eq!(m.kernel(), gp.kernel());
        assert_eq!(m.options(), gp.options());
        assert_eq!(m.train_x(), gp.train_x());
        assert_eq!(m.train_y(), gp.train_y());
        assert_same_model(&gp, m, xt.as_ref());
    }
}

#[test]
fn ski_round_trip_keeps_the_grid_and_reproduces_predictions_exactly() {
    let gp = ski_model();
    let (xt, _) = toy_data(25, 2, 3.0, 22);
    let text = gp.to_json_string().unwrap();
    let reloaded = read_back(
        &text,
        (SKI_FORMAT, SKI_FORMAT_VERSION),
        |buf| gp.save_json(buf),
        load_ski,
        |r| Ski::<SquaredExponential>::load_json(r),
    );
    for m in &reloaded {
        assert_eq!(m.kernel(), gp.kernel());
        assert_eq!(m.options(), gp.options());
        assert_eq!(m.grid(), gp.grid());
        assert_eq!(m.train_x(), gp.train_x());
        assert_eq!(m.train_y(), gp.train_y());
        assert_same_model(&gp, m, xt.as_ref());
    }
    // The stored grid wins over the one the options would derive: a file whose grid was
    // moved loads on the moved grid.
    let mut v: serde_json::Value = serde_json::from_str(&text).unwrap();
    let lo0 = v["grid"]["lo"][0].as_f64().unwrap();
    v["grid"]["lo"][0] = serde_json::json!(lo0 - 0.25);
    let moved = Ski::<SquaredExponential>::from_json_str(&v.to_string()).unwrap();
    assert_eq!(moved.grid().axes()[0].lo(), lo0 - 0.25);
    assert_eq!(moved.grid().sizes(), gp.grid().sizes());
}

/// The envelope errors every format shares: a foreign format, a newer version, a truncated
/// or empty file, a failing reader.
fn assert_envelope_errors<T: std::fmt::Debug>(
    text: &str,
    load: impl Fn(&str) -> Result<T, ModelError>,
    load_reader: impl Fn(&mut dyn std::io::Read) -> Result<T, ModelError>,
) {
    assert!(matches!(
        load(&edit(text, "version", "2")),
        Err(ModelError::UnsupportedVersion {
            found: 2,
            supported: 1,
            ..
        })
    ));
    assert!(matches!(
        load(&edit(text, "format", "\"gpscale.exact_gp\"")),
        Err(ModelError::Serialization { .. })
    ));
    assert!(matches!(
        load(&text[..text.len() / 2]),
        Err(ModelError::Serialization { .. })
    ));
    assert!(matches!(
        load(&text[..text.len() - 1]),
        Err(ModelError::Serialization { .. })
    ));
    assert!(matches!(load(""), Err(ModelError::Serialization { .. })));
    assert!(matches!(
        load(&edit(text, "n", "34")),
        Err(ModelError::LengthMismatch { .. })
    ));
    assert!(matches!(
        load(&edit(text, "noise_variance", "-1.0")),
        Err(ModelError::InvalidNoise { .. })
    ));
    let empty = edit(&edit(&edit(text, "n", "0"), "x", "[]"), "y", "[]");
    assert!(matches!(load(&empty), Err(ModelError::EmptyData { .. })));
    struct Broken;
    impl std::io::Read for Broken {
        fn read(&mut self, _: &mut [u8]) -> std::io::Result<usize> {
            Err(std::io::Error::other("disk on fire"))
        }
    }
    assert!(matches!(
        load_reader(&mut Broken),
        Err(ModelError::Serialization { .. })
    ));
}

#[test]
fn iterative_damaged_files_give_typed_errors() {
    let text = iterative_model().to_json_string().unwrap();
    assert_envelope_errors(
        &text,
        IterativeGp::<SquaredExponential>::from_json_str,
        |r| IterativeGp::<SquaredExponential>::load_json(r),
    );
    assert!(matches!(
        load_iterative(&edit(&text, "format", "\"gpscale.ski\"")),
        Err(ModelError::Serialization { .. })
    ));
    // An exact GP's file is not an iterative GP's.
    assert!(matches!(
        load_iterative(&model().to_json_string().unwrap()),
        Err(ModelError::Serialization { .. })
    ));
    // The options are checked as by a fit.
    let mut v: serde_json::Value = serde_json::from_str(&text).unwrap();
    v["options"]["probes"] = serde_json::json!(0);
    assert!(matches!(
        load_iterative(&v.to_string()),
        Err(ModelError::InvalidOption { .. })
    ));
    let mut v: serde_json::Value = serde_json::from_str(&text).unwrap();
    v["options"]["slq_scaling"] = serde_json::json!("n");
    assert!(matches!(
        load_iterative(&v.to_string()),
        Err(ModelError::Serialization { .. })
    ));
}

fn load_iterative(text: &str) -> Result<IterativeGp<SquaredExponential>, ModelError> {
    IterativeGp::<SquaredExponential>::from_json_str(text)
}

fn load_ski(text: &str) -> Result<Ski<SquaredExponential>, ModelError> {
    Ski::<SquaredExponential>::from_json_str(text)
}

#[test]
fn ski_damaged_files_give_typed_errors() {
    let text = ski_model().to_json_string().unwrap();
    assert_envelope_errors(&text, load_ski, |r| Ski::<SquaredExponential>::load_json(r));
    assert!(matches!(
        load_ski(&iterative_model().to_json_string().unwrap()),
        Err(ModelError::Serialization { .. })
    ));
    let grid_edit = |key: &str, value: serde_json::Value| {
        let mut v: serde_json::Value = serde_json::from_str(&text).unwrap();
        v["grid"][key] = value;
        load_ski(&v.to_string())
    };
    assert!(matches!(
        grid_edit("lo", serde_json::json!([0.0])),
        Err(ModelError::LengthMismatch { .. })
    ));
    assert!(matches!(
        grid_edit("spacing", serde_json::json!([0.1, -0.1])),
        Err(ModelError::Structured(_))
    ));
    // A grid of the wrong dimension.
    let mut v: serde_json::Value = serde_json::from_str(&text).unwrap();
    v["grid"] = serde_json::json!({"sizes": [10], "lo": [0.0], "spacing": [0.5]});
    assert!(matches!(
        load_ski(&v.to_string()),
        Err(ModelError::LengthMismatch { .. })
    ));
    let mut v: serde_json::Value = serde_json::from_str(&text).unwrap();
    v["options"]["scheme"] = serde_json::json!("quintic");
    assert!(matches!(
        load_ski(&v.to_string()),
        Err(ModelError::Serialization { .. })
    ));
    // The memory limit of the stored options still applies to the stored grid.
    let mut v: serde_json::Value = serde_json::from_str(&text).unwrap();
    v["options"]["memory_limit"] = serde_json::json!(16);
    assert!(matches!(
        load_ski(&v.to_string()),
        Err(ModelError::GridTooLarge { .. })
    ));
}

// ---- GSGP: the sufficient statistics are saved, not the data. ----

use gp_models::gsgp::io::{GSGP_FORMAT, GSGP_FORMAT_VERSION};
use gp_models::{Gsgp, GsgpOptions, GsgpSolver};

fn gsgp_model() -> Gsgp<SquaredExponential> {
    let (x, y) = toy_data(80, 2, 3.0, 24);
    // Options away from their defaults, so that a field lost on the way shows.
    let opts = GsgpOptions {
        grid: GridSettings {
            sizes: vec![18, 15],
            out_of_grid: gp_structured::OutOfGrid::Clamp,
            memory_limit: Some(1 << 30),
            ..GridSettings::default()
        },
        krylov: KrylovSettings {
            tolerance: 5e-3,
            min_iterations: 9,
            ..KrylovSettings::default()
        },
        estimator: EstimatorSettings {
            probes: 6,
            slq_scaling: gp_solvers::SlqScaling::Dimension,
            seed: 5,
        },
        solver: GsgpSolver::Fcg,
        log_det_dense_factor_max: 100,
    };
    let kernel = SquaredExponential::new(vec![0.6, 0.9], 1.7).unwrap();
    Gsgp::fit(kernel, x.as_ref(), y.as_ref(), 0.02, &opts).unwrap()
}

fn load_gsgp(text: &str) -> Result<Gsgp<SquaredExponential>, ModelError> {
    Gsgp::<SquaredExponential>::from_json_str(text)
}

#[test]
fn gsgp_round_trip_keeps_the_statistics_and_reproduces_predictions_exactly() {
    let gp = gsgp_model();
    let (xt, _) = toy_data(25, 2, 3.0, 22);
    let text = gp.to_json_string().unwrap();
    let v: serde_json::Value = serde_json::from_str(&text).unwrap();
    assert!(v.get("x").is_none() && v.get("y").is_none());
    let reloaded = read_back(
        &text,
        (GSGP_FORMAT, GSGP_FORMAT_VERSION),
        |buf| gp.save_json(buf),
        load_gsgp,
        |r| Gsgp::<SquaredExponential>::load_json(r),
    );
    for m in &reloaded {
        assert_eq!(m.kernel(), gp.kernel());
        assert_eq!(m.noise_variance().to_bits(), gp.noise_variance().to_bits());
        assert_eq!(m.options(), gp.options());
        assert_eq!(m.grid(), gp.grid());
        assert_eq!(m.stats(), gp.stats());
        assert_same_model(&gp, m, xt.as_ref());
    }
}

#[test]
fn gsgp_damaged_files_give_typed_errors() {
    let text = gsgp_model().to_json_string().unwrap();
    let with = |path: &[&str], value: serde_json::Value| {
        let mut v: serde_json::Value = serde_json::from_str(&text).unwrap();
        let mut at = &mut v;
        for key in path {
            at = &mut at[*key];
        }
        *at = value;
        load_gsgp(&v.to_string())
    };
    assert!(matches!(
        load_gsgp(&edit(&text, "version", "2")),
        Err(ModelError::UnsupportedVersion {
            found: 2,
            supported: 1,
            ..
        })
    ));
    for other in ["\"gpscale.ski\"", "\"gpscale.exact_gp\""] {
        assert!(matches!(
            load_gsgp(&edit(&text, "format", other)),
            Err(ModelError::Serialization { .. })
        ));
    }
    assert!(matches!(
        load_gsgp(&ski_model().to_json_string().unwrap()),
        Err(ModelError::Serialization { .. })
    ));
    for cut in [text.len() / 2, text.len() - 1, 0] {
        assert!(matches!(
            load_gsgp(&text[..cut]),
            Err(ModelError::Serialization { .. })
        ));
    }
    struct Broken;
    impl std::io::Read for Broken {
        fn read(&mut self, _: &mut [u8]) -> std::io::Result<usize> {
            Err(std::io::Error::other("disk on fire"))
        }
    }
    assert!(matches!(
        Gsgp::<SquaredExponential>::load_json(Broken),
        Err(ModelError::Serialization { .. })
    ));
    assert!(matches!(
        load_gsgp(&edit(&text, "noise_variance", "-1.0")),
        Err(ModelError::InvalidNoise { .. })
    ));

    // A hand-edited stencil of the wrong length: named, with both lengths.
    let v: serde_json::Value = serde_json::from_str(&text).unwrap();
    let gram_len = v["stats"]["gram"].as_array().unwrap().len();
    let mut short = v["stats"]["gram"].as_array().unwrap().clone();
    short.pop();
    let err = with(&["stats", "gram"], serde_json::Value::Array(short)).unwrap_err();
    match &err {
        ModelError::LengthMismatch {
            context,
            expected,
            found,
        } => {
            assert!(context.contains("gram"), "{context}");
            assert_eq!((*expected, *found), (gram_len, gram_len - 1));
        }
        other => panic!("expected LengthMismatch, got {other:?}"),
    }
    assert!(err.to_string().contains("gram"), "{err}");
    assert!(matches!(
        with(&["stats", "wty"], serde_json::json!([1.0, 2.0])),
        Err(ModelError::LengthMismatch { .. })
    ));
    // Values the statistics' own checks refuse: a non-zero stencil value joining the last
    // node to a neighbour outside the grid, a negative yᵀy, no points.
    let mut gram = v["stats"]["gram"].as_array().unwrap().clone();
    *gram.last_mut().unwrap() = serde_json::json!(0.5);
    assert!(matches!(
        with(&["stats", "gram"], serde_json::Value::Array(gram)),
        Err(ModelError::Structured(_))
    ));
    assert!(matches!(
        with(&["stats", "yty"], serde_json::json!(-1.0)),
        Err(ModelError::Structured(_))
    ));
    assert!(matches!(
        with(&["stats", "n"], serde_json::json!(0)),
        Err(ModelError::EmptyData { .. })
    ));
    let mut gram = v["stats"]["gram"].as_array().unwrap().clone();
    gram[3] = serde_json::json!(null);
    assert!(matches!(
        with(&["stats", "gram"], serde_json::Value::Array(gram)),
        Err(ModelError::Serialization { .. })
    ));
    // The statistics' scheme must be the options' (checked by `from_stats`); a linear
    // stencil is shorter, so a scheme edited alone is a length error first.
    assert!(matches!(
        with(&["options", "scheme"], serde_json::json!("linear")),
        Err(ModelError::InvalidOption { .. })
    ));
    assert!(matches!(
        with(&["stats", "scheme"], serde_json::json!("linear")),
        Err(ModelError::LengthMismatch { .. })
    ));
    assert!(matches!(
        with(&["options", "solver"], serde_json::json!("cg")),
        Err(ModelError::Serialization { .. })
    ));
    // A grid of other sizes than the stored statistics.
    assert!(matches!(
        with(&["grid", "sizes"], serde_json::json!([17, 15])),
        Err(ModelError::LengthMismatch { .. })
    ));
    assert!(matches!(
        with(&["grid", "spacing"], serde_json::json!([0.1, -0.1])),
        Err(ModelError::Structured(_))
    ));
    assert!(matches!(
        with(&["options", "memory_limit"], serde_json::json!(16)),
        Err(ModelError::GridTooLarge { .. })
    ));
}

/// The keys of the saved `options` object, sorted.
fn option_keys(text: &str) -> Vec<String> {
    let value: serde_json::Value = serde_json::from_str(text).unwrap();
    let options = value["options"].as_object().unwrap();
    for (key, v) in options {
        assert!(!v.is_object(), "options.{key} is nested: {v}");
    }
    let mut keys: Vec<String> = options.keys().cloned().collect();
    keys.sort();
    keys
}

#[test]
fn composed_options_keep_the_version_1_file_layout() {
    // The options are composed of shared parts in memory, but a file stores them flat under
    // the names version-1 files have, so files written before the change keep loading.
    let sorted = |keys: &[&str]| {
        let mut v: Vec<String> = keys.iter().map(|k| k.to_string()).collect();
        v.sort();
        v
    };
    let krylov_estimator = [
        "cg_tolerance",
        "max_cg_iterations",
        "min_cg_iterations",
        "prediction_tolerance",
        "variance_tolerance",
        "probes",
        "slq_scaling",
        "seed",
    ];
    let grid = [
        "grid_sizes",
        "padding",
        "bounds",
        "scheme",
        "out_of_grid",
        "memory_limit",
    ];
    let iterative = [
        &krylov_estimator[..],
        &[
            "max_lanczos_iterations",
            "preconditioner_rank",
            "constant_mean",
        ],
    ]
    .concat();
    let grid_model = [&krylov_estimator[..], &grid[..]].concat();
    let ski = [&grid_model[..], &["preconditioner_rank"]].concat();
    let gsgp = [&grid_model[..], &["solver", "log_det_dense_factor_max"]].concat();
    assert_eq!(
        option_keys(&iterative_model().to_json_string().unwrap()),
        sorted(&iterative)
    );
    assert_eq!(
        option_keys(&ski_model().to_json_string().unwrap()),
        sorted(&ski)
    );
    assert_eq!(
        option_keys(&gsgp_model().to_json_string().unwrap()),
        sorted(&gsgp)
    );
    // A version-1 SKI options object written by hand in the old field order loads.
    let text = ski_model().to_json_string().unwrap();
    let mut value: serde_json::Value = serde_json::from_str(&text).unwrap();
    value["options"] = serde_json::json!({
        "grid_sizes": [40], "padding": null, "bounds": null, "scheme": "cubic",
        "out_of_grid": "error", "probes": 7, "cg_tolerance": 0.01, "max_cg_iterations": 900,
        "min_cg_iterations": 20, "prediction_tolerance": 1e-7, "slq_scaling": "probe_norm",
        "seed": 3, "memory_limit": null
    });
    let loaded = load_ski(&value.to_string()).unwrap();
    let o = loaded.options();
    assert_eq!(o.grid.sizes, vec![40]);
    assert_eq!(o.estimator.probes, 7);
    assert_eq!(o.estimator.seed, 3);
    assert_eq!(o.krylov.max_iterations, 900);
    assert_eq!(o.krylov.prediction_tolerance, 1e-7);
    // A version-1 file has no variance tolerance: its variances solve as they did then.
    assert_eq!(o.krylov.variance_tolerance, 1e-7);
    // Nor a preconditioner rank: it solves with plain CG, as it did then.
    assert_eq!(o.preconditioner_rank, 0);
}

// ---- GRIEF: the grid is saved point for point, the basis and statistics are rebuilt. ----

use gp_models::grief::{GridOptions, Grief, GriefOptions, GRIEF_FORMAT, GRIEF_FORMAT_VERSION};

fn grief_model() -> Grief {
    let (x, y) = toy_data(40, 2, 3.0, 25);
    // Options away from their defaults, so that a field lost on the way shows.
    let opts = GriefOptions {
        p: 12,
        grid: GridOptions {
            points_per_axis: 6,
            beyond_domain: 0.15,
        },
        cap_to_grid: true,
        block_rows: 7,
    };
    let kernel = SquaredExponential::new(vec![0.8, 1.3], 1.7).unwrap();
    Grief::fit(kernel, x.as_ref(), y.as_ref(), 0.05, &opts).unwrap()
}

/// A model with its selection frozen is saved with the selection and reloaded frozen, so
/// that it predicts bit-identically after training moved its length scales.
#[test]
fn grief_frozen_selection_round_trips() {
    let gp = grief_model();
    let mut params = gp.log_params();
    params[0] += 1.0;
    params[1] -= 0.8;
    let frozen = gp.with_selection_frozen().with_log_params(&params).unwrap();
    let (xt, _) = toy_data(25, 2, 3.0, 22);
    let text = frozen.to_json_string().unwrap();
    let v: serde_json::Value = serde_json::from_str(&text).unwrap();
    assert_eq!(
        v["selection"].as_array().map(|a| a.len()),
        Some(frozen.basis().indices().len())
    );
    assert!(
        serde_json::from_str::<serde_json::Value>(&gp.to_json_string().unwrap())
            .unwrap()
            .get("selection")
            .is_none()
    );
    let back = load_grief(&text).unwrap();
    assert!(back.selection_frozen());
    assert_eq!(back.basis().indices(), frozen.basis().indices());
    assert_same_model(&frozen, &back, xt.as_ref());
    // A damaged selection is the basis' typed error.
    let damaged = text.replacen("\"selection\":[", "\"selection\":[99,", 1);
    assert!(matches!(
        load_grief(&damaged),
        Err(ModelError::InvalidOption {
            name: "indices",
            ..
        })
    ));
}

fn load_grief(text: &str) -> Result<Grief, ModelError> {
    Grief::from_json_str(text)
}

#[test]
fn grief_round_trip_keeps_the_grid_and_reproduces_predictions_exactly() {
    let gp = grief_model();
    let (xt, _) = toy_data(25, 2, 3.0, 22);
    let text = gp.to_json_string().unwrap();
    let v: serde_json::Value = serde_json::from_str(&text).unwrap();
    // Neither the basis nor the statistics are stored.
    assert!(v.get("basis").is_none() && v.get("stats").is_none());
    // The grid options flattened into the options, as the other formats store theirs.
    assert_eq!(
        option_keys(&text),
        [
            "beyond_domain",
            "block_rows",
            "cap_to_grid",
            "p",
            "points_per_axis"
        ]
    );
    let reloaded = read_back(
        &text,
        (GRIEF_FORMAT, GRIEF_FORMAT_VERSION),
        |buf| gp.save_json(buf),
        load_grief,
        |r| Grief::load_json(r),
    );
    for m in &reloaded {
        assert_eq!(m.kernel(), gp.kernel());
        assert_eq!(m.noise_variance().to_bits(), gp.noise_variance().to_bits());
        assert_eq!(m.options(), gp.options());
        assert_eq!(m.basis().grid(), gp.basis().grid());
        assert_eq!(m.train_x(), gp.train_x());
        assert_eq!(m.train_y(), gp.train_y());
        assert_eq!(m.stats(), gp.stats());
        assert_same_model(&gp, m, xt.as_ref());
        // The reloaded model trains: new hyperparameters rebuild the basis and the
        // statistics from the stored data, on the stored grid, as the original does.
        let mut params = gp.log_params();
        params[0] += 0.3;
        params[3] -= 0.5;
        let (a, b) = (
            gp.with_log_params(&params).unwrap(),
            m.with_log_params(&params).unwrap(),
        );
        assert_same_model(&a, &b, xt.as_ref());
        let (ga, gb) = (a.lml_and_grad(true).unwrap(), b.lml_and_grad(true).unwrap());
        assert_eq!(ga.0.to_bits(), gb.0.to_bits());
        assert_eq!(ga.1, gb.1);
    }
    // The stored grid wins over the one the options would derive from the data.
    let mut v: serde_json::Value = serde_json::from_str(&text).unwrap();
    let u0 = v["grid"]["axes"][0][0].as_f64().unwrap();
    v["grid"]["axes"][0][0] = serde_json::json!(u0 - 0.25);
    let moved = load_grief(&v.to_string()).unwrap();
    assert_eq!(moved.basis().grid().axes()[0][0], u0 - 0.25);
    assert_eq!(moved.basis().grid().sizes(), gp.basis().grid().sizes());
}

#[test]
fn grief_damaged_files_give_typed_errors() {
    let text = grief_model().to_json_string().unwrap();
    assert_envelope_errors(&text, load_grief, |r| Grief::load_json(r));
    for other in ["\"gpscale.gsgp\"", "\"gpscale.ski\""] {
        assert!(matches!(
            load_grief(&edit(&text, "format", other)),
            Err(ModelError::Serialization { .. })
        ));
    }
    // Another model's file (same data fields, another format) is not a GRIEF file.
    assert!(matches!(
        load_grief(&ski_model().to_json_string().unwrap()),
        Err(ModelError::Serialization { .. })
    ));
    // `pointer` is a JSON pointer (array elements by index).
    let with = |pointer: &str, value: serde_json::Value| {
        let mut v: serde_json::Value = serde_json::from_str(&text).unwrap();
        *v.pointer_mut(pointer).unwrap() = value;
        load_grief(&v.to_string())
    };
    // Shapes: x of another number of columns, x and y of the wrong lengths.
    assert!(matches!(
        load_grief(&edit(&text, "d", "3")),
        Err(ModelError::LengthMismatch { .. })
    ));
    assert!(matches!(
        with("/x", serde_json::json!([1.0, 2.0])),
        Err(ModelError::LengthMismatch { .. })
    ));
    assert!(matches!(
        with("/y", serde_json::json!([1.0, 2.0])),
        Err(ModelError::LengthMismatch { .. })
    ));
    // 40 points of 2 coordinates read as 20 of 4: the kernel has 2 length scales.
    let v: serde_json::Value = serde_json::from_str(&text).unwrap();
    let y: Vec<serde_json::Value> = v["y"].as_array().unwrap()[..20].to_vec();
    let mut v4 = v.clone();
    v4["n"] = serde_json::json!(20);
    v4["d"] = serde_json::json!(4);
    v4["y"] = serde_json::Value::Array(y);
    assert!(matches!(
        load_grief(&v4.to_string()),
        Err(ModelError::KernelDim { .. })
    ));
    // Non-finite values: JSON has none (a NaN is written `null`, an overflow does not parse).
    let mut xs = v["x"].as_array().unwrap().clone();
    xs[5] = serde_json::Value::Null;
    assert!(matches!(
        with("/x", serde_json::Value::Array(xs)),
        Err(ModelError::Serialization { .. })
    ));
    let huge = text.replacen("\"y\":[", "\"y\":[1e999,", 1);
    assert!(matches!(
        load_grief(&huge),
        Err(ModelError::Serialization { .. })
    ));
    // The grid: a non-increasing axis, an empty axis, no axes, one axis for two dimensions,
    // a missing value.
    let axis0 = v["grid"]["axes"][0].as_array().unwrap().clone();
    let mut swapped = axis0.clone();
    swapped.swap(1, 2);
    assert!(matches!(
        with("/grid/axes/0", serde_json::Value::Array(swapped)),
        Err(ModelError::InvalidOption { name: "axes", .. })
    ));
    let mut repeated = axis0.clone();
    repeated[1] = repeated[0].clone();
    assert!(matches!(
        with("/grid/axes/0", serde_json::Value::Array(repeated)),
        Err(ModelError::InvalidOption { name: "axes", .. })
    ));
    assert!(matches!(
        with("/grid/axes/1", serde_json::json!([])),
        Err(ModelError::EmptyData { .. })
    ));
    assert!(matches!(
        with("/grid/axes", serde_json::json!([])),
        Err(ModelError::EmptyData { .. })
    ));
    let err = with(
        "/grid/axes",
        serde_json::Value::Array(vec![serde_json::Value::Array(axis0.clone())]),
    )
    .unwrap_err();
    assert!(
        matches!(
            err,
            ModelError::LengthMismatch {
                expected: 2,
                found: 1,
                ..
            }
        ),
        "{err:?}"
    );
    let mut holed = axis0;
    holed[2] = serde_json::Value::Null;
    assert!(matches!(
        with("/grid/axes/0", serde_json::Value::Array(holed)),
        Err(ModelError::Serialization { .. })
    ));
    assert!(matches!(
        with("/grid", serde_json::json!({"sizes": [6, 6]})),
        Err(ModelError::Serialization { .. })
    ));
    // The options are checked as by a fit, the grid's included.
    for (key, value) in [
        ("p", serde_json::json!(0)),
        ("block_rows", serde_json::json!(0)),
        ("points_per_axis", serde_json::json!(0)),
        ("beyond_domain", serde_json::json!(-0.5)),
    ] {
        assert!(
            matches!(
                with(&format!("/options/{key}"), value),
                Err(ModelError::InvalidOption { .. })
            ),
            "options.{key}"
        );
    }
    // More eigenfunctions than the stored grid has points, without capping.
    let mut v: serde_json::Value = serde_json::from_str(&text).unwrap();
    v["options"]["cap_to_grid"] = serde_json::json!(false);
    v["options"]["p"] = serde_json::json!(1000);
    assert!(matches!(
        load_grief(&v.to_string()),
        Err(ModelError::InvalidOption { .. })
    ));
    assert!(matches!(
        with("/options/cap_to_grid", serde_json::json!("yes")),
        Err(ModelError::Serialization { .. })
    ));
}
