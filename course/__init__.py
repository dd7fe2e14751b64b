"""The course build: data -> facts -> Jinja -> Markdown, plus widgets and vendored assets.

build.py wires these modules into mkdocs hooks; nothing here imports mkdocs,
so a move to another static-site generator keeps this package as it is.
"""
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
