//! The vector work of one CG step for all columns at once, in passes over row chunks.
//!
//! Column by column, a step makes about a dozen passes over memory per column (two dots,
//! the iterate and residual updates, the residual norms, the next direction, the caller's
//! accumulators), each its own rayon call. Here each pass walks the rows once in chunks of
//! [`CHUNK`] and does every column's work on the chunk while it is in cache.
//!
//! Every element sees the same operations in the same order as the column-by-column
//! kernels, and every reduction sums per-chunk `dot_chunk` values (formed side by side by
//! [`dot_chunks`], the same bits) in chunk order, as `gp_linalg::vector::dot` does; so the
//! results are the same bits, whatever the thread count.
//!
//! The one exception to the column-by-column order is [`woodbury_residuals`]: it applies a
//! diagonal-plus-low-rank preconditioner from `Vᵀr` (summed by [`advance`]) instead of the
//! preconditioner's own solve, so it agrees with that solve to rounding, not bit for bit
//! (still the same bits whatever the thread count).

use gp_linalg::vector::{dot_chunks, CHUNK, PARALLEL_THRESHOLD};
use rayon::prelude::*;

/// Splits every slice into pieces of [`CHUNK`] rows (by `split`) and regroups them by
/// chunk: `out[k][c]` is chunk `k` of slice `c`. Slices of length `n` give `⌈n / CHUNK⌉`
/// chunks.
fn regroup<S, I: Iterator<Item = S>>(
    slices: Vec<S>,
    n: usize,
    split: impl Fn(S) -> I,
) -> Vec<Vec<S>> {
    let mut out: Vec<Vec<S>> = (0..n.div_ceil(CHUNK))
        .map(|_| Vec::with_capacity(slices.len()))
        .collect();
    for s in slices {
        for (k, piece) in split(s).enumerate() {
            out[k].push(piece);
        }
    }
    out
}

/// [`regroup`] for shared slices.
fn by_chunk(slices: Vec<&[f64]>, n: usize) -> Vec<Vec<&[f64]>> {
    regroup(slices, n, |s| s.chunks(CHUNK))
}

/// [`regroup`] for mutable slices.
fn by_chunk_mut(slices: Vec<&mut [f64]>, n: usize) -> Vec<Vec<&mut [f64]>> {
    regroup(slices, n, |s| s.chunks_mut(CHUNK))
}

/// Runs `f` on every chunk's work item, in parallel for long vectors; the results in chunk
/// order.
fn over_chunks<T: Send, R: Send>(
    n: usize,
    items: Vec<T>,
    f: impl Fn(T) -> R + Sync + Send,
) -> Vec<R> {
    if n < PARALLEL_THRESHOLD {
        items.into_iter().map(f).collect()
    } else {
        items.into_par_iter().map(f).collect()
    }
}

/// `dot_chunk` of every pair of one row chunk (summed side by side, same bits).
fn chunk_dots(pairs: &[(&[f64], &[f64])]) -> Vec<f64> {
    let mut out = vec![0.0; pairs.len()];
    dot_chunks(pairs, &mut out);
    out
}

/// Adds per-chunk partial sums (`partials[k][c]`) in chunk order: one total per column.
fn sum_partials(partials: &[Vec<f64>], columns: usize) -> Vec<f64> {
    (0..columns)
        .map(|c| partials.iter().map(|p| p[c]).sum::<f64>())
        .collect()
}

/// `xᵀy` for every pair of columns `(x[c], y[c])`, all of length `n`.
pub(super) fn column_dots(x: Vec<&[f64]>, y: Vec<&[f64]>, n: usize) -> Vec<f64> {
    let columns = x.len();
    let items: Vec<_> = by_chunk(x, n).into_iter().zip(by_chunk(y, n)).collect();
    let partials = over_chunks(n, items, |(x, y)| {
        chunk_dots(&x.into_iter().zip(y).collect::<Vec<_>>())
    });
    sum_partials(&partials, columns)
}

