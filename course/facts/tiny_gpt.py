"""Facts of the tiny-gpt page (data/tiny-gpt.json, `python -m lab.tinygpt`): facts.tinygpt, or None
before its first export. `data` is the whole file, which the page's widget takes."""

import math

KEY = "tiny-gpt"


def tinygpt_facts(d):
    card, ref = d["model_card"], d["reference"]
    return {"data": d, "vocab_size": len(d["vocab"]), "train_chars": len(d["train_text"]),
            "val_chars": len(d["val_text"]), "corpus_file": card["corpus"]["file"],
            "corpus_sha256": card["corpus"]["sha256"], "val_in_vocab": card["tokenizer"]["val_characters_in_vocab"],
            "val_from": card["split"]["val_chapters"][0], "train_to": card["split"]["train_chapters"][1],
            "uniform": math.log(len(d["vocab"])), "unigram": ref["unigram"], "bigram": ref["bigram"], "seeds": [r["seed"] for r in ref["runs"]],
            "steps": ref["steps"][-1], "start": ref["band_mean"][0], "end": ref["band_mean"][-1],
            "end_lo": ref["band_lo"][-1], "end_hi": ref["band_hi"][-1],
            "below_unigram_at": next((s for s, v in zip(ref["steps"], ref["band_hi"]) if v < ref["unigram"]), None),
            "wall_seconds": card["reference"]["wall_seconds"]}


def facts(data):
    return {"tinygpt": tinygpt_facts(data[KEY]) if KEY in data else None}
