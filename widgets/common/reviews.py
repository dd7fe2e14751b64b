"""The four reviews of 第 1 课 (C4): one apple, four verdicts, two features per review.

p: the review word is 好 (not 难); n: 不 is present; y: the review is positive, which holds
iff exactly one of p, n holds (y = p + n - 2pn, an XOR). ffn-xor, linear-fit and gated-neuron
read them from here, so every lesson fits the same four rows.
"""

# (review, p, n, target y), in the order the lessons list them
REVIEWS = [("好吃", 1, 0, 1), ("不好吃", 1, 1, 0), ("难吃", 0, 0, 0), ("不难吃", 0, 1, 1)]
