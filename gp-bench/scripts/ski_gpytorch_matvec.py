#!/usr/bin/env python3
"""Time GPyTorch's KISS-GP product K~ v: the peer of `gp-bench bench ski-matvec` (issue 16).

What is timed, per row of the bench's table (n = 10^6, d = 1, m = 10^4; n = 10^5, d = 3, 30^3):

    build    the operator K~ = W K_G W^T + s^2 I of an ExactGP in train mode, ZeroMean,
             GridInterpolationKernel(RBFKernel, grid_size = m per dimension, grid_bounds
             [0, 1]^d) under GaussianLikelihood: `likelihood(model(x)).lazy_covariance_matrix`.
             GPyTorch defers most of the work (the interpolation weights) to the first
             product, so this time is small and only recorded in the JSON; the untimed warm-up
             products absorb the deferred work;
    product  `op @ v` for a fresh N(0, 1) vector v under torch.no_grad(): GPyTorch's matmul of
             an AddedDiagLinearOperator over an InterpolatedLinearOperator whose K_G is a
             ToeplitzLinearOperator (d = 1) or a Kronecker product of them (d = 3), with
             use_toeplitz on (GPyTorch's default): the same algebra as gpscale's K~ v. The
             median of --reps products is reported; gpscale's column to compare with is
             "apply: K~ v into a new vector" (GPyTorch also allocates its output).

Hyper-parameters as in the bench: lengthscale 0.2, outputscale 1 (a bare RBFKernel), noise
0.01; inputs uniform in [0, 1]^d. The product's time does not depend on their values.

Before timing, the script checks that the timed operator is the one meant: at n = 2000 (same d,
grid and settings) its product must match the dense RBF matrix plus noise times v to a
relative error below 1e-3 (measured: 6e-8 at d = 1, m = 10^4; 5e-4 at d = 3, 30^3, where the
grid spacing 1/29 is a sixth of the lengthscale); it prints the error and stops if the check
fails.

Measured on the project's 2-core machine (2026-11-28; torch 2.15.0+cu132 from PyPI on the CPU,
gpytorch 1.15.2, linear_operator 0.6.1, Python 3.11.7, 2 threads, float64; AMD EPYC family 25
model 1, AVX2; nothing else running), default options:

    n = 10^6, d = 1, m = 10^4:  median 673.5 ms (446-743 ms over 15 products)
    n = 10^5, d = 3, 30^3:      median 1032.5 ms (986-1101 ms)

and in the same sitting `gp-bench bench ski-matvec` (K~ v into a new vector): 15.1 ms and
8.0 ms, i.e. 45x and 129x. That file is gp-bench/results/peers/ski_gpytorch_matvec.json.

Install (CPU; a virtual environment, not the system Python), as for rtgps_gpytorch_step.py:

    python3 -m venv /work/venv-peer
    /work/venv-peer/bin/pip install torch gpytorch

Run (from the repository root; nothing in CI or the README needs this):

    /work/venv-peer/bin/python gp-bench/scripts/ski_gpytorch_matvec.py \
        --out gp-bench/results/peers/ski_gpytorch_matvec.json

Options: --reps (timed products per row, default 15), --warmup (untimed products, default 2),
--threads (torch.set_num_threads; default 2, the bench machine's cores), --rows (which rows:
"1" = the d = 1 row, "3" = the d = 3 row; default both), --seed. The output names the torch
and gpytorch versions, the CPU, the thread count, the command line and every product's wall
time; --out writes the same as JSON, which `gp-bench bench ski-matvec` quotes in its
"GPyTorch KISS-GP" column (with the versions, CPU and date the file records).
"""

import argparse
import json
import os
import platform
import shlex
import statistics
import sys
import time
import warnings

# torch 2.15 warns at gpytorch's import that torch.jit.script is deprecated; not our concern.
warnings.filterwarnings("ignore", category=DeprecationWarning)
warnings.filterwarnings("ignore", category=FutureWarning)

import torch  # noqa: E402
import gpytorch  # noqa: E402

LENGTHSCALE = 0.2
NOISE = 0.01
# The bench's rows: (n, d, grid points per dimension).
ROWS = {"1": (1_000_000, 1, 10_000), "3": (100_000, 3, 30)}
CHECK_N = 2000
CHECK_TOLERANCE = 1e-3


def cpu_description():
    """The CPU as gpscale names it (`report::machine::cpu_description`), so the bench can tell
    whether the peer's figure was measured on the CPU it runs on."""
    info = {}
    try:
        with open("/proc/cpuinfo") as f:
            for line in f:
                if ":" in line:
                    key, value = (s.strip() for s in line.split(":", 1))
                    info.setdefault(key, value)
    except OSError:
        return platform.processor() or "unknown CPU"
    flags = set(info.get("flags", "").split())
    vector = "AVX-512" if "avx512f" in flags else "AVX2" if "avx2" in flags else "no AVX2"
    name = info.get("model name", "unknown")
    return f"{name} (family {info.get('cpu family', '?')}, model {info.get('model', '?')}; {vector})"


