"""Number formatting shared by the build's Jinja filters and every widget model.

One formatter, so a value reads the same in prose, in a pre-rendered widget and
in the live widget under Pyodide. Standard library only.
"""
MINUS = "\u2212"  # a true minus sign, not a hyphen


def num(x, decimals=None):
    """Format a number with thousands separators and a true minus sign.

    decimals=None shows whole numbers as integers and others with 3 decimals.
    >>> num(17408), num(3.4, 1), num(-0.5), num(2.0), num(-0.0004, 3)
    ('17,408', '3.4', '−0.500', '2', '0.000')
    """
    if decimals is None:
        decimals = 0 if abs(x - round(x)) < 1e-9 else 3
    text = f"{x:,.{decimals}f}"
    if text.startswith("-"):
        text = text[1:] if float(text[1:].replace(",", "")) == 0 else MINUS + text[1:]
    return text


def pct(ratio, decimals=1):
    """A ratio as a percentage. >>> pct(0.61596) -> '61.6%'"""
    return num(100 * ratio, decimals) + "%"


SUPERSCRIPT = str.maketrans("-0123456789", "\u207b\u2070\u00b9\u00b2\u00b3\u2074\u2075\u2076\u2077\u2078\u2079")


def sci(x, digits=2):
    """Scientific notation for tiny or huge values, which num would round away.

    >>> sci(1e-6), sci(0.00012345, 3), sci(-65504.0)
    ('1 × 10⁻⁶', '1.23 × 10⁻⁴', '−6.6 × 10⁴')
    """
    if x == 0:
        return "0"
    mantissa, exponent = f"{x:.{digits - 1}e}".split("e")
    mantissa = mantissa.rstrip("0").rstrip(".") if "." in mantissa else mantissa
    mantissa = mantissa.replace("-", MINUS)
    return f"{mantissa} × 10{str(int(exponent)).translate(SUPERSCRIPT)}"


def signed(x, decimals=None):
    """Like num, but with an explicit sign for positive values. >>> signed(2) -> '+2'"""
    text = num(x, decimals)
    return text if text.startswith(MINUS) or text.strip("0.,") == "" else "+" + text
