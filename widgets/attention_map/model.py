"""attention-map: where each head of our model looks, on a few 三國 validation passages.

Data: data/real-model/attention/attention.json (`python -m lab attention`), carried in the page in
compact form. Pick a passage, a layer and a head; pick a token (the query): every token before it is
shaded by the weight the query gives it (the row's weights, per mille as exported, the colour scaled
to the row's largest weight), the later tokens are out of its reach (the causal mask). Beside it, the
head's measurements over the whole book's validation text against the content-blind prefix average.
Standard library only, in the subset MicroPython shares with CPython.
"""
from numfmt import num, pct

PARAMS = {"data": None, "passage": 0, "layer": None, "head": None, "query": None}
COLOR = (217, 72, 1)  # deep orange, as the neuron heatmap: text over it keeps its contrast in both palettes
ALPHA_MAX = 0.55
VISIBLE = {"\n": "↵", " ": "␣", "\u3000": "␣"}  # whitespace a button could not show
MEASURES = (  # (key, what it is, as a share or a distance)
    ("previous", "前一个 token", True),
    ("same_token", "前文里同一个 token（只算前文有它的查询）", True),
    ("induction", "同一个 token 前文出现处的下一个（同上）", True),
    ("punctuation", "标点", True),
    ("first", "窗口的第一个 token", True),
    ("self", "自己", True),
    ("distance", "平均往回看几个 token", False),
)


def compact(data):
    """The parts of attention.json the widget shows; a compact dict is returned as it is."""
    if data is None:
        raise ValueError("attention-map needs data: the parsed data/real-model/attention/attention.json "
                         "(embed it as widget(\"attention-map\", data=...))")
    if "compact" in data:
        return data
    mc = data["model_config"]
    return {
        "compact": 1,
        "n_layer": mc["n_layer"], "n_head": mc["n_head"],
        "passages": [{"tokens": [t["text"] for t in p["tokens"]], "weights": p["weights"]} for p in data["passages"]],
        "heads": [[h[m] for m, label, share in MEASURES] for h in data["measures"]["heads"]],
        "blind": [data["measures"]["prefix_average"][m] for m, label, share in MEASURES],
    }


def strongest(data, key):
    """(layer, head), 1-based, of the head with the largest measure `key` (the first of a tie)."""
    col = [m[0] for m in MEASURES].index(key)
    best = 0
    for i, h in enumerate(data["heads"]):
        if h[col] > data["heads"][best][col]:
            best = i
    return best // data["n_head"] + 1, best % data["n_head"] + 1


def display(text):
    return "".join(VISIBLE.get(c, c) for c in text)


def color(alpha):
    if alpha <= 0:
        return "transparent"
    return "rgba(" + str(COLOR[0]) + ", " + str(COLOR[1]) + ", " + str(COLOR[2]) + ", " + num(alpha, 3) + ")"


def page_params(params):
    out = dict(params)
    out["data"] = compact(params.get("data"))
    return out


def value_text(v, share):
    return pct(v, 1) if share else num(v, 1)


def view(params):
    data = compact(params.get("data"))
    p = int(params.get("passage") or 0)
    if not 0 <= p < len(data["passages"]):
        raise ValueError("passage must be 0.." + str(len(data["passages"]) - 1))
    layer, head = params.get("layer"), params.get("head")
    if layer is None or head is None:
        layer, head = strongest(data, "previous")
    layer, head = int(layer), int(head)
    if not (1 <= layer <= data["n_layer"] and 1 <= head <= data["n_head"]):
        raise ValueError("no layer " + str(layer) + " head " + str(head))
    passage = data["passages"][p]
    tokens = passage["tokens"]
    T = len(tokens)
    q = params.get("query")
    q = T - 1 if q is None else int(q)
    if not 0 <= q < T:
        raise ValueError("query must be 0.." + str(T - 1))
    row = passage["weights"][layer - 1][head - 1][q]  # per mille on keys 0..q
    top = max(row)
    toks = []
    for j in range(T):
        w = row[j] if j <= q else None
        label = "「" + display(tokens[j]) + "」"
        if j > q:
            label += "，在查询之后，看不见"
        else:
            label += "，权重 " + num(w / 1000.0, 3)
        toks.append({"text": display(tokens[j]), "color": color(ALPHA_MAX * w / top) if w and top else "transparent",
                     "later": j > q, "pressed": "true" if j == q else "false", "label": label})
    order = sorted(range(q + 1), key=lambda j: (-row[j], j))[:3]
    best = "、".join("「" + display(tokens[j]) + "」" + num(row[j] / 1000.0, 3) for j in order)
    where = "第 " + str(layer) + " 层第 " + str(head) + " 个头"
    detail = ("查询「" + display(tokens[q]) + "」（第 " + str(q + 1) + " 个 token）在" + where + "把权重最多给了："
              + best + "。")
    if q > 0 and order[0] == q - 1:
        detail += " 最多的是紧挨着的前一个 token。"
    hrow = data["heads"][(layer - 1) * data["n_head"] + head - 1]
    measures = [{"label": label, "head": value_text(hrow[i], share), "blind": value_text(data["blind"][i], share)}
                for i, (m, label, share) in enumerate(MEASURES)]
    return {
        "params": {"passage": p, "layer": layer, "head": head, "query": q},
        "passages": [{"value": i, "label": "段 " + str(i + 1) + "：" + display("".join(x["tokens"][:8])) + "…",
                      "selected": i == p} for i, x in enumerate(data["passages"])],
        "layers": [{"value": i, "selected": i == layer} for i in range(1, data["n_layer"] + 1)],
        "heads": [{"value": i, "selected": i == head} for i in range(1, data["n_head"] + 1)],
        "tokens": toks,
        "measures": measures,
        "out": {"detail": detail, "where": where},
        "announce": detail,
    }


def example(facts):
    """The gallery's params: the export, once lab/ has written it."""
    att = facts.get("attention")
    return {"data": att["data"]} if att else None
