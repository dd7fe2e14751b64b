"""The runtime's own Python: worker.js imports it in Pyodide as `_cw_bridge`, beside the
models and widgets/common/ that it writes there, and calls load() and call().

The build reads this file's imports, as it reads the models', to choose the standard
library modules that the site ships (course/stdlib.py).
"""
import importlib
import json
import os
import signal
import sys

HERE = os.path.dirname(__file__)  # where worker.js writes the models, this file and widgets/common/


class ResultNotJSON(ValueError):
    pass


class TimeUp(BaseException):
    """A call ran past its time: raised inside Python when worker.js's interrupt buffer says so.
    WebKit cannot end a worker that loops in WebAssembly, so a runaway loop must end itself.
    Not an Exception: a student's `except Exception` does not swallow it."""


_exit = os._exit  # kept: a run replaces os._exit with one that only ends the student's code


def _time_up(signum, frame):
    raise TimeUp()


def _give_up(signum, frame):
    """The time is long up and the code keeps catching TimeUp: leave Python altogether (it
    unwinds to the worker, which is then replaced)."""
    _exit(1)


def arm():
    """Let worker.js's interrupt buffer end a call: SIGINT raises TimeUp, SIGTERM leaves Python."""
    signal.signal(signal.SIGINT, _time_up)
    signal.signal(signal.SIGTERM, _give_up)


def load(module):
    """Import a model that worker.js has just written into HERE. Only HERE's finder forgets
    what it listed (importlib.invalidate_caches() would import importlib.metadata, and more)."""
    finder = sys.path_importer_cache.get(HERE)
    if finder is not None:
        finder.invalidate_caches()
    importlib.import_module(module)


def call(module, fn, params_json):
    """module.fn(params) as JSON text. allow_nan=False: NaN and Infinity are not JSON, and
    the page's JSON.parse would reject them later."""
    result = getattr(importlib.import_module(module), fn)(json.loads(params_json))
    try:
        return json.dumps(result, ensure_ascii=False, allow_nan=False)
    except (TypeError, ValueError) as e:
        raise ResultNotJSON(f"{module}.{fn} returned {e}") from None
