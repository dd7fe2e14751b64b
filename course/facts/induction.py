"""Facts of the induction lesson (C3 第 3 课): the synthetic copy task (data/real-model/induction/copy-task.json,
`python -m lab copytask`): facts.copy_task, or None before its first export. The widget copy-task takes its data.

Per arm (attn_only_2l, attn_only_1l, smeared_1l), over its seeds: the copy loss at the start and the end (range
over seeds), the first evaluation step where a seed's copy loss is below half of ln(vocab) (the cliff; None where
none), and the best previous-token and prefix-matching shares at the end (range over seeds).
"""

KEY = "real-model/induction/copy-task"


def arm_facts(runs, uniform):
    ends = [r["points"][-1] for r in runs]
    cliffs = [next((p["step"] for p in r["points"] if p["copy_loss"] < uniform / 2), None) for r in runs]
    return {"seeds": [r["seed"] for r in runs],
            "start": max(r["points"][0]["copy_loss"] for r in runs),
            "end_lo": min(p["copy_loss"] for p in ends), "end_hi": max(p["copy_loss"] for p in ends),
            "cliff": cliffs, "cliff_lo": min((c for c in cliffs if c is not None), default=None),
            "cliff_hi": max(cliffs) if None not in cliffs else None,
            "prefix_lo": min(p["prefix_matching"]["share"] for p in ends),
            "prefix_hi": max(p["prefix_matching"]["share"] for p in ends),
            "previous_lo": min(p["previous"]["share"] for p in ends),
            "previous_hi": max(p["previous"]["share"] for p in ends),
            "steps": runs[0]["points"][-1]["step"]}


def copy_task_facts(doc):
    uniform = doc["task"]["uniform_loss"]
    arms = {}
    for r in doc["runs"]:
        arms.setdefault(r["variant"], []).append(r)
    return {"data": doc, "task": doc["task"], "uniform": uniform,
            "arms": {v: arm_facts(runs, uniform) for v, runs in arms.items()}}


def facts(data):
    return {"copy_task": copy_task_facts(data[KEY]) if KEY in data else None}
