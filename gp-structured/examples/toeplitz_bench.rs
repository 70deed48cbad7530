//! Toeplitz products against the FFTs they are built from.
//!
//! For m = 2^16 and 2^20 this times one product with a symmetric Toeplitz matrix (through
//! the allocation-free `apply_with_workspace` and through the pooled `LinearOperator`
//! entry point) and one forward plus one inverse real FFT of the embedding length `L` with
//! preallocated buffers, and prints the ratio. The target is a ratio of at most 1.3: the
//! product adds only `O(L)` work (zero padding, the spectrum multiply, copies) to the two FFTs.
//!
//! Run with `cargo run --release -p gp-structured --example toeplitz_bench`.

use std::hint::black_box;
use std::time::{Duration, Instant};

use faer::Col;
use gp_structured::{LinearOperator, SymmetricToeplitz};
use realfft::RealFftPlanner;

/// Seconds per call of each closure: the rounds of the closures are interleaved (so a
/// change of machine load hits all of them alike) and the median round is reported.
fn interleaved_times(fs: &mut [&mut dyn FnMut()], reps: &[usize], rounds: usize) -> Vec<f64> {
    let mut samples = vec![Vec::with_capacity(rounds); fs.len()];
    for _ in 0..rounds {
        for (k, f) in fs.iter_mut().enumerate() {
            let start = Instant::now();
            for _ in 0..reps[k] {
                f();
            }
            samples[k].push(start.elapsed().as_secs_f64() / reps[k] as f64);
        }
    }
    samples
        .into_iter()
        .map(|mut s| {
            s.sort_by(f64::total_cmp);
            s[rounds / 2]
        })
        .collect()
}

/// Repetitions that make one round last about `target` (the first call also warms up).
fn reps_for(f: &mut dyn FnMut(), target: Duration) -> usize {
    f();
    let start = Instant::now();
    f();
    let once = start.elapsed().max(Duration::from_nanos(1));
    ((target.as_secs_f64() / once.as_secs_f64()).ceil() as usize).clamp(1, 10_000)
}

/// Timing rounds per measurement.
const ROUNDS: usize = 9;

fn main() -> Result<(), Box<dyn std::error::Error>> {
    println!("Symmetric Toeplitz product (circulant embedding, real FFTs) vs one forward + inverse real FFT of length L");
    println!("single thread; median of {ROUNDS} interleaved rounds of ~0.2 s each\n");
    println!(
        "| {:>8} | {:>8} | {:>14} | {:>14} | {:>16} | {:>11} | {:>11} |",
        "m", "L", "FFT pair (ms)", "ws apply (ms)", "trait apply (ms)", "ws / FFT", "trait / FFT"
    );
    println!(
        "|{:-<10}|{:-<10}|{:-<16}|{:-<16}|{:-<18}|{:-<13}|{:-<13}|",
        "", "", "", "", "", "", ""
    );
    for log2m in [16u32, 20] {
        let m = 1usize << log2m;
        let ell = 0.01 * m as f64;
        let c: Vec<f64> = (0..m)
            .map(|i| (-(i as f64 / ell).powi(2) / 2.0).exp())
            .collect();
        let t = SymmetricToeplitz::new(&c)?;
        let len = t.embedding_length();

        // Baseline: one forward and one inverse real FFT of length L, buffers preallocated.
        let mut planner = RealFftPlanner::<f64>::new();
        let fwd = planner.plan_fft_forward(len);
        let inv = planner.plan_fft_inverse(len);
        let mut time = fwd.make_input_vec();
        let mut freq = fwd.make_output_vec();
        let mut scratch =
            vec![Default::default(); fwd.get_scratch_len().max(inv.get_scratch_len())];
        for (i, v) in time.iter_mut().enumerate() {
            *v = (i as f64 * 1e-3).sin();
        }
        let mut fft_pair = || {
            let _ = fwd.process_with_scratch(&mut time, &mut freq, &mut scratch);
            freq[0].im = 0.0;
            if let Some(last) = freq.last_mut() {
                last.im = 0.0;
            }
            let _ = inv.process_with_scratch(&mut freq, &mut time, &mut scratch);
            black_box(&time);
        };

        let x = Col::from_fn(m, |i| (i as f64 * 1e-3).cos());
        let mut out = Col::<f64>::zeros(m);
        let mut ws = t.workspace();
        let mut ws_apply = || {
            let _ = t.apply_with_workspace(x.as_ref(), out.as_mut(), &mut ws);
            black_box(&out);
        };

        let mut out2 = Col::<f64>::zeros(m);
        let mut trait_apply = || {
            let _ = t.apply_into(x.as_ref(), out2.as_mut());
            black_box(&out2);
        };
        let target = Duration::from_millis(200);
        let reps = [
            reps_for(&mut fft_pair, target),
            reps_for(&mut ws_apply, target),
            reps_for(&mut trait_apply, target),
        ];
        let times = interleaved_times(
            &mut [&mut fft_pair, &mut ws_apply, &mut trait_apply],
            &reps,
            ROUNDS,
        );
        let (t_fft, t_ws, t_trait) = (times[0], times[1], times[2]);

        println!(
            "| {:>8} | {:>8} | {:>14.3} | {:>14.3} | {:>16.3} | {:>11.3} | {:>11.3} |",
            format!("2^{log2m}"),
            len,
            t_fft * 1e3,
            t_ws * 1e3,
            t_trait * 1e3,
            t_ws / t_fft,
            t_trait / t_fft
        );
    }
    Ok(())
}
