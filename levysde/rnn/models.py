r"""Gated recurrent models with per-neuron retention and one-step Jacobian diagonal (docs/specification.md §9).

Shapes: inputs ``x`` are ``(B, T, n_in)`` (batch first), outputs ``(B, T, n_out)``,
hidden size :math:`H`. Every model has a linear readout :math:`y_t = V h_t + c`.

Leaky family (one shared implementation, :class:`_Leaky`):

.. math::

    h_t = (1 - a_t)\, h_{t-1} + a_t \tanh(W h_{t-1} + U x_t + b)

.. list-table::
   :header-rows: 1

   * - model
     - gate :math:`a_t`
     - retention :math:`r_t^{(q)}`
   * - ConstGate
     - buffer, fixed at init, never trained (scalar or per neuron)
     - :math:`1 - a^{(q)}`
   * - SharedGate
     - :math:`\sigma(w \cdot h_{t-1} + u \cdot x_t + b_a)`, one scalar for all :math:`q`
     - :math:`1 - a_t`
   * - DiagGate
     - :math:`\sigma(W_a h_{t-1} + U_a x_t + b_a)`, one per neuron
     - :math:`1 - a_t^{(q)}`
   * - GRU
     - update gate :math:`z_t` of torch's nn.GRU, :math:`h_t = (1-z)\, n + z\, h`
     - :math:`z_t^{(q)}`
   * - LSTM
     - forget gate :math:`f_t` of torch's nn.LSTM (bias_ih + bias_hh)
     - :math:`f_t^{(q)}`

Training uses the fast path (``forward``; torch's fused kernels for GRU/LSTM).
Recording uses :meth:`RNNModel.trace`, a hand-written loop over the *same*
weights that also returns :math:`-\log r` (computed stably as a softplus of the gate
pre-activation, so saturated gates never give :math:`\log 0`) and the diagonal
:math:`J_t^{(qq)}` of the one-step state Jacobian:

* leaky cells: :math:`J = (1 - a) + a (1 - \tilde h^2) W_{qq} + (\tilde h - h_{t-1})\, \partial a/\partial h_q`
  with :math:`\partial a/\partial h_q = a(1-a) w_q` (SharedGate), :math:`a_q(1-a_q) (W_a)_{qq}`
  (DiagGate), 0 (ConstGate);
* GRU:

  .. math::

      J = z + (1-z)(1-n^2)\,[r W_{hn,qq} + (W_{hn} h + b_{hn})_q\, r(1-r) W_{hr,qq}]
          + (h - n)\, z(1-z) W_{hz,qq};

* LSTM: the state that carries memory is the cell :math:`c`.
  :math:`J_t^{(qq)} = \partial c_t^{(q)} / \partial c_{t-1}^{(q)}`
  *through* :math:`h_{t-1} = o_{t-1} \tanh(c_{t-1})` (:math:`o_{t-1}` held fixed, it depends on
  earlier inputs only):

  .. math::

      J = f + o_{t-1}(1 - \tanh^2 c_{t-1})\, [c_{t-1} f(1-f) W_{hf,qq}
          + g\, i(1-i) W_{hi,qq} + i (1-g^2) W_{hg,qq}].

  With frozen weights it reduces to :math:`f`.

Initialisation (``init``):

* ``"default"``: torch's defaults (uniform :math:`\pm 1/\sqrt{H}` for every weight and bias);
  ConstGate uses the scalar constant ``gate_a`` for every neuron.
* ``"chrono"`` (Tallec & Ollivier 2018): time-scale spread. Draw :math:`T_q \sim U[1, t_{\max} - 1]`
  per neuron; the retention gate bias is set so that the gate's time scale is about
  :math:`1 + T_q`: leaky cells :math:`b_a^{(q)} = -\log T_q` (so :math:`a = 1/(1+T_q)`; ConstGate
  gets the constants :math:`a_q = 1/(1+T_q)`; SharedGate uses one draw for its single gate),
  GRU :math:`b_z = +\log T_q`, LSTM :math:`b_f = +\log T_q` and :math:`b_i = -\log T_q`. The bias
  is put in ``bias_ih`` and the matching rows of ``bias_hh`` are zeroed.
* ``gate_tau0 = T0`` (the anti-collapse paper's init, :func:`apply_tau0_init`, applied after
  either): every unit starts at the time scale :math:`T_0`, i.e. :math:`-\log r = 1/T_0` and
  :math:`\zeta_q = -\log T_0`: the retention gate's weights are zero and its bias is
  :math:`\operatorname{logit}(s_0)`, :math:`s_0 = 1 - e^{-1/T_0}` (leaky gates, :math:`a = s_0`;
  ConstGate's constant is :math:`s_0`), :math:`\operatorname{logit}(1 - s_0)` for the GRU update
  gate :math:`z` and the LSTM forget gate :math:`f`. Every other
  2-D weight (per gate block for GRU/LSTM, the readout included) is ``nn.init.orthogonal_``;
  every other bias is zero.
"""
from __future__ import annotations

import math
from dataclasses import dataclass

from levysde.core.validate import check_array, check_choice, check_int, check_real
from levysde.rnn._torch import F, nn, torch

__all__ = ["MODELS", "INITS", "RNNModel", "Trace", "ConstGate", "SharedGate", "DiagGate", "GRU", "LSTM", "build_model",
           "tau0_gate", "apply_tau0_init", "TAU0_MIN", "TAU0_MAX"]

