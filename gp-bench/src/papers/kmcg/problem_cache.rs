//! The dense experiments one problem (data set and kernel) at a time through the fold cache
//! (`--fold-cache DIR`, one entry per problem), `--jobs` at a time, and only the sets of
//! `--sets`: at `--full` they take hours (the baselines fit 2 methods × 10 seeds × 100 steps
//! per problem, the re-optimisation factorises and inverts `K` up to 100 times), so a run can be interrupted, continued and
//! split over processes, and the report then written from the recorded problems with
//! `--cached-only`.

use serde::de::DeserializeOwned;
use serde::Serialize;

use super::dense::{load_dense_sets, KmcgDense, SPLIT_SEED};
use super::hyper::{DenseSet, KernelKind};
use crate::error::BenchError;
use crate::experiment::RunContext;
use crate::fold_cache::{FoldCache, FoldKey};
use crate::jobs::run_concurrently;

/// The sets of `planned` named in `wanted` (`--sets`, by [`DenseSet::parse`]'s names), in
/// `planned`'s order; all of `planned` when `wanted` is `None`.
///
/// Errors: [`BenchError::InvalidArgument`] for a name that is not a dense set or not one of
/// this run's, listing the run's sets.
pub fn selected_dense_sets(
    planned: &[DenseSet],
    wanted: Option<&[String]>,
) -> Result<Vec<DenseSet>, BenchError> {
    let Some(wanted) = wanted else {
        return Ok(planned.to_vec());
    };
    let not_planned = |name: &str| BenchError::InvalidArgument {
        name: "--sets",
        reason: format!(
            "`{name}` is not a data set of this run; its sets: {}",
            planned
                .iter()
                .map(|s| s.name())
                .collect::<Vec<_>>()
                .join(", ")
        ),
    };
    let mut chosen = Vec::with_capacity(wanted.len());
    for name in wanted {
        let set = DenseSet::parse(name).map_err(|_| not_planned(name))?;
        if !planned.contains(&set) {
            return Err(not_planned(name));
        }
        chosen.push(set);
    }
    Ok(planned
        .iter()
        .copied()
        .filter(|s| chosen.contains(s))
        .collect())
}

/// The cache's name of a problem: `<SET>-<GPML covariance name>`.
fn problem_name(set: DenseSet, kind: KernelKind) -> String {
    format!("{}-{}", set.name(), kind.gpml_name())
}

/// The cache key of a problem of `experiment` (`kmcg/<name>`) run with `settings` (every
/// option that changes its result, with the experiment's code version).
fn key<'a>(experiment: &'a str, name: &'a str, settings: &str) -> FoldKey<'a> {
    FoldKey {
        experiment,
        dataset: name,
        fold: 0,
        settings: format!("split seed {SPLIT_SEED}; {settings}"),
    }
}

/// The problems of one dense experiment: which sets and kernels, the cache's folder, the
/// settings string, and the relative cost of one problem (for the estimate).
pub struct DenseProblems {
    /// `kmcg/<experiment>`.
    pub experiment: &'static str,
    /// The run's sets (all of the size's, before `--sets`).
    pub sets: Vec<DenseSet>,
    /// The run's kernels.
    pub kinds: Vec<KernelKind>,
    /// Every option that changes a result, with the experiment's code version.
    pub settings: String,
    /// The relative cost of a set's problem (only ratios matter).
    pub cost: fn(DenseSet) -> f64,
}

/// What [`DenseProblems::run`] returns: each problem's result (`None`: skipped by
/// `--cached-only`), with the counts for the report's note.
pub struct DenseResults<T> {
    /// The loaded problems, in order.
    pub problems: Vec<KmcgDense>,
    /// Their results, in the same order.
    pub results: Vec<Option<T>>,
    /// How many results came from the cache.
    pub cached: usize,
}

impl<T> DenseResults<T> {
    /// The note that says how many problems were run, recorded or skipped; `None` when
    /// every problem ran now.
    pub fn note(&self, cache: Option<&FoldCache>) -> Option<String> {
        let skipped = self.results.iter().filter(|r| r.is_none()).count();
        let dir = cache.map(|c| c.dir().display().to_string())?;
        Some(format!(
            "Fold cache `{dir}`: {} of {} problems (data set × kernel) from recorded results, {} run now, \
             {skipped} not recorded and skipped (--cached-only); the claims judge the problems shown. \
             Recorded times are those of the run that recorded them.",
            self.cached,
            self.results.len(),
            self.results.len() - self.cached - skipped,
        ))
    }
}

