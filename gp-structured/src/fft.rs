//! Real FFT plumbing shared by the Toeplitz and circulant operators: smooth transform
//! lengths, a planned forward/inverse pair of real FFTs, reusable buffers and a small
//! thread-safe pool of them.
//!
//! The transforms come from `realfft` (on `rustfft`). A real signal of length `L` has a
//! Hermitian spectrum, so only its `L/2 + 1` non-redundant bins are stored.

use std::sync::{Arc, Mutex};

use faer::reborrow::ReborrowMut;

/// The complex number type of the spectra (re-exported from `num-complex` via `realfft`).
pub use realfft::num_complex::Complex;
use realfft::{ComplexToReal, RealFftPlanner, RealToComplex};

/// Smallest `L ≥ n` of the form `2^a · 3^b · 5^c` ("5-smooth"), for which the mixed-radix
/// FFTs of `rustfft` are fastest. Returns `Some(1)` for `n ≤ 1` and `None` if no such length
/// fits in `usize`.
///
/// ```
/// use gp_structured::fft::smooth_length;
/// assert_eq!(smooth_length(7), Some(8));
/// assert_eq!(smooth_length(31), Some(32));
/// assert_eq!(smooth_length(33), Some(36));
/// assert_eq!(smooth_length(1), Some(1));
/// ```
pub fn smooth_length(n: usize) -> Option<usize> {
    let target = n.max(1) as u128;
    let mut best: Option<u128> = None;
    let mut p5: u128 = 1;
    loop {
        let mut p35 = p5;
        loop {
            // Smallest power of two with p35 · 2^a ≥ target.
            let mut len = p35;
            while len < target {
                len *= 2;
            }
            if best.is_none_or(|b| len < b) {
                best = Some(len);
            }
            if p35 >= target {
                break;
            }
            p35 *= 3;
        }
        if p5 >= target {
            break;
        }
        p5 *= 5;
    }
    best.and_then(|b| usize::try_from(b).ok())
}

/// The length of the circulant embedding used for a symmetric Toeplitz matrix of order `m`:
/// the smallest 5-smooth `L ≥ 2m − 1` (see [`smooth_length`]).
///
/// A symmetric Toeplitz matrix of order `m` is the leading block of a symmetric circulant of
/// *any* length `L ≥ 2m − 1`: its first column is `[c₀, …, c_{m−1}, 0, …, 0, c_{m−1}, …, c₁]`
/// with `L − (2m − 1)` zeros in the middle. Some papers use `L = 2m − 2` (no zero, `c_{m−1}`
/// once) or `L = 2m`; every `L ≥ 2m − 1` is exact, and we take the smallest fast one.
/// Returns `None` on overflow.
pub fn circulant_embedding_length(m: usize) -> Option<usize> {
    let min_len = m.checked_mul(2)?.saturating_sub(1);
    smooth_length(min_len)
}

/// A planned pair of real FFTs (forward and inverse) of one length. Unnormalized, as in
/// `realfft`: `inverse(forward(x)) = L · x`.
#[derive(Clone)]
pub(crate) struct RealFftPair {
    len: usize,
    scratch_len: usize,
    forward: Arc<dyn RealToComplex<f64>>,
    inverse: Arc<dyn ComplexToReal<f64>>,
}

impl std::fmt::Debug for RealFftPair {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("RealFftPair")
            .field("len", &self.len)
            .finish()
    }
}

impl RealFftPair {
    /// Plans both transforms for length `len ≥ 1`.
    pub(crate) fn new(len: usize) -> Self {
        let mut planner = RealFftPlanner::<f64>::new();
        let forward = planner.plan_fft_forward(len);
        let inverse = planner.plan_fft_inverse(len);
        let scratch_len = forward.get_scratch_len().max(inverse.get_scratch_len());
        Self {
            len,
            scratch_len,
            forward,
            inverse,
        }
    }

    /// The transform length `L`.
    pub(crate) fn len(&self) -> usize {
        self.len
    }

    /// Scratch length both transforms need.
    pub(crate) fn scratch_len(&self) -> usize {
        self.scratch_len
    }

    /// Number of stored spectrum bins, `L/2 + 1`.
    pub(crate) fn complex_len(&self) -> usize {
        self.len / 2 + 1
    }

    /// Fresh buffers sized for this pair.
    pub(crate) fn buffers(&self) -> FftBuffers {
        FftBuffers {
            time: vec![0.0; self.len],
            freq: vec![Complex::new(0.0, 0.0); self.complex_len()],
            scratch: vec![Complex::new(0.0, 0.0); self.scratch_len],
        }
    }

    /// `freq = FFT(time)`; `time` is garbage afterwards. Allocates nothing.
    pub(crate) fn forward(&self, buf: &mut FftBuffers) {
        // The buffer lengths are fixed by `buffers()`, so the length checks of `realfft`
        // cannot fail; its result carries nothing else for a forward transform.
        let _ = self
            .forward
            .process_with_scratch(&mut buf.time, &mut buf.freq, &mut buf.scratch);
    }