#: the range of the initial time scale :math:`\tau_0` (steps) of :func:`tau0_gate`; the gates are
#: float32, and beyond it the initial retention :math:`e^{-1/\tau_0}` comes within 5e-5 of 0 or 1e-5
#: of 1, where float32 rounding distorts its time scale (from about 3.4e7 steps on, 1 - s0 rounds to 1)
TAU0_MIN, TAU0_MAX = 0.1, 1e5
#: why tau0 is bounded (the errors' wording)
TAU0_WHY = ("steps; the gates are float32: beyond this range the initial retention exp(-1/tau0) comes within "
            "5e-5 of 0 or 1e-5 of 1, where float32 rounding distorts or loses its time scale")

#: the model names of :func:`build_model`
MODELS = ("constgate", "sharedgate", "diaggate", "gru", "lstm")
#: the initialisations (module docstring)
INITS = ("default", "chrono")


@dataclass
class Trace:
    r"""Per-step quantities of one forward pass (no grad), returned by :meth:`RNNModel.trace`.

    All ``(B, T, H)`` in the model's dtype (ConstGate's ``neg_log_r`` is float64), but ``y``.

    Attributes
    ----------
    h : torch.Tensor
        The hidden state :math:`h_t` (for the LSTM: :math:`h_t`, not the cell state).
    r : torch.Tensor
        The retention :math:`r^{(q)}_t \in [0, 1]` (the specification, §9, table).
    neg_log_r : torch.Tensor
        :math:`-\log r^{(q)}_t \ge 0`, computed stably from the gate pre-activation (a
        softplus, so a saturated gate never gives :math:`\log 0`).
    jac : torch.Tensor
        The diagonal :math:`J^{(qq)}_t` of the one-step state Jacobian (module docstring).
    y : torch.Tensor
        The readout, ``(B, T, n_out)``.
    rdiag : torch.Tensor or None
        Leaky cells, only when asked for (``trace(x, rdiag=True)``), else None: the
        first-order correction
        :math:`J^{(qq)}_t - r^{(q)}_t = a (1 - \tilde h^2) W_{qq} + (\tilde h - h_{t-1})\, \partial a / \partial h_q`,
        computed on its own (not as a difference).

    Examples
    --------
    >>> m = build_model("diaggate", 1, 4, 1, seed=0)
    >>> tr = m.trace(torch.randn(2, 8, 1, generator=torch.Generator().manual_seed(0)), rdiag=True)
    >>> tuple(tr.h.shape), tuple(tr.y.shape), bool(torch.allclose(tr.neg_log_r, -torch.log(tr.r)))
    ((2, 8, 4), (2, 8, 1), True)
    >>> bool(torch.allclose(tr.rdiag, tr.jac - tr.r, atol=1e-6))
    True
    """

    h: torch.Tensor
    r: torch.Tensor
    neg_log_r: torch.Tensor
    jac: torch.Tensor
    y: torch.Tensor
    rdiag: torch.Tensor | None = None


def _chrono_T(n: int, t_max: float, generator: torch.Generator | None) -> torch.Tensor:
    """``n`` draws of ``T ~ U[1, t_max - 1]`` (chrono init); requires t_max > 2."""
    check_real("t_max", t_max, 2.0, lo_open=True, why="chrono init")
    u = torch.rand(n, generator=generator, dtype=torch.float64)
    return (1.0 + u * (t_max - 2.0)).float()


class RNNModel(nn.Module):
    """Common interface of the five models (a :class:`torch.nn.Module`).

    Build one with :func:`build_model`. ``forward(x)`` is the differentiable readout from the
    zero state; :meth:`trace` the recording pass (:class:`Trace`).

    Parameters
    ----------
    n_in : int
        Inputs per step, >= 1.
    hidden : int
        H, the units, >= 1.
    n_out : int
        Outputs per step, >= 1.

    Attributes
    ----------
    n_in, hidden, n_out : int
        As given (``hidden`` is H).
    name : str
        One of :data:`MODELS`.
    readout : torch.nn.Linear
        The readout :math:`y_t = V h_t + c`, H -> n_out.

    Raises
    ------
    ValueError
        If a size is not an integer >= 1 (naming it).

    Examples
    --------
    >>> m = build_model("gru", 1, 4, 1, seed=0)
    >>> isinstance(m, RNNModel), m.name, m.hidden
    (True, 'gru', 4)
    >>> tuple(m(torch.zeros(2, 8, 1)).shape)
    (2, 8, 1)
    """

    name = "?"

    def _check_input(self, x):
        """Raise ValueError unless x has shape (B, T, n_in)."""
        if x.dim() != 3 or x.shape[-1] != self.n_in:
            raise ValueError(f"x must have shape (B, T, {self.n_in}), got {tuple(x.shape)}")

    def __init__(self, n_in: int, hidden: int, n_out: int):
        super().__init__()
        self.n_in, self.hidden, self.n_out = (check_int(k, v, 1) for k, v in
                                              (("n_in", n_in), ("hidden", hidden), ("n_out", n_out)))

    # --- to implement -------------------------------------------------------------
    def forward(self, x: torch.Tensor) -> torch.Tensor:
        """Readout ``(B, T, n_out)`` for input ``x`` ``(B, T, n_in)`` from the zero state (differentiable)."""
        return self.forward_state(x, None)[0]

    def forward_state(self, x: torch.Tensor, state=None):  # pragma: no cover - abstract
        """``(readout (B, T, n_out), final state)`` from the initial ``state`` (None: zeros).
        The state is a tensor (B, H) (leaky, GRU) or a pair ``(h, c)`` (LSTM); pass it back
        (detached) to continue a stream: truncated backpropagation through time."""
        raise NotImplementedError

    def trace(self, x: torch.Tensor) -> Trace:  # pragma: no cover - abstract
        """Hand-written pass over the same weights returning a :class:`Trace` (no grad)."""
        raise NotImplementedError

    def neuron_rows(self) -> list[tuple[nn.Parameter, int]]:  # pragma: no cover - abstract
        """Trainable tensors with per-neuron rows, as ``(param, k)``: ``param`` has ``k*H`` rows
        and row ``j`` belongs to neuron ``j % H`` (used for Lambda_q, docs/specification.md §9)."""
        raise NotImplementedError

    def gate_mask(self, p: nn.Parameter) -> torch.Tensor | bool:  # pragma: no cover
        """Which entries of ``p`` are retention-gate parameters: True (all), False (none) or a
        bool tensor shaped like ``p`` (rows of a fused GRU/LSTM tensor)."""
        raise NotImplementedError

    def recurrent_mask(self, p: nn.Parameter) -> torch.Tensor | bool:  # pragma: no cover
        """Which entries of ``p`` are recurrent (hidden-to-hidden) weights, same convention."""
        raise NotImplementedError

    def width_scaled(self, p: nn.Parameter) -> bool:
        """True for the matrices whose fan-in is the width H (hidden-to-hidden weights, gate
        weights on h, the readout weight): the tensors whose Adam learning rate muP scales as
        1/H (Yang et al. 2021, Tensor Programs V, Table 3). Input weights and biases: False."""
        return any(p is q for q in self._hidden_matrices()) or p is self.readout.weight

    def _hidden_matrices(self):  # pragma: no cover - abstract
        raise NotImplementedError

    def has_trained_gate(self) -> bool:
        return any(self.gate_mask(p) is not False for p in self.parameters())


