"""pytest's default import mode keys test modules by file name: two test files
with the same name in different folders stop collection of the whole suite
(CI's run on 2026-12-06 failed on tests/lab and tests/widgets' test_copy_task.py).
Running one folder at a time never shows it, so this test does."""

from collections import defaultdict
from pathlib import Path

TESTS = Path(__file__).resolve().parent.parent


def test_no_two_test_files_share_a_name():
    by_name = defaultdict(list)
    for path in TESTS.rglob("test_*.py"):
        if "fixtures" not in path.parts:
            by_name[path.name].append(str(path.relative_to(TESTS)))
    clashes = {name: paths for name, paths in by_name.items() if len(paths) > 1}
    assert not clashes, f"test files sharing a name (rename one): {clashes}"
