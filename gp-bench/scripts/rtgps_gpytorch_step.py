#!/usr/bin/env python3
"""Time one GPyTorch CG training step: the peer of gpscale's RR-CG step (spec rtgps.md §5.2).

What is timed: one Adam step (zero_grad, forward, -mll, backward, optimizer.step) of an
ExactGP with ZeroMean, ScaleKernel(RBFKernel(ard_num_dims=d)) and GaussianLikelihood under
ExactMarginalLogLikelihood, with the settings of the paper's CG baseline:

    max_cholesky_size(0)                   -> CG/Lanczos, never Cholesky
    cg_tolerance(1e-8)                     -> CG never stops early (checked, see below)
    max_cg_iterations(100)                 -> J = 100
    max_lanczos_quadrature_iterations(100) -> log-det Lanczos depth 100
    num_trace_samples(10)                  -> 10 probes
    max_preconditioner_size(5)             -> rank-5 pivoted Cholesky preconditioner
    min_preconditioning_size(2000)         -> GPyTorch's default; n = 9600 is above it,
                                              so the preconditioner is used (checked)

Hyper-parameters start at GPyTorch's defaults (raw = 0). The script reports the CG iterations
each step ran (from the NumericalWarning linear_cg emits when it stops without reaching the
tolerance, which names the count; with tol 1e-8 that is every solve) and whether the
preconditioner was built.

Data: by default the training part of pol (PolTele) preprocessed as gpscale's
`papers::rtgps::data` does (drop columns with variance <= 1e-10, seeded shuffle, scale inputs
to [-1, 1] with min/max of all rows, standardise y with all rows, train = first floor(0.64 n)
rows = 9600 x 26). The file is `<data-dir>/uci/pol/data.csv.gz`: gzip CSV, no header, inputs
then the target in the last column (see the data directory's README). The shuffle uses
torch.randperm, so the rows differ from gpscale's ChaCha8 shuffle; the timing does not depend
on which rows. `--data random` uses uniform inputs in [-1, 1] and N(0, 1) targets of the same
shape instead (no data directory needed).

Install (CPU; a virtual environment, not the system Python):

    python3 -m venv /work/venv-peer
    /work/venv-peer/bin/pip install torch gpytorch

(PyPI's Linux torch wheel pulls the CUDA runtime packages as dependencies, several GB; only
the CPU is used here. A CPU-only wheel exists only on PyTorch's own index.)

Run (from the repository root; nothing in CI or the README needs this):

    GP_DATA_DIR=/path/to/shared/datasets \
        /work/venv-peer/bin/python gp-bench/scripts/rtgps_gpytorch_step.py \
        --dtype float64 float32 --steps 5 --warmup 1

Options: --n (training rows, default 9600), --data {pol,random}, --data-dir (default
$GP_DATA_DIR), --threads (torch.set_num_threads; default torch's choice), --seed.
The output names the torch and gpytorch versions, the thread count, the command line, every
step's wall time and process CPU time (user + system, all threads), and the medians over the
timed steps. On a machine shared with other work the wall time grows with the load; the CPU
time divided by the thread count roughly estimates the wall time the step would take alone
(only roughly: contention for memory bandwidth inflates the CPU time too, and so do OpenMP
threads spinning while they wait).

Measured on the project's 2-core machine (torch 2.15.0+cu132 from PyPI on the CPU, gpytorch
1.15.2, linear_operator 0.6.1, Python 3.11.7, 2 torch threads, pol 9600 x 26; every solve ran
100 CG iterations and the preconditioner was built), shared with other builds at load average
3-5, three runs of `--dtype float64 float32 --steps 5 --warmup 1`:

    float64: medians 34.9, 74.0, 30.4 s wall per step; the least-loaded steps 23.9-27.0 s wall
             (46-50 s CPU, i.e. ~25 s per thread)
    float32: medians 40.0, 43.7, 37.8 s wall per step; fastest 25.4 s; ~20.5 s CPU per thread

So a step takes roughly 24-27 s in float64 and 20-25 s in float32 on this machine alone; the
profile is dominated by aten::mm (the 100 products of the dense 9600 x 9600 kernel matrix with
the 11 right-hand sides), then the elementwise kernel and its backward.
"""

import argparse
import gzip
import math
import os
import platform
import re
import shlex
import statistics
import sys
import time
import warnings

