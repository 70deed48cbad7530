//! Runtime selection of an AVX2 build of the hot tile loops.
//!
//! The tile loops (see [`crate::ard`]) are written once, as `#[inline(always)]` bodies, and
//! compiled twice: for the baseline target (SSE2 on x86-64) and, through a
//! `#[target_feature(enable = "avx2,fma")]` wrapper, for AVX2. The wrapper is used when the
//! CPU reports AVX2 and FMA at run time. Besides doubling the vector width, the AVX2 build
//! avoids a large penalty measured on the reference hardware: after faer's AVX-512 GEMM
//! kernels run on a thread, legacy-SSE code on that thread ran about 3× slower (dirty upper
//! register state), which hit the kernel operator, where tile fills and GEMMs alternate.
//! VEX-encoded AVX2 code does not pay that penalty.

/// Whether the AVX2 build of the tile loops can run on this CPU.
#[inline]
pub fn has_avx2_fma() -> bool {
    #[cfg(target_arch = "x86_64")]
    {
        std::arch::is_x86_feature_detected!("avx2") && std::arch::is_x86_feature_detected!("fma")
    }
    #[cfg(not(target_arch = "x86_64"))]
    {
        false
    }
}

/// Defines `$name` (baseline) dispatching to `$avx2` (an AVX2+FMA compilation of the same
/// `#[inline(always)]` body `$body`) when the CPU supports it.
macro_rules! dispatch_simd {
    (
        $(#[$meta:meta])*
        $vis:vis fn $name:ident < $($gen:ident : $bound:path),* > ( $($arg:ident : $ty:ty),* $(,)? )
        via $avx2:ident, $body:ident
    ) => {
        $(#[$meta])*
        $vis fn $name<$($gen: $bound),*>($($arg: $ty),*) {
            #[cfg(target_arch = "x86_64")]
            {
                if $crate::simd::has_avx2_fma() {
                    // SAFETY: the CPU supports AVX2 and FMA (checked at run time just above),
                    // which is the only requirement of the `target_feature` function.
                    unsafe { $avx2::<$($gen),*>($($arg),*) };
                    return;
                }
            }
            $body::<$($gen),*>($($arg),*)
        }

        #[cfg(target_arch = "x86_64")]
        #[target_feature(enable = "avx2,fma")]
        fn $avx2<$($gen: $bound),*>($($arg: $ty),*) {
            $body::<$($gen),*>($($arg),*)
        }
    };
}

pub(crate) use dispatch_simd;
