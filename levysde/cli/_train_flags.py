"""``levysde train``: the flags of the anti-collapse paper's protocol (the ``lagged`` task, its
fixed training set and epochs, the tau0 init, the windowed zeta, the slow-mode forcing; docs/rnn.md)."""
from __future__ import annotations

import re

from levysde.cli._common import Given, GivenTrue, UsageError, integer, real

#: CLI dest -> TrainConfig field, where they differ (every other field is its flag's dest: the
#: field ``lag_hi`` is ``--lag-hi``); the one map between the two, both ways (:func:`flag_of`)
FIELDS = {"lags": "lag_mode", "slow_forcing": "slow_forcing_alpha", "power": "p", "no_gate_decay": "gate_decay"}
_DEST = {field: dest for dest, field in FIELDS.items()}


def flag_of(field: str) -> str:
    """The ``levysde train`` flag of a TrainConfig field: ``lag_hi`` -> ``--lag-hi``, ``p`` -> ``--power``."""
    return "--" + _DEST.get(field, field).replace("_", "-")


def flag_message(message: str, fields, args=None) -> str:
    """A TrainConfig (or trainer) error in the flags' words, for the command line.

    A message that starts with a field and what it must be (``lag_hi must be an integer >= 701
    (above lag_lo); got 640``) becomes ``argument --lag-hi: must be ... (above --lag-lo); got 640``;
    every other field with an underscore in its name is written as its flag (single-word fields
    such as ``model`` or ``batch`` only as the subject: mid-sentence they are words). With
    ``args`` (the parsed flags), a subject flag that was not given says where its value came
    from: its default, or with ``--resume`` the checkpoint."""
    names = sorted(fields, key=len, reverse=True)
    subject = None
    m = re.match(r"(\w+)( \w+)? (must|needs)\b", message)
    if m and m.group(1) in fields:
        subject = m.group(1)
        message = f"argument {flag_of(subject)}: {message[len(subject):].lstrip()}"
    ids = [n for n in names if "_" in n]
    if ids:
        message = re.sub(r"(?<![\w./-])(" + "|".join(map(re.escape, ids)) + r")(?![\w/-]|\.\w)",
                         lambda w: flag_of(w.group(1)), message)
    if subject is not None and args is not None and _DEST.get(subject, subject) not in getattr(args, "_given", ()):
        where = "the checkpoint's value" if getattr(args, "resume", False) else "its default"
        message += f" ({flag_of(subject)} was not given: {where})"
    return message


#: the range of --gate-tau0, as levysde.rnn.models.TAU0_MIN, TAU0_MAX (not imported: that needs torch)
TAU0_RANGE = (0.1, 1e5)
_TAU0 = ("[0.1, 100000] (steps; the gates are float32: beyond it the initial retention exp(-1/T0) comes "
         "within 5e-5 of 0 or 1e-5 of 1, where float32 rounding distorts or loses its time scale)")


def validated(cfg, args=None):
    """``cfg.validate()`` (a TrainConfig; train() validates again), its ValueError a UsageError in
    the flags' words (:func:`flag_message`; ``args``: the parsed flags)."""
    try:
        return cfg.validate()
    except ValueError as exc:
        raise UsageError(flag_message(str(exc), type(cfg).__dataclass_fields__, args)) from None


def add_task_flags(t) -> None:
    """The ``lagged`` task's flags, in the task group ``t``."""
    t.add_argument("--lags", action=Given, choices=("pareto", "fixed"), default="pareto",
                   help="lagged: pareto = --lag-count lags drawn from a truncated Pareto (seed 20260410), "
                        "fixed = 32, 64, 128, 192, 256 (default %(default)s)")
    t.add_argument("--lag-count", action=Given, type=integer(1), default=16,
                   help="lagged: number of drawn lags (default %(default)s)")
    t.add_argument("--lag-lo", action=Given, type=integer(1), default=8,
                   help="lagged: shortest possible lag (default %(default)s)")
    t.add_argument("--lag-hi", action=Given, type=integer(2), default=640,
                   help="lagged: longest possible lag (default %(default)s)")
    t.add_argument("--lag-alpha", action=Given, type=real(0.0, lo_open=True), default=0.6,
                   help="lagged: Pareto index of the lag draw, > 0 (default %(default)s)")
    t.add_argument("--input-dim", action=Given, type=integer(1), default=16,
                   help="lagged: input dimension D (default %(default)s)")
    t.add_argument("--n-train", action=Given, type=integer(1), default=8000,
                   help="lagged: sequences in the fixed training set (default %(default)s)")


