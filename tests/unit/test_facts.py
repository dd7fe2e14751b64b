"""Facts derived from data/: pinned to the lesson's numbers and checked against an independent count."""
import independent_params
import pytest
from support import ROOT

from course.data import load_data
from course.facts import build_facts


@pytest.fixture(scope="module")
def facts():
    return build_facts(load_data(ROOT / "data", ROOT))


def test_anchor_ffn_ratio(facts):
    anchor = facts["anchor"]
    assert (anchor["d"], anchor["d_ff"]) == (5120, 17408)
    assert round(anchor["ffn_ratio"], 4) == 3.4


def test_anchor_parameter_count_matches_the_published_checkpoint(facts):
    counts = facts["anchor"]["params"]
    assert counts["checkpoint"] == facts["anchor"]["published_params"] == 27_781_427_952
    assert counts["text"] == 26_895_998_464
    assert (counts["n_linear"], counts["n_full"]) == (48, 16)


def test_anchor_ffn_share_under_the_lessons_convention(facts):
    assert round(100 * facts["anchor"]["ffn_share"], 1) == 61.6
    assert round(100 * facts["anchor"]["ffn_share_text"], 1) == 63.6


def test_counts_agree_with_the_independent_count(facts):
    """tests/unit/independent_params.py lists the checkpoint's tensors by name and shape, apart from course/facts/_params.py."""
    config = load_data(ROOT / "data", ROOT)["anchor-model"]["config"]
    assert independent_params.count(config) == facts["anchor"]["params"]["checkpoint"] == facts["anchor"]["published_params"]
    text = independent_params.count(config, lambda name: not name.startswith(("mtp.", "visual.")))
    assert text == facts["anchor"]["params"]["text"]
    assert independent_params.trunk_ffn_share(config) == facts["anchor"]["ffn_share"]


def test_gpt2_is_four_times_wide(facts):
    assert (facts["gpt2"]["d"], facts["gpt2"]["d_ff"], facts["gpt2"]["ffn_ratio"]) == (768, 3072, 4.0)


def test_the_eight_thirds_rule_and_deepseek_67b(facts):
    ds = facts["deepseek67b"]
    assert (ds["d"], ds["d_ff"]) == (8192, 22016)
    assert round(ds["eight_thirds"]) == 21845 and ds["multiple_of_256"]  # 22,016 = 8d/3 rounded up to 256s


def test_q_proj_carries_the_output_gate(facts):
    anchor = facts["anchor"]
    assert anchor["q_proj_out"] == 12288 == 2 * anchor["q_gate_width"] and anchor["q_gate_width"] == 6144


def test_residual_writes_and_their_growth(facts):
    assert facts["anchor"]["residual_writes"] == 128
    assert round(facts["anchor"]["residual_std"], 2) == 11.36


def test_silu_is_unbounded(facts):
    assert round(facts["silu10_times10"], 3) == 99.995


def test_paper_figures(facts):
    papers = facts["papers"]
    assert [r["ppl_dev"] for r in papers["vaswani"]["rows"]] == [5.12, 4.92, 4.75]
    assert (papers["shazeer"]["gelu"], papers["shazeer"]["swiglu"]) == (1.983, 1.944)
    assert (papers["qiu"]["baseline"], papers["qiu"]["gated"]) == (0.467, 0.048)


def test_our_models_residual_init_follows_the_rule():
    """0.02 / sqrt(2 x 4) = 0.00707, from lab's model card (the fixture until the real export lands)."""
    import json
    from course.facts.real_model import real_model_facts
    fixture = ROOT / "tests" / "fixtures" / "real-model"
    files = {n: json.loads((fixture / f"{n}.json").read_text(encoding="utf-8")) for n in ("model-card", "ablation", "neurons")}
    real = real_model_facts(files["model-card"], files["ablation"], files["neurons"])
    assert round(real["residual_init_std"], 5) == 0.00707
    assert real["card"]["architecture"]["residual_init_rule"] == "init_std / sqrt(2 * n_layer)"


def test_resnet_table_agrees_with_the_papers_own_sentences(facts):
    """He et al. 2015 write that ResNet-34 beats ResNet-18 by 2.8% and plain-34 by 3.5% (top-1)."""
    r = facts["papers"]["resnet"]
    assert round(r["resnet_deeper_better_by"], 1) == 2.8 or round(r["resnet_deeper_better_by"], 2) == 2.85
    assert round(r["resnet_vs_plain_deep"], 1) == 3.5
    assert r["plain_deeper_worse_by"] > 0  # the degradation: 34 plain layers do worse than 18


