//! Runtime SIMD dispatch, one mechanism for the workspace: the CPU's vector level, detected
//! once ([`detected_simd_level`], [`simd_level`]), and [`simd_dispatch!`](crate::simd_dispatch), which compiles a hot
//! loop twice (baseline and for a [`SimdLevel`]) and picks the build at run time; plus the
//! CPU vector-state hygiene ([`clear_upper_vector_state`]) of loops that follow faer's GEMM.
//!
//! **Why a second build.** The workspace is compiled for the x86-64 baseline (SSE2). A hot
//! loop written once as an `#[inline(always)]` body and compiled again inside a
//! `#[target_feature]` function gets twice the vector width, and it avoids a penalty measured
//! on the reference hardware: faer's AVX-512/AVX2 GEMM kernels leave the upper halves of the
//! vector registers dirty, and legacy-SSE code that runs next on the same thread pays a false
//! dependency on them (kernel tile fills interleaved with small GEMMs ran 3–4× slower).
//! VEX-encoded AVX2 code does not pay it. Where a second build is not worth it,
//! [`clear_upper_vector_state`] between the GEMM and the scalar loop is the other remedy.
//!
//! **Same bits.** Rust never contracts `a * b + c` into a fused multiply-add on its own, and
//! an explicit `mul_add` is correctly rounded in both builds, so the two builds of a body do
//! the same floating-point operations in the same order: every dispatched kernel has a test
//! that compares the dispatched build with the baseline one bit for bit.
//!
//! **Why not a crate.** `multiversion` (the well-kept crate for this) does not support
//! functions that use `self`, adds two proc-macro dependencies, and detects features per
//! function; the three kernels here need one target each and share one cached level.

use std::sync::atomic::{AtomicU8, Ordering};

/// The vector instruction sets a dispatched kernel can be built for, in increasing order (a
/// CPU at one level has every lower one).
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
#[repr(u8)]
pub enum SimdLevel {
    /// The compilation target's baseline (SSE2 on x86-64; everything on other architectures).
    Baseline = 0,
    /// AVX (256-bit floating point, VEX encoding).
    Avx = 1,
    /// AVX2.
    Avx2 = 2,
    /// AVX2 and FMA.
    Avx2Fma = 3,
    /// AVX-512 Foundation, with AVX2 and FMA (512-bit vectors, 32 vector registers).
    Avx512 = 4,
}

/// `SimdLevel` not detected yet.
const UNKNOWN: u8 = u8::MAX;

/// The detected level, as `SimdLevel as u8`, or [`UNKNOWN`].
static DETECTED: AtomicU8 = AtomicU8::new(UNKNOWN);

/// The highest level dispatch may use (see [`set_max_simd_level`]).
static MAX_LEVEL: AtomicU8 = AtomicU8::new(SimdLevel::Avx512 as u8);

impl SimdLevel {
    fn from_u8(v: u8) -> Option<Self> {
        match v {
            0 => Some(Self::Baseline),
            1 => Some(Self::Avx),
            2 => Some(Self::Avx2),
            3 => Some(Self::Avx2Fma),
            4 => Some(Self::Avx512),
            _ => None,
        }
    }
}

/// The CPU's [`SimdLevel`], detected on the first call and cached (one relaxed atomic load
/// afterwards). Detection is deterministic, so threads that race on the first call store the
/// same value.
#[inline]
pub fn detected_simd_level() -> SimdLevel {
    SimdLevel::from_u8(DETECTED.load(Ordering::Relaxed)).unwrap_or_else(|| {
        let level = detect();
        DETECTED.store(level as u8, Ordering::Relaxed);
        level
    })
}

/// The level [`simd_dispatch!`](crate::simd_dispatch) functions run at: the detected level,
/// capped by [`set_max_simd_level`].
#[inline]
pub fn simd_level() -> SimdLevel {
    let max = SimdLevel::from_u8(MAX_LEVEL.load(Ordering::Relaxed)).unwrap_or(SimdLevel::Avx512);
    detected_simd_level().min(max)
}

/// Caps the level dispatched functions use, process-wide, and returns the previous cap
/// (`SimdLevel::Avx512`, no cap, by default). Meant for tests that compare a dispatched
/// kernel with its baseline build through a public entry point, and for before/after timings;
/// results do not change (the builds give the same bits), only speed.
pub fn set_max_simd_level(max: SimdLevel) -> SimdLevel {
    SimdLevel::from_u8(MAX_LEVEL.swap(max as u8, Ordering::Relaxed)).unwrap_or(SimdLevel::Avx512)
}

/// Asks the CPU (x86-64) which levels it supports.
fn detect() -> SimdLevel {
    #[cfg(target_arch = "x86_64")]
    {
        use std::arch::is_x86_feature_detected as has;
        if has!("avx512f") && has!("avx2") && has!("fma") {
            SimdLevel::Avx512
        } else if has!("avx2") && has!("fma") {
            SimdLevel::Avx2Fma
        } else if has!("avx2") {
            SimdLevel::Avx2
        } else if has!("avx") {
            SimdLevel::Avx
        } else {
            SimdLevel::Baseline
        }
    }
    #[cfg(not(target_arch = "x86_64"))]
    {
        SimdLevel::Baseline
    }
}

