"""attention-map on the lab's tiny-corpus export (tests/fixtures/real-model/attention/): the compact
data keeps what the view shows, a query's colours follow its row, the later tokens are marked out of
reach, the measures are the export's, and the default head is the strongest previous-token head."""
import json
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
sys.path[:0] = [str(ROOT), str(ROOT / "widgets" / "common")]

from course.widgets import load_model  # noqa: E402

model = load_model("attention-map")
DATA = json.loads((ROOT / "tests/fixtures/real-model/attention/attention.json").read_text(encoding="utf-8"))


def test_the_default_head_is_the_strongest_previous_token_head():
    best = max(DATA["measures"]["heads"], key=lambda h: (h["previous"], -h["layer"], -h["head"]))
    s = model.view({**model.PARAMS, "data": DATA})
    assert (s["params"]["layer"], s["params"]["head"]) == (best["layer"], best["head"])


@pytest.mark.parametrize("query", [0, 3, None])
def test_a_query_shades_its_row(query):
    s = model.view({**model.PARAMS, "data": DATA, "layer": 2, "head": 3, "query": query})
    p = DATA["passages"][0]
    q = len(p["tokens"]) - 1 if query is None else query
    row = p["weights"][1][2][q]
    for j, t in enumerate(s["tokens"]):
        assert t["later"] == (j > q)
        assert (t["color"] == "transparent") == (j > q or row[j] == 0)
    best = max(range(q + 1), key=lambda j: (row[j], -j))
    assert s["out"]["detail"].split("：", 1)[1].startswith("「" + model.display(p["tokens"][best]["text"]) + "」")


def test_the_measures_are_the_exports():
    s = model.view({**model.PARAMS, "data": DATA, "layer": 1, "head": 2})
    h = DATA["measures"]["heads"][1]
    assert s["measures"][0]["head"] == f"{100 * h['previous']:.1f}%"
    assert s["measures"][-1]["blind"] == f"{DATA['measures']['prefix_average']['distance']:.1f}"


def test_the_page_carries_the_compact_data():
    small = model.page_params({**model.PARAMS, "data": DATA})["data"]
    assert model.compact(small) is small
    assert len(json.dumps(small, ensure_ascii=False)) < len(json.dumps(DATA, ensure_ascii=False))
    assert model.view({**model.PARAMS, "data": small}) == model.view({**model.PARAMS, "data": DATA})