def add_run_flags(g, r) -> None:
    """The init flag (model group ``g``) and the recording flags (group ``r``)."""
    g.add_argument("--gate-tau0", action=Given, type=real(*TAU0_RANGE, allowed=_TAU0), default=None,
                   help="start every unit at time scale T0 in [0.1, 1e5] steps: gate weights 0, gate bias from "
                        "T0, other matrices orthogonal, other biases 0 (default off)")
    g.add_argument("--layernorm", action=GivenTrue,
                   help="LayerNorm of the candidate pre-activation before tanh (leaky models; the learnability "
                        "paper's)")
    r.add_argument("--record-epochs", action=Given, type=integer(1), default=None,
                   help="lagged: record after epoch 1 and every E epochs instead of every K steps")
    r.add_argument("--window-lags", action=Given, type=integer(1), nargs=3, default=None,
                   metavar=("LO", "HI", "N"),
                   help="also record zeta_window, the windowed first-order transport time scale, on the N "
                        "lags int(linspace(LO, HI, N)), LO < HI <= probe window (the paper: 64 384 32; leaky models)")
    r.add_argument("--slow-forcing", action=Given, type=real(0.0, 2.0, lo_open=True), default=None,
                   metavar="ALPHA",
                   help="slow-mode forcing (leaky models, needs --window-lags): after every optimizer step add "
                        "alpha-stable noise, scaled by the RMS of the realized update, to the rows of the slow "
                        "units (the paper: 1.5; default off)")
    r.add_argument("--slow-forcing-scale", action=Given, type=real(0.0, lo_open=True), default=1.0,
                   help="noise scale / RMS of the update, > 0 (default %(default)s)")
    r.add_argument("--slow-forcing-q", action=Given, type=real(0.0, 1.0, lo_open=True, hi_open=True), default=0.1,
                   help="slow units: zeta_window at or below this quantile, re-chosen at every record "
                        "(default %(default)s)")
    r.add_argument("--slow-forcing-taper", action=Given, type=real(0.0, lo_open=True), default=100.0,
                   help="soft taper X <- c tanh(X/c) of the standard noise, c > 0 (default %(default)s)")


#: (condition on the config under which the flags do not apply, flags, why)
INAPPLICABLE = (
    (lambda f: f["task"] != "lagged", ("lags", "lag_count", "lag_lo", "lag_hi", "lag_alpha", "input_dim",
                                       "n_train", "record_epochs"), "without --task lagged"),
    (lambda f: f.get("lag_mode") == "fixed", ("lag_count", "lag_lo", "lag_hi", "lag_alpha"), "with --lags fixed"),
    (lambda f: f.get("gate_tau0") is not None, ("gate_a", "init", "t_max"), "with --gate-tau0"),
    (lambda f: f["init"] != "chrono", ("t_max",), "without --init chrono"),
    (lambda f: f["model"] != "constgate" or f["init"] != "default", ("gate_a",),
     "unless --model constgate --init default"),
    (lambda f: f["task"] != "delay", ("delay",), "without --task delay"),
    (lambda f: f["task"] != "powerlaw", ("power", "kernel"), "without --task powerlaw"),
    (lambda f: f["task"] != "longmem", ("n_mem", "mem_lag_max", "mem_gamma"), "without --task longmem"),
    (lambda f: f.get("inject_alpha") is None, ("inject_target",), "without --inject-alpha"),
    (lambda f: f.get("clip") is None, ("clip",), "with --no-clip (they contradict each other)"),
    (lambda f: f.get("slow_forcing_alpha") is None, ("slow_forcing_scale", "slow_forcing_q", "slow_forcing_taper"),
     "without --slow-forcing"),
)


def check_lags(fields: dict) -> None:
    """UsageError when ``--lags fixed`` has a lag as long as ``--seq-len``, or the Pareto lags' lower
    end ``--lag-lo`` is not below it (no lag would ever enter the target)."""
    from levysde.rnn.teacher import FIXED_LAGS

    if (fields["task"] == "lagged" and fields.get("lag_mode", "pareto") == "pareto"
            and fields.get("lag_lo") is not None and fields["lag_lo"] >= fields["seq_len"]):
        raise UsageError(f"argument --lag-lo: {fields['lag_lo']} is not below --seq-len {fields['seq_len']}: "
                         f"no lag would enter the target; give --lag-lo < --seq-len")
    if fields["task"] == "lagged" and fields.get("lag_mode") == "fixed" and fields["seq_len"] <= FIXED_LAGS[-1]:
        raise UsageError(f"argument --seq-len: {fields['seq_len']} is too short for --lags fixed (lags "
                         f"{', '.join(map(str, FIXED_LAGS))}); give --seq-len >= {FIXED_LAGS[-1] + 1}")


def add_seed_flags(r) -> None:
    """``--seeds``: several seeds trained as one batched model (group ``r``)."""
    r.add_argument("--seeds", type=integer(0, 2 ** 32 - 1), nargs="+", default=None, metavar="SEED",
                   help="train these seeds in one process as one batched model (constgate, sharedgate, "
                        "diaggate; not longmem), each as --seed SEED would, one run file each: --out must "
                        "contain {seed}, e.g. runs/dg_{seed}.npz")
