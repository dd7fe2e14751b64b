"""Numbers derived from data/ at build time: the only source of figures in lessons.

One module per data source, each with `facts(data) -> dict` of top-level names that
Jinja reads as `facts.NAME...`:

    anchor.py      data/anchor-model.json        facts.anchor
    frontier.py    data/frontier-models.json     facts.gpt2, facts.deepseek67b, facts.llama2_7b, facts.clamps
    papers.py      data/papers.json              facts.papers
    numerics.py    number formats themselves     facts.silu10_times10, facts.fp16
    real_model.py  data/real-model/ (lab/)       facts.real (None before the first export)
    residual.py    data/real-model/residual/     facts.residual (None before the first export)
    norm.py        data/real-model/norm/         facts.norm (None before the first export)
    gating.py      data/real-model/gating/       facts.gating (None before the first export)
    attention.py   data/real-model/attention/    facts.attention (None before the first export)

A new data source or lab experiment adds a module here: build_facts() finds it.
Every derivation is written out once; tests pin the results.
"""
import importlib
import pkgutil

from ..errors import CourseError


def sources():
    """The fact modules of this package, in name order."""
    return [importlib.import_module(f"{__name__}.{m.name}") for m in pkgutil.iter_modules(__path__)
            if not m.name.startswith("_")]


def build_facts(data):
    facts = {}
    for module in sources():
        for name, value in module.facts(data).items():
            if name in facts:
                raise CourseError(f"course/facts/{module.__name__.rsplit('.', 1)[1]}.py",
                                  f"facts.{name} is already defined by another fact module")
            facts[name] = value
    return facts
