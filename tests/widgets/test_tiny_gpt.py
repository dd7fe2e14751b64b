"""tiny-gpt's model: the settings refused in words, a run that learns, each call's work bounded
(a validation measured a part per call, with the same numbers as in one go), a run carried
through the browser's storage that continues exactly as if it had never stopped, divergence
stopped with its step, the downloads, and the data that lab.tinygpt wrote (its n-gram lines
recomputed here). The second engine, tinygpt_ulab.py (MicroPython's ulab build on the page; numpy
stands in for ulab here): the same losses as the pure engine, and on the ulab build in Node."""
import json
import math
import shutil
import subprocess
import sys
from collections import Counter
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
sys.path[:0] = [str(ROOT), str(ROOT / "widgets" / "common")]

from course.widgets import load_model  # noqa: E402

model = load_model("tiny-gpt")
TEXT = "滾滾長江東逝水，浪花淘盡英雄。是非成敗轉頭空，青山依舊在，幾度夕陽紅。白髮漁樵江渚上，慣看秋月春風。"
SMALL = {"n_layer": 1, "n_embd": 8, "n_head": 2, "block_size": 8, "lr": 0.01, "steps": 60, "seed": 3}


def small_data():
    """A data file in the shape of data/tiny-gpt.json, small enough for a test."""
    import tinygpt
    with open(ROOT / "data" / "tiny-gpt.json", encoding="utf-8") as f:
        real = json.load(f)
    return {"vocab": tinygpt.build_vocab(TEXT, 24), "train_text": TEXT * 4, "val_text": TEXT[::-1] * 2, "heldout_text": TEXT[5:60],
            "reference": real["reference"], "reference_slow": real["reference_slow"]}


def drive(n, per_call=None):
    """What the page's loop does: call train until n more steps are taken and no validation is
    left half measured (or the run is over) -> (the last answer, the number of calls)."""
    target = model.SESSION["run"].step + n
    calls = 0
    while True:
        left = max(0, target - model.SESSION["run"].step)
        out = model.train({"n": min(per_call or left, left)})
        calls += 1
        run = model.SESSION["run"]
        if not run.pending and (run.step >= target or out["status"]["done"] or run.diverged):
            return out, calls


def test_settings_out_of_range_are_refused_in_words():
    settings, problems = model.check_settings({"n_layer": 3, "n_embd": 30, "n_head": 4, "lr": "x", "steps": 2.5})
    assert settings is None
    assert "层数要在 1 到 2 之间。" in problems
    assert "学习率要填一个数。" in problems
    assert "训练步数要是整数。" in problems
    assert "宽度 30 要能被注意力头数 4 整除。" in problems
    assert model.check_settings({})[0] == model.DEFAULTS
    big = dict(model.DEFAULTS, n_layer=2, n_embd=64, block_size=32)
    assert "超过了浏览器里一次计算的上限" in model.check_settings(big)[1][0]


def test_the_step_limit_follows_the_runtime():
    """MicroPython is several times slower: a step that Pyodide does in well under the 5 s call
    limit is refused there in words, and the smaller settings a MicroPython page starts from pass."""
    assert model.check_settings({}, runtime="pyodide")[0] == model.DEFAULTS
    settings, problems = model.check_settings({}, runtime="micropython")
    assert settings is None and "MicroPython 比 Pyodide 慢好几倍" in problems[0] and "1.5 百万" in problems[0]
    assert model.check_settings(model.SLOW_DEFAULTS, runtime="micropython")[0] == model.SLOW_DEFAULTS
    assert model.step_limit() == model.MAX_STEP_COST  # the lab's CPython reference runs
    assert model.start({"data": small_data(), "settings": {}, "runtime": "micropython"})["problems"] == problems
    assert model.start({"data": small_data(), "settings": {"n_layer": 0}}) == {"problems": ["层数要在 1 到 2 之间。"]}