# ----------------------------------------------------------------------------------
# Leaky family
# ----------------------------------------------------------------------------------
class _Leaky(RNNModel):
    """Shared code of ConstGate / SharedGate / DiagGate.

    ``n_gate`` gate pre-activations per step: 0 (ConstGate), 1 (SharedGate), H (DiagGate).
    The recurrent and input weights of candidate and gate are stacked so one step is
    one matmul: ``z = h @ W_rec.T + (x @ U_in.T + b_in)[t]``, ``W_rec = [W; W_a]``.
    """

    n_gate_fn = staticmethod(lambda H: 0)

    def __init__(self, n_in, hidden, n_out, init="default", t_max=None, gate_a=0.1,
                 generator=None, layernorm=False):
        super().__init__(n_in, hidden, n_out)
        check_choice("init", init, INITS)
        H = hidden
        #: LayerNorm of the candidate's pre-activation before tanh (the learnability paper's), or None
        self.ln = nn.LayerNorm(H) if layernorm else None
        G = self.n_gate_fn(H)
        self.n_gate = G
        k = 1.0 / math.sqrt(H)

        def uni(*shape):
            return nn.Parameter((torch.rand(*shape, generator=generator) * 2 - 1) * k)

        self.W = uni(H, H)
        self.U = uni(H, n_in)
        self.b = uni(H)
        if G:
            self.W_a = uni(G, H)
            self.U_a = uni(G, n_in)
            self.b_a = uni(G)
            if init == "chrono":
                T = _chrono_T(G, t_max, generator)
                with torch.no_grad():
                    self.b_a.copy_(-torch.log(T))
        self.readout = nn.Linear(H, n_out)
        with torch.no_grad():
            self.readout.weight.copy_((torch.rand(n_out, H, generator=generator) * 2 - 1) * k)
            self.readout.bias.copy_((torch.rand(n_out, generator=generator) * 2 - 1) * k)

    # pieces specialised by the three models ---------------------------------------
    def _gate(self, zg: torch.Tensor | None) -> torch.Tensor:
        """Gate a from its pre-activation ``zg`` (B, G): (B, G) broadcastable to (B, H)."""
        return torch.sigmoid(zg)

    def _neg_log_ret(self, zg, a):
        """-log(1 - a) = softplus(zg), stable for saturated gates."""
        return F.softplus(zg)

    def _dgate_diag(self, a):
        """d a^(q) / d h_{t-1}^(q), (B, H) or broadcastable."""
        raise NotImplementedError

    # shared forward ------------------------------------------------------------------
    def _stack(self):
        if self.n_gate:
            return (torch.cat([self.W, self.W_a], 0), torch.cat([self.U, self.U_a], 0),
                    torch.cat([self.b, self.b_a], 0))
        return self.W, self.U, self.b

    def _run(self, x: torch.Tensor, record: bool, h0: torch.Tensor | None = None, rdiag: bool = False):
        self._check_input(x)
        H = self.hidden
        W_rec, U_in, b_in = self._stack()
        inp = torch.addmm(b_in, x.reshape(-1, self.n_in), U_in.t()).reshape(x.shape[0], x.shape[1], -1)
        h = x.new_zeros(x.shape[0], H) if h0 is None else h0
        W_rec_t = W_rec.t()
        hs, rs, nlr, jac, rds = [], [], [], [], []
        if record:
            w_diag = torch.diagonal(self.W)
        for inp_t in inp.unbind(1):
            z = torch.addmm(inp_t, h, W_rec_t)
            if self.ln is None:
                ht = torch.tanh(z[:, :H])
            else:
                ht = torch.tanh(self.ln(z[:, :H]))
                if record:
                    w_diag = self._ln_diag(z[:, :H])
            zg = z[:, H:] if self.n_gate else None
            a = self._gate(zg)
            h_new = h + a * (ht - h)
            if record:
                r = (1.0 - a).expand_as(h)
                rs.append(r)
                nlr.append(self._neg_log_ret(zg, a).expand_as(h))
                j = (1.0 - a) + a * (1.0 - ht * ht) * w_diag
                if self.n_gate:
                    j = j + (ht - h) * self._dgate_diag(a)
                jac.append(j.expand_as(h))
                if rdiag:
                    rd = a * (1.0 - ht * ht) * w_diag
                    rds.append((rd + (ht - h) * self._dgate_diag(a) if self.n_gate else rd).expand_as(h))
            h = h_new
            hs.append(h)
        hseq = torch.stack(hs, 1)
        if record is None:
            return hseq
        y = self.readout(hseq)
        if not record:
            return y, h
        return Trace(h=hseq, r=torch.stack(rs, 1), neg_log_r=torch.stack(nlr, 1),
                     jac=torch.stack(jac, 1), y=y, rdiag=torch.stack(rds, 1) if rdiag else None)

    def _ln_diag(self, pre):
        """With LayerNorm, ``d LN(pre)_q / d h_q`` (B, H): ``g_q / s (W_qq - mean_k W_kq - zh_q
        mean_k zh_k W_kq)``, ``zh = (pre - mean) / s``, ``s = sqrt(var + eps)`` (the diagonal of
        the LayerNorm Jacobian times W; it replaces ``W_qq`` in the Jacobian diagonal)."""
        mu = pre.mean(1, keepdim=True)
        s = torch.sqrt(pre.var(1, unbiased=False, keepdim=True) + self.ln.eps)
        zh = (pre - mu) / s
        H = self.hidden
        return self.ln.weight / s * (torch.diagonal(self.W) - self.W.mean(0) - zh * (zh @ self.W) / H)

    def forward_state(self, x, state=None):
        return self._run(x, record=False, h0=state)

    def hidden_states(self, x: torch.Tensor, h0: torch.Tensor | None = None) -> torch.Tensor:
        """Differentiable hidden states ``(B, T, H)`` from initial state ``h0`` ``(B, H)`` (default 0)."""
        return self._run(x, record=None, h0=h0)

    @torch.no_grad()
    def trace(self, x, rdiag: bool = False):
        return self._run(x, record=True, rdiag=rdiag)

    def neuron_rows(self):
        return [(self.W, 1), (self.U, 1), (self.b, 1)] + (
            [(self.W_a, 1), (self.U_a, 1), (self.b_a, 1)] if self.n_gate == self.hidden else [])

    def gate_mask(self, p):
        if self.n_gate and any(p is q for q in (self.W_a, self.U_a, self.b_a)):
            return True
        return False

    def recurrent_mask(self, p):
        return p is self.W

    def _hidden_matrices(self):
        return (self.W, self.W_a) if self.n_gate else (self.W,)


