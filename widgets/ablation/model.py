"""Our model's ablations (the FFN experiment, the residual experiment): validation loss per
variant and seed, the noise floor of each comparison, the learning curves, and the reading.

The chart is HTML whose positions are percentages computed here; the sentences
under it are decided by the numbers (a gap counts only as the seeds protocol,
widgets/common/seeds.py, says), so a retrained model can never leave a false
sentence behind. Standard library only, in the subset every runtime runs (CPython, Pyodide, MicroPython).
"""
import math

from numfmt import fixed, num
from seeds import band, band_at, by_seed, compare, history_by_seed, verdict_phrase

# readings=False leaves the sentences to the page (a lesson that reads the chart in its own prose).
PARAMS = {"data": None, "selected": "baseline", "title": "去掉 FFN 或它的非线性会怎样", "readings": True}

LABELS = {
    "baseline": "基线：{n} 层，注意力 + SwiGLU FFN",
    "linear_ffn": "线性 FFN：{n} 层，去掉 SiLU 和门控乘法",
    "no_ffn": "去掉 FFN：{n} 层，只剩注意力",
    "attn_only_12l": "纯注意力 {n} 层，参数与基线对齐",
    "no_residual": "{n} 层，去掉残差",
    "deep_8l": "加深到 {n} 层，有残差",
    "deep_8l_no_residual": "加深到 {n} 层，去掉残差",
}
SHORT = {"baseline": "基线", "linear_ffn": "线性 FFN", "no_ffn": "去掉 FFN", "attn_only_12l": "纯注意力",
         "no_residual": "去掉残差", "deep_8l": "8 层有残差", "deep_8l_no_residual": "8 层去掉残差"}
CURVE_W, CURVE_H = 600, 220  # the learning-curve SVG's viewBox


def label(variant):
    text = LABELS.get(variant["name"], variant["name"]).format(n=variant["n_layer"])
    stop = stopped_at(variant)
    return text + (f"（只训练到第 {num(stop)} 步）" if stop else "")


def last_step(variant):
    """The step a variant's runs ended at (their histories' last evaluation)."""
    return variant["histories"][0][-1]["step"] if variant.get("histories") else None


def stopped_at(variant, steps=None):
    """The step a run cut short ended at, or None for a run of the full schedule (`steps`, or the
    variant's own `steps` when it says; the residual export marks none: its baseline is the reference)."""
    full = steps or variant.get("full_steps")
    if not full:
        return None
    step = last_step(variant)
    return step if step and step < full else None


def short(name):
    """A variant's short name for lists. short("linear_ffn") -> '线性 FFN'"""
    return SHORT.get(name, name)


def mean(values):
    return sum(values) / len(values)


def spread(values):
    """Range of repeated runs, or None for a single run. spread([4.8, 4.9, 4.85]) -> 0.1 (about)"""
    return max(values) - min(values) if len(values) > 1 else None


def perplexity(loss):
    """e^loss: the model is as unsure as a fair choice among this many tokens. perplexity(0.0) -> 1.0"""
    return math.exp(loss)


def axis(values, ticks=5):
    """A padded range and round tick values covering `values`.

    >>> axis([4.6, 5.3])["ticks"] -> [4.5, 4.6, ..., 5.4]
    """
    lo, hi = min(values), max(values)
    span = max(hi - lo, 0.05)
    raw = span / ticks
    step = min((s for s in (0.01, 0.02, 0.05, 0.1, 0.2, 0.5, 1.0, 2.0) if s >= raw), default=5.0)
    start = step * int((lo - span * 0.1) / step)
    stop = step * (int((hi + span * 0.1) / step) + 1)
    count = round((stop - start) / step)
    return {"lo": start, "hi": stop, "ticks": [round(start + k * step, 6) for k in range(count + 1)], "step": step}


def position(x, ax):
    """Percent from the left edge of the track."""
    return round(100 * (x - ax["lo"]) / (ax["hi"] - ax["lo"]), 3)


def baseline_of(data):
    return next(v for v in data["variants"] if v["name"] == "baseline")


def seed_list(seeds):
    """seed_list([0, 1, 2]) -> '0–2'; seed_list([0, 2]) -> '0、2'"""
    seeds = sorted(seeds)
    if len(seeds) > 2 and seeds == list(range(seeds[0], seeds[-1] + 1)):
        return f"{seeds[0]}–{seeds[-1]}"
    return "、".join(str(x) for x in seeds)


