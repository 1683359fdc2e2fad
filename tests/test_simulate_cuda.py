"""The CUDA backend (levysde.simulation._cuda) against independent truth, without a GPU.

The kernel runs in a subprocess under Numba's CUDA simulator (``NUMBA_ENABLE_CUDASIM=1`` must
be set before numba.cuda is imported), or on the real device when one is present (nvidia-smi
and the numba-cuda package). Truth: the Random123 known-answer vectors of Philox4x32-10, the
cumulants and Laplace transform of the simulated increment law (docs/specification.md §2, §7; scipy
incomplete gammas and mpmath quadrature), closed-form drifts, and the CPU backend's tail
estimate within the two runs' standard errors. Sizes are tiny: the simulator executes the
kernel in Python (about 50 microseconds per particle-step).
"""
from __future__ import annotations

import importlib.util
import json
import math
import os
import shutil
import subprocess
import sys
import textwrap

import mpmath as mp
import numpy as np
import pytest
from scipy import special

from tests.helpers import run_cli

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
REAL_GPU = shutil.which("nvidia-smi") is not None and importlib.util.find_spec("numba_cuda") is not None
ENV = dict(os.environ, PYTHONPATH=ROOT)
if not REAL_GPU:
    ENV["NUMBA_ENABLE_CUDASIM"] = "1"

A, LAM, ETA_J = 1.5, 2.0, 3.0


def _py(code, *args, timeout=600):
    """Run ``code`` in a fresh interpreter with the CUDA environment; returns its stdout."""
    p = subprocess.run([sys.executable, "-c", textwrap.dedent(code), *map(str, args)],
                       capture_output=True, text=True, env=ENV, timeout=timeout)
    assert p.returncode == 0, p.stderr[-3000:]
    return p.stdout


def _c_alpha(alpha):
    """c_alpha = -1/(2 Gamma(-alpha) cos(pi alpha/2)) (docs/specification.md §2, mpmath)."""
    return float(-1 / (2 * mp.gamma(-alpha) * mp.cos(mp.pi * alpha / 2)))


def _big_moment(n, eps, dt):
    """dt * 2 eta_J c_alpha int_eps^inf z^n e^{-lam z} z^(-1-alpha) dz: the n-th (even) cumulant of
    the big-jump part of J_dt (scipy upper incomplete gamma)."""
    s = n - A
    return dt * 2 * ETA_J * _c_alpha(A) * special.gammaincc(s, LAM * eps) * special.gamma(s) * LAM ** (-s)


def _laplace_exponent(b, eps):
    """Psi_eps(b) = 2 eta_J c int_eps^inf (cosh(bz) - 1) nu + sigma_eps^2 b^2/2 (mpmath quadrature)."""
    c = 2 * ETA_J * _c_alpha(A)
    with mp.workdps(30):
        big = c * mp.quad(lambda z: (mp.cosh(b * z) - 1) * mp.exp(-LAM * z) * z ** (-1 - A),
                          [eps, 1, 10, mp.inf])
        m = 1 / mp.mpf(2 - A)                      # z = t^m removes the z^(1-alpha) singularity
        sig2 = c * mp.quad(lambda t: t ** (2 * m) * mp.exp(-LAM * t ** m) * t ** (m * (-1 - A))
                           * m * t ** (m - 1), [0, eps ** (1 / m)])
    return float(big + sig2 * b * b / 2)


def test_philox_known_answers():
    """Random123 tests/kat_vectors, the three philox4x32 10 lines."""
    out = _py("""
        from levysde.simulation import _cuda as C
        ctr = [[0, 0, 0, 0], [0xffffffff] * 4, [0x243f6a88, 0x85a308d3, 0x13198a2e, 0x03707344]]
        key = [[0, 0], [0xffffffff] * 2, [0xa4093822, 0x299f31d0]]
        print([[int(v) for v in C.philox4x32([c], k)[0]] for c, k in zip(ctr, key)])
    """)
    got = json.loads(out)
    assert got == [[0x6627e8d5, 0xe169c58d, 0xbc57ac4c, 0x9b00dbd8],
                   [0x408f276d, 0x41c83b0e, 0xa20bc7c6, 0x6d5451fd],
                   [0xd16cfe09, 0x94fdcceb, 0x5001e420, 0x24126ea1]]