class ConstGate(_Leaky):
    r"""Leaky cell with a fixed gate (docs/specification.md §9): ``a`` is a buffer, never trained.

    :math:`h_t = (1 - a) h_{t-1} + a \tanh(W h_{t-1} + U x_t + b)`; with ``init="chrono"`` the
    constants are :math:`a_q = 1/(1 + T_q)`, :math:`T_q \sim U[1, t_{\max} - 1]`. Retention
    :math:`r = 1 - a`, :math:`-\log r = -\log(1 - a)` (exact, constant, kept in float64).

    Parameters
    ----------
    n_in : int
        Inputs per step, >= 1.
    hidden : int
        H, the units, >= 1.
    n_out : int
        Outputs per step, >= 1.
    init : {"default", "chrono"}, optional
        The initialisation (module docstring); ``chrono`` needs ``t_max``.
    t_max : float or None, optional
        The chrono init's longest time scale, > 2 (``init="chrono"`` only).
    gate_a : float or sequence of float, optional
        The constant gate(s) :math:`a^{(q)}` in (0, 1): a scalar for every unit or H values
        (default 0.1; ignored with ``init="chrono"``).
    generator : torch.Generator or None, optional
        Where the initial weights come from; None: torch's global RNG
        (:func:`build_model` seeds one).
    layernorm : bool, optional
        LayerNorm of the candidate's pre-activation before tanh (the learnability paper's);
        default False.

    Attributes
    ----------
    a : torch.Tensor
        (H,): the constant gates.

    Raises
    ------
    ValueError
        If a constant is outside (0, 1) or has the wrong length, or ``init``/sizes are bad.

    Examples
    --------
    >>> m = ConstGate(1, 4, 1, gate_a=[0.1, 0.2, 0.3, 0.4])
    >>> tr = m.trace(torch.zeros(1, 3, 1))
    >>> [round(v, 4) for v in tr.neg_log_r[0, 0].tolist()]
    [0.1054, 0.2231, 0.3567, 0.5108]
    """

    name = "constgate"

    def __init__(self, n_in, hidden, n_out, init="default", t_max=None, gate_a=0.1, generator=None,
                 layernorm=False):
        super().__init__(n_in, hidden, n_out, init=init, t_max=t_max, generator=generator, layernorm=layernorm)
        if init == "chrono":
            a = 1.0 / (1.0 + _chrono_T(hidden, t_max, generator).double())
        else:
            a = torch.as_tensor(gate_a, dtype=torch.float64).flatten()
            if a.numel() == 1:
                a = a.expand(hidden).clone()
            if a.numel() != hidden:
                raise ValueError(f"gate_a must be a scalar or have length hidden={hidden}, "
                                 f"got {a.numel()} values")
            check_array("gate_a", a.numpy(), lo=0.0, hi=1.0, lo_open=True, hi_open=True)
        self.register_buffer("a", a.float())
        # -log(1 - a) kept in float64 (a buffer: follows .to(device), and .double())
        self.register_buffer("neg_log_r_const", -torch.log1p(-a))

    def _gate(self, zg):
        return self.a

    def _neg_log_ret(self, zg, a):
        return self.neg_log_r_const

    def _apply(self, fn, *args, **kwargs):
        # keep -log(1 - a) in float64 when the module is cast to float32 (.float(), .to(dtype))
        out = super()._apply(fn, *args, **kwargs)
        self.neg_log_r_const = self.neg_log_r_const.to(torch.float64)
        return out


