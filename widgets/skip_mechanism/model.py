"""skip-mechanism: what a skip connection does in our model, one change at a time (lab's
`python -m lab mechanism`, data: facts.residual.mechanism). A table of the runs (what each
changes, whether it can name the current token at step 0, its validation loss after training,
how alike its positions' vectors end up) and the sentences that read it, each chosen by the
numbers and the seeds protocol v2 (widgets/common/seeds.py): at one step, the arms are the
baseline's runs (data["baseline_runs"], every seed it has) and each run here that reached that
step; the health check leaves failed runs out, the noise comes from the arms with two or more
healthy runs, and a one-seed gap beyond the interval awaits a second seed. Static: nothing runs
in the browser.

Standard library only, in the subset every runtime runs (no {**a}, no random).
"""
from numfmt import num
import seeds

PARAMS = {"data": None}
LABELS = {
    "baseline": "基线：两个子层都有残差",
    "no_residual": "去掉全部残差",
    "detached_skip": "残差只传值、不传梯度",
    "embed_readd": "去掉残差，只在最后把词嵌入加回一次",
    "attn_skip_only": "只给注意力留残差",
    "ffn_skip_only": "只给 FFN 留残差",
    "no_residual_init02": "去掉残差，写回矩阵按 0.02 初始化",
}


def label(name):
    return LABELS.get(name, name)


def pct(x):
    """pct(0.999) -> '99.9%'; a share under 1% keeps two decimals: pct(0.0005) -> '0.05%'"""
    return num(100 * x, 2 if 0 < x < 0.01 else 1) + "%"


SHORT = {"measured": "测到", "within": "在误差之内", "one_seed": "一个种子，待确认", "holm": "校正后不算测到",
         "split": "暂不读", "none": "不读"}


def rows(data):
    """One row per run, in the export's order. A run stopped early (*) is compared with the
    baseline at its last step; the no-skip model is the earlier experiment's run (†): its loss
    from there, its step-0 probe from this export, no end-of-training probe. 「比基线」 is the v2
    gap to the baseline's healthy runs at that step, ± its 95 % half-width."""
    out = []
    for name in data["order"]:
        v = data["variants"][name]
        mark = "*" if v["stopped_early"] else ("†" if v["elsewhere"] else "")
        delta, reading = "—", "—"
        if name != "baseline":
            c = judge(data, name, "baseline")
            if c["gap"] is not None:
                delta = _signed(c["gap"]) + (f" ± {num(c['half_width'], 3)}" if c["half_width"] is not None else "")
                reading = SHORT[c["status"]]
        out.append({"name": name, "label": label(name) + mark, "init_top1": pct(v["init"]["current_token_top1"]),
                    "step": num(v["steps_trained"]), "val": num(v["val_loss"], 3), "delta": delta, "reading": reading,
                    "cosine": num(v["end"]["cosine_final"], 2) if v["end"] else "—",
                    "stopped": v["stopped_early"], "elsewhere": v["elsewhere"]})
    return out


def _signed(x):
    return ("+" if x >= 0 else "−") + num(abs(x), 3)


def identity_at_init(data):
    """Step 0: does the model's top prediction name the token it stands on (the output head is the
    input embedding, tied), and does the stream still point at that token's embedding? Each clause
    only as far as its number goes."""
    b, n = data["variants"]["baseline"]["init"], data["variants"]["no_residual"]["init"]
    bt, nt = b["current_token_top1"], n["current_token_top1"]
    bo, no = b["own_embedding_cosine_by_depth"], n["own_embedding_cosine_by_depth"][1]
    text = (f"训练开始前（第 0 步），有残差的模型在 {pct(bt)} 的位置上，把当前这个 token 本身排在预测的第一位。"
            "这是个诊断，不是成绩：输出层和词嵌入共用同一个矩阵，只有当前 token 的向量一路到了输出，才会这样")
    text += f"；它的流和自己那个 token 的嵌入的余弦，第 1 块之后是 {num(bo[1], 2)}，第 {len(bo) - 1} 块之后还有 {num(bo[-1], 2)}。"
    text += f"去掉残差，这个比例是 {pct(nt)}，第 1 块之后的余弦是 {num(no, 2)}"
    if nt < 0.05 and abs(no) < 0.1 < bo[1]:
        text += "：流不再指向自己的嵌入，没有一条路把 token 自己的向量原样带到输出。"
    else:
        text += "。"
    return text


