"""An exponential that LLVM can vectorise inside Numba loops.

Numba calls libm for ``math.exp``; a loop that calls it is not vectorised (no vector math
library is assumed), and the exponential of the saturating drift then costs about 5 ns per
particle-step, most of a simulator step (benchmarks/bench_simulate.py, ``profile``). The
:func:`exp` below is branch-free arithmetic that LLVM turns into SIMD code (AVX2/AVX-512),
about 3x faster per element in a loop (0.9 against 2.9 ns, benchmarks/bench_simulate.py's
machine), with an error of at most 1 unit in the last place over the whole double range
(tests/test_jumps.py, against mpmath).

Method (Cody & Waite 1980; Tang 1989 without the table): ``exp(a) = 2^k exp(r)`` with
``k = round(a / log 2)`` and ``r = a - k log 2`` (``log 2`` split into a 32-bit high part and
a low part, so that ``k log2_hi`` is exact for ``|k| < 2^21``), ``|r| <= log(2)/2``; ``exp(r)``
by its Taylor polynomial of degree 13 (truncation error below ``(log 2 / 2)^14 / 14! = 4e-18``
relative), evaluated by Horner's rule; ``2^k`` built exactly from the bits of a double as the
product of two powers of two, so that results from the subnormal range up to overflow come
out right without branches.
"""
from __future__ import annotations

import math

from llvmlite import ir
from numba import njit, types
from numba.extending import intrinsic

from levysde.simulation._jitcache import CACHE

__all__ = ["exp"]

_LOG2E = 1.4426950408889634074
_LN2_HI = 6.93147180369123816490e-01      # high 32 bits of log 2 (fdlibm's ln2HI)
_LN2_LO = 1.90821492927058770002e-10      # log 2 - _LN2_HI
#: 1/j!, j = 0..13 (the Taylor coefficients of exp)
_C = tuple(1.0 / math.factorial(j) for j in range(14))
#: below this exp underflows to 0 (exp(-745.14) < 2^-1075), above it overflows to inf
_A_MIN, _A_MAX = -746.0, 710.0


@intrinsic
def _bits_as_float(typingctx, bits):
    """The float64 whose IEEE-754 bit pattern is the int64 ``bits`` (an LLVM bitcast)."""
    if not isinstance(bits, types.Integer):
        return None

    def codegen(context, builder, signature, args):
        return builder.bitcast(args[0], ir.DoubleType())

    return types.float64(types.int64), codegen


@njit(cache=CACHE, inline="always")
def _pow2(k):
    """2.0**k for an int64 1 - 1023 <= k <= 1023 (exact, from the exponent bits)."""
    return _bits_as_float((k + 1023) << 52)


@njit(cache=CACHE, inline="always")
def _horner(c, x):
    """c[0] + c[1] x + ... + c[n-1] x^(n-1) by Horner's rule (c a tuple of floats: the loop is
    unrolled at compile time)."""
    p = c[len(c) - 1]
    for i in range(len(c) - 2, -1, -1):
        p = p * x + c[i]
    return p


@njit(cache=CACHE, inline="always")
def exp(a):
    """e**a for a float64 ``a`` (any value: 0 below -745.14, inf above 709.78, NaN for NaN).

    Branch-free so that loops over arrays vectorise. Maximum relative error against a
    correctly rounded exp: 1 ulp (tests/test_jumps.py measures it against mpmath)."""
    x = min(max(a, _A_MIN), _A_MAX)
    k = int(x * _LOG2E + (0.5 if x >= 0.0 else -0.5))         # round to nearest
    r = (x - k * _LN2_HI) - k * _LN2_LO
    p = _horner(_C, r)
    k1 = k >> 1                                                 # 2^k = 2^k1 2^(k - k1): both
    y = p * _pow2(k1) * _pow2(k - k1)                           # in the normal range
    return y if a == a else a                                   # NaN stays NaN