def test_with_the_ulab_engine_micropython_keeps_pyodides_defaults_and_limit(monkeypatch):
    """Where the widgets' Python is MicroPython's ulab build the page trains with tinygpt_ulab.py,
    faster than Pyodide: the same DEFAULTS, the same step limit, and the page says which engine."""
    import tinygpt_ulab
    assert model.ENGINE is model.tg and not tinygpt_ulab.ULAB  # CPython: the pure engine, as the lab's runs
    assert model.engine({"runtime": "micropython"})["slow"] and not model.engine({"runtime": "pyodide"})["slow"]
    assert "Pyodide" in model.engine({"runtime": "pyodide"})["out"]["engine"]
    monkeypatch.setattr(model, "ENGINE", tinygpt_ulab)  # as on MicroPython's ulab build
    info = model.engine({"runtime": "micropython"})
    assert info["engine"] == "ulab" and not info["slow"] and "tinygpt_ulab.py" in info["out"]["engine"]
    assert model.check_settings({}, runtime="micropython")[0] == model.DEFAULTS
    assert model.step_limit("micropython") == model.MAX_STEP_COST_ULAB
    # every setting the page's ranges allow trains on the ulab engine (the longer runs' largest among them)
    largest = {k: hi for k, (lo, hi) in model.LIMITS.items()}
    assert model.step_cost(largest) <= model.MAX_STEP_COST_ULAB
    assert model.check_settings({**largest, "lr": 0.003}, runtime="micropython")[1] == []
    monkeypatch.setattr(model, "ENGINE", model.tg)  # the pure engine's fallback keeps its lower limit
    assert model.check_settings({**largest, "lr": 0.003}, runtime="pyodide")[0] is None


def test_a_run_learns_and_its_chart_and_status_follow():
    data = small_data()
    first = model.start({"data": data, "settings": SMALL})
    assert first["status"]["step"] == "0" and first["val_log"] == [] and first["status"]["val"] == "—"
    out, _ = drive(0)  # the first validation, measured by the calls after start
    assert out["val_log"][0][1] == pytest.approx(math.log(24), abs=0.3)
    out, _ = drive(30)
    assert out["status"]["step"] == "30"
    assert [s for s, _ in out["val_log"]] == [0, 25]
    assert out["val_log"][-1][1] < out["val_log"][0][1] - 0.5
    assert len(out["chart"]["train"].split()) == 30
    out, _ = drive(100)  # never past settings.steps
    assert out["status"]["done"] and out["status"]["step"] == "60" and out["val_log"][-1][0] == 60
    text = model.generate({"temperature": 0.8, "n": 12})["text"]
    assert len(text) == 12 and set(text) <= set(data["vocab"])
    assert model.generate({"temperature": 9})["problem"]