def loss_at(v, step, key="val_loss"):
    """A run's loss at one of its evaluations (None if it has none there)."""
    return seeds.at_step(v["history"], step, key)


def arms(data, step, key="val_loss"):
    """The experiment's arms at `step` ({arm: {seed: loss}}): the baseline's runs (every seed it
    has, data["baseline_runs"]) and each run here that reached `step`, one seed each."""
    out = {"baseline": seeds.runs_by_seed(data["baseline_runs"], step, key)}
    for name in data["order"]:
        if name == "baseline":
            continue
        v = data["variants"][name]
        x = loss_at(v, step, key)
        if x is not None:
            out[name] = {v["seed"]: x}
    return out


def reading(data, step, key="val_loss"):
    """seeds.read over arms(data, step, key): the health check and the pooled noise at `step`."""
    return seeds.read(arms(data, step, key))


def judge(data, name, ref, step=None):
    """`name` against `ref` by seeds protocol v2 at `name`'s last step unless `step` is given, so a
    run stopped early is read where it stopped: seeds.contrast's dict plus x and ref (the two
    arms' means over healthy runs), step and the reading."""
    step = step or data["variants"][name]["steps_trained"]
    r = reading(data, step)
    c = seeds.contrast(r, name, ref)
    c["x"], c["ref"], c["step"], c["reading"] = c["mean_a"], c["mean_b"], step, r
    return c


def phrase(c):
    """How the page says judge()'s result: seeds.say, losses to 3 decimals."""
    return seeds.say(c)


def loss3(x):
    """A loss as the page writes it. loss3(6.9581) -> '6.958'"""
    return num(x, 3)


def base_text(c):
    """The baseline's side of a reading: 「基线 4.861（4 次健康训练的平均）」."""
    n = c["n_b"]
    return f"基线 {num(c['ref'], 3)}（{n} 次健康训练的平均）" if n > 1 else f"基线 {num(c['ref'], 3)}"


def unigram_width(data, step):
    """The 95 % half-width of one run against the unigram line at `step` (t(0.975, df) times the
    pooled noise; the unigram itself has none), or None without a noise estimate."""
    r = reading(data, step)
    return seeds.t_quantile(r["df"]) * r["sd"] if r["sd"] is not None else None


def at_unigram(data, x, step):
    """Does a one-run loss sit on the unigram line: within one run's 95 % interval of it at `step`?"""
    h = unigram_width(data, step)
    return h is not None and abs(x - data["references"]["unigram"]) <= h


def _at(step, data):
    """'' for a full run; '（都在第 600 步）' for a comparison made at an earlier step."""
    return "" if step == data["card"]["training"]["steps"] else f"（都在第 {num(step)} 步）"


def _beyond(c):
    """The gap is beyond its interval: measured, or one seed awaiting a second."""
    return c["status"] in ("measured", "one_seed", "holm")


