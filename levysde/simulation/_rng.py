"""Fast, reproducible random numbers inside Numba kernels.

* Generator: xoshiro256++ (Blackman & Vigna 2019), 256-bit state held as four
  uint64 locals ``(s0, s1, s2, s3)`` so that the compiled inner loops keep it in
  registers. Every function takes the state and returns ``(value, s0, s1, s2, s3)``.
* Uniforms: the top 53 bits, ``(r >> 11) * 2^-53`` in [0, 1).
* Normals: the 256-layer ziggurat of Marsaglia & Tsang (J. Stat. Softw. 5(8),
  2000) in the 52-bit form used by NumPy (one 64-bit draw gives the layer, the
  sign and the abscissa; 99% of draws need nothing else). The tables are built
  here at import from the published constants r = 3.6541528853610088 and
  v = 4.92867323399e-3 (tests/test_simulate.py checks the output against the
  normal law).
* For kernels that draw for many streams at once, :func:`normal_candidate` (the
  ziggurat's branch-free fast path from one 64-bit draw) and :func:`normal_slow` (its rare
  branch) split :func:`normal` into a vectorisable pass and a lane-by-lane fix-up.
* Seeding: :func:`seed_states` turns one ``numpy.random.SeedSequence`` into one
  independent state per stream (per particle, per block); the streams do not
  depend on how work is split across threads.

Numba's own ``np.random`` inside ``prange`` is avoided: its per-thread state
makes results depend on the thread count and it is slower.
"""
from __future__ import annotations

import math
from collections.abc import Sequence

import numpy as np
from numba import njit

from levysde.simulation._jitcache import CACHE

__all__ = ["seed_states", "next_u64", "uniform", "normal", "normal_candidate", "normal_slow"]

_R = 3.6541528853610088          # ziggurat base abscissa (256 layers)
_V = 4.92867323399e-3            # area of each layer


def _ziggurat_tables(f, f_inv, r, v, bits):
    """Marsaglia & Tsang's 256-layer ziggurat tables (k, w, f) for the decreasing density
    ``f`` (unnormalised, f(0) = 1) with inverse ``f_inv``, base abscissa ``r``, layer area ``v``
    and ``bits``-bit magnitudes (as NumPy builds them; used for the normal)."""
    m = 2.0 ** bits
    d = t = r
    q = v / f(d)
    k = np.zeros(256, dtype=np.uint64)
    w = np.zeros(256)
    fz = np.zeros(256)
    k[0] = np.uint64(int((d / q) * m))
    k[1] = np.uint64(0)
    w[0] = q / m
    w[255] = d / m
    fz[0] = 1.0
    fz[255] = f(d)
    for i in range(254, 0, -1):
        d = f_inv(v / d + f(d))
        k[i + 1] = np.uint64(int((d / t) * m))
        t = d
        fz[i] = f(d)
        w[i] = d / m
    return k, w, fz


_KI, _WI, _FI = _ziggurat_tables(lambda x: math.exp(-0.5 * x * x), lambda y: math.sqrt(-2.0 * math.log(y)),
                                  _R, _V, 52)
_INV_R = 1.0 / _R

_TWO53 = 1.0 / 9007199254740992.0


@njit(cache=CACHE, inline="always")
def _rotl(x, k):
    return (x << np.uint64(k)) | (x >> np.uint64(64 - k))


@njit(cache=CACHE, inline="always")
def next_u64(s0, s1, s2, s3):
    """One xoshiro256++ output and the advanced state."""
    result = _rotl(s0 + s3, 23) + s0
    t = s1 << np.uint64(17)
    s2 ^= s0
    s3 ^= s1
    s1 ^= s2
    s0 ^= s3
    s2 ^= t
    s3 = _rotl(s3, 45)
    return result, s0, s1, s2, s3


@njit(cache=CACHE, inline="always")
def uniform(s0, s1, s2, s3):
    """U(0, 1): values k 2^-53, k = 0 .. 2^53 - 1 (0 included, 1 excluded)."""
    r, s0, s1, s2, s3 = next_u64(s0, s1, s2, s3)
    return float(np.int64(r >> np.uint64(11))) * _TWO53, s0, s1, s2, s3   # int64: fast cvt


