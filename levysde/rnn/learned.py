"""Whether an RNN run learned its task (docs/specification.md §8 (i)) and the summary of its last record.

Torch-free: :func:`learned_diagnostic` compares a run's late loss with the trivial predictor's
(:func:`levysde.rnn.teacher.trivial_loss`).
"""
from __future__ import annotations

import numpy as np

from levysde.core.jsonable import finite_or_none
from levysde.core.validate import check_real
from levysde.rnn.teacher import trivial_loss

__all__ = ["LEARNED_THRESHOLD", "SATURATION_SHOWN", "learned_diagnostic", "run_summary", "saturation_note"]

#: a run "learned" when its late loss is below this fraction of the trivial loss (docs/specification.md §8)
LEARNED_THRESHOLD = 0.5


def learned_diagnostic(run: dict, threshold: float = LEARNED_THRESHOLD,
                       tail_fraction: float = 0.25) -> tuple[float, bool]:
    r"""Whether a run learned its task: ``(loss_ratio, learned)`` (docs/specification.md §8 (i)).

    Parameters
    ----------
    run : dict
        A run file's arrays (:func:`levysde.io.runfile.load_run`, or what
        :func:`levysde.rnn.trainer.train` returns): ``config``, ``loss`` (and ``train_loss``
        for ``longmem``), ``trivial_loss`` when stored.
    threshold : float, optional
        The largest loss ratio that counts as learned, > 0 (default :data:`LEARNED_THRESHOLD`,
        0.5).
    tail_fraction : float, optional
        The fraction of the records, from the end, whose median loss is compared, in (0, 1]
        (default 0.25; at least one record).

    Returns
    -------
    loss_ratio : float
        The late median loss over the trivial predictor's loss; ``inf`` when a late loss is
        not finite.
    learned : bool
        ``loss_ratio <= threshold`` (False for a non-finite loss).

    Raises
    ------
    ValueError
        If the trivial loss is unknown (alpha-stable inputs in a file without
        ``trivial_loss``) or not > 0, or ``threshold`` / ``tail_fraction`` is out of range
        (threshold > 0, tail_fraction in (0, 1]).

    Notes
    -----
    With :math:`L_1, \dots, L_n` the recorded losses, :math:`k = \max(1, \lceil f n \rceil)`
    (:math:`f` = ``tail_fraction``) and :math:`L_0` the trivial predictor's loss (the run file's
    ``trivial_loss``, else :func:`levysde.rnn.teacher.trivial_loss` of its config, for files
    written before it was stored),

    .. math::

        \text{loss ratio} = \frac{\operatorname{median}(L_{n-k+1}, \dots, L_n)}{L_0},
        \qquad \text{learned} \iff \text{loss ratio} \le \text{threshold}.

    The loss is the probe loss, except for the
    streaming ``longmem`` task, where it is ``train_loss``: the mean loss of the fresh training
    chunks since the previous record, each scored before the update it causes and with the
    state carried along the stream (a prequential, out-of-sample loss). The ``longmem`` probe
    starts its streams from a zero state with a burn-in of 4 chunks, too short to warm up
    network time scales beyond it, so its loss grows as the network learns long memories
    (measured: probe ratio 1-2 at train-loss ratio 0.05 for DiagGate H = 256 after 16000
    steps).

    References
    ----------
    The specification, §8 (i) (:doc:`/specification`).

    Examples
    --------
    >>> run = {"config": {"task": "adding", "seq_len": 8}, "trivial_loss": np.array(0.2),
    ...        "loss": np.array([0.2, 0.15, 0.08, 0.06])}
    >>> ratio, learned = learned_diagnostic(run)
    >>> round(ratio, 3), learned
    (0.3, True)
    """
    check_real("threshold", threshold, 0.0, lo_open=True)
    check_real("tail_fraction", tail_fraction, 0.0, 1.0, lo_open=True)
    triv = None
    if "trivial_loss" in run:
        triv = float(np.asarray(run["trivial_loss"]).reshape(-1)[0])
    if triv is None or not np.isfinite(triv):
        triv = trivial_loss(run["config"])
    if triv is None or not triv > 0:
        raise ValueError(f"the trivial predictor's loss is unknown or not > 0 ({triv!r}); cannot say "
                         f"whether the run learned")
    key = "train_loss" if run["config"].get("task") == "longmem" and "train_loss" in run else "loss"
    loss = np.asarray(run[key], dtype=float)
    k = max(1, int(np.ceil(tail_fraction * loss.size)))
    late = loss[-k:]
    if late.size == 0 or not np.all(np.isfinite(late)):
        return float("inf"), False
    ratio = float(np.median(late) / triv)
    return ratio, bool(ratio <= threshold)


