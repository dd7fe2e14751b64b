"""The neuron-heatmap model: the diverging colour scale, the honest reading, the compact page data.

Hand-made fixtures flip each comparison (sign, scale source, concentrated vs scattered, top vs random
more readable); the lab's tiny-corpus export (tests/fixtures/real-model/neurons.json) checks the format.
"""
import colorsys
import copy
import json
import re
from html import unescape

import pytest
from support import ROOT

from course.widgets import Renderer, load_model

model = load_model("neuron-heatmap")
FIXTURE = json.loads((ROOT / "tests/fixtures/real-model/neurons.json").read_text(encoding="utf-8"))
RGBA = re.compile(r"rgba\((\d+), (\d+), (\d+), ([\d.]+)\)")


def rgba(css):
    r, g, b, a = RGBA.fullmatch(css).groups()
    return (int(r), int(g), int(b)), float(a)


def ctx(token, fragment=False, activation=1.0, after="", chars=None):
    """A compact context row; a fragment's `chars` is the character it has bytes of."""
    return [activation, "前文", token, chars if chars is not None else token, after, fragment]


def neuron(index, kind, peaks, acts=(0.0,), peak=1.0):
    """A compact neuron whose top contexts peak on `peaks` ("�" = a byte fragment)."""
    return {"index": index, "kind": kind, "max": peak, "select_max": peak, "acts": list(acts),
            "contexts": [ctx(t, t == "\ufffd", chars="甲乙丙丁戊"[i] if t == "\ufffd" else None)
                         for i, t in enumerate(peaks)]}


def compact_data(neurons, tokens=(("公", False),)):
    return {"layer": 2, "n_layer": 4, "d_ff": 688, "chapter": 117, "split": {"select": [109, 114], "read": [115, 120]},
            "selection": {"top": sum(n["kind"] == "top" for n in neurons),
                          "random": sum(n["kind"] == "random" for n in neurons), "random_seed": 0},
            "tokens": [list(t) for t in tokens], "neurons": neurons}


# --- colour: a symmetric diverging scale, positive orange, negative blue, 0 transparent ---

def test_zero_is_transparent_and_the_sign_picks_the_hue():
    assert model.color(0.0, 1.0) == "transparent"
    pos, a_pos = rgba(model.color(0.4, 1.0))
    neg, a_neg = rgba(model.color(-0.4, 1.0))
    assert pos == model.POSITIVE and neg == model.NEGATIVE and pos != neg
    assert a_pos == a_neg == pytest.approx(0.4 * model.ALPHA_MAX, abs=1e-3)  # symmetric around 0


@pytest.mark.parametrize("small, big", [(0.1, 0.3), (-0.1, -0.3), (0.2, -0.9), (-0.05, 0.5)])
def test_opacity_grows_with_the_absolute_value_whatever_the_sign(small, big):
    assert rgba(model.color(small, 1.0))[1] < rgba(model.color(big, 1.0))[1]


def test_opacity_is_proportional_and_capped_at_the_scale():
    s = 2.0
    for v in (0.5, 1.0, 1.5, 2.0):
        assert rgba(model.color(v, s))[1] == pytest.approx(model.ALPHA_MAX * v / s, abs=1e-3)
    assert rgba(model.color(7.0, s))[1] == rgba(model.color(-7.0, s))[1] == model.ALPHA_MAX
    assert model.color(1.0, 0.0) == "transparent"


def test_the_scale_is_the_reading_maximum_unless_the_passage_goes_further():
    assert model.scale({"max": 0.75, "acts": [0.1, -0.3, 0.6]}) == 0.75       # the exported reading-chapter maximum
    assert model.scale({"max": 0.75, "acts": [0.1, -0.9, 0.6]}) == 0.9        # a stronger negative value
    assert model.scale({"max": 0.75, "acts": [0.1, 0.2, 1.25]}) == 1.25       # passage beyond (rounding)


