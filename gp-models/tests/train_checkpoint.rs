//! Checkpointed training ([`train_objective_checkpointed`]): a run stopped at any step and
//! resumed from its checkpoint (also after a round trip through JSON) ends with the same
//! hyperparameters and steps, to the last bit, as the run that was never stopped; Adam's
//! own resume takes the same steps; checkpoints of another run are refused.

use std::ops::ControlFlow;

use faer::{Col, Mat};
use gp_kernels::SquaredExponential;
use gp_models::objective::{
    train_objective, train_objective_checkpointed, Checkpointing, Estimator, ObjectiveTrainOptions,
    TrainingCheckpoint,
};
use gp_models::optim::{adam_resumable, AdamOptions, AdamStart, AdamState, MultiStepDecay};
use gp_models::ModelError;
use rand::{Rng, SeedableRng};
use rand_chacha::ChaCha8Rng;

fn problem(n: usize, seed: u64) -> (Mat<f64>, Col<f64>) {
    let mut r = ChaCha8Rng::seed_from_u64(seed);
    let x = Mat::from_fn(n, 2, |_, _| r.random::<f64>());
    let y = Col::from_fn(n, |i| {
        (4.0 * x[(i, 0)]).sin() + x[(i, 1)] + 0.1 * (r.random::<f64>() - 0.5)
    });
    (x, y)
}

fn options(steps: usize) -> ObjectiveTrainOptions {
    ObjectiveTrainOptions {
        adam: AdamOptions {
            learning_rate: 0.05,
            iterations: steps,
            learning_rate_decay: Some(MultiStepDecay::paper_gp()),
            ..AdamOptions::default()
        },
        seed: 7,
        exact_loss_every: Some(4),
        ..ObjectiveTrainOptions::default()
    }
}

/// Trains `estimator` for `steps` steps with a checkpoint after every step; returns the
/// result and the checkpoints.
fn train_saving_every_step(
    estimator: &Estimator,
    steps: usize,
    resume: Option<TrainingCheckpoint>,
) -> (
    gp_models::objective::ObjectiveTrainResult<SquaredExponential>,
    Vec<TrainingCheckpoint>,
) {
    let (x, y) = problem(40, 3);
    let kernel = SquaredExponential::new(vec![0.7, 0.7], 0.7).unwrap();
    let mut saved = Vec::new();
    let mut save = |c: &TrainingCheckpoint| {
        saved.push(c.clone());
        Ok(())
    };
    let result = train_objective_checkpointed(
        &kernel,
        0.7,
        x.as_ref(),
        y.as_ref(),
        estimator,
        &options(steps),
        &mut Checkpointing {
            resume,
            every_seconds: 0.0,
            save: Some(&mut save),
        },
        &mut |_| ControlFlow::Continue(()),
    )
    .unwrap();
    (result, saved)
}

fn estimators() -> Vec<Estimator> {
    vec![
        Estimator::Cholesky,
        Estimator::Cg { iterations: 5 },
        Estimator::rr_cg_exp_decay(0.3, 3, 40).unwrap(),
        Estimator::Rff { num_freqs: 30 },
    ]
}

#[test]
fn a_resumed_training_ends_where_the_uninterrupted_one_does() {
    let steps = 12;
    for estimator in estimators() {
        let (whole, saved) = train_saving_every_step(&estimator, steps, None);
        assert_eq!(saved.len(), steps, "{}", estimator.label());
        for stop in [1, 5, 6, 11] {
            let checkpoint = &saved[stop - 1];
            assert_eq!(checkpoint.adam.iteration, stop);
            // Through JSON, as the benchmarks keep them.
            let text = serde_json::to_string(checkpoint).unwrap();
            let reloaded: TrainingCheckpoint = serde_json::from_str(&text).unwrap();
            assert_eq!(&reloaded, checkpoint);
            let (resumed, later) = train_saving_every_step(&estimator, steps, Some(reloaded));
            assert_eq!(later.len(), steps - stop);
            assert_eq!(
                resumed.steps,
                whole.steps,
                "{} resumed after step {stop}",
                estimator.label()
            );
            assert_eq!(resumed.kernel, whole.kernel);
            assert_eq!(
                resumed.noise_variance.to_bits(),
                whole.noise_variance.to_bits()
            );
            assert!(resumed.training_seconds >= checkpoint.training_seconds);
        }
    }
}

