"""Where our own model's FFN neurons light up: a validation passage as a heatmap.

The data is lab/'s export `data/real-model/neurons.json` (format: lab/schema.py):
one FFN layer of the project's baseline model. The validation chapters are cut in
two: the first ones choose the top neurons (largest maximum activation there), the
others are where every neuron, chosen or random control, is shown and read: its
activation on every token of one passage, its maximum and its top contexts all come
from the reading chapters, text the choice never saw. The passage is the line of the
reading chapters where the chosen neurons show most, so it displays them; it is no
evidence that they differ from the controls (the top contexts are). The build passes
the parsed file as params["data"]; compact() keeps only what the page needs, and the
browser calls view() with that.

Colour scale, per neuron, symmetric around 0: s = the larger of the neuron's
maximum activation over the reading chapters (exported) and the largest
|activation| in the passage. A value v gets POSITIVE or NEGATIVE with opacity
ALPHA_MAX * |v| / s, 0 is transparent. One scale for the passage and the top
contexts, so the strongest context is the deepest colour and a neuron that barely
fires in this passage looks faint here, as it should.

The reading (reading(), which the lesson prints) is computed from the data, never
typed: a neuron counts as concentrated when more than half of its top contexts
peak on the same token. A byte fragment (a token holding only some bytes of a
character, shown alone as �) never counts as a token: the same bytes start many
characters, and at that position the model has not yet seen the rest. The export
names the character each fragment belongs to (`chars`), so the page shows it, and
when most peaks fall in one character's bytes the reading says so, as a fact of
the text, not as a claim about what the neuron detects.
Standard library only, in the subset every runtime runs (CPython, Pyodide, MicroPython): no
order is read from a dict and no sort relies on stability (MicroPython's dicts keep no order and
its sort is not stable).
"""
import math

from numfmt import num

PARAMS = {"neuron": None, "data": None}

POSITIVE = (217, 72, 1)     # deep orange: the neuron's value is above 0
NEGATIVE = (33, 102, 172)   # blue: below 0 (SwiGLU values can be negative)
ALPHA_MAX = 0.55            # the deepest colour; text over it keeps a 4.5:1 contrast in both palettes (tested)
LEGEND_STOPS = 9            # colour stops across the legend bar, from −s to s
FRAGMENT = "\ufffd"         # how a token that is not whole UTF-8 characters looks on its own
GROUPS = (("top", "按最大激活挑出"), ("random", "随机对照"))
VISIBLE = {"\n": "↵", " ": "␣", "\u3000": "␣"}  # whitespace a 「」 label could not show


# --- the data the page carries -------------------------------------------------------------

def compact(data):
    """The parts of neurons.json the widget shows, small enough for the page's data-params.

    Tokens become [display, fragment]: display = the passage's characters in the token's
    span ("" for a byte fragment inside a character); a fragment adds its own text, where
    bytes that are no whole character show as � ("，�" holds "，" and the next character's
    first bytes). Contexts become [activation, before, token, chars, after, fragment]:
    chars = the characters the token has bytes of ("，吳" for "，�"). A neuron's "max" is
    its maximum over the reading chapters, "select_max" over the selection chapters.
    Activations stay as exported.
    A dict that is already compact is returned as it is.
    """
    if data is None:
        raise ValueError("neuron-heatmap needs data: the parsed data/real-model/neurons.json "
                         "(embed it as widget(\"neuron-heatmap\", data=...))")
    if "passage" not in data:
        check_compact(data)
        return data
    passage = data["passage"]
    text = passage["text"]
    out = {
        "layer": data["layer"]["number"],
        "n_layer": data["layer"]["n_layer"],
        "d_ff": data["d_ff"],
        "chapter": passage["chapter"],
        "split": {"select": data["split"]["select_chapters"], "read": data["split"]["read_chapters"]},
        "selection": {k: data["selection"][k] for k in ("top", "random", "random_seed")},
        "tokens": [[text[t["start"]:t["end"]], True, t["text"]] if t["fragment"]
                   else [text[t["start"]:t["end"]], False] for t in passage["tokens"]],
        "neurons": [{"index": n["index"], "kind": n["kind"], "max": n["read_max"], "select_max": n["select_max"],
                     "acts": n["activations"],
                     "contexts": [[c["activation"], c["before"], c["token"], c["chars"], c["after"], c["fragment"]]
                                  for c in n["top_contexts"]]}
                    for n in data["neurons"]],
    }
    check_compact(out)
    return out


