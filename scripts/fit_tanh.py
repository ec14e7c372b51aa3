#!/usr/bin/python3
"""Fits the polynomial of simd_math::TanhF32 and checks the whole function on every float.

TanhF32(x) = x + x^3 P(x^2) for |x| < 0.55 and 1 - 2/(e^(2|x|) + 1) above. P interpolates
(tanh(x)/x - 1)/x^2 in z = x^2 at Chebyshev nodes of [0, 0.55^2], in 50-digit arithmetic
(mpmath), and is then rounded to float. The check evaluates the function in NumPy float32
arithmetic, which rounds every operation as the C++ code does (that code is compiled without
contraction into fused multiply-adds), and compares it with the correctly rounded tanh on every
float in [2^-12, 9.5]; below 2^-12 the function returns x, above 9.1 tanh rounds to 1.

Usage: scripts/fit_tanh.py [--terms 6] [--switch 0.55]
"""
import argparse

import mpmath as mp
import numpy as np

f32 = np.float32


def fit(switch, terms):
    mp.mp.dps = 50
    top = mp.mpf(switch) ** 2

    def g(z):
        if z == 0:
            return mp.mpf(-1) / 3
        x = mp.sqrt(z)
        return (mp.tanh(x) / x - 1) / z

    nodes = [top / 2 * (1 - mp.cos(mp.pi * (2 * k + 1) / (2 * terms))) for k in range(terms)]
    a = mp.matrix([[n ** j for j in range(terms)] for n in nodes])
    c = mp.lu_solve(a, mp.matrix([g(n) for n in nodes]))
    return [f32(float(ci)) for ci in c]


def exp_f32(x):
    """simd_math::ExpF32, operation for operation."""
    xc = np.clip(x, f32(-104.0), f32(89.0))
    shift = f32(12582912.0)
    n = (xc * f32(1.44269504088896341) + shift) - shift
    r = xc - n * f32(0.693359375)
    r = r - n * f32(-2.12194440e-4)
    p = f32(1.9875691500e-4)
    for c in (1.3981999507e-3, 8.3334519073e-3, 4.1665795894e-2, 1.6666665459e-1,
              5.0000001201e-1):
        p = p * r + f32(c)
    p = p * r * r + r + f32(1.0)
    ni = n.astype(np.int32)
    h = (ni / 2).astype(np.int32)  # C++ division truncates toward zero
    s1 = ((h + 127) << 23).astype(np.int32).view(np.float32)
    s2 = ((ni - h + 127) << 23).astype(np.int32).view(np.float32)
    return p * s1 * s2


def tanh_f32(x, coeffs, switch):
    z = x * x
    p = coeffs[-1]
    for c in reversed(coeffs[:-1]):
        p = p * z + c
    near_zero = x + x * (z * p)
    far = f32(1.0) - f32(2.0) / (exp_f32(f32(2.0) * x) + f32(1.0))
    return np.where(x < f32(switch), near_zero, far)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--terms", type=int, default=6)
    ap.add_argument("--switch", type=float, default=0.55)
    args = ap.parse_args()
    coeffs = fit(args.switch, args.terms)
    print("P, constant term first:", ", ".join(f"{float(c):.9e}f" for c in coeffs))
    lo = int(np.array(2.0 ** -12, np.float32).view(np.int32))
    hi = int(np.array(9.5, np.float32).view(np.int32))
    worst, at, ones = 0, 0.0, 0
    with np.errstate(over="ignore"):
        for start in range(lo, hi + 1, 1 << 22):
            bits = np.arange(start, min(start + (1 << 22), hi + 1), dtype=np.int32)
            x = bits.view(np.float32)
            got = tanh_f32(x, coeffs, args.switch).view(np.int32).astype(np.int64)
            want = np.tanh(x.astype(np.float64)).astype(np.float32).view(np.int32)
            ulps = np.abs(got - want.astype(np.int64))
            ones += int(np.count_nonzero(ulps))
            k = int(np.argmax(ulps))
            if ulps[k] > worst:
                worst, at = int(ulps[k]), float(x[k])
    print(f"every float in [2^-12, 9.5]: at most {worst} ulp (at x = {at:.9g}); "
          f"{ones} of {hi - lo + 1} not correctly rounded")
    return 0 if worst <= 1 else 1


if __name__ == "__main__":
    raise SystemExit(main())