def test_legend_runs_from_minus_s_through_transparent_to_s():
    legend = model.legend(0.5)
    assert (legend["min"], legend["max"]) == ("−0.500", "0.500")
    stops = re.findall(r"(rgba\([^)]*\)|transparent) ([\d.]+)%", legend["gradient"])
    assert [float(p) for _, p in stops] == sorted(float(p) for _, p in stops)
    assert stops[0][0] == model.color(-0.5, 0.5) and stops[-1][0] == model.color(0.5, 0.5)
    assert stops[len(stops) // 2] == ("transparent", "50.0")


def hsla(h, s, l, a=1.0):
    r, g, b = colorsys.hls_to_rgb(h / 360, l, s)
    return (255 * r, 255 * g, 255 * b), a


def over(fg, alpha, bg):
    return tuple(alpha * f + (1 - alpha) * b for f, b in zip(fg, bg))


def contrast(c1, c2):
    def lum(c):
        lin = [v / 255 / 12.92 if v / 255 <= 0.03928 else ((v / 255 + 0.055) / 1.055) ** 2.4 for v in c]
        return 0.2126 * lin[0] + 0.7152 * lin[1] + 0.0722 * lin[2]
    hi, lo = sorted((lum(c1), lum(c2)), reverse=True)
    return (hi + 0.05) / (lo + 0.05)


# Material's default and slate palettes (hue 225): the passage sits on --md-default-bg-color.
PALETTES = {"default": ((255, 255, 255), ((0, 0, 0), 0.87)),
            "slate": (hsla(225, .15, .14)[0], hsla(225, .15, .90, .82))}


@pytest.mark.parametrize("palette", PALETTES)
@pytest.mark.parametrize("value", [1.0, -1.0])
def test_the_deepest_colour_keeps_text_readable(palette, value):
    bg, (fg, fg_alpha) = PALETTES[palette]
    hue, alpha = rgba(model.color(value, 1.0))
    behind = over(hue, alpha, bg)
    assert contrast(over(fg, fg_alpha, behind), behind) >= 4.5


# --- the reading: verdicts from the top contexts, never from the seed ---

def test_a_majority_on_one_token_is_concentrated():
    v = model.verdict([ctx("公"), ctx("公"), ctx("曰"), ctx("公"), ctx("公")])
    assert v["concentrated"] and v["peak"] == "公" and v["count"] == 4
    assert v["text"] == "集中在「公」上（5 处里 4 处）"


def test_two_of_five_is_scattered_and_names_the_tokens():
    v = model.verdict([ctx("公"), ctx("曰"), ctx("公"), ctx("之"), ctx("依")])
    assert not v["concentrated"] and v["peak"] is None
    assert v["text"] == "分散在「公」「曰」「之」「依」上，看不出单一规律"


def test_fragments_never_count_as_a_token_but_name_their_character():
    # Five peaks on "�" tokens: one glyph, the bytes of five different characters.
    v = model.verdict([ctx("\ufffd", True, chars=c) for c in "幟幽幡幢幣"])
    assert not v["concentrated"] and v["fragments"] == 5 and v["belongs"] is None
    assert v["text"] == "5 处里 5 处落在字的部分字节上（「幟」「幽」「幡」「幢」「幣」）"
    v = model.verdict([ctx("\ufffd", True, chars="某")] * 3 + [ctx("公"), ctx("曰")])
    assert not v["concentrated"] and v["text"].endswith("；其余在「公」「曰」上")
    v = model.verdict([ctx("公")] * 3 + [ctx("，\ufffd", True, chars="，吳")] * 2)
    assert v["concentrated"] and v["text"] == "集中在「公」上（5 处里 3 处）；另有 2 处落在字的部分字节上（「吳」）"
    v = model.verdict([ctx("公"), ctx("公"), ctx("曰"), ctx("\ufffd", True, chars="惜"), ctx("之")])
    assert not v["concentrated"] and v["text"] == "分散在「公」「曰」「之」上，看不出单一规律；另有 1 处落在字的部分字节上（「惜」）"


def test_fragments_in_one_characters_bytes_say_which_character():
    # 「可惜」 three times, the peak on a token holding only the first bytes of 惜.
    v = model.verdict([ctx("\ufffd", True, chars="惜"), ctx("可\ufffd", True, chars="可惜"),
                       ctx("\ufffd", True, chars="惠"), ctx("\ufffd", True, chars="惜"), ctx("公")])
    assert not v["concentrated"] and (v["belongs"], v["belong_count"]) == ("惜", 3)
    assert v["text"] == "5 处里 4 处落在字的部分字节上，其中 3 处是「惜」字的部分字节；其余在「公」上"
    # A token made of the last bytes of 吳 and then 主 belongs to 吳, not 主.
    assert model.fragment_of("\ufffd主", "吳主") == "吳" and model.fragment_of("，\ufffd", "，吳") == "吳"
    # A whole token never counts as a fragment's character.
    v = model.verdict([ctx("公")] * 3 + [ctx("\ufffd", True, chars="曰")] * 2)
    assert v["concentrated"] and v["belongs"] is None


def test_whitespace_tokens_are_made_visible():
    v = model.verdict([ctx("曰\n")] * 3 + [ctx("\u3000"), ctx(" ")])
    assert v["text"].startswith("集中在「曰↵」上") and "「" + "\n" not in v["text"]


def reading_of(neurons):
    return model.reading({"data": compact_data(neurons)})


SCATTERED = ["公", "曰", "之", "依", "\ufffd"]


def test_summary_when_the_top_neurons_read_better():
    r = reading_of([neuron(641, "top", ["公"] * 4 + ["曰"]), neuron(27, "top", ["依"] * 3 + SCATTERED[:2]),
                    neuron(22, "top", SCATTERED), neuron(359, "random", SCATTERED),
                    neuron(110, "random", ["\ufffd"] * 5)])
    assert (r["top"], r["random"]) == ({"n": 3, "concentrated": 2}, {"n": 2, "concentrated": 0})
    assert r["summary"].startswith("在第 109–114 回按最大激活挑出 3 个神经元，再到挑选时没用到的第 115–120 回里看它们"
                                   "最亮的几处：2 个集中在单个 token 上（#641「公」、#27「依」）；"
                                   "同样看随机抽的 2 个，一个也没有。挑出的 2/3 对随机的 0/2：每组就这几个，这么少的数分不出两组有没有差别。")
    assert r["summary"].endswith("这只是一个示意：一个模型的第 2 层，两组各 3 个和 2 个神经元，"
                                 "数得出多少个「集中」，谈不上统计检验。")
    assert "挑出的一组 15 处里 1 处，随机对照 10 处里 6 处" in r["summary"]
    assert "过半落在同一个字的字节上" not in r["summary"]  # #110's fragments are five characters' bytes
    assert [v["index"] for v in r["neurons"]] == [641, 27, 22, 359, 110]


def test_summary_names_fragment_neurons_in_one_characters_bytes():
    parts = [[1.0, "前", "\ufffd", "捨", "命", True]] * 3 + [[1.0, "前", "\ufffd", "捷", "。", True]] * 2
    data = compact_data([{"index": 595, "kind": "top", "max": 1.0, "select_max": 1.0, "acts": [0.0], "contexts": parts},
                         neuron(1, "top", ["公"] * 5), neuron(2, "random", SCATTERED)])
    r = model.reading({"data": data})
    assert r["top"]["concentrated"] == 1  # #595 is not counted: its peaks are no token
    assert ("有的神经元，最亮的 5 处里过半是同一个字的部分字节：挑出的一组有 1 个（#595「捨」），随机对照没有。"
            in r["points"][1])


def test_summary_when_the_random_controls_read_as_well():
    r = reading_of([neuron(1, "top", ["公"] * 3 + SCATTERED[1:3]), neuron(2, "top", SCATTERED),
                    neuron(3, "random", ["之"] * 5), neuron(4, "random", SCATTERED)])
    assert "同样看随机抽的 2 个，有 1 个（#3「之」）" in r["summary"]
    assert "挑出的 1/2 对随机的 1/2：每组就这几个，这么少的数分不出两组有没有差别" in r["summary"]
    assert "两组各 2 个神经元" in r["summary"]
    assert "只有" not in r["summary"]


def test_summary_when_the_random_controls_read_better():
    r = reading_of([neuron(1, "top", SCATTERED), neuron(2, "top", SCATTERED),
                    neuron(3, "random", ["之"] * 5)])
    assert "看它们最亮的几处：没有一个集中在单个 token 上；同样看随机抽的 1 个，有 1 个（#3「之」）。" in r["summary"]
    assert "挑出的 0/2 对随机的 1/1：每组就这几个" in r["summary"] and "反而" not in r["summary"]


def test_summary_when_some_random_ones_read_but_fewer():
    r = reading_of([neuron(1, "top", ["公"] * 5), neuron(2, "top", ["曰"] * 5),
                    neuron(3, "random", ["之"] * 5), neuron(4, "random", SCATTERED)])
    assert "同样看随机抽的 2 个，只有 1 个（#3「之」）" in r["summary"]
    assert "挑出的 2/2 对随机的 1/2：每组就这几个，这么少的数分不出两组有没有差别" in r["summary"]
    assert "更容易" not in r["summary"]  # a direction read from 2 against 2 would be noise


def test_reading_of_the_lab_fixture():
    """The tiny-corpus export: its 300-token vocabulary splits nearly every character into bytes."""
    r = model.reading({"data": FIXTURE})
    kinds = [n["kind"] for n in FIXTURE["neurons"]]
    assert (r["top"]["n"], r["random"]["n"]) == (kinds.count("top"), kinds.count("random"))
    for v, n in zip(r["neurons"], FIXTURE["neurons"]):
        contexts = n["top_contexts"]
        assert v["fragments"] == sum(c["fragment"] for c in contexts)
        if v["belongs"]:  # the character named is the one most fragment peaks have bytes of
            owners = [model.fragment_of(c["token"], c["chars"]) for c in contexts if c["fragment"]]
            assert 2 * owners.count(v["belongs"]) > len(contexts)
    frag_top = sum(v["fragments"] for v in r["neurons"] if v["kind"] == "top")
    n_top = sum(v["n"] for v in r["neurons"] if v["kind"] == "top")
    assert f"挑出的一组 {n_top} 处里 {frag_top} 处" in r["summary"]
    read = FIXTURE["split"]["read_chapters"]
    where = f"第 {read[0]} 回" if read[0] == read[1] else f"第 {read[0]}–{read[1]} 回"
    assert r["criterion"].startswith(f"判定规则：一个神经元在{where}里最亮的 5 处，过半")
    assert f"再到挑选时没用到的{where}里看" in r["summary"]


# --- compact data and the view ---

def test_compact_keeps_what_the_page_shows_and_drops_the_rest():
    data = model.compact(FIXTURE)
    assert "export_config" not in json.dumps(data) and "model_config" not in json.dumps(data)
    passage = FIXTURE["passage"]
    assert "".join(t[0] for t in data["tokens"]) == passage["text"]
    assert [t[1] for t in data["tokens"]] == [t["fragment"] for t in passage["tokens"]]
    assert all(t[1] for t in data["tokens"] if not t[0])  # only fragments have an empty span
    assert [n["acts"] for n in data["neurons"]] == [n["activations"] for n in FIXTURE["neurons"]]
    assert data["layer"] == 2 and data["d_ff"] == 688 and data["chapter"] == passage["chapter"]
    assert data["split"] == {"select": FIXTURE["split"]["select_chapters"], "read": FIXTURE["split"]["read_chapters"]}
    assert [n["max"] for n in data["neurons"]] == [n["read_max"] for n in FIXTURE["neurons"]]
    for token, t in zip(data["tokens"], passage["tokens"]):  # a fragment keeps its own text (with �)
        assert token[2:] == ([t["text"]] if t["fragment"] else [])
    assert len(json.dumps(data, ensure_ascii=False)) < 0.6 * len(json.dumps(FIXTURE, ensure_ascii=False))
    assert model.compact(data) is data  # the browser calls view() with the compact form


def test_missing_data_or_an_unknown_neuron_fails_loudly():
    with pytest.raises(ValueError, match="needs data"):
        model.view({"neuron": None, "data": None})
    with pytest.raises(ValueError, match="neuron 5 is not in the data"):
        model.view({"neuron": 5, "data": FIXTURE})
    broken = copy.deepcopy(model.compact(FIXTURE))
    broken["neurons"][1]["acts"].pop()
    with pytest.raises(ValueError, match=f"#{broken['neurons'][1]['index']}: "):
        model.view({"neuron": None, "data": broken})


def test_first_state_opens_on_the_chosen_neuron_that_shows_most_in_the_passage():
    params = {"neuron": None, "data": FIXTURE}
    s = model.view(params)
    top = [n for n in FIXTURE["neurons"] if n["kind"] == "top"]
    assert [n["select_max"] for n in top] == sorted((n["select_max"] for n in top), reverse=True)

    def share(n):  # independent of the model: the passage peak over max(|read_max|, |passage values|)
        scale = max([abs(n["read_max"])] + [abs(a) for a in n["activations"]])
        return max([0.0] + n["activations"]) / scale

    first = max(top, key=share)
    assert s["neuron"] == first["index"] and s["kind"] == "top"
    assert params["data"] is FIXTURE  # view() leaves its params alone
    assert model.page_params(params)["data"] == model.compact(FIXTURE)  # what the build writes into the page
    assert [g["label"] for g in s["groups"]] == ["按最大激活挑出", "随机对照"]
    assert [o["text"] for o in s["groups"][0]["options"]][:2] == \
        [f"#{n['index']} · {model.num(n['select_max'], 3)} → {model.num(n['read_max'], 3)}" for n in top[:2]]
    sel, read = FIXTURE["split"]["select_chapters"], FIXTURE["split"]["read_chapters"]
    where = [f"第 {a} 回" if a == b else f"第 {a}–{b} 回" for a, b in (sel, read)]
    assert s["out"]["pick-label"] == f"神经元 · 最大激活（{where[0]} → {where[1]}）"
    assert (f"最大激活：{where[0]} {model.num(first['select_max'], 3)} → {where[1]} {model.num(first['read_max'], 3)}"
            in s["out"]["kind"])
    assert [o["value"] for o in s["groups"][1]["options"]] == \
        [n["index"] for n in FIXTURE["neurons"] if n["kind"] == "random"]
    scale = model.scale(model.pick(model.compact(FIXTURE), first["index"]))
    assert s["out"]["legend-max"] == model.num(scale, 3) and s["out"]["legend-min"] == "\u2212" + model.num(scale, 3)
    assert f"排第 {top.index(first) + 1}" in s["out"]["kind"] and "688" in s["out"]["kind"]
    tokens = FIXTURE["passage"]["tokens"]
    assert len(s["tokens"]) == len(s["colors"]) == len(s["details"]) == len(tokens)
    assert s["colors"] == [model.color(a, scale) for a in first["activations"]]
    strongest = first["top_contexts"][0]
    assert s["contexts"][0]["color"] == model.color(strongest["activation"], scale)
    # A context shows the characters its token has bytes of: a fragment keeps its character.
    assert s["contexts"][0]["chars"] == model.label(strongest["chars"])
    for c, row in zip(first["top_contexts"], s["contexts"]):
        assert bool(row["note"]) == c["fragment"]
    assert "不用来比两组" in s["out"]["passage-note"]


def test_the_opening_neuron_is_the_chosen_one_most_visible_here():
    faint = neuron(1, "top", ["公"], acts=(0.1, 0.2), peak=2.0)      # 10% of its scale
    bright = neuron(2, "top", ["公"], acts=(0.9, -0.1), peak=1.0)    # 90%
    control = neuron(3, "random", ["公"], acts=(1.0, 1.0), peak=1.0)  # 100%, but not chosen
    data = compact_data([faint, bright, control], tokens=(("公", False), ("曰", False)))
    assert model.view({"neuron": None, "data": data})["neuron"] == 2
    assert model.shown(faint) == pytest.approx(0.1) and model.shown(control) == 1.0


def test_token_details_name_the_token_the_fragment_and_the_value():
    s = model.view({"neuron": FIXTURE["neurons"][0]["index"], "data": FIXTURE})
    tokens = FIXTURE["passage"]["tokens"]
    whole = next(i for i, t in enumerate(tokens) if not t["fragment"])
    assert s["details"][whole] == f"第 {whole + 1} 个 token：「{tokens[whole]['text']}」 · 激活 " + \
        model.num(FIXTURE["neurons"][0]["activations"][whole], 3)
    # The passage's first character is split into bytes: only the token with its last byte holds it.
    first = FIXTURE["passage"]["text"][0]
    last = next(i for i, t in enumerate(tokens) if t["end"] > 0)
    assert last > 0 and tokens[0]["end"] == 0 and tokens[last]["end"] == 1
    assert s["tokens"][0] == {"text": "\ufffd", "empty": True, "fragment": True}
    assert s["tokens"][last] == {"text": first, "empty": False, "fragment": True}
    for i in (0, last):
        assert s["details"][i].startswith(f"第 {i + 1} 个 token：「�」（字节碎片：不成整字的字节显示为 �，在原文「{first}」处） · 激活 ")


def test_a_fragment_that_also_holds_a_whole_character_shows_its_own_text():
    data = compact_data([neuron(1, "top", ["公"], acts=(0.5, 0.25, -0.125))],
                        tokens=(("說", False), ("，", True, "，\ufffd"), ("斷", True, "\ufffd")))
    details = model.view({"neuron": 1, "data": data})["details"]
    assert details[1] == "第 2 个 token：「，�」（字节碎片：不成整字的字节显示为 �，在原文「，」处） · 激活 0.250"
    assert details[2].endswith("在原文「斷」处） · 激活 −0.125")


def test_decimals_follow_the_size_of_the_activations():
    big = compact_data([neuron(1, "top", ["公"], acts=(0.5,), peak=42.15), neuron(2, "random", ["公"], peak=5.1)])
    s = model.view({"neuron": 2, "data": big})
    assert [o["text"] for g in s["groups"] for o in g["options"]] == ["#1 · 42.15 → 42.15", "#2 · 5.10 → 5.10"]
    assert s["out"]["legend-max"] == "5.10" and s["details"][0].endswith("激活 0.00")


def test_another_neuron_recolours_the_passage():
    first = model.view({"neuron": FIXTURE["neurons"][0]["index"], "data": FIXTURE})
    random_one = next(n["index"] for n in FIXTURE["neurons"] if n["kind"] == "random")
    control = model.view({"neuron": random_one, "data": FIXTURE})
    assert control["kind"] == "random" and control["colors"] != first["colors"]
    rest = 688 - sum(n["kind"] == "top" for n in FIXTURE["neurons"])
    assert control["out"]["kind"].startswith(f"随机对照：从其余 {rest} 个神经元里随机抽的")
    assert control["out"]["verdict"].startswith(f"读一读（随机对照 #{random_one}）：")
    assert control["out"]["legend-max"] == model.num(model.scale(model.pick(model.compact(FIXTURE), random_one)), 3)


def test_build_renders_every_token_and_the_page_carries_only_the_compact_data():
    html = str(Renderer({"num": model.num})("neuron-heatmap", data=FIXTURE))
    assert 'data-widget="neuron-heatmap"' in html
    assert html.count("data-token=") == len(FIXTURE["passage"]["tokens"])
    assert '<select name="neuron">' in html and '<optgroup label="随机对照">' in html
    first = model.opening(model.compact(FIXTURE))
    assert (f'<option value="{first["index"]}" selected>#{first["index"]} · '
            f'{model.num(first["select_max"], 3)} → {model.num(first["max"], 3)}</option>') in html
    assert '<span data-out="pick-label">神经元 · 最大激活（' in html
    params = json.loads(unescape(re.search(r"data-params='([^']*)'", html).group(1)))
    assert params == {"neuron": None, "data": model.compact(FIXTURE)}
    spans = re.findall(r'<span data-token="\d+"[^>]*>([^<]*)</span>', html)
    assert "".join(t for t, tok in zip(spans, FIXTURE["passage"]["tokens"]) if tok["end"] > tok["start"]) == \
        FIXTURE["passage"]["text"]


def test_the_caption_shows_both_maxima_and_why_a_chosen_one_can_fall():
    """Chosen on the selection chapters, read on the others: a chosen neuron whose maximum there falls
    below half says what choosing by the maximum does; one that holds up, or a control, does not."""
    fell = {**neuron(555, "top", ["公"] * 5, peak=1.501), "select_max": 4.782}
    held = {**neuron(256, "top", ["公"] * 5, peak=5.287), "select_max": 5.208}
    control = {**neuron(502, "random", ["速"] * 5, peak=2.877), "select_max": 2.442}
    data = compact_data([held, fell, control])
    s = model.view({"neuron": 555, "data": data})
    assert [o["text"] for g in s["groups"] for o in g["options"]] == \
        ["#256 · 5.208 → 5.287", "#555 · 4.782 → 1.501", "#502 · 2.442 → 2.877"]
    assert "最大激活：第 109–114 回 4.782 → 第 115–120 回 1.501，不到挑选时的一半" in s["out"]["kind"]
    assert "排第 2" in s["out"]["kind"] and "碰巧特别亮" in s["out"]["kind"]
    kept = model.view({"neuron": 256, "data": data})["out"]["kind"]
    assert "第 109–114 回 5.208 → 第 115–120 回 5.287" in kept and "碰巧" not in kept
    rnd = model.view({"neuron": 502, "data": data})["out"]["kind"]
    assert rnd.startswith("随机对照：") and rnd.endswith("最大激活：第 109–114 回 2.442 → 第 115–120 回 2.877。")
    assert s["out"]["pick-label"] == "神经元 · 最大激活（第 109–114 回 → 第 115–120 回）"


def test_the_reading_comes_as_short_points_that_make_the_summary():
    r = reading_of([neuron(641, "top", ["公"] * 5), neuron(22, "top", SCATTERED),
                    neuron(359, "random", SCATTERED), neuron(110, "random", ["\ufffd"] * 5)])
    assert len(r["points"]) == 3 and "".join(r["points"]) == r["summary"]
    assert r["points"][0].endswith("挑出的 1/2 对随机的 0/2：每组就这几个，这么少的数分不出两组有没有差别。")
    assert r["points"][1].startswith("最亮的几处落在字的部分字节上（单独显示为 �）的：挑出的一组 10 处里 1 处，随机对照 10 处里 6 处。")
    assert r["points"][2].startswith("这只是一个示意")
    assert "最亮处多在字的部分字节上的神经元里" not in r["summary"]
