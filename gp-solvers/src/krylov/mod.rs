//! The vocabulary every Krylov method of this crate shares.
//!
//! * judging a computed value against the scale of the terms that produced it, so that a
//!   rounding-level "negative" squared norm ends a solve as converged, not as a breakdown
//!   (the threshold is derived in the `scale` submodule's documentation: `γₙ Σ|xᵢ yᵢ| + n η`).

pub(crate) mod scale;