def parts_of(run):
    """The calls one validation takes without a budget: EVAL_PER_CALL windows each, the
    validation slice's and the held-out slice's apart."""
    P, held = model.EVAL_PER_CALL, len(run.ex) - run.n_val
    return -(-run.n_val // P) + -(-held // P)


def test_a_validation_covers_every_character_of_both_slices():
    """The validation loss averages over back-to-back windows of the whole validation slice (the
    characters the n-gram lines are scored on), the held-out loss over the held-out slice's."""
    data = small_data()
    run = model.Session(data, SMALL)
    T = SMALL["block_size"]
    n = (len(data["val_text"]) - 1) // T
    assert run.n_val == n and [t for y in run.ey[:n] for t in y] == run.tok.encode(data["val_text"])[1:n * T + 1]
    assert len(run.ex) - run.n_val == (len(data["heldout_text"]) - 1) // T
    import tinygpt
    xs, ys = tinygpt.cover_windows(run.tok.encode(data["heldout_text"]), T)
    assert run.held_log == [[0, tinygpt.loss_of(run.cfg, run.W, xs, ys)]]
    assert run.val_log[0][1] == pytest.approx(tinygpt.loss_of(run.cfg, run.W, run.ex[:n], run.ey[:n]), rel=1e-12)


def test_each_call_holds_one_part_of_a_validation_and_the_numbers_are_those_of_one_go():
    """Without a budget a call measures EVAL_PER_CALL windows, or takes steps up to the one where
    a validation falls due (on MicroPython the whole validation set in one call once overran the
    5 s call limit). The lab's Session.train, which runs everything in one go, gives the same
    losses, bit for bit."""
    data = small_data()
    model.start({"data": data, "settings": SMALL})
    parts = parts_of(model.SESSION["run"])
    assert parts > 1
    for _ in range(parts - 1):
        assert model.train({"n": 5})["val_log"] == [] and model.SESSION["run"].step == 0
    assert len(model.train({"n": 5})["val_log"]) == 1  # the last part: no step yet
    assert model.train({"n": 40})["step"] == model.EVAL_EVERY  # stops where a validation is due
    assert model.SESSION["run"].pending == [model.EVAL_EVERY, 0, 0.0, 0.0]
    _, calls = drive(100, per_call=7)
    paged = model.SESSION["run"]
    assert calls == 6 + 3 * parts  # steps 25-60 by 7 (stopping at 50 and 60), three validations
    whole = model.Session(data, SMALL)
    whole.train(35)
    whole.train(100)
    assert whole.val_log == paged.val_log and whole.train_log == paged.train_log and whole.held_log == paged.held_log
    assert [s for s, _ in whole.val_log] == [0, 25, 50, 60] == [s for s, _ in whole.held_log]


def test_a_call_brings_the_state_whenever_it_changed_what_a_reload_must_find():
    """With save, a call that took steps or finished a validation brings the run's state (the page
    stores it before it shows the step); one that measured only a part of a validation does not."""
    model.start({"data": small_data(), "settings": SMALL})
    parts = parts_of(model.SESSION["run"])
    calls = [model.train({"n": 5, "save": True}) for _ in range(parts + 1)]
    assert ["saved" in c for c in calls] == [False] * (parts - 1) + [True, True]
    assert calls[-1]["saved"]["step"] == 5 and calls[-2]["saved"]["step"] == 0


def test_a_run_resumed_from_storage_continues_exactly():
    data = small_data()
    model.start({"data": data, "settings": SMALL})
    drive(20)
    model.train({"n": 20})  # up to step 25, where a validation falls due
    model.train({"n": 20})  # and its first part: saved half measured
    assert model.SESSION["run"].pending[1] == model.EVAL_PER_CALL
    saved = json.loads(json.dumps(model.state({})))  # through the browser's storage
    drive(20)
    straight = model.state({})
    model.SESSION["run"] = None  # a new visit: Python starts empty
    assert model.train({"n": 1}) == model.LOST
    model.resume({"data": data, "saved": saved})
    drive(20)
    assert model.state({}) == straight


def slowed(monkeypatch, name, seconds):
    """The engine's function `name`, each call made `seconds` slower: a slow device, or a busy one."""
    import time
    real = getattr(model.tg, name)

    def slow(*args, **kwargs):
        time.sleep(seconds)
        return real(*args, **kwargs)
    monkeypatch.setattr(model.tg, name, slow)


def test_a_call_ends_itself_by_its_deadline(monkeypatch):
    """The page gives each call a budget: on a slow machine the model returns early with the work
    done so far, instead of running on until the runtime kills Python (and the run with it)."""
    data = dict(small_data(), val_text=TEXT[::-1] * 8)  # 7 parts of a validation
    model.start({"data": data, "settings": SMALL})
    slowed(monkeypatch, "forward", 0.05)  # every forward pass (a validation part, a step) 50 ms slower
    out = model.train({"n": 10, "budget_ms": 120})
    assert out["val_log"] == [] and 1 <= model.SESSION["run"].pending[1] // model.EVAL_PER_CALL <= 3
    while not out["val_log"]:
        out = model.train({"n": 10, "budget_ms": 120})
    out = model.train({"n": 50, "budget_ms": 120})
    assert 1 <= out["step"] <= 3  # not 25: the deadline ended it
    out = model.train({"n": 50, "budget_ms": 0})
    assert out["step"] >= 2  # a call always does some work


def test_generate_streams_new_text_by_its_deadline_and_each_press_draws_anew(monkeypatch):
    """生成 in pieces: each call draws characters until its budget is spent (at least one), and the
    pieces make the text one call with the same seed gives; a second press gives other text; a
    slow forward pass still returns after one character, not after sixty."""
    from rng import Rng
    data = small_data()
    model.start({"data": data, "settings": SMALL})
    drive(30)
    run = model.SESSION["run"]
    pieces = [model.generate({"n": 30, "temperature": 0.8, "budget_ms": 0})]
    while not pieces[-1]["done"]:
        pieces.append(model.generate({"more": True, "budget_ms": 0}))
    assert len(pieces) == 30 and all(len(p["text"]) == 1 for p in pieces)
    text = "".join(p["text"] for p in pieces)
    whole = model.tg.sample(run.cfg, run.W, run.context(""), 30, 0.8, Rng(model.SAMPLE_SEED + 30 + 100003), never=0)
    assert text == run.tok.decode(whole)
    again = model.generate({"n": 30, "temperature": 0.8})
    assert again["done"] and len(again["text"]) == 30 and again["text"] != text
    for name in ("forward", "forward_step"):
        slowed(monkeypatch, name, 0.2)
    first = model.generate({"n": 60, "temperature": 0.8, "budget_ms": 100})
    assert len(first["text"]) == 1 and not first["done"]


def test_the_saved_state_is_compact_and_exact(facts):
    """The page keeps the run after every call: its numbers travel as the hex of their float64
    bytes (16 characters a number, against about 22 as JSON lists, which for larger settings the
    page allows overflowed the browser's storage; the page stores them as binary, 8 bytes a
    number), and it comes back bit for bit."""
    data = model.page_params({"data": facts["tinygpt"]["data"]})["data"]
    model.start({"data": data, "settings": model.DEFAULTS})
    model.train({"n": 2, "budget_ms": 10_000})
    run = model.SESSION["run"]
    numbers = 3 * sum(len(M) * len(M[0]) for M in run.W.values())
    saved = model.state({})
    text = json.dumps(saved)
    assert len(saved["tensors"]) == 16 * numbers and len(text) < 17 * numbers
    back = model.Session(data, model.DEFAULTS, evaluate=False)
    back.restore(json.loads(text))
    assert back.W == run.W and back.opt.m == run.opt.m and back.opt.v == run.opt.v and back.val_log == run.val_log
    assert model.resume({"data": data, "saved": dict(json.loads(text), version=1)})["problems"]


def test_divergence_stops_with_its_step():
    model.start({"data": small_data(), "settings": dict(SMALL, lr=0.1, n_embd=32, steps=400)})
    out, _ = drive(400)
    d = out["status"]["diverged"]
    step = int(out["status"]["step"])
    assert step < 400 and d.startswith("第 " + str(step) + " 步发散了")
    assert model.train({"n": 10})["status"]["step"] == str(step)  # it stays stopped


def test_downloads():
    model.start({"data": small_data(), "settings": SMALL})
    drive(26)
    w = model.weights({})
    assert w["step"] == 26 and w["names"][0] == "wte" and len(w["weights"]["wte"]) == 24
    rows = model.loss_log({})["csv"].splitlines()
    assert rows[0] == "step,train_loss,val_loss" and rows[1].startswith("0,,") and len(rows) == 28
    assert rows[26].count(",") == 2 and rows[26].split(",")[2] != ""  # step 25 has its validation loss


def test_the_lessons_lines_load_the_downloaded_weights_and_sample(tmp_path, monkeypatch, capsys):
    """⑩ shows the lines that read 下载权重's file back with tinygpt.py and sample from it: run as
    printed, next to the downloaded file, they print 60 characters of the vocabulary."""
    import re
    model.start({"data": small_data(), "settings": SMALL})
    drive(5)
    lesson = (ROOT / "lessons" / "train" / "l1-tiny-gpt.md").read_text(encoding="utf-8")
    code = re.search(r"```python\n(.*?)```", lesson, re.S).group(1)
    name = re.search(r'open\("([^"]+)"', code).group(1)
    (tmp_path / name).write_text(json.dumps(model.weights({}), ensure_ascii=False), encoding="utf-8")
    monkeypatch.chdir(tmp_path)
    exec(compile(code, "l1-tiny-gpt.md", "exec"), {})
    printed = capsys.readouterr().out.strip()
    assert len(printed) == 60 and set(printed) <= set(small_data()["vocab"]) - {"\u25a1"}


def test_the_data_and_its_reference_lines(facts):
    """data/tiny-gpt.json: the slices are where the model card says; unigram and bigram recomputed
    on exactly the characters the model's validation loss averages over."""
    import tinygpt
    d = facts["tinygpt"]["data"]
    card = d["model_card"]
    assert len(d["train_text"]) == card["split"]["train_slice"]["characters"]
    assert d["train_text"].startswith("第一回") and d["val_text"].startswith("第一百十一回")
    tok = tinygpt.Tokenizer(d["vocab"])
    tr, va = tok.encode(d["train_text"]), tok.encode(d["val_text"])
    # the characters the validation loss averages over at the defaults: back-to-back windows
    T = model.DEFAULTS["block_size"]
    va = va[:(len(va) - 1) // T * T + 1]
    assert len(va) - 1 == card["ngram"]["targets"] == model.targets(d)
    V = len(d["vocab"])
    counts = Counter(tr)
    uni = -sum(math.log((counts[b] + 1) / (len(tr) + V)) for b in va[1:]) / (len(va) - 1)
    assert d["reference"]["unigram"] == pytest.approx(uni, rel=1e-9)
    lam = card["ngram"]["bigram_lambda"]
    pairs, ctx = Counter(zip(tr, tr[1:])), Counter(tr[:-1])
    big = -sum(math.log(lam * (pairs[(a, b)] / ctx[a] if ctx[a] else 0) + (1 - lam) * (counts[b] + 1) / (len(tr) + V))
               for a, b in zip(va, va[1:])) / (len(va) - 1)
    assert d["reference"]["bigram"] == pytest.approx(big, rel=1e-9)
    assert d["reference"]["bigram"] < d["reference"]["unigram"] < math.log(V)
    ref = d["reference"]
    assert ref["band_lo"][-1] <= ref["band_mean"][-1] <= ref["band_hi"][-1] < ref["unigram"]


def test_the_first_state_is_the_reference_run(facts):
    state = model.view(model.example(facts))
    ref = facts["tinygpt"]["data"]["reference"]
    assert state["ref"]["seeds"] == [r["seed"] for r in ref["runs"]]
    assert len(state["chart"]["val"].split()) == len(ref["steps"])
    assert len(state["chart"]["band"].split()) == 2 * len(ref["steps"])
    assert [s["key"] for s in state["settings"]] == list(model.SETTINGS)


def test_a_phone_is_told_what_its_own_reference_run_did(facts):
    """The smaller settings a MicroPython page starts from have their own reference run (the same
    engine at SLOW_DEFAULTS in CPython): the phone's note quotes it, and where it stands against the unigram line."""
    d = facts["tinygpt"]["data"]
    slow = d["reference_slow"]
    assert slow["settings"] == {k: model.SLOW_DEFAULTS[k] for k in model.SETTINGS if k != "seed"}
    assert slow["steps"][-1] == model.SLOW_DEFAULTS["steps"] and len(slow["runs"]) == len(d["reference"]["runs"])
    note = model.view(model.example(facts))["slow_note"]
    assert f"验证损失从 {slow['band_mean'][0]:.2f} 降到 {slow['band_lo'][-1]:.2f}–{slow['band_hi'][-1]:.2f}" in note
    below = [s for s, v in zip(slow["steps"], slow["band_hi"]) if v < d["reference"]["unigram"]]
    if below:
        assert f"每个种子到第 {below[0]:,} 步都已低于一元线" in note
    elif slow["band_lo"][-1] < d["reference"]["unigram"]:
        assert "有的种子低于一元线" in note
    else:
        assert "还在一元线" in note


# ---------------------------------------------------------------- the ulab engine

def numpy_or_skip():
    try:
        import numpy  # noqa: F401
    except ImportError:
        pytest.skip("numpy (a dependency in pyproject.toml) is not installed: it stands in for ulab here")


def test_the_ulab_engine_gives_the_pure_engines_losses():
    """tinygpt_ulab.py on numpy against tinygpt.py, the same settings, seed and batches, two layers:
    every step's loss and the validation losses agree to float rounding; a run kept in storage by
    one engine goes on in the other; the samples are the same text."""
    numpy_or_skip()
    import tinygpt_ulab
    data = small_data()
    settings = dict(SMALL, n_layer=2, steps=30)
    pure, ulab = model.Session(data, settings), model.Session(data, settings, engine=tinygpt_ulab)
    assert ulab.engine is tinygpt_ulab and pure.engine is model.tg
    pure.train(26)
    ulab.train(26)
    assert len(ulab.train_log) == 26 and [s for s, _ in ulab.val_log] == [0, 25]
    for (s, a), (t, b) in zip(pure.train_log + pure.val_log, ulab.train_log + ulab.val_log):
        assert s == t and abs(a - b) < 1e-12, (s, a, b)
    assert ulab.val_log[-1][1] < ulab.val_log[0][1] - 0.5  # it learns
    saved = json.loads(json.dumps(ulab.state()))  # as the browser keeps it: packed, the same form for both engines
    assert isinstance(saved["tensors"], str) and set(saved) == set(pure.state())
    crossed = model.Session(data, settings, evaluate=False)  # the pure engine picks it up
    crossed.restore(saved)
    back = model.Session(data, settings, evaluate=False, engine=tinygpt_ulab)  # and the ulab one
    back.restore(json.loads(json.dumps(pure.state())))
    for run in (pure, ulab, crossed, back):
        run.train(30)
    for run in (ulab, crossed, back):
        for (s, a), (t, b) in zip(pure.train_log + pure.val_log, run.train_log + run.val_log):
            assert s == t and abs(a - b) < 1e-12, (s, a, b)
    assert ulab.sample(16, 0.8) == pure.sample(16, 0.8)


def micropython_ulab(calls):
    """The tiny-gpt model's functions on MicroPython's ulab build in Node (micropython_views.mjs)."""
    from course.widgets import COMMON
    job = {"common": {p.stem: p.read_text(encoding="utf-8") for p in COMMON.glob("*.py")},
           "models": {"tiny_gpt_model": (ROOT / "widgets" / "tiny_gpt" / "model.py").read_text(encoding="utf-8")},
           "calls": [["tiny_gpt_model", params, fn] for fn, params in calls], "build": "ulab"}
    done = subprocess.run(["node", str(ROOT / "tests" / "widgets" / "micropython_views.mjs")], input=json.dumps(job),
                          capture_output=True, text=True, cwd=ROOT, timeout=600)
    assert done.returncode == 0, done.stderr[-2000:]
    return json.loads(done.stdout.strip().splitlines()[-1])


ULAB_WASM = ROOT / "node_modules" / "@micropython" / "micropython-webassembly-pyscript" / "micropython-ulab.wasm"


@pytest.mark.skipif(not shutil.which("node") or not ULAB_WASM.exists(), reason="needs node and `npm ci`")
def test_on_micropythons_ulab_build_the_page_trains_the_defaults_with_the_ulab_engine():
    """What the page does on a phone: the model on the ulab build says it trains with
    tinygpt_ulab.py, takes Pyodide's DEFAULTS, and its first steps' losses are the pure engine's in
    CPython to float rounding; it samples, and its state is plain JSON."""
    data = model.page_params({"data": json.loads((ROOT / "data" / "tiny-gpt.json").read_text(encoding="utf-8"))})["data"]
    settings = dict(model.DEFAULTS, steps=4)
    budget = {"n": 4, "budget_ms": 10 ** 9}  # the page's calls, with a budget no call reaches (the clock is wall time)
    calls = [("engine", {"runtime": "micropython"}), ("start", {"data": data, "settings": settings, "runtime": "micropython"})]
    calls += [("train", budget)] * 3 + [("generate", {"n": 12, "temperature": 0.8}), ("state", {})]
    got = micropython_ulab(calls)
    assert got[0]["engine"] == "ulab" and not got[0]["slow"]
    assert "problems" not in got[1]
    state = got[-1]
    assert state["step"] == 4 and isinstance(state["tensors"], str)
    pure = model.Session(data, settings)
    pure.train(4)
    back = model.Session(data, settings, evaluate=False)  # the phone's packed state, read in CPython
    back.restore(state)
    for (s, a), (t, b) in zip(pure.train_log + pure.val_log, back.train_log + back.val_log):
        assert s == t and abs(a - b) < 1e-12, (s, a, b)
    assert len(back.train_log) == 4 and len(back.val_log) == 2 == len(back.held_log)
    assert max(abs(x - y) for x, y in zip(pure.W["wte"][5], back.W["wte"][5])) < 1e-12
    assert len(got[-2]["text"]) == 12 and got[-2]["done"] and got[-2]["step"] == 4