def gradient_path(data):
    """The detached skip: the value kept, the gradient's direct path cut. 'As bad as no skips'
    only when it is beyond the interval above the baseline and sits on the unigram; a finding only
    when measured (two seeds or more); one seed points and awaits a second."""
    c = judge(data, "detached_skip", "baseline")
    d, step = c["x"], c["step"]
    n = loss_at(data["variants"]["no_residual"], step)
    g = data["gradients"]
    g0 = [m["blocks"][0]["param_grad_norm"] for m in (g["detached_skip"], g["baseline"])]
    text = (f"残差只传值、不传梯度（相加之前把输入从求导中摘掉：前向的值一点不变，反向时梯度只能穿过每一层回去）："
            f"验证集损失 {num(d, 3)}，{base_text(c)}{_at(step, data)}。和基线比，{phrase(c)}。")
    if not _beyond(c):
        return text + "它和基线在误差之内：在我们这个深度上，看不出那条梯度的捷径是必需的。"
    if c["gap"] < 0:
        return text + "它比基线还低：梯度的捷径在这里不是必需的。"
    if at_unigram(data, d, step):
        text += f"它和去掉全部残差的模型（{num(n, 3)}）一样停在 unigram 上。前向的值一点没少，训练却同样失败："
    else:
        text += f"差距是「去掉全部残差」那段（{num(n - c['ref'], 3)}）的 {pct((d - c['ref']) / (n - c['ref']))}："
    if g0[0] < g0[1] / 10:
        text += (f"第 0 步，它第 1 块的参数收到的梯度只有基线的 {num(g0[0] / g0[1], 4)}：梯度只能穿过后面的每个子层回来，"
                 "这些子层写回流上的矩阵又初始化得很小。梯度小本身未必是原因：AdamW 按每个参数自己的梯度大小缩放步长，"
                 "更可能缺的是捷径那一项带回来的方向——这一点没有单独检验。")
    if c["measured"]:
        return text + "在我们的模型里，梯度的那条捷径也是必需的。"
    return text + "这一次训练指向：梯度的那条捷径也是必需的；只有一个种子，要第二个种子确认才算数。"


def identity_path(data):
    """No per-block skips, the embedding added once at the end, against no skips at all: is the
    token's identity at the output what was missing?"""
    c = judge(data, "embed_readd", "no_residual")
    e, n, step = c["x"], c["ref"], c["step"]
    b = judge(data, "embed_readd", "baseline")["ref"]
    uni = data["references"]["unigram"]
    text = (f"不给任何一块留残差，只在最后把词嵌入加回一次：验证集损失 {num(e, 3)}，"
            f"去掉全部残差是 {num(n, 3)}（unigram {num(uni, 3)}）{_at(step, data)}。和去掉全部残差比，{phrase(c)}。")
    end = data["variants"]["embed_readd"]["end"]
    if end and end["current_token_top1"] > 0.5:
        text += (f"还有一个混淆：输出层和词嵌入共用同一个矩阵，最后加回的嵌入会把票投给当前 token 自己——训练结束时，"
                 f"它在 {pct(end['current_token_top1'])} 的位置上仍把当前 token 排在第一。")
    if not _beyond(c):
        return text + "两者在误差之内：只在最后把身份还回去，没有看出用处。"
    lead = "" if c["measured"] else "这一个种子里，"
    if c["gap"] > 0:
        return text + lead + "把词嵌入加回去反而更差。"
    text += f"{lead}它离开了 unigram，收回了「去掉全部残差」那段差距（到基线的平均）的约 {num(100 * (n - e) / (n - b), 0)}%。"
    if end and end["cosine_by_depth"][-1] > 0.95:
        text += (f"各块的输出仍然每个位置几乎一样（最后一块之后余弦 {num(end['cosine_by_depth'][-1], 2)}）：它用上了当前 token，"
                 "却没用上前文")
        bigram = data["references"]["bigram"]
        text += f"，所以还不如只看前一个 token 的 bigram（{num(bigram, 3)}）。" if e > bigram else "。"
    return text