def check_compact(data):
    """Fail loudly, naming the neuron, when the compact data cannot be drawn."""
    for key in ("layer", "n_layer", "d_ff", "chapter", "split", "selection", "tokens", "neurons"):
        if key not in data:
            raise ValueError(f"neuron-heatmap data lacks {key!r}")
    if not data["neurons"]:
        raise ValueError("neuron-heatmap data has no neurons")
    for n in data["neurons"]:
        if len(n["acts"]) != len(data["tokens"]):
            raise ValueError(f"neuron #{n['index']}: {len(n['acts'])} activations for {len(data['tokens'])} tokens")
        if n["kind"] not in dict(GROUPS):
            raise ValueError(f"neuron #{n['index']}: unknown kind {n['kind']!r}")


def shown(neuron):
    """How strongly a neuron shows in the passage: its largest value there as a share of its scale.

    >>> shown({"max": 2.0, "acts": [0.5, 1.0, -0.5]}) -> 0.5
    """
    s = scale(neuron)
    return max([0.0] + list(neuron["acts"])) / s if s > 0 else 0.0


def opening(data):
    """The neuron the widget opens on: the chosen (top) neuron that shows most in the passage
    (the first of a tie); the first neuron when none was chosen."""
    tops = [n for n in data["neurons"] if n["kind"] == "top"] or data["neurons"][:1]
    return max(tops, key=shown)  # max keeps the first of a tie


def pick(data, index):
    """The neuron to show: `index`, or opening(data) when index is None."""
    if index is None:
        return opening(data)
    for n in data["neurons"]:
        if n["index"] == int(index):
            return n
    known = ", ".join(str(n["index"]) for n in data["neurons"])
    raise ValueError(f"neuron {index} is not in the data (exported: {known})")


# --- colour --------------------------------------------------------------------------------

def scale(neuron):
    """s of the symmetric scale [−s, s]: the neuron's maximum over the reading chapters or the passage's largest |value|.

    >>> scale({"max": 0.75, "acts": [0.1, -0.9]}) -> 0.9
    """
    return max([abs(neuron["max"])] + [abs(v) for v in neuron["acts"]])


def color(value, s):
    """CSS background for one activation on the scale [−s, s]; 0 (or s = 0) is transparent.

    >>> color(0.5, 1.0), color(-3.0, 1.0), color(0.0, 1.0) -> ('rgba(217, 72, 1, 0.275)', 'rgba(33, 102, 172, 0.550)', 'transparent')
    """
    if s <= 0:
        return "transparent"
    alpha = num(ALPHA_MAX * min(1.0, abs(value) / s), 3)  # the same digits on every runtime
    if alpha == "0.000":
        return "transparent"
    r, g, b = POSITIVE if value > 0 else NEGATIVE
    return f"rgba({r}, {g}, {b}, {alpha})"


def decimals(data):
    """Decimals for every activation the widget shows: about 3 significant digits of the largest.

    >>> decimals({"neurons": [{"max": 0.75}]}), decimals({"neurons": [{"max": 42.15}]}) -> (3, 2)
    """
    top = max(abs(n["max"]) for n in data["neurons"])
    return min(3, max(0, 3 - math.floor(math.log10(top)))) if top > 0 else 3


