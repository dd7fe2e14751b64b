"""The runtime's own Python under MicroPython: mp_worker.js imports it as `_cw_mp_bridge`,
beside the models and widgets/common/ that it writes there, and calls load() and call().
bridge.py's twin for Pyodide, in the subset both runtimes share (no importlib, no allow_nan)."""
import json


class ResultNotJSON(ValueError):
    pass


def load(module):
    """Import a model that mp_worker.js has just written beside this file."""
    __import__(module)


def call(module, fn, params_json):
    """module.fn(params) as JSON text. MicroPython's json writes NaN as `nan`: mp_worker.js
    parses the text before it goes back, so such a result is reported, as under Pyodide."""
    result = getattr(__import__(module), fn)(json.loads(params_json))
    try:
        return json.dumps(result)
    except (TypeError, ValueError) as e:
        raise ResultNotJSON(module + "." + fn + " returned " + str(e))
