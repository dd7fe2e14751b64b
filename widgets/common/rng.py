"""rng: the one random generator of every widget model, the same numbers in every runtime.

CPython's `random` is a Mersenne Twister that MicroPython does not have (nor
`random.Random`), and two runtimes' built-in generators would draw different
numbers. Models take their random numbers from here instead:

    r = Rng(2026)
    r.next32()        # an integer in 1 .. 2**32 - 1
    r.random()        # a float in (0, 1), never 0 or 1
    r.uniform(a, b)   # a float in (a, b)
    r.gauss(mu, sd)   # a normal draw (Box-Muller)
    r.below(n)        # an integer in 0 .. n - 1, every one equally likely
    r.shuffle(items)  # shuffles a list in place (Fisher-Yates)

The integers come from Marsaglia's xorshift32 (shifts 13, 17, 5; "Xorshift RNGs",
J. Stat. Softw. 8(14), 2003): period 2**32 - 1, every state non-zero. The seed is
spread over all 32 bits by MurmurHash3's finaliser, so seeds 0, 1, 2 start far apart.
Only integer shifts, xor, multiplication and masks are used, so every runtime draws
the same integers; floats are those integers / 2**32, and gauss is
sqrt(-2 ln u1) * cos(2 pi u2) (its pair, the sine, is kept for the next call), so
they agree to the last bit wherever math.log / cos / sin do.

Rng(0).next32() -> 844830715; Rng(0).random() -> 0.1967024791520089
"""
import math

MASK = 0xFFFFFFFF
TWO_32 = 4294967296.0
TWO_PI = 2.0 * math.pi


def mix(seed):
    """A seed (any int) -> a non-zero 32-bit state (MurmurHash3's fmix32 of seed + golden ratio)."""
    x = (seed + 0x9E3779B9) & MASK
    x ^= x >> 16
    x = (x * 0x85EBCA6B) & MASK
    x ^= x >> 13
    x = (x * 0xC2B2AE35) & MASK
    x ^= x >> 16
    return x if x else 0x6D2B79F5


class Rng:
    """A deterministic stream of random numbers from one seed."""

    def __init__(self, seed=0):
        self.state = mix(seed)
        self.spare = None  # the second normal of the last Box-Muller pair

    def next32(self):
        """The next integer of the xorshift32 stream, in 1 .. 2**32 - 1."""
        x = self.state
        x ^= (x << 13) & MASK
        x ^= x >> 17
        x ^= (x << 5) & MASK
        self.state = x
        return x

    def random(self):
        """A float in the open interval (0, 1)."""
        return self.next32() / TWO_32

    def uniform(self, a, b):
        """A float between a and b."""
        return a + (b - a) * self.random()

    def below(self, n):
        """An integer in 0 .. n - 1 (1 <= n < 2**32), each equally likely: draws that would make
        the last, incomplete round of n values are drawn again."""
        limit = MASK - MASK % n  # next32() - 1 takes 2**32 - 1 values; keep the first whole multiple of n
        while True:
            x = self.next32() - 1
            if x < limit:
                return x % n

    def shuffle(self, items):
        """Shuffle a list in place (Fisher-Yates, from the last item down)."""
        for i in range(len(items) - 1, 0, -1):
            j = self.below(i + 1)
            items[i], items[j] = items[j], items[i]

    def gauss(self, mu=0.0, sigma=1.0):
        """A normal draw with mean mu and standard deviation sigma (Box-Muller, pairs cached)."""
        if self.spare is not None:
            z, self.spare = self.spare, None
        else:
            r = math.sqrt(-2.0 * math.log(self.random()))
            angle = TWO_PI * self.random()
            z, self.spare = r * math.cos(angle), r * math.sin(angle)
        return mu + sigma * z

    def normals(self, n, sigma=1.0):
        """The next n normal draws, mean 0: what n calls of gauss(0.0, sigma) return, drawn in one
        loop with the state in local variables (on MicroPython the method calls per draw were
        about half the cost of a depth stack's weights)."""
        out = []
        if n <= 0:
            return out
        if self.spare is not None:
            out.append(0.0 + sigma * self.spare)
            self.spare = None
        x = self.state
        sqrt, log, cos, sin = math.sqrt, math.log, math.cos, math.sin
        push = out.append
        z = None
        for _ in range((n - len(out) + 1) // 2):  # Box-Muller pairs, the last one's sine kept if not needed
            x ^= (x << 13) & MASK
            x ^= x >> 17
            x ^= (x << 5) & MASK
            u1 = x
            x ^= (x << 13) & MASK
            x ^= x >> 17
            x ^= (x << 5) & MASK
            r = sqrt(-2.0 * log(u1 / TWO_32))
            angle = TWO_PI * (x / TWO_32)
            push(0.0 + sigma * (r * cos(angle)))
            z = r * sin(angle)
            push(0.0 + sigma * z)
        self.state = x
        if len(out) > n:
            out.pop()
            self.spare = z
        return out

    def gauss_matrix(self, rows, cols, sigma=1.0):
        """rows x cols normal draws (mean 0), row by row: [[...], ...]."""
        z = self.normals(rows * cols, sigma)
        return [z[i * cols:(i + 1) * cols] for i in range(rows)]