class KissGp(gpytorch.models.ExactGP):
    """An ExactGP whose covariance is KISS-GP's W K_G W^T on a fixed grid over [0, 1]^d."""

    def __init__(self, x, y, likelihood, d, grid):
        super().__init__(x, y, likelihood)
        self.mean_module = gpytorch.means.ZeroMean()
        base = gpytorch.kernels.RBFKernel()
        base.lengthscale = LENGTHSCALE
        self.covar_module = gpytorch.kernels.GridInterpolationKernel(
            base, grid_size=grid, num_dims=d, grid_bounds=[(0.0, 1.0)] * d
        )

    def forward(self, x):
        return gpytorch.distributions.MultivariateNormal(self.mean_module(x), self.covar_module(x))


def build(n, d, grid, generator, dtype):
    """The data and K~ as a lazy operator, with the seconds the build took."""
    x = torch.rand(n, d, generator=generator, dtype=dtype)
    y = torch.randn(n, generator=generator, dtype=dtype)
    likelihood = gpytorch.likelihoods.GaussianLikelihood().to(dtype)
    likelihood.noise = NOISE
    model = KissGp(x, y, likelihood, d, grid).to(dtype)
    model.train()
    likelihood.train()
    t0 = time.perf_counter()
    with torch.no_grad():
        op = likelihood(model(x)).lazy_covariance_matrix
    return x, op, time.perf_counter() - t0


def check(d, grid, generator, dtype):
    """Relative error of the operator's product against the dense RBF + noise at CHECK_N."""
    x, op, _ = build(CHECK_N, d, grid, generator, dtype)
    v = torch.randn(CHECK_N, 1, generator=generator, dtype=dtype)
    with torch.no_grad():
        sq = torch.cdist(x, x).pow(2)
        dense = torch.exp(-0.5 * sq / LENGTHSCALE**2) + NOISE * torch.eye(CHECK_N, dtype=dtype)
        want = dense @ v
        got = op @ v
    return float((got - want).norm() / want.norm())


def time_row(n, d, grid, reps, warmup, generator, dtype):
    _, op, build_seconds = build(n, d, grid, generator, dtype)
    times = []
    with torch.no_grad():
        for i in range(warmup + reps):
            v = torch.randn(n, 1, generator=generator, dtype=dtype)
            t0 = time.perf_counter()
            out = op @ v
            elapsed = time.perf_counter() - t0
            if not torch.isfinite(out).all():
                sys.exit(f"the product at n = {n}, d = {d} is not finite")
            if i >= warmup:
                times.append(elapsed)
    return build_seconds, times


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--reps", type=int, default=15)
    parser.add_argument("--warmup", type=int, default=2)
    parser.add_argument("--threads", type=int, default=2)
    parser.add_argument("--rows", nargs="+", choices=sorted(ROWS), default=sorted(ROWS))
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--out", help="write the results as JSON here")
    args = parser.parse_args()
    if args.reps < 1:
        parser.error("--reps must be at least 1")
    torch.set_num_threads(args.threads)
    dtype = torch.float64
    generator = torch.Generator().manual_seed(args.seed)
    header = {
        "script": "gp-bench/scripts/ski_gpytorch_matvec.py",
        "command": " ".join(shlex.quote(a) for a in [os.path.basename(sys.executable)] + sys.argv),
        "torch": torch.__version__,
        "gpytorch": gpytorch.__version__,
        "linear_operator": getattr(__import__("linear_operator"), "__version__", "unknown"),
        "python": platform.python_version(),
        "cpu": cpu_description(),
        "threads": torch.get_num_threads(),
        "date": time.strftime("%Y-%m-%d", time.gmtime()),
        "dtype": "float64",
    }
    for key, value in header.items():
        print(f"{key}: {value}")
    rows = []
    for name in args.rows:
        n, d, grid = ROWS[name]
        error = check(d, grid, generator, dtype)
        print(f"check n = {CHECK_N}, d = {d}, grid {grid}^{d}: relative error {error:.2e}")
        if not error < CHECK_TOLERANCE:
            sys.exit(f"the operator does not match the dense kernel (error {error:.2e})")
        build_seconds, times = time_row(n, d, grid, args.reps, args.warmup, generator, dtype)
        median = statistics.median(times)
        print(
            f"n = {n}, d = {d}, grid {grid}^{d}: build {build_seconds * 1e3:.1f} ms; "
            f"product median {median * 1e3:.1f} ms, min {min(times) * 1e3:.1f} ms, "
            f"max {max(times) * 1e3:.1f} ms ({len(times)} products)"
        )
        rows.append(
            {
                "n": n,
                "d": d,
                "grid": grid,
                "check_relative_error": error,
                "build_seconds": build_seconds,
                "product_seconds": times,
                "product_median_seconds": median,
            }
        )
    if args.out:
        os.makedirs(os.path.dirname(os.path.abspath(args.out)), exist_ok=True)
        with open(args.out, "w") as f:
            json.dump({**header, "rows": rows}, f, indent=1)
            f.write("\n")
        print(f"wrote {args.out}")


if __name__ == "__main__":
    main()