def legend(s, places=3):
    """The legend bar (a CSS gradient from −s to s) and its end labels.

    >>> legend(1.0)["min"], legend(1.0)["max"] -> ('−1.000', '1.000')
    """
    stops = []
    for k in range(LEGEND_STOPS):
        frac = k / (LEGEND_STOPS - 1)  # 0 .. 1 across the bar
        stops.append(f"{color(s * (2 * frac - 1), s)} {num(100 * frac, 1)}%")
    return {"gradient": f"linear-gradient(to right, {', '.join(stops)})",
            "min": num(-s, places), "max": num(s, places)}


# --- the reading -----------------------------------------------------------------------------

def label(text):
    """A token as it reads inside 「」: whitespace made visible. >>> label("曰\\n") -> '曰↵'"""
    return "".join(VISIBLE.get(ch, ch) for ch in text)


def quoted(tokens):
    """>>> quoted(["公", "曰"]) -> '「公」「曰」'"""
    return "".join(f"「{label(t)}」" for t in tokens)


def unique(items):
    """The distinct items in the order they first appear. >>> unique(["公", "曰", "公"]) -> ['公', '曰']"""
    out = []
    for item in items:
        if item not in out:
            out.append(item)
    return out


def by_count(items):
    """The distinct items, most frequent first; a tie keeps the order they first appear in.

    >>> by_count(["曰", "公", "公"]) -> ['公', '曰']
    """
    firsts = unique(items)
    return [firsts[i] for i in sorted(range(len(firsts)), key=lambda i: (-items.count(firsts[i]), i))]


def majority(items, n):
    """The most frequent item if it fills more than half of n places (ties: the earliest), else None.

    >>> majority(["公", "曰", "公", "公"], 5), majority(["公", "曰"], 5) -> (('公', 3), (None, 0))
    """
    ranked = by_count(items)
    best = ranked[0] if ranked else None
    return (best, items.count(best)) if best is not None and 2 * items.count(best) > n else (None, 0)


def fragment_of(token, chars):
    """The character a fragment token holds only some bytes of: where its � stands.

    fragment_of("，�", "，吳") -> '吳' (the token is "，" plus the first bytes of 吳)
    fragment_of("�主", "吳主") -> '吳' (the last bytes of 吳, then 主)
    """
    return chars[:1] if token.startswith(FRAGMENT) and not token.endswith(FRAGMENT) else chars[-1:]


def verdict(contexts):
    """Do a neuron's top contexts peak on one token? Read from the data, nothing else.

    contexts: [activation, before, token, chars, after, fragment] rows, strongest first.
    Concentrated means more than half of them peak on the same whole token. A byte fragment
    is no token a reader can name, so fragments never count; when most peaks are fragments,
    the verdict says which character's bytes they are if more than half share one (a fact
    of the text, not a claim about what the neuron detects).
    >>> verdict([[1, "", "公", "公", "", False]] * 3 + [[1, "", "曰", "曰", "", False], [1, "", "�", "吳", "", True]])["text"]
    -> '集中在「公」上（5 处里 3 处）；另有 1 处落在字的部分字节上（「吳」）'
    """
    n = len(contexts)
    whole = [c[2] for c in contexts if not c[5]]
    parts = [fragment_of(c[2], c[3]) for c in contexts if c[5]]
    fragments = len(parts)
    ranked = by_count(whole)  # by count, then strength
    peak, count = majority(whole, n)
    belongs, belong_count = None, 0
    part_list = quoted(unique([p for p in parts if p]))
    if peak is not None:
        text = f"集中在「{label(peak)}」上（{n} 处里 {count} 处）"
        if fragments:
            text += f"；另有 {fragments} 处落在字的部分字节上（{part_list}）"
    elif 2 * fragments > n:
        belongs, belong_count = majority([p for p in parts if p], n)
        text = f"{n} 处里 {fragments} 处落在字的部分字节上"
        if belongs is not None:
            text += f"，其中 {belong_count} 处是「{label(belongs)}」字的部分字节"
        else:
            text += f"（{part_list}）"
        if ranked:
            text += f"；其余在{quoted(ranked)}上"
    else:
        text = f"分散在{quoted(ranked)}上，看不出单一规律" if ranked else "没有导出最亮的位置"
        if fragments:
            text += f"；另有 {fragments} 处落在字的部分字节上（{part_list}）"
    return {"concentrated": peak is not None, "peak": label(peak) if peak is not None else None,
            "count": count, "n": n, "fragments": fragments,
            "belongs": label(belongs) if belongs is not None else None, "belong_count": belong_count,
            "text": text}


