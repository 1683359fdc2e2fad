"""The argument-check vocabulary of levysde.core.validate: every check accepts the ends of its
range that belong to it, refuses the values just outside (and NaN, inf, bools, non-integral
floats for integers, wrong shapes), and names the parameter and its range in one line."""
import math

import numpy as np
import pytest

from levysde.core.validate import (
    check_array,
    check_bool,
    check_choice,
    check_int,
    check_real,
    check_samples,
    describe_integers,
    describe_interval,
    in_interval,
)
from levysde.theory.params import check_param

BELOW_0, ABOVE_0 = -5e-324, 5e-324          # the doubles next to 0
BELOW_1, ABOVE_1 = np.nextafter(1.0, 0.0), np.nextafter(1.0, 2.0)


def refuses(call, text):
    with pytest.raises(ValueError) as info:
        call()
    msg = str(info.value)
    assert "\n" not in msg
    assert text in msg, msg
    return msg


# ------------------------------------------------------------------ wording

@pytest.mark.parametrize("args,kw,text", [
    ((0.0, 2.0), dict(lo_open=True, hi_open=True), "(0, 2)"),
    ((0.0, 1.0), {}, "[0, 1]"),
    ((0.0,), {}, "[0, inf)"),
    ((0.0,), dict(lo_open=True), "(0, inf)"),
    ((None, 5.0), {}, "(-inf, 5]"),
    ((), {}, "(-inf, inf)"),
    ((2, 2 ** 60 + 1), {}, f"[2, {2 ** 60 + 1}]"),          # integer bounds exactly
])
def test_describe_interval(args, kw, text):
    assert describe_interval(*args, **kw) == text


def test_describe_integers():
    assert describe_integers(1) == "an integer >= 1"
    assert describe_integers(None, 5) == "an integer <= 5"
    assert describe_integers(2, 10) == "an integer in [2, 10]"
    assert describe_integers() == "an integer"


def test_in_interval_ends_and_nan():
    x = np.array([BELOW_0, 0.0, 1.0, ABOVE_1, np.nan, np.inf])
    assert in_interval(x, 0.0, 1.0).tolist() == [False, True, True, False, False, False]
    assert in_interval(x, 0.0, 1.0, lo_open=True, hi_open=True).tolist() == [False] * 6
    assert in_interval(x, 0.0).tolist() == [False, True, True, True, False, True]


# ------------------------------------------------------------------ check_real

def test_real_closed_ends_accepted_just_outside_refused():
    assert check_real("u", 0.0, 0.0, 1.0) == 0.0
    assert check_real("u", 1.0, 0.0, 1.0) == 1.0
    assert refuses(lambda: check_real("u", BELOW_0, 0.0, 1.0), "u must be finite and in [0, 1]")
    refuses(lambda: check_real("u", ABOVE_1, 0.0, 1.0), "u must be finite and in [0, 1]; got 1.0000000000000002")


def test_real_open_ends_refused_just_inside_accepted():
    for end in (0.0, 1.0):
        refuses(lambda end=end: check_real("tail_fraction", end, 0.0, 1.0, lo_open=True, hi_open=True),
                f"tail_fraction must be finite and in (0, 1); got {end!r}")
    assert check_real("f", ABOVE_0, 0.0, 1.0, lo_open=True, hi_open=True) == ABOVE_0
    assert check_real("f", BELOW_1, 0.0, 1.0, lo_open=True, hi_open=True) == BELOW_1


@pytest.mark.parametrize("value", [math.nan, math.inf, -math.inf, np.float64("nan"), 10 ** 400],
                         ids=["nan", "inf", "-inf", "np.nan", "10**400"])
def test_real_refuses_non_finite(value):
    refuses(lambda: check_real("dt", value, 0.0, lo_open=True), "dt must be finite and in (0, inf); got")
    refuses(lambda: check_real("z0", value), "z0 must be a finite real number; got")


@pytest.mark.parametrize("value", [True, False, np.True_, "0.5", b"1", None, 1j, complex(1, 0), [0.5, None]])
def test_real_refuses_what_is_no_real_number(value):
    refuses(lambda: check_real("eps", value, 0.0, lo_open=True), "eps must be a real number in (0, inf); got")


def test_real_types_and_single_values():
    for v in (np.float32(0.25), np.int64(3), 3, np.array(0.25), np.array([0.25])):
        out = check_real("x", v)
        assert type(out) is float and out == np.ravel(v)[0]
    refuses(lambda: check_real("eta_g", np.array([0.1, 0.2]), 0.0),
            "eta_g must be a single real number in [0, inf); got an array of shape (2,)")
    refuses(lambda: check_real("x", 5.0, 0.0, 1.0, why="a fraction"),
            "x must be finite and in [0, 1] (a fraction); got 5.0")
    refuses(lambda: check_real("x", None, 0.0, why="seconds"),
            "x must be a real number in [0, inf) (seconds); got None")


# ------------------------------------------------------------------ check_int

