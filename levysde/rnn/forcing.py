r"""Slow-mode update-space forcing: the anti-collapse paper's Path A negative control (docs/rnn.md).

After every optimizer step (after clipping, weight decay and the AdamW update), on the rows
of the neuron tensors (leaky cells: ``W``, ``U``, ``b``, and for DiagGate ``W_a``, ``U_a``,
``b_a``; the readout and SharedGate's shared gate belong to no unit) that belong to the
*slow* units ``S``:

* :math:`\Delta` = the realized update of those rows (after minus before the step), per tensor;
* :math:`X` i.i.d. standard symmetric alpha-stable (:math:`\mathbb{E}\,e^{ikX} = e^{-|k|^\alpha}`,
  Chambers-Mallows-Stuck, :func:`levysde.rnn.tasks.sas_noise`), soft-tapered
  :math:`X \leftarrow c \tanh(X / c)` (:math:`c` = ``taper``, 100 in the paper);
* :math:`\mathrm{rows}_S \leftarrow \mathrm{rows}_S + \sigma X` with
  :math:`\sigma = s\,\mathrm{RMS}(\Delta)`,
  :math:`\mathrm{RMS}(\Delta) = \lVert\Delta\rVert_2 / \sqrt{n}` over the :math:`n` entries
  (:math:`s` = ``scale``, 1 in the paper), so the forcing is self-calibrated to the size of the optimizer's own update.

The slow units are the first :math:`\lceil qH \rceil` units at the start and, after every record
(checkpoint) past step 0, the units whose windowed time scale ``zeta_window`` is at or below
its ``q`` quantile (numpy's linear ``nanquantile`` over the units with a finite
``zeta_window``: the longest tau); units whose windowed fit is non-decaying (NaN) are not
chosen, and when no unit is finite the initial rows are kept (:func:`slow_mask_from_zeta`).
This is the selection rule of the paper's code (``lorenzolivi/anticollapse``,
``run_phase_trajectory.py``, read at commit 5bb4eeb), restated, not copied.

The noise of step s comes from a generator seeded by ``(seed + 1729, STREAM_NOISE, s)`` (the
paper's seed offset 1729; levysde draws per step so that a resumed run continues exactly), in
float64 on the CPU, then cast to the parameters' dtype and device.
"""
from __future__ import annotations

import math

import numpy as np

from levysde.core.validate import check_int, check_real
from levysde.rnn._torch import torch
from levysde.rnn.tasks import STREAM_NOISE, sas_noise, stream_generator

__all__ = ["SEED_OFFSET", "initial_slow_mask", "slow_mask_from_zeta", "SlowModeForcing"]

#: the paper's offset of the forcing generator's seed from the run seed
SEED_OFFSET = 1729


def initial_slow_mask(hidden: int, q: float) -> np.ndarray:
    r"""The slow units before any record: the first :math:`\max(1, \lceil qH \rceil)` units.

    This is the anti-collapse paper's mask before its first checkpoint.

    Parameters
    ----------
    hidden : int
        The number of units H, >= 1.
    q : float
        The fraction of units forced, in (0, 1).

    Returns
    -------
    numpy.ndarray
        Bool, shape (H,): True for the first :math:`\max(1, \lceil qH \rceil)` units.

    Raises
    ------
    ValueError
        Unless ``hidden`` >= 1 (named ``hidden``) and 0 < q < 1 (named ``slow_forcing_q``).

    Examples
    --------
    >>> initial_slow_mask(5, 0.3).tolist()
    [True, True, False, False, False]
    """
    H = check_int("hidden", hidden, 1)
    q = check_real("slow_forcing_q", q, 0.0, 1.0, lo_open=True, hi_open=True)
    mask = np.zeros(H, dtype=bool)
    mask[:max(1, math.ceil(q * H))] = True
    return mask


def slow_mask_from_zeta(zeta_window, q: float) -> np.ndarray:
    r"""The slow units after a record: the units whose windowed time scale is at or below its ``q`` quantile.

    Parameters
    ----------
    zeta_window : array_like of float
        Shape (H,): each unit's windowed log decay rate :math:`\zeta` (the run file's
        ``zeta_window`` at one record); NaN for a unit whose windowed fit is non-decaying.
    q : float
        The quantile level, in (0, 1).

    Returns
    -------
    numpy.ndarray
        Bool, shape (H,): True for the units with a finite :math:`\zeta_q \le Q_q`,
        :math:`Q_q` the ``q`` quantile of the finite values (numpy's linear
        ``quantile``), i.e. the longest time scales :math:`\tau = e^{-\zeta}`; the initial
        mask (:func:`initial_slow_mask`) when none is finite or none is selected.

    Raises
    ------
    ValueError
        Unless 0 < q < 1 (named ``slow_forcing_q``).

    References
    ----------
    The selection rule of the anti-collapse paper's code (``lorenzolivi/anticollapse``,
    ``run_phase_trajectory.py``), restated; see :doc:`/rnn`.

    Examples
    --------
    >>> slow_mask_from_zeta([-1.0, -3.0, float("nan"), -2.0, 0.0], 0.5).tolist()
    [False, True, False, True, False]
    """
    z = np.asarray(zeta_window, dtype=np.float64).reshape(-1)
    q = check_real("slow_forcing_q", q, 0.0, 1.0, lo_open=True, hi_open=True)
    ok = np.isfinite(z)
    mask = np.zeros(z.size, dtype=bool)
    if ok.any():
        mask = ok & (z <= np.quantile(z[ok], q))
    return mask if mask.any() else initial_slow_mask(z.size, q)


