"""The drift base class: a drift written by a user runs in simulate() exactly as the built-in
drift with the same kernel, the simulator accepts drifts by their base class and reads their
kernel arguments through the public ``kernel_args()``, and ``simulate`` has no kappa/gamma/z0."""
import numpy as np
import pytest

from levysde import simulation as S

KW = dict(eta_g=0.2, alpha=1.3, lam=1.5, particles=256, n_groups=8, t_end=4.0, burn_in=0.5, seed=17,
          traj_particles=4, traj_every=10, record_every=3)


class LinearDrift(S.Drift):
    """A user's drift ``F(z) = -g (z - c)`` with its own names, run by the OU kernel."""

    name = "linear"
    slope_name = "g"

    def __init__(self, g, c):
        self.g, self.c = float(g), float(c)

    def __call__(self, z):
        return -self.g * (np.asarray(z, dtype=float) - self.c)

    @property
    def plateau(self):
        return None

    @property
    def equilibrium(self):
        return self.c

    @property
    def slope(self):
        return self.g

    def meta(self):
        return {"drift": self.name, "kappa": None, "gamma": self.g, "z0": self.c}

    def kernel_args(self):
        return S.KernelArgs(S.DRIFT_OU, [0.0, self.g, self.c])


ARRAYS = ("hist_edges", "hist_counts", "hist_sums", "hist_outside", "excursion_counts", "final_zeta",
          "traj_t", "traj_zeta")


def test_a_user_drift_matches_the_built_in_one_bit_for_bit():
    mine = S.simulate(2.0, drift=LinearDrift(1.5, 0.3), **KW)
    ou = S.simulate(2.0, drift=S.OUDrift(1.5, 0.3), **KW)
    for key in ARRAYS:
        a, b = getattr(mine, key), getattr(ou, key)
        assert a.dtype == b.dtype and a.shape == b.shape and a.tobytes() == b.tobytes(), key
    assert mine.meta["drift"] == "linear" and ou.meta["drift"] == "ou"
    skip = {"drift", "wall_time_s", "particle_steps_per_s", "cpu_time_s", "compile_time_s"}
    assert {k: v for k, v in mine.meta.items() if k not in skip} == \
        {k: v for k, v in ou.meta.items() if k not in skip}
    # the comparison can fail: another equilibrium (or slope) moves every path
    other = S.simulate(2.0, drift=LinearDrift(1.5, 0.31), **KW)
    assert not np.array_equal(other.final_zeta, ou.final_zeta)
    assert np.all(np.isfinite(ou.final_zeta)) and np.ptp(ou.final_zeta) > 0


def test_the_built_in_drifts_are_drifts_with_public_kernel_args():
    sat, ou, tab = S.SaturatingDrift(2.0, 3.0, 0.5), S.OUDrift(1.5, -1.0), S.TabulatedDrift([-1, 0, 2], [1, 0, -4])
    for d in (sat, ou, tab):
        assert isinstance(d, S.Drift) and isinstance(d.kernel_args(), S.KernelArgs)
    kind, params, grid, values = sat.kernel_args()
    assert kind == S.DRIFT_SATURATING and params.tolist() == [2.0, 1.5, 0.5]
    assert ou.kernel_args().kind == S.DRIFT_OU and ou.kernel_args().params.tolist() == [0.0, 1.5, -1.0]
    k = tab.kernel_args()
    assert k.kind == S.DRIFT_TABULATED and k.grid.tolist() == [-1.0, 0.0, 2.0] and k.values.tolist() == [1.0, 0.0, -4.0]
    assert k.grid.flags.writeable and not tab.grid.flags.writeable      # a copy: the drift stays frozen
    assert S.SaturatingDrift() == S.SaturatingDrift(1.0, 1.0, 0.0)       # the default drift of simulate


def test_an_incomplete_drift_cannot_be_built():
    class NoKernel(S.Drift):
        name = "nokernel"

        def __call__(self, z):
            return -np.asarray(z)

        plateau, equilibrium, slope = None, 0.0, 1.0

        def meta(self):
            return {"drift": self.name}

    with pytest.raises(TypeError, match="kernel_args"):
        NoKernel()


def test_simulate_names_what_is_wrong_with_a_drift():
    tiny = dict(particles=16, n_groups=2, t_end=0.5, burn_in=0.1)
    with pytest.raises(ValueError, match="drift must be a levysde.simulation.Drift"):
        S.simulate(1.0, drift=lambda z: -z, **tiny)

    class TupleKernel(LinearDrift):
        def kernel_args(self):
            return (S.DRIFT_OU, np.array([0.0, self.g, self.c]), np.zeros(1), np.zeros(1))

    with pytest.raises(ValueError, match=r"kernel_args\(\) must return a levysde.simulation.KernelArgs; got tuple"):
        S.simulate(1.0, drift=TupleKernel(1.0, 0.0), **tiny)
    with pytest.raises(S.StepSizeError, match=r"dt too large for g: g\*dt = 1 > 0.5"):
        S.simulate(1.0, drift=LinearDrift(100.0, 0.0), **tiny)


