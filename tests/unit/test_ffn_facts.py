"""facts.ffn (course/facts/ffn.py): the FFN experiment read by seeds protocol v2 over all four arms
at one step and loss, failed runs found by the health check (not by their seed number), later
baseline seeds joining every reading, the lesson's post-hoc primary comparisons under Holm, and the
readings the page composes from them (split, fit, the run over time)."""
import copy

import pytest

from course.facts import ffn

STEPS = (100, 200, 300, 400)
# t(0.975, df), printed to 4 decimals: an independent table, not seeds.t_quantile
T975 = {1: 12.7062, 2: 4.3027, 3: 3.1824, 4: 2.7764, 5: 2.5706, 6: 2.4469, 7: 2.3646, 8: 2.3060, 9: 2.2622,
        10: 2.2281, 11: 2.2010, 12: 2.1788, 13: 2.1604, 14: 2.1448}


def run(val, train, falls=0.1):
    """One run's history: validation loss falls by `falls` per evaluation to `val`; training loss
    stays `val - train` under it."""
    n = len(STEPS)
    return [{"step": s, "tokens": 10 * s, "epochs": s / 250, "val_loss": val + (n - 1 - i) * falls,
             "train_loss": train + (n - 1 - i) * falls} for i, s in enumerate(STEPS)]


def arm(name, n_layer, params, vals, trains=None, seeds=None):
    trains = trains or [x - 0.2 for x in vals]
    seeds = seeds if seeds is not None else list(range(len(vals)))
    return {"name": name, "description": "", "n_layer": n_layer, "params": params, "seeds": seeds,
            "val_losses": list(vals), "train_losses": list(trains),
            "histories": [run(v, t) for v, t in zip(vals, trains)]}


def data(base=(4.84, 4.85, 4.86, 4.845, 5.20), linear=(5.05, 5.06, 5.07), no_ffn=(5.50, 5.52, 5.51),
         attn=(5.70,), extra=None):
    doc = {"variants": [arm("baseline", 4, 3688704, base), arm("linear_ffn", 4, 3688704, linear),
                        arm("no_ffn", 4, 1574144, no_ffn), arm("attn_only_12l", 12, 3673344, attn)],
           "references": {"unigram": 6.99, "bigram": 5.51}, "metric": "nats", "tokens_per_run": 4000}
    out = {"real-model/ablation": doc,
           "real-model/model-card": {"split": {"train_tokens": 3000}, "training": {"epochs": 1.6}}}
    if extra:
        out["real-model/baseline-seeds"] = {"seed_runs": [
            {"seed": s, "val_loss": v, "train_loss": v - 0.2, "history": run(v, v - 0.2)} for s, v in extra]}
    return out


