"""Converts ADBench's data files (microsoft/ADBench, data/, MIT licence:
LICENSE.ADBench.txt) into the JSON inputs GradBench's evals send, after
GradBench's readers (python/gradbench/gradbench/evals/{ht,lstm}/io.py and
ba/run.py). Written for this repository; run it to regenerate the *.json
files here from a copy of ADBench's data:

    python3 adbench_to_gradbench.py ADBENCH_DATA_DIR
"""
import json
import os
import sys


def floats(xs):
    return [float(x) for x in xs]


def hand_model(path):
    triangles = [[int(v) for v in line.split(":")] for line in open(os.path.join(path, "triangles.txt")) if line.strip()]
    bones = [line.strip().split(":") for line in open(os.path.join(path, "bones.txt")) if line.strip()]
    names = [b[0] for b in bones]
    parents = [int(b[1]) for b in bones]
    rel = [[floats(b[2 + 4 * r: 6 + 4 * r]) for r in range(4)] for b in bones]
    inv = [[floats(b[18 + 4 * r: 22 + 4 * r]) for r in range(4)] for b in bones]
    positions, weights = [], []
    for line in open(os.path.join(path, "vertices.txt")):
        if not line.strip():
            continue
        atoms = line.split(":")
        positions.append(floats(atoms[:3]) + [1.0])
        w = [0.0] * len(bones)
        for i in range(int(atoms[8])):
            w[int(atoms[9 + 2 * i])] = float(atoms[10 + 2 * i])
        weights.append(w)
    return {
        "bone_count": len(bones), "bone_names": names, "parents": parents,
        "base_relatives": rel, "inverse_base_absolutes": inv,
        "base_positions": positions, "weights": weights,
        "triangles": triangles, "is_mirrored": False,
    }


def hand(model_dir, fn, complicated):
    lines = open(fn).read().split("\n")
    npts, ntheta = map(int, lines[0].split())
    rows = [lines[1 + i].split() for i in range(npts)]
    at = 1 + npts
    us = []
    if complicated:
        us = [floats(lines[at + i].split()) for i in range(npts)]
        at += npts
    theta = [float(lines[at + i]) for i in range(ntheta)]
    return {
        "theta": theta,
        "data": {"model": hand_model(model_dir), "correspondences": [int(r[0]) for r in rows],
                 "points": [floats(r[1:]) for r in rows]},
        "us": us,
    }


def lstm(fn):
    lines = open(fn).read().split("\n")
    l, c, b = map(int, lines[0].split())
    rows = [floats(x.split()) for x in lines[1:] if x.strip()]
    return {"main_params": rows[:2 * l], "extra_params": rows[2 * l:2 * l + 3],
            "state": rows[2 * l + 3:4 * l + 3], "sequence": rows[4 * l + 3:4 * l + 3 + c]}


def ba(fn):
    lines = open(fn).read().split("\n")
    n, m, p = map(int, lines[0].split())
    return {"n": n, "m": m, "p": p, "cam": floats(lines[1].split()), "x": floats(lines[2].split()),
            "w": float(lines[3]), "feat": floats(lines[4].split())}


def main(root):
    out = os.path.dirname(os.path.abspath(__file__))
    def write(name, value):
        with open(os.path.join(out, name), "w") as f:
            json.dump(value, f)
    write("ht_test.json", hand(os.path.join(root, "hand/model"), os.path.join(root, "hand/test.txt"), False))
    write("ht_complicated.json", hand(os.path.join(root, "hand/model"), os.path.join(root, "hand/hand_complicated.txt"), True))
    write("lstm_l2_c1024.json", lstm(os.path.join(root, "lstm/lstm_l2_c1024.txt")))
    write("ba_test.json", ba(os.path.join(root, "ba/test.txt")))


if __name__ == "__main__":
    main(sys.argv[1])
