"""Every numeric option of every command: a bad value (not a number, not finite, out of range)
is ONE line on stderr naming the option and its allowed values, exit status 2, no traceback;
and the allowed values it names are the truth: a closed end is accepted, an open end refused,
an infinite end always open."""
import argparse
import re

import pytest

from levysde.cli import build_parser, main

#: the smallest command line of each command (the option under test is appended)
BASE = {"phase": ["--eta-j", "3"], "simulate": ["--eta-j", "3"], "check": ["run.npz"],
        "envelope": ["--eta-j", "3"], "diagram": [], "train": ["--out", "run.npz"], "paper": ["dir"],
        "learnability": ["--from", "run.npz"]}


def _options():
    parser = build_parser()
    sub = next(a for a in parser._actions if isinstance(a, argparse._SubParsersAction))
    return [(cmd, a.option_strings[0], a.nargs if isinstance(a.nargs, int) else 1)
            for cmd, sp in sub.choices.items() for a in sp._actions
            if a.option_strings and a.type is not None]


OPTIONS = _options()


def _parse(capsys, cmd, opt, n, value):
    """(exit status or None when accepted, stderr) of parsing ``cmd BASE opt value...``."""
    try:
        build_parser().parse_args([cmd, *BASE[cmd], opt, *[value] * n])
        status = None
    except SystemExit as exc:
        status = exc.code
    return status, capsys.readouterr().err


def _one_line(status, err, opt):
    assert status == 2 and err.count("\n") == 1 and "Traceback" not in err, err
    assert f"argument {opt}" in err and "allowed: " in err, err
    assert "[-inf" not in err and "inf]" not in err, err                 # infinite ends are open
    return err.split("allowed: ", 1)[1].strip()


def test_every_numeric_option_is_covered():
    names = {(c, o) for c, o, _ in OPTIONS}
    assert len(OPTIONS) > 60 and ("simulate", "--z0") in names and ("train", "--seed") in names


@pytest.mark.parametrize("cmd,opt,n", OPTIONS, ids=[f"{c}{o}" for c, o, _ in OPTIONS])
def test_bad_values_are_one_line_naming_the_range_and_the_range_is_true(capsys, cmd, opt, n):
    allowed = {_one_line(*_parse(capsys, cmd, opt, n, v), opt) for v in ("nan", "inf", "-inf", "abc", "")}
    assert len(allowed) == 1, allowed                                   # one wording per option
    allowed = allowed.pop()

    def accepted(value):
        status, err = _parse(capsys, cmd, opt, n, value)
        if status is None:
            return True
        _one_line(status, err, opt)
        return False

    def refused(value):
        """Refused by the parser, or (a bound the library checks in its own words, e.g.
        --gamma <= 0) by the command before any work: one line naming the option, exit 2."""
        if not accepted(value):
            return True
        with pytest.raises(SystemExit) as info:
            main([cmd, *BASE[cmd], opt, *[value] * n])
        err = capsys.readouterr().err
        return info.value.code == 2 and err.count("\n") == 1 and opt in err

    if allowed == "a finite real number":
        assert accepted("-1e300") and accepted("1e300") and accepted("0")
        return
    m = re.fullmatch(r"an integer( >= (-?\d+)| <= (-?\d+)| in \[(-?\d+), (-?\d+)\])?( \(.+\))?", allowed)
    if m:
        lo = m.group(2) or m.group(4)
        hi = m.group(3) or m.group(5)
        assert not accepted("1.5") and not accepted("1e3")
        for end, step in ((lo, -1), (hi, 1)):
            if end is not None:
                assert accepted(end) and not accepted(str(int(end) + step)), (opt, end)
        return
    m = re.fullmatch(r"([\[(])(-inf|-?[\d.e+-]+), (inf|-?[\d.e+-]+)([\])])( \(.+\))?", allowed)
    assert m, f"{cmd} {opt}: unreadable allowed range {allowed!r}"
    left, lo, hi, right, _why = m.groups()
    for end, closed, outward in ((lo, left == "[", -1), (hi, right == "]", 1)):
        if end in ("inf", "-inf"):
            assert not closed
            continue
        x = float(end)
        beyond = x + outward * max(1.0, abs(x))
        assert refused(repr(beyond)), (opt, beyond)
        assert accepted(end) if closed else refused(end), (opt, end)


def test_fresh_user_examples(capsys):
    """The reported cases: --z0 nan named [-inf, inf), --seed -1 named [0, inf]."""
    status, err = _parse(capsys, "simulate", "--z0", 1, "nan")
    assert _one_line(status, err, "--z0") == "a finite real number"
    status, err = _parse(capsys, "simulate", "--seed", 1, "-1")
    assert _one_line(status, err, "--seed") == "an integer >= 0"
    status, err = _parse(capsys, "simulate", "--alpha", 1, "2")
    assert _one_line(status, err, "--alpha") == "(0, 2)"
    status, err = _parse(capsys, "simulate", "--particles", 1, "1")
    assert _one_line(status, err, "--particles") == "an integer in [2, 1000000000]"


def test_lag_max_beyond_float64_integers_is_refused(capsys):
    """--lag-max 10^30 used to reach numpy's log10 of a Python int (TypeError traceback): lags are
    integers held exactly in float64, so lag_max <= 2^53 everywhere."""
    from levysde.rnn.trainer import TrainConfig, integer_lag_grid

    status, err = _parse(capsys, "train", "--lag-max", 1, "1" + "0" * 30)
    assert _one_line(status, err, "--lag-max") == f"an integer in [2, {2 ** 53}]"
    with pytest.raises(ValueError, match=rf"lag_max must be an integer in \[2, {2 ** 53}\] \(exact in float64\)"):
        integer_lag_grid(2, 10 ** 30)
    with pytest.raises(ValueError, match="lag_max"):
        TrainConfig(lag_max=10 ** 30).validate()
    lags = integer_lag_grid(5, 2 ** 53)
    assert lags[-1] == 2.0 ** 53 and lags[0] == 1.0 and list(lags) == sorted(set(lags))
