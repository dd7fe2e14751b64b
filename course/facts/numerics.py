"""Facts of number formats and activation functions themselves (no data file)."""
import math

import numpy as np


def silu(x):
    """x * sigmoid(x). >>> silu(0.0) -> 0.0"""
    return x / (1.0 + math.exp(-x))


def silu_overflow_fp16():
    """Where silu(x) * x (SwiGLU with gate input and linear input both x) first exceeds the
    largest fp16 number, by bisection: (x, fp16 max). silu(x) ~ x there, so x ~ sqrt(65,504).

    >>> silu_overflow_fp16() -> (255.94..., 65504.0)
    """
    limit = float(np.finfo(np.float16).max)
    lo, hi = 1.0, 1000.0  # silu(1) * 1 < limit < silu(1000) * 1000
    for _ in range(60):
        mid = (lo + hi) / 2
        lo, hi = (mid, hi) if silu(mid) * mid <= limit else (lo, mid)
    return hi, limit


def bf16_max():
    """The largest bfloat16: 8 exponent bits like fp32, 7 mantissa bits, so (2 - 2^-7) * 2^127.

    >>> bf16_max() -> 3.3895...e38
    """
    return (2 - 2 ** -7) * 2.0 ** 127


def facts(data):
    x, limit = silu_overflow_fp16()
    return {"silu10_times10": silu(10.0) * 10.0,
            "fp16": {"silu_overflow_x": x, "max": limit, "sqrt_max": math.sqrt(limit)},
            "bf16": {"max": bf16_max()}}