def test_fp16_and_bf16_limits(facts):
    """SiLU(x) * x leaves fp16 near sqrt(65,504) = 255.94; bf16 reaches (2 - 2^-7) * 2^127."""
    assert round(facts["fp16"]["sqrt_max"], 2) == 255.94 == round(facts["fp16"]["silu_overflow_x"], 2)
    assert facts["bf16"]["max"] == pytest.approx(3.3895e38, rel=1e-4)
    assert facts["anchor"]["dtype"] == "bfloat16"


def test_our_models_ffn_shapes():
    from course.facts.real_model import ffn_shapes
    s = ffn_shapes(256, 688, 1032)
    assert s["swiglu_per_layer"] == s["linear_per_layer"] == 528_384 and s["linear_map_numbers"] == 65_536
    assert s["plain_4d_per_layer"] == 524_288 and round(100 * s["swiglu_over_plain_4d"], 1) == 0.8
    assert (s["d_ff_multiple"], s["d_ff_units"], s["d_ff_is_nearest_multiple"]) == (16, 43, True)
    assert ffn_shapes(256, 696, 1044)["d_ff_is_nearest_multiple"] is False  # 8 x 87; 680 is nearer 682.7


def test_llama_2_7b_follows_metas_width_rule(facts):
    """meta-llama/llama llama/model.py (689c7f2): int(2 * 4d / 3) = 10,922, rounded up to 256s = 11,008 = the config's."""
    llama = facts["llama2_7b"]
    assert (llama["d"], llama["d_ff"], llama["plain_d_ff"]) == (4096, 11008, 16384)
    assert llama["rule"] == {"multiple_of_dim": 4, "scale_num": 2, "scale_den": 3, "multiple_of": 256}
    assert llama["rule_width"] == llama["d_ff"] == 256 * -(-int(2 * 16384 / 3) // 256)
    assert round(llama["eight_thirds"], 2) == 10922.67 and llama["ffn_ratio"] == 2.6875
    assert (llama["swiglu_weights"], llama["plain_weights"]) == (135_266_304, 134_217_728)


def test_the_clamped_swiglu_forms(facts):
    """gpt-oss: gate <= 7, linear in [-7, 7] plus 1, alpha 1.702; DeepSeek-V4: gate <= 10, up in [-10, 10], plain SiLU."""
    gpt_oss, v4 = facts["clamps"]["forms"]
    assert (gpt_oss["key"], gpt_oss["name"], gpt_oss["limit"], gpt_oss["alpha"], gpt_oss["linear_bias"]) == \
        ("gpt-oss", "gpt-oss-120b", 7.0, 1.702, 1)
    assert (v4["key"], v4["name"], v4["limit"], v4["alpha"], v4["linear_bias"]) == ("deepseek-v4", "DeepSeek-V4", 10.0, 1, 0)
    for form in (gpt_oss, v4):
        assert (form["gate_clamp"], form["linear_clamp"]) == ("max only", "symmetric")
    assert (gpt_oss["limit"], v4["limit"]) == (facts["clamps"]["gpt_oss_limit"], facts["clamps"]["deepseek_v4_limit"])


def test_the_gating_lesson_reads_the_seed_band_of_its_own_corpus():
    """第 4 课's baseline is the FFN experiment's (ablation.json); the build refuses a gating export
    of another corpus rather than read its runs against a foreign baseline."""
    import copy

    from course.facts import gating

    data = load_data(ROOT / "data", ROOT)
    assert gating.corpus_files(data[gating.KEY]["model_card"]["corpus"]) == \
        gating.corpus_files(data[gating.CARD]["corpus"])
    other = copy.deepcopy(data)
    other[gating.KEY]["model_card"]["corpus"] = {"file": "sanguo-yanyi.txt", "sha256": "0" * 64}
    with pytest.raises(ValueError, match="its corpus is not the FFN experiment's"):
        gating.facts(other)


def test_the_gating_lesson_takes_only_seeds_of_its_own_runs():
    """seeds.json adds seeds to gating.json's variants; the build refuses one trained otherwise."""
    import copy

    from course.facts import gating

    data = load_data(ROOT / "data", ROOT)
    first = data[gating.KEY]
    rows = [dict(copy.deepcopy(r), seed=9) for r in first["runs"][1:] if r["steps_trained"] == first["runs"][0]["steps_trained"]]
    extra = {"seed_runs": rows, "model_card": {"corpus": first["model_card"]["corpus"],
                                               "configs": copy.deepcopy(first["model_card"]["configs"]),
                                               "budget": {"new_runs_seconds": 0.0}}}
    data[gating.SEEDS] = extra
    assert len(rows) > 1 and all(9 in gating.facts(data)["gating"]["seeds_of"][r["name"]] for r in rows)
    partial = copy.deepcopy(data)  # one variant's seed 9 alone: the SwiGLU row could not pair with every row
    partial[gating.SEEDS]["seed_runs"] = rows[:1]
    with pytest.raises(ValueError, match="every variant gating.json trained in full needs the same extra seeds"):
        gating.facts(partial)
    bad = copy.deepcopy(data)
    bad[gating.SEEDS]["model_card"]["configs"]["train"]["lr"] *= 2
    with pytest.raises(ValueError, match=r"seeds.json: model_card.configs.train differs from gating.json's in \['lr'\]"):
        gating.facts(bad)
    cut = copy.deepcopy(data)
    cut[gating.SEEDS]["seed_runs"][0]["steps_trained"] = 200
    with pytest.raises(ValueError, match="is not a seed of a variant gating.json trained over its 1,400 steps"):
        gating.facts(cut)



def test_the_gating_summaries_go_either_way():
    """⑦ and ⑧ read a set of contrasts together: each way, none measured, and both directions."""
    from course.facts import gating

    def c(direction):
        return {"direction": direction, "measured": direction != 0}

    assert gating.summary([c(-1), c(-1)]) == {"measured": 2, "of": 2, "direction": -1, "all": True}
    assert gating.summary([c(1), c(0)]) == {"measured": 1, "of": 2, "direction": 1, "all": False}
    assert gating.summary([c(0), c(0)]) == {"measured": 0, "of": 2, "direction": 0, "all": False}
    assert gating.summary([c(1), c(-1)])["direction"] == 0


def test_the_gating_phrases_say_what_v2_read():
    """A pair in the running text: its side and gap ± h when measured, 「分不出」 within the error."""
    from course.facts import gating

    reading = gating.seeds.read({"gelu_ffn": {0: 5.0, 1: 5.01, 2: 5.02}, "baseline": {0: 4.9, 1: 4.91, 2: 4.92},
                                 "relu_ffn": {0: 4.905, 1: 4.915, 2: 4.925}, "linear_ffn": {0: 5.3, 1: 5.31}})
    assert gating.contrast(reading, "gelu_ffn", "baseline")["phrase"].startswith("GELU 比 SwiGLU 高 0.100 ± ")
    assert gating.contrast(reading, "relu_ffn", "baseline")["phrase"].startswith("ReLU 和 SwiGLU 分不出（高 0.005 ± ")
    assert gating.contrast(reading, "linear_ffn", "relu_ffn")["phrase"].startswith("线性 FFN 比 ReLU 高")
    assert gating.than("bilinear_ffn", "linear_ffn") == "Bilinear 比线性 FFN"
    split = gating.seeds.read({"baseline": {0: 5.0, 1: 5.2, 2: 5.21, 3: 5.2, 4: 5.21},
                               "gelu_ffn": {0: 5.0, 1: 5.01, 2: 5.02, 3: 5.0}})  # seed 0 far below its arm
    assert gating.contrast(split, "gelu_ffn", "baseline")["say"] == "SwiGLU 的种子分成了两拨，暂不读"


def test_a_failed_run_is_read_over_the_run_and_one_steps_failure_is_not_a_runs():
    """The failed run's course (failed from some step on, its residuals since) and a run that failed
    at one step and came back (said as such, not as a failed run)."""
    from course.facts import gating
    seeds = gating.seeds

    def step(losses):
        arms = {"baseline": losses, "gelu_ffn": {0: 5.0, 1: 5.01, 2: 5.02, 4: 5.0}}
        return {"val_loss": {"reading": seeds.read(arms), "arms": arms}}

    by_step = {200: step({0: 6.0, 1: 6.01, 2: 6.02, 3: 6.0, 4: 6.02}),
               400: step({0: 5.5, 1: 5.8, 2: 5.51, 3: 5.5, 4: 5.9}),
               600: step({0: 5.2, 1: 5.21, 2: 5.2, 3: 5.22, 4: 5.61})}
    course = gating.failed_course(by_step, "baseline", 4, "val_loss")
    assert course["steps"] == [400, 600] and course["since"] == 400
    assert course["residual"] == [pytest.approx(0.39), pytest.approx(0.4)]
    back = gating.recovered(by_step, "val_loss", 600)
    assert [(r["seed"], r["steps"], r["back"]) for r in back] == [(1, [400], 600)]
    assert back[0]["residual"] == pytest.approx(0.29)
    healthy = gating.failed_course(by_step, "baseline", 0, "val_loss")
    assert {k: healthy[k] for k in ("steps", "since", "residual", "over", "shrinking")} == \
        {"steps": [], "since": None, "residual": None, "over": None, "shrinking": False}
    # over the threshold for good from step 400 (split steps count here), its lag growing, not shrinking
    assert course["over"]["step"] == 400 and course["over"]["residual"] == pytest.approx(0.39) and not course["shrinking"]
    assert [e["step"] for e in course["every"]] == [200, 400, 600]


def test_the_gating_facts_read_every_arms_failed_runs_and_the_baselines_later_seeds():
    """A run that fails in any arm is listed, counted in its arm and out of its mean; the baseline's
    seeds exported later (baseline-seeds.json) join SwiGLU's row without the lesson asking."""
    import copy

    from course.facts import gating

    data = load_data(ROOT / "data", ROOT)
    n = gating.facts(data)["gating"]
    failed = [(f["arm"], f["seed"]) for f in n["failed"]]
    assert ("baseline", 4) in failed and {a for a, _ in failed} == {"baseline"}  # seed 4 and any later failure
    from course.facts import _baseline
    runs = len(_baseline.baseline_row(data)["seeds"])  # ablation.json's seeds and the later ones
    assert runs >= 6
    assert n["failure_counts"] == {"baseline": [len(failed), runs], "gelu_ffn": [0, 4], "relu_ffn": [0, 4],
                                   "bilinear_ffn": [0, 4], "linear_ffn": [0, 3], "silu_ffn": [0, 3]}
    assert n["primary"] == ["gelu_ffn-baseline", "relu_ffn-baseline", "bilinear_ffn-gelu_ffn", "silu_ffn-baseline"]
    assert all(n["end"]["val_loss"][p]["primary"] for p in n["primary"])
    assert not any(c.get("primary") for c in n["end"]["train_loss"].values())

    bad = copy.deepcopy(data)  # GELU's seed 2 falls far behind: a failed run of its own arm
    row = next(r for r in bad[gating.SEEDS]["seed_runs"] if (r["name"], r["seed"]) == ("gelu_ffn", 2))
    for h in row["history"]:
        h["val_loss"] += 0.5
        h["train_loss"] += 0.5
    m = gating.facts(bad)["gating"]
    assert [(f["arm"], f["seed"]) for f in m["failed"]] == failed + [("gelu_ffn", 2)]
    assert m["failure_counts"]["gelu_ffn"] == [1, 4]
    gelu = next(r for r in m["rows"] if r["name"] == "gelu_ffn")
    assert gelu["seeds"] == [0, 1, 4] and m["end"]["val_loss"]["gelu_ffn-baseline"]["n_a"] == 3

    more = copy.deepcopy(data)  # three later baseline seeds, as `python -m lab ffn ... extra_seeds=5,6,7` writes them
    base = next(v for v in data[gating._baseline.ABLATION]["variants"] if v["name"] == "baseline")
    more[gating._baseline.EXTRA] = {"seed_runs": [
        {"seed": s, "val_loss": base["val_losses"][i], "train_loss": base["train_losses"][i],
         "history": copy.deepcopy(base["histories"][i])} for i, s in enumerate((5, 6, 7))]}
    k = gating.facts(more)["gating"]
    assert k["rows"][0]["seeds"] == [0, 1, 2, 3, 5, 6, 7] and k["failure_counts"]["baseline"] == [1, 8]
    assert k["end"]["val_loss"]["gelu_ffn-baseline"]["n_b"] == 7


def test_the_gating_tails_go_either_way():
    """The sentence 真模型 builds on the tails must follow the numbers both ways, not only today's."""
    from course.facts import gating

    base = {"baseline": [3.0, 3.5], "gelu_ffn": [1.6, 2.8], "relu_ffn": [2.3, 1.8]}
    assert gating.tail_order({**base, "bilinear_ffn": [2.5, 3.0]}, "bilinear_ffn", ["gelu_ffn", "relu_ffn"]) == \
        {"bilinear": "heavier", "swiglu_heaviest": True}
    assert gating.tail_order({**base, "bilinear_ffn": [1.0, 1.0]}, "bilinear_ffn", ["gelu_ffn", "relu_ffn"])["bilinear"] == "lighter"
    assert gating.tail_order({**base, "bilinear_ffn": [2.2, 3.6]}, "bilinear_ffn", ["gelu_ffn", "relu_ffn"]) == \
        {"bilinear": "mixed", "swiglu_heaviest": False}


def test_the_gating_gate_against_activation_and_the_marginal_run():
    """The gate (SiLU - SwiGLU) against the activation (ReLU - SiLU): their sum, ReLU - SwiGLU, says which
    did more, each way; a failed run counted healthy moves only that run and re-pools the noise; the failure
    rate is Fisher's one-sided tail."""
    from math import comb

    from course.facts import gating

    def c(direction):
        return {"direction": direction, "measured": direction != 0}

    def pairs(gate, act, total):
        return {"silu_ffn-baseline": c(gate), "relu_ffn-silu_ffn": c(act), "relu_ffn-baseline": c(total)}

    assert gating.gate_or_activation(pairs(1, -1, 0))["verdict"] == "equal"
    assert gating.gate_or_activation(pairs(1, -1, 1))["verdict"] == "gate"  # ReLU still above SwiGLU
    assert gating.gate_or_activation(pairs(1, -1, -1))["verdict"] == "activation"
    assert gating.gate_or_activation(pairs(0, -1, 0))["verdict"] is None  # the gate not measured
    assert gating.gate_or_activation(pairs(1, 1, 1))["verdict"] is None  # the activation the other way
    assert gating.gate_or_activation({"silu_ffn-baseline": c(1)}) is None

    reading = gating.seeds.read({"baseline": {0: 4.90, 1: 4.91, 2: 4.92, 3: 5.05}, "gelu_ffn": {0: 5.0, 1: 5.01, 2: 5.02}})
    assert reading["failed"]["baseline"] == {3: 5.05}
    alt = gating.as_healthy(reading, "baseline", [3])
    assert alt["healthy"]["baseline"] == {0: 4.90, 1: 4.91, 2: 4.92, 3: 5.05} and alt["failed"]["baseline"] == {}
    assert (alt["sd"], alt["df"]) == gating.seeds.pooled(alt["healthy"]) and alt["df"] == reading["df"] + 1
    assert reading["failed"]["baseline"] == {3: 5.05}  # the reading itself is left as it was

    assert gating.fisher_one_sided(2, 8, 2, 26) == pytest.approx(comb(8, 2) / comb(26, 2)) == pytest.approx(28 / 325)
    assert gating.fisher_one_sided(1, 8, 2, 26) == pytest.approx(1 - comb(18, 2) / comb(26, 2))
    rate = gating.failure_rate({"baseline": [2, 8], "gelu_ffn": [0, 4], "relu_ffn": [0, 14]})
    assert (rate["failed"], rate["runs"], rate["others_failed"], rate["others_runs"]) == (2, 8, 0, 18)
    assert gating.failure_rate({"baseline": [0, 8], "gelu_ffn": [1, 4]}) is None


def test_the_gating_facts_read_the_silu_arm_against_the_activation(facts):
    """Pinned to the export the page reads: ReLU - SiLU as large as the gate's SiLU - SwiGLU (their sum
    within the error), and SwiGLU's seed 7, a marginal failed run, that turns GELU - SwiGLU when counted healthy."""
    g = facts["gating"]
    if g is None or "silu_ffn" not in g["seeds_of"]:
        pytest.skip("no gating export with the SiLU arm")
    ga = g["gate_or_activation"]["val_loss"]
    assert ga["verdict"] == "equal"
    assert (round(ga["gate"]["gap"], 3), round(ga["activation"]["gap"], 3)) == (0.165, -0.164)
    assert "relu_ffn-silu_ffn" in g["pairs"] and "linear_ffn-silu_ffn" in g["pairs"]
    assert [m["seed"] for m in g["marginal"]] == [7] and g["marginal"][0]["changed"] == ["gelu_ffn-baseline"]
    gelu = g["marginal"][0]["pairs"]["gelu_ffn-baseline"]
    assert (round(gelu["gap"], 3), round(gelu["half_width"], 3), gelu["measured"]) == (0.030, 0.050, False)
    assert g["failure_rate"]["p"] == pytest.approx(28 / 325)
    assert g["post_hoc"] == ["gelu_ffn-baseline", "relu_ffn-baseline", "bilinear_ffn-gelu_ffn"]
    assert g["declared_pairs"] == ["silu_ffn-baseline"]
    assert g["ungated_order"]["order"] == ["linear_ffn", "silu_ffn", "gelu_ffn", "relu_ffn"]
