"""C4 第 4 课 (门控与 SwiGLU): every number on the page comes from facts or a widget model, the
claims the page makes hold in the models and the configs, its 真模型 sentences say what the gating
export shows, and the page has its contract's sections."""
import html as htmllib
import re

import numfmt
import pytest
from support import ROOT

from course.checks import contract
from course.data import load_data
from course.facts import build_facts
from course.widgets import load_model


def page(site_dir):
    return (site_dir / "c4" / "l4-gating" / "index.html").read_text(encoding="utf-8")


def text_of(site_dir):
    """The page's text as a reader sees it (KaTeX's MathML copy and tags removed)."""
    body = re.sub(r'<span class="katex-mathml">.*?</span>', "", page(site_dir), flags=re.S)
    return htmllib.unescape(re.sub(r"<[^>]+>", "", body))


def facts():
    return build_facts(load_data(ROOT / "data", ROOT))


def test_one_product_splits_the_reviews_and_one_relu_cannot(site_dir):
    """Step 1's ReLU neuron is the widget's first state; GELU's near miss is said; the product is exact."""
    text, html = text_of(site_dir), page(site_dir)
    gn = load_model("gated-neuron")
    one = [0.0, 0.0, 1.0]
    assert (gn.PARAMS["task"], gn.PARAMS["activation"], gn.PARAMS["up"]) == ("reviews", "relu", one)  # opens on step 1
    widget = html[html.index('data-widget="gated-neuron"'):]
    assert 'value="relu" checked' in widget[:6000] and 'value="reviews" checked' in widget[:6000]
    start = gn.mse("reviews", "relu", gn.PARAMS["gate"], one)
    best = gn.best_ungated("reviews", "relu")["mse"]
    assert best == 0.25 and f"默认的读数下 MSE 是 {start:.3f}" in text and f"最好也只有 {best:.3f}" in text
    # the question comes before the widget, its answer after it
    assert html.index("MSE 最低能到多少") < html.index('data-widget="gated-neuron"') < html.index(f"最好也只有 {best:.3f}")
    # the tip's two settings reach that best: all four alike (bias only), and three right with p's weight at the best's
    assert gn.mse("reviews", "relu", [0.0, 0.0, 1.0], one) == best
    three = gn.steps("reviews", "relu", [gn.best_ungated("reviews", "relu")["gate"][0], 1.0, 0.0], one)
    assert [s["m"] > 0 for s in three] == [False, False, False, True]
    gelu = gn.fit("reviews", "gelu", gn.FAR_GATE, one)
    silu = gn.mse("reviews", "silu", gn.FAR_GATE, one)
    assert gelu["mse"] < 1e-5 and f"MSE 降到 {gn.mse_text(gelu['mse'])}（SiLU 是 {gn.mse_text(silu)}）" in text
    assert gelu["w_o"] < -10 and f"{gelu['w_o']:.1f}".replace("-", "−") in text  # the large output weight the page names
    exact = gn.exact_solution("reviews", "none")
    assert exact["mse"] == 0 and "MSE 是 0，一个神经元就够了" in text
    for _, p, n, y in gn.REVIEWS:  # the shorter solution the page names: (p - n)^2 is the target on 0/1 inputs
        assert (p - n) ** 2 == y
    sig = gn.mse("reviews", "sigmoid", exact["gate"], exact["up"])
    near = gn.mse("reviews", "sigmoid", *gn.SIGMOID_NEAR)
    assert sig > 0.1 and f"MSE 是 {sig:.3f}" in text and f"时是 {gn.mse_text(near)}），但永远到不了 0" in text
    for exercise in ("one-gated-neuron", "swiglu", "plain-width"):
        assert f'data-exercise="c4/l4/{exercise}"' in html
    for gone in ("它们只在负的一侧不同", "回答第二件", "ReLU 只会保持大小顺序"):
        assert gone not in text


