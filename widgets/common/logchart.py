"""A log-scale line chart as SVG coordinates: what depth-signal and norm-placement draw.

Standard library only, in the subset MicroPython shares.
"""
import math

SUPERSCRIPT = {"-": "⁻", "0": "⁰", "1": "¹", "2": "²", "3": "³", "4": "⁴", "5": "⁵", "6": "⁶", "7": "⁷",
               "8": "⁸", "9": "⁹"}


def superscript(n):
    """superscript(-12) -> '⁻¹²'"""
    return "".join([SUPERSCRIPT[c] for c in str(n)])


def tenths(v):
    """v to one decimal, rounding halves up, as text: the same on every runtime (MicroPython prints
    str(round(98.6, 1)) as 98.59999999999999, and "%.1f" rounds 56.25 the other way).

    >>> tenths(56.25), tenths(-0.04), tenths(600)
    ('56.3', '0.0', '600.0')
    """
    n = math.floor(v * 10 + 0.5)
    return "%s%d.%d" % ("-" if n < 0 else "", abs(n) // 10, abs(n) % 10)


def chart(values, width=600, height=180):
    """A log-scale polyline of positive values: points, y ticks at powers of ten, the axis range."""
    logs = [math.log10(max(v, 1e-300)) for v in values]
    lo, hi = math.floor(min(logs)), math.ceil(max(logs))
    if hi - lo < 2:
        lo, hi = lo - 1, hi + 1
    step = max(1, math.ceil((hi - lo) / 6))
    n = max(len(values) - 1, 1)

    def y(lv):
        return round(height * (hi - lv) / (hi - lo), 1)

    points = " ".join(["%s,%s" % (tenths(width * i / n), tenths(y(lv))) for i, lv in enumerate(logs)])
    ticks = [{"y": y(t), "label": "1" if t == 0 else "10" + superscript(t)} for t in range(lo, hi + 1, step)]
    return {"points": points, "ticks": ticks, "w": width, "h": height, "lo": lo, "hi": hi, "y": y}
