"""skip-mechanism: what a skip connection does in our model, one change at a time (lab's
`python -m lab mechanism`, data: facts.residual.mechanism). A table of the runs (what each
changes, whether it can name the current token at step 0, its validation loss after training,
how alike its positions' vectors end up) and the sentences that read it, each chosen by the
numbers against the noise floor (the baseline's seed range). Static: nothing runs in the browser.

Standard library only, in the subset every runtime runs (no {**a}, no random).
"""
from numfmt import num

PARAMS = {"data": None, "floor": None}
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


def rows(data):
    """One row per run, in the export's order. A run stopped early (*) is compared with the
    baseline at its last step; the no-skip model is the earlier experiment's run (†): its loss
    from there, its step-0 probe from this export, no end-of-training probe."""
    out = []
    for name in data["order"]:
        v = data["variants"][name]
        mark = "*" if v["stopped_early"] else ("†" if v["elsewhere"] else "")
        if name == "baseline":
            delta = "—"
        else:
            x, b, step = pair(data, name, "baseline")
            delta = "—" if b is None else _signed(x - b)
        out.append({"name": name, "label": label(name) + mark, "init_top1": pct(v["init"]["current_token_top1"]),
                    "step": num(v["steps_trained"]), "val": num(v["val_loss"], 3), "delta": delta,
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


def _compare(x, y, floor):
    """'close', 'better' (x lower) or 'worse', judged against the noise floor."""
    if abs(x - y) <= floor:
        return "close"
    return "better" if x < y else "worse"


def loss_at(v, step):
    """A run's validation loss at one of its evaluations (None if it has none there)."""
    for h in v["history"]:
        if h["step"] == step:
            return h["val_loss"]
    return None


def pair(data, name, ref):
    """(the run's loss, ref's loss, the step): at the run's last step, where ref is read too, so
    a run stopped early on the full schedule is compared with ref at the same point."""
    v, r = data["variants"][name], data["variants"][ref]
    step = v["steps_trained"]
    return v["val_loss"], loss_at(r, step), step


def _at(step, data):
    """'' for a full run; '（第 600 步）' for a comparison made at an earlier step."""
    return "" if step == data["card"]["training"]["steps"] else f"（都在第 {num(step)} 步）"


def gradient_path(data, floor):
    """The detached skip: the value kept, the gradient's direct path cut. 'As bad as no skips'
    only when it sits on the unigram or within the floor of the no-skip run."""
    d, b, step = pair(data, "detached_skip", "baseline")
    n = loss_at(data["variants"]["no_residual"], step)
    uni = data["references"]["unigram"]
    g = data["gradients"]
    g0 = [m["blocks"][0]["param_grad_norm"] for m in (g["detached_skip"], g["baseline"])]
    gap = d - b
    text = (f"残差只传值、不传梯度（相加之前把输入从求导中摘掉：前向的值一点不变，反向时梯度只能穿过每一层回去）："
            f"验证集损失 {num(d, 3)}，基线 {num(b, 3)}{_at(step, data)}，")
    how = _compare(d, b, floor)
    if how == "close":
        return text + (f"只差 {num(abs(gap), 3)}，在噪声底线 {num(floor, 3)} 以内。"
                       "在我们这个深度上，那条梯度的捷径不是模型训得动的原因。")
    if how == "better":
        return text + f"还低 {num(-gap, 3)}。"
    text += f"差了 {num(gap, 3)}"
    if abs(d - uni) <= floor or abs(d - n) <= floor:
        text += (f"，和去掉全部残差的模型（{num(n, 3)}）一样停在 unigram 附近。前向的值一点没少，训练却同样失败：")
    else:
        text += f"，是「去掉全部残差」那段差距（{num(n - b, 3)}）的 {pct(gap / (n - b))}："
    if g0[0] < g0[1] / 10:
        text += (f"第 0 步，它第 1 块的参数收到的梯度只有基线的 {num(g0[0] / g0[1], 4)}：梯度只能穿过后面的每个子层回来，"
                 "这些子层写回流上的矩阵又初始化得很小。这个梯度不但小，还少了捷径那一项，方向也不同；"
                 "这次对照分不开是哪一点让它训不动，但它说明：在我们的模型里，梯度的那条捷径也是必需的。")
    else:
        text += "梯度的捷径也起了作用。"
    return text


def identity_path(data, floor):
    """No per-block skips, the embedding added once at the end: is identity what was missing?"""
    e, b, step = pair(data, "embed_readd", "baseline")
    n = loss_at(data["variants"]["no_residual"], step)
    uni = data["references"]["unigram"]
    left = uni - e
    text = f"不给任何一块留残差，只在最后把词嵌入加回一次：验证集损失 {num(e, 3)}{_at(step, data)}，"
    if left > floor:
        text += f"离开了 unigram（{num(uni, 3)}）{num(left, 3)}"
        text += f"，收回了「去掉全部残差」那段差距的约 {num(100 * (n - e) / (n - b), 0)}%（那次训练来自上一组）。"
        ev = data["variants"]["embed_readd"]["end"]
        if ev and ev["cosine_by_depth"][-1] > 0.95:
            text += (f"各块的输出仍然每个位置几乎一样（最后一块之后余弦 {num(ev['cosine_by_depth'][-1], 2)}）：它用上了当前 token，"
                     "却没用上前文")
            bigram = data["references"]["bigram"]
            text += f"，所以还不如只看前一个 token 的 bigram（{num(bigram, 3)}）。" if e > bigram else "。"
        else:
            text += "各块之间仍然没有捷径，梯度仍要穿过每一层。"
    elif abs(left) <= floor:
        text += f"仍停在 unigram（{num(uni, 3)}）附近：只把身份在最后还回去，不够。"
    else:
        text += f"比 unigram（{num(uni, 3)}）还差。"
    return text


def sublayer_paths(data, floor):
    """Which sub-layer's skip matters: attention's (the one that mixes positions) or the FFN's?
    Both runs are read at the same step (the shorter one's), beside the baseline there."""
    uni = data["references"]["unigram"]
    step = min(data["variants"][k]["steps_trained"] for k in ("attn_skip_only", "ffn_skip_only"))
    b = loss_at(data["variants"]["baseline"], step)
    def where(name):
        x = loss_at(data["variants"][name], step)
        if _compare(x, b, floor) == "close":
            return x, f"{num(x, 3)}，和基线（{num(b, 3)}）相差在噪声底线以内"
        if abs(uni - x) <= floor:
            return x, f"{num(x, 3)}，停在 unigram 附近（基线此时 {num(b, 3)}）"
        if x < b:
            return x, f"{num(x, 3)}，比基线（{num(b, 3)}）还低 {num(b - x, 3)}"
        return x, f"{num(x, 3)}，比基线（{num(b, 3)}）高 {num(x - b, 3)}"
    a, a_text = where("attn_skip_only")
    f, f_text = where("ffn_skip_only")
    text = f"只给注意力留残差：{a_text}；只给 FFN 留残差：{f_text}{_at(step, data)}。"
    fv = data["variants"]["ffn_skip_only"]
    if fv["steps_trained"] == step and fv["end"]["modal_top1_share"] > 0.5:
        text += (f"后者在 {pct(fv['end']['modal_top1_share'])} 的位置上给出同一个首选预测，"
                 f"各位置最终向量两两的余弦是 {num(fv['end']['cosine_final'], 2)}。")
    if a < f - floor:
        text += ("要紧的是注意力外面那条，和 Dong 等人的预测一致：注意力是把各位置混在一起的那一层，没有残差，"
                 "各位置就挤成同一个向量。")
    elif f < a - floor:
        text += "这次是 FFN 外面那条更要紧。"
    else:
        text += "两条单独留下，效果差不多。"
    return text


def init_control(data, floor):
    """The no-skip model with every output projection at 0.02, against the no-skip run (the
    residual experiment's, bf16) at the same step."""
    i, n = data["variants"]["no_residual_init02"], data["variants"]["no_residual"]
    uni = data["references"]["unigram"]
    step = i["steps_trained"]
    at = loss_at(n, step)
    text = (f"去掉残差、把写回矩阵的初始标准差从 {num(data['card']['architecture']['residual_init_std'], 5)} 放大到 0.02："
            f"第 0 步预测等于当前 token 的比例是 {pct(i['init']['current_token_top1'])}")
    if at is None:
        return text + f"，训练 {num(step)} 步后验证集损失 {num(i['val_loss'], 3)}。"
    text += (f"，训练到第 {num(step)} 步验证集损失 {num(i['val_loss'], 3)}，原来的初始化在同一步是 {num(at, 3)}"
             "（那次训练来自上一组，精度不同；两者都在 unigram 附近时，这点差别不影响结论）"
             if abs(at - uni) <= floor else
             f"，训练到第 {num(step)} 步验证集损失 {num(i['val_loss'], 3)}，原来的初始化在同一步是 {num(at, 3)}")
    if abs(i["val_loss"] - at) <= floor:
        return text + ("：没有帮上忙。在这套 Pre-Norm 设置里，放大写回矩阵几乎不改变前向（下一次归一化把尺度抹掉了），"
                       "改变的主要是每一步的有效步长；至少在这一个取值、这 400 步里，小初始化不是它卡住的原因。"
                       if step == 400 else "：没有帮上忙，小初始化不是它卡住的原因。")
    if i["val_loss"] < at and uni - i["val_loss"] > floor:
        return text + "：它离开了 unigram，在这套设置下，初始化确实是原因之一。"
    return text + ("：放大初始化让它好了一些。" if i["val_loss"] < at else "：放大初始化让它更差。")


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


def verdicts(data, floor):
    """What the runs settle, as yes/no, for the lesson's prose to choose its sentences by:
    identity_lost_at_init: without skips the token cannot be read at step 0;
    gradient_path_needed: cutting the skip's gradient (value kept) leaves the model near the unigram;
    identity_at_output_helps: giving the embedding back once at the end leaves the unigram."""
    uni = data["references"]["unigram"]
    n = data["variants"]["no_residual"]["init"]
    d, b, _ = pair(data, "detached_skip", "baseline")
    e = data["variants"]["embed_readd"]["val_loss"]
    return {"identity_lost_at_init": n["current_token_top1"] < 0.05,
            "gradient_path_needed": abs(d - uni) <= floor or d - b > 0.5 * (uni - b),
            "identity_at_output_helps": uni - e > floor}


def elsewhere_note(data, row):
    """The † row's footnote: its loss comes from the earlier export (bf16), so its gap crosses precisions."""
    text = f"† {row['label'][:-1]}：上一组实验里那次训练的损失（精度 bf16），第 0 步的探针在这里补量，没有训练结束时的探针（—）"
    gap = data.get("precision_gap")
    if gap is not None:
        text += f"；它的「比基线」跨了精度（两种精度下基线种子 0 相差 {num(abs(gap), 3)}）"
    return text


def view(params):
    data, floor = params["data"], params["floor"]
    if data is None or floor is None:
        raise ValueError("skip-mechanism needs data=facts.residual.mechanism and floor=the baseline's seed range")
    stopped = [r for r in rows(data) if r["stopped"]]
    elsewhere = [r for r in rows(data) if r["elsewhere"]]
    return {
        "rows": rows(data), "floor": num(floor, 3),
        "stopped_note": ("* 只训练了学习率日程的前段：" + "；".join(
            "、".join(n for n in names) + f" {num(step)} 步" for step, names in _stops(data)) + "；「比基线」是和基线在同一步比")
                        if stopped else "",
        "elsewhere_note": "；".join(elsewhere_note(data, r) for r in elsewhere),
        "summary": "我们模型的残差对照：" + "；".join(f"{r['label']}，第 0 步认出当前 token {r['init_top1']}，验证集损失 {r['val']}"
                                          for r in rows(data)),
    }


def example(facts):
    """The gallery's params; None before lab/ exports the mechanism runs."""
    r = facts.get("residual")
    if not r or not r.get("mechanism"):
        return None
    return {"data": r["mechanism"], "floor": r["band"]["range"]}
