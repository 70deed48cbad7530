//! The integration tests of `gp-models`, one module per file, compiled into one test binary
//! (one link instead of one per file: faster builds and a smaller `target/`).

mod common;
mod gsgp_support;
mod ski_support;

mod bad_input;
mod breakdown_scale;
mod data_splits;
mod dense_reference;
mod exact_memory;
mod exact_scales;
mod gradient;
mod grief_basis;
mod grief_dual;
mod grief_model;
mod grief_weight_space;
mod gsgp_log_det;
mod gsgp_stats;
mod gsgp_vs_ski;
mod inducing;
mod interface;
mod iterative;
mod iterative_bad_input;
mod iterative_bias;
mod kmcg;
mod love_memo;
mod messages;
mod ncgp;
mod ncgp_laplace_gp;
mod ncgp_metrics;
mod normalize_y;
mod objective_groups;
mod objective_krylov;
mod objective_rff;
mod optimizers;
mod recovery;
mod sampling;
mod save_load;
mod ski_convergence;
mod ski_dense;
mod ski_errors;
mod ski_gradient;
mod ski_love;
mod ski_threads;
mod train_start;
mod unconverged;
