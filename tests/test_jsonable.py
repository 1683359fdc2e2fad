"""The one JSON-number helper (levysde.core.jsonable): non-finite numbers become null."""
import json
import math

import numpy as np
import pytest

from levysde.core.jsonable import finite_or_none, to_jsonable


@pytest.mark.parametrize("x", [float("nan"), float("inf"), -float("inf"), np.float64("nan"), np.float32("-inf"),
                               np.array(np.inf), None])
def test_non_finite_numbers_become_none(x):
    assert finite_or_none(x) is None


@pytest.mark.parametrize("x, want", [(1.5, 1.5), (np.float32(0.25), 0.25), (np.float64(-2.0), -2.0), (3, 3.0),
                                     (np.int64(7), 7.0), (np.array(1e300), 1e300), (-0.0, 0.0), (5e-324, 5e-324)])
def test_finite_numbers_become_python_floats(x, want):
    v = finite_or_none(x)
    assert type(v) is float and v == want


def test_finite_or_none_refuses_what_is_not_a_number():
    with pytest.raises((TypeError, ValueError)):
        finite_or_none("1.0x")
    with pytest.raises(TypeError):
        finite_or_none([1.0])


def test_to_jsonable_nested_containers():
    obj = {"a": [1.0, float("nan"), np.float64(2.5), np.float32(np.inf)],
           "b": (np.int64(3), None, True, np.bool_(False)),
           "c": {"d": np.array([[1.0, -np.inf], [0.5, np.nan]]), "e": "text", "n": 4},
           "f": np.float64(-np.inf)}
    got = to_jsonable(obj)
    assert got == {"a": [1.0, None, 2.5, None], "b": [3, None, True, False],
                   "c": {"d": [[1.0, None], [0.5, None]], "e": "text", "n": 4}, "f": None}
    # the types JSON needs: no numpy scalars left, integers stay integers, booleans stay booleans
    assert type(got["b"][0]) is int and got["b"][2] is True and got["b"][3] is False
    assert type(got["c"]["n"]) is int and type(got["a"][2]) is float
    # strict JSON (allow_nan=False) accepts the result; the input itself would be refused
    assert json.loads(json.dumps(got, allow_nan=False)) == got
    with pytest.raises(ValueError):
        json.dumps({"x": float("nan")}, allow_nan=False)
    # the input is not modified
    assert math.isnan(obj["a"][1]) and isinstance(obj["b"], tuple)


def test_no_copy_of_the_helper_is_left_in_the_package():
    """One helper: the former copies (``json_number``, local ``x if isfinite(x) else None``) are gone."""
    import pathlib
    import re

    pkg = pathlib.Path(__file__).resolve().parent.parent / "levysde"
    pat = re.compile(r"def (json_number|_?finite_or_none)\(|isfinite\([^)]*\)\s+else\s+None")
    hits = [f"{p.relative_to(pkg)}:{i}" for p in pkg.rglob("*.py") if p.name != "jsonable.py"
            for i, line in enumerate(p.read_text().splitlines(), 1) if pat.search(line)]
    assert hits == [], hits
