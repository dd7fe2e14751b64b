"""Facts derived from data/: pinned to the lesson's numbers and checked against an independent count."""
import importlib.util

import pytest
from support import ROOT, SHARED

from course.data import load_data
from course.facts import build_facts


@pytest.fixture(scope="module")
def facts():
    return build_facts(load_data(ROOT / "data", ROOT))


def test_anchor_ffn_ratio(facts):
    anchor = facts["anchor"]
    assert (anchor["d"], anchor["d_ff"]) == (5120, 17408)
    assert round(anchor["ffn_ratio"], 4) == 3.4


def test_anchor_parameter_count_matches_the_published_checkpoint(facts):
    counts = facts["anchor"]["params"]
    assert counts["checkpoint"] == facts["anchor"]["published_params"] == 27_781_427_952
    assert counts["text"] == 26_895_998_464
    assert (counts["n_linear"], counts["n_full"]) == (48, 16)


def test_anchor_ffn_share_under_the_lessons_convention(facts):
    assert round(100 * facts["anchor"]["ffn_share"], 1) == 61.6
    assert round(100 * facts["anchor"]["ffn_share_text"], 1) == 63.6


def test_share_agrees_with_the_independent_count(facts):
    script = SHARED / "facts" / "count_params.py"
    if not script.exists():
        pytest.skip("../shared/facts/count_params.py is not beside this checkout")
    spec = importlib.util.spec_from_file_location("count_params", script)
    count_params = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(count_params)
    anchor = load_data(ROOT / "data", ROOT)["anchor-model"]
    assert count_params.ffn_share(anchor["config"]) == facts["anchor"]["ffn_share"]