# torch 2.15 warns at gpytorch's import that torch.jit.script is deprecated; not our concern.
warnings.filterwarnings("ignore", category=FutureWarning, module="torch.jit")

import gpytorch  # noqa: E402
import linear_operator  # noqa: E402
import torch  # noqa: E402
from linear_operator.operators import AddedDiagLinearOperator  # noqa: E402

CG_ITERS = 100
LANCZOS_ITERS = 100
PROBES = 10
PRECOND_RANK = 5
MIN_PRECOND_SIZE = 2000
CG_TOLERANCE = 1e-8
VARIANCE_FLOOR = 1e-10
LEARNING_RATE = 0.01


def load_pol(data_dir, seed):
    """All rows of pol, preprocessed as gpscale's rtgps data layer; returns (x, y) float64."""
    path = os.path.join(data_dir, "uci", "pol", "data.csv.gz")
    with gzip.open(path, "rt") as f:
        rows = [[float(v) for v in line.split(",")] for line in f if line.strip()]
    data = torch.tensor(rows, dtype=torch.float64)
    x, y = data[:, :-1], data[:, -1]
    x = x[:, x.var(dim=0) > VARIANCE_FLOOR]
    gen = torch.Generator().manual_seed(seed)
    perm = torch.randperm(x.shape[0], generator=gen)
    x, y = x[perm], y[perm]
    lo, hi = x.min(0).values, x.max(0).values
    x = 2.0 * (x - lo) / (hi - lo) - 1.0
    y = (y - y.mean()) / y.std()
    return x, y


def training_data(args):
    """(train_x, train_y) in float64 and a label saying where they came from."""
    if args.data == "random":
        gen = torch.Generator().manual_seed(args.seed)
        x = 2.0 * torch.rand(args.n, 26, generator=gen, dtype=torch.float64) - 1.0
        y = torch.randn(args.n, generator=gen, dtype=torch.float64)
        return x, y, f"random: x ~ U[-1,1]^26, y ~ N(0,1), {args.n} x 26 (seed {args.seed})"
    if not args.data_dir:
        sys.exit("pol needs --data-dir or GP_DATA_DIR (or use --data random)")
    x, y = load_pol(args.data_dir, args.seed)
    total = x.shape[0]
    train_n = math.floor(0.64 * total)
    if args.n > train_n:
        sys.exit(f"--n {args.n} exceeds pol's {train_n} training rows")
    label = (
        f"pol: {total} x {x.shape[1]} after dropping constant columns, "
        f"training rows = first {args.n} of floor(0.64 n) = {train_n} (torch.randperm seed {args.seed})"
    )
    return x[: args.n], y[: args.n], label


class ExactGPModel(gpytorch.models.ExactGP):
    """Zero mean, ScaleKernel(RBF with one lengthscale per input), as the reference code."""

    def __init__(self, train_x, train_y, likelihood):
        super().__init__(train_x, train_y, likelihood)
        self.mean_module = gpytorch.means.ZeroMean()
        self.covar_module = gpytorch.kernels.ScaleKernel(
            gpytorch.kernels.RBFKernel(ard_num_dims=train_x.shape[-1])
        )

    def forward(self, x):
        return gpytorch.distributions.MultivariateNormal(self.mean_module(x), self.covar_module(x))


PRECOND_LOG = []
_original_preconditioner = AddedDiagLinearOperator._preconditioner


def _recording_preconditioner(self):
    out = _original_preconditioner(self)
    PRECOND_LOG.append(out[0] is not None)
    return out


AddedDiagLinearOperator._preconditioner = _recording_preconditioner


def settings():
    """The CG baseline's settings as one context manager stack."""
    return [
        gpytorch.settings.max_cholesky_size(0),
        gpytorch.settings.cg_tolerance(CG_TOLERANCE),
        gpytorch.settings.max_cg_iterations(CG_ITERS),
        gpytorch.settings.max_lanczos_quadrature_iterations(LANCZOS_ITERS),
        gpytorch.settings.num_trace_samples(PROBES),
        gpytorch.settings.max_preconditioner_size(PRECOND_RANK),
        gpytorch.settings.min_preconditioning_size(MIN_PRECOND_SIZE),
    ]


