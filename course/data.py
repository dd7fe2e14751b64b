"""Load every JSON file under data/ and check it against its JSON Schema.

Each data file `data/X.json` has a schema `data/schemas/X.schema.json`
(`data/real-model/X.json` -> `data/schemas/real-model/X.schema.json`); a data
file without one is an error, so nothing reaches a page unchecked.
"""
import json
from pathlib import Path

import jsonschema
from referencing import Registry, Resource
from referencing.jsonschema import DRAFT202012

from .errors import CourseError


def load_json(path, root):
    """Parse a JSON file; a syntax error names the file and line."""
    rel = _rel(path, root)
    try:
        text = Path(path).read_text(encoding="utf-8")
    except OSError as e:
        raise CourseError(rel, f"cannot read: {e.strerror}") from None
    try:
        return json.loads(text)
    except json.JSONDecodeError as e:
        raise CourseError(rel, f"malformed JSON: {e.msg} (column {e.colno})", line=e.lineno) from None


def key_path(path):
    """>>> key_path(["config", "layer_types", 3]) -> 'config.layer_types[3]'"""
    out = ""
    for part in path:
        out += f"[{part}]" if isinstance(part, int) else (f".{part}" if out else str(part))
    return out or "(top level)"


def sibling_registry(schema_path, root):
    """The schemas beside schema_path, by file name, and those one folder up as "../name": a schema
    may $ref its neighbours ("residual.schema.json#/$defs/history") or its parent's ("../ablation.schema.json")."""
    folder = Path(schema_path).parent
    found = [(p.name, p) for p in sorted(folder.glob("*.schema.json"))]
    found += [(f"../{p.name}", p) for p in sorted(folder.parent.glob("*.schema.json"))]
    # A "../x" inside a sibling reached by its bare name ("residual.schema.json#...") resolves
    # against that name, to "x": the parent's schema answers it too, where no sibling is called x.
    found += [(p.name, p) for p in sorted(folder.parent.glob("*.schema.json")) if not (folder / p.name).exists()]
    return Registry().with_resources(
        (name, Resource.from_contents(load_json(p, root), default_specification=DRAFT202012)) for name, p in found)


def validate(value, schema, rel, registry=None):
    """Raise CourseError naming the file and the key path of the first violation."""
    validator = jsonschema.Draft202012Validator(schema, registry=registry or Registry())
    # A wrong schema_version first: it explains the rest (a schema may check each version's own shape).
    errors = sorted(validator.iter_errors(value),
                    key=lambda e: (list(e.absolute_path)[:1] != ["schema_version"], list(map(str, e.absolute_path))))
    if errors:
        err = errors[0]
        raise CourseError(rel, f"{key_path(err.absolute_path)}: {err.message}")


def load_data(data_dir, root):
    """Return {"anchor-model": {...}, "real-model/ablation": {...}, ...} for every data file."""
    data_dir = Path(data_dir)
    schema_dir = data_dir / "schemas"
    out = {}
    for path in sorted(data_dir.rglob("*.json")):
        if schema_dir in path.parents:
            continue
        name = path.relative_to(data_dir).with_suffix("").as_posix()
        schema_path = schema_dir / f"{name}.schema.json"
        if not schema_path.exists():
            raise CourseError(_rel(path, root), f"no schema: add {_rel(schema_path, root)}")
        value = load_json(path, root)
        validate(value, load_json(schema_path, root), _rel(path, root), sibling_registry(schema_path, root))
        out[name] = value
    return out


def _rel(path, root):
    try:
        return Path(path).resolve().relative_to(Path(root).resolve()).as_posix()
    except ValueError:
        return str(path)
