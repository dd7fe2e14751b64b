"""Every experiment's export on the tiny corpus equals its fixture in tests/fixtures/lab-exports/.

The FFN, residual and mechanism fixtures were made with the code from before lab/experiments/
(commit 3d66e3b, also before the norm variants), the norm one with the code that introduced it
(8bd2fdc); tests/fixtures/make_lab_export_fixtures.py runs the same commands now. What may
differ is only what cannot repeat: the date, the code's commit, wall times and speeds (and, on
another machine than the fixtures', the machine itself and the last digit of a float)."""
import json
import math
import sys
from pathlib import Path

import pytest

torch = pytest.importorskip("torch")
pytest.importorskip("tokenizers")

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT / "tests" / "fixtures"))
import make_lab_export_fixtures as fixtures  # noqa: E402
from lab.experiments import common  # noqa: E402

pytestmark = pytest.mark.lab
ABLATION = ROOT / "data" / "real-model" / "ablation.json"

# Keys whose values are provenance or timing: compared for presence, not value.
VOLATILE = {"date", "lab_commit", "lab_dirty", "wall_seconds", "tokens_per_second", "train_tokens_per_second",
            "measure_seconds", "new_runs_seconds", "prepare_seconds", "train_seconds", "export_seconds"}
# The norm export's speed block is a measurement of this machine's load at that moment.
VOLATILE_BLOCKS = {"speed"}
MACHINE = {"name", "cpu_count", "torch"}  # hardware.*: volatile only when the machine differs


def masked(value, key=None, machine=False):
    if key in VOLATILE or key in VOLATILE_BLOCKS:
        return "<volatile>"
    if isinstance(value, dict):
        return {k: masked(v, k, machine) if not (machine and key == "hardware" and k in MACHINE) else "<machine>"
                for k, v in value.items()}
    if isinstance(value, list):
        return [masked(v, None, machine) for v in value]
    return value


def differences(a, b, path="", rel=0.0, out=None):
    """Paths where a and b differ (floats within `rel` relative tolerance count as equal)."""
    out = [] if out is None else out
    if isinstance(a, dict) and isinstance(b, dict):
        if list(a) != list(b):
            out.append(f"{path}: keys {list(a)} != {list(b)}")
        for k in a.keys() & b.keys():
            differences(a[k], b[k], f"{path}.{k}", rel, out)
    elif isinstance(a, list) and isinstance(b, list):
        if len(a) != len(b):
            out.append(f"{path}: {len(a)} items != {len(b)}")
        for i, (x, y) in enumerate(zip(a, b)):
            differences(x, y, f"{path}[{i}]", rel, out)
    elif isinstance(a, float) and isinstance(b, float) and rel:
        if not math.isclose(a, b, rel_tol=rel, abs_tol=1e-12):
            out.append(f"{path}: {a} != {b}")
    elif a != b or type(a) is not type(b):
        out.append(f"{path}: {a!r} != {b!r}")
    return out


@pytest.fixture(scope="module")
def generated(tmp_path_factory):
    root = tmp_path_factory.mktemp("exports")
    return {name: fixtures.generate(name, root / "out", root) for name in fixtures.COMMANDS}


@pytest.mark.parametrize("name", list(fixtures.COMMANDS))
def test_the_export_equals_its_fixture(generated, name):
    want_dir = fixtures.OUT / name
    files = sorted(p.name for p in want_dir.glob("*.json"))
    assert files and files == sorted(p.name for p in generated[name].glob("*.json"))
    wants = {f: json.loads((want_dir / f).read_text(encoding="utf-8")) for f in files}
    hw = next(w.get("model_card", w)["hardware"] for w in wants.values() if "hardware" in w.get("model_card", w))
    here = {"name": common.cpu_name(), "torch": torch.__version__}
    other_machine = any(hw.get(k) != v for k, v in here.items())  # then floats may differ in the last digit
    for file, want in wants.items():
        got = json.loads((generated[name] / file).read_text(encoding="utf-8"))
        if isinstance(want.get("baseline_band"), dict) and want["baseline_band"].get("source") == "ablation.json":
            # Read from the committed FFN export, not trained on the tiny corpus: it follows data/.
            assert got["baseline_band"] == common.band_from_ablation(ABLATION), "the band is not the committed one"
            want, got = {**want, "baseline_band": "<committed>"}, {**got, "baseline_band": "<committed>"}
        diff = differences(masked(want, machine=other_machine), masked(got, machine=other_machine),
                           file, rel=2e-3 if other_machine else 0.0)
        assert not diff, "\n".join(diff[:20])
