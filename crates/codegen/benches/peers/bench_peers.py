"""Times JAX (jit) and PyTorch on the benchmark kernels, single thread.

Modelled on the peers' bench_jax.py / bench_torch.py (the project's
shared peers directory), but reading the input file of the generated C
driver (for each array: its length as int64, then its float64 values), so
that every tool of one run sees the same bytes. Run by `codegen::bench`.

    python bench_peers.py probe                      -> prints the tools importable here
    python bench_peers.py TOOL KERNEL INPUT REPS     -> primal_ns ..., grad_ns ..., primal_cpu_ns ...,
                                                        grad_cpu_ns ..., check V S A

The gradient call returns the value and the gradient with respect to every
array (like the generated `_grad` programs): jax.value_and_grad, and
PyTorch forward + backward.
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


def run_jax(kernel, arrays, reps):
    import jax
    jax.config.update("jax_enable_x64", True)
    import jax.numpy as jnp
    f = kernels_jax()[kernel]
    xs = [jnp.asarray(a) for a in arrays]
    argnums = tuple(range(len(xs)))
    primal = jax.jit(f)
    vg = jax.jit(jax.value_and_grad(f, argnums=argnums))
    tp = timed(lambda: primal(*xs).block_until_ready(), reps)
    tg = timed(lambda: jax.block_until_ready(vg(*xs)), reps)
    value, grads = vg(*xs)
    return tp, tg, float(value), [jax.device_get(g) for g in grads]


def run_torch(kernel, arrays, reps):
    import torch
    torch.set_num_threads(1)
    f = kernels_torch()[kernel]
    xs = [torch.from_numpy(a) for a in arrays]

    def primal():
        with torch.no_grad():
            return f(*xs)

    def grad():
        ys = [x.detach().requires_grad_(True) for x in xs]
        v = f(*ys)
        gs = torch.autograd.grad(v, ys)
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
    arrays = read_arrays(path)
    run = {"jax": run_jax, "torch": run_torch}[tool]
    tp, tg, value, grads = run(kernel, arrays, reps)
    g = np.concatenate([np.asarray(x, dtype=np.float64).ravel() for x in grads])
    print("primal_ns " + " ".join(str(t) for t in tp[0]))
    print("grad_ns " + " ".join(str(t) for t in tg[0]))
    print("primal_cpu_ns " + " ".join(str(t) for t in tp[1]))
    print("grad_cpu_ns " + " ".join(str(t) for t in tg[1]))
    print("check %.17g %.17g %.17g" % (value, g.sum(), np.abs(g).sum()))


if __name__ == "__main__":
    os.environ.setdefault("XLA_FLAGS", "--xla_cpu_multi_thread_eigen=false intra_op_parallelism_threads=1")
    main()