def sublayer_paths(data):
    """Which sub-layer's skip matters: attention's (the one that mixes positions) or the FFN's?
    Both runs are read at the same step (the shorter one's), against the baseline there and
    against each other."""
    step = min(data["variants"][k]["steps_trained"] for k in ("attn_skip_only", "ffn_skip_only"))
    uni = data["references"]["unigram"]
    parts = []
    for name, what in (("attn_skip_only", "只给注意力留残差"), ("ffn_skip_only", "只给 FFN 留残差")):
        c = judge(data, name, "baseline", step)
        where = ("，停在 unigram 上" if at_unigram(data, c["x"], step)
                 else f"，比 unigram（{num(uni, 3)}）低 {num(uni - c['x'], 3)}" if uni - c["x"] < c["x"] - c["ref"] else "")
        parts.append(f"{what}：{num(c['x'], 3)}{where}；和{base_text(c) if not parts else '基线'}比，{phrase(c)}")
    text = "。".join(parts) + f"{_at(step, data)}。"
    fv = data["variants"]["ffn_skip_only"]
    if fv["steps_trained"] == step and fv["end"]["modal_top1_share"] > 0.5:
        text += (f"只给 FFN 留残差的模型在 {pct(fv['end']['modal_top1_share'])} 的位置上给出同一个首选预测，"
                 f"各位置最终向量两两的余弦是 {num(fv['end']['cosine_final'], 2)}。")
    c = judge(data, "ffn_skip_only", "attn_skip_only", step)
    text += f"只给 FFN 留残差的和只给注意力留残差的直接比，{phrase(c)}"
    if not _beyond(c):
        return text + "。两条残差在这一步没有分出先后。"
    if c["gap"] > 0:
        if c["measured"]:
            return text + ("。要紧的是注意力外面那条，和 Dong 等人的预测一致：注意力是把各位置混在一起的那一层，没有残差，"
                           "各位置就挤成同一个向量。")
        return text + ("。这一个种子指向注意力外面那条更要紧，和 Dong 等人的预测一致（注意力是把各位置混在一起的那一层）；"
                       "要第二个种子确认才算数。")
    if c["measured"]:
        return text + "。这次是 FFN 外面那条更要紧。"
    return text + "。这一个种子指向 FFN 外面那条更要紧，要第二个种子确认才算数。"


def init_control(data):
    """The no-skip model with every output projection at 0.02, against the no-skip run at the same step."""
    i = data["variants"]["no_residual_init02"]
    step = i["steps_trained"]
    text = (f"去掉残差、把写回矩阵的初始标准差从 {num(data['card']['architecture']['residual_init_std'], 5)} 放大到 0.02："
            f"第 0 步预测等于当前 token 的比例是 {pct(i['init']['current_token_top1'])}")
    if loss_at(data["variants"]["no_residual"], step) is None:
        return text + f"，训练 {num(step)} 步后验证集损失 {num(i['val_loss'], 3)}。"
    c = judge(data, "no_residual_init02", "no_residual")
    text += (f"，训练到第 {num(step)} 步验证集损失 {num(c['x'], 3)}，原来的初始化在同一步是 {num(c['ref'], 3)}；"
             f"{phrase(c)}。")
    both = at_unigram(data, c["x"], step) and at_unigram(data, c["ref"], step)
    if both and not _beyond(c):
        return text + ("两者都停在 unigram 上：放大写回矩阵没有帮上忙。在这套 Pre-Norm 设置里，放大它几乎不改变前向"
                       f"（下一次归一化把尺度抹掉了），改变的主要是每一步的有效步长；至少在这一个取值、这 {num(step)} 步里，"
                       "小初始化不是它卡住的原因。")
    if _beyond(c) and c["gap"] < 0:
        if c["measured"]:
            return text + "它离开了 unigram：在这套设置下，初始化确实是原因之一。"
        return text + "这一个种子里它离开了 unigram：初始化可能是原因之一，要第二个种子确认。"
    return text


def _stops(data):
    """[(step, ["「label」", ...]), ...] for the runs stopped early, by step."""
    by_step = {}
    for name in data["order"]:
        v = data["variants"][name]
        if v["stopped_early"]:
            by_step.setdefault(v["steps_trained"], []).append("「" + label(name) + "」")
    return sorted(by_step.items())


def stops_sentence(data):
    """Which runs stopped early, grouped by step, for the model card ('' when none did)."""
    stops = _stops(data)
    if not stops:
        return ""
    parts = ["、".join(names) + f"训练到第 {num(step)} 步停下" for step, names in stops]
    return "；".join(parts) + "（同一个学习率日程的前段，和基线在同一步比）；"


