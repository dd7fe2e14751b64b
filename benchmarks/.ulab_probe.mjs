import { loadMicroPython } from "@micropython/micropython-webassembly-pyscript";
const W = "/work/wt-37/node_modules/@micropython/micropython-webassembly-pyscript/";
for (const wasm of ["micropython.wasm", "micropython-ulab.wasm"]) {
let out = "";
const mp = await loadMicroPython({ url: W + wasm, heapsize: 64 * 1024 * 1024, stdout: (l) => (out += l + "\n") });
mp.runPython(`
import time
def mm(A, B):
    Bt = [list(c) for c in zip(*B)]
    out = []
    for r in A:
        row = []
        for c in Bt:
            s = 0.0
            for i in range(len(r)):
                s += r[i] * c[i]
            row.append(s)
        out.append(row)
    return out
A = [[1.0]*32 for _ in range(64)]
B = [[1.0]*64 for _ in range(32)]
t = time.ticks_ms()
for i in range(5):
    mm(A, B)
dt = time.ticks_diff(time.ticks_ms(), t)
print("pure", dt, "ns/madd", dt * 1e6 / (5 * 64 * 32 * 64))
try:
    from ulab import numpy as np
    a = np.ones((64, 32)); b = np.ones((32, 64))
    for n in (64, 256):
        a = np.ones((n, n)); b = np.ones((n, n))
        t = time.ticks_ms()
        for i in range(5):
            c = np.dot(a, b)
        dt = time.ticks_diff(time.ticks_ms(), t)
        print("ulab dot", n, dt, "ns/madd", dt * 1e6 / (5 * n**3))
    x = np.ones(100000)
    t = time.ticks_ms()
    for i in range(20):
        y = x * x + x
    dt = time.ticks_diff(time.ticks_ms(), t)
    print("ulab elementwise ns/elem-op", dt * 1e6 / (20 * 2 * 100000))
except ImportError as e:
    print("no ulab", e)
`);
console.log(wasm, out);
}
