"""What a student's run may change in the browser's Python, put back when it ends: worker.js
imports this file as `_cw_state`.

The exercises and the widgets share one Python for the visit, so a run that patches
`math.isclose`, `json.dumps`, `builtins.print`, the checker or a widget's model would
otherwise change every later run and every widget. snapshot() records, before a run, each
imported module's names, the attributes of the classes those modules define, the lists and
settings of `sys`, the warning filters, the SIGINT and SIGTERM handlers, the environment, the
working directory and the files beside it and in every folder on `sys.path` (a `fractions.py`
written to site-packages once shadowed the module in another exercise); Snapshot.restore() puts
them back and forgets the modules the run imported.

Not covered (deliberate mischief only): objects changed in place deeper than a module's or a
class's own names (`json.decoder.scanstring.__code__ = ...`), and C-level state such as a
seeded `random`'s generator (reseeded by the code that uses it).

    >>> import math
    >>> saved = snapshot()
    >>> math.isclose = lambda *a, **k: True
    >>> saved.restore()
    >>> math.isclose(1, 2)
    False
"""
import os
import signal
import sys
import warnings

_IMMUTABLE = 1 << 8  # Py_TPFLAGS_IMMUTABLETYPE: built-in types that no code can patch
_SYS_LISTS = ("path", "meta_path", "path_hooks")


def _patchable_classes(module):
    for value in list(vars(module).values()):
        if (isinstance(value, type) and not value.__flags__ & _IMMUTABLE
                and getattr(value, "__module__", None) == module.__name__):
            yield value


def _listing(folder):
    try:
        return set(os.listdir(folder))
    except OSError:
        return set()


def _remove(path):
    if os.path.isdir(path) and not os.path.islink(path):
        for name in os.listdir(path):
            _remove(os.path.join(path, name))
        os.rmdir(path)
    else:
        os.remove(path)


def _put_back(current, saved, setitem, delitem):
    """Give `current` (a namespace) exactly the names of `saved`: set first, delete after, so a
    name the deleting needs (a destructor calling print) is back already."""
    for key, value in saved.items():
        if current.get(key, _put_back) is not value:
            setitem(key, value)
    for key in [key for key in current if key not in saved]:
        delitem(key)


class Snapshot:
    def __init__(self):
        self.modules = {name: (module, dict(vars(module))) for name, module in list(sys.modules.items())
                        if type(module).__name__ == "module"}
        self.other_modules = {name: module for name, module in sys.modules.items() if name not in self.modules}
        self.classes = [(cls, dict(vars(cls))) for module, _ in self.modules.values()
                        for cls in _patchable_classes(module)]
        self.sys_lists = {name: list(getattr(sys, name)) for name in _SYS_LISTS}
        self.recursion_limit = sys.getrecursionlimit()
        self.environ = dict(os.environ)
        self.cwd = os.getcwd()
        self.folders = {folder: _listing(folder) for folder in {self.cwd, *self.sys_lists["path"]}
                        if folder and os.path.isdir(folder)}
        self.handlers = {number: signal.getsignal(number) for number in (signal.SIGINT, signal.SIGTERM)}
        self.warning_filters = list(warnings.filters)

    def restore(self):
        sys.settrace(None)
        sys.setprofile(None)
        for name in [name for name in sys.modules if name not in self.modules and name not in self.other_modules]:
            del sys.modules[name]
        for name, (module, names) in self.modules.items():
            sys.modules[name] = module
            namespace = vars(module)
            _put_back(namespace, names, namespace.__setitem__, namespace.__delitem__)
        for cls, names in self.classes:
            _put_back(dict(vars(cls)), names, lambda k, v, c=cls: setattr(c, k, v), lambda k, c=cls: delattr(c, k))
        for name, items in self.sys_lists.items():
            getattr(sys, name)[:] = items
        sys.path_importer_cache.clear()  # a finder of a folder the run added, or its stale listing
        sys.setrecursionlimit(self.recursion_limit)
        if dict(os.environ) != self.environ:
            os.environ.clear()
            os.environ.update(self.environ)
        os.chdir(self.cwd)
        for folder, names in self.folders.items():
            for name in _listing(folder) - names:  # a file the run wrote (say statistics.py) shadows no module later
                _remove(os.path.join(folder, name))
        for number, handler in self.handlers.items():
            if signal.getsignal(number) is not handler:
                signal.signal(number, handler)
        if warnings.filters != self.warning_filters:  # warnings.simplefilter('error') once made '\d' a SyntaxError later
            warnings.filters[:] = self.warning_filters
            _filters_mutated()


def _filters_mutated():
    """Tell the warnings machinery its filters changed (it caches what they decided)."""
    for name in ("_filters_mutated_lock_held", "_filters_mutated"):
        changed = getattr(warnings, name, None)
        if changed is not None:
            changed()
            return


def snapshot():
    return Snapshot()