/// `rᵀs` and `rᵀr` for every pair of columns `(r[c], s[c])`, in one pass.
pub(super) fn residual_dots(r: Vec<&[f64]>, s: Vec<&[f64]>, n: usize) -> (Vec<f64>, Vec<f64>) {
    let columns = r.len();
    let items: Vec<_> = by_chunk(r, n).into_iter().zip(by_chunk(s, n)).collect();
    let partials = over_chunks(n, items, |(r, s)| {
        let pairs: Vec<_> = r.iter().zip(&s).map(|(&r, &s)| (r, s)).collect();
        let squares: Vec<_> = r.iter().map(|&r| (r, r)).collect();
        (chunk_dots(&pairs), chunk_dots(&squares))
    });
    let (rs, rr): (Vec<Vec<f64>>, Vec<Vec<f64>>) = partials.into_iter().unzip();
    (sum_partials(&rs, columns), sum_partials(&rr, columns))
}

/// The columns one CG step moves, and what the step writes.
pub(super) struct Advance<'a> {
    /// `α` of each column.
    pub alphas: &'a [f64],
    /// The directions `d` used by the step.
    pub d: Vec<&'a [f64]>,
    /// Their products `A d`.
    pub ad: Vec<&'a [f64]>,
    /// The iterates (`x += 1·Δ`).
    pub x: Vec<&'a mut [f64]>,
    /// The residuals (`r += (−α) A d`).
    pub r: Vec<&'a mut [f64]>,
    /// Accumulators, each with its weight `w` (`e += w·Δ`); `targets[t][c]`.
    pub targets: Vec<(f64, Vec<&'a mut [f64]>)>,
    /// The columns of `V` (`n × k`) whose products `Vᵀr` with the updated residuals are
    /// wanted (empty for none).
    pub projection: Vec<&'a [f64]>,
}

/// What an [`advance`] pass summed over the updated residuals.
pub(super) struct AdvanceSums {
    /// `rᵀr` per column, when asked for.
    pub squares: Option<Vec<f64>>,
    /// `Vᵀr` per column (`k` values each; empty vectors without a projection).
    pub projections: Vec<Vec<f64>>,
}

/// One chunk's share of an [`Advance`].
struct AdvanceChunk<'a> {
    d: Vec<&'a [f64]>,
    ad: Vec<&'a [f64]>,
    x: Vec<&'a mut [f64]>,
    r: Vec<&'a mut [f64]>,
    targets: Vec<Vec<&'a mut [f64]>>,
    projection: Vec<&'a [f64]>,
}

/// Applies a step's updates with `Δ = α d` formed in registers: `x += 1·Δ`, `e += w·Δ` for
/// every accumulator, `r += (−α) A d` (the operations of a scaling and `axpy`s, so the same
/// bits as with `Δ` stored). With `residual_squares`, also returns `rᵀr` of the updated
/// residuals, and with a projection `Vᵀr`, both summed as `dot` sums, from the same pass.
pub(super) fn advance(step: Advance<'_>, n: usize, residual_squares: bool) -> AdvanceSums {
    let Advance {
        alphas,
        d,
        ad,
        x,
        r,
        targets,
        projection,
    } = step;
    let columns = alphas.len();
    let rank = projection.len();
    let weights: Vec<f64> = targets.iter().map(|(w, _)| *w).collect();
    let mut target_chunks: Vec<std::vec::IntoIter<Vec<&mut [f64]>>> = targets
        .into_iter()
        .map(|(_, t)| by_chunk_mut(t, n).into_iter())
        .collect();
    let mut projection_chunks = by_chunk(projection, n).into_iter();
    let mut items = Vec::with_capacity(n.div_ceil(CHUNK));
    let chunked = by_chunk(d, n)
        .into_iter()
        .zip(by_chunk(ad, n))
        .zip(by_chunk_mut(x, n))
        .zip(by_chunk_mut(r, n));
    for (((d, ad), x), r) in chunked {
        let targets = target_chunks
            .iter_mut()
            .map(|t| t.next().unwrap_or_default())
            .collect();
        items.push(AdvanceChunk {
            d,
            ad,
            x,
            r,
            targets,
            projection: projection_chunks.next().unwrap_or_default(),
        });
    }
    let partials = over_chunks(n, items, |mut chunk| {
        for (c, &alpha) in alphas.iter().enumerate() {
            let (d, ad) = (chunk.d[c], chunk.ad[c]);
            for (x, &dv) in chunk.x[c].iter_mut().zip(d) {
                *x += 1.0 * (alpha * dv);
            }
            for (t, &w) in chunk.targets.iter_mut().zip(&weights) {
                for (e, &dv) in t[c].iter_mut().zip(d) {
                    *e += w * (alpha * dv);
                }
            }
            for (ri, &v) in chunk.r[c].iter_mut().zip(ad) {
                *ri += -alpha * v;
            }
        }
        // The updated residuals are still in cache: their squares and projections.
        let r: Vec<&[f64]> = chunk.r.iter().map(|r| &**r).collect();
        let squares: Vec<_> = if residual_squares {
            r.iter().map(|&r| (r, r)).collect()
        } else {
            Vec::new()
        };
        let projections: Vec<_> = r
            .iter()
            .flat_map(|&r| chunk.projection.iter().map(move |&v| (v, r)))
            .collect();
        (chunk_dots(&squares), chunk_dots(&projections))
    });
    let (squares, projections): (Vec<Vec<f64>>, Vec<Vec<f64>>) = partials.into_iter().unzip();
    let projections = sum_partials(&projections, columns * rank);
    AdvanceSums {
        squares: residual_squares.then(|| sum_partials(&squares, columns)),
        projections: (0..columns)
            .map(|c| projections[c * rank..(c + 1) * rank].to_vec())
            .collect(),
    }
}

