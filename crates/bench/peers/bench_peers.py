"""Times JAX (jit) and PyTorch on the benchmark kernels, single thread.

Modelled on the peers' bench_jax.py / bench_torch.py (the project's
shared peers directory), but reading the input file of the generated C
driver (for each array: its length as int64, then its float64 values), so
that every tool of one run sees the same bytes. Run by `bench::kernels`, crates/bench.

    python bench_peers.py probe                      -> prints the tools importable here
    python bench_peers.py TOOL KERNEL INPUT REPS     -> primal_ns ..., grad_ns ..., primal_cpu_ns ...,
                                                        grad_cpu_ns ..., check V S A

The gradient call returns the value and the gradient with respect to every
array (like the generated `_grad` programs): jax.value_and_grad, and
PyTorch forward + backward. For `gmm` (the input file holds the seven
parameters of fixtures/gmm/program.ad in the driver's format: each
array's dims as int64, then its float64 values; scalars as float64) the
objective is written with the frameworks' array operations as ADBench's
JAX and PyTorch tools write it, and differentiated with respect to
alphas, means and icf, like the generated gradient.
"""
import os
import sys
import time


def probe():
    found = []
    for mod in ("jax", "torch"):
        try:
            __import__(mod)
            found.append(mod)
        except Exception:
            pass
    print(" ".join(found))


def read_arrays(path):
    import numpy as np
    raw = open(path, "rb").read()
    out, pos = [], 0
    while pos < len(raw):
        n = int(np.frombuffer(raw, dtype="<i8", count=1, offset=pos)[0])
        pos += 8
        out.append(np.frombuffer(raw, dtype="<f8", count=n, offset=pos).copy())
        pos += 8 * n
    return out


def read_gmm(path):
    """alphas [k], means [k][d], icf [k][t], x [n][d], then three scalars."""
    import numpy as np
    raw = open(path, "rb").read()
    pos = 0

    def dims(count):
        nonlocal pos
        v = [int(x) for x in np.frombuffer(raw, dtype="<i8", count=count, offset=pos)]
        pos += 8 * count
        return v

    def reals(shape):
        nonlocal pos
        size = int(np.prod(shape)) if shape else 1
        a = np.frombuffer(raw, dtype="<f8", count=size, offset=pos).copy()
        pos += 8 * size
        return a.reshape(shape)

    alphas = reals(dims(1))
    means = reals(dims(2))
    icf = reals(dims(2))
    x = reals(dims(2))
    scalars = reals([3])
    return [alphas, means, icf, x], [float(v) for v in scalars]


def gmm_ltri_index(d):
    """IDX[j][i] = 1 + position in icf[d:] of entry (row j, column i < j)
    (gmm.h stores the strict lower triangle column by column), 0 elsewhere."""
    import numpy as np
    idx = np.zeros((d, d), dtype=np.int64)
    pos = 1
    for i in range(d):
        for j in range(i + 1, d):
            idx[j, i] = pos
            pos += 1
    return idx


def gmm_objective(xp, lse, gather_rows, alphas, means, icf, x, scalars):
    """The value of fixtures/gmm/program.ad with array operations of `xp`."""
    import math
    gamma, wm, lgamma_sum = scalars
    k, d = means.shape
    n = x.shape[0]
    qd_log = icf[:, :d]
    qd = xp.exp(qd_log)
    sum_qs = qd_log.sum(1)
    lfull = xp.concatenate([xp.zeros((k, 1), dtype=icf.dtype), icf[:, d:]], 1)
    lmat = gather_rows(lfull, gmm_ltri_index(d))  # [k][d][d]
    xc = x[:, None, :] - means[None, :, :]  # [n][k][d]
    qxc = qd[None, :, :] * xc + xp.einsum("kji,nki->nkj", lmat, xc)
    sq = (qxc * qxc).sum(2)
    slse = lse(alphas[None, :] + sum_qs[None, :] - 0.5 * sq).sum()
    const = -n * d * 0.5 * math.log(2 * math.pi)
    c = (d + wm + 1) * d * (math.log(gamma) - 0.5 * math.log(2)) - (
        0.25 * d * (d - 1) * math.log(math.pi) + lgamma_sum)
    frob = (qd * qd).sum(1) + (icf[:, d:] * icf[:, d:]).sum(1)
    prior = (0.5 * gamma * gamma * frob - wm * sum_qs).sum() - k * c
    return const + slse - n * lse(alphas[None, :])[0] + prior


