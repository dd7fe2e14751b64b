"""@@NAME@@: the model against an independent computation, and the build's first state."""
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
sys.path[:0] = [str(ROOT), str(ROOT / "widgets" / "common")]

from course.widgets import Renderer, load_model  # noqa: E402

model = load_model("@@NAME@@")


def test_view_squares_x():
    for x in (-3.0, -0.5, 0.0, 2.5):
        assert model.view({"x": x})["out"]["y"] == model.num(x ** 2, 2)


def test_first_state_is_in_the_html():
    html = str(Renderer({"num": model.num})("@@NAME@@"))
    assert 'data-widget="@@NAME@@"' in html and f'data-out="y">{model.view(model.PARAMS)["out"]["y"]}<' in html
