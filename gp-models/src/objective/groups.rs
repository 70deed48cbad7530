//! Which hyperparameters training moves, and which move together.
//!
//! GPyTorch's RBF kernel without ARD has one length scale for every input dimension, and
//! the paper's Figure 3 trains only that length scale and the noise with the output scale
//! held fixed. The kernels of this workspace carry one length scale per dimension, so
//! [`ParameterGroups`] maps the optimizer's free variables onto them: every
//! hyperparameter is either tied to a free variable (hyperparameters sharing a variable
//! always have equal raw values, e.g. an isotropic length scale) or held at its start.

use crate::error::{ModelError, Result};

/// The map from the optimizer's free variables to the hyperparameters (the kernel's log
/// hyperparameters, then the noise), used by
/// [`ObjectiveTrainOptions::groups`](super::ObjectiveTrainOptions::groups).
///
/// The map acts on the raw (softplus) parameters: a hyperparameter tied to variable `g`
/// takes the raw value `z_g`, so the gradient of `z_g` is the sum of its hyperparameters'
/// raw gradients; a fixed hyperparameter keeps its starting value exactly.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ParameterGroups {
    groups: Vec<Option<usize>>,
    count: usize,
}

impl ParameterGroups {
    /// One entry per hyperparameter: `Some(g)` ties it to free variable `g`, `None` holds
    /// it at its start. The variables used must be `0, 1, …, G − 1` with none skipped.
    ///
    /// Errors: [`ModelError::InvalidOption`] when a variable number is skipped.
    pub fn new(groups: Vec<Option<usize>>) -> Result<Self> {
        let count = groups.iter().flatten().max().map_or(0, |g| g + 1);
        if let Some(missing) = (0..count).find(|g| !groups.contains(&Some(*g))) {
            return Err(ModelError::InvalidOption {
                name: "ParameterGroups",
                reason: format!(
                    "free variables must be numbered 0..{count} without gaps; {missing} is \
                     used by no hyperparameter"
                ),
            });
        }
        Ok(Self { groups, count })
    }

    /// A stationary kernel on `dim` inputs (length scales, then the output variance, then
    /// the noise): one length scale shared by every dimension, the output variance
    /// trained or fixed, the noise trained.
    pub fn isotropic(dim: usize, train_outputscale: bool) -> Self {
        let mut groups = vec![Some(0); dim];
        let mut next = 1;
        if train_outputscale {
            groups.push(Some(next));
            next += 1;
        } else {
            groups.push(None);
        }
        groups.push(Some(next));
        Self {
            groups,
            count: next + 1,
        }
    }

    /// Hyperparameters covered (the kernel's and the noise).
    pub fn len(&self) -> usize {
        self.groups.len()
    }

    /// Whether no hyperparameter is covered.
    pub fn is_empty(&self) -> bool {
        self.groups.is_empty()
    }

    /// Free variables.
    pub fn free_variables(&self) -> usize {
        self.count
    }

    /// The free variables at the raw start `raw`.
    ///
    /// Errors: [`ModelError::LengthMismatch`] when `raw` has another length, and
    /// [`ModelError::InvalidOption`] when tied hyperparameters start at different values
    /// (they could not stay tied).
    pub fn initial(&self, raw: &[f64]) -> Result<Vec<f64>> {
        self.check_len(raw.len())?;
        let mut z: Vec<Option<f64>> = vec![None; self.count];
        for (i, (g, &r)) in self.groups.iter().zip(raw).enumerate() {
            let Some(g) = *g else { continue };
            match z[g] {
                None => z[g] = Some(r),
                Some(first) if first == r => {}
                Some(first) => {
                    return Err(ModelError::InvalidOption {
                        name: "ParameterGroups",
                        reason: format!(
                            "hyperparameters tied to free variable {g} must start equal; \
                             hyperparameter {i} starts at raw value {r}, an earlier one at \
                             {first}"
                        ),
                    })
                }
            }
        }
        Ok(z.into_iter().map(|v| v.unwrap_or(0.0)).collect())
    }

    /// The raw hyperparameters for free variables `z`, fixed ones taken from `start`.
    pub fn expand(&self, z: &[f64], start: &[f64]) -> Vec<f64> {
        self.groups
            .iter()
            .zip(start)
            .map(|(g, &s)| g.map_or(s, |g| z[g]))
            .collect()
    }

    /// The gradient with respect to the free variables from the hyperparameters' raw
    /// gradient (sums over each variable's hyperparameters; fixed ones drop out).
    pub fn reduce(&self, raw_gradient: &[f64]) -> Vec<f64> {
        let mut out = vec![0.0; self.count];
        for (g, &v) in self.groups.iter().zip(raw_gradient) {
            if let Some(g) = *g {
                out[g] += v;
            }
        }
        out
    }

    fn check_len(&self, found: usize) -> Result<()> {
        if found == self.groups.len() {
            Ok(())
        } else {
            Err(ModelError::LengthMismatch {
                context: "parameter groups (the kernel's hyperparameters, then the noise)",
                expected: self.groups.len(),
                found,
            })
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn isotropic_ties_the_length_scales_and_can_fix_the_outputscale() {
        let g = ParameterGroups::isotropic(3, false);
        assert_eq!(g.len(), 5);
        assert_eq!(g.free_variables(), 2);
        let start = [0.5, 0.5, 0.5, -1.0, 2.0];
        let z = g.initial(&start).unwrap();
        assert_eq!(z, vec![0.5, 2.0]);
        assert_eq!(
            g.expand(&[0.7, 3.0], &start),
            vec![0.7, 0.7, 0.7, -1.0, 3.0]
        );
        assert_eq!(g.reduce(&[1.0, 2.0, 3.0, 100.0, -4.0]), vec![6.0, -4.0]);
        let trained = ParameterGroups::isotropic(2, true);
        assert_eq!(trained.free_variables(), 3);
        assert_eq!(trained.reduce(&[1.0, 2.0, 5.0, 7.0]), vec![3.0, 5.0, 7.0]);
    }

    #[test]
    fn bad_maps_and_starts_are_refused() {
        assert!(ParameterGroups::new(vec![Some(0), Some(2)]).is_err());
        let g = ParameterGroups::new(vec![Some(0), Some(0), None]).unwrap();
        assert!(g.initial(&[1.0, 1.5, 0.0]).is_err());
        assert!(g.initial(&[1.0, 1.0]).is_err());
        assert_eq!(g.initial(&[1.0, 1.0, 9.0]).unwrap(), vec![1.0]);
    }
}