class SharedGate(_Leaky):
    r"""Leaky cell with one trained scalar gate shared by all neurons (docs/specification.md §9).

    :math:`a_t = \sigma(w \cdot h_{t-1} + u \cdot x_t + b_a)`, retention :math:`r_t = 1 - a_t`
    for every unit; trained parameters ``W_a`` (1, H) = :math:`w`, ``U_a`` (1, n_in) =
    :math:`u`, ``b_a`` (1,) besides the candidate's ``W``, ``U``, ``b``.

    Parameters
    ----------
    n_in : int
        Inputs per step, >= 1.
    hidden : int
        H, the units, >= 1.
    n_out : int
        Outputs per step, >= 1.
    init : {"default", "chrono"}, optional
        The initialisation (module docstring); ``chrono`` needs ``t_max``.
    t_max : float or None, optional
        The chrono init's longest time scale, > 2 (``init="chrono"`` only).
    generator : torch.Generator or None, optional
        Where the initial weights come from; None: torch's global RNG
        (:func:`build_model` seeds one).
    layernorm : bool, optional
        LayerNorm of the candidate's pre-activation before tanh (the learnability paper's);
        default False.

    Examples
    --------
    >>> m = SharedGate(1, 4, 1, generator=torch.Generator().manual_seed(0))
    >>> tuple(m.W_a.shape), tuple(m.b_a.shape)
    ((1, 4), (1,))
    >>> r = m.trace(torch.zeros(2, 3, 1)).r
    >>> bool(torch.all(r == r[..., :1]))       # one retention for every unit
    True
    """

    name = "sharedgate"
    n_gate_fn = staticmethod(lambda H: 1)

    def _dgate_diag(self, a):
        return a * (1.0 - a) * self.W_a[0]


class DiagGate(_Leaky):
    r"""Leaky cell with a trained per-neuron gate (docs/specification.md §9).

    :math:`a_t = \sigma(W_a h_{t-1} + U_a x_t + b_a)`, retention :math:`r^{(q)}_t = 1 - a^{(q)}_t`;
    trained parameters ``W_a`` (H, H), ``U_a`` (H, n_in), ``b_a`` (H,) besides the
    candidate's ``W``, ``U``, ``b``.

    Parameters
    ----------
    n_in : int
        Inputs per step, >= 1.
    hidden : int
        H, the units, >= 1.
    n_out : int
        Outputs per step, >= 1.
    init : {"default", "chrono"}, optional
        The initialisation (module docstring); ``chrono`` needs ``t_max``.
    t_max : float or None, optional
        The chrono init's longest time scale, > 2 (``init="chrono"`` only).
    generator : torch.Generator or None, optional
        Where the initial weights come from; None: torch's global RNG
        (:func:`build_model` seeds one).
    layernorm : bool, optional
        LayerNorm of the candidate's pre-activation before tanh (the learnability paper's);
        default False.

    Examples
    --------
    >>> m = DiagGate(1, 4, 1, init="chrono", t_max=100.0, generator=torch.Generator().manual_seed(0))
    >>> [round(v, 2) for v in m.b_a.tolist()]      # chrono: b_a = -log T_q
    [-3.14, -4.02, -4.07, -4.22]
    """

    name = "diaggate"
    n_gate_fn = staticmethod(lambda H: H)

    def _dgate_diag(self, a):
        return a * (1.0 - a) * torch.diagonal(self.W_a)


