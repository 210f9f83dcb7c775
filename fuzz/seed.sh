#!/usr/bin/env bash
# Seeds of every fuzz target from the fixtures, into fuzz/seeds/ (not kept
# in git: it is derived). Files over 64 KB (the targets' input limit) are
# left out.
set -euo pipefail
cd "$(dirname "$0")"
root=..
out=seeds
rm -rf "$out"
mkdir -p "$out"/{program_text,ron_source,ron_target,ron_source_unf,ron_target_unf,value_literal,json_value,npy_file,gradbench_protocol}
small() { [ "$(stat -c %s "$1")" -le 65536 ]; }
put() { if small "$1"; then cp "$1" "$2"; fi; }
for d in "$root"/fixtures/*/; do
  n=$(basename "$d")
  [ "$n" = err ] && continue
  [ -f "$d/program.ad" ] && put "$d/program.ad" "$out/program_text/$n.ad"
  [ -f "$d/10.source.ron" ] && put "$d/10.source.ron" "$out/ron_source/$n.ron"
  [ -f "$d/20.source-unf.ron" ] && put "$d/20.source-unf.ron" "$out/ron_source_unf/$n.ron"
  [ -f "$d/30.target-unf.ron" ] && put "$d/30.target-unf.ron" "$out/ron_target_unf/$n.ron"
  [ -f "$d/40.target.ron" ] && put "$d/40.target.ron" "$out/ron_target/$n.ron"
  [ -f "$d/50.opt.ron" ] && put "$d/50.opt.ron" "$out/ron_target/$n.opt.ron"
done
for f in "$root"/fixtures/err/*/*/program.ad; do
  n=$(echo "$f" | awk -F/ '{print $(NF-2) "_" $(NF-1)}')
  cp "$f" "$out/program_text/err_$n.ad"
done
for f in "$root"/fixtures/err/*/*/input.ron; do
  n=$(echo "$f" | awk -F/ '{print $(NF-1)}')
  for t in ron_source ron_target ron_source_unf ron_target_unf; do
    cp "$f" "$out/$t/err_$n.ron"
  done
done
v=$out/value_literal
printf 'R\n1.5' > "$v/real"
printf 'Int\n-3' > "$v/int"
printf 'Bool\ntrue' > "$v/bool"
printf '[n]R\n[1, 2.5, -0, 1e-300]' > "$v/vector"
printf '[n][m]R\n[[1, 2], [3, 4]]' > "$v/matrix"
printf '(R, [n]R)\n(0.5, [1, inf, nan])' > "$v/tuple"
printf '[n](R, R)\n[(1, 2), (3, -4e21)]' > "$v/array_of_tuples"
printf '[3][2]R\n[[1, 2], [3, 4], [5, 6]]' > "$v/fixed_sizes"
printf '((R, Int), Bool)\n((1, 2), false)' > "$v/nested"
j=$out/json_value
mkdir -p "$j"
printf 'R\n1.5' > "$j/real"
printf '[n]R\n[1, 2.5, -0.0, 1e-300]' > "$j/vector"
printf '[n][m]R\n[[1, 2], [3, 4]]' > "$j/matrix"
printf '(R, [n]R)\n[0.5, [1, 2]]' > "$j/tuple"
printf '[n](R, Int)\n[[1.5, 2], [3, -4]]' > "$j/array_of_tuples"
printf 'Bool\ntrue' > "$j/bool"
printf '[n]Int\n[1, -2, 9007199254740993]' > "$j/ints"
# .npy and .npz seeds, written with Python's standard library only.
python3 - "$out/npy_file" <<'PY'
import struct, sys, zipfile, io, os
out = sys.argv[1]
os.makedirs(out, exist_ok=True)
def npy(descr, shape, data, fortran=False, version=1):
    d = "{'descr': '%s', 'fortran_order': %s, 'shape': %s, }" % (
        descr, "True" if fortran else "False", shape)
    head = 10 if version == 1 else 12
    pad = (64 - (head + len(d) + 1) % 64) % 64
    d = d + " " * pad + "\n"
    size = struct.pack("<H", len(d)) if version == 1 else struct.pack("<I", len(d))
    return b"\x93NUMPY" + bytes([version, 0]) + size + d.encode() + data
