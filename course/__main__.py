"""python -m course new lesson CHAPTER/lN-slug [--title T] [--question Q] [--our-model]
python -m course new widget NAME
python -m course new exercise LESSON/NAME [--title T]
python -m course facts [PREFIX]      every fact name a lesson can use, with its value

Scaffolds for authors (see AUTHORING.md): the files they write, and for a lesson its entry
in data/course.json. Then `make serve` shows the result live (exercises in the authors' gallery)."""
import argparse

from . import scaffold


def main(argv=None):
    parser = argparse.ArgumentParser(prog="python -m course", description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    sub = parser.add_subparsers(dest="command", required=True)
    new = sub.add_parser("new", help="write a new lesson, widget or exercise")
    kinds = new.add_subparsers(dest="kind", required=True)
    lesson = kinds.add_parser("lesson", help="lessons/CHAPTER/lN-slug.md, marked written in data/course.json")
    lesson.add_argument("path", help="e.g. c4/l2-residual")
    lesson.add_argument("--title", help="needed when the outline has no entry for it yet")
    lesson.add_argument("--question", help="the one question the lesson answers")
    lesson.add_argument("--our-model", action="store_true", help="add the 真模型 section (data from lab/)")
    lesson.add_argument("--draft", action="store_true",
                        help="built and reachable by its URL, but out of the nav, the course map and search")
    widget = kinds.add_parser("widget", help="widgets/NAME/ (model, template, view) and its test")
    widget.add_argument("name", help="e.g. depth-signal")
    exercise = kinds.add_parser("exercise", help="exercises/LESSON/NAME.py: task, starter, answer, cases, check, hints")
    exercise.add_argument("path", help="e.g. c4/l1/ffn-two-neurons")
    exercise.add_argument("--title", help="its heading (Chinese); a placeholder otherwise")
    facts = sub.add_parser("facts", help="list the facts a lesson can use: facts.NAME...")
    facts.add_argument("prefix", nargs="?", default="", help="e.g. anchor or real.card.training")
    args = parser.parse_args(argv)
    if args.command == "facts":
        for name, value in fact_lines(args.prefix):
            print(f"facts.{name} = {value}")
    elif args.kind == "lesson":
        path = scaffold.new_lesson(args.path, args.title, args.question, args.our_model, args.draft)
        print(f"wrote {path.relative_to(scaffold.ROOT)} and marked it {'draft' if args.draft else 'written'}"
              " in data/course.json;"
              " `make serve` shows it, AUTHORING.md says what goes in each section")
    elif args.kind == "exercise":
        path = scaffold.new_exercise(args.path, args.title)
        name = args.path.rsplit("/", 1)[1]
        print(f"wrote {path.relative_to(scaffold.ROOT)}; embed it with {{{{ exercise(\"{name}\") }}}} in its lesson;"
              " `make serve` shows it in the authors' gallery, AUTHORING.md describes each section")
    else:
        for path in scaffold.new_widget(args.name):
            print(f"wrote {path.relative_to(scaffold.ROOT)}")
        print(f'embed it with {{{{ widget("{args.name}") }}}} in a lesson; its test: pytest tests/widgets')


def fact_lines(prefix=""):
    """(dotted name, short value) for every leaf of the facts tree, as lessons address them."""
    from . import ROOT
    from .data import load_data
    from .facts import build_facts

    def walk(value, name):
        if isinstance(value, dict) and value:
            for key in value:
                yield from walk(value[key], f"{name}.{key}" if name else str(key))
        else:
            text = repr(value)
            yield name, text if len(text) <= 80 else text[:77] + "..."

    facts = build_facts(load_data(ROOT / "data", ROOT))
    return [(n, v) for n, v in walk(facts, "") if n.startswith(prefix)]


if __name__ == "__main__":
    main()
