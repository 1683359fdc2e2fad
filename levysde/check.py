"""Check the theory on a trained network's run file (THEORY.md §4, §5, §8, §9).

:func:`check_run` reads a run file of ``levysde train`` (numpy only; torch is not
needed), fits the SDE to the zeta_q trajectories (:mod:`levysde.estimate`),
predicts beta* and the phase from the fitted parameters, and compares the
prediction with

* the left tail of the network's pooled late-training spectrum (``beta_tail``,
  Hill/MLE jackknifed over neuron groups), and
* the exponent of its recorded envelope (``beta_envelope`` = minus the fitted
  large-lag log-log slope of the last record's ELR envelope);

and, closing the loop, simulates the fitted SDE (the fitted drift as a
tabulated drift) and measures the Kolmogorov-Smirnov distance between its
stationary zeta law and the network's late zeta samples.
"""
from __future__ import annotations

import math
from dataclasses import dataclass, field

import numpy as np

from .estimate import Estimate, SDEFit, fit_sde, predict, spread

__all__ = ["load_run_arrays", "check_run", "CheckReport", "ks_to_histogram"]

def load_run_arrays(path) -> dict:
    """Read a ``levysde train`` run file with numpy alone (:func:`levysde.runfile.load_run`).

    Raises ValueError (one line, naming the file) when the file is missing, not an
    .npz, or lacks the run-file keys.
    """
    from .runfile import load_run

    return load_run(path)


def ks_to_histogram(samples, edges, counts) -> float:
    """Kolmogorov-Smirnov distance between samples and a histogram law (piecewise-uniform CDF)."""
    x = np.sort(np.asarray(samples, dtype=float))
    c = np.asarray(counts, dtype=float)
    cdf_edges = np.concatenate([[0.0], np.cumsum(c)]) / c.sum()
    model = np.interp(x, edges, cdf_edges)
    n = x.size
    emp_hi = np.arange(1, n + 1) / n
    emp_lo = np.arange(0, n) / n
    return float(max(np.max(np.abs(emp_hi - model)), np.max(np.abs(emp_lo - model))))


@dataclass
class CheckReport:
    """Everything :func:`check_run` measured (see :meth:`as_json` for the keys)."""

    variant: str
    fit: SDEFit | None
    prediction: object | None
    beta_tail: Estimate
    beta_envelope: Estimate
    zeta_spread: dict
    early_spread: dict
    ks: Estimate
    beta_sim_tail: Estimate
    notes: list = field(default_factory=list)
    config: dict = field(default_factory=dict)
    learned: bool = False
    loss_ratio: float = float("nan")

    def as_json(self) -> dict:
        out = {"variant": self.variant}
        f, p = self.fit, self.prediction
        none = Estimate(float("nan"), float("nan"),
                        "unavailable: " + (self.notes[0] if self.notes else "fit failed"))
        out.update((f.kappa if f else none).as_json("kappa_hat"))
        out.update((f.noise.eta_g if f else none).as_json("eta_g_hat"))
        out.update((f.noise.eta_j if f else none).as_json("eta_j_hat"))
        out.update((f.noise.alpha if f else none).as_json("alpha_hat"))
        out.update((f.noise.lam if f else none).as_json("lam_hat"))
        out.update((p.beta if p else none).as_json("beta_theory"))
        out["phase"] = p.phase if p else "unavailable"
        out["phase_probabilities"] = p.phase_probabilities if p else {}
        out.update(self.beta_tail.as_json("beta_tail"))
        out.update(self.beta_envelope.as_json("beta_envelope"))
        out["zeta_spread"] = {k: (v if not isinstance(v, float) or math.isfinite(v) else None)
                              for k, v in self.zeta_spread.items()}
        out["zeta_spread_early"] = {k: (v if not isinstance(v, float) or math.isfinite(v) else None)
                                    for k, v in self.early_spread.items()}
        out.update(self.ks.as_json("ks_distance"))
        out.update(self.beta_sim_tail.as_json("beta_sim_tail"))
        out["n_jumps"] = f.noise.n_jumps if f else None
        out["learned"] = self.learned
        out["loss_ratio"] = self.loss_ratio if math.isfinite(self.loss_ratio) else None
        if not self.learned:      # THEORY §8 (i): no phase for a network that did not learn
            out["phase"] = None
        out["notes"] = self.notes
        return out