def test_increment_law(tmp_path):
    """Per-step increments of a driftless run (OU with gamma = 0, eta_G = 0) are i.i.d. J_dt of the
    simulated law: variance dt Var J_1 (exactly: the Gaussian stand-in keeps the variance), fourth
    cumulant dt (k4 - small-jump part), E exp(b J_dt) = exp(dt Psi_eps(b)) (docs/specification.md §2, §7)."""
    f = tmp_path / "inc.npz"
    dt, n_part, n_steps = 0.05, 1000, 40
    _py(f"""
        import sys, numpy as np
        from levysde import simulate, TabulatedDrift
        r = simulate({ETA_J}, eta_g=0.0, alpha={A}, lam={LAM}, drift=TabulatedDrift([0.0, 1.0], [0.0, 0.0]),
                     particles={n_part}, n_groups=4, t_end={n_steps * dt}, burn_in=0.0, dt={dt},
                     seed=11, traj_particles={n_part}, traj_every=1, backend="cuda")
        np.savez(sys.argv[1], traj=r.traj_zeta, eps=r.meta["eps"], backend=r.meta["backend"])
    """, f)
    d = np.load(f)
    assert str(d["backend"]) == "cuda"
    eps = float(d["eps"])
    x = np.diff(np.concatenate([np.zeros((n_part, 1)), d["traj"]], axis=1), axis=1).ravel()
    n = x.size
    cos = math.cos(math.pi * A / 2)
    k2 = -ETA_J * A * (A - 1) * LAM ** (A - 2) / cos * dt            # docs/specification.md §2
    k4, k6, k8 = (_big_moment(m, eps, dt) for m in (4, 6, 8))       # simulated law: big jumps only
    # the k4 of J_dt minus the dropped small jumps' part: docs/specification.md §2 closed form
    k4_th = -ETA_J * A * (A - 1) * (A - 2) * (A - 3) * LAM ** (A - 4) / cos * dt
    small4 = k4_th - k4
    assert 0 < small4 < 0.2 * k4_th
    assert abs(x.mean()) < 4 * math.sqrt(k2 / n)
    m2 = np.mean(x * x)
    assert abs(m2 - k2) < 4 * math.sqrt((k4 + 2 * k2 * k2) / n)
    # unbiased k-statistic k4 and its leading-order variance (Kendall & Stuart, symmetric law)
    s2, s4 = np.sum(x * x) / n, np.sum(x ** 4) / n
    k4_hat = n * n * ((n + 1) * s4 - 3 * (n - 1) * s2 * s2) / ((n - 1) * (n - 2) * (n - 3))
    var_k4 = (k8 + 16 * k2 * k6 + 34 * k4 * k4 + 72 * k2 * k2 * k4 + 24 * k2 ** 4) / n
    assert abs(k4_hat - k4) < 4 * math.sqrt(var_k4)
    for b in (0.5, 0.9):
        truth = math.exp(dt * _laplace_exponent(b, eps))
        var = math.exp(dt * _laplace_exponent(2 * b, eps)) - truth ** 2
        assert abs(np.mean(np.exp(b * x)) - truth) < 4 * math.sqrt(var / n)


_DETERMINISM = """
    import sys, numpy as np
    from levysde import simulate
    from levysde.simulation import _cuda as C
    kw = dict(particles=150, n_groups=3, t_end=0.8, burn_in=0.2, dt=0.02, seed=7, traj_particles=2,
              traj_every=5, backend="cuda")
    out = {}
    for label, tpb, chunk in (("a", 128, 2**32), ("b", 128, 2**32), ("c", 32, 150 * 7)):
        C.THREADS_PER_BLOCK, C.LAUNCH_PARTICLE_STEPS = tpb, chunk
        r = simulate(3.0, **kw)
        for k in ("hist_counts", "hist_sums", "hist_outside", "excursion_counts", "final_zeta",
                  "traj_zeta"):
            out[label + k] = getattr(r, k)
    r = simulate(3.0, **dict(kw, seed=8))
    out["seed8"] = r.final_zeta
    np.savez(sys.argv[1], **out)
"""


def test_determinism_seed_block_size_and_chunking(tmp_path):
    """Same seed: bit-identical output on every run, for any block size and launch chunking
    (counter-based streams keyed by (seed, particle), integer histogram atomics)."""
    f = tmp_path / "det.npz"
    _py(_DETERMINISM, f)
    d = np.load(f)
    for k in ("hist_counts", "hist_sums", "hist_outside", "excursion_counts", "final_zeta",
              "traj_zeta"):
        assert np.array_equal(d["a" + k], d["b" + k]), k
        assert np.array_equal(d["a" + k], d["c" + k]), k
    # every recorded sample is counted once (time-averaged: particles per recorded step)
    total = d["ahist_counts"].sum() + d["ahist_outside"][:, [0, 2]].sum()
    assert total == pytest.approx(150.0, rel=1e-12)
    assert not np.array_equal(d["afinal_zeta"], d["seed8"])