#: fraction of float32-saturated probe retentions (r < 1e-6 or 1 - r < 1e-6) from which
#: ``levysde train`` and ``levysde check`` report the gate saturation
SATURATION_SHOWN = 0.01


def saturation_note(run: dict) -> str | None:
    """The gate saturation of a run's last record in words, or None when it is negligible.

    A saturated retention is 0 or 1 to float32's precision (:math:`r < 10^{-6}` or
    :math:`1 - r < 10^{-6}`): the state is wiped or held unchanged and the gate's gradient
    vanishes there; zeta itself comes from the gate pre-activation and stays exact, the
    first-order variant ``zeta_jac`` does not.

    Parameters
    ----------
    run : dict
        A run file's arrays; its ``saturated`` (the fraction of float32-saturated probe
        retentions per record) is read, when present.

    Returns
    -------
    str or None
        One sentence, when at least :data:`SATURATION_SHOWN` of the last record's probe
        retentions are saturated; else None (also for files without ``saturated``).

    Examples
    --------
    >>> print(saturation_note({"saturated": np.array([0.0, 0.001])}))
    None
    >>> saturation_note({"saturated": np.array([0.02, 0.05])})[:50]
    'gate saturation: 5.0% of the probe retentions are '
    """
    sat = np.asarray(run.get("saturated", []), dtype=float).ravel()
    if sat.size == 0 or not np.isfinite(sat[-1]) or sat[-1] < SATURATION_SHOWN:
        return None
    return (f"gate saturation: {sat[-1]:.1%} of the probe retentions are float32-saturated at the last "
            f"record (r < 1e-6 or 1 - r < 1e-6; the most over the run {np.nanmax(sat):.1%}): there the gate "
            f"gradient vanishes and zeta_jac is unreliable")


def run_summary(run: dict) -> dict:
    """Summary of a run's last record (the ``levysde train`` printout and its ``--json``).

    Parameters
    ----------
    run : dict
        A run file's arrays (:func:`levysde.io.runfile.load_run`): ``step``, ``loss``,
        ``trivial_loss``, ``zeta`` (records, H), ``jac_masked``, ``config`` and, when stored,
        ``saturated``.

    Returns
    -------
    dict
        Keys: ``records``, ``step``, ``probe_loss``, ``trivial_loss``, ``loss_ratio`` (None
        when not finite), ``learned`` (:func:`learned_diagnostic`), ``zeta_mean``,
        ``zeta_std`` (over neurons, last record), ``jac_masked``, ``saturated`` (fraction of
        float32-saturated probe retentions at the last record; None when the file has none)
        and ``saturation_note`` (:func:`saturation_note`). Plain Python values (JSON-ready).

    Raises
    ------
    ValueError
        As :func:`learned_diagnostic` does.

    Examples
    --------
    >>> run = {"config": {"task": "adding", "seq_len": 8}, "trivial_loss": np.array(0.2),
    ...        "step": np.array([0, 10]), "loss": np.array([0.2, 0.05]),
    ...        "zeta": np.array([[-1.0, -2.0], [-1.0, -3.0]]), "jac_masked": np.array([0, 0])}
    >>> s = run_summary(run)
    >>> s["step"], s["loss_ratio"], s["learned"], s["zeta_mean"], s["saturated"]
    (10, 0.25, True, -2.0, None)
    """
    z = np.asarray(run["zeta"], dtype=float)[-1]
    ratio, learned = learned_diagnostic(run)
    return {"records": len(run["step"]), "step": int(run["step"][-1]),
            "probe_loss": float(run["loss"][-1]), "trivial_loss": float(run["trivial_loss"]),
            "loss_ratio": finite_or_none(ratio), "learned": learned,
            "zeta_mean": float(z.mean()), "zeta_std": float(z.std()),
            "jac_masked": int(np.asarray(run["jac_masked"])[-1]),
            "saturated": finite_or_none(float(np.asarray(run["saturated"]).ravel()[-1]))
            if np.size(run.get("saturated", [])) else None,
            "saturation_note": saturation_note(run)}