def one_step(model, likelihood, mll, optimizer, x, y):
    """One timed training step: (wall s, CPU s, CG iteration counts, preconditioner used, loss)."""
    PRECOND_LOG.clear()
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        ctxs = settings()
        for c in ctxs:
            c.__enter__()
        try:
            t0, c0 = time.perf_counter(), time.process_time()
            optimizer.zero_grad()
            loss = -mll(model(x), y)
            loss.backward()
            optimizer.step()
            dt, cpu = time.perf_counter() - t0, time.process_time() - c0
        finally:
            for c in reversed(ctxs):
                c.__exit__(None, None, None)
    iters = []
    for w in caught:
        m = re.search(r"CG terminated in (\d+) iterations", str(w.message))
        if m:
            iters.append(int(m.group(1)))
    return dt, cpu, iters, any(PRECOND_LOG), float(loss.detach())


def time_dtype(dtype_name, x64, y64, args):
    dtype = {"float64": torch.float64, "float32": torch.float32}[dtype_name]
    x, y = x64.to(dtype), y64.to(dtype)
    likelihood = gpytorch.likelihoods.GaussianLikelihood().to(dtype)
    model = ExactGPModel(x, y, likelihood).to(dtype)
    model.train()
    likelihood.train()
    mll = gpytorch.mlls.ExactMarginalLogLikelihood(likelihood, model)
    optimizer = torch.optim.Adam(model.parameters(), lr=LEARNING_RATE)
    times, cpus = [], []
    for step in range(args.warmup + args.steps):
        dt, cpu, iters, precond, loss = one_step(model, likelihood, mll, optimizer, x, y)
        kind = "warm-up" if step < args.warmup else "timed"
        cg = ", ".join(str(i) for i in iters) if iters else "none reported (stopped at tolerance?)"
        print(
            f"  {dtype_name} step {step} ({kind}): {dt:.3f} s wall, {cpu:.3f} s CPU, loss/n {loss:.5f}, "
            f"CG iterations per solve: {cg}, preconditioner used: {precond}",
            flush=True,
        )
        if step >= args.warmup:
            times.append(dt)
            cpus.append(cpu)
    med = statistics.median(times)
    med_cpu = statistics.median(cpus)
    print(f"{dtype_name}: median {med:.3f} s wall per step over {len(times)} steps "
          f"(min {min(times):.3f}, max {max(times):.3f}); median CPU {med_cpu:.3f} s "
          f"= {med_cpu / torch.get_num_threads():.3f} s per thread", flush=True)
    return med


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--n", type=int, default=9600, help="training rows (default 9600)")
    parser.add_argument("--data", choices=["pol", "random"], default="pol")
    parser.add_argument("--data-dir", default=os.environ.get("GP_DATA_DIR"))
    parser.add_argument("--dtype", nargs="+", choices=["float64", "float32"],
                        default=["float64", "float32"])
    parser.add_argument("--steps", type=int, default=5, help="timed steps (default 5)")
    parser.add_argument("--warmup", type=int, default=1, help="untimed steps first (default 1)")
    parser.add_argument("--threads", type=int, default=None, help="torch.set_num_threads")
    parser.add_argument("--seed", type=int, default=10)
    args = parser.parse_args()
    if args.threads is not None:
        torch.set_num_threads(args.threads)
    torch.manual_seed(args.seed)

    print("command:", " ".join(shlex.quote(a) for a in [sys.executable] + sys.argv))
    print(f"python {platform.python_version()}, torch {torch.__version__}, "
          f"gpytorch {gpytorch.__version__}, linear_operator {linear_operator.__version__}")
    print(f"machine: {platform.machine()}, os.cpu_count() = {os.cpu_count()}, "
          f"torch threads = {torch.get_num_threads()}, interop threads = {torch.get_num_interop_threads()}")
    print(f"settings: max_cholesky_size 0, cg_tolerance {CG_TOLERANCE}, max_cg_iterations {CG_ITERS}, "
          f"max_lanczos_quadrature_iterations {LANCZOS_ITERS}, num_trace_samples {PROBES}, "
          f"max_preconditioner_size {PRECOND_RANK}, min_preconditioning_size {MIN_PRECOND_SIZE}, "
          f"Adam lr {LEARNING_RATE}")
    x, y, label = training_data(args)
    print(f"data: {label}; timed on {x.shape[0]} x {x.shape[1]}")
    results = {name: time_dtype(name, x, y, args) for name in args.dtype}
    print("summary: " + ", ".join(f"{k} {v:.3f} s/step" for k, v in results.items()))


if __name__ == "__main__":
    main()