seeds = {
    "f8_vector.npy": npy("<f8", "(3,)", struct.pack("<3d", 1.0, -2.5, 1e-300)),
    "f8_matrix.npy": npy("<f8", "(2, 2)", struct.pack("<4d", 1, 2, 3, 4)),
    "f8_fortran.npy": npy("<f8", "(2, 3)", struct.pack("<6d", *range(6)), fortran=True),
    "f8_scalar.npy": npy("<f8", "()", struct.pack("<d", 0.5)),
    "f8_big_endian.npy": npy(">f8", "(2,)", struct.pack(">2d", 1.5, 2.5)),
    "i8_vector.npy": npy("<i8", "(2,)", struct.pack("<2q", -1, 7)),
    "f4_vector.npy": npy("<f4", "(2,)", struct.pack("<2f", 1.5, 2.5)),
    "bool.npy": npy("|b1", "(3,)", bytes([1, 0, 1])),
    "empty.npy": npy("<f8", "(0,)", b""),
    "version2.npy": npy("<f8", "(1,)", struct.pack("<d", 3.0), version=2),
}
for name, data in seeds.items():
    with open(os.path.join(out, name), "wb") as f:
        f.write(data)
for name, mode in (("stored.npz", zipfile.ZIP_STORED), ("deflated.npz", zipfile.ZIP_DEFLATED)):
    buf = io.BytesIO()
    with zipfile.ZipFile(buf, "w", mode) as z:
        z.writestr("x.npy", seeds["f8_vector.npy"])
        z.writestr("A.npy", seeds["f8_matrix.npy"])
    with open(os.path.join(out, name), "wb") as f:
        f.write(buf.getvalue())
PY
# GradBench sessions: a start, a define and evaluates of each eval as the
# evals send them (crates/gradbench/tests/evals.rs has the same inputs),
# then an analysis; the test data under 64 KB verbatim.
python3 - "$out/gradbench_protocol" "$root/crates/gradbench/tests/data" <<'PY'
import json, os, sys
out, data = sys.argv[1], sys.argv[2]
os.makedirs(out, exist_ok=True)
runs = {"min_runs": 1, "min_seconds": 0}
def session(module, calls):
    lines = [{"id": 0, "kind": "start", "eval": module, "config": None},
             {"id": 1, "kind": "define", "module": module}]
    for i, (function, value) in enumerate(calls):
        lines.append({"id": 2 + 2 * i, "kind": "evaluate", "module": module,
                      "function": function, "input": value, "description": "seed"})
        lines.append({"id": 3 + 2 * i, "kind": "analysis", "of": 2 + 2 * i, "valid": True})
    return "\n".join(json.dumps(l) for l in lines) + "\n"
def with_runs(d):
    return {**d, **runs}
ba = json.load(open(os.path.join(data, "ba_test.json")))
sessions = {
    "hello": [("square", 3.0), ("double", 9.0)],
    "lse": [("primal", with_runs({"x": [1, 2, 3]})), ("gradient", with_runs({"x": [1, 2, 3]}))],
    "llsq": [("primal", with_runs({"x": [0.5, -1], "n": 33})), ("gradient", with_runs({"x": [0.5, -1], "n": 33}))],
    "ode": [("primal", with_runs({"x": [1, 2], "s": 3})), ("gradient", with_runs({"x": [1, 2], "s": 3}))],
    "det": [("primal", with_runs({"A": [1, 2, 3, 4], "ell": 2})), ("gradient", with_runs({"A": [1, 2, 3, 4], "ell": 2}))],
    "gmm": [(f, with_runs({"d": 2, "k": 2, "n": 1, "x": [[0.1, 0.2]], "m": 0, "gamma": 1.0,
                           "mu": [[0, 1], [1, 0]], "q": [[0.1, 0.2], [0.3, 0.4]], "l": [[0.5], [0.6]],
                           "alpha": [0.1, 0.2]})) for f in ("objective", "jacobian")],
    "kmeans": [(f, with_runs({"points": [[1, 2], [3, 4], [5, 6]], "centroids": [[1, 1], [4, 4]]})) for f in ("cost", "dir")],
    "ba": [(f, with_runs(ba)) for f in ("objective", "jacobian")],
    "saddle": [(f, with_runs({"start": [1.0, 1.0]})) for f in ("ff", "fr", "rf", "rr")],
    "particle": [(f, with_runs({"w": 0.0})) for f in ("ff", "fr", "rf", "rr")],
}
for module, calls in sessions.items():
    with open(os.path.join(out, module + ".jsonl"), "w") as f:
        f.write(session(module, calls))
bad = ['not json', '[1, 2]', '{"kind": "define", "module": "lse"}', '{"id": 7, "kind": "fly"}',
       '{"id": 8, "kind": "evaluate", "module": "lse", "function": "primal", "input": {"x": "one"}}']
with open(os.path.join(out, "bad.jsonl"), "w") as f:
    f.write("\n".join(bad) + "\n")
PY
