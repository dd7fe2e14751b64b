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


def signed(x, decimals=None):
    """Like num, but with an explicit sign for positive values. >>> signed(2) -> '+2'"""
    text = num(x, decimals)
    return text if text.startswith(MINUS) or text.strip("0.,") == "" else "+" + text