def verdict(data, name, key="val_losses", against="baseline"):
    """`name` against `against` (the baseline unless said) by the seeds protocol, on the final
    losses of `key`: seeds.compare's dict, paired seed for seed, the band the baseline's. A run
    cut short is compared at its last step, with `against` and the band at that step."""
    v = by_name(data)
    base_v = baseline_of(data)
    stop = stopped_at(v[name])
    if stop:
        h = "val_loss" if key == "val_losses" else "train_loss"
        return compare(history_by_seed(v[against], stop, h), history_by_seed(v[name], stop, h),
                       band_at(base_v["histories"], stop, h))
    return compare(by_seed(v[against], key), by_seed(v[name], key), band(base_v[key]))


def comparisons(data):
    """Each variant against the baseline: the gap of the means and the protocol's verdict
    (seeds.compare, paired by seed, against the baseline's seed band)."""
    base_v = baseline_of(data)
    base = mean(base_v["val_losses"])
    width = band(base_v["val_losses"]) or 0.0
    out = []
    for v in data["variants"]:
        m = mean(v["val_losses"])
        c = verdict(data, v["name"]) if v["name"] != "baseline" else None
        stop = stopped_at(v)
        base_at = history_by_seed(base_v, stop, "val_loss") if stop else by_seed(base_v)
        paired_base = mean([base_at[s_] for s_ in v["seeds"] if s_ in base_at])
        out.append({"name": v["name"], "label": label(v), "params": v["params"], "runs": len(v["val_losses"]),
                    "mean": m, "gap": c["gap"] if c else 0.0, "paired_base": paired_base, "floor": width, "verdict": c,
                    "beats_floor": bool(c and c["measured"]), "worse": bool(c and c["direction"] > 0),
                    "params_vs_base": v["params"] / base_v["params"] - 1,
                    "same_params": v["params"] == base_v["params"]})
    return base, out


def loss_text(x):
    return num(x, 3)


def size_phrase(row):
    if row["same_params"]:
        return f"{num(row['params'])} 个参数，和基线一个不差"
    if row["name"] == "no_ffn":
        return f"{num(row['params'])} 个参数"
    more = "多" if row["params_vs_base"] > 0 else "少"
    return f"{num(row['params'])} 个参数，比基线{more} {num(abs(100 * row['params_vs_base']), 2)}%"


def sentences(data):
    """The reading of the chart, one sentence per variant, chosen by the numbers."""
    base, rows = comparisons(data)
    bigram, unigram = data["references"]["bigram"], data["references"]["unigram"]
    out = []
    for row in rows:
        if row["name"] == "baseline":
            continue
        loss = f"{num(row['mean'], 3)}（困惑度 {num(perplexity(row['mean']), 0)}）"
        c = row["verdict"]
        base_text = f"同样种子的基线 {num(row['paired_base'], 3)}"
        if row["worse"]:
            verdict = f"验证集损失 {loss}，{base_text}；{verdict_phrase(c, loss_text)}，确实更差"
        elif c["measured"]:
            verdict = f"验证集损失 {loss}，{base_text}；{verdict_phrase(c, loss_text)}，反而比基线好"
        else:
            verdict = f"验证集损失 {loss}，{base_text}；{verdict_phrase(c, loss_text)}"
        if row["mean"] > bigram and unigram - row["mean"] < row["mean"] - bigram:
            verdict += (f"；它离只看词频、不看前文的 unigram（{num(unigram, 2)}）比离插值 bigram（{num(bigram, 2)}）"
                        f"还近，说明在这个训练量下它几乎没有用上前文")
        elif row["mean"] > bigram:
            verdict += (f"；它甚至不如只看前一个 token 的插值 bigram（{num(bigram, 2)}），"
                        f"说明在这个训练量下它还没学到多少超出相邻统计的东西")
        out.append(f"{row['label']}（{size_phrase(row)}，{row['runs']} 个种子）：{verdict}。")
    return out


def by_name(data):
    return {v["name"]: v for v in data["variants"]}


def times(x, floor):
    """x as a multiple of the floor. times(0.2, 0.048) -> '4.2'"""
    return num(x / floor, 1) if floor else "无穷"