# ----------------------------------------------------------------------------------
# GRU / LSTM on torch's own modules
# ----------------------------------------------------------------------------------
class _TorchCell(RNNModel):
    """GRU/LSTM built on ``nn.GRU`` / ``nn.LSTM`` (one layer, batch_first). ``k`` stacked gates;
    ``ret`` is the index of the retention gate in torch's row order."""

    k = 0
    ret = 0
    module_cls = None

    def __init__(self, n_in, hidden, n_out, init="default", t_max=None, gate_a=None, generator=None):
        super().__init__(n_in, hidden, n_out)
        check_choice("init", init, INITS)
        self.rnn = self.module_cls(n_in, hidden, batch_first=True)
        H = hidden
        kk = 1.0 / math.sqrt(H)
        with torch.no_grad():  # torch's default init, drawn from our generator
            for p in self.rnn.parameters():
                p.copy_((torch.rand(p.shape, generator=generator) * 2 - 1) * kk)
        self.readout = nn.Linear(H, n_out)
        with torch.no_grad():
            self.readout.weight.copy_((torch.rand(n_out, H, generator=generator) * 2 - 1) * kk)
            self.readout.bias.copy_((torch.rand(n_out, generator=generator) * 2 - 1) * kk)
        if init == "chrono":
            logT = torch.log(_chrono_T(H, t_max, generator))
            self._chrono(logT)

    def _rows(self, g):
        return slice(g * self.hidden, (g + 1) * self.hidden)

    def _chrono(self, logT):
        with torch.no_grad():
            s = self._rows(self.ret)
            self.rnn.bias_ih_l0[s] = logT
            self.rnn.bias_hh_l0[s] = 0.0

    def weights(self):
        """``(W_ih (kH, n_in), W_hh (kH, H), b_ih (kH,), b_hh (kH,))`` of torch's module."""
        r = self.rnn
        return r.weight_ih_l0, r.weight_hh_l0, r.bias_ih_l0, r.bias_hh_l0

    def forward_state(self, x, state=None):
        self._check_input(x)
        if state is not None and not isinstance(state, tuple):
            state = state[None]
        elif state is not None:
            state = tuple(s[None] for s in state)
        out, st = self.rnn(x, state)
        st = st[0] if not isinstance(st, tuple) else tuple(s[0] for s in st)
        return self.readout(out), st

    def neuron_rows(self):
        return [(p, self.k) for p in self.weights()]

    def _row_mask(self, p, g):
        m = torch.zeros(p.shape, dtype=torch.bool, device=p.device)
        m[self._rows(g)] = True
        return m

    def gate_mask(self, p):
        if any(p is q for q in self.weights()):
            return self._row_mask(p, self.ret)
        return False

    def recurrent_mask(self, p):
        return p is self.rnn.weight_hh_l0

    def _hidden_matrices(self):
        return (self.rnn.weight_hh_l0,)


class GRU(_TorchCell):
    r"""GRU on ``nn.GRU`` (rows r, z, n); retention = the update gate :math:`z_t` (docs/specification.md §9).

    .. math::

        r = \sigma(W_{ir} x + b_{ir} + W_{hr} h + b_{hr}), \quad
        z = \sigma(W_{iz} x + b_{iz} + W_{hz} h + b_{hz}),

        n = \tanh\big(W_{in} x + b_{in} + r \odot (W_{hn} h + b_{hn})\big), \quad
        h' = (1 - z) \odot n + z \odot h,

    and :math:`-\log z = \operatorname{softplus}(-\mathrm{pre}_z)`.

    Parameters
    ----------
    n_in, hidden, n_out : int
        Inputs, units H, outputs; each >= 1.
    init : {"default", "chrono"}, optional
        The initialisation (module docstring; chrono: :math:`b_z = \log T_q`).
    t_max : float or None, optional
        The chrono init's longest time scale, > 2 (``init="chrono"`` only).
    gate_a : None
        Unused (the leaky models' argument).
    generator : torch.Generator or None, optional
        Where the initial weights come from; None: torch's global RNG.

    References
    ----------
    K. Cho et al., "Learning phrase representations using RNN encoder-decoder for
    statistical machine translation", EMNLP 2014.

    Examples
    --------
    >>> m = GRU(1, 4, 1, generator=torch.Generator().manual_seed(0))
    >>> tr = m.trace(torch.zeros(2, 8, 1))
    >>> tuple(tr.jac.shape), bool(torch.allclose(m(torch.zeros(2, 8, 1)), tr.y, atol=1e-6))
    ((2, 8, 4), True)
    """

    name = "gru"
    k, ret = 3, 1
    module_cls = nn.GRU

    @torch.no_grad()
    def trace(self, x):
        self._check_input(x)
        H = self.hidden
        W_ih, W_hh, b_ih, b_hh = self.weights()
        inp = (x @ W_ih.t() + b_ih).unbind(1)
        d_r, d_z, d_n = (torch.diagonal(W_hh[self._rows(g)]) for g in range(3))
        h = x.new_zeros(x.shape[0], H)
        hs, rs, nlr, jac = [], [], [], []
        for gi in inp:
            gh = h @ W_hh.t() + b_hh
            pre_r = gi[:, :H] + gh[:, :H]
            pre_z = gi[:, H:2 * H] + gh[:, H:2 * H]
            rg, z = torch.sigmoid(pre_r), torch.sigmoid(pre_z)
            hn = gh[:, 2 * H:]
            n = torch.tanh(gi[:, 2 * H:] + rg * hn)
            j = z + (1 - z) * (1 - n * n) * (rg * d_n + hn * rg * (1 - rg) * d_r) \
                + (h - n) * z * (1 - z) * d_z
            h = (1 - z) * n + z * h
            hs.append(h), rs.append(z), nlr.append(F.softplus(-pre_z)), jac.append(j)
        hseq = torch.stack(hs, 1)
        return Trace(h=hseq, r=torch.stack(rs, 1), neg_log_r=torch.stack(nlr, 1),
                     jac=torch.stack(jac, 1), y=self.readout(hseq))


