"""Paper tables (data/papers.json), each row with its source."""
import numpy as np


def paper_facts(papers):
    vaswani = papers["vaswani2017"]
    shazeer = {row["row"]: row["log_ppl"] for row in papers["shazeer2020"]["rows"]}
    qiu = {row["row"]: row["first_token_share"] for row in papers["qiu2025"]["rows"]}
    widths = np.array([row["d_ff"] for row in vaswani["rows"]])
    return {
        "vaswani": {"d_model": vaswani["d_model"], "rows": vaswani["rows"],
                    "ratios": (widths / vaswani["d_model"]).tolist(),
                    "base": next(r for r in vaswani["rows"] if r["row"] == "base"),
                    "table": vaswani["table"], "paper": vaswani["paper"]},
        "shazeer": shazeer_facts(papers["shazeer2020"]),
        "qiu": {"baseline": qiu["baseline"], "gated": next(v for k, v in qiu.items() if k != "baseline"),
                "model": papers["qiu2025"]["model"]},
        "resnet": resnet_facts(papers["he2015"]),
        "xiong": warmup_facts(papers["xiong2020"]),
        "rmsnorm": {**papers["zhang2019"]["rows"][0], "paper": papers["zhang2019"]["paper"]},
        "tfixup": {**papers["huang2020"]["rows"][0], "paper": papers["huang2020"]["paper"]},
        "deepnet": {**papers["wang2022"]["rows"][0], "paper": papers["wang2022"]["paper"]},
        "llama_warmup": {**papers["touvron2023"]["rows"][0], "paper": papers["touvron2023"]["paper"]},
        # C4 第 3 课's later work on warm-up and placement (rows with the sentences checked)
        "untuned_warmup": {**papers["ma2021"]["rows"][0], "paper": papers["ma2021"]["paper"]},
        "kosson": {**papers["kosson2024"]["rows"][0], "paper": papers["kosson2024"]["paper"]},
        "noci": {**papers["noci2022"]["rows"][0], "paper": papers["noci2022"]["paper"]},
        "periln": {**papers["kim2025"]["rows"][0], "paper": papers["kim2025"]["paper"],
                   "models": [r["model"] for r in papers["gemma2024"]["rows"] if r["norm_place"] == "peri"]},
        "olmo2": {**papers["olmo2024"]["rows"][0], "paper": papers["olmo2024"]["paper"],
                  "credit": next(r for r in papers["olmo2024"]["rows"] if "quote" in r)},
        "heads": heads_facts(papers["vaswani2017_heads"]),
        "olsson": olsson_facts(papers["olsson2022"]),
        "llama3_rope": {**papers["llama3_2024_rope"]["rows"][0], "paper": papers["llama3_2024_rope"]["paper"]},
    }


def olsson_facts(paper):
    """Olsson et al. 2022's rows (C3 第 3 课), by what each says."""
    rows = {r["row"].split(":")[0]: r for r in paper["rows"]}
    return {"paper": paper["paper"], "icl": rows["Key Concepts"], "phase": rows["Argument 1"],
            "smear": rows["Argument 2"], "ablation": rows["Argument 3"], "size": rows["Introduction"]}


def heads_facts(paper):
    """Vaswani's Table 3 rows (A) and (E) (C3 第 2 课): perplexity per word-piece by head count at equal
    computation, and learned positions against sinusoids. `nats`: ln(ppl / base ppl) per row, the
    gap in the units of our own losses."""
    rows = paper["rows"]
    base = next(r for r in rows if r["row"] == "base")
    by_h = {r["h"]: r for r in rows if r["positions"] == "sinusoid"}
    learned = next(r for r in rows if r["positions"] == "learned")
    return {"base": base, "by_h": [by_h[h] for h in sorted(by_h)], "learned": learned,
            "nats": {h: float(np.log(r["ppl_dev"] / base["ppl_dev"])) for h, r in by_h.items()},
            "learned_nats": float(np.log(learned["ppl_dev"] / base["ppl_dev"])),
            "d_model": paper["d_model"], "paper": paper["paper"], "table": paper["table"]}