def test_noiseless_step_and_zeta_sums(tmp_path):
    """eta_J = eta_G = 0: one Euler step is z + F(z) dt exactly for the three drifts (closed forms
    of docs/specification.md §3), and the fixed-point histogram sums reproduce sum(zeta) per bin."""
    f = tmp_path / "drift.npz"
    _py("""
        import sys, numpy as np
        from levysde import simulate, SaturatingDrift, OUDrift, TabulatedDrift
        z = np.linspace(-6, 6, 97)
        out = {}
        for name, d in (("sat", SaturatingDrift(0.7, 2.0, 0.3)), ("ou", OUDrift(1.5, -0.2)),
                        ("tab", TabulatedDrift([-2, -0.5, 0.0, 1.0, 4.0], [1.0, 0.8, 0.1, -0.6, -1.0]))):
            r = simulate(0.0, eta_g=0.0, drift=d, particles=z.size, n_groups=1, t_end=0.01,
                         burn_in=0.0, dt=0.01, z_init=z, bin_width=0.37, backend="cuda")
            out[name], out[name + "_sums"], out[name + "_edges"] = r.final_zeta, r.hist_sums, r.hist_edges
        np.savez(sys.argv[1], z=z, **out)
    """, f)
    d = np.load(f)
    z, dt = d["z"], 0.01
    truth = {"sat": z + 0.7 * np.tanh(2.0 * (0.3 - z) / 0.7) * dt, "ou": z - 1.5 * (z + 0.2) * dt,
             "tab": z + np.interp(z, [-2, -0.5, 0.0, 1.0, 4.0], [1.0, 0.8, 0.1, -0.6, -1.0]) * dt}
    for k, v in truth.items():
        np.testing.assert_allclose(d[k], v, rtol=0, atol=1e-15)
        e = d[k + "_edges"]
        inside = (v >= e[0]) & (v < e[-1])
        ib = np.floor((v[inside] - e[0]) / (e[1] - e[0])).astype(int)
        np.testing.assert_allclose(d[k + "_sums"][0], np.bincount(ib, v[inside], e.size - 1),
                                   rtol=0, atol=1e-9)


def test_tail_agrees_with_cpu_backend(tmp_path):
    """Same settings on both backends (independent random numbers, same law): the occupation
    probabilities P(zeta < -x) and the tail rates beta_hat(u) agree within 4 combined standard
    errors (group-to-group scatter; jackknife), and the CUDA beta_hat at u = 3 is within 4 SE of
    beta_model, the simulated model's exact rate (docs/specification.md §7, §8)."""
    f = tmp_path / "tail.npz"
    _py("""
        import sys, numpy as np
        from levysde import simulate
        out = {}
        for backend in ("cpu", "cuda"):
            r = simulate(3.0, particles=256, n_groups=16, t_end=30.0, burn_in=5.0, dt=0.02, seed=3,
                         backend=backend)
            out[backend + "_tail"] = [[r.tail(u).beta_hat, r.tail(u).se] for u in (0.5, 1.0, 3.0)]
            out[backend + "_counts"], out[backend + "_below"] = r.hist_counts, r.hist_outside[:, 0]
            out["edges"], out["beta_model"] = r.hist_edges, r.meta["beta_model"]
            out[backend + "_meta"] = [r.meta["backend"], r.meta["device"]]
        np.savez(sys.argv[1], **out)
    """, f)
    d = np.load(f)
    assert list(d["cuda_meta"]) == ["cuda", "CUDA simulator" if not REAL_GPU else d["cuda_meta"][1]]
    assert d["cpu_meta"][0] == "cpu"
    edges = d["edges"]
    for x in (0.5, 1.0, 2.0):
        k = int(np.searchsorted(edges, -x))
        assert edges[k] == pytest.approx(-x)
        p = {b: (d[b + "_counts"][:, :k].sum(axis=1) + d[b + "_below"]) / 16.0 for b in ("cpu", "cuda")}
        se = math.hypot(*(v.std(ddof=1) / math.sqrt(v.size) for v in p.values()))
        assert abs(p["cuda"].mean() - p["cpu"].mean()) < 4 * se
        if x <= 1.0:
            assert se < 0.1 * p["cpu"].mean()                # the comparison has power
    for (b_cpu, se_cpu), (b_gpu, se_gpu) in zip(d["cpu_tail"], d["cuda_tail"], strict=True):
        assert abs(b_gpu - b_cpu) < 4 * math.hypot(se_cpu, se_gpu)
    b3, se3 = d["cuda_tail"][2]
    assert abs(b3 - float(d["beta_model"])) < 4 * se3
    assert d["cuda_tail"][0][1] < 0.1 * float(d["beta_model"])


