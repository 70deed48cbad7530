//! CPU vector-state hygiene shared by hot loops that mix faer's GEMM with scalar code.
//!
//! faer's GEMM kernels use AVX-512/AVX2 and leave the upper halves of the vector registers
//! dirty. Code compiled for the x86-64 baseline (legacy SSE encoding) that runs next on the
//! same thread then pays a false dependency on those upper halves: on the reference machine,
//! kernel-evaluation loops interleaved with small GEMMs ran 3–4× slower. Two remedies are
//! used in the workspace: compiling the hot loop for AVX2 as well and dispatching at run time
//! (`gp-kernels`' tile fills), or calling [`clear_upper_vector_state`] between the GEMM and
//! the scalar loop (`gp-models`' derivative pass).

/// Executes `vzeroupper` on x86-64 CPUs with AVX; a no-op elsewhere. Cheap (a few cycles):
/// call it once per tile, not per element.
#[inline]
pub fn clear_upper_vector_state() {
    #[cfg(target_arch = "x86_64")]
    {
        if std::arch::is_x86_feature_detected!("avx") {
            // SAFETY: the CPU supports AVX (checked just above), the only requirement of
            // `vzeroupper`. The instruction zeroes bits 128 and above of the vector
            // registers; the intrinsic is modelled as clobbering them, so the compiler keeps
            // no live value there across the call.
            unsafe { std::arch::x86_64::_mm256_zeroupper() };
        }
    }
}