def shazeer_facts(paper):
    """Shazeer's Table 1 (T5-base pre-trained on C4's span-filling task; heldout log-perplexity):
    at 65,536 steps every FFN's value and its std over 4 runs, by short name (relu, gelu, swish,
    glu, bilinear, geglu, swiglu, reglu), best first in `ranked`; at 524,288 steps (one run each)
    the same under `long`, with `long_ranked`. `pairs` and `pairs_long`: what adding a gate gains
    with the same activation (ReLU -> ReGLU, GELU -> GEGLU, Swish -> SwiGLU); `ungated_spread`
    and `gated_spread` (ReGLU, GEGLU, SwiGLU): how much swapping the activation moves it.
    `glue` and `superglue`: the fine-tuned models' average dev scores (Tables 2 and 3), each the best
    checkpoint of one fine-tune; `finetune_gains`: what the gate adds to each activation there, and
    `gated_above`: whether every gated score (GLU and Bilinear too) beats every ungated one."""
    rows = {row["row"].removeprefix("FFN_").lower(): row for row in paper["rows"]}
    by = {k: r["log_ppl"] for k, r in rows.items()}
    long = {k: r["log_ppl_524k"] for k, r in rows.items()}
    ungated, gated = ("relu", "gelu", "swish"), ("reglu", "geglu", "swiglu")

    def spread(table, keys):
        return max(table[k] for k in keys) - min(table[k] for k in keys)

    def pairs(table):
        return {a: table[a] - table[g] for a, g in zip(ungated, gated)}

    return {**by, "std": {k: r.get("std") for k, r in rows.items()},
            "ranked": sorted(by, key=by.get), "largest_std": max(r.get("std") or 0 for r in rows.values()),
            "smallest_std": min(r["std"] for r in rows.values() if r.get("std")),
            "long": long, "long_ranked": sorted(long, key=long.get), "steps_long": paper["steps_long"],
            "pairs": pairs(by), "pairs_long": pairs(long),
            "ungated_spread": spread(by, ungated), "ungated_spread_long": spread(long, ungated),
            "gated_spread": spread(by, gated), "gated_spread_long": spread(long, gated),
            "glue": {k: r["glue_score"] for k, r in rows.items()},
            "superglue": {k: r["superglue_score"] for k, r in rows.items()},
            "finetune_std": {"glue": paper["finetune_std"]["glue"], "superglue": paper["finetune_std"]["superglue"]},
            "finetune_gains": {t: [rows[g][f"{t}_score"] - rows[a][f"{t}_score"] for a, g in zip(ungated, gated)]
                               for t in ("glue", "superglue")},
            "gated_above": {t: min(r[f"{t}_score"] for k, r in rows.items() if k not in ungated)
                            > max(rows[k][f"{t}_score"] for k in ungated) for t in ("glue", "superglue")},
            "widths": paper["widths"], "steps": paper["steps"], "model": paper["model"], "table": paper["table"],
            "paper": paper["paper"]}


def warmup_facts(xiong):
    """Post-LN with and without the warm-up stage (Xiong et al. 2020, §3.2)."""
    rows = {row["warmup"]: row for row in xiong["rows"] if "warmup_steps" not in row}
    short = {row["lr_max"]: {"warmup_steps": row["warmup_steps"], "bleu": row["bleu"]}
             for row in xiong["rows"] if "warmup_steps" in row}  # the same Post-LN with a shorter warm-up
    return {"without": rows[False]["bleu"], "with": rows[True]["bleu"], "short_warmup": short,
            "table": xiong["table"], "paper": xiong["paper"]}


def resnet_facts(he):
    """Plain vs residual networks of the same size: deeper plain is worse, deeper residual is better."""
    shallow, deep = sorted(he["rows"], key=lambda r: r["layers"])
    return {"shallow": shallow, "deep": deep, "table": he["table"], "paper": he["paper"],
            "plain_deeper_worse_by": deep["plain"] - shallow["plain"],
            "resnet_deeper_better_by": shallow["resnet"] - deep["resnet"],
            "resnet_vs_plain_deep": deep["plain"] - deep["resnet"]}


def facts(data):
    return {"papers": paper_facts(data["papers"])}