def verdicts(data):
    """What the runs show by seeds protocol v2, for the lesson's prose to choose its sentences by:
    identity_lost_at_init: without skips the token cannot be read at step 0;
    gradient_path_stuck: cutting the skip's gradient (value kept) leaves the run above the
      baseline beyond the interval and on the unigram (one seed or more);
    gradient_path_needed: the same, measured (two healthy runs or more in each arm);
    identity_at_output: giving the embedding back once at the end, against no skips at all:
      "helps" / "hurts" (measured), "one_seed_helps" / "one_seed_hurts" (one seed beyond the
      interval, awaiting a second) or "within" (inside the interval, or nothing to read)."""
    n = data["variants"]["no_residual"]["init"]
    d = judge(data, "detached_skip", "baseline")
    e = judge(data, "embed_readd", "no_residual")
    stuck = _beyond(d) and d["gap"] > 0 and at_unigram(data, d["x"], d["step"])
    side = ("helps" if e["gap"] < 0 else "hurts") if _beyond(e) else None
    return {"identity_lost_at_init": n["current_token_top1"] < 0.05,
            "gradient_path_stuck": stuck, "gradient_path_needed": stuck and d["measured"],
            "identity_at_output": "within" if side is None else side if e["measured"] else "one_seed_" + side}


def elsewhere_note(data, row):
    """The † row's footnote: its loss comes from the residual export's run; a gap across precisions is said."""
    text = f"† {row['label'][:-1]}：残差那组实验里的同一次训练，第 0 步的探针在这里补量，没有训练结束时的探针（—）"
    gap = data.get("precision_gap")
    if gap is not None:
        text += f"；那次训练的精度和这一组不同，它的「比基线」跨了精度（两种精度下基线种子 0 相差 {num(abs(gap), 3)}）"
    return text


def health_text(r, step=None):
    """What the health check and the pooled noise say at one step, for the table's note:
    which runs failed (listed with their loss and how far above their arm's median), the noise
    and its degrees of freedom, and the interval of a one-seed run against the baseline."""
    at = f"第 {num(step)} 步：" if step is not None else ""
    failed = []
    for arm in sorted(r["failed"]):
        for s in sorted(r["failed"][arm]):
            failed.append(f"{'基线' if arm == 'baseline' else label(arm)}种子 {s}（{num(r['failed'][arm][s], 3)}）")
    base = r["healthy"].get("baseline", {})
    if failed:
        head = "、".join(failed) + f"高出同组中位数超过门槛 {num(r['threshold'], 3)}，是失败的训练，不计入；"
    else:
        head = f"健康检查没有认出失败的训练（门槛 {num(r['threshold'], 3)}）；"
    if r["sd"] is None:
        return at + head + "没有一组有两次以上的健康训练，估计不了噪声"
    one = seeds.t_quantile(r["df"]) * r["sd"] * (1 + 1 / len(base)) ** 0.5 if base else None
    text = at + head + f"噪声（健康训练的组内标准差）{num(r['sd'], 3)}，自由度 {r['df']}"
    if one is not None:
        text += f"，一个种子的对照和基线 {len(base)} 次的平均比，误差 ±{num(one, 3)}"
    return text


def noise_note(data):
    """The health check and noise at each step a run was read at, latest first."""
    steps = sorted({v["steps_trained"] for v in data["variants"].values()}, reverse=True)
    return "；".join(health_text(reading(data, s), s) for s in steps)


def view(params):
    data = params["data"]
    if data is None:
        raise ValueError("skip-mechanism needs data=facts.residual.mechanism")
    table = rows(data)
    stopped = [r for r in table if r["stopped"]]
    elsewhere = [r for r in table if r["elsewhere"]]
    return {
        "rows": table, "noise": noise_note(data),
        "seed": data["variants"]["baseline"]["seed"], "base_runs": len(data["baseline_runs"]),
        "stopped_note": ("* 只训练了学习率日程的前段：" + "；".join(
            "、".join(n for n in names) + f" {num(step)} 步" for step, names in _stops(data)) + "；「比基线」是和基线在同一步比")
                        if stopped else "",
        "elsewhere_note": "；".join(elsewhere_note(data, r) for r in elsewhere),
        "summary": "我们模型的残差对照：" + "；".join(f"{r['label']}，第 0 步认出当前 token {r['init_top1']}，验证集损失 {r['val']}"
                                          for r in table),
    }


def example(facts):
    """The gallery's params; None before lab/ exports the mechanism runs."""
    r = facts.get("residual")
    if not r or not r.get("mechanism"):
        return None
    return {"data": r["mechanism"]}
