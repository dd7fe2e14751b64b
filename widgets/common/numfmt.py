"""Number formatting shared by the build's Jinja filters and every widget model.

One formatter, so a value reads the same in prose, in a pre-rendered widget and
in the live widget, whichever Python runs it: CPython (the build), Pyodide or
MicroPython. MicroPython's str has no translation tables, its format() leaves out
the "," thousands separators of a float, and it rounds "%.3f" with its own
float-to-text code (2.0005 -> 2.001, where CPython's exact rounding gives 2.000).
So the digits are worked out here in integer arithmetic from the float's exact
binary value, rounding half to even as CPython's format() does. Only math, and
only what CPython and MicroPython share (tests/widgets/test_micropython_subset.py).
"""
import math

MINUS = "\u2212"  # a true minus sign, not a hyphen
SUPERSCRIPT = {"-": "\u207b", "0": "\u2070", "1": "\u00b9", "2": "\u00b2", "3": "\u00b3", "4": "\u2074",
               "5": "\u2075", "6": "\u2076", "7": "\u2077", "8": "\u2078", "9": "\u2079"}


def _exact(x):
    """abs(x) exactly, as whole numbers (n, d) with d a power of two: abs(x) == n / d."""
    m, e = math.frexp(abs(x))       # abs(x) = m * 2**e, m in [0.5, 1)
    n, e = int(m * 9007199254740992), e - 53  # m * 2**53 is a whole number below 2**53
    return (n << e, 1) if e >= 0 else (n, 1 << -e)


def _round(n, d):
    """n / d rounded to a whole number, half to even."""
    q, r = divmod(n, d)
    return q + 1 if 2 * r > d or (2 * r == d and q % 2) else q


def _digits(x, decimals):
    """abs(x) rounded to `decimals` places, as the whole number abs(x) * 10**decimals.

    First in floats (MicroPython's big integers are slow): y = abs(x) * 10**decimals is within
    y * 2**-53 of the exact product, so unless y's fraction is that close to one half, rounding
    y gives what rounding the exact product gives; otherwise, and for large y, exactly."""
    y = abs(x) * float(10 ** decimals)
    if y < 4503599627370496.0:  # 2**52: y's fraction is exact
        q = math.floor(y)
        frac = y - q
        if abs(frac - 0.5) > y * 2.220446049250313e-16:  # 2**-52: twice the product's error
            return q + 1 if frac > 0.5 else q
    n, d = _exact(x)
    return _round(n * 10 ** decimals, d)


def _grouped(digits):
    """'17408' -> '17,408'"""
    if len(digits) <= 3:
        return digits
    head = len(digits) % 3 or 3
    return ",".join([digits[:head]] + [digits[i:i + 3] for i in range(head, len(digits), 3)])


def num(x, decimals=None):
    """Format a number with thousands separators and a true minus sign.

    decimals=None shows whole numbers as integers and others with 3 decimals.
    >>> num(17408), num(3.4, 1), num(-0.5), num(2.0), num(-0.0004, 3)
    ('17,408', '3.4', '−0.500', '2', '0.000')
    """
    if decimals is None:
        decimals = 0 if abs(x - round(x)) < 1e-9 else 3
    if x != x or x in (math.inf, -math.inf):
        return ("%." + str(decimals) + "f") % x
    text = str(_digits(x, decimals))
    if decimals:
        text = "0" * (decimals + 1 - len(text)) + text
        text = _grouped(text[:-decimals]) + "." + text[-decimals:]
    else:
        text = _grouped(text)
    return MINUS + text if x < 0 and text.strip("0.,") else text  # no "−0.000"


def fixed(x, decimals=1):
    """x rounded to `decimals` (1 or more) places as plain ASCII text, for SVG coordinates: what
    CPython writes as str(round(x, decimals)) wherever that has no exponent (a result of 0 or
    between 1e-4 and 1e15), on every runtime. MicroPython's round() and "%.1f" can land on
    another digit or print float dust (str(round(98.6, 1)) is 98.59999999999999 there).

    >>> fixed(82.9), fixed(0.25), fixed(-0.04), fixed(600), fixed(2.50049, 3)
    ('82.9', '0.2', '-0.0', '600.0', '2.5')
    """
    text = str(_digits(x, decimals))
    text = "0" * (decimals + 1 - len(text)) + text
    whole, frac = text[:-decimals], text[-decimals:].rstrip("0") or "0"  # repr drops trailing zeros
    return ("-" if math.copysign(1.0, x) < 0 else "") + whole + "." + frac


def pct(ratio, decimals=1):
    """A ratio as a percentage. >>> pct(0.61596) -> '61.6%'"""
    return num(100 * ratio, decimals) + "%"


def superscript(n):
    """An integer as superscript digits. superscript(-4) -> '⁻⁴'"""
    return "".join([SUPERSCRIPT[c] for c in str(n)])


def sci(x, digits=2):
    """Scientific notation for tiny or huge values, which num would round away.

    >>> sci(1e-6), sci(0.00012345, 3), sci(-65504.0)
    ('1 × 10⁻⁶', '1.23 × 10⁻⁴', '−6.6 × 10⁴')
    """
    if x == 0:
        return "0"
    n, d = _exact(x)
    exponent = math.floor(math.log10(abs(x)))  # a guess, set right below
    while n * 10 ** max(0, -exponent) < d * 10 ** max(0, exponent):          # abs(x) < 10**exponent
        exponent -= 1
    while n * 10 ** max(0, -exponent - 1) >= d * 10 ** max(0, exponent + 1):  # abs(x) >= 10**(exponent + 1)
        exponent += 1
    shift = digits - 1 - exponent  # abs(x) * 10**shift has `digits` digits before the point
    q = _round(n * 10 ** max(0, shift), d * 10 ** max(0, -shift))
    if q == 10 ** digits:  # 9.96 -> 10.0: one digit more, so one power of ten up
        q, exponent = q // 10, exponent + 1
    mantissa = str(q)
    if digits > 1:
        mantissa = (mantissa[0] + "." + mantissa[1:]).rstrip("0").rstrip(".")
    return (MINUS if x < 0 else "") + mantissa + " × 10" + superscript(exponent)


def signed(x, decimals=None):
    """Like num, but with an explicit sign for positive values. >>> signed(2) -> '+2'"""
    text = num(x, decimals)
    return text if text.startswith(MINUS) or text.strip("0.,") == "" else "+" + text
