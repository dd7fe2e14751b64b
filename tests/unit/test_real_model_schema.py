"""One contract for data/real-model/: the site's loader checks it with data/schemas/real-model/,
the same files lab/ validates its export with (tests/lab checks the lab side)."""
import json
import shutil

import pytest
from support import ROOT

from course.data import load_data, validate
from course.errors import CourseError

FIXTURE = ROOT / "tests" / "fixtures" / "real-model"
SCHEMAS = ROOT / "data" / "schemas" / "real-model"
NAMES = ["model-card", "ablation", "neurons"]


def fixture(name):
    return json.loads((FIXTURE / f"{name}.json").read_text(encoding="utf-8"))


def schema(name):
    return json.loads((SCHEMAS / f"{name}.schema.json").read_text(encoding="utf-8"))


def data_dir_with(tmp_path, files):
    """A scratch data/ holding only the real-model schemas and the given export files."""
    data = tmp_path / "data"
    shutil.copytree(SCHEMAS, data / "schemas" / "real-model")
    (data / "real-model").mkdir()
    for name, value in files.items():
        (data / "real-model" / f"{name}.json").write_text(json.dumps(value, ensure_ascii=False), encoding="utf-8")
    return data


@pytest.mark.parametrize("name", NAMES)
def test_lab_export_fixture_validates(name):
    validate(fixture(name), schema(name), name)


def test_the_site_loads_the_fixture_through_the_schemas(tmp_path):
    data = load_data(data_dir_with(tmp_path, {n: fixture(n) for n in NAMES}), tmp_path)
    assert [v["name"] for v in data["real-model/ablation"]["variants"]] == [
        "baseline", "linear_ffn", "no_ffn", "attn_only_12l"]


def test_a_broken_export_names_the_key_path():
    value = fixture("ablation")
    value["variants"][1]["val_losses"][0] = "high"
    with pytest.raises(CourseError, match=r"variants\[1\]\.val_losses\[0\]"):
        validate(value, schema("ablation"), "data/real-model/ablation.json")


def test_an_export_without_the_contexts_chars_fails_to_load(tmp_path):
    """The fixture as it was before top_contexts[].chars: the schema is strict, so the build stops."""
    old = fixture("neurons")
    for neuron in old["neurons"]:
        for context in neuron["top_contexts"]:
            del context["chars"]
    files = {"model-card": fixture("model-card"), "ablation": fixture("ablation"), "neurons": old}
    with pytest.raises(CourseError, match=r"real-model/neurons\.json.*neurons\[0\]\.top_contexts\[0\].*'chars'"):
        load_data(data_dir_with(tmp_path, files), tmp_path)


@pytest.mark.parametrize("change, where", [
    (lambda card: card["architecture"].pop("residual_init_rule"), r"architecture.*'residual_init_rule'"),
    (lambda card: card["architecture"].__setitem__("hand_written", 1), r"architecture.*hand_written"),
    (lambda card: card["configs"]["train"].__setitem__("data_dir", "lab/runs/data"), r"configs\.train"),
    (lambda card: card.__setitem__("command", "python -m lab all --corpus /home/me/sanguo.txt"), r"command"),
    (lambda card: card.__setitem__("schema_version", 1), r"schema_version"),
])
def test_the_model_card_schema_is_strict(change, where):
    card = fixture("model-card")
    change(card)
    with pytest.raises(CourseError, match=where):
        validate(card, schema("model-card"), "data/real-model/model-card.json")


def test_real_export_if_present_validates():
    data = load_data(ROOT / "data", ROOT)  # raises on any schema violation
    if (ROOT / "data" / "real-model").exists():
        assert {"real-model/model-card", "real-model/ablation", "real-model/neurons"} <= set(data)


def test_the_site_reads_the_committed_edition_and_the_seven_book_one(tmp_path):
    """The fixture is the lab's current export (schema 3: books, per-step band, protocol), and so is
    the committed data/real-model/ (the seven-book edition). The site loads both, and reads the
    heatmap book's validation chapters from each."""
    from course.facts.real_model import real_model_facts

    new = {n: fixture(n) for n in NAMES}
    assert new["model-card"]["schema_version"] == new["ablation"]["schema_version"] == 3
    assert new["ablation"]["baseline_band"] and new["model-card"]["protocol"]["one_seed_factor"] == 5
    committed = {n: json.loads((ROOT / "data" / "real-model" / f"{n}.json").read_text(encoding="utf-8")) for n in NAMES}
    assert committed["model-card"]["schema_version"] == 3 and len(committed["model-card"]["corpus"]["files"]) == 7
    for k, files in enumerate((new, committed)):
        loaded = load_data(data_dir_with(tmp_path / str(k), files), ROOT)
        facts = real_model_facts(loaded["real-model/model-card"], loaded["real-model/ablation"],
                                 loaded["real-model/neurons"])
        lo, hi = facts["val_chapters"]
        assert lo <= files["neurons"]["split"]["select_chapters"][0] and files["neurons"]["split"]["read_chapters"][1] == hi