def test_divergence_guard():
    out = _py("""
        from levysde import simulate, TabulatedDrift, DivergenceError
        try:
            simulate(1.0, drift=TabulatedDrift([-1.0, 1.0], [-1.0, 1.0]), particles=64, n_groups=4, t_end=100.0,
                     burn_in=0.0, window=(-3.0, 3.0), backend="cuda")
        except DivergenceError as e:
            print(e)
    """)
    assert "does not restore at both ends" in out and "particles left the window" in out


def _cli(*args, env=None):
    return run_cli("simulate", *args, env_base=env or ENV, timeout=600)


def test_cli_backend_cuda_json():
    p = _cli("--backend", "cuda", "--eta-j", "3", "--particles", "64", "--groups", "8",
             "--t-end", "2", "--dt", "0.02", "--burn-in", "0.5", "--json")
    assert p.returncode == 0, p.stderr
    d = json.loads(p.stdout)
    assert d["backend"] == "cuda" and d["device"] and d["particle_steps_per_s"] > 0


@pytest.mark.skipif(REAL_GPU, reason="a GPU is present")
def test_cli_backend_cuda_without_gpu_is_one_line_exit_2():
    env = {k: v for k, v in ENV.items() if k != "NUMBA_ENABLE_CUDASIM"}
    p = _cli("--backend", "cuda", "--eta-j", "3", "--particles", "64", "--t-end", "1", "--burn-in", "0.2",
             env=env)
    assert p.returncode == 2
    lines = p.stderr.strip().splitlines()
    assert len(lines) == 1 and "cuda" in lines[0].lower() and "Traceback" not in p.stderr


def test_import_levysde_does_not_load_numba_cuda():
    out = _py("""
        import sys, levysde, levysde.simulation, levysde.cli
        print(any(m == "numba.cuda" or m.startswith("numba_cuda") for m in sys.modules))
    """)
    assert out.strip() == "False"


def test_diagram_overlay_passes_the_backend_through_the_sweep(tmp_path):
    """simulated_overlay(backend="cuda") runs every sweep point on the CUDA backend; the backend is
    part of each stored point (a store resumes only with the backend that wrote it)."""
    out = _py("""
        import sys, json
        from levysde.studies.diagram import phase_diagram
        from levysde.studies.overlay import simulated_overlay
        from levysde.studies.sweep import load_point
        d = phase_diagram("eta_j", "kappa", x_range=(2.5, 3.5), y_range=(0.9, 1.1), nx=3, ny=3)
        settings = {"particles": 32, "t_end": 1.0, "burn_in": 0.2, "dt": 0.02, "u": 0.5}
        o = simulated_overlay(d, nx=1, ny=1, scheduler="sequential", progress=False, store=sys.argv[1],
                              settings=settings, backend="cuda")
        point, _, _ = load_point(sys.argv[1] + "/point_000000.npz")
        print(json.dumps({"backend": point["backend"], "beta_hat": float(o["beta_hat"][0])}))
    """, tmp_path / "store")
    d = json.loads(out)
    assert d["backend"] == "cuda" and math.isfinite(d["beta_hat"])


@pytest.mark.skipif(REAL_GPU, reason="a GPU is present")
def test_cli_diagram_backend_cuda_without_gpu_is_one_line_exit_2(tmp_path):
    env = {k: v for k, v in ENV.items() if k != "NUMBA_ENABLE_CUDASIM"}
    p = run_cli("diagram", "--simulate", "--backend", "cuda", "--resolution", "10", "10",
                "--out", tmp_path / "d.png", env_base=env, timeout=300)
    assert p.returncode == 2
    lines = p.stderr.strip().splitlines()
    assert len(lines) == 1 and "--backend" in lines[0] and "Traceback" not in p.stderr
    assert not (tmp_path / "d.png").exists()


def test_benchmark_cuda_quick_runs():
    """Smoke run of ``bench_simulate.py --backend cuda --quick`` (no speed assertion)."""
    p = subprocess.run([sys.executable, os.path.join(ROOT, "benchmarks", "bench_simulate.py"),
                        "--backend", "cuda", "--quick", "--json"], capture_output=True, text=True,
                       env=ENV, timeout=600)
    assert p.returncode == 0, p.stderr[-3000:]
    d = json.loads(p.stdout)
    assert d["backend"] == "cuda" and d["simulator"] is (not REAL_GPU)
    assert d["ratio_cuda_vs_cpu"] == d["cuda_steps_per_s"] / d["cpu_steps_per_s"] > 0