@njit(cache=CACHE, inline="always")
def normal_candidate(r):
    """The normal ziggurat's fast path from one 64-bit draw ``r``: (candidate x, layer idx,
    52-bit magnitude rabs, accepted).

    The low 8 bits pick the layer, the next bit the sign, the top 52 bits the magnitude;
    the candidate is accepted when rabs < _KI[idx] (about 99% of draws). Branch-free, so that
    loops over many streams vectorise; a candidate that is not accepted is finished by
    :func:`normal_slow` from the same stream."""
    idx = int(r & np.uint64(0xFF))
    r >>= np.uint64(8)
    rabs = (r >> np.uint64(1)) & np.uint64(0x000FFFFFFFFFFFFF)
    x = float(np.int64(rabs)) * _WI[idx]
    x = -x if r & np.uint64(1) else x
    return x, idx, rabs, rabs < _KI[idx]


@njit(cache=CACHE)
def normal_slow(idx, x, rabs, s0, s1, s2, s3):
    """Rare branch of the normal ziggurat (about 1% of draws): tail or wedge test for the
    candidate of :func:`normal_candidate`, continuing the stream (s0, s1, s2, s3)."""
    while True:
        if idx == 0:
            while True:
                u1, s0, s1, s2, s3 = uniform(s0, s1, s2, s3)
                u2, s0, s1, s2, s3 = uniform(s0, s1, s2, s3)
                xx = -_INV_R * math.log1p(-u1)
                yy = -math.log1p(-u2)
                if yy + yy > xx * xx:
                    if (rabs >> np.uint64(8)) & np.uint64(1):
                        return -(_R + xx), s0, s1, s2, s3
                    return _R + xx, s0, s1, s2, s3
        else:
            u, s0, s1, s2, s3 = uniform(s0, s1, s2, s3)
            if (_FI[idx - 1] - _FI[idx]) * u + _FI[idx] < math.exp(-0.5 * x * x):
                return x, s0, s1, s2, s3
        # rejected: a fresh draw through the fast path
        r, s0, s1, s2, s3 = next_u64(s0, s1, s2, s3)
        x, idx, rabs, ok = normal_candidate(r)
        if ok:
            return x, s0, s1, s2, s3


@njit(cache=CACHE, inline="always")
def normal(s0, s1, s2, s3):
    """Standard normal N(0, 1) by the 256-layer ziggurat."""
    r, s0, s1, s2, s3 = next_u64(s0, s1, s2, s3)
    x, idx, rabs, ok = normal_candidate(r)
    if ok:
        return x, s0, s1, s2, s3
    return normal_slow(idx, x, rabs, s0, s1, s2, s3)


def seed_states(seed: int | Sequence[int] | np.random.SeedSequence, n_streams: int) -> np.ndarray:
    """Independent xoshiro256++ states, shape (n_streams, 4) uint64, from one seed.

    ``seed`` is anything ``numpy.random.SeedSequence`` accepts (int >= 0, a
    sequence of ints, or a SeedSequence). The states are the hashed output of
    ``SeedSequence.generate_state`` (NumPy's own way of seeding its bit
    generators), so stream k is the same for any thread count or work split.

    Raises ValueError for a negative or non-integer seed.
    """
    if isinstance(seed, np.random.SeedSequence):
        ss = seed
    else:
        try:
            ss = np.random.SeedSequence(seed)
        except (TypeError, ValueError) as exc:
            raise ValueError(f"seed must be a non-negative integer; got {seed!r}") from exc
    st = ss.generate_state(4 * int(n_streams), np.uint64).reshape(int(n_streams), 4)
    zero = ~st.any(axis=1)          # xoshiro must not start from the all-zero state
    st[zero, 0] = np.uint64(0x9E3779B97F4A7C15)
    return st


@njit(cache=CACHE)
def fill_normal(states, out):
    """Test helper: ``out[i, :]`` drawn from stream ``states[i]`` (states advanced)."""
    for i in range(out.shape[0]):
        s0, s1, s2, s3 = states[i, 0], states[i, 1], states[i, 2], states[i, 3]
        for j in range(out.shape[1]):
            out[i, j], s0, s1, s2, s3 = normal(s0, s1, s2, s3)
        states[i, 0], states[i, 1], states[i, 2], states[i, 3] = s0, s1, s2, s3


@njit(cache=CACHE)
def fill_uniform(states, out):
    """Test helper: like :func:`fill_normal` for U(0, 1)."""
    for i in range(out.shape[0]):
        s0, s1, s2, s3 = states[i, 0], states[i, 1], states[i, 2], states[i, 3]
        for j in range(out.shape[1]):
            out[i, j], s0, s1, s2, s3 = uniform(s0, s1, s2, s3)
        states[i, 0], states[i, 1], states[i, 2], states[i, 3] = s0, s1, s2, s3


