"""SimulationMeta: the typed metadata of a simulation run and its .npz ``meta`` entry (docs/simulate.md)."""
import json

import numpy as np
import pytest

import levysde.simulation as S
from levysde.simulation import SimulationMeta, SimulationResult

#: the ``meta`` keys of a run file, in the order they are written (the file format, docs/simulate.md)
KEYS = ["kind", "version", "eta_j", "eta_g", "alpha", "lam", "drift", "kappa", "gamma", "z0", "dt", "eps", "seed",
        "t_end", "burn_in", "particles", "n_groups", "steps", "record_steps", "record_every", "big_jump_rate",
        "sigma_eps2", "exp_proposal", "window", "backend", "device", "threads", "wall_time_s",
        "particle_steps_per_s", "beta_theory", "beta_model", "tail_rate_theory", "phase", "threshold_u",
        "equilibrium", "notes", "cpu_time_s", "bias_budget", "compile_time_s"]

#: the keys of the first run files (no record_every, backend, device, notes, cpu_time_s, bias_budget)
OLD = {"kind": "simulation", "version": "0.1.0", "eta_j": 3.0, "eta_g": 0.1, "alpha": 1.5, "lam": 2.0,
       "drift": "saturating", "kappa": 1.0, "gamma": 1.0, "z0": 0.0, "dt": 0.01, "eps": 0.05, "seed": 7,
       "t_end": 10.0, "burn_in": 1.0, "particles": 64, "n_groups": 4, "steps": 1000, "record_steps": 900,
       "big_jump_rate": 12.5, "sigma_eps2": 0.001, "exp_proposal": False, "window": [-1000.0, 1000.0],
       "threads": 2, "wall_time_s": 0.5, "particle_steps_per_s": 128000.0, "beta_theory": 0.8083,
       "beta_model": 0.8081, "tail_rate_theory": 0.8083, "phase": "broad", "threshold_u": 3.0,
       "equilibrium": 0.0}


def _write_run(path, meta_text, groups=4):
    edges = np.linspace(-10.0, 5.0, 151)
    counts = np.ones((groups, edges.size - 1))
    np.savez(path, hist_edges=edges, hist_counts=counts, hist_sums=counts * 0.5 * (edges[1:] + edges[:-1]),
             hist_outside=np.zeros((groups, 4)), excursion_counts=counts, final_zeta=np.zeros(8),
             meta=np.array(meta_text))


@pytest.fixture(scope="module")
def runs():
    sat = S.simulate(1.5, particles=64, n_groups=4, t_end=2.0, burn_in=0.5, seed=3)
    tab = S.simulate(1.5, drift=S.TabulatedDrift([-3, 0, 3], [1.0, 0.0, -1.0]), particles=16, n_groups=2,
                     t_end=0.5, burn_in=0.1)
    return sat, tab


def test_meta_round_trip_through_the_npz(runs, tmp_path):
    sat, tab = runs
    for r, extra_keys in ((sat, []), (tab, ["drift_grid", "drift_values"])):
        assert isinstance(r.meta, SimulationMeta)
        path = r.save(tmp_path / f"{r.meta.drift}.npz")
        with np.load(path) as z:
            text = str(z["meta"][()])
        d = json.loads(text)
        # the file format: the keys in their order (a tabulated drift's table after z0), plain JSON values
        want = KEYS[:10] + extra_keys + KEYS[10:]
        assert list(d) == want
        assert d["window"] == list(r.meta.window) and d["notes"] == list(r.meta.notes)
        back = SimulationResult.load(path)
        assert back.meta == r.meta and back.meta.to_json() == d
        assert json.dumps(back.meta.to_json(), allow_nan=False) == text
    assert tab.meta.drift_grid == (-3.0, 0.0, 3.0) and tab.meta.drift_values == (1.0, 0.0, -1.0)
    assert sat.meta.particles == 64 and sat.meta.seed == 3 and sat.meta.backend == "cpu"


def test_a_run_file_with_the_old_key_set_loads(tmp_path):
    path = tmp_path / "old.npz"
    _write_run(path, json.dumps(OLD))
    r = SimulationResult.load(path)
    m = r.meta
    assert (m.eta_j, m.threshold_u, m.equilibrium, m.phase, m.seed) == (3.0, 3.0, 0.0, "broad", 7)
    assert m.window == (-1000.0, 1000.0) and m.notes == ()
    assert m.record_every is None and m.backend is None and m.device is None
    assert m.cpu_time_s is None and m.bias_budget is None and m.extra == {}
    assert r.threshold_range() == (0.0, 10.0)
    assert r.tail().u == 3.0                              # the default threshold from the meta
    assert r.tempering_limited_fit() is None              # broad: not tempering-limited
    # saved again, the old keys keep their values; the new ones are written as null
    d = json.loads(json.dumps(m.to_json()))
    assert {k: d[k] for k in OLD} == OLD
    assert d["record_every"] is None and d["notes"] == [] and d["bias_budget"] is None


def test_unknown_keys_are_kept_and_missing_ones_named(tmp_path):
    newer = dict(OLD, future_key={"a": 1}, another=2.5)
    m = SimulationMeta.from_json(json.dumps(newer))
    assert m.extra == {"future_key": {"a": 1}, "another": 2.5}
    assert list(m.to_json())[-2:] == ["future_key", "another"] and m["another"] == 2.5
    assert SimulationMeta.from_json(m.to_json()) == m
    broken = {k: v for k, v in OLD.items() if k not in ("equilibrium", "eps")}
    with pytest.raises(ValueError, match="lacks eps, equilibrium"):
        SimulationMeta.from_json(broken)
    path = tmp_path / "broken.npz"
    _write_run(path, json.dumps(broken))
    with pytest.raises(ValueError, match=r"SimulationResult.load: .*broken.npz.*lacks eps, equilibrium") as e:
        SimulationResult.load(path)
    assert "\n" not in str(e.value)
    with pytest.raises(ValueError, match="kind"):
        SimulationMeta.from_json(dict(OLD, kind="rnn"))
    with pytest.raises(ValueError, match="JSON object"):
        SimulationMeta.from_json("[1, 2]")


def test_meta_is_a_read_only_mapping_of_the_json_keys(runs):
    """docs/simulate.md reads meta["bias_budget"] and meta["notes"]: the mapping view gives the JSON values."""
    sat, tab = runs
    m = sat.meta
    assert m["eps"] == m.eps and m["window"] == list(m.window) and m.get("bias_budget") == m.bias_budget
    assert "drift_grid" not in m and "drift_grid" in tab.meta and m.get("drift_grid") is None
    assert list(m) == KEYS and len(m) == len(KEYS) and dict(m) == m.to_json()
    with pytest.raises(KeyError):
        m["no_such_key"]
    with pytest.raises(TypeError):
        m["eps"] = 1.0
    with pytest.raises(AttributeError):
        m.eps = 1.0


def test_a_mapping_given_to_simulation_result_is_converted():
    edges = np.linspace(-10.0, 5.0, 151)
    c = np.ones((2, edges.size - 1))
    r = SimulationResult(hist_edges=edges, hist_counts=c, hist_sums=c, hist_outside=np.zeros((2, 4)),
                         excursion_counts=c, final_zeta=np.zeros(2), meta=dict(OLD))
    assert isinstance(r.meta, SimulationMeta) and r.meta.lam == 2.0
    with pytest.raises(ValueError, match="lacks"):
        SimulationResult(hist_edges=edges, hist_counts=c, hist_sums=c, hist_outside=np.zeros((2, 4)),
                         excursion_counts=c, final_zeta=np.zeros(2), meta={"kind": "simulation"})