/// Executes `vzeroupper` on x86-64 CPUs with AVX; a no-op elsewhere. Cheap (a few cycles):
/// call it once per tile, not per element.
///
/// [`eigen::self_adjoint_eigen`](crate::eigen::self_adjoint_eigen) and
/// [`SymmetricEigen::new`](crate::SymmetricEigen::new) call it after faer's eigensolver (0.24),
/// which returns with the upper halves of the vector registers dirty: until other vector code
/// clears them, every call of glibc's SSE-encoded `exp` wrapper stalls on Intel CPUs
/// (7 → 183 ns per `exp` measured on a Xeon, family 6 model 207; AMD CPUs do not stall).
#[inline]
pub fn clear_upper_vector_state() {
    #[cfg(target_arch = "x86_64")]
    {
        if detected_simd_level() >= SimdLevel::Avx {
            // SAFETY: the CPU supports AVX (checked just above), the only requirement of
            // `vzeroupper`. The instruction zeroes bits 128 and above of the vector
            // registers; the intrinsic is modelled as clobbering them, so the compiler keeps
            // no live value there across the call.
            unsafe { std::arch::x86_64::_mm256_zeroupper() };
        }
    }
}

/// Asks the CPU to bring the cache lines of `values` into L1 (no effect on other targets):
/// for streams the hardware prefetchers lose (they stop at every 4 KiB page).
#[inline(always)]
pub fn prefetch(values: &[f64]) {
    #[cfg(target_arch = "x86_64")]
    for line in values.chunks(8) {
        // SAFETY: a prefetch has no architectural effect (it cannot fault), and the address
        // is inside `values`.
        unsafe {
            std::arch::x86_64::_mm_prefetch::<{ std::arch::x86_64::_MM_HINT_T0 }>(
                line.as_ptr().cast::<i8>(),
            )
        };
    }
    #[cfg(not(target_arch = "x86_64"))]
    let _ = values;
}

/// Asks the CPU to bring the cache lines of `values` into L2 (no effect on other targets):
/// for data a loop will read after the one running now, so that its memory traffic overlaps
/// the running loop's arithmetic without evicting that loop's L1 working set.
#[inline(always)]
pub fn prefetch_l2(values: &[f64]) {
    #[cfg(target_arch = "x86_64")]
    for line in values.chunks(8) {
        // SAFETY: as in `prefetch`.
        unsafe {
            std::arch::x86_64::_mm_prefetch::<{ std::arch::x86_64::_MM_HINT_T1 }>(
                line.as_ptr().cast::<i8>(),
            )
        };
    }
    #[cfg(not(target_arch = "x86_64"))]
    let _ = values;
}

