"""House rules for widgets: each folder has its model, view, template and tests."""
from support import ROOT

from course import widgets


def test_every_widget_has_model_view_template_and_tests():
    assert widgets.names(), "no widgets found"
    for name in widgets.names():
        folder = widgets.folder_of(name)
        for part in widgets.REQUIRED:
            assert (folder / part).exists(), f"{folder.name}/{part} missing"
        assert (ROOT / "tests" / "widgets" / f"test_{folder.name}.py").exists(), f"no tests for {name}"


def test_models_use_only_the_standard_library_and_common():
    import ast
    import sys
    allowed = set(sys.stdlib_module_names) | {p.stem for p in widgets.COMMON.glob("*.py")}
    for name in widgets.names():
        tree = ast.parse((widgets.folder_of(name) / "model.py").read_text(encoding="utf-8"))
        for node in ast.walk(tree):
            if isinstance(node, (ast.Import, ast.ImportFrom)):
                modules = [a.name for a in node.names] if isinstance(node, ast.Import) else [node.module]
                for module in modules:
                    assert module.split(".")[0] in allowed, f"{name}/model.py imports {module}"