def test_graded_strengths_need_a_product(site_dir):
    """No neuron without a gate fits pn (the page's numbers are the widget's brute-force bests); one product does."""
    text = text_of(site_dir)
    gn = load_model("gated-neuron")
    best = {key: gn.best_ungated("graded", key)["mse"] for key in gn.KEYS}
    assert min(best.values()) > 0.004 and gn.best_ungated_any("graded")["mse"] == min(best.values())
    assert (f"不带门的 ReLU 神经元最好是 {gn.mse_text(best['relu'])}，GELU {gn.mse_text(best['gelu'])}，"
            f"SiLU {gn.mse_text(best['silu'])}（全部输出 0 时是 {gn.baseline('graded'):.3f}）") in text
    exact = gn.exact_solution("graded", "none")
    assert exact["mse"] == 0 and (exact["gate"], exact["up"]) == ([1.0, 0.0, 0.0], [0.0, 1.0, 0.0])
    small = gn.mse("graded", "silu", gn.SMALL_GATE, exact["up"])
    assert small < min(best.values()) / 10
    tiny = gn.mse("graded", "silu", [0.01, 0.0, 0.0], exact["up"])
    assert tiny < small / 100  # a SiLU gate gets as close as you like; an ungated neuron has a floor
    assert f"SwiGLU 的 MSE 是 {gn.mse_text(small)}；门读 0.01p（滑块取不到）时是 {gn.mse_text(tiny)}" in text
    assert f"它有上面那个到不了 0 的下限（滑块范围内最好 {gn.mse_text(min(best.values()))}）" in text
    assert "在整个正方形上（不只是表里这 25 个点）" in text
    assert f"表格就变成 {len(gn.GRID) ** 2} 个点" in text
    assert gn.exact_solution("graded", "silu") is None and gn.exact_solution("graded", "gelu") is None


def test_the_activation_facts_are_the_models(site_dir):
    text = text_of(site_dir)
    ac = load_model("activation-curves")
    g, s = ac.gelu_min(), ac.silu_min()
    assert round(g["y"], 3) == -0.170 and round(s["y"], 3) == -0.278  # the facts file's -0.170 and -0.2785
    assert f"最低降到 {g['y']:.3f}".replace("-", "−") in text and f"降到 {s['y']:.3f}".replace("-", "−") in text  # the widget's first state
    err = ac.tanh_form_max_error()["error"]
    assert 4.6e-4 < err < 4.8e-4 and f"最多差 {numfmt.sci(err, 2)}" in text  # the facts file's 4.7e-4 on [-10, 10]
    # both sides differ alike: f(z) - f(-z) = z, so f(z) - ReLU(z) = f(-|z|)
    for f in (ac.gelu, ac.silu):
        for z in (0.3, 1.0, 2.5, 4.0):
            assert f(z) - f(-z) == pytest.approx(z, rel=1e-12) and f(z) - ac.relu(z) == pytest.approx(f(-z), rel=1e-9)
    gap = ac.relu(1.0) - ac.silu(1.0)
    assert f"SiLU(1) = {ac.silu(1.0):.3f}，比 ReLU 低 {gap:.3f}；SiLU(−1) = {ac.silu(-1.0):.3f}".replace("= -", "= −") in text
    assert f"时 SiLU 还有 −{ac.relu(4.0) - ac.silu(4.0):.3f}，" in text  # the widget's two lines: one gap, both sides
    assert f"时它就比 ReLU 低 {ac.relu(4.0) - ac.silu(4.0):.3f}；" in text