class SlowModeForcing:
    r"""The slow-mode update-space forcing of one run (module docstring).

    Use: ``before = f.snapshot()`` just before the optimizer step, ``f.apply(before, step)``
    just after it; the slow units may be replaced between steps (:meth:`set_mask`).

    Parameters
    ----------
    params : list of torch.Tensor
        The neuron tensors, each with the unit index as its leading dimension (H rows each).
        Modified in place by :meth:`apply`.
    alpha : float
        The stability index of the noise, in (0, 2] (the paper: 1.5).
    scale : float
        :math:`\sigma / \mathrm{RMS}(\Delta)`, > 0 (the paper: 1.0).
    taper : float
        The soft taper's bound :math:`c`, > 0 (the paper: 100).
    seed : int
        The run seed, >= 0 (the generator uses ``seed + SEED_OFFSET``).
    mask : array_like of bool
        Shape (H,): the slow units to start with, at least one True.

    Attributes
    ----------
    mask : numpy.ndarray
        Bool (H,): the slow units now.
    hidden : int
        The number of units H.

    Raises
    ------
    ValueError
        Naming the parameter (``slow_forcing_alpha``, ``slow_forcing_scale``,
        ``slow_forcing_taper``, ``seed``) out of its range; if ``params`` differ in their
        leading dimension, or ``mask`` has not H entries with at least one True.

    Notes
    -----
    For each tensor, with :math:`\Delta` the optimizer step's update of its slow rows and
    :math:`X` i.i.d. standard symmetric :math:`\alpha`-stable,
    :math:`\mathbb{E}\,e^{ikX} = e^{-|k|^\alpha}` (Chambers, Mallows & Stuck 1976),

    .. math::

        \mathrm{rows}_S \leftarrow \mathrm{rows}_S + \sigma\, c \tanh(X / c), \qquad
        \sigma = \mathrm{scale} \cdot \frac{\lVert \Delta \rVert_2}{\sqrt{\mathrm{numel}(\Delta)}},

    so the forcing is self-calibrated to the size of the optimizer's own update.

    References
    ----------
    The anti-collapse paper's Path A negative control (:doc:`/rnn`); J. M. Chambers,
    C. L. Mallows, B. W. Stuck, "A method for simulating stable random variables",
    JASA 71 (1976) 340-344.

    Examples
    --------
    >>> import torch
    >>> W = torch.zeros(4, 3)
    >>> f = SlowModeForcing([W], alpha=1.5, scale=1.0, taper=100.0, seed=0, mask=initial_slow_mask(4, 0.5))
    >>> before = f.snapshot()
    >>> with torch.no_grad():
    ...     W -= 0.1                      # the optimizer's step: every entry moved by 0.1
    >>> round(f.apply(before, step=1), 6)
    0.1
    >>> bool(torch.all(W[2:] == -0.1)), bool(torch.all(W[:2] != -0.1))
    (True, True)
    """

    def __init__(self, params, alpha: float, scale: float, taper: float, seed: int, mask):
        self.params = list(params)
        self.alpha = check_real("slow_forcing_alpha", alpha, 0.0, 2.0, lo_open=True)
        self.scale = check_real("slow_forcing_scale", scale, 0.0, lo_open=True)
        self.taper = check_real("slow_forcing_taper", taper, 0.0, lo_open=True)
        self.seed = check_int("seed", seed, 0)
        H = {int(p.shape[0]) for p in self.params}
        if len(H) != 1:
            raise ValueError(f"params must share their leading dimension (the units), got {sorted(H)}")
        self.hidden = H.pop()
        self.set_mask(mask)

    def set_mask(self, mask) -> None:
        """Replace the slow units (bool (H,), at least one True). Raises ValueError otherwise."""
        m = np.asarray(mask, dtype=bool).reshape(-1)
        if m.size != self.hidden or not m.any():
            raise ValueError(f"the slow-unit mask must have {self.hidden} entries, at least one True")
        self.mask = m
        self._rows = torch.from_numpy(np.flatnonzero(m)).to(self.params[0].device)

    @torch.no_grad()
    def snapshot(self) -> list:
        """Copies of the slow rows of every tensor (call just before the optimizer step)."""
        return [p.detach().index_select(0, self._rows).clone() for p in self.params]

    @torch.no_grad()
    def apply(self, before: list, step: int) -> float:
        """Add the forcing of step ``step`` to the slow rows, given their ``before`` snapshot.
        Returns the mean noise scale sigma over the tensors (0 when no row moved)."""
        g = stream_generator(self.seed + SEED_OFFSET, STREAM_NOISE, int(step))
        sigmas = []
        for p, b in zip(self.params, before, strict=True):
            delta = p.detach().index_select(0, self._rows).double() - b.double()
            rms = float(torch.linalg.vector_norm(delta)) / math.sqrt(max(delta.numel(), 1))
            sigma = self.scale * rms
            sigmas.append(sigma)
            if not sigma > 0:
                continue
            x = sas_noise(tuple(delta.shape), self.alpha, g, dtype=torch.float64)
            x = self.taper * torch.tanh(x / self.taper)
            p.index_add_(0, self._rows, (sigma * x).to(dtype=p.dtype, device=p.device))
        return float(np.mean(sigmas)) if sigmas else 0.0
