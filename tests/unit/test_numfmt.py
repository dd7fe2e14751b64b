import numfmt


def test_thousands_separators_and_ratio():
    assert numfmt.num(17408) == "17,408"
    assert numfmt.num(17408 / 5120, 1) == "3.4"


def test_true_minus_and_no_negative_zero():
    assert numfmt.num(-2) == "\u22122"
    assert numfmt.num(-0.0001, 3) == "0.000"


def test_whole_numbers_drop_decimals_others_get_three():
    assert numfmt.num(2.0) == "2"
    assert numfmt.num(0.8413) == "0.841"


def test_percent_and_signed():
    assert numfmt.pct(0.6159784) == "61.6%"
    assert numfmt.signed(2) == "+2"
    assert numfmt.signed(-2) == "\u22122"


def test_sci_keeps_tiny_and_huge_values_readable():
    from numfmt import sci
    assert (sci(1e-6), sci(0.00012345, 3), sci(-65504.0), sci(0)) == ("1 × 10⁻⁶", "1.23 × 10⁻⁴", "−6.6 × 10⁴", "0")