def test_int_ends_and_just_outside():
    assert check_int("n", 1, 1, 5) == 1 and check_int("n", 5, 1, 5) == 5
    refuses(lambda: check_int("n", 0, 1, 5), "n must be an integer in [1, 5]; got 0")
    refuses(lambda: check_int("n", 6, 1, 5), "n must be an integer in [1, 5]; got 6")
    refuses(lambda: check_int("particles", 0, 1), "particles must be an integer >= 1; got 0")
    refuses(lambda: check_int("k", 3, None, 2), "k must be an integer <= 2; got 3")


@pytest.mark.parametrize("value", [2.5, 1e-300, math.nan, math.inf, True, False, np.True_, "3", None,
                                   np.array([3]), [3], 3 + 0j])
def test_int_refuses_non_integers(value):
    refuses(lambda: check_int("seed", value, 0), "seed must be an integer >= 0; got")


def test_int_accepts_integral_values_as_exact_python_ints():
    for v, want in ((3.0, 3), (np.int64(7), 7), (np.uint64(2 ** 63 + 1), 2 ** 63 + 1), (np.array(4), 4),
                    (2 ** 60 + 1, 2 ** 60 + 1), (10 ** 30, 10 ** 30)):
        out = check_int("n", v, 0)
        assert type(out) is int and out == want
    # the bounds are compared exactly: 2^60 + 1 is above 2^60 although float(2^60 + 1) == 2^60
    refuses(lambda: check_int("lag_max", 2 ** 60 + 1, 2, 2 ** 60),
            f"lag_max must be an integer in [2, {2 ** 60}]; got {2 ** 60 + 1}")
    assert check_int("lag_max", 2 ** 60, 2, 2 ** 60) == 2 ** 60
    refuses(lambda: check_int("n", 7, 1, 4, why="at most particles"),
            "n must be an integer in [1, 4] (at most particles)")


# ------------------------------------------------------------------ check_choice, check_bool

def test_choice():
    assert check_choice("backend", "cuda", ("cpu", "cuda")) == "cuda"
    out = check_choice("backend", np.str_("cpu"), ("cpu", "cuda"))
    assert out == "cpu" and type(out) is str
    assert check_choice("mode", None, (None, "jumps", "gauss")) is None
    assert check_choice("kind", np.int64(2), (0, 1, 2)) == 2
    refuses(lambda: check_choice("backend", "gpu", ("cpu", "cuda")), "backend must be one of 'cpu', 'cuda'; got 'gpu'")
    refuses(lambda: check_choice("mode", "none", (None, "jumps")), "mode must be one of None, 'jumps'; got 'none'")
    for bad in (True, 1.5, "1", [1], np.array([1, 2])):       # a bool is not the number 1
        refuses(lambda bad=bad: check_choice("kind", bad, (0, 1, 2)), "kind must be one of 0, 1, 2; got")


def test_bool():
    assert check_bool("fast", True) is True and check_bool("fast", np.False_) is False
    for bad in (1, 0, "yes", None, 1.0):
        refuses(lambda bad=bad: check_bool("fast", bad), "fast must be True or False; got")


# ------------------------------------------------------------------ check_array

def test_array_dtype_ndim_shape_size():
    out = check_array("x", [1, 2, 3])
    assert out.dtype == np.float64 and out.tolist() == [1.0, 2.0, 3.0]
    refuses(lambda: check_array("x", [True, False]), "x must be an array of real numbers; got [True, False]")
    refuses(lambda: check_array("zeta", np.ones(3) + 1j), "zeta must be an array of real numbers; got dtype complex128")
    refuses(lambda: check_array("step", np.arange(3).astype(str)),
            "step must be an array of real numbers; got dtype <U")
    refuses(lambda: check_array("x", [1, None]), "x must be an array of real numbers; got [1, None]")
    refuses(lambda: check_array("x", [1, [2, 3]]), "x must be an array of real numbers")
    refuses(lambda: check_array("x", "abc"), "x must be a real number; got 'abc'")
    refuses(lambda: check_array("lags", np.ones((2, 2)), ndim=1), "lags must be 1-d; got shape (2, 2)")
    refuses(lambda: check_array("c", np.ones(3), ndim=(2, 3)), "c must be 2-d or 3-d; got shape (3,)")
    assert check_array("c", np.ones((4, 3)), shape=(None, 3)).shape == (4, 3)
    refuses(lambda: check_array("c", np.ones((4, 2)), shape=(None, 3)), "c must have shape (n, 3); got (4, 2)")
    refuses(lambda: check_array("c", np.ones(3), shape=(None, 3)), "c must have shape (n, 3); got (3,)")
    refuses(lambda: check_array("p", np.ones(2), shape=(3,)), "p must have shape (3,); got (2,)")
    refuses(lambda: check_array("g", [1.0], min_size=2), "g must hold at least 2 values; got 1")
    refuses(lambda: check_array("lags", [], min_size=1), "lags must hold at least 1 value; got 0")