def chapters(pair):
    """>>> chapters([115, 120]), chapters([6, 6]) -> ('第 115–120 回', '第 6 回')"""
    lo, hi = pair
    return f"第 {lo} 回" if lo == hi else f"第 {lo}–{hi} 回"


def criterion(data):
    n = max((len(x["contexts"]) for x in data["neurons"]), default=0)
    return (f"判定规则：一个神经元在{chapters(data['split']['read'])}里最亮的 {n} 处，过半落在同一个 token 上，算「集中」；"
            f"落在字的部分字节上的（单独显示为 {FRAGMENT}）不算一个 token，只注明它属于哪个字。")


def named(verdicts, key):
    """>>> named([{"index": 641, "peak": "公"}], "peak") -> '#641「公」'"""
    return "、".join(f"#{v['index']}「{v[key]}」" for v in verdicts)


def summary_points(verdicts, data):
    """The chosen group against the random controls on the reading chapters, as the verdicts say,
    and what kind of comparison that is: three short points (the counts and what they say, where
    the peaks fall in characters' bytes, the scope)."""
    top = [v for v in verdicts if v["kind"] == "top"]
    rnd = [v for v in verdicts if v["kind"] == "random"]
    hits_t = [v for v in top if v["concentrated"]]
    hits_r = [v for v in rnd if v["concentrated"]]
    nt, ct, nr, cr = len(top), len(hits_t), len(rnd), len(hits_r)
    sel, read = chapters(data["split"]["select"]), chapters(data["split"]["read"])
    first = (f"在{sel}按最大激活挑出 {nt} 个神经元，再到挑选时没用到的{read}里看它们最亮的几处："
             + (f"{ct} 个集中在单个 token 上（{named(hits_t, 'peak')}）" if ct else "没有一个集中在单个 token 上"))
    if not nr:
        return [first + "；这份数据没有随机对照。"]
    fewer = cr * nt < ct * nr  # the random share is lower than the top share
    if cr:
        second = f"同样看随机抽的 {nr} 个，{'只有' if fewer else '有'} {cr} 个（{named(hits_r, 'peak')}）"
    else:
        second = f"同样看随机抽的 {nr} 个，一个也没有"
    # Eight against eight: no count this small tells the groups apart, whichever way it falls.
    verdict_line = f"挑出的 {ct}/{nt} 对随机的 {cr}/{nr}：每组就这几个，这么少的数分不出两组有没有差别。"
    frag_t = sum(v["fragments"] for v in top)
    frag_r = sum(v["fragments"] for v in rnd)
    bytes_line = (f"最亮的几处落在字的部分字节上（单独显示为 {FRAGMENT}）的：挑出的一组 {sum(v['n'] for v in top)} 处里 "
                  f"{frag_t} 处，随机对照 {sum(v['n'] for v in rnd)} 处里 {frag_r} 处。")
    part_t = [v for v in top if v["belongs"]]
    part_r = [v for v in rnd if v["belongs"]]
    if part_t or part_r:
        def group(vs):
            return f"有 {len(vs)} 个（{named(vs, 'belongs')}）" if vs else "没有"
        n = max(v["n"] for v in verdicts)
        bytes_line += (f"有的神经元，最亮的 {n} 处里过半是同一个字的部分字节："
                       f"挑出的一组{group(part_t)}，随机对照{group(part_r)}。")
    scope = (f"这只是一个示意：一个模型的第 {data['layer']} 层，两组各 {nt} 个和 {nr} 个神经元，"
             if nt != nr else f"这只是一个示意：一个模型的第 {data['layer']} 层，两组各 {nt} 个神经元，")
    scope += "数得出多少个「集中」，谈不上统计检验。"
    return [f"{first}；{second}。{verdict_line}", bytes_line, scope]