#[test]
fn the_uninterrupted_checkpointed_training_is_the_plain_one() {
    let (x, y) = problem(40, 3);
    let kernel = SquaredExponential::new(vec![0.7, 0.7], 0.7).unwrap();
    for estimator in estimators() {
        let plain = train_objective(
            &kernel,
            0.7,
            x.as_ref(),
            y.as_ref(),
            &estimator,
            &options(8),
            &mut |_| ControlFlow::Continue(()),
        )
        .unwrap();
        let (checkpointed, _) = train_saving_every_step(&estimator, 8, None);
        assert_eq!(plain.steps, checkpointed.steps, "{}", estimator.label());
        // Step 0 carries the estimator's value only where it has one.
        assert_eq!(
            plain.steps[0].estimated_loss.is_some(),
            matches!(estimator, Estimator::Cholesky | Estimator::Rff { .. }),
            "{}",
            estimator.label()
        );
    }
}

#[test]
fn a_checkpoint_of_another_run_is_refused() {
    let (x, y) = problem(40, 3);
    let kernel = SquaredExponential::new(vec![0.7, 0.7], 0.7).unwrap();
    let (_, saved) = train_saving_every_step(&Estimator::Cholesky, 6, None);
    let resume = |c: TrainingCheckpoint, options: &ObjectiveTrainOptions| {
        train_objective_checkpointed(
            &kernel,
            0.7,
            x.as_ref(),
            y.as_ref(),
            &Estimator::Cholesky,
            options,
            &mut Checkpointing {
                resume: Some(c),
                ..Checkpointing::default()
            },
            &mut |_| ControlFlow::Continue(()),
        )
    };
    let other_seed = ObjectiveTrainOptions {
        seed: 8,
        ..options(6)
    };
    let err = resume(saved[2].clone(), &other_seed).unwrap_err();
    assert!(err.to_string().contains("seed 7"), "{err}");
    // Past the end of a shorter run.
    let err = resume(saved[5].clone(), &options(4)).unwrap_err();
    assert!(err.to_string().contains("only 4 steps"), "{err}");
    // Steps and optimizer state that disagree.
    let mut torn = saved[3].clone();
    torn.steps.pop();
    let err = resume(torn, &options(6)).unwrap_err();
    assert!(err.to_string().contains("records 3 steps"), "{err}");
    let mut garbled = saved[3].clone();
    garbled.rng_word_pos = "twelve".into();
    assert!(matches!(
        resume(garbled, &options(6)),
        Err(ModelError::InvalidOption { .. })
    ));
    // A checkpoint with a parameter missing.
    let mut short = saved[3].clone();
    short.adam.x.pop();
    let err = resume(short, &options(6)).unwrap_err();
    assert!(err.to_string().contains("trains 3 parameters"), "{err}");
}

#[test]
fn adam_resumed_from_its_state_takes_the_same_steps() {
    let rosenbrock = |x: &[f64]| {
        let (a, b) = (x[0], x[1]);
        Ok((
            (1.0 - a).powi(2) + 100.0 * (b - a * a).powi(2),
            vec![
                -2.0 * (1.0 - a) - 400.0 * a * (b - a * a),
                200.0 * (b - a * a),
            ],
        ))
    };
    let options = AdamOptions {
        learning_rate: 0.02,
        iterations: 50,
        learning_rate_decay: Some(MultiStepDecay::paper_rff()),
        ..AdamOptions::default()
    };
    let mut states: Vec<AdamState> = Vec::new();
    let whole = adam_resumable(
        rosenbrock,
        AdamStart::Point(&[-1.0, 1.5]),
        &options,
        &mut |_, s| {
            states.push(s.clone());
            ControlFlow::Continue(())
        },
    )
    .unwrap();
    let resumed = adam_resumable(
        rosenbrock,
        AdamStart::Resume(&states[19]),
        &options,
        &mut |_, _| ControlFlow::Continue(()),
    )
    .unwrap();
    assert_eq!(resumed.x, whole.x);
    assert_eq!(resumed.iterations, 50);
    assert_eq!(resumed.evaluations, whole.evaluations);
    assert_eq!(resumed.trajectory[0].iteration, 20);
    assert_eq!(resumed.trajectory[..], whole.trajectory[20..]);
    // A state of the wrong shape is refused.
    let mut bad = states[3].clone();
    bad.m.pop();
    assert!(adam_resumable(
        rosenbrock,
        AdamStart::Resume(&bad),
        &options,
        &mut |_, _| ControlFlow::Continue(()),
    )
    .is_err());
}