def _learned(run, notes):
    """``(learned, loss_ratio)`` of a run (levysde.runfile.learned_diagnostic); the reason
    goes into ``notes`` when it did not learn (then no phase is reported)."""
    from .runfile import LEARNED_THRESHOLD, learned_diagnostic

    try:
        ratio, learned = learned_diagnostic(run)
    except ValueError as exc:
        notes.append(f"phase withheld: cannot tell whether the network learned ({exc})")
        return False, float("nan")
    if not learned:
        notes.append(f"phase withheld: the network did not learn (late loss / trivial predictor's "
                     f"loss = {ratio:.3g} > {LEARNED_THRESHOLD})")
    return learned, ratio


def _unavail(reason):
    return Estimate(float("nan"), float("nan"), reason)


def _beta_tail(late, n_groups=8, tail_fraction=0.1):
    from .tauberian import tail_fit

    z = late[np.isfinite(late)]
    cols = np.broadcast_to(np.arange(late.shape[1])[None, :], late.shape)[np.isfinite(late)]
    G = min(n_groups, late.shape[1])
    if G < 2:
        return _unavail("too few neurons for a jackknife over neuron groups")
    import warnings

    with np.errstate(all="ignore"), warnings.catch_warnings():
        warnings.simplefilter("ignore", RuntimeWarning)
        across = np.nanstd(late, axis=1)            # spread across neurons, per record
    if z.size == 0 or not np.nanmax(across) > 1e-9 * (1.0 + float(np.nanmax(np.abs(late)))):
        return _unavail("no spread: all neurons have the same zeta (to rounding) in every record")
    try:
        t = tail_fit(z, tail_fraction=tail_fraction, groups=cols % G)
    except ValueError as exc:
        return _unavail(f"tail not resolved: {exc}")
    k_neurons = len(np.unique(cols[-z > t.u]))
    flag = f"{k_neurons} neurons reach the tail" + (" (few: unreliable)" if k_neurons < 20 else "")
    return Estimate(t.beta, t.se_beta, flag)


def _beta_envelope(lags, env):
    from .tauberian import fit_slope

    f = np.asarray(env, dtype=float)
    if not np.all(np.isfinite(f)):
        return _unavail("envelope has non-finite values")
    try:
        s = fit_slope(lags, f, f_floor=1e-8)
    except ValueError as exc:
        return _unavail(f"envelope slope not resolved: {exc}")
    return Estimate(-s.slope, s.se, f"OLS over l in [{s.lag_lo:.3g}, {s.lag_hi:.3g}] (fit-quality error)")