def test_kernel_args_are_checked():
    with pytest.raises(ValueError, match=r"kind must be an integer in \[0, 2\]"):
        S.KernelArgs(3, [0.0, 1.0, 0.0])
    with pytest.raises(ValueError, match=r"params must have shape \(3,\); got \(2,\)"):
        S.KernelArgs(S.DRIFT_OU, [1.0, 0.0])
    with pytest.raises(ValueError, match="params must be finite"):
        S.KernelArgs(S.DRIFT_OU, [0.0, np.nan, 0.0])
    with pytest.raises(ValueError, match="grid must be finite and strictly increasing; got 0.0 after 0.0"):
        S.KernelArgs(S.DRIFT_TABULATED, np.zeros(3), [0.0, 0.0], [1.0, -1.0])
    with pytest.raises(ValueError, match=r"values must have shape \(2,\); got \(3,\)"):
        S.KernelArgs(S.DRIFT_TABULATED, np.zeros(3), [0.0, 1.0], [1.0, 0.0, -1.0])


@pytest.mark.parametrize("kw", [{"kappa": 2.0}, {"gamma": 1.0}, {"z0": 0.0}, {"kappa": 1.0, "z0": 1.0}])
def test_simulate_has_no_kappa_gamma_z0(kw):
    with pytest.raises(TypeError, match="the drift carries its plateau kappa, slope gamma and equilibrium z0"):
        S.simulate(1.0, particles=16, n_groups=2, t_end=0.5, burn_in=0.1, **kw)


class _Custom(S.Drift):
    """A user's drift whose plateau, equilibrium, slope and meta() are set per test."""
    name = "custom"

    def __init__(self, **kw):
        self.kw = kw
        self.base = S.SaturatingDrift()

    def __call__(self, z):
        return self.base(z)

    plateau = property(lambda self: self.kw.get("plateau", 1.0))
    equilibrium = property(lambda self: self.kw.get("equilibrium", 0.0))
    slope = property(lambda self: self.kw.get("slope", 1.0))

    def meta(self):
        return self.kw.get("meta", {"drift": "custom", "kappa": 1.0, "gamma": 1.0, "z0": 0.0, "note": "mine"})

    def kernel_args(self):
        return self.base.kernel_args()


SMALL = dict(particles=64, n_groups=4, t_end=0.3, burn_in=0.0, dt=0.01)
_M = {"drift": "custom", "kappa": 1.0, "gamma": 1.0, "z0": 0.0}


@pytest.mark.parametrize("kw, name", [
    (dict(slope=np.nan), "drift.slope"), (dict(slope=-1.0), "drift.slope"), (dict(slope="1"), "drift.slope"),
    (dict(equilibrium=np.nan), "drift.equilibrium"), (dict(equilibrium="0"), "drift.equilibrium"),
    (dict(plateau=-1.0), "drift.plateau"), (dict(plateau=np.inf), "drift.plateau"),
    (dict(meta=[1]), r"drift.meta\(\)"), (dict(meta={"drift": "c"}), r"drift.meta\(\)"),
    (dict(meta=_M | {"x": np.nan}), r"drift.meta\(\)"), (dict(meta=_M | {"dt": 1.0}), r"drift.meta\(\)"),
    (dict(meta=_M | {"x": object()}), r"drift.meta\(\)"),
])
def test_a_user_drift_is_checked_before_the_run(kw, name):
    with pytest.raises(ValueError, match=f"^{name} (values )?must"):
        S.simulate(1.0, drift=_Custom(**kw), **SMALL)


def test_a_user_drift_meta_extra_keys_are_kept(tmp_path):
    res = S.simulate(1.0, drift=_Custom(), **SMALL)
    assert res.meta.extra == {"note": "mine"}
    assert S.SimulationMeta.from_json(res.meta.to_json()).extra == {"note": "mine"}


def test_default_threshold_stays_inside_the_histogram_for_a_slow_plateau():
    """A drift that reaches its plateau only far from the equilibrium (arctan: 1 - F/kappa ~ 2/(pi z))
    pushes the default threshold to its cap of 40, beyond the default histogram half-width (45/beta*,
    39 here): the default is then the deepest half-step inside the histogram, not an error."""
    grid = np.linspace(-200.0, 50.0, 2001)
    drift = S.TabulatedDrift(grid, np.arctan(-grid) * 2.0 / np.pi)
    r = S.simulate(2.0, drift=drift, particles=256, t_end=60.0, burn_in=10.0, seed=1)
    half = r.meta.equilibrium - float(r.hist_edges[0])
    assert 0 < r.meta.threshold_u < half and r.meta.threshold_u == 0.5 * np.floor(1.8 * half)
