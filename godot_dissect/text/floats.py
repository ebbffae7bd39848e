"""How the engines print reals and 64-bit ints in their text notation.

* Godot 3 prints reals with ``%g`` (6 significant digits) after a cast to ``real_t`` (float32 in
  single builds, so ``1e300`` prints ``inf``).
* Godot 4 prints reals with Grisu2 (shortest digits, float32 boundaries when the value is exactly a
  float32), fixed notation for 1e-4 <= |x| < 1e15, ``-0`` as ``0``, ``-inf`` as ``inf_neg``.
"""

from __future__ import annotations

import math
import struct

__all__ = ["CACHED_POWERS", "f32", "num_scientific", "rtos_fix3", "rtos_fix4", "s64"]

_M64 = (1 << 64) - 1


_F32 = struct.Struct("<f")
_INF = math.inf


def f32(x: float) -> float:
    """``(float)x`` as C does it: nearest float32, overflow to infinity (struct rounds the same way
    and raises where the cast would give infinity; ctypes did the same and cost ~4 ms of start-up)."""
    try:
        return _F32.unpack(_F32.pack(x))[0]
    except OverflowError:
        return math.copysign(_INF, x)


def s64(x: int) -> int:
    """A 64-bit pattern as the engine's signed ``int64_t``."""
    x &= _M64
    return x - (1 << 64) if x >> 63 else x


# --------------------------------------------------------------------------- Grisu2 (Godot 4)
# Port of the Grisu2 in thirdparty/grisu2 that String::num_scientific uses since 4.4; not always the
# shortest digits, so Python's repr() is not a substitute.


def _cached_powers() -> list[tuple[int, int, int]]:
    """(f, e, k) with f * 2**e ~= 10**k rounded to 64 bits, for k = -300, -292, ..., 324."""
    table = []
    for k in range(-300, 325, 8):
        num, den = (10 ** k, 1) if k >= 0 else (1, 10 ** -k)
        e = num.bit_length() - den.bit_length() - 64
        while True:
            n, d = (num << -e, den) if e < 0 else (num, den << e)
            if n >= d << 64:
                e += 1
            elif n < d << 63:
                e -= 1
            else:
                break
        f = (2 * n + d) // (2 * d)
        if f >> 64:
            f, e = f >> 1, e + 1
        table.append((f, e, k))
    return table


CACHED_POWERS = _cached_powers()


def _normalize(f: int, e: int) -> tuple[int, int]:
    shift = 64 - f.bit_length()
    return f << shift, e - shift


def _mul(a: tuple[int, int], b: tuple[int, int]) -> tuple[int, int]:
    return (a[0] * b[0] + (1 << 63)) >> 64, a[1] + b[1] + 64


def _grisu2(value: float, single: bool) -> tuple[str, int]:
    """Digits and exponent with value = digits * 10**exponent (value finite and > 0)."""
    if single:
        bits = struct.unpack("<I", struct.pack("<f", value))[0]
        p, bias = 24, 150
    else:
        bits = struct.unpack("<Q", struct.pack("<d", value))[0]
        p, bias = 53, 1075
    hidden = 1 << (p - 1)
    big_e, frac = bits >> (p - 1), bits & (hidden - 1)
    v = (frac, 1 - bias) if big_e == 0 else (frac + hidden, big_e - bias)
    m_plus = _normalize(2 * v[0] + 1, v[1] - 1)
    if frac == 0 and big_e > 1:
        mf, me = 4 * v[0] - 1, v[1] - 2
    else:
        mf, me = 2 * v[0] - 1, v[1] - 1
    m_minus = (mf << (me - m_plus[1]), m_plus[1])
    w0 = _normalize(*v)

    f = -60 - m_plus[1] - 1
    k = abs(f * 78913) >> 18  # C division truncates toward zero
    k = (-k if f < 0 else k) + (f > 0)
    cf, ce, ck = CACHED_POWERS[(300 + k + 7) // 8]
    w = _mul(w0, (cf, ce))
    lo = (_mul(m_minus, (cf, ce))[0] + 1) & _M64
    hi_f, e = _mul(m_plus, (cf, ce))
    hi = (hi_f - 1) & _M64
    return _digit_gen(lo, w[0], hi, e, -ck)


def _digit_gen(lo: int, w: int, hi: int, e: int, exp10: int) -> tuple[str, int]:
    delta, dist = (hi - lo) & _M64, (hi - w) & _M64
    one = 1 << -e
    p1, p2 = hi >> -e, hi & (one - 1)
    digits: list[int] = []
    n = len(str(p1)) if p1 else 1
    pow10 = 10 ** (n - 1)
    while n > 0:
        d, p1 = divmod(p1, pow10)
        digits.append(d)
        n -= 1
        rest = ((p1 << -e) + p2) & _M64
        if rest <= delta:
            _round(digits, dist, delta, rest, (pow10 << -e) & _M64)
            return "".join(map(str, digits)), exp10 + n
        pow10 //= 10
    m = 0
    while True:
        p2 = (p2 * 10) & _M64
        digits.append(p2 >> -e)
        p2 &= one - 1
        m += 1
        delta, dist = (delta * 10) & _M64, (dist * 10) & _M64
        if p2 <= delta:
            break
    _round(digits, dist, delta, p2, one)
    return "".join(map(str, digits)), exp10 - m


def _round(digits: list[int], dist: int, delta: int, rest: int, ten_k: int) -> None:
    while (rest < dist and ((delta - rest) & _M64) >= ten_k
           and (((rest + ten_k) & _M64) < dist
                or ((dist - rest) & _M64) > ((rest + ten_k - dist) & _M64))):
        digits[-1] -= 1
        rest = (rest + ten_k) & _M64


def _format_buffer(digits: str, exp10: int) -> str:
    k, n = len(digits), len(digits) + exp10
    if k <= n <= 15:
        return digits + "0" * (n - k)
    if 0 < n <= 15:
        return digits[:n] + "." + digits[n:]
    if -4 < n <= 0:
        return "0." + "0" * -n + digits
    mant = digits if k == 1 else digits[0] + "." + digits[1:]
    x = n - 1
    return f"{mant}e{'-' if x < 0 else '+'}{abs(x):02d}"


def num_scientific(x: float, single: bool) -> str:
    """Godot 4 ``String::num_scientific`` of a finite or special float/double."""
    if math.isnan(x):
        return "nan"
    if math.isinf(x):
        return "inf" if x > 0 else "-inf"
    if x == 0:
        return "-0" if math.copysign(1, x) < 0 else "0"
    digits, exp10 = _grisu2(abs(x), single)
    return ("-" if x < 0 else "") + _format_buffer(digits, exp10)


def rtos_fix4(x: float) -> str:
    """Godot 4 ``rtos_fix`` in compat mode (what ``var_to_str`` uses)."""
    if x == 0:
        return "0"
    if math.isinf(x) and x < 0:
        return "inf_neg"
    if f32(x) == x:  # the engine's hack against float32 garbage digits
        return num_scientific(x, True)
    return num_scientific(x, False)


def rtos_fix3(x: float) -> str:
    """Godot 3 ``rtosfix``: C ``%lg``, which writes the sign of a NaN too."""
    if x == 0:
        return "0"
    if math.isnan(x):
        return "-nan" if math.copysign(1, x) < 0 else "nan"
    return f"{x:g}"  # C %lg: 6 significant digits