def summary(verdicts, data):
    """summary_points as one paragraph."""
    return "".join(summary_points(verdicts, data))


def reading(params):
    """The honest reading of every exported neuron, for the lesson and the widget.

    Returns {"neurons": [{index, kind, concentrated, peak, count, n, fragments, belongs,
    belong_count, text}], "summary": str (the points run together), "points": [str], "criterion": str,
    "top": {n, concentrated}, "random": {n, concentrated}}.
    """
    data = compact(params["data"])
    verdicts = []
    for x in data["neurons"]:
        v = {"index": x["index"], "kind": x["kind"]}
        v.update(verdict(x["contexts"]))
        verdicts.append(v)
    groups = {kind: {"n": sum(v["kind"] == kind for v in verdicts),
                     "concentrated": sum(v["kind"] == kind and v["concentrated"] for v in verdicts)}
              for kind, _ in GROUPS}
    points = summary_points(verdicts, data)
    out = {"neurons": verdicts, "summary": "".join(points), "points": points, "criterion": criterion(data)}
    out.update(groups)
    return out


# --- the widget ------------------------------------------------------------------------------

def place(tokens, i):
    """Where a token sits in the passage: its characters, or for an empty span the character it is inside.

    >>> place([["", True, "�"], ["荊", True, "�"]], 0) -> '荊'
    """
    if tokens[i][0]:
        return tokens[i][0]
    return next((t[0][0] for t in tokens[i + 1:] if t[0]), "")


def token_detail(tokens, i, value, places=3):
    """What hovering or tapping a token shows.

    >>> token_detail([["曹操", False]], 0, -0.25) -> '第 1 个 token：「曹操」 · 激活 −0.250'
    >>> token_detail([["", True, "�"], ["荊", True, "�"]], 0, 0.5)
    -> '第 1 个 token：「�」（字节碎片：不成整字的字节显示为 �，在原文「荊」处） · 激活 0.500'
    """
    display, fragment = tokens[i][:2]
    if fragment:
        what = (f"「{label(tokens[i][2])}」（字节碎片：不成整字的字节显示为 {FRAGMENT}，"
                f"在原文「{label(place(tokens, i))}」处）")
    else:
        what = f"「{label(display)}」"
    return f"第 {i + 1} 个 token：{what} · 激活 {num(value, places)}"


def maxima(data, neuron, places=3):
    """A neuron's maximum activation where it was chosen and where it is read, in that order.

    >>> maxima(data, {"select_max": 4.782, "max": 1.501}) -> '第 109–114 回 4.782 → 第 115–120 回 1.501'
    """
    return (f"{chapters(data['split']['select'])} {num(neuron['select_max'], places)} → "
            f"{chapters(data['split']['read'])} {num(neuron['max'], places)}")


def kind_text(data, neuron, places=3):
    """The line under the picker: which group the neuron is in and its maximum activation on both
    parts; a chosen neuron whose maximum falls below half on the reading chapters says why that can be."""
    both = f"最大激活：{maxima(data, neuron, places)}"
    if neuron["kind"] == "top":
        tops = sorted((n["select_max"] for n in data["neurons"] if n["kind"] == "top"), reverse=True)
        rank = tops.index(neuron["select_max"]) + 1
        out = (f"按最大激活挑出：在第 {data['layer']} 层的 {num(data['d_ff'])} 个神经元里，"
               f"它在{chapters(data['split']['select'])}的最大激活排第 {rank}。{both}")
        if 2 * neuron["max"] < neuron["select_max"]:
            out += "，不到挑选时的一半：按最大值挑，也会挑中在那几回里碰巧特别亮的神经元"
        return out + f"。这里显示的都来自{chapters(data['split']['read'])}。"
    rest = data["d_ff"] - data["selection"]["top"]
    return (f"随机对照：从其余 {num(rest)} 个神经元里随机抽的"
            f"（random.Random({data['selection']['random_seed']})），不看它亮不亮。{both}。")