def _closing_loop(fit: SDEFit, late, seed):
    """Simulate the fitted SDE and compare with the network's late zeta (KS, tail rate)."""
    from .simulate import DivergenceError, TabulatedDrift, simulate
    from .tails import tail_from_result

    d, j = fit.drift, fit.noise
    if not (fit.kappa.ok and fit.kappa.value > 0 and fit.noise.eta_g.ok) or \
            (fit.kappa.flag or "").startswith("no significant"):
        why = "no closing loop: " + (fit.kappa.flag or "kappa or eta_G unavailable")
        return _unavail(why), _unavail(why)
    F = d.F
    slope = np.polyfit(d.centers, F, 1)[0] if d.centers.size >= 2 else -1.0
    gamma = max(-slope, 1e-12)
    # the simulator requires max |dF/dz| dt <= 0.5 on the tabulated drift: stay below it
    local = np.max(np.abs(np.diff(F) / np.diff(d.centers))) if d.centers.size >= 2 else gamma
    dt = min(0.05 / gamma, 0.4 / max(local, 1e-300),
             float(np.median(np.diff(d.edges))) / max(np.max(np.abs(F)), 1e-300))
    # about 60 relaxation times, capped at 20,000 steps (a few seconds)
    n_steps = int(min(math.ceil(60.0 / (gamma * dt)), 20_000))
    t_end = n_steps * dt
    has_jumps = j.alpha.ok and j.eta_j.value > 0
    kw = dict(eta_j=j.eta_j.value if has_jumps else 0.0, eta_g=j.eta_g.value,
              alpha=j.alpha.value if has_jumps else 1.5, lam=max(j.lam.value, 0.0) if has_jumps else 1.0)
    try:
        res = simulate(kw.pop("eta_j"), drift=TabulatedDrift(d.centers, F), particles=1024,
                       dt=dt, t_end=t_end, burn_in=t_end / 6, seed=seed, n_groups=16,
                       bin_width=float(np.median(np.diff(d.edges))) / 4, **kw)
    except (DivergenceError, ValueError) as exc:
        return _unavail(f"closing-loop simulation failed: {exc}"), _unavail("closing-loop simulation failed")
    counts = res.hist_counts.sum(axis=0)
    ks = ks_to_histogram(late[np.isfinite(late)], res.hist_edges, counts)
    try:
        u = float(np.quantile(-late[np.isfinite(late)], 0.9))
        t = tail_from_result(res, u)
        tail = Estimate(t.beta_hat, t.se) if math.isfinite(t.beta_hat) else _unavail("no simulated tail beyond u")
    except (ValueError, KeyError) as exc:
        tail = _unavail(f"simulated tail not resolved: {exc}")
    return Estimate(ks, float("nan"), "KS distance between the network's late zeta and the fitted SDE"), tail


def check_run(path, *, variant: str = "gate", late_fraction: float = 0.5, n_boot: int = 400,
              seed: int = 0, closing_loop: bool = True) -> CheckReport:
    """Fit, predict and compare for one run file (see the module docstring).

    Parameters
    ----------
    path : run file of ``levysde train``
    variant : "gate" (zeta) or "jac" (the first-order zeta^(1), NaN where masked)
    late_fraction : in (0, 1]: the last fraction of records used as the late,
        stationary part (estimates are also reported for the spread early on)
    n_boot : bootstrap draws for the prediction's errors
    seed : seed of the bootstrap and of the closing-loop simulation
    closing_loop : simulate the fitted SDE (a few seconds)

    Returns
    -------
    CheckReport. Estimates that cannot be made carry a flag saying why.

    Raises
    ------
    ValueError for a bad file, variant or late_fraction.
    """
    if variant not in ("gate", "jac"):
        raise ValueError(f"variant must be 'gate' or 'jac'; got {variant!r}")
    if not 0 < late_fraction <= 1:
        raise ValueError(f"late_fraction must be in (0, 1]; got {late_fraction!r}")
    run = load_run_arrays(path)
    zeta = np.asarray(run["zeta" if variant == "gate" else "zeta_jac"], dtype=float)
    step = np.asarray(run["step"], dtype=float)
    R = zeta.shape[0]
    first = min(int(R * (1 - late_fraction)), max(R - 3, 0))
    late = zeta[first:]
    notes = []
    learned, loss_ratio = _learned(run, notes)
    try:
        fit = fit_sde(zeta, step, late_fraction=late_fraction)
    except ValueError as exc:
        fit = None
        notes.append(f"SDE fit unavailable: {exc}")
    prediction = predict(fit, n_boot=n_boot, seed=seed) if fit is not None else None
    if fit is not None:
        notes.extend(fit.notes)
    beta_tail = _beta_tail(late)
    beta_env = _beta_envelope(run["lags"], run["envelope"][-1]) if variant == "gate" else \
        _unavail("the recorded envelope is built from the gate variant")
    if fit is not None and closing_loop:
        ks, sim_tail = _closing_loop(fit, late, seed)
    else:
        ks, sim_tail = _unavail("closing loop not run"), _unavail("closing loop not run")
    early = zeta[: max(1, R // 10)]
    return CheckReport(variant=variant, fit=fit, prediction=prediction, beta_tail=beta_tail,
                       beta_envelope=beta_env, zeta_spread=spread(late[-1:]), early_spread=spread(early[-1:]),
                       ks=ks, beta_sim_tail=sim_tail, notes=notes, config=run["config"], learned=learned,
                       loss_ratio=loss_ratio)