/// `s = D⁻¹r − V t` for every column (its own `t`, `k` values), written to `s`, and `rᵀs`
/// (summed as `dot` sums) from the same pass: the Woodbury solve of a diagonal-plus-low-rank
/// preconditioner whose `Vᵀr` came from the [`advance`] pass.
pub(super) fn woodbury_residuals(
    diagonal: &[f64],
    v: Vec<&[f64]>,
    t: &[Vec<f64>],
    r: Vec<&[f64]>,
    s: Vec<&mut [f64]>,
    n: usize,
) -> Vec<f64> {
    let columns = r.len();
    let mut v_chunks = by_chunk(v, n).into_iter();
    let items: Vec<_> = diagonal
        .chunks(CHUNK)
        .zip(by_chunk(r, n))
        .zip(by_chunk_mut(s, n))
        .map(|((d, r), s)| (d, v_chunks.next().unwrap_or_default(), r, s))
        .collect();
    let partials = over_chunks(n, items, |(d, v, r, mut s)| {
        for ((s, r), t) in s.iter_mut().zip(&r).zip(t) {
            for ((si, ri), di) in s.iter_mut().zip(r.iter()).zip(d) {
                *si = ri / di;
            }
            for (vk, &tk) in v.iter().zip(t) {
                for (si, vi) in s.iter_mut().zip(vk.iter()) {
                    *si -= vi * tk;
                }
            }
        }
        let pairs: Vec<_> = r.iter().zip(&s).map(|(&r, s)| (r, &**s)).collect();
        chunk_dots(&pairs)
    });
    sum_partials(&partials, columns)
}

/// The next directions `s + β d` for every column, written to `out` (the caller swaps the
/// buffers, so the old `d` stays as the last step's direction without a copy), in one pass.
pub(super) fn next_directions(
    betas: &[f64],
    s: Vec<&[f64]>,
    d: Vec<&[f64]>,
    out: Vec<&mut [f64]>,
    n: usize,
) {
    let items: Vec<_> = by_chunk(s, n)
        .into_iter()
        .zip(by_chunk(d, n))
        .zip(by_chunk_mut(out, n))
        .collect();
    over_chunks(n, items, |((s, d), mut out)| {
        for (((s, d), out), &beta) in s.iter().zip(&d).zip(out.iter_mut()).zip(betas) {
            for ((o, si), di) in out.iter_mut().zip(s.iter()).zip(d.iter()) {
                *o = si + beta * di;
            }
        }
    });
}