def split_at(data, without="no_ffn", partial="linear_ffn", full="baseline", key="val_losses"):
    """How the gap from `without` down to `full` divides at `partial`: the part `partial` already
    recovers and the rest, with the protocol's verdict on `partial` against `full` (the rest).
    key="train_losses" splits the final training losses the same way.

    no FFN 5.5, linear FFN 5.0, SwiGLU 4.8 -> total 0.7, recovered 0.5 (71%), rest 0.2 (29%)
    """
    v = by_name(data)
    shared = [x for x in v[full]["seeds"] if x in v[without]["seeds"] and x in v[partial]["seeds"]]
    m = {k: mean([by_seed(v[k], key)[x] for x in shared]) for k in (without, partial, full)}
    total = m[without] - m[full]
    recovered = m[without] - m[partial]
    rest = m[partial] - m[full]
    c = verdict(data, partial, key, against=full)
    return {"without": m[without], "partial": m[partial], "full": m[full], "total": total, "seeds": len(shared),
            "recovered": recovered, "rest": rest, "recovered_share": recovered / total if total else 0.0,
            "rest_share": rest / total if total else 0.0, "verdict": c, "floor": c["band"],
            "rest_measured": c["measured"] and c["direction"] > 0,
            "total_verdict": verdict(data, without, key, against=full), "shared": shared,
            "recovered_verdict": verdict(data, without, key, against=partial)}


def split_reading(data):
    """The FFN's gain over no FFN, split into what a linear per-token map already gives and what
    the non-linearity adds, each part read by the seeds protocol."""
    s = split_at(data)
    t = s["total_verdict"]
    if not (t["measured"] and t["direction"] > 0):
        return (f"去掉 FFN 的模型（{num(s['without'], 3)}）和基线（{num(s['full'], 3)}）相比，"
                f"{verdict_phrase(t, loss_text)}；这份数据里测不出 FFN 的好处，也就无从拆分。")
    out = (f"基线、线性 FFN、去掉 FFN 都跑了的是种子 {seed_list(s['shared'])}（基线这几个种子平均 {num(s['full'], 3)}；"
           f"图上的 {num(mean(baseline_of(data)['val_losses']), 3)} 是全部 {len(baseline_of(data)['seeds'])} 个种子的平均）。"
           f"在这几个种子上，从去掉 FFN 的 {num(s['without'], 3)} 到基线，FFN 一共让验证集损失降了 {num(s['total'], 3)}"
           f"（{verdict_phrase(t, loss_text)}）。")
    c = s["verdict"]
    if c["measured"] and c["direction"] < 0:  # the linear FFN beat SwiGLU
        return out + (f"线性 FFN（{num(s['partial'], 3)}）反而比基线低：{verdict_phrase(c, loss_text)}。"
                      "这份数据里，非线性没有带来额外的好处。")
    if s["recovered"] <= 0:
        out += f"线性 FFN（{num(s['partial'], 3)}）却没有比去掉 FFN 更好"
    else:
        r = s["recovered_verdict"]
        out += (f"其中 {num(s['recovered'], 3)}（{num(100 * s['recovered_share'], 0)}%）线性 FFN 就做到了（线性 FFN 对去掉 FFN，"
                f"{verdict_phrase(r, loss_text)}）"
                + (("：RMSNorm 之后的一个逐 token 线性映射已经能拿走大部分" if s["recovered_share"] > 0.5 else "，不到一半")
                   if r["measured"] else "，但这一部分按规则还不算测到"))
    if s["rest_measured"]:
        out += (f"；剩下的 {num(s['rest'], 3)}（{num(100 * s['rest_share'], 0)}%）要靠非线性："
                f"{verdict_phrase(c, loss_text)}。")
        out += ("非线性的好处是真的，但在这个规模上它是较小的那一部分。" if s["rest_share"] < 0.5 else
                "非线性的好处是真的，而且占了大头。")
    elif s["rest"] > 0:
        out += (f"；剩下的 {num(s['rest'], 3)} 是线性 FFN 比基线差的部分，按我们的规则还不算测到："
                f"{verdict_phrase(c, loss_text)}。")
    else:
        out += f"；线性 FFN 和基线之间，{verdict_phrase(c, loss_text)}。"
    return out + train_split_clause(data, s)


