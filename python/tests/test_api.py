"""The package's API: compile once, names and shapes of results, stages."""

import numpy as np

import adrev
from conftest import FIXTURES, REPO, assert_close

DOT = "def dot_ (A : [n]R) (B : [n]R) : R = reduce (+) 0 (map2 (*) A B)"


def test_a_function_compiles_each_request_once(backend):
    f = adrev.compile(DOT).function(backend=backend)
    assert f.compiled == 0
    rng = np.random.default_rng(0)
    for _ in range(3):
        A, B = rng.normal(size=5), rng.normal(size=5)
        value, grads = f.value_and_grad(A=A, B=B)
        assert_close(value, float(A @ B))
        assert_close(grads["A"], B)
        assert_close(grads["B"], A)
    assert f.compiled == 1
    f.value_and_grad(A=A, B=B, wrt=["B"])
    f(A=A, B=B)
    assert f.compiled == 3
    f(A=A[:2], B=B[:2])
    assert f.compiled == 3


def test_wrt_as_a_string_gives_the_one_gradient():
    f = adrev.compile(DOT).function(backend="eval")
    A, B = np.array([1.0, 2.0]), np.array([3.0, 4.0])
    assert_close(f.grad(A=A, B=B, wrt="A"), B)
    grads = f.grad(A=A, B=B, wrt=["B", "A"])
    assert list(grads) == ["B", "A"]


def test_inputs_as_one_dict_allow_any_parameter_name():
    text = "def g (wrt : R) (mode : [n]R) : R = wrt * sum mode"
    f = adrev.compile(text).function(backend="eval")
    inputs = {"wrt": 2.0, "mode": np.array([1.0, 2.0])}
    assert f(inputs) == 6.0
    value, grads = f.value_and_grad(inputs, wrt=["wrt"])
    assert value == 6.0 and grads == {"wrt": 3.0}


def test_result_types_follow_the_program():
    text = """
def pieces (x : [n]R) (k : Int) : (R, Int, Bool, [n][2]R, [n](R, Int)) =
  (sum x, k * 2, k > 1, map (fun a -> [a, a * 2]) x, map (fun a -> (a, k)) x)
"""
    f = adrev.compile(text).function(backend="eval")
    s, k2, big, pairs, tuples = f(x=np.array([1.0, 2.0]), k=3)
    assert (s, k2, big) == (3.0, 6, True)
    assert type(k2) is int and type(big) is bool
    assert_close(pairs, np.array([[1.0, 2.0], [2.0, 4.0]]))
    assert tuples == [(1.0, 3), (2.0, 3)]
    empty = f(x=np.zeros(0), k=0)[3]
    assert empty.shape == (0, 2) and empty.dtype == np.float64


def test_integer_arrays_in_and_out():
    f = adrev.compile("def twice (v : [n]Int) : [n]Int = map (fun a -> a * 2) v").function(backend="eval")
    out = f(v=np.array([1, -2, 3], dtype=np.int32))
    assert out.dtype == np.int64 and out.tolist() == [2, -4, 6]


def test_non_contiguous_arrays_are_read_in_logical_order(backend):
    f = adrev.compile("def first_col (A : [n][m]R) : [n]R = map (fun row -> row[0]) A").function(backend=backend)
    A = np.arange(12.0).reshape(3, 4)
    assert_close(f(A=A[:, 1:]), A[:, 1])
    assert_close(f(A=A.T), A.T[:, 0])


def test_description_of_a_function():
    prog = adrev.load(FIXTURES / "gmm" / "program.ad")
    assert prog.definitions[-1] == "gmm"
    f = prog.function("gmm", backend="eval")
    assert f.name == "gmm" and f.backend == "eval"
    assert f.params[0] == ("alphas", "[k]R")
    assert f.result == "R"
    assert "gmm" in repr(f)


def test_stages_are_every_boundary_as_text_and_ron(monkeypatch):
    monkeypatch.chdir(REPO)  # the file name in the RON is the path as given
    stages = adrev.load("fixtures/dot/program.ad").stages()
    assert [s.stage for s in stages] == ["parse", "unf", "reverse", "unf-inverse", "optimize"]
    for s in stages:
        assert s.text.strip() and s.ron.lstrip().startswith("(")
        assert f'ir: "{s.ir}"' in s.ron
    # The checked-in fixture is the optimizer's output for this very program.
    assert stages[-1].ron.strip() == (FIXTURES / "dot" / "50.opt.ron").read_text().strip()


def test_threads_share_a_function(backend):
    from concurrent.futures import ThreadPoolExecutor

    f = adrev.compile(DOT).function(backend=backend)
    rng = np.random.default_rng(4)
    pairs = [(rng.normal(size=6), rng.normal(size=6)) for _ in range(16)]
    with ThreadPoolExecutor(max_workers=4) as pool:
        results = list(pool.map(lambda ab: f.value_and_grad(A=ab[0], B=ab[1]), pairs))
    for (A, B), (value, grads) in zip(pairs, results):
        assert_close(value, float(A @ B))
        assert_close(grads["A"], B)
    assert f.compiled == 1


LOOP = "def f (x : R) (A : [n]R) : R = ifold (fun (a, i) -> sin a * x + A[i]) x (length A)"


def test_checkpointed_loops_give_the_same_gradient_to_the_bit(backend):
    # √n checkpoints (docs/derivatives.md, "Checkpointing long loops"):
    # another way to run the same backward pass, so the same bits.
    prog = adrev.compile(LOOP)
    stored = prog.function(backend=backend)
    sqrt = prog.function(backend=backend, checkpoint="sqrt")
    rng = np.random.default_rng(1)
    for n in [0, 1, 17, 100]:
        A = rng.normal(size=n)
        v1, g1 = stored.value_and_grad(x=0.7, A=A)
        v2, g2 = sqrt.value_and_grad(x=0.7, A=A)
        assert v1 == v2
        assert g1["x"] == g2["x"]
        assert np.array_equal(g1["A"], g2["A"])


def test_an_unknown_checkpoint_scheme_is_an_input_error():
    prog = adrev.compile(LOOP)
    try:
        prog.function(backend="eval", checkpoint="binomial")
    except adrev.InputError as e:
        assert '"off", "sqrt"' in str(e) and '"binomial"' in str(e)
    else:
        raise AssertionError("checkpoint=\"binomial\" was accepted")
