"""widgets/common/seeds.py, the seeds protocol every lesson reads its comparisons by: the paired
rule, the one-seed rule, and the words a page prints for each outcome."""
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT / "widgets" / "common"))  # seeds imports numfmt, as in the browser

import seeds  # noqa: E402


def fmt(x):
    return f"{x:.3f}"


def test_band_is_the_spread_over_seeds_and_needs_two():
    assert seeds.band([5.0, 5.2, 5.1]) == pytest.approx(0.2)
    assert seeds.band([5.0]) is None


def test_pairs_are_seed_for_seed_and_skip_unshared_seeds():
    assert seeds.paired({0: 5.0, 1: 5.1}, {0: 5.3, 1: 5.35, 2: 5.0}) == [(0, pytest.approx(0.3)), (1, pytest.approx(0.25))]


def test_paired_gap_counts_only_with_one_sign_and_beyond_the_band():
    base = {0: 5.00, 1: 5.05, 2: 5.02}
    higher = seeds.compare(base, {0: 5.20, 1: 5.22, 2: 5.19}, 0.05)
    assert higher["measured"] and higher["direction"] == 1 and higher["rule"] == "paired"
    lower = seeds.compare(base, {0: 4.80, 1: 4.83, 2: 4.85}, 0.05)
    assert lower["measured"] and lower["direction"] == -1
    mixed = seeds.compare(base, {0: 5.30, 1: 4.95, 2: 5.25}, 0.05)  # mean +0.14 but one pair goes the other way
    assert not mixed["measured"] and mixed["direction"] == 0 and not mixed["same_sign"]
    small = seeds.compare(base, {0: 5.02, 1: 5.07, 2: 5.04}, 0.05)  # every pair higher, mean 0.02 < band
    assert small["same_sign"] and not small["measured"]


def test_one_seed_needs_five_bands():
    assert seeds.compare({0: 5.0}, {0: 5.24}, 0.05)["measured"] is False  # 4.8 bands
    one = seeds.compare({0: 5.0}, {0: 5.26}, 0.05)
    assert one["measured"] and one["rule"] == "one_seed" and one["times"] == pytest.approx(5.2)


def test_without_a_band_nothing_counts():
    c = seeds.compare({0: 5.0, 1: 5.1}, {0: 9.0, 1: 9.1}, None)
    assert c["rule"] == "none" and not c["measured"]


def test_history_readings_take_the_step_each_run_reached():
    variant = {"seeds": [0, 1], "histories": [[{"step": 200, "val_loss": 6.0}, {"step": 400, "val_loss": 5.5}],
                                              [{"step": 200, "val_loss": 6.1}]]}
    assert seeds.history_by_seed(variant, 400, "val_loss") == {0: 5.5}
    assert seeds.band_at(variant["histories"], 200, "val_loss") == pytest.approx(0.1)
    assert seeds.band_at(variant["histories"], 400, "val_loss") is None


def test_the_words_follow_the_outcome():
    base = {0: 5.00, 1: 5.05, 2: 5.02}
    said = seeds.verdict_phrase(seeds.compare(base, {0: 5.20, 1: 5.22, 2: 5.19}, 0.05), fmt)
    assert said.startswith("3 个种子配对，每一对都高") and "算测到了" in said and "3.6 倍" in said
    said = seeds.verdict_phrase(seeds.compare(base, {0: 5.30, 1: 4.95, 2: 5.25}, 0.05), fmt)
    assert "有的高有的低" in said and said.endswith("分不出高下")
    said = seeds.verdict_phrase(seeds.compare({0: 5.0}, {0: 5.1}, 0.05), fmt)
    assert said.startswith("只有 1 个种子") and "5 倍" in said and said.endswith("分不出高下")
    said = seeds.verdict_phrase(seeds.compare({0: 5.0}, {0: 6.0}, 0.05), fmt)
    assert "一个种子也够" in said


def test_a_gap_that_rounds_to_zero_names_no_side():
    said = seeds.verdict(seeds.compare({0: 5.0, 1: 5.1}, {0: 5.0004, 1: 5.0998}, 0.05))
    assert "平均差 0.000" in said and "低" not in said.replace("有的高有的低", "") and "分不出高下" in said


def test_a_gap_far_inside_the_band_is_not_said_as_zero_bands():
    said = seeds.verdict(seeds.compare({0: 5.0}, {0: 4.988}, 0.385))
    assert "是基线种子带 0.385 的不到 0.1 倍" in said and "0.0 倍" not in said
    assert seeds.times_text(0.05) == " 0.1 倍" and seeds.times_text(2.04) == " 2.0 倍"
    assert seeds.times_text(0.97) == " 0.97 倍" and seeds.times_text(1.04) == " 1.04 倍"


def test_the_brief_reading_says_the_same_verdict():
    base = {0: 5.00, 1: 5.05, 2: 5.02}
    for other, width in (({0: 5.20, 1: 5.22, 2: 5.19}, 0.05), ({0: 5.30, 1: 4.95, 2: 5.25}, 0.05),
                         ({0: 5.03, 1: 5.06, 2: 5.03}, 0.05)):
        c = seeds.compare(base, other, width)
        said = seeds.brief(c)
        assert said.endswith("：测到）" if c["measured"] else "：分不出）"), said
    assert seeds.brief(seeds.compare(base, {0: 5.20, 1: 5.22, 2: 5.19}, 0.05)) == "高 0.180（3 个种子，每一对都高，种子带的 3.6 倍：测到）"
    assert seeds.brief(seeds.compare({0: 5.0}, {0: 4.988}, 0.385)) == "低 0.012（1 个种子，种子带的不到 0.1 倍：分不出）"
    # Pairs that disagree in sign get no side, only the signed mean.
    assert seeds.brief(seeds.compare(base, {0: 5.10, 1: 4.90, 2: 4.95}, 0.05)) == \
        f"平均差 −{abs(seeds.compare(base, {0: 5.10, 1: 4.90, 2: 4.95}, 0.05)['gap']):.3f}（3 个种子，有的高有的低：分不出）"
