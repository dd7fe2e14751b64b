"""The site's schemas for data/real-model/ accept lab/'s export and reject a broken one."""
import json

import pytest
from support import ROOT

from course.data import load_data, validate
from course.errors import CourseError

FIXTURE = ROOT / "tests" / "fixtures" / "real-model"
SCHEMAS = ROOT / "data" / "schemas" / "real-model"


@pytest.mark.parametrize("name", ["model-card", "ablation", "neurons"])
def test_lab_export_fixture_validates(name):
    value = json.loads((FIXTURE / f"{name}.json").read_text(encoding="utf-8"))
    validate(value, json.loads((SCHEMAS / f"{name}.schema.json").read_text(encoding="utf-8")), name)


def test_a_broken_export_names_the_key_path():
    value = json.loads((FIXTURE / "ablation.json").read_text(encoding="utf-8"))
    value["variants"][1]["val_losses"][0] = "high"
    schema = json.loads((SCHEMAS / "ablation.schema.json").read_text(encoding="utf-8"))
    with pytest.raises(CourseError, match=r"variants\[1\]\.val_losses\[0\]"):
        validate(value, schema, "data/real-model/ablation.json")


def test_real_export_if_present_validates():
    data = load_data(ROOT / "data", ROOT)  # raises on any schema violation
    if (ROOT / "data" / "real-model").exists():
        assert {"real-model/model-card", "real-model/ablation", "real-model/neurons"} <= set(data)
