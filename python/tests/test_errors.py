"""Wrong inputs, wrong programs and failing programs: each a Python
exception of the package with a message that says what and where, never a
crash of the interpreter."""

import numpy as np
import pytest

import adrev
from conftest import FIXTURES

DOT = "def dot_ (A : [n]R) (B : [n]R) : R = reduce (+) 0 (map2 (*) A B)"
PAIR = "def first (p : (R, R)) (k : Int) : R = p.1 * 2"
A = np.array([1.0, 2.0, 3.0, 4.0])


@pytest.fixture
def dot(backend):
    return adrev.compile(DOT).function(backend=backend)


def raises(cls, fn, *words, **kw):
    with pytest.raises(cls) as info:
        fn(**kw)
    for w in words:
        assert w in str(info.value), f"{w!r} not in: {info.value}"
    return info.value


def test_an_integer_array_for_reals_is_refused(dot):
    raises(adrev.InputError, dot, "`B`", "float64", "int64", "astype", A=A, B=np.arange(4))


def test_float32_is_refused(dot):
    raises(adrev.InputError, dot, "float32", A=A, B=A.astype(np.float32))


def test_a_list_is_refused_with_the_conversion_to_use(dot):
    raises(adrev.InputError, dot, "a list", "numpy.asarray", A=A, B=[1.0, 2.0, 3.0, 4.0])


def test_the_number_of_dimensions_is_checked(dot):
    raises(adrev.InputError, dot, "1 dimension", "(2, 2)", A=A, B=A.reshape(2, 2))


def test_sizes_are_checked_across_inputs(dot):
    raises(adrev.InputError, dot, "`B`", "n = 4", "`A`", "3 elements", A=A, B=A[:3])


def test_unknown_and_missing_names(dot):
    raises(adrev.InputError, dot, "no parameter `C`", "`A`, `B`", A=A, B=A, C=A)
    raises(adrev.InputError, dot, "no value for the parameter `B`", A=A)


def test_scalars_tuples_and_integers():
    f = adrev.compile(PAIR).function(backend="eval")
    assert f(p=(1.5, 0.0), k=3) == 3.0
    assert f(p=(1.5, 0.0), k=np.int32(3)) == 3.0
    raises(adrev.InputError, f, "`p`", "a tuple of 2", p=(1.5, 0.0, 1.0), k=1)
    raises(adrev.InputError, f, "`p`", "tuple", p=[1.5, 0.0], k=1)
    raises(adrev.InputError, f, "`p.1`", "a float", p=("x", 0.0), k=1)
    raises(adrev.InputError, f, "`k`", "an int", p=(1.5, 0.0), k=2.0)
    raises(adrev.InputError, f, "`k`", "an int", p=(1.5, 0.0), k=True)
    raises(adrev.InputError, f, "`p.2`", "a float", p=(1.5, True), k=1)
    raises(adrev.InputError, f, "does not fit", p=(1.5, 0.0), k=2**70)


@pytest.mark.parametrize("junk", [None, "text", {"a": 1}, object(), np.array(["a"]), lambda: 1])
def test_any_python_object_gives_an_input_error(dot, junk):
    raises(adrev.InputError, dot, "`B`", A=A, B=junk)


def test_input_errors_are_value_errors():
    assert issubclass(adrev.InputError, ValueError)
    assert issubclass(adrev.InputError, adrev.Error)


def test_wrong_wrt_and_options(dot):
    raises(adrev.InputError, dot.grad, "no parameter `Z`", A=A, B=A, wrt=["Z"])
    raises(adrev.InputError, dot.grad, "twice", A=A, B=A, wrt=["A", "A"])
    raises(adrev.InputError, dot.jacobian, "mode", A=A, B=A, mode="sideways")
    prog = adrev.compile(DOT)
    with pytest.raises(adrev.InputError, match="backend"):
        prog.function(backend="gpu")
    with pytest.raises(adrev.InputError, match="route"):
        prog.function(route="diagonal")


def test_vjp_checks_its_cotangent(dot):
    raises(adrev.InputError, lambda **kw: dot.vjp(A, **kw), "`cotangent`", "a float", A=A, B=A)


def test_a_syntax_error_carries_line_and_column():
    case = FIXTURES / "err" / "parse" / "missing_in"
    path = str(case / "program.ad")
    with pytest.raises(adrev.CompileError) as info:
        adrev.load(path)
    e = info.value
    assert (e.file, e.line, e.column) == (path, 4, 1)
    # The very diagnostic the command line prints (fixtures/err), for this path.
    expected = (case / "expected.err").read_text()
    assert e.message == expected.replace("fixtures/err/parse/missing_in/program.ad", path)


def test_a_type_error_from_text_names_the_given_file_name():
    with pytest.raises(adrev.CompileError) as info:
        adrev.compile("def f (x : R) : R =\n  x + [1, 2]\n", name="mine.ad")
    assert info.value.file == "mine.ad"
    assert info.value.line == 2


def test_an_unknown_entry_and_a_missing_file():
    with pytest.raises(adrev.CompileError, match="nope"):
        adrev.compile(DOT).function("nope")
    with pytest.raises(adrev.CompileError, match="no_such.ad"):
        adrev.load("no_such.ad")


def test_the_gradient_of_a_non_real_result_is_a_compile_error(backend):
    f = adrev.compile("def v (x : R) : [2]R = [x, x]").function(backend=backend)
    with pytest.raises(adrev.CompileError, match="real"):
        f.grad(x=1.0)


def test_an_index_out_of_bounds_is_a_run_error_at_its_position(backend):
    prog = adrev.load(FIXTURES / "err" / "eval" / "index_out_of_bounds" / "program.ad")
    f = prog.function(backend=backend)
    with pytest.raises(adrev.RunError) as info:
        f(A=np.array([1.0, 2.0, 3.0]))
    assert "out of bounds" in info.value.message
    assert (info.value.line, info.value.column) == (2, 3)


def test_an_error_message_is_the_rendered_diagnostic():
    with pytest.raises(adrev.CompileError) as info:
        adrev.compile("def f (x : R) : R = y\n", name="u.ad")
    text = info.value.message
    assert text.startswith("error:") and "u.ad:1:" in text and "^" in text
