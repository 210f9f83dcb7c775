"""Benchmarks of the Python package (reported, not asserted; docs/python.md
has the figures):

1. calling overhead: a scalar-in, scalar-out function called from Python,
   and the same compiled call made from Rust;
2. the value and gradient of GMM (fixtures/gmm, d = 10, K = 25,
   n = 10,000) with respect to alphas, means and icf, from Python and the
   same call from Rust through crates/adrev.

The Rust figure is `Function._native.time_in_rust`: the very compiled
request of the Python function, called in a loop from Rust on inputs
converted once, with no conversion back. The ratio is therefore exactly
what crossing into Python costs.

    python python/bench/bench.py [--reps N]
"""

import argparse
import math
import pathlib
import statistics
import time

import numpy as np

import adrev

REPO = pathlib.Path(__file__).resolve().parents[2]


def python_seconds(call, reps):
    out = []
    for _ in range(reps):
        start = time.perf_counter()
        call()
        out.append(time.perf_counter() - start)
    return out


def batched(call, calls, batches):
    """Seconds per call, one figure per batch of `calls` calls."""
    out = []
    for _ in range(batches):
        start = time.perf_counter()
        for _ in range(calls):
            call()
        out.append((time.perf_counter() - start) / calls)
    return out


def gmm_inputs(d=10, k=25, n=10_000, seed=0):
    rng = np.random.default_rng(seed)
    m = 0
    return dict(
        alphas=rng.normal(size=k),
        means=rng.random(size=(k, d)),
        icf=rng.random(size=(k, d + d * (d - 1) // 2)),
        x=rng.random(size=(n, d)),
        wishart_gamma=1.0,
        wishart_m=float(m),
        lgamma_sum=sum(math.lgamma((d + m + 1) / 2 + (1 - j) / 2) for j in range(1, d + 1)),
    )


def fmt(seconds):
    if seconds < 1e-3:
        return f"{seconds * 1e6:.1f} µs"
    return f"{seconds * 1e3:.2f} ms"


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--reps", type=int, default=20, help="timed GMM calls per side")
    args = ap.parse_args()
    rows = []

    tiny = adrev.compile("def sq (x : R) : R = x * x")
    for backend in ["c", "eval"]:
        f = tiny.function(backend=backend)
        f(x=1.5)
        py = statistics.median(batched(lambda: f(x=1.5), 2000, 5))
        rust = statistics.median(f._native.time_in_rust("value", None, {"x": 1.5}, None, None, "auto", 10_000))
        rows.append((f"`sq` value, {backend}", py, rust))
        f.value_and_grad(x=1.5)
        py = statistics.median(batched(lambda: f.value_and_grad(x=1.5), 2000, 5))
        rust = statistics.median(
            f._native.time_in_rust("value-and-grad", None, {"x": 1.5}, None, None, "auto", 10_000)
        )
        rows.append((f"`sq` value and gradient, {backend}", py, rust))

    inputs = gmm_inputs()
    wrt = ["alphas", "means", "icf"]
    gmm = adrev.load(REPO / "fixtures" / "gmm" / "program.ad").function("gmm", backend="c")
    start = time.perf_counter()
    gmm.value_and_grad(wrt=wrt, **inputs)
    compile_seconds = time.perf_counter() - start
    py = statistics.median(python_seconds(lambda: gmm.value_and_grad(wrt=wrt, **inputs), args.reps))
    rust = statistics.median(
        gmm._native.time_in_rust("value-and-grad", wrt, inputs, None, None, "auto", args.reps)
    )
    rows.append(("GMM value and gradient (d = 10, K = 25, n = 10,000), c", py, rust))

    print("| call | from Python | from Rust | Python / Rust |")
    print("| --- | ---: | ---: | ---: |")
    for name, py, rust in rows:
        print(f"| {name} | {fmt(py)} | {fmt(rust)} | {py / rust:.2f} |")
    print(f"\nGMM: the first call (pipeline, C emitted and built) took {compile_seconds:.2f} s.")


if __name__ == "__main__":
    main()