def train_split_clause(data, val):
    """The same split on the final training losses, as one clause after the validation split `val`."""
    if not all("train_losses" in x for x in data["variants"]):
        return ""
    t = split_at(data, key="train_losses")
    if t["total"] <= 0 or not 0 <= t["recovered_share"] <= 1:
        return ""
    return (f"在训练集损失上做同样的拆分，是 {num(100 * t['recovered_share'], 0)}% 对 "
            f"{num(100 * t['rest_share'], 0)}%（线性 FFN 比基线高 {num(t['rest'], 3)}；训练损失的种子带也按同样的办法算："
            f"{verdict_phrase(t['verdict'], loss_text)}）。")


def fit_gap(variant):
    """Validation minus training loss, averaged over the variant's seeds, at every evaluation:
    [(step, gap), ...]. The training loss is the mean of the last 50 minibatches before it."""
    hs = variant["histories"]
    return [(first["step"], mean([h[i]["val_loss"] - h[i]["train_loss"] for h in hs])) for i, first in enumerate(hs[0])]


def final_gap(variant):
    """Mean final validation loss minus mean final training loss."""
    return mean(variant["val_losses"]) - mean(variant["train_losses"])


def first_pass_end(variant):
    """The last evaluation before any training text is read a second time (epochs < 1), or None."""
    rows = [e for e in variant["histories"][0] if e.get("epochs", 0) < 1]
    return rows[-1] if rows else None


def paired_curve(data, a="linear_ffn", b="baseline", key="val_loss"):
    """a against b at every evaluation both reached, by the protocol (the band: the baseline's at
    that step): [(step, compare dict), ...]."""
    v = by_name(data)
    base_v = baseline_of(data)
    out = []
    for e in v[a]["histories"][0]:
        step = e["step"]
        width = band_at(base_v["histories"], step, key)
        out.append((step, compare(history_by_seed(v[b], step, key), history_by_seed(v[a], step, key), width)))
    return out


