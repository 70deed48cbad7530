//! Random-Fourier-feature objectives (plain RFF and single-sample RFF).
