"""Facts of the tiny-gpt page (data/tiny-gpt.json, `python -m lab.tinygpt`): facts.tinygpt, or None
before its first export. `data` is the whole file, which the page's widget takes."""

import math

KEY = "tiny-gpt"


def first_below(steps, values, line):
    """The first evaluation step where values are below line, or None."""
    return next((s for s, v in zip(steps, values) if v < line), None)


def tinygpt_facts(d):
    card, ref = d["model_card"], d["reference"]
    split = card["split"]
    runs = ref["runs"]
    steps = ref["steps"]
    n = len(runs)
    heldout_end = sum(r["heldout"][-1] for r in runs) / n
    train_end = sum(r["train_end"] for r in runs) / n
    return {"data": d, "vocab_size": len(d["vocab"]), "train_chars": len(d["train_text"]),
            "val_chars": len(d["val_text"]), "heldout_chars": len(d["heldout_text"]),
            "corpus_file": card["corpus"]["file"], "corpus_sha256": card["corpus"]["sha256"],
            "val_in_vocab": card["tokenizer"]["val_characters_in_vocab"],
            "val_from": split["val_chapters"][0], "train_to": split["train_chapters"][1],
            "train_slice_chapters": split["train_slice"]["chapters"], "val_slice_chapters": split["val_slice"]["chapters"],
            "heldout_slice_chapters": split["heldout_slice"]["chapters"],
            "val_targets": card["ngram"]["targets"],
            "uniform": math.log(len(d["vocab"])), "unigram": ref["unigram"], "bigram": ref["bigram"],
            "seeds": [r["seed"] for r in runs], "steps": steps[-1], "start": ref["band_mean"][0],
            "end": ref["band_mean"][-1], "end_lo": ref["band_lo"][-1], "end_hi": ref["band_hi"][-1],
            "end_above_bigram": ref["band_mean"][-1] - ref["bigram"],
            # every seed below the unigram line; the first seed; the seeds' mean
            "below_unigram_at": first_below(steps, ref["band_hi"], ref["unigram"]),
            "below_unigram_first": first_below(steps, ref["band_lo"], ref["unigram"]),
            "below_unigram_mean": first_below(steps, ref["band_mean"], ref["unigram"]),
            "below_bigram_first": first_below(steps, ref["band_lo"], ref["bigram"]),
            # a run with another seed, from the same distribution, lands outside the range of n
            # runs at a given step with probability 2 / (n + 1) (it is the lowest or the highest of n + 1)
            "outside_band": 2 / (n + 1),
            # ... and at some step of its curve: each seed against the band of the others
            "leaves_band": sum(any(not min(o[i] for o in others) <= v <= max(o[i] for o in others)
                                   for i, v in enumerate(r["val"]))
                               for r in runs for others in [[o["val"] for o in runs if o is not r]]),
            "train_end": train_end, "heldout_end": heldout_end,
            "gap_shift": ref["band_mean"][-1] - heldout_end, "gap_unseen": heldout_end - train_end,
            "engine": card["reference"]["engine"], "wall_seconds": card["reference"]["wall_seconds"],
            "longer": longer_facts(d["longer"], len(d["train_text"])),
            "passages": {**d["passages"], "harder": d["passages"]["bigram_heldout"] - d["passages"]["bigram_second_half"]}}


def longer_facts(longer, page_chars):
    """Each arm of the longer runs, under "page" (trained on the page's own training slice) or
    "more" (on more text), then its name ("defaults", "largest"): the validation loss's mean curve read by
    curve() (lowest point and step, end, rise), the range over seeds, the held-out and trained-on curves,
    and the first step where every seed is below that text's bigram line."""
    steps = longer["steps"]
    out = {"steps": steps[-1], "every": steps[0], "seeds": longer["seeds"], "trained_chars": longer["trained_chars"],
           "page": {}, "more": {}}

    def curve(arm, key):
        """The seeds' mean of one logged loss: its lowest value and step, its end, the rise from the lowest to
        the end, and the smallest and largest rise of a single seed from its own lowest point."""
        runs = [r[key] for r in arm["runs"]]
        mean = [sum(v) / len(v) for v in zip(*runs)]
        i = min(range(len(mean)), key=mean.__getitem__)
        rises = [r[-1] - min(r) for r in runs]
        return {"mean": mean, "best": mean[i], "best_step": steps[i], "end": mean[-1], "start": mean[0],
                "rise": mean[-1] - mean[i],
                "rise_lo": min(rises), "rise_hi": max(rises),
                "seed_best_steps": sorted(steps[r.index(min(r))] for r in runs)}

    for arm in longer["arms"]:
        vals = [r["val"] for r in arm["runs"]]
        val = curve(arm, "val")
        out["page" if arm["train_chars"] == page_chars else "more"][arm["name"]] = {
            **{k: val[k] for k in ("best", "best_step", "end", "rise")},
            "held": curve(arm, "heldout"), "trained": curve(arm, "trained"),
            "settings": arm["settings"], "train_chars": arm["train_chars"],
            "unigram": arm["unigram"], "bigram": arm["bigram"],
            "best_lo": min(min(v) for v in vals), "best_hi": max(min(v) for v in vals),
            "best_lo_above": min(min(v) for v in vals) - arm["bigram"],
            "end_lo": min(v[-1] for v in vals), "end_hi": max(v[-1] for v in vals),
            "still_falling": val["mean"][-1] < val["mean"][-2],
            # the first evaluation where every seed is below this text's own bigram line
            "below_bigram_all": first_below(steps, [max(v) for v in zip(*vals)], arm["bigram"])}
    return out


def facts(data):
    return {"tinygpt": tinygpt_facts(data[KEY]) if KEY in data else None}