def fit_points(data, train_tokens, epochs, val_chapters):
    """Training against validation loss, as the lesson's short bullets: how far apart they end, how
    much of that gap was there before any text was read twice, whether the validation loss still
    fell at the end, the controls' gaps, and the linear FFN against the baseline over the run.
    val_chapters: [first, last] chapter of the 三國 validation split."""
    v = by_name(data)
    base = v["baseline"]
    n = len(base["seeds"])
    train, val = mean(base["train_losses"]), mean(base["val_losses"])
    gaps = dict(fit_gap(base))
    first = (f"为什么要看它：模型如果在背训练文字，训练损失会远低于验证损失。训练集有 {num(train_tokens)} 个 token，"
             f"每个模型训练时读到的 token 数是它的 {num(epochs, 2)} 倍。"
             f"基线（{n} 个种子的平均）训练结束时训练损失 {num(train, 3)}、验证集损失 {num(val, 3)}，"
             f"验证集只高 {num(val - train, 3)}")
    mid = sorted(gaps)[len(gaps) // 2]
    first += (f"；第 {num(mid)} 步时这个差距是 {num(gaps[mid], 3)}"
              "。训练时每一批都是从训练集里随机抽的窗口（有放回），所以「读了几遍」只是按 token 数折算：有的文字早被抽到过，有的到最后也没被抽到。"
              "差距里有多少来自验证集那几回本身更难猜、多少来自模型记住了抽到过的文字，我们没有拆开量")
    learning = still_learning(data).get("baseline")
    if learning and learning["every_seed_fell"]:
        first += (f"。最后 {num(learning['tokens'])} 个 token 里，每个种子的验证集损失都还在降"
                  f"（平均从 {num(learning['from'], 3)} 到 {num(learning['to'], 3)}）：它还在学能推广到没见过的文字上的东西，没有过拟合的迹象")
    elif learning:
        first += f"。最后 {num(learning['tokens'])} 个 token 里，验证集损失平均从 {num(learning['from'], 3)} 到 {num(learning['to'], 3)}，并不是每个种子都还在降"
    points = [first + "。"]

    others = [x for x in data["variants"] if x["name"] != "baseline"]
    parts = "、".join(f"{short(x['name'])}{' ' + str(x['n_layer']) + ' 层' if x['name'] == 'attn_only_12l' else ''}"
                      f" {num(final_gap(x), 3)}" for x in others)
    smaller = all(final_gap(x) < final_gap(base) for x in others)
    points.append(f"对照模型的这个差距{'都比基线小' if smaller else '并不都比基线小'}（{parts}）；"
                  "这几个数没有配对比较，也没有种子带，只是一个读数。")

    curve = paired_curve(data)
    measured = [step for step, c in curve if c["measured"]]
    last_step, last = curve[-1]
    lin = f"线性 FFN 和基线按种子配对，在每次评估时比较（{last['pairs']} 个种子）"
    if measured:
        lin += f"：从第 {num(measured[0])} 步起{'每次都' if measured == [s for s, _ in curve[curve.index(next(x for x in curve if x[0] == measured[0])):]] else '有时'}算测到了"
    else:
        width = min(c["band"] for _, c in curve if c["band"] is not None)
        later = []
        for st, c in reversed(curve):  # the final unbroken run where every pair has the linear FFN higher
            if not (c["same_sign"] and c["gap"] > 0):
                break
            later.insert(0, (st, c))
        if later:
            width = min(c["band"] for _, c in later if c["band"] is not None)
        ahead = [st for st, c in curve if c["same_sign"] and c["gap"] < 0]
        if ahead:
            lin += f"：第 {'、'.join(num(x) for x in ahead)} 步时每一对都是线性 FFN 更低（没有超出那一步的种子带）"
        if later and later[-1][0] == last_step and len(later) > 1:
            lin += (f"{'；' if ahead else '：'}从第 {num(later[0][0])} 步起，每次评估每一对都是线性 FFN 更高，平均差 "
                    f"{num(min(c['gap'] for _, c in later), 3)}–{num(max(c['gap'] for _, c in later), 3)}，"
                    f"但没有一次超出基线在那一步的种子带（最窄也有 {num(width, 3)}），按规则一次也不算测到")
        else:
            lin += f"{'；' if ahead else '：'}没有一次评估超出基线在那一步的种子带（最窄也有 {num(width, 3)}），按规则一次也不算测到"
    lin += f"；训练结束时，{verdict_phrase(last, loss_text)}。"
    points.append(lin)

    points.append(f"《三國演義》的验证集是第 {val_chapters[0]}–{val_chapters[1]} 回，其余六部书也各留最后约 8% 的回目；"
                  "这些差距里也有新章节、新人名的份，只对这个训练量和这份语料成立。")
    return points


def band_reading(data, key="val_losses"):
    """Why the baseline's seed band is as wide as it is: its seeds' final losses, and when one seed
    stands far from the rest (more than twice the others' spread away), how it lagged early on."""
    base = baseline_of(data)
    pairs = sorted(zip(base[key], base["seeds"]))
    lo, hi = pairs[0][0], pairs[-1][0]
    out = f"基线 {len(pairs)} 个种子训练结束时的验证集损失在 {num(lo, 3)}–{num(hi, 3)} 之间（种子带 {num(hi - lo, 3)}）"
    if len(pairs) < 4:
        return out + "。"
    for far, rest in ((pairs[-1], pairs[:-1]), (pairs[0], pairs[1:])):
        spread_rest = rest[-1][0] - rest[0][0]
        gap = min(abs(far[0] - rest[0][0]), abs(far[0] - rest[-1][0]))
        if gap > 2 * spread_rest:
            seed = far[1]
            h = base["histories"][base["seeds"].index(seed)]
            others = [base["histories"][base["seeds"].index(x[1])] for x in rest]
            early = h[1] if len(h) > 1 else h[0]
            o = [x[early_index(x, early["step"])]["val_loss"] for x in others]
            out += f"：其中 {len(rest)} 个挤在 {num(rest[0][0], 3)}–{num(rest[-1][0], 3)}，种子 {seed} 独自落在 {num(far[0], 3)}。"
            trailed = far is pairs[-1] and all(
                e["val_loss"] > max(x[early_index(x, e["step"])]["val_loss"] for x in others)
                for e in h[h.index(early):])
            if trailed:
                out += (f"它在第 {num(h[0]['step'])}–{num(early['step'])} 步之间落到了后面：第 {num(early['step'])} 步时它是 "
                        f"{num(early['val_loss'], 3)}，其余种子 {num(min(o), 3)}–{num(max(o), 3)}，此后一直没有追上。"
                        "换一个种子，初始权重和批次顺序都变了，训练就可能这样晚一步离开开头的平台；")
            out += "种子带把这种情况也算进「换种子会有的起伏」，所以它很宽，比它小的差距我们一律不读方向"
            hinged = [r for r in comparisons(data)[1] if r["verdict"] and not r["verdict"]["measured"]
                      and r["verdict"]["same_sign"] and abs(r["gap"]) > spread_rest]
            if hinged:
                out += (f"。只看其余 {len(rest)} 个种子，种子带只有 {num(spread_rest, 3)}；"
                        + "、".join(f"{short(r['name'])}的配对差 {num(abs(r['gap']), 3)} 是它的 {num(abs(r['gap']) / spread_rest, 1)} 倍"
                                    for r in hinged)
                        + f"，按规则却读不出方向：这个「分不出」取决于种子 {seed} 这一次训练")
            if any(seed not in v["seeds"] for v in data["variants"] if v["name"] != "baseline"):
                out += f"。有的对照没有跑种子 {seed}，它在那些比较里没有配对的对象，但它的起伏照样算进种子带"
            return out + "。"
    return out + "。"


def early_index(history, step):
    return next(i for i, e in enumerate(history) if e["step"] == step)


def attention_depth_reading(data, deep="attn_only_12l", shallow="no_ffn"):
    """The deep attention-only stack against the shallow model without FFN: more parameters, and
    how it trained, read by the protocol (paired on their shared seeds; the band the baseline's)."""
    v = by_name(data)
    d, s = v[deep], v[shallow]
    md = mean(d["val_losses"])
    ms = mean([x for seed, x in zip(s["seeds"], s["val_losses"]) if seed in d["seeds"]])  # the seeds the pairs use
    c = verdict(data, deep, against=shallow)
    bigram = data["references"]["bigram"]
    worse = c["measured"] and c["direction"] > 0
    out = (f"纯注意力 {d['n_layer']} 层的参数是去掉 FFN 的 {num(d['params'] / s['params'], 1)} 倍，"
           f"验证集损失 {num(md, 3)}，同样种子的去掉 FFN 是 {num(ms, 3)}：{verdict_phrase(c, loss_text)}")
    if md > bigram and ms > bigram:
        out += (f"。两个都没有 FFN 的模型，验证集损失都还在插值 bigram（只看前一个 token 的计数模型，{num(bigram, 2)}）之上："
                "这个训练量对它们太小，更像没训好，不是表达不了。")
    elif md > bigram:
        out += f"；它的验证集损失还在插值 bigram（{num(bigram, 2)}）之上。"
    else:
        out += "。"
    out += f"它用的是为 {v['baseline']['n_layer']} 层基线挑的学习率和日程，没有单独调过"
    if worse:
        out += ("：更深的纯注意力栈在这套配方下训练本身就有困难，"
                "这个对照说明的是「这样训不出来」，不是「注意力表达不了」。")
    else:
        out += "：差距没有测到，这里不下结论。"
    return out


def evidence_sentence(data):
    """⑦'s one sentence: every control against the baseline by the protocol, and the split."""
    _, rows = comparisons(data)
    controls = [r for r in rows if r["name"] != "baseline"]
    parts = "；".join(f"{short(r['name'])}{' 12 层' if r['name'] == 'attn_only_12l' else ''} "
                      f"{'高' if r['gap'] > 0 else '低'} {num(abs(r['gap']), 3)}（{verdict_phrase(r['verdict'], loss_text)}）"
                      for r in controls)
    out = f"在我们的模型上，和基线比，{parts}"
    s = split_at(data)
    if s["total"] > 0 and 0 <= s["recovered_share"] <= 1:
        out += (f"。去掉 FFN 到基线的 {num(s['total'], 3)} 里，线性映射拿走 {num(100 * s['recovered_share'], 0)}%，"
                f"余下 {num(100 * s['rest_share'], 0)}% 是线性 FFN 与基线之差" + ("（已测到）" if s["rest_measured"] else "（按规则还不算测到）"))
    return out + "。"


def mean_curve(variant):
    """Validation loss at each evaluation, averaged over the variant's seeds: [(tokens, loss), ...]."""
    histories = variant["histories"]
    points = []
    for i, first in enumerate(histories[0]):
        points.append((first["tokens"], mean([h[i]["val_loss"] for h in histories])))
    return points


def still_learning(data):
    """Per variant: how much its validation loss fell over the last evaluation interval, and
    whether it is still falling. With several seeds the test is within each run, so the seeds'
    different levels cancel: every seed fell, and the mean fall is larger than the spread of the
    seeds' falls. A single run has no such spread; its fall must beat the comparison's noise floor."""
    floors = {r["name"]: r["floor"] for r in comparisons(data)[1]}  # the baseline's seed band
    out = {}
    for v in data["variants"]:
        curve = mean_curve(v)
        if len(curve) < 2:
            continue
        (t0, a), (t1, b) = curve[-2], curve[-1]
        falls = [h[-2]["val_loss"] - h[-1]["val_loss"] for h in v["histories"]]
        spread_of_falls = spread(falls)
        if spread_of_falls is None:
            still, noise = a - b > floors[v["name"]], floors[v["name"]]
        else:
            still, noise = min(falls) > 0 and a - b > spread_of_falls, spread_of_falls
        out[v["name"]] = {"from": a, "to": b, "drop": a - b, "tokens": t1 - t0, "runs": len(falls),
                          "every_seed_fell": min(falls) > 0, "noise": noise, "still": still}
    return out


def curve_sentences(data):
    learning = still_learning(data)
    base = learning.get("baseline")
    out = []
    for v in data["variants"]:
        s = learning.get(v["name"])
        if s is None:
            continue
        if s["drop"] <= 0:
            tail = f"最后 {num(s['tokens'])} 个 token 里验证集损失从 {num(s['from'], 3)} 变到 {num(s['to'], 3)}，没有再降"
        else:
            tail = f"最后 {num(s['tokens'])} 个 token 里验证集损失从 {num(s['from'], 3)} 降到 {num(s['to'], 3)}（降了 {num(s['drop'], 3)}"
            if v["name"] != "baseline" and base and base["drop"] > 0:
                tail += f"，是基线同一段的 {num(s['drop'] / base['drop'], 1)} 倍"
            tail += "）"
        if s["runs"] == 1:
            test = (f"比基线种子带 {num(s['noise'], 3)} 还大" if s["still"] else f"不到基线种子带 {num(s['noise'], 3)}")
        elif s["still"]:
            test = f"{s['runs']} 个种子在这一段都在降，降幅彼此只差 {num(s['noise'], 3)}，小于平均降幅"
        elif not s["every_seed_fell"]:
            test = f"{s['runs']} 个种子里有的在这一段已经不降了"
        else:
            test = f"{s['runs']} 个种子的降幅彼此相差 {num(s['noise'], 3)}，不比平均降幅小"
        if s["still"]:
            judge = "到训练结束它仍在进步，这个训练量对它不够，它还没学完"
        else:
            judge = "在这个学习率日程的末尾，它已经基本不再进步"
        out.append(f"{label(v)}：{tail}；{test}：{judge}。")
    return out


def curves(data):
    """SVG polylines of the mean validation curves, on a shared loss axis."""
    series = [(v, mean_curve(v)) for v in data["variants"]]
    losses = [loss for _, c in series for _, loss in c]
    ax = axis(losses)
    t_max = max(t for _, c in series for t, _ in c)

    def xy(t, loss):
        return (CURVE_W * t / t_max, CURVE_H * (ax["hi"] - loss) / (ax["hi"] - ax["lo"]))

    lines = []
    for k, (v, c) in enumerate(series):
        pts = [xy(t, loss) for t, loss in c]
        end = pts[-1]
        lines.append({"name": v["name"], "label": label(v), "index": k,
                      "points": " ".join(f"{fixed(x)},{fixed(y)}" for x, y in pts),
                      "end_x": round(end[0], 1), "end_y": round(end[1], 1),
                      "end": num(c[-1][1], 3)})
    ticks = [{"y": round(xy(0, t)[1], 1), "label": num(t, 1)} for t in ax["ticks"] if ax["lo"] <= t <= ax["hi"]]
    summary = "；".join(f"{ln['label']} 结束时 {ln['end']}" for ln in lines)
    return {"w": CURVE_W, "h": CURVE_H, "lines": lines, "ticks": ticks, "tokens": num(t_max),
            "summary": f"各模型验证集损失随训练 token 数下降的曲线（多个种子取平均）：{summary}。"}


def page_params(params):
    """What the page carries for the browser's calls: each variant with only what the chart reads
    (its curves as tokens and validation loss), not the export's full histories."""
    data = params.get("data")
    if data is None:
        return params
    keep = ("name", "description", "n_layer", "params", "seeds", "val_losses")
    variants = []
    for v in data["variants"]:
        kept = {k: v[k] for k in keep}
        if "full_steps" in v:
            kept["full_steps"] = v["full_steps"]
        kept["histories"] = [[{"step": e["step"], "tokens": e["tokens"], "val_loss": e["val_loss"]} for e in h]
                             for h in v["histories"]]
        variants.append(kept)
    shipped = dict(data)
    shipped["variants"] = variants
    out = dict(params)
    out["data"] = shipped
    return out


def example(facts):
    """The params a page shows this widget with (the widget gallery uses it); None before lab/ exports."""
    return {"data": facts["real"]["ablation"]} if facts.get("real") else None


def view(params):
    data = params["data"]
    if data is None:
        raise ValueError("the ablation chart needs data=... (data/real-model/ablation.json via facts.real)")
    losses = [x for v in data["variants"] for x in v["val_losses"]]
    ax = axis(losses)
    base_v = baseline_of(data)
    base, rows = comparisons(data)
    by_name = {r["name"]: r for r in rows}
    chart = []
    for v in data["variants"]:
        r = by_name[v["name"]]
        chart.append({
            "name": v["name"], "label": r["label"], "params": num(v["params"]),
            "dots": [{"x": position(x, ax), "value": num(x, 3), "seed": s} for x, s in zip(v["val_losses"], v["seeds"])],
            "mean": {"x": position(r["mean"], ax), "value": num(r["mean"], 3)},
            "perplexity": num(perplexity(r["mean"]), 0),
            "runs": len(v["val_losses"]),
            "gap": "" if v["name"] == "baseline" else
                   f"{'+' if r['gap'] > 0 else ''}{num(r['gap'], 3)}（对同种子基线 {num(r['paired_base'], 3)}）",
        })
    selected = params.get("selected") or "baseline"
    sel = by_name[selected]
    sel_losses = next(v for v in data["variants"] if v["name"] == selected)["val_losses"]
    detail = (f"{sel['label']}（{num(sel['params'])} 个参数）：验证集损失 " + "、".join(num(x, 3) for x in sel_losses)
              + f"（平均 {num(sel['mean'], 3)}，困惑度 {num(perplexity(sel['mean']), 0)}）"
              + ("" if selected == "baseline" else
                 f"；{verdict_phrase(sel['verdict'], loss_text)}"))
    base_vals = base_v["val_losses"]
    return {
        "params": {"selected": selected},
        "title": params.get("title") or PARAMS["title"],
        "axis": {"ticks": [{"x": position(t, ax), "label": num(t, 2 if ax["step"] < 0.1 else 1)} for t in ax["ticks"]]},
        "band": {"left": position(min(base_vals), ax),
                 "width": round(position(max(base_vals), ax) - position(min(base_vals), ax), 3),
                 "label": f"基线 {len(base_vals)} 个种子的种子带 {num(min(base_vals), 3)}–{num(max(base_vals), 3)}"
                          f"（宽 {num(max(base_vals) - min(base_vals), 3)}）"},
        "chart": chart,
        "count": len(chart),
        "readings": params.get("readings", True) is not False,
        "sentences": sentences(data),
        "curves": curves(data),
        "curve_sentences": curve_sentences(data),
        "metric": data["metric"],
        "references": {"unigram": num(data["references"]["unigram"], 2), "bigram": num(data["references"]["bigram"], 2),
                       "unigram_ppl": num(perplexity(data["references"]["unigram"]), 0),
                       "bigram_ppl": num(perplexity(data["references"]["bigram"]), 0)},
        "date": data["date"],
        "tokens": num(data["tokens_per_run"]),
        "out": {"detail": detail},
        "rows": {v["name"]: {"data-selected": "true" if v["name"] == selected else "false"} for v in data["variants"]},
    }


def select(params):
    return view(params)
