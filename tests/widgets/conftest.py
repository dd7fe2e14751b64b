"""The course's facts, built once for the widget tests that give a model the gallery's params."""
import pytest

from course import ROOT
from course.data import load_data
from course.facts import build_facts


@pytest.fixture(scope="session")
def facts():
    return build_facts(load_data(ROOT / "data", ROOT))
