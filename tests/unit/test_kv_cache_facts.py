"""facts.kv_cache: the cache bills against a count made here from the configs, the MLA split of
DeepSeek-V2's 93.3 %, and the bills following the data when it changes."""
import copy

import pytest
from support import ROOT

from course.data import load_data, validate, load_json
from course.errors import CourseError
from course.facts import kv_cache


@pytest.fixture(scope="module")
def data():
    return load_data(ROOT / "data", ROOT)


@pytest.fixture(scope="module")
def K(data):
    return kv_cache.kv_facts(data)


def by_hand(layers, kv_heads, head_dim, bits):
    keys = values = layers * kv_heads * head_dim  # one key and one value per KV head and layer
    return (keys + values) * bits // 8


def test_every_bill_is_the_configs_count(K, data):
    arch = data["real-model/model-card"]["architecture"]
    assert K["ours"]["bytes"] == by_hand(arch["n_layer"], arch["n_head"], arch["d_model"] // arch["n_head"], 32) == 8192
    assert K["ours"]["per_token"] == "8 KiB" and K["ours"]["full_size"] == "2 MiB"
    t = data["anchor-model"]["config"]["text_config"]
    full = [x for x in t["layer_types"] if x == "full_attention"]
    assert K["anchor"]["layers"] == len(full) == 16
    assert K["anchor"]["bytes"] == by_hand(16, t["num_key_value_heads"], t["head_dim"], 16) == 64 * 1024
    assert K["anchor"]["full_size"] == "16 GiB" and K["anchor"]["if_all_full"] == "256 KiB"
    assert K["anchor"]["if_all_full_mha"] == "1.5 MiB"
    assert K["llama3"]["bytes"] == by_hand(32, 8, 128, 16) == 128 * 1024 and K["llama3"]["full_size"] == "1 GiB"
    assert K["ds67b"]["elements"] == 2 * 95 * 8 * 128 == 194560 and K["ds67b"]["per_token"] == "380 KiB"


def test_mla_cuts_numbers_by_82_percent_and_bytes_by_the_abstracts_93_3(K):
    m = K["mla"]
    assert m["elements"] == (512 + 64) * 60 == 34560
    assert round(m["cut_elements"], 4) == round(1 - 34560 / 194560, 4) == 0.8224
    assert m["bytes_q"] == 34560 * 6 / 8 and round(m["cut_bytes"], 3) == m["paper_cut"] == 0.933
    assert m["groups_equivalent"] == m["paper_groups"] == 2.25 and m["reproduces_paper"]
    assert m["per_token_q"] == "25.3 KiB" and m["per_token_16"] == "67.5 KiB"


def test_the_gqa_table_reads_ainslie_table_1(K):
    g = K["gqa"]
    assert [r["row"] for r in g["rows"]] == ["MHA-Large", "MHA-XXL", "MQA-XXL", "GQA-8-XXL"]
    assert round(g["gqa_speedup"], 1) == 5.4 and round(g["mqa_speedup"], 1) == 6.3
    assert round(g["gqa_loss"], 1) == 0.1 and round(g["mqa_loss"], 1) == 0.6


def test_the_bills_follow_the_data(data):
    changed = copy.deepcopy(data)
    changed["frontier-models"]["llama-3-8b"]["config"]["num_key_value_heads"] = 32
    changed["papers"]["deepseek2024"]["rows"][2]["kv_cache_bits"] = 8
    K = kv_cache.kv_facts(changed)
    assert K["llama3"]["bytes"] == by_hand(32, 32, 128, 16)
    assert not K["mla"]["reproduces_paper"] and K["mla"]["bytes_q"] == 34560


def test_the_presets_are_the_rows_in_the_widgets_shape(K):
    fields = ("key", "name", "heads", "kv_heads", "head_dim", "layers", "context", "bits")
    assert [p["key"] for p in K["presets"]] == ["ours", "anchor", "llama3", "ds67b"]
    for p, m in zip(K["presets"], K["models"]):
        assert p == {f: m[f] for f in fields}


def test_a_config_without_its_kv_heads_fails_at_the_file_and_key(data):
    frontier = copy.deepcopy(data["frontier-models"])
    del frontier["llama-3-8b"]["config"]["num_key_value_heads"]
    schema = load_json(ROOT / "data" / "schemas" / "frontier-models.schema.json", ROOT)
    with pytest.raises(CourseError, match="llama-3-8b.config: 'num_key_value_heads' is a required property"):
        validate(frontier, schema, "data/frontier-models.json")


def made_up_export(bytes_per_token=8192):
    """The fields of lab/experiments/kv_cache.py's export the facts read (values made up here)."""
    bug = {"same_tokens": False, "first_divergence": 1, "text": "x",
           "forced": {"max_abs_logit_diff": 9.0, "first_step_diff": 0.0, "second_step_diff": 3.0, "argmax_changed_steps": 7}}
    return {"model": {"seed": 0, "steps": 1400, "val_loss": 4.9}, "model_config": {"n_layer": 4},
            "corpus": {"file": "sanguo-yanyi.txt"}, "prompt": {"text": "卻說", "tokens": [1, 2]},
            "generation": {"new_tokens": 256, "positions": 270, "past_context": 14, "dtype": "float32"},
            "same_tokens": True, "first_divergence": None, "max_abs_logit_diff": 3e-6, "max_abs_logit": 20.0,
            "prefill_max_abs_logit_diff": 1e-6, "full": {"text": "a"}, "cached": {"text": "a"},
            "speed": {"speedup": 4.2}, "cache": {"tokens": 269, "bytes": 269 * bytes_per_token, "bytes_per_token": bytes_per_token},
            "controls": [dict(bug, name="position_0"), dict(bug, name="off_by_one")],
            "command": "python -m lab kvcache", "date": "2026-12-06"}


def test_the_run_is_read_with_its_controls_and_its_cache_checked_against_the_bill(data):
    with_run = dict(data)
    with_run[kv_cache.RUN] = made_up_export()
    K = kv_cache.kv_facts(with_run)
    run = K["run"]
    assert run["book"] == "三國演義" and run["same"] and run["speedup"] == 4.2
    assert run["position_0"]["first_divergence"] == 1 and set(run["controls"]) == {"position_0", "off_by_one"}
    assert run["cache_matches_bill"] and run["cache_size"] == "2.1 MiB"
    with_run[kv_cache.RUN] = made_up_export(bytes_per_token=4096)
    assert not kv_cache.kv_facts(with_run)["run"]["cache_matches_bill"]


def test_no_export_no_run(K, data):
    assert (K["run"] is None) == (kv_cache.RUN not in data)
