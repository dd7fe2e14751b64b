"""Facts and sentences about our own model, derived from data/real-model/ (lab/'s export).

Every comparison the lesson prints is computed here, so a retrained model can
never leave a false sentence behind: `ablation_sentences` says what the numbers
show, whichever way they fall.
"""
import math

VARIANT_LABELS = {
    "baseline": "基线（{n} 层，注意力 + FFN）",
    "no_ffn": "去掉 FFN（{n} 层，只剩注意力）",
    "attn_only_12l": "纯注意力 {n} 层（参数对齐）",
}


def _fmt(x, digits=3):
    from numfmt import num  # widgets/common/numfmt.py, the one number formatter
    return num(x, digits)


def real_model_facts(card, ablation):
    """Numbers the lesson quotes about our model, with the comparisons already made."""
    arch = card["architecture"]
    variants = {v["name"]: v for v in ablation["variants"]}
    base = variants["baseline"]
    base_mean = sum(base["val_losses"]) / len(base["val_losses"])
    floor = ablation["noise_floor"]
    rows = []
    for v in ablation["variants"]:
        mean = sum(v["val_losses"]) / len(v["val_losses"])
        rows.append({
            "name": v["name"],
            "label": VARIANT_LABELS.get(v["name"], v["name"]).format(n=v["n_layer"]),
            "n_layer": v["n_layer"],
            "params": v["params"],
            "val_losses": v["val_losses"],
            "seeds": v["seeds"],
            "mean": mean,
            "gap": mean - base_mean,
            "gap_over_floor": (mean - base_mean) / floor["range"] if floor["range"] > 0 else math.inf,
            "params_vs_base": v["params"] / base["params"] - 1,
        })
    return {
        "name": card["name"],
        "date": card["date"],
        "n_layer": arch["n_layer"],
        "d_model": arch["d_model"],
        "d_ff": arch["d_ff"],
        "n_head": arch["n_head"],
        "vocab_size": arch["vocab_size"],
        "init_std": arch["init_std"],
        "residual_init_std": arch["residual_init_std"],
        # GPT-2's rule: residual-output projections start at init_std / sqrt(2 * n_layer).
        "residual_init_rule": arch["init_std"] / math.sqrt(2 * arch["n_layer"]),
        "tokens_seen": card["training"]["tokens_seen"],
        "steps": card["training"]["steps"],
        "wall_minutes": card["timing"]["wall_seconds"] / 60,
        "references": card["references"],
        "baseline_mean": base_mean,
        "noise_floor": floor,
        "variants": rows,
        "by_name": {r["name"]: r for r in rows},
    }


def ablation_sentences(real):
    """The reading of the ablation chart, in Chinese, decided by the numbers.

    A gap counts as real only when it is larger than the 5-seed noise floor.
    """
    floor = real["noise_floor"]["range"]
    base = real["baseline_mean"]
    out = []
    for row in real["variants"]:
        if row["name"] == "baseline":
            continue
        what = row["label"]
        size = f"{_fmt(row['params'], 0)} 个参数"
        if abs(row["gap"]) <= floor:
            verdict = (f"和基线只差 {_fmt(abs(row['gap']))}，没有超出 5 次重跑的噪声底线 {_fmt(floor)}："
                       f"我们的数据分不出两者的高下")
        elif row["gap"] > 0:
            verdict = (f"验证集损失从基线的 {_fmt(base)} 升到 {_fmt(row['mean'])}，高了 {_fmt(row['gap'])}，"
                       f"是噪声底线 {_fmt(floor)} 的 {_fmt(row['gap_over_floor'], 1)} 倍：确实更差")
        else:
            verdict = (f"验证集损失从基线的 {_fmt(base)} 降到 {_fmt(row['mean'])}，低了 {_fmt(-row['gap'])}，"
                       f"超出噪声底线 {_fmt(floor)}：反而比基线好")
        out.append(f"{what}（{size}）：{verdict}。")
    return out