def example(facts):
    """The params a page shows this widget with (the widget gallery uses it); None before lab/ exports."""
    return {"data": facts["real"]["neurons"]} if facts.get("real") else None


def page_params(params):
    """What the page carries for the browser's calls: the compact data, not the whole export."""
    out = dict(params)
    out["data"] = compact(params.get("data"))
    return out


def view(params):
    """Everything the widget shows for one neuron: token colours and details, legend, contexts, reading.

    params: {"neuron": index or None (opening(data)), "data": neurons.json or its compact()}.
    """
    data = compact(params.get("data"))
    neuron = pick(data, params.get("neuron"))
    places = decimals(data)
    s = scale(neuron)
    tokens = data["tokens"]
    acts = neuron["acts"]
    read = chapters(data["split"]["read"])
    scale_source = (f"#{neuron['index']} 在{read}里的最大激活" if s == abs(neuron["max"])
                    else f"这段文字里 #{neuron['index']} 的激活绝对值的最大值")
    fragments = sum(1 for t in tokens if t[1])
    empty = sum(1 for t in tokens if not t[0])
    v = verdict(neuron["contexts"])
    groups = [{"kind": kind, "label": name,
               "options": [{"value": n["index"],
                            "text": f"#{n['index']} · {num(n['select_max'], places)} → {num(n['max'], places)}",
                            "selected": n is neuron}
                           for n in data["neurons"] if n["kind"] == kind]}
              for kind, name in GROUPS]
    name = dict(GROUPS)[neuron["kind"]]
    lg = legend(s, places)
    return {
        "neuron": neuron["index"],
        "kind": neuron["kind"],
        "groups": [g for g in groups if g["options"]],
        "tokens": [{"text": t[0] or FRAGMENT, "empty": not t[0], "fragment": t[1]} for t in tokens],
        "colors": [color(a, s) for a in acts],
        "details": [token_detail(tokens, i, a, places) for i, a in enumerate(acts)],
        "legend": lg,
        # A context shows the characters its token has bytes of: a fragment keeps its character.
        "contexts": [{"activation": num(a, places), "before": before, "token": label(token), "chars": label(chars),
                      "after": after, "fragment": fragment, "color": color(a, s),
                      "note": f"token「{label(token)}」只含「{fragment_of(token, chars)}」字的部分字节" if fragment else ""}
                     for a, before, token, chars, after, fragment in neuron["contexts"]],
        "out": {
            "title": f"第 {data['layer']} 层 FFN 的真实神经元：字的底色就是它在这个 token 上的激活",
            "kind": kind_text(data, neuron, places),
            "pick-label": (f"神经元 · 最大激活（{chapters(data['split']['select'])} → "
                           f"{chapters(data['split']['read'])}）"),
            "legend-min": lg["min"],
            "legend-max": lg["max"],
            "legend-note": (f"橙 = 正，蓝 = 负，没有底色 = 0。每个神经元各用自己的刻度："
                            f"最深的颜色 = ±{lg['max']}（{scale_source}）。"),
            "passage-note": (f"第 {data['chapter']} 回的一段（验证集，训练时没见过）。它是在{read}里按「挑出的神经元在哪段最显眼」"
                             f"选出来的：用来看挑出的神经元，不用来比两组。共 {num(len(tokens))} 个 token，"
                             f"其中 {num(fragments)} 个是被拆开的字节（字节碎片）；"
                             f"不含整字的 {num(empty)} 个显示为小号 {FRAGMENT}。"),
            "token-detail": "把鼠标停在一个字上、点一下，或用方向键逐个查看：这里显示它的 token 和激活值。",
            "contexts-title": f"#{neuron['index']} 在{read}里最亮的 {len(neuron['contexts'])} 处",
            "verdict": f"读一读（{name} #{neuron['index']}）：{v['text']}。",
            "criterion": criterion(data),
        },
        "announce": f"神经元 #{neuron['index']}（{name}）：{v['text']}。",
    }
