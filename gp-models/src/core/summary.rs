//! Short, human-readable summaries of fitted models (their `Display`): the model, the
//! data's shape, the kernel and likelihood, and every hyperparameter with its natural
//! value. Never the data or a factor (a `Debug` of a model or result can be megabytes).

use std::fmt;

use crate::core::likelihood::Likelihood;
use crate::core::model::GpModel;

/// Writes the summary of `model`, with `details` (model-specific lines such as the grid)
/// after the first line.
pub fn write_summary<M: GpModel>(
    f: &mut fmt::Formatter<'_>,
    model: &M,
    details: &[String],
) -> fmt::Result {
    let likelihood = model.likelihood();
    writeln!(
        f,
        "{}: n = {}, d = {}, {} likelihood",
        model.model_name(),
        model.n_train(),
        model.input_dim(),
        likelihood.name()
    )?;
    for line in details {
        writeln!(f, "  {line}")?;
    }
    let names = model.param_names();
    let values = model.log_params();
    let last = names.len().saturating_sub(1);
    for (i, (name, v)) in names.iter().zip(&values).enumerate() {
        write!(f, "  {name} = {v:.6} ({:.6e})", v.exp())?;
        if i < last {
            writeln!(f)?;
        }
    }
    Ok(())
}