def median(xs):
    xs = sorted(xs)
    return (xs[len(xs) // 2] + xs[(len(xs) - 1) // 2]) / 2


def v2(arms):
    """The protocol written out again (AUTHORING.md): arms {name: {seed: loss}}."""
    res = [x - median(a.values()) for a in arms.values() if len(a) >= 3 for x in a.values()]
    T = max(6 * 1.4826 * median([abs(r) for r in res]), 0.1)
    failed = {n: {s: x for s, x in a.items() if x - median(a.values()) > T} for n, a in arms.items()}
    healthy = {n: {s: x for s, x in a.items() if s not in failed[n]} for n, a in arms.items()}
    groups = [list(a.values()) for a in healthy.values() if len(a) > 1]
    ss = sum(sum((x - sum(g) / len(g)) ** 2 for x in g) for g in groups)
    df = sum(len(g) - 1 for g in groups)
    return {"failed": failed, "healthy": healthy, "T": T, "s": (ss / df) ** 0.5, "df": df}


def gap_h(r, a, b):
    A, B = list(r["healthy"][a].values()), list(r["healthy"][b].values())
    gap = sum(A) / len(A) - sum(B) / len(B)
    return gap, T975[r["df"]] * r["s"] * (1 / len(A) + 1 / len(B)) ** 0.5


def arms_at(d, step, key):
    out = {}
    for v in d["real-model/ablation"]["variants"]:
        out[v["name"]] = {s: next(e[key] for e in h if e["step"] == step) for s, h in zip(v["seeds"], v["histories"])}
    for r in (d.get("real-model/baseline-seeds") or {}).get("seed_runs", []):
        out["baseline"][r["seed"]] = next(e[key] for e in r["history"] if e["step"] == step)
    return out


@pytest.mark.parametrize("key", ["val_loss", "train_loss"])
def test_every_pair_is_read_by_v2_over_all_four_arms(key):
    d = data()
    F = ffn.facts(d)["ffn"]
    r = v2(arms_at(d, STEPS[-1], key))
    assert F["end"][key]["threshold"] == pytest.approx(r["T"]) and F["end"][key]["df"] == r["df"]
    for a, b in ffn.PAIRS:
        c = F["end"][key]["pairs"][f"{a}-{b}"]
        gap, h = gap_h(r, a, b)
        assert c["gap"] == pytest.approx(gap) and c["half_width"] == pytest.approx(h, rel=1e-4)
        n = min(len(r["healthy"][a]), len(r["healthy"][b]))
        status = "within" if abs(gap) <= h else "measured" if n > 1 else "one_seed"
        assert c["status"] == status
        shown = f"{'高' if gap > 0 else '低'} {abs(gap):.3f} ± {h:.3f}"
        assert c["say"].startswith(shown)
    assert F["end"][key]["pairs"]["attn_only_12l-baseline"]["say"].endswith("：一个种子，待第二个种子确认")


def test_a_failed_run_is_found_by_the_health_check_whatever_its_seed():
    """Seed 2 trails from step 200 on and ends 0.35 above the rest; seed 4 is healthy."""
    d = data(base=(4.84, 4.85, 5.20, 4.845, 4.86))
    h = d["real-model/ablation"]["variants"][0]["histories"][2]
    h[0]["val_loss"] = 5.17  # step 100: the others are at 5.14-5.16, so it is not yet failed
    F = ffn.facts(d)["ffn"]
    assert [(f["arm"], f["seed"], f["loss"]) for f in F["failed"]] == [("baseline", 2, 5.20)]
    f = F["failed"][0]
    assert f["median"] == pytest.approx(4.85) and f["train_failed"] and f["train_loss"] == pytest.approx(5.0)
    co = f["course"]
    assert co["since"] == 200 and co["before"] == 100 and co["flagged"] == [200, 300, 400]
    assert co["held_min"] == pytest.approx(0.35) and co["held_max"] == pytest.approx(0.35)
    assert F["arms"]["baseline"]["failed"] == 1 and F["controls_failed"] == 0 and F["controls_trained"] == 7
    assert F["arms"]["baseline"]["mean"]["val_loss"] == pytest.approx((4.84 + 4.85 + 4.845 + 4.86) / 4)
    assert F["val"]["linear_ffn-baseline"]["n_b"] == 4
    assert ffn.facts(data(base=(4.84, 4.85, 4.86, 4.845, 4.855)))["ffn"]["failed"] == []


def test_later_baseline_seeds_join_every_reading():
    d = data(extra=[(5, 4.852), (6, 4.848), (7, 4.858)])
    F = ffn.facts(d)["ffn"]
    assert F["arms"]["baseline"]["trained"] == 8 and F["arms"]["baseline"]["seeds"] == list(range(8))
    c = F["val"]["linear_ffn-baseline"]
    assert (c["n_a"], c["n_b"]) == (3, 7)  # seed 4 (5.20) still fails
    assert c["say"].endswith("（3、7 个种子）：测到")
    r = v2(arms_at(d, STEPS[-1], "val_loss"))
    assert c["half_width"] == pytest.approx(gap_h(r, "linear_ffn", "baseline")[1], rel=1e-4)


def test_the_primary_comparisons_are_read_through_holm():
    F = ffn.facts(data())["ffn"]
    assert [(c["a"], c["b"]) for c in F["primary"]] == [("linear_ffn", "baseline"), ("no_ffn", "baseline")]
    assert all(c["holm"] and c["measured"] for c in F["primary"]) and F["primary_all"]
    # Both gaps just past their 95 % half-width but short of Holm's 97.5 % for the smaller p: neither survives.
    base = (4.84, 4.85, 4.86, 4.845, 5.20)
    plain = ffn.facts(data(base=base))["ffn"]["end"]["val_loss"]
    sd, df = plain["sd"], plain["df"]
    se = sd * (1 / 3 + 1 / 4) ** 0.5
    t95, t975 = ffn.seeds.t_quantile(df), ffn.seeds.t_quantile(df, 0.975)
    gap = (t95 + t975) / 2 * se
    m = (4.84 + 4.85 + 4.86 + 4.845) / 4
    near = data(base=base, linear=tuple(m + gap + x for x in (-0.01, 0, 0.01)),
                no_ffn=tuple(m + gap + x for x in (-0.01, 0, 0.01)))
    F = ffn.facts(near)["ffn"]
    for c in F["primary"]:
        assert F["val"][f"{c['a']}-{c['b']}"]["measured"]  # read alone, measured
        assert not c["measured"] and c["status"] == "holm" and "Holm" in c["say"]
    assert not F["primary_all"]


def test_the_split_adds_up_and_reads_each_part():
    F = ffn.facts(data())["ffn"]
    for key in ffn.KEYS:
        s = F["split"][key]
        assert s["recovered"]["gap"] + s["rest"]["gap"] == pytest.approx(s["total"]["gap"])
        assert s["recovered_share"] + s["rest_share"] == pytest.approx(1.0)
        assert s["ffn_helps"] and s["linear_helps"] and s["rest_measured"] and not s["linear_better"]
    better = ffn.facts(data(linear=(4.60, 4.61, 4.62)))["ffn"]["split"]["val_loss"]
    assert better["linear_better"] and not better["rest_measured"]
    level = ffn.facts(data(linear=(4.85, 4.84, 4.855)))["ffn"]["split"]["val_loss"]
    assert level["rest"]["status"] == "within" and not level["rest_measured"] and not level["linear_better"]


def test_the_fit_reads_the_healthy_baseline_runs():
    F = ffn.facts(data())["ffn"]
    fi = F["fit"]
    assert fi["seeds"] == [0, 1, 2, 3]  # seed 4 failed on both losses
    assert fi["val"] == pytest.approx((4.84 + 4.85 + 4.86 + 4.845) / 4) and fi["gap"] == pytest.approx(0.2)
    assert fi["every_seed_fell"] and fi["fall_from"] - fi["fall_to"] == pytest.approx(0.1) and fi["fall_tokens"] == 1000
    assert [c["name"] for c in fi["controls"]] == ["线性 FFN", "去掉 FFN", "纯注意力 12 层"]
    assert all(c["gap"] == pytest.approx(0.2) for c in fi["controls"]) and not fi["controls_smaller"]


def test_the_curve_reads_every_step_and_says_when_it_held():
    d = data()
    lin = d["real-model/ablation"]["variants"][1]
    for h in lin["histories"]:
        h[0]["val_loss"] -= 0.6  # the linear FFN ahead at step 100
    F = ffn.facts(d)["ffn"]
    cv = F["curve"]
    assert [r["step"] for r in cv["rows"]] == list(STEPS)
    assert cv["rows"][0]["c"]["direction"] == -1 and cv["steady_from"] == 200
    assert [r["step"] for r in cv["before"]] == [100] and [r["step"] for r in cv["held"]] == [200, 300, 400]
    assert not cv["widening"]  # the same gap at every later step
    assert cv["other_failed"] == []


def test_a_run_failed_at_one_earlier_step_only_is_listed_apart():
    d = data()
    d["real-model/ablation"]["variants"][0]["histories"][1][1]["val_loss"] += 0.3  # seed 1 at step 200
    cv = ffn.facts(d)["ffn"]["curve"]
    assert [(f["step"], f["arm"], f["seed"]) for f in cv["other_failed"]] == [(200, "baseline", 1)]


def test_the_failed_run_is_set_beside_the_content_blind_control_when_that_export_exists():
    d = data()
    ctl = copy.deepcopy(arm("prefix_mean", 4, 3689728, (5.19, 5.21, 5.20)))
    d["real-model/attention/attention"] = {"control": {"control": ctl, "baseline": {}}}
    f = ffn.facts(d)["ffn"]["failed"][0]
    assert f["control"] == {"min": 5.19, "max": 5.21, "seeds": 3, "level": True}
    assert ffn.facts(data())["ffn"]["failed"][0]["control"] is None


def test_lead_spaces_a_name_before_chinese_only_after_latin():
    assert ffn.lead("线性 FFN") == "线性 FFN " and ffn.lead("纯注意力 12 层") == "纯注意力 12 层" and ffn.lead("基线") == "基线"


def test_no_export_no_facts():
    assert ffn.facts({}) == {"ffn": None}