def timed(fn, reps):
    """Wall-clock and process CPU times of `reps` calls after an untimed one."""
    fn()  # the untimed call (compilation for JAX)
    wall, cpu = [], []
    for _ in range(reps):
        c0, t0 = time.process_time_ns(), time.perf_counter_ns()
        fn()
        wall.append(time.perf_counter_ns() - t0)
        cpu.append(time.process_time_ns() - c0)
    return wall, cpu


def kernels_jax():
    import jax.numpy as jnp
    return {
        "sum": lambda a: jnp.sum(a),
        "prod": lambda a: jnp.prod(a),
        "dot": lambda a, b: jnp.dot(a, b),
        "sinexp": lambda a: jnp.sum(jnp.sin(a) * jnp.exp(a)),
        "logsumexp": lambda a: jnp.log(jnp.sum(jnp.exp(a))),
    }


def kernels_torch():
    import torch
    return {
        "sum": lambda a: torch.sum(a),
        "prod": lambda a: torch.prod(a),
        "dot": lambda a, b: torch.dot(a, b),
        "sinexp": lambda a: torch.sum(torch.sin(a) * torch.exp(a)),
        "logsumexp": lambda a: torch.log(torch.sum(torch.exp(a))),
    }


def gmm_jax(scalars):
    import jax.numpy as jnp
    from jax.scipy.special import logsumexp

    def f(alphas, means, icf, x):
        return gmm_objective(jnp, lambda v: logsumexp(v, axis=-1),
                             lambda a, idx: a[:, idx], alphas, means, icf, x, scalars)
    return f


def gmm_torch(scalars):
    import torch

    def f(alphas, means, icf, x):
        return gmm_objective(torch, lambda v: torch.logsumexp(v, dim=-1),
                             lambda a, idx: a[:, torch.from_numpy(idx)], alphas, means, icf, x,
                             scalars)
    return f


def run_jax(kernel, arrays, reps, scalars=None):
    import jax
    jax.config.update("jax_enable_x64", True)
    import jax.numpy as jnp
    f = gmm_jax(scalars) if kernel == "gmm" else kernels_jax()[kernel]
    xs = [jnp.asarray(a) for a in arrays]
    # GMM: the gradient with respect to alphas, means and icf, not x.
    argnums = (0, 1, 2) if kernel == "gmm" else tuple(range(len(xs)))
    primal = jax.jit(f)
    vg = jax.jit(jax.value_and_grad(f, argnums=argnums))
    tp = timed(lambda: primal(*xs).block_until_ready(), reps)
    tg = timed(lambda: jax.block_until_ready(vg(*xs)), reps)
    value, grads = vg(*xs)
    return tp, tg, float(value), [jax.device_get(g) for g in grads]


def run_torch(kernel, arrays, reps, scalars=None):
    import torch
    torch.set_num_threads(1)
    f = gmm_torch(scalars) if kernel == "gmm" else kernels_torch()[kernel]
    xs = [torch.from_numpy(a) for a in arrays]
    # GMM: the gradient with respect to alphas, means and icf, not x.
    wrt = 3 if kernel == "gmm" else len(xs)

    def primal():
        with torch.no_grad():
            return f(*xs)

    def grad():
        ys = [x.detach().requires_grad_(i < wrt) for i, x in enumerate(xs)]
        v = f(*ys)
        gs = torch.autograd.grad(v, ys[:wrt])
        return v.detach(), gs

    tp = timed(primal, reps)
    tg = timed(grad, reps)
    value, grads = grad()
    return tp, tg, float(value), [g.numpy() for g in grads]


def main():
    if sys.argv[1:] == ["probe"]:
        probe()
        return
    tool, kernel, path, reps = sys.argv[1], sys.argv[2], sys.argv[3], int(sys.argv[4])
    import numpy as np
    scalars = None
    if kernel == "gmm":
        arrays, scalars = read_gmm(path)
    else:
        arrays = read_arrays(path)
    run = {"jax": run_jax, "torch": run_torch}[tool]
    tp, tg, value, grads = run(kernel, arrays, reps, scalars)
    g = np.concatenate([np.asarray(x, dtype=np.float64).ravel() for x in grads])
    print("primal_ns " + " ".join(str(t) for t in tp[0]))
    print("grad_ns " + " ".join(str(t) for t in tg[0]))
    print("primal_cpu_ns " + " ".join(str(t) for t in tp[1]))
    print("grad_cpu_ns " + " ".join(str(t) for t in tg[1]))
    print("check %.17g %.17g %.17g" % (value, g.sum(), np.abs(g).sum()))


if __name__ == "__main__":
    os.environ.setdefault("XLA_FLAGS", "--xla_cpu_multi_thread_eigen=false intra_op_parallelism_threads=1")
    main()