def test_shazeers_table_is_whole_and_ranked(site_dir):
    text = text_of(site_dir)
    sz = facts()["papers"]["shazeer"]
    gated = {"glu", "bilinear", "geglu", "swiglu", "reglu"}
    assert set(sz["ranked"][:5]) == gated and set(sz["long_ranked"][:5]) == gated  # every gated FFN ahead, both columns
    assert sz["bilinear"] < min(sz["relu"], sz["gelu"])
    # the 524,288-step column as the paper prints it (Table 1; data/papers.json cites the copies it was read in)
    assert sz["long"] == {"relu": 1.677, "gelu": 1.679, "swish": 1.683, "glu": 1.663, "bilinear": 1.648,
                          "geglu": 1.633, "swiglu": 1.636, "reglu": 1.645}
    assert sz["steps_long"] == 524288 == 8 * sz["steps"]
    for key in sz["ranked"]:
        row = rf"{sz[key]:.3f}（{sz['std'][key]:.3f}）</td>\s*<td>{sz['long'][key]:.3f}</td>"
        assert re.search(row, page(site_dir)), row
    assert f"中间维从 {sz['widths']['d_ff']:,} 减到 {sz['widths']['d_ff_glu']:,}" in text
    assert sz["widths"]["d_ff_glu"] * 3 == sz["widths"]["d_ff"] * 2
    # the readings the page makes of both columns
    assert min(sz["pairs_long"].values()) > 0.03 and "训练长 8 倍也没有消失" in text
    assert "524,288 步时依次低 " + "、".join(f"{sz['pairs_long'][k]:.3f}" for k in ("relu", "gelu", "swish")) in text
    assert round(sz["ungated_spread_long"], 3) == 0.006 and f"524,288 步时只差 {sz['ungated_spread_long']:.3f}" in text
    assert sz["long"]["glu"] < min(sz["long"][k] for k in ("relu", "gelu", "swish"))  # GLU ties GELU only at 65,536
    assert f"比门过 GELU 的 GEGLU 高 {sz['glu'] - sz['geglu']:.3f}" in text
    assert "T5 是一个编码器-解码器模型" in text and "不是我们这种从左到右预测下一个词的语言模型" in text
    # Fine-tuning read pair by pair (Tables 2, 3): the gate's gain to each activation, best dev checkpoints.
    glue = [sz["glue"][g] - sz["glue"][u] for u, g in (("relu", "reglu"), ("gelu", "geglu"), ("swish", "swiglu"))]
    assert sz["finetune_gains"]["glue"] == glue and "GLUE 平均分高 " + "、".join(f"{x:.2f}" for x in glue) in text
    assert "开发集上最好的检查点" in text
    ungated = ("relu", "gelu", "swish")
    assert min(v for k, v in sz["superglue"].items() if k not in ungated) > max(sz["superglue"][k] for k in ungated)
    assert "SuperGLUE 上每个带门的都高于每个不带门的" in text
    assert sz["glue"]["bilinear"] <= sz["glue"]["relu"] and f"Bilinear（{sz['glue']['bilinear']:.2f}）却不比 ReLU" in text
    assert "更能降低语言模型的损失" not in text


def test_the_widths_are_the_configs(site_dir):
    text = text_of(site_dir)
    f = facts()
    ll, ds, a = f["llama2_7b"], f["deepseek67b"], f["anchor"]
    assert ll["rule_width"] == ll["d_ff"] == 11008 and f"得到 {ll['rule_width']:,}，和 config 里的 {ll['d_ff']:,} 一致" in text
    assert f"实取 {ds['d_ff']:,}" in text and f"实取 {a['d_ff']:,}（{a['ffn_ratio']:.1f}d）" in text


def test_the_clamps_are_the_configs(site_dir):
    text = text_of(site_dir)
    sc = load_model("swiglu-clamp")
    go, v4 = facts()["clamps"]["forms"]
    assert f"`swiglu_limit` = {go['limit']:.0f}" in page(site_dir).replace("<code>", "`").replace("</code>", "`")
    assert f"输出不会超过 {sc.clamped_max(go['limit'], go['alpha'], go['linear_bias']):.4f}" in text
    assert f"不会超过 {sc.clamped_max(v4['limit'], v4['alpha'], v4['linear_bias']):.4f}" in text
    assert f"{sc.fp16_max():,.0f}" in text


def test_sections_follow_the_contract(site_dir):
    headings = re.findall(r"<h2 id=[^>]*>([^<]+)", page(site_dir))
    marks = contract({"sections": ["真模型"]})
    assert [next(m for m in marks if h.startswith(m)) for h in headings] == marks