/// Defines a function that runs `body` compiled for a [`SimdLevel`] when the CPU has it
/// ([`simd_level`]), and the baseline build of `body` otherwise.
///
/// ```text
/// simd_dispatch! {
///     /// Documentation of the dispatcher.
///     pub fn name<T: Bound>(a: A, b: B) -> R = body, avx2_fma via name_avx2;
/// }
/// ```
///
/// * `body` is a function with the same parameters (and generics, in the same order), marked
///   `#[inline(always)]` so that it is compiled again inside the second build; closures it
///   passes on should be `#[inline(always)]` too, or they stay baseline code.
/// * A level is `avx2`, `avx2_fma` or `avx512` (AVX-512F with AVX2 and FMA: the target
///   features of that build); several may be listed, highest first
///   (`= body, avx512 via name_avx512, avx2_fma via name_avx2;`), and the first the CPU has
///   runs; each name after `via` names that build (a private `#[target_feature]` function
///   beside the dispatcher).
/// * Generics: none, type parameters with one bound each (`<T: Bound, U: Other>`), or const
///   parameters (`<const W: usize, const H: usize>`).
///
/// The dispatcher's bit-identity with the baseline build is for each kernel to test (call
/// `body` directly for the baseline).
///
/// ```
/// use gp_linalg::simd_dispatch;
///
/// #[inline(always)]
/// fn sum_body(x: &[f64]) -> f64 {
///     x.iter().sum()
/// }
///
/// simd_dispatch! {
///     /// The sum of `x`, AVX2 build where the CPU has it.
///     fn sum(x: &[f64]) -> f64 = sum_body, avx2 via sum_avx2;
/// }
///
/// let x: Vec<f64> = (0..100).map(|i| 1.0 / (i + 1) as f64).collect();
/// assert_eq!(sum(&x).to_bits(), sum_body(&x).to_bits());
/// ```
#[macro_export]
macro_rules! simd_dispatch {
    // Type parameters, one bound each.
    (
        $(#[$meta:meta])*
        $vis:vis fn $name:ident < $($gp:ident : $gb:path),+ $(,)? >
        ( $($arg:ident : $ty:ty),* $(,)? ) $(-> $ret:ty)?
        = $body:ident, $($level:ident via $clone:ident),+ $(;)?
    ) => {
        $crate::simd_dispatch! {
            @prep [$(#[$meta])*] $vis $name [$($gp: $gb),+] [$($gp),+]
            ($($arg: $ty),*) [$($ret)?] $body [$($level $clone)+] []
        }
    };
    // Const parameters.
    (
        $(#[$meta:meta])*
        $vis:vis fn $name:ident < $(const $cp:ident : $ct:ty),+ $(,)? >
        ( $($arg:ident : $ty:ty),* $(,)? ) $(-> $ret:ty)?
        = $body:ident, $($level:ident via $clone:ident),+ $(;)?
    ) => {
        $crate::simd_dispatch! {
            @prep [$(#[$meta])*] $vis $name [$(const $cp: $ct),+] [$($cp),+]
            ($($arg: $ty),*) [$($ret)?] $body [$($level $clone)+] []
        }
    };
    // No generics.
    (
        $(#[$meta:meta])*
        $vis:vis fn $name:ident
        ( $($arg:ident : $ty:ty),* $(,)? ) $(-> $ret:ty)?
        = $body:ident, $($level:ident via $clone:ident),+ $(;)?
    ) => {
        $crate::simd_dispatch! {
            @prep [$(#[$meta])*] $vis $name [] []
            ($($arg: $ty),*) [$($ret)?] $body [$($level $clone)+] []
        }
    };
    // Each level's target features and minimum `SimdLevel`, one level at a time.
    (@prep $m:tt $v:vis $n:ident $d:tt $c:tt $a:tt $r:tt $b:ident
        [avx2 $clone:ident $($rest:tt)*] [$($done:tt)*]) => {
        $crate::simd_dispatch! { @prep $m $v $n $d $c $a $r $b [$($rest)*]
            [$($done)* ("avx2" Avx2 $clone)] }
    };
    (@prep $m:tt $v:vis $n:ident $d:tt $c:tt $a:tt $r:tt $b:ident
        [avx2_fma $clone:ident $($rest:tt)*] [$($done:tt)*]) => {
        $crate::simd_dispatch! { @prep $m $v $n $d $c $a $r $b [$($rest)*]
            [$($done)* ("avx2,fma" Avx2Fma $clone)] }
    };
    (@prep $m:tt $v:vis $n:ident $d:tt $c:tt $a:tt $r:tt $b:ident
        [avx512 $clone:ident $($rest:tt)*] [$($done:tt)*]) => {
        $crate::simd_dispatch! { @prep $m $v $n $d $c $a $r $b [$($rest)*]
            [$($done)* ("avx2,fma,avx512f" Avx512 $clone)] }
    };
    (@prep $m:tt $v:vis $n:ident $d:tt $c:tt $a:tt $r:tt $b:ident [] [$($done:tt)*]) => {
        $crate::simd_dispatch! { @emit $m $v $n $d $c $a $r $b [$($done)*] }
    };
    (
        @emit [$($meta:tt)*] $vis:vis $name:ident
        $decl:tt $call:tt $params:tt $ret:tt $body:ident
        [$(($features:tt $min:ident $clone:ident))+]
    ) => {
        $crate::simd_dispatch! { @dispatcher [$($meta)*] $vis $name $decl $call $params $params
            $ret $body [$(($min $clone))+] }
        $(
            $crate::simd_dispatch! { @build $features $clone $decl $call $params $ret $body }
        )+
    };
    (
        @dispatcher [$($meta:tt)*] $vis:vis $name:ident [$($decl:tt)*] $call:tt
        ($($arg:ident : $ty:ty),*) $params:tt [$($ret:ty)?] $body:ident
        [$(($min:ident $clone:ident))+]
    ) => {
        $($meta)*
        $vis fn $name<$($decl)*>($($arg: $ty),*) $(-> $ret)? {
            #[cfg(target_arch = "x86_64")]
            {
                let level = $crate::simd::simd_level();
                $(
                    if level >= $crate::simd::SimdLevel::$min {
                        // SAFETY: the CPU has the target features of this build (the cached
                        // level checked just above), the only requirement of calling a
                        // `#[target_feature]` function.
                        return unsafe { $crate::simd_dispatch!(@call $clone $call $params) };
                    }
                )+
            }
            $crate::simd_dispatch!(@call $body $call $params)
        }
    };
    (@call $f:ident [$($call:tt)*] ($($arg:ident : $ty:ty),*)) => {
        $f::<$($call)*>($($arg),*)
    };
    (
        @build $features:tt $clone:ident [$($decl:tt)*] $call:tt
        ($($arg:ident : $ty:ty),*) [$($ret:ty)?] $body:ident
    ) => {
        #[cfg(target_arch = "x86_64")]
        #[target_feature(enable = $features)]
        #[allow(clippy::too_many_arguments)]
        fn $clone<$($decl)*>($($arg: $ty),*) $(-> $ret)? {
            $crate::simd_dispatch!(@call $body $call ($($arg: $ty),*))
        }
    };
}