def test_array_finiteness():
    for bad in (np.nan, np.inf, -np.inf):
        refuses(lambda bad=bad: check_array("x", [0.0, bad]), f"x must be finite; got {float(bad)!r}")
    assert np.isnan(check_array("x", [0.0, np.nan], allow_nan=True)[1])
    refuses(lambda: check_array("x", [0.0, np.inf], allow_nan=True), "x must be finite (or NaN); got inf")
    assert check_array("beta", [-np.inf, np.inf], allow_inf=True).tolist() == [-np.inf, np.inf]
    refuses(lambda: check_array("beta", [np.nan], allow_inf=True), "beta must be a number (not NaN); got nan")
    out = check_array("z", [np.nan, np.inf], allow_inf=True, allow_nan=True)
    assert np.isnan(out[0]) and out[1] == np.inf


def test_array_range_ends_and_first_offender():
    assert check_array("f", [ABOVE_0, 1.0], lo=0.0, hi=1.0, lo_open=True).tolist() == [ABOVE_0, 1.0]
    refuses(lambda: check_array("f", [0.5, 0.0, 2.0], lo=0.0, hi=1.0, lo_open=True),
            "f must be finite and in (0, 1]; got 0.0")
    refuses(lambda: check_array("f", [0.5, ABOVE_1], lo=0.0, hi=1.0),
            "f must be finite and in [0, 1]; got 1.0000000000000002")
    refuses(lambda: check_array("counts", [[1.0, BELOW_0]], lo=0.0),
            "counts must be finite and in [0, inf); got -5e-324")
    refuses(lambda: check_array("u", [-1.0], lo=0.0, why="a depth"),
            "u must be finite and in [0, inf) (a depth); got -1.0")


def test_array_increasing():
    assert check_array("grid", [-1, 0, 2], increasing=True).tolist() == [-1.0, 0.0, 2.0]
    refuses(lambda: check_array("grid", [0, 1, 1], increasing=True),
            "grid must be finite and strictly increasing; got 1.0 after 1.0")
    refuses(lambda: check_array("step", [2, 1], increasing=True, why="one per record"),
            "step must be finite and strictly increasing (one per record); got 1.0 after 2.0")
    refuses(lambda: check_array("step", [0, np.nan], increasing=True),
            "step must be finite and strictly increasing; got nan")
    refuses(lambda: check_array("lags", [2, 1], lo=0.0, lo_open=True, increasing=True),
            "lags must be finite and in (0, inf) and strictly increasing; got 1.0 after 2.0")


# ------------------------------------------------------------------ the model parameters

@pytest.mark.parametrize("name,inside,outside", [
    ("alpha", [np.finfo(float).tiny, 1.0, np.nextafter(2.0, 0.0)], [0.0, 2.0, -1.0, np.nextafter(2.0, 3.0)]),
    ("lam", [0.0, 1e300], [-1e-300, np.inf]),
    ("eta_j", [0.0, 3.0], [-1.0, np.nan]),
    ("eta_g", [0.0, 0.1], [-0.1, -np.inf]),
    ("kappa", [1e-300, 1.0], [0.0, -1.0, np.inf]),
])
def test_model_parameter_ranges(name, inside, outside):
    from levysde.theory.params import describe_range

    for v in inside:
        assert float(check_param(name, v)) == v
    for v in outside:
        msg = refuses(lambda v=v: check_param(name, v), f"{name} must be finite and in {describe_range(name)}; got")
        assert msg.endswith(repr(float(v)))
    arr = check_param(name, np.array(inside))
    assert arr.tolist() == inside


def test_model_parameter_rules():
    refuses(lambda: check_param("eta_j", 5e-324), "subnormal")
    assert math.copysign(1.0, float(check_param("lam", -0.0))) == 1.0     # -0.0 -> 0.0
    assert check_param("alpha", np.array([1.5]), scalar=True) == 1.5
    refuses(lambda: check_param("alpha", [1.0, 1.5], scalar=True),
            "alpha must be a single real number in (0, 2)")
    refuses(lambda: check_param("lam", "2"), "lam must be a real number in [0, inf); got '2'")
    refuses(lambda: check_param("lam", True), "lam must be a real number in [0, inf); got True")


@pytest.mark.parametrize("kw, name", [
    (dict(zeta="3"), "zeta"), (dict(zeta=[True, False]), "zeta"), (dict(zeta=[1 + 1j]), "zeta"),
    (dict(zeta=[10**400]), "zeta"), (dict(zeta=10**400), "zeta"),
    (dict(zeta=[1.0, 2.0], weights=["1", "2"]), "weights"), (dict(zeta=[1.0, 2.0], weights=[True, True]), "weights"),
    (dict(zeta=[1.0, 2.0], weights=[1j, 1]), "weights"), (dict(zeta=[1.0, np.nan]), "zeta"),
])
def test_check_samples_refuses_non_reals(kw, name):
    with pytest.raises(ValueError, match=f"^{name} must"):
        check_samples(**kw)


def test_messages_are_one_short_line():
    for call in (lambda: check_choice("v", np.zeros((2, 2)), ("a",)), lambda: check_int("n", np.zeros((2, 2)), 1),
                 lambda: check_param("alpha", 10**400), lambda: check_int("n", 10**400, 1, 10)):
        with pytest.raises(ValueError) as info:
            call()
        msg = str(info.value)
        assert "\n" not in msg and len(msg) < 160, msg
    with pytest.raises(ValueError, match="alpha must be finite"):
        check_param("alpha", 10**400)
