"""The lab's experiments, one module each, all of one shape: `python -m lab <experiment>`.

Each module holds its variants' roles (the model switches live in lab/model.py, the one list of
names train.py resolves), its measurements and its export, and has
    NAME          the command (`python -m lab NAME`)
    DEFAULT_OUT   where its export goes unless --out says otherwise
    run_command   for `ffn`, its own (prepare -> train every run -> export); the others run through
                  common.run_command: a `Config` dataclass and `run(cfg, prep, base, out, invoked)`.
The shared piece, lab/experiments/common.py, plans (variant, seed) runs, trains them resumably in
`work/<variant>-s<seed>/`, checks that they share data, budget and schedule, and builds what every
model card has in common.

| experiment | lesson | export |
|---|---|---|
| `ffn` (alias `all`) | C4 第 1 课 | data/real-model/{model-card,ablation,neurons}.json |
| `residual` | C4 第 2 课 | data/real-model/residual/residual.json |
| `mechanism` | C4 第 2 课 | data/real-model/residual/mechanism.json |
| `norm` | C4 第 3 课 | data/real-model/norm/norm.json |
| `gating` | C4 第 4 课 | data/real-model/gating/gating.json |
| `tokenizer` | C1 第 1 课 | data/real-model/tokenizer/{sweep,tokenizer,neighbours}.json (trains BPE tokenizers only, no model) |
| `kvcache` | C3 第 4 课 | data/real-model/kv-cache/kv-cache.json (reads a trained run, trains nothing; not in EXPERIMENTS) |
| `attention` | C3 第 1 课 | data/real-model/attention/attention.json (reads a trained run, trains nothing; not in EXPERIMENTS, which all need --corpus) |
| `rope` | C3 第 2 课 | data/real-model/rope/rope.json (RoPE's shift test on a trained run), `part=arms`: rope/arms.json (the positions arms, read); trains nothing, not in EXPERIMENTS |
"""
from lab.experiments import ffn, gating, mechanism, norm, residual, tokenizer

EXPERIMENTS = {m.NAME: m for m in (ffn, residual, mechanism, norm, gating, tokenizer)}
ALIASES = {"all": "ffn"}  # the FFN experiment's command before lab/experiments/
