"""The synthetic copy task (python -m lab copytask): every sequence repeats its first L symbols right after them with
L drawn per sequence, and the mask covers exactly the repeat's predictable tokens; the copy loss can fail (a perfect
copier scores about 0 on it and ln(vocab) on the first copy, a blind guesser ln(vocab) on both); a small export
validates, holds no path of this machine, keeps the widget's maps for the first seed only, and every map row is a
distribution over the keys up to its query."""
import json
import math

import pytest

torch = pytest.importorskip("torch")

from lab import schema  # noqa: E402
from lab.__main__ import main  # noqa: E402
from lab.experiments import copy_task  # noqa: E402

pytestmark = pytest.mark.lab
SMALL = ["steps=40", "every=20", "seeds=0,1", "snap_steps=0,40", "eval_sequences=16", "head_sequences=4"]


def test_every_sequence_repeats_its_first_L_and_the_mask_covers_the_repeat():
    cfg = copy_task.Config()
    x, mask = copy_task.draw(200, cfg, torch.Generator().manual_seed(0))
    lengths = copy_task.lengths_of(mask)
    assert {min(lengths), max(lengths)} == {cfg.min_len, cfg.max_len}  # the whole range is drawn
    for row, m, n in zip(x, mask, lengths):
        assert torch.equal(row[n: 2 * n], row[:n])
        assert m.nonzero().flatten().tolist() == list(range(n, 2 * n - 1))


class Copier(torch.nn.Module):
    """Logits that put (almost) all mass on the true next token where the repeat makes it certain, else uniform."""

    def __init__(self, x, mask, sure=True):
        super().__init__()
        self.x, self.mask, self.sure = x, mask, sure

    def forward(self, inputs):
        logits = torch.zeros(*inputs.shape, 32)
        if self.sure:
            logits[self.mask, self.x[:, 1:][self.mask]] = 50.0
        return logits, None


def test_a_perfect_copier_scores_zero_on_the_repeat_and_a_blind_guesser_does_not():
    cfg = copy_task.Config()
    x, mask = copy_task.draw(50, cfg, torch.Generator().manual_seed(1))
    loss, first = copy_task.copy_loss(Copier(x, mask), x, mask)
    assert loss < 1e-6 and first == pytest.approx(math.log(32), rel=1e-6)
    loss, first = copy_task.copy_loss(Copier(x, mask, sure=False), x, mask)
    assert loss == pytest.approx(math.log(32), rel=1e-6) and first == pytest.approx(math.log(32), rel=1e-6)


def test_a_small_export_validates_and_keeps_the_widgets_maps_for_the_first_seed(tmp_path):
    main(["copytask", "--out", str(tmp_path), *SMALL])
    text = (tmp_path / "copy-task.json").read_text(encoding="utf-8")
    assert str(tmp_path) not in text
    doc = json.loads(text)
    schema.validate(schema.COPY_TASK_FILE, doc)
    assert doc["command"].startswith("python -m lab copytask --out PATH/TO/")
    assert [(r["variant"], r["seed"]) for r in doc["runs"]] == [(v, s) for v in copy_task.ARMS for s in (0, 1)]
    for r in doc["runs"]:
        assert [p["step"] for p in r["points"]] == [0, 20, 40]
        assert ("snapshots" in r) == (r["seed"] == 0)
    two = doc["runs"][0]
    assert [s["step"] for s in two["snapshots"]] == [0, 40]
    maps = two["snapshots"][-1]["maps"]
    assert len(maps) == 2 and len(maps[0]) == 2 and len(maps[0][0]) == len(doc["example"]) == 20
    for layer in maps:
        for head in layer:
            for t, row in enumerate(head):
                assert len(row) == t + 1 and sum(row) == pytest.approx(1, abs=0.01 * (t + 1))
    bad = json.loads(text)
    del bad["runs"][0]["points"][0]["copy_loss"]
    with pytest.raises(schema.SchemaError, match="copy_loss"):
        schema.validate(schema.COPY_TASK_FILE, bad)


def test_a_segment_that_cannot_repeat_inside_the_context_is_refused(tmp_path):
    with pytest.raises(ValueError, match="must fit"):
        main(["copytask", "--out", str(tmp_path), "max_len=30", *SMALL])
