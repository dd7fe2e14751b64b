"""The runtime's own Python under MicroPython: mp_worker.js imports it as `_cw_mp_bridge`,
beside the models and widgets/common/ that it writes there, and calls load() and call().
bridge.py's twin for Pyodide, in the subset both runtimes share (no importlib, no allow_nan)."""
import json


class ResultNotJSON(ValueError):
    pass


def load(module):
    """Import a model that mp_worker.js has just written beside this file."""
    __import__(module)


ROW = 64  # items json.dumps writes in one piece


def dumps(value):
    """json.dumps(value), written in pieces joined once. MicroPython's json.dumps grows its text a
    few bytes at a time, so its time goes with the square of the text's length: a tiny-gpt run's
    state at the page's defaults (1.7 MB of JSON) took 5-10 s in one piece, over the call limit,
    and 0.2 s in rows. Dict keys are written as CPython's json writes them (str(key))."""
    if isinstance(value, dict):
        return "{" + ", ".join([json.dumps(k if isinstance(k, str) else str(k)) + ": " + dumps(v)
                                for k, v in value.items()]) + "}"
    if isinstance(value, (list, tuple)):
        for v in value:
            if isinstance(v, (list, tuple, dict)):
                return "[" + ", ".join([dumps(v) for v in value]) + "]"
        if len(value) > ROW:
            return "[" + ", ".join([json.dumps(value[i:i + ROW])[1:-1] for i in range(0, len(value), ROW)]) + "]"
    return json.dumps(value)


def call(module, fn, params_json):
    """module.fn(params) as JSON text. MicroPython's json writes NaN as `nan`: mp_worker.js
    parses the text before it goes back, so such a result is reported, as under Pyodide."""
    result = getattr(__import__(module), fn)(json.loads(params_json))
    try:
        return dumps(result)
    except (TypeError, ValueError) as e:
        raise ResultNotJSON(module + "." + fn + " returned " + str(e))