class LSTM(_TorchCell):
    r"""LSTM on ``nn.LSTM`` (rows i, f, g, o); retention = the forget gate (docs/specification.md §9).

    :math:`f = \sigma(W_{if} x + W_{hf} h + b_{if} + b_{hf})` (both torch biases summed),
    :math:`-\log f = \operatorname{softplus}(-\mathrm{pre}_f)`. The Jacobian diagonal is
    :math:`\partial c_t / \partial c_{t-1}` of the cell state (module docstring).

    Parameters
    ----------
    n_in, hidden, n_out : int
        Inputs, units H, outputs; each >= 1.
    init : {"default", "chrono"}, optional
        The initialisation (module docstring; chrono: :math:`b_f = \log T_q`,
        :math:`b_i = -\log T_q`).
    t_max : float or None, optional
        The chrono init's longest time scale, > 2 (``init="chrono"`` only).
    gate_a : None
        Unused (the leaky models' argument).
    generator : torch.Generator or None, optional
        Where the initial weights come from; None: torch's global RNG.

    References
    ----------
    S. Hochreiter, J. Schmidhuber, "Long short-term memory", Neural Computation 9 (1997);
    C. Tallec, Y. Ollivier, "Can recurrent neural networks warp time?", ICLR 2018 (chrono).

    Examples
    --------
    >>> m = LSTM(1, 4, 1, init="chrono", t_max=50.0, generator=torch.Generator().manual_seed(0))
    >>> tr = m.trace(torch.zeros(2, 8, 1))
    >>> tuple(tr.r.shape), bool(torch.all((tr.r > 0) & (tr.r < 1)))
    ((2, 8, 4), True)
    """

    name = "lstm"
    k, ret = 4, 1
    module_cls = nn.LSTM

    def _chrono(self, logT):
        super()._chrono(logT)
        with torch.no_grad():
            s = self._rows(0)
            self.rnn.bias_ih_l0[s] = -logT
            self.rnn.bias_hh_l0[s] = 0.0

    @torch.no_grad()
    def trace(self, x):
        self._check_input(x)
        H = self.hidden
        W_ih, W_hh, b_ih, b_hh = self.weights()
        inp = (x @ W_ih.t() + (b_ih + b_hh)).unbind(1)
        d_i, d_f, d_g = (torch.diagonal(W_hh[self._rows(g)]) for g in range(3))
        B = x.shape[0]
        h = x.new_zeros(B, H)
        c = x.new_zeros(B, H)
        dh_dc = x.new_zeros(B, H)  # o_{t-1} (1 - tanh^2 c_{t-1}); zero at t = 0 (h_0 fixed)
        hs, rs, nlr, jac = [], [], [], []
        for gi in inp:
            pre = gi + h @ W_hh.t()
            i = torch.sigmoid(pre[:, :H])
            pre_f = pre[:, H:2 * H]
            f = torch.sigmoid(pre_f)
            g = torch.tanh(pre[:, 2 * H:3 * H])
            o = torch.sigmoid(pre[:, 3 * H:])
            j = f + dh_dc * (c * f * (1 - f) * d_f + g * i * (1 - i) * d_i + i * (1 - g * g) * d_g)
            c = f * c + i * g
            tc = torch.tanh(c)
            h = o * tc
            dh_dc = o * (1 - tc * tc)
            hs.append(h), rs.append(f), nlr.append(F.softplus(-pre_f)), jac.append(j)
        hseq = torch.stack(hs, 1)
        return Trace(h=hseq, r=torch.stack(rs, 1), neg_log_r=torch.stack(nlr, 1),
                     jac=torch.stack(jac, 1), y=self.readout(hseq))


_CLASSES = {"constgate": ConstGate, "sharedgate": SharedGate, "diaggate": DiagGate,
            "gru": GRU, "lstm": LSTM}


def tau0_gate(tau0: float) -> float:
    r"""The gate value :math:`s_0 = 1 - e^{-1/\tau_0}` whose retention has time scale :math:`\tau_0`.

    Parameters
    ----------
    tau0 : float
        The time scale :math:`\tau_0` in steps, in [:data:`TAU0_MIN`, :data:`TAU0_MAX`] = [0.1, 1e5].

    Returns
    -------
    float
        :math:`s_0`, so that :math:`-1/\log(1 - s_0) = \tau_0` (computed with ``expm1``).

    Raises
    ------
    ValueError
        Unless ``tau0`` is finite and in [0.1, 1e5] (naming ``gate_tau0`` and the range).

    Examples
    --------
    >>> round(tau0_gate(200.0), 7)      # the paper's 0.005 is tau0 = 199.5
    0.0049875
    >>> round(tau0_gate(199.5), 6)
    0.005
    """
    return -math.expm1(-1.0 / check_real("gate_tau0", tau0, TAU0_MIN, TAU0_MAX, why=TAU0_WHY))


def _orthogonal(shape, generator) -> torch.Tensor:
    """``nn.init.orthogonal_`` of a new tensor, its QR factorisation on one thread: LAPACK's
    blocked QR rounds differently with the thread count, and a seed must fix the init."""
    w = torch.empty(shape)
    threads = torch.get_num_threads()
    torch.set_num_threads(1)
    try:
        nn.init.orthogonal_(w, generator=generator)
    finally:
        torch.set_num_threads(threads)
    return w


