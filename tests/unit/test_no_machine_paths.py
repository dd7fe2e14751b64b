"""No committed JSON under data/ or tests/fixtures/ holds a path of the machine that wrote it.

An export names its corpus by file name and sha256 and records the command as a user
types it; a path like /tmp/tmpab12/tiny.txt or /home/me/corpus.txt says nothing to a
reader and leaks the author's machine.
"""
import json
import re
import subprocess

import pytest
from support import ROOT

MACHINE_PATH = re.compile(r"^(/|[A-Za-z]:[\\/])|/(tmp|work|home|root)/")


def committed_json():
    """Every JSON file git tracks under data/ and tests/fixtures/ (every one on disk without git)."""
    try:
        out = subprocess.run(["git", "ls-files", "-z", "--", "data", "tests/fixtures"], cwd=ROOT, check=True,
                             capture_output=True, text=True).stdout
        files = [f for f in out.split("\0") if f.endswith(".json")]
    except (OSError, subprocess.CalledProcessError):
        files = [p.relative_to(ROOT).as_posix() for d in ("data", "tests/fixtures") for p in (ROOT / d).rglob("*.json")]
    return sorted(files)


def machine_paths(value, path=""):
    """(key path, string) for every string value that looks like a path on some machine.

    machine_paths({"a": ["x", "/srv/y"]}) -> [("a[1]", "/srv/y")]
    """
    if isinstance(value, dict):
        return [hit for k, v in value.items() for hit in machine_paths(v, f"{path}.{k}" if path else k)]
    if isinstance(value, list):
        return [hit for i, v in enumerate(value) for hit in machine_paths(v, f"{path}[{i}]")]
    if isinstance(value, str) and MACHINE_PATH.search(value):
        return [(path, value)]
    return []


def test_the_rule():
    assert machine_paths({"a": ["x", "/srv/y"], "b": "C:\\corpus.txt", "c": "python -m lab --work /work/runs"}) == [
        ("a[1]", "/srv/y"), ("b", "C:\\corpus.txt"), ("c", "python -m lab --work /work/runs")]
    assert machine_paths({"corpus": "sanguo-yanyi.txt", "url": "https://huggingface.co/Qwen/x/blob/y/config.json",
                          "command": "python -m lab all --corpus PATH/TO/sanguo-yanyi.txt", "ratio": "8/3"}) == []


def test_the_exports_are_checked():
    files = committed_json()
    assert "tests/fixtures/real-model/model-card.json" in files and "data/real-model/model-card.json" in files


@pytest.mark.parametrize("rel", committed_json())
def test_no_machine_path_in(rel):
    hits = machine_paths(json.loads((ROOT / rel).read_text(encoding="utf-8")))
    assert not hits, f"{rel}: " + "; ".join(f"{p}: {s[:100]!r}" for p, s in hits[:5])