def test_the_real_model_section_follows_the_gating_export(site_dir):
    """Every comparison of 真模型 is the seeds protocol's reading of the export, recomputed here from
    the raw runs: the gating variants' seeds paired with the baseline's (and the linear FFN's) from
    the FFN experiment, on training and validation loss, against the baseline's band at that step."""
    import json

    import seeds

    text = text_of(site_dir)
    n = facts()["gating"]
    if n is None:
        assert "这一节正在准备" in text
        return
    assert "这一节正在准备" not in text
    export = json.loads((ROOT / "data" / "real-model" / "gating" / "gating.json").read_text(encoding="utf-8"))
    ablation = json.loads((ROOT / "data" / "real-model" / "ablation.json").read_text(encoding="utf-8"))
    seeds_file = ROOT / "data" / "real-model" / "gating" / "seeds.json"
    extra = json.loads(seeds_file.read_text(encoding="utf-8"))["seed_runs"] if seeds_file.exists() else []
    last = export["runs"][0]["steps_trained"]

    def arm(name, key, step=last):
        rows = [v for v in ablation["variants"] if v["name"] == name]
        if rows:
            return seeds.history_by_seed(rows[0], step, key)
        return {r["seed"]: seeds.at_step(r["history"], step, key)
                for r in export["runs"] + extra if r["name"] == name}

    assert {r["ffn_params_per_layer"] for r in export["runs"]} == {n["ffn_params"]}
    for key, column in (("train_loss", "训练损失"), ("val_loss", "验证损失")):
        base = arm("baseline", key)
        width = seeds.band(base.values())
        assert width == n["end"][key]["band"] and f"{column} {width:.3f}" in text
        for a, b in (("gelu_ffn", "baseline"), ("relu_ffn", "baseline"), ("bilinear_ffn", "baseline"),
                     ("bilinear_ffn", "gelu_ffn"), ("bilinear_ffn", "linear_ffn")):
            c = seeds.compare(arm(b, key), arm(a, key), width)
            said = n["end"][key][f"{a}-{b}"]
            assert (said["gap"], said["measured"]) == (c["gap"], c["measured"])
            assert seeds.brief(c) in text, (key, a, b)
        for r in n["rows"][1:]:
            c = n["end"][key][f"{r['name']}-baseline"]
            cell = f"{c['gap']:+.3f}".replace("-", "−") + ("（测到）" if c["measured"] else "（分不出）")
            assert cell in text and f"{r[key]:.3f}" in text
    # The band's width is said with the seed that sets it.
    worst = max(n["band_seeds"]["val_loss"], key=n["band_seeds"]["val_loss"].get)
    assert f"基线的种子 {worst} 训得明显差" in text
    narrow = {k: seeds.band(x for s, x in v.items() if s != worst) for k, v in n["band_seeds"].items()}
    assert f"去掉它，带只有 {narrow['val_loss']:.3f}（训练损失 {narrow['train_loss']:.3f}）" in text
    # Choosing that narrower band after the results would read these unmeasured one-sign pairs as measured: said.
    def without_worst(name, key):
        return {s: v for s, v in arm(name, key).items() if s != worst}

    crossing = set()  # the worst seed left out of the band and of the pairs alike
    for k in ("train_loss", "val_loss"):
        for a, b in (("gelu_ffn", "baseline"), ("relu_ffn", "baseline"), ("bilinear_ffn", "baseline"),
                     ("bilinear_ffn", "gelu_ffn"), ("bilinear_ffn", "relu_ffn"), ("relu_ffn", "gelu_ffn"),
                     ("bilinear_ffn", "linear_ffn"), ("linear_ffn", "baseline")):
            c = seeds.compare(without_worst(b, k), without_worst(a, k), narrow[k])
            if c["measured"] and not n["end"][k][f"{a}-{b}"]["measured"]:
                crossing.add((f"{a}-{b}", k))
    assert {(c["pair"], c["key"]) for c in n["crossings"]} == crossing
    assert bool(crossing) == ("对会读成「测到」" in text)
    if crossing:
        assert f"配对也不用它），我们比的各对里有 {len({p for p, _ in crossing})} 对会读成「测到」" in text
    # Each arm's own spread over the seeds all arms ran: the baseline's is the widest only if it is, every step.
    sp = n["spread"]
    widest = all(sp["by_arm"]["baseline"][k][i] > max(sp["by_arm"][x][k][i] for x in sp["by_arm"] if x != "baseline")
                 for k in ("train_loss", "val_loss") for i in range(len(n["steps"])))
    assert widest == sp["baseline_widest"] == ("每一步、两种损失都是 SwiGLU 自己的范围最宽" in text)
    for x in sp["by_arm"]:
        shared = {s: v for s, v in arm(x, "val_loss").items() if s in sp["seeds"]}
        assert sp["by_arm"][x]["val_loss"][-1] == seeds.band(shared.values())
    if n["worst_seed_trained"]:
        assert f"种子 {worst} 在另外几种 FFN 上也落在后面吗？" in text

        def trails(name, step, key="val_loss"):  # the worst seed's loss above the arm's other seeds' worst
            v = arm(name, key, step)
            return v[worst] - max(x for sd, x in v.items() if sd != worst)

        ran = [x for x in ("gelu_ffn", "bilinear_ffn", "relu_ffn") if worst in arm(x, "val_loss")]
        others = max(trails(x, st, k) for x in ran for st in n["steps"] for k in ("train_loss", "val_loss"))
        lags = [trails("baseline", st) for st in n["steps"]]
        fell = max(range(1, len(lags)), key=lambda i: lags[i] - lags[i - 1])
        assert f"到第 {n['steps'][fell]:,} 步已经高 {lags[fell]:.3f}" in text
        # The other arms' worst seed never trails by more than a tenth of SwiGLU's lag: "没有", with the most it trails.
        if others < min(lags[fell:]) / 10:
            assert f"最多比各自其余种子里最差的高 {others:.3f}" in text or others <= 0
        # Each pair to SwiGLU with the worst seed's pair apart: the other seeds' mean, and that pair's gap.
        for x in ran:
            gaps = {sd: v - arm("baseline", "val_loss")[sd] for sd, v in arm(x, "val_loss").items()}
            rest = [g for sd, g in gaps.items() if sd != worst]
            label = {"gelu_ffn": "GELU", "bilinear_ffn": "Bilinear", "relu_ffn": "ReLU"}[x]
            assert f"{label} 减 SwiGLU {sum(rest) / len(rest):+.3f}".replace("-", "−") in text
            assert f"{gaps[worst]:+.3f}".replace("-", "−") in text
            # A pair whose other seeds agree in sign and whose worst-seed gap has the other: its mean is said.
            flips = len({g > 0 for g in rest}) == 1 and (gaps[worst] > 0) != (rest[0] > 0)
            assert flips == (f"{label} 减 SwiGLU 在种子 {'、'.join(str(s) for s in sorted(gaps) if s != worst)} 上都" in text), x
    else:
        assert f"另外三种 FFN 没有训种子 {worst}" in text
    r = n["ranges"]["baseline"]
    assert f"绝对值最大 {r['hidden_max']:.2f}" in text and r["hidden_max"] < facts()["fp8_e4m3"]["max"]
    assert f"E4M3 格式最大只有 {facts()['fp8_e4m3']['max']:.0f}" in text
    # The largest value is one layer's; the tail (max over the top 1e-4 quantile) is read per layer.
    assert f"在第 {r['hidden_max_block']} 层" in text
    tails = [lay["hidden"]["max_abs"] / lay["hidden"]["top_abs"] for lay in r["layers"]]
    assert f"SwiGLU {min(tails):.1f}～{max(tails):.1f}" in text
    bil = n["ranges"]["bilinear_ffn"]["tail_by_layer"]
    assert f"不过激活的 Bilinear {min(bil):.1f}～{max(bil):.1f}" in text
    # Bilinear's tail against both ungated FFNs, layer by layer (not one FFN's range against another's).
    plain = [n["ranges"][x]["tail_by_layer"] for x in ("gelu_ffn", "relu_ffn")]
    above = [all(bil[i] > t[i] for t in plain) for i in range(len(bil))]
    below = [all(bil[i] < t[i] for t in plain) for i in range(len(bil))]
    word = "每一层都比两种不带门的重" if all(above) else "每一层都比两种不带门的轻" if all(below) else "有的层比两种不带门的都重"
    assert f"Bilinear 的尾巴{word}" in text and "光是乘积并不让尾巴变重" not in text
    heaviest = all(tails[i] > max(bil[i], *(t[i] for t in plain)) for i in range(len(bil)))
    assert heaviest == ("每一层最重的都是 SwiGLU" in text)
    # What this comparison can detect, said before any reading (the one-seed rule's 5 bands, the band).
    v = n["end"]["val_loss"]
    fewest = min(len(r["seeds"]) for r in n["rows"][1:])
    one_seed = f"差要到种子带的 5 倍（验证损失 {5 * v['band']:.2f}）"
    assert (one_seed in text) == (fewest == 1)  # the one-seed threshold only while an arm has one seed
    if fewest == 1:
        assert f"比这个模型和只看词频的 unigram 之间的全部差距（{n['references']['unigram'] - n['rows'][0]['val_loss']:.2f}）还大" in text
    else:
        assert f"{fewest} 个种子配对时，平均差也要超过种子带 {v['band']:.3f}" in text
    lin = v["linear_ffn-baseline"]
    assert f"验证损失平均高 {lin['gap']:.3f}，{'算测到了' if lin['measured'] else '也没算测到'}" in text
    # The gate's verdict in ⑥ and ⑧ follows what was measured, either way.
    said = {"none": "时分辨力不够，这些差一个也没测到", "worse": "时也测到了不带门的比 SwiGLU 差",
            "better": "时反而测到了不带门的比 SwiGLU 好", "mixed": "时测到的差有的偏向门、有的偏向不带门"}
    assert f"训到第 {last:,} 步{said[n['gate_verdict']]}" in text  # ⑥ says which step its verdict reads
    # Early in training every variant is below SwiGLU, Bilinear (same init and batches) too: said so.
    first = n["steps"][0]
    early = [n["by_step"][first]["train_loss"][f"{x}-baseline"]["direction"] for x in ("gelu_ffn", "relu_ffn", "bilinear_ffn")]
    lin = n["by_step"][first]["train_loss"]["linear_ffn-baseline"]
    said_slow = max(early) < 0 and lin["direction"] < 0  # read only on measured pairs
    assert said_slow == n["slow_start"] == ("看起来是 SwiGLU 起步慢" in text)
    if said_slow:  # validation loss at that step is read too, pair by pair
        for x in ("linear_ffn", "gelu_ffn", "relu_ffn", "bilinear_ffn"):
            assert n["by_step"][first]["val_loss"][f"{x}-baseline"]["brief"] in text
        assert "训练早期测到另外三种（连同带门、只少一个 SiLU 的 Bilinear）都比 SwiGLU 低" in text
    later = n["over_run"]["gelu_ffn-baseline"]["train_loss"][1:]
    if not any(p["measured"] for p in later):
        inside = all(p["times"] < 1 for p in later)
        assert ("每一步的差都在种子带以内" in text) == inside and ("没有一步测到" in text) == (not inside)
    for gone in ("既不支持也不否定", "0.0 倍", "见真模型一节。我们", "乘法本身就是非线性。"):
        assert gone not in text
    go = facts()["clamps"]["forms"][0]["name"]
    if r["clamped"][go]["gate"] == 0 and r["clamped"][go]["up"] == 0:
        assert r["gate_max"] < n["limits"][go] and "一个数都不会改动" in text
    for gone in ("GELU 训完时已经和 SwiGLU 分不出差别", "确实落在后面", "精度本身就差了", "这台 CPU 不支持 bf16"):
        assert gone not in text
    assert n["card"]["command"] in text
