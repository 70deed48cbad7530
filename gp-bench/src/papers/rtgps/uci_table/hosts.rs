//! Which machine took which steps of a training. Tables S1/S2's trainings run over several
//! sessions, and a session may land on another CPU (on the reference VM: one session on a
//! Zen 5 EPYC with AVX-512, the next on a Zen 3 one, 2–4× slower at dense algebra), so a
//! training's total time can mix machines. Each training keeps the steps and wall seconds it
//! took on each CPU, and H13 compares RR-CG with CG per step on a CPU both ran on.

use serde::{Deserialize, Serialize};

/// Steps and wall seconds a training took on one CPU, in one or more stretches.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub(super) struct HostStretch {
    /// [`crate::report::machine::cpu_description`], or [`NOT_RECORDED`].
    pub host: String,
    pub steps: usize,
    pub seconds: f64,
}

/// The host of steps checkpointed before hosts were recorded.
pub(super) const NOT_RECORDED: &str = "not recorded";

/// A training's stretches: those of earlier processes (`earlier`, from its checkpoint) and
/// this process's, which began at `start` (steps, seconds) on `host`.
#[derive(Debug, Clone)]
pub(super) struct HostLog {
    earlier: Vec<HostStretch>,
    host: String,
    start: (usize, f64),
}

/// `recorded` with the steps of the first `at.0` (seconds `at.1`) that it does not cover put
/// first as [`NOT_RECORDED`] (checkpoints written before hosts were recorded).
pub(super) fn covering(mut recorded: Vec<HostStretch>, at: (usize, f64)) -> Vec<HostStretch> {
    let (steps, seconds) = recorded
        .iter()
        .fold((0, 0.0), |(n, s), h| (n + h.steps, s + h.seconds));
    if at.0 > steps {
        recorded.insert(
            0,
            HostStretch {
                host: NOT_RECORDED.into(),
                steps: at.0 - steps,
                seconds: (at.1 - seconds).max(0.0),
            },
        );
    }
    recorded
}

impl HostLog {
    /// The log of a training resumed at `start` (steps and seconds so far; `(0, 0.0)` for a
    /// fresh one) on `host`, with the stretches its checkpoint recorded ([`covering`] them).
    pub(super) fn resume(earlier: Vec<HostStretch>, start: (usize, f64), host: String) -> Self {
        Self {
            earlier: covering(earlier, start),
            host,
            start,
        }
    }

    /// Every stretch up to `now` (steps and seconds so far), this process's merged into an
    /// earlier one on the same host.
    pub(super) fn upto(&self, now: (usize, f64)) -> Vec<HostStretch> {
        let mut out = self.earlier.clone();
        let steps = now.0.saturating_sub(self.start.0);
        let seconds = (now.1 - self.start.1).max(0.0);
        if steps > 0 {
            add(&mut out, &self.host, steps, seconds);
        }
        out
    }
}

/// Adds `steps` and `seconds` on `host` to `stretches`.
fn add(stretches: &mut Vec<HostStretch>, host: &str, steps: usize, seconds: f64) {
    match stretches.iter_mut().find(|h| h.host == host) {
        Some(h) => {
            h.steps += steps;
            h.seconds += seconds;
        }
        None => stretches.push(HostStretch {
            host: host.into(),
            steps,
            seconds,
        }),
    }
}

/// The stretches of several trainings, summed per host.
pub(super) fn merged<'a>(all: impl IntoIterator<Item = &'a [HostStretch]>) -> Vec<HostStretch> {
    let mut out = Vec::new();
    for stretches in all {
        for h in stretches {
            add(&mut out, &h.host, h.steps, h.seconds);
        }
    }
    out
}

/// Seconds per step of `a` over those of `b` on the recorded host both ran the most steps on
/// (the smaller of their step counts there), with that host; `None` when no recorded host ran
/// both.
pub(super) fn per_step_ratio(a: &[HostStretch], b: &[HostStretch]) -> Option<(f64, String)> {
    a.iter()
        .filter(|h| h.host != NOT_RECORDED && h.steps > 0)
        .filter_map(|ha| {
            let hb = b.iter().find(|h| h.host == ha.host && h.steps > 0)?;
            let ratio = (ha.seconds / ha.steps as f64) / (hb.seconds / hb.steps as f64);
            Some((ha.steps.min(hb.steps), ratio, ha.host.clone()))
        })
        .max_by_key(|(steps, _, _)| *steps)
        .map(|(_, ratio, host)| (ratio, host))
}

/// `"144 steps in 1485 s on a CPU not recorded; 110 steps in 4963 s on <host>"`.
pub(super) fn describe(stretches: &[HostStretch]) -> String {
    stretches
        .iter()
        .map(|h| {
            let on = if h.host == NOT_RECORDED {
                "a CPU not recorded"
            } else {
                &h.host
            };
            format!("{} steps in {:.0} s on {on}", h.steps, h.seconds)
        })
        .collect::<Vec<_>>()
        .join("; ")
}

#[cfg(test)]
mod tests {
    use super::*;

    fn stretch(host: &str, steps: usize, seconds: f64) -> HostStretch {
        HostStretch {
            host: host.into(),
            steps,
            seconds,
        }
    }

    #[test]
    fn steps_before_hosts_were_recorded_are_labelled_and_stretches_merge_per_host() {
        // A checkpoint at step 144 (1485 s) written before hosts were recorded.
        let log = HostLog::resume(Vec::new(), (144, 1485.0), "zen3".into());
        assert_eq!(
            log.upto((200, 2485.0)),
            vec![
                stretch(NOT_RECORDED, 144, 1485.0),
                stretch("zen3", 56, 1000.0)
            ]
        );
        // Resumed again on the same host, then on another.
        let log = HostLog::resume(log.upto((200, 2485.0)), (200, 2485.0), "zen3".into());
        let upto = log.upto((210, 2685.0));
        assert_eq!(upto[1], stretch("zen3", 66, 1200.0));
        let log = HostLog::resume(upto.clone(), (210, 2685.0), "zen5".into());
        assert_eq!(log.upto((210, 2685.0)), upto);
        assert_eq!(log.upto((220, 2785.0))[2], stretch("zen5", 10, 100.0));
    }

    #[test]
    fn the_ratio_uses_the_recorded_host_both_ran_most() {
        let rr = [
            stretch(NOT_RECORDED, 100, 100.0),
            stretch("a", 10, 30.0),
            stretch("b", 500, 600.0),
        ];
        let cg = [stretch("a", 400, 800.0), stretch("b", 50, 50.0)];
        // On "a" they share 10 steps, on "b" 50: "b" is used (1.2 s vs 1.0 s per step).
        let (ratio, host) = per_step_ratio(&rr, &cg).unwrap();
        assert_eq!(host, "b");
        assert!((ratio - 1.2).abs() < 1e-12);
        assert!(per_step_ratio(&rr[..1], &cg).is_none());
        assert_eq!(
            merged([&rr[1..], &cg[..1]]),
            vec![stretch("a", 410, 830.0), stretch("b", 500, 600.0)]
        );
    }
}