impl DenseProblems {
    /// `full` × the share of the cost of the `--sets` problems that `cache` does not hold.
    pub fn remaining_seconds(
        &self,
        full: f64,
        sets: Option<&[String]>,
        cache: Option<&FoldCache>,
    ) -> f64 {
        let Ok(chosen) = selected_dense_sets(&self.sets, sets) else {
            return full;
        };
        let kinds = self.kinds.len() as f64;
        let total: f64 = self.sets.iter().map(|&s| (self.cost)(s)).sum::<f64>() * kinds;
        let missing: f64 = chosen
            .iter()
            .flat_map(|&s| self.kinds.iter().map(move |&k| (s, k)))
            .filter(|&(s, k)| {
                let name = problem_name(s, k);
                cache.is_none_or(|c| {
                    c.load::<serde_json::Value>(&key(self.experiment, &name, &self.settings))
                        .is_none()
                })
            })
            .map(|(s, _)| (self.cost)(s))
            .sum();
        if total > 0.0 {
            full * missing / total
        } else {
            full
        }
    }

    /// Loads the `--sets` problems (with the run's kernels) and runs `task` on each that the fold
    /// cache does not hold, `ctx.jobs` at a time, storing each result as it finishes; with
    /// `--cached-only` a problem the cache lacks is skipped.
    ///
    /// Errors: an unknown `--sets` name, a failing load, the first failing task, a cache
    /// write that fails.
    pub fn run<T, F>(&self, ctx: &RunContext<'_>, task: F) -> Result<DenseResults<T>, BenchError>
    where
        T: Serialize + DeserializeOwned + Send,
        F: Fn(&KmcgDense) -> Result<T, BenchError> + Sync,
    {
        let sets = selected_dense_sets(&self.sets, ctx.sets)?;
        let problems =
            load_dense_sets(&sets, &self.kinds, ctx.data_dir.path.as_deref(), SPLIT_SEED)?;
        ctx.progress.set_length(problems.len() as u64);
        let skip = ctx.fold_cache.is_some_and(|c| c.cached_only());
        let outcomes = run_concurrently(problems.len(), ctx.jobs, |i| {
            let p = &problems[i];
            let name = problem_name(p.set, p.kind);
            let k = key(self.experiment, &name, &self.settings);
            ctx.progress
                .set_message(format!("{} {}", p.name, p.kind.label()));
            let outcome = match ctx.fold_cache.and_then(|c| c.load::<T>(&k)) {
                Some((result, _)) => Ok((Some(result), true)),
                None if skip => Ok((None, false)),
                None => task(p).and_then(|r| {
                    if let Some(cache) = ctx.fold_cache {
                        cache.store(&k, &r)?;
                    }
                    Ok((Some(r), false))
                }),
            };
            ctx.progress.inc(1);
            outcome
        });
        let mut results = Vec::with_capacity(problems.len());
        let mut cached = 0;
        for outcome in outcomes {
            let (result, from_cache) = outcome?;
            cached += usize::from(from_cache);
            results.push(result);
        }
        Ok(DenseResults {
            problems,
            results,
            cached,
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sets_are_chosen_by_any_known_name_in_the_runs_order() {
        let planned = DenseSet::ALL.to_vec();
        let wanted = vec!["pol".to_string(), "mpg".to_string()];
        assert_eq!(
            selected_dense_sets(&planned, Some(&wanted)).unwrap(),
            vec![DenseSet::Mpg, DenseSet::Poletele]
        );
        assert_eq!(selected_dense_sets(&planned, None).unwrap(), planned);
        let quick = DenseSet::QUICK.to_vec();
        for bad in ["elevators", "nonsense"] {
            let err = selected_dense_sets(&quick, Some(&[bad.to_string()])).unwrap_err();
            let text = err.to_string();
            assert!(text.contains(bad) && text.contains("MPG"), "{text}");
        }
    }
}