@torch.no_grad()
def apply_tau0_init(model: RNNModel, tau0: float, generator: torch.Generator | None = None) -> RNNModel:
    r"""The anti-collapse paper's init (module docstring), in place: every unit starts at time scale :math:`\tau_0`.

    The retention gate's weights are zero and its bias gives :math:`s_0` (:func:`tau0_gate`);
    every other matrix is orthogonal (``nn.init.orthogonal_``, drawn from ``generator``);
    every other bias is zero.

    Parameters
    ----------
    model : RNNModel
        The model, modified in place.
    tau0 : float
        :math:`\tau_0` in steps, in [:data:`TAU0_MIN`, :data:`TAU0_MAX`] = [0.1, 1e5].
    generator : torch.Generator or None, optional
        Where the orthogonal matrices come from; None: torch's global RNG.

    Returns
    -------
    RNNModel
        ``model`` itself.

    Raises
    ------
    ValueError
        Unless ``tau0`` is finite and in [0.1, 1e5] (:func:`tau0_gate`).

    Examples
    --------
    >>> m = apply_tau0_init(build_model("diaggate", 1, 4, 1, seed=0), 10.0, torch.Generator().manual_seed(0))
    >>> zeta = torch.log(m.trace(torch.zeros(1, 5, 1)).neg_log_r.mean())
    >>> round(float(zeta), 4), round(-math.log(10.0), 4)      # zeta_q = -log tau0
    (-2.3026, -2.3026)
    >>> bool(torch.allclose(m.W @ m.W.T, torch.eye(4), atol=1e-6))
    True
    """
    s0 = tau0_gate(tau0)
    logit = math.log(s0) - math.log1p(-s0)
    if isinstance(model, _Leaky):
        model.W.copy_(_orthogonal(model.W.shape, generator))
        model.U.copy_(_orthogonal(model.U.shape, generator))
        model.b.zero_()
        if model.n_gate:
            model.W_a.zero_(), model.U_a.zero_(), model.b_a.fill_(logit)
        else:
            a = torch.full((model.hidden,), s0, dtype=torch.float64)
            model.a.copy_(a.to(model.a.dtype))
            model.neg_log_r_const.copy_(-torch.log1p(-a))
    else:
        W_ih, W_hh, b_ih, b_hh = model.weights()
        H = model.hidden
        for g in range(model.k):
            s = slice(g * H, (g + 1) * H)
            if g == model.ret:
                W_ih[s], W_hh[s] = 0.0, 0.0
            else:
                W_ih[s] = _orthogonal((H, model.n_in), generator)
                W_hh[s] = _orthogonal((H, H), generator)
        b_ih.zero_(), b_hh.zero_()
        b_ih[model.ret * H:(model.ret + 1) * H] = -logit
    model.readout.weight.copy_(_orthogonal(model.readout.weight.shape, generator))
    model.readout.bias.zero_()
    return model


def build_model(name: str, n_in: int, hidden: int, n_out: int, *, init: str = "default",
                t_max: float | None = None, gate_a=0.1, seed: int | None = None,
                gate_tau0: float | None = None, layernorm: bool = False) -> RNNModel:
    r"""Build model ``name``, its weights drawn from a generator seeded by ``seed``.

    Parameters
    ----------
    name : str
        One of :data:`MODELS` (``constgate``, ``sharedgate``, ``diaggate``, ``gru``, ``lstm``).
    n_in : int
        Inputs per step, >= 1.
    hidden : int
        H, the units, >= 1.
    n_out : int
        Outputs per step, >= 1.
    init : {"default", "chrono"}, optional
        The initialisation (module docstring).
    t_max : float or None, optional
        Needed for ``init="chrono"``, > 2.
    gate_a : float or sequence of float, optional
        ConstGate's constant(s) in (0, 1) (ignored by the other models); default 0.1.
    seed : int or None, optional
        Seed of the weights' generator; None: torch's global RNG.
    gate_tau0 : float or None, optional
        :math:`\tau_0` in [0.1, 1e5] steps: then :func:`apply_tau0_init` (every unit at time scale
        :math:`\tau_0`, drawing from the same generator, after ``init``).
    layernorm : bool, optional
        Leaky models only: LayerNorm of the candidate pre-activation before tanh,
        :math:`\tanh(\mathrm{LN}(W h + U x + b))` (the learnability paper's; the Jacobian
        diagonal of :meth:`RNNModel.trace` includes the LayerNorm's).

    Returns
    -------
    RNNModel
        The model (float32, on the CPU, in training mode).

    Raises
    ------
    ValueError
        For an unknown ``name`` or ``init``, bad sizes, ``gate_a`` outside (0, 1), ``t_max``
        not > 2 for chrono, ``gate_tau0`` outside [0.1, 1e5], or ``layernorm`` with GRU/LSTM.

    Examples
    --------
    >>> m = build_model("constgate", 1, 4, 1, gate_tau0=10.0, seed=0)
    >>> [round(v, 4) for v in m.a.tolist()]         # a = 1 - exp(-1/tau0)
    [0.0952, 0.0952, 0.0952, 0.0952]
    >>> m = build_model("diaggate", 1, 4, 1, seed=0)
    >>> tuple(m(torch.zeros(2, 8, 1)).shape), sum(p.numel() for p in m.parameters())
    ((2, 8, 1), 53)
    """
    check_choice("model", name, MODELS)
    gen = None
    if seed is not None:
        gen = torch.Generator().manual_seed(int(seed))
    if layernorm and name in ("gru", "lstm"):
        raise ValueError(f"layernorm applies to the leaky models (constgate, sharedgate, diaggate); torch's "
                         f"fused {name.upper()} has none, got model {name!r}")
    extra = {"layernorm": True} if layernorm else {}
    model = _CLASSES[name](n_in, hidden, n_out, init=init, t_max=t_max, gate_a=gate_a, generator=gen, **extra)
    return model if gate_tau0 is None else apply_tau0_init(model, gate_tau0, gen)
