"""packed: numbers <-> compact text, for a state the browser keeps (the tiny-gpt page's run).

A float written as JSON takes about 20 characters and loses nothing only by luck of formatting;
packed here it is its 8 bytes of float64, written as 16 hex digits, and comes back exactly (NaN
and infinities included). bytes.hex and bytes.fromhex run in C on every runtime the page has
(CPython, Pyodide, MicroPython; MicroPython's base64 is written in Python, and too slow for a
run's hundreds of KB). The page turns the hex into binary before it stores it (8 bytes a number).

    unpack(pack([1.5, -2.0])) -> [1.5, -2.0]
"""
import array


def raw(M):
    """A matrix, a list of lists or an array of the ulab engine (ulab or numpy, float64), -> its
    numbers' float64 bytes, row after row (the byte order of the machine: little-endian on
    WebAssembly and x86, where the page and its tests run)."""
    if isinstance(M, list):
        return bytes(array.array("d", [x for row in M for x in row]))
    return bytes(M.tobytes())


def pack(values):
    """A list of floats -> the hex text of their float64 bytes."""
    return bytes(array.array("d", values)).hex()


def unpack(code):
    """pack()'s text (or raw()'s bytes as hex) -> the list of floats."""
    return list(array.array("d", bytes.fromhex(code)))


def rows(values, start, n, m):
    """n rows of m numbers from a flat list, from index start -> a list of lists."""
    return [values[start + i * m:start + (i + 1) * m] for i in range(n)]