    /// `time = IFFT(freq)` (unnormalized); `freq` is garbage afterwards. Allocates nothing.
    ///
    /// The imaginary parts of the DC bin (and the Nyquist bin for even `L`) must vanish for
    /// a real signal; they are set to zero here, so `realfft` has nothing to report.
    pub(crate) fn inverse(&self, buf: &mut FftBuffers) {
        if let Some(first) = buf.freq.first_mut() {
            first.im = 0.0;
        }
        if self.len.is_multiple_of(2) {
            if let Some(last) = buf.freq.last_mut() {
                last.im = 0.0;
            }
        }
        let _ = self
            .inverse
            .process_with_scratch(&mut buf.freq, &mut buf.time, &mut buf.scratch);
    }

    /// The full (unnormalized) spectrum bins `0..=L/2` of a real signal.
    pub(crate) fn spectrum_of(&self, signal: &[f64]) -> Vec<Complex<f64>> {
        let mut buf = self.buffers();
        buf.time.copy_from_slice(signal);
        self.forward(&mut buf);
        buf.freq
    }
}

/// The buffers one real FFT pair needs: the real signal, its half spectrum and scratch.
#[derive(Debug, Clone)]
pub(crate) struct FftBuffers {
    /// Real signal, length `L`.
    pub(crate) time: Vec<f64>,
    /// Half spectrum, length `L/2 + 1`.
    pub(crate) freq: Vec<Complex<f64>>,
    /// Scratch for both transforms.
    pub(crate) scratch: Vec<Complex<f64>>,
}

/// A thread-safe pool of reusable workspaces, so that `&self` products allocate only when
/// more threads use an operator at once than ever before.
#[derive(Debug, Default)]
pub(crate) struct Pool<T> {
    items: Mutex<Vec<T>>,
}

impl<T> Pool<T> {
    /// An empty pool.
    pub(crate) fn new() -> Self {
        Self {
            items: Mutex::new(Vec::new()),
        }
    }

    /// Takes a workspace from the pool, or makes one.
    pub(crate) fn take(&self, make: impl FnOnce() -> T) -> T {
        let popped = match self.items.lock() {
            Ok(mut items) => items.pop(),
            Err(poisoned) => poisoned.into_inner().pop(),
        };
        popped.unwrap_or_else(make)
    }

    /// Returns a workspace to the pool.
    pub(crate) fn give(&self, item: T) {
        match self.items.lock() {
            Ok(mut items) => items.push(item),
            Err(poisoned) => poisoned.into_inner().push(item),
        }
    }
}

/// Number of column chunks to split a block product into, following the workspace's
/// parallelism setting ([`gp_linalg::parallelism`]).
pub(crate) fn column_chunks(ncols: usize) -> usize {
    match gp_linalg::parallelism() {
        gp_linalg::Par::Seq => 1,
        gp_linalg::Par::Rayon(n) => n.get().min(ncols).max(1),
    }
}

/// Copies a column (any stride) into the front of `dst`.
pub(crate) fn copy_col_into(x: faer::ColRef<'_, f64>, dst: &mut [f64]) {
    match x.try_as_col_major() {
        Some(c) => dst[..x.nrows()].copy_from_slice(c.as_slice()),
        None => {
            for (i, d) in dst.iter_mut().take(x.nrows()).enumerate() {
                *d = x[i];
            }
        }
    }
}

/// Copies the front of `src` into a column (any stride).
pub(crate) fn copy_into_col(src: &[f64], mut out: faer::ColMut<'_, f64>) {
    let n = out.nrows();
    match out.rb_mut().try_as_col_major_mut() {
        Some(c) => c.as_slice_mut().copy_from_slice(&src[..n]),
        None => {
            for (i, &s) in src.iter().take(n).enumerate() {
                out[i] = s;
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn is_smooth(mut n: usize) -> bool {
        for p in [2, 3, 5] {
            while n.is_multiple_of(p) {
                n /= p;
            }
        }
        n == 1
    }

    #[test]
    fn smooth_length_is_smallest_smooth() {
        for n in 0..2000 {
            let l = smooth_length(n).unwrap_or(0);
            assert!(l >= n.max(1) && is_smooth(l), "n = {n}, l = {l}");
            assert!((n.max(1)..l).all(|k| !is_smooth(k)), "n = {n}");
        }
        assert_eq!(smooth_length(1 << 21), Some(1 << 21));
        assert_eq!(circulant_embedding_length(1 << 20), Some(1 << 21));
        assert_eq!(circulant_embedding_length(1), Some(1));
        assert_eq!(circulant_embedding_length(usize::MAX), None);
    }

    #[test]
    fn fft_pair_round_trip() {
        for len in [1, 2, 3, 8, 15] {
            let pair = RealFftPair::new(len);
            let mut buf = pair.buffers();
            let x: Vec<f64> = (0..len).map(|i| (i as f64).sin()).collect();
            buf.time.copy_from_slice(&x);
            pair.forward(&mut buf);
            pair.inverse(&mut buf);
            for (a, b) in buf.time.iter().zip(&x) {
                assert!((a / len as f64 - b).abs() < 1e-14);
            }
        }
    }
}
