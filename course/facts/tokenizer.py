"""Facts about tokenizers: our own (data/real-model/tokenizer/, `python -m lab tokenizer`) and the
vocabularies of published models (data/vocabularies.json, each with its source).

The lesson reads these as `facts.tokenizer` (None before the lab's first export) and
`facts.vocabularies`. Everything a sentence of C1 第 1 课 says about the sweep is derived here, once:

- `rows` (smallest vocabulary first), `by_size`, `ours` (the size our model uses), `bytes` (256: no
  merge), `largest`; per row `embedding` (V x d weights of the tied table at our d) and
  `embedding_share` (its share of a model with our non-embedding parameters);
- `steps`: each doubling's relative drop in tokens per character (diminishing returns);
- `chars`: the character-level vocabularies (`tiny_gpt`, `all_train`);
- `neighbours`: the tied table's nearest rows, trained against the same seed's untrained table;
- `encoder`: the compact tokenizer the page's widget encodes with.
"""
from ..errors import CourseError
from ..widgets import load_model
from .real_model import BOOK_TITLES

SWEEP, ENCODER, NEIGHBOURS = "real-model/tokenizer/sweep", "real-model/tokenizer/tokenizer", "real-model/tokenizer/neighbours"


def facts(data):
    return {"tokenizer": tokenizer_facts(data), "vocabularies": vocabulary_facts(data)}


def vocabulary_facts(data):
    """Published vocabularies: Llama 3 (report), MiniMind (code), GPT-2 and the anchor model (their configs)."""
    v = data["vocabularies"]
    llama = dict(v["llama3"])
    llama["english_tokens_per_char"] = 1 / llama["english_chars_per_token"]
    llama["english_tokens_per_char_llama2"] = 1 / llama["english_chars_per_token_llama2"]
    llama["fewer_tokens"] = 1 - llama["english_chars_per_token_llama2"] / llama["english_chars_per_token"]
    mini = dict(v["minimind"])
    mini["embedding"] = mini["vocab"] * mini["hidden"]
    gpt2 = data["frontier-models"]["gpt2-small"]["config"]
    anchor = data["anchor-model"]
    text = anchor["config"]["text_config"]
    tables = 1 if text["tie_word_embeddings"] else 2
    anchor_emb = tables * text["vocab_size"] * text["hidden_size"]
    return {
        "llama3": llama, "minimind": mini,
        "gpt2": {"vocab": gpt2["vocab_size"], "d": gpt2["n_embd"], "tied": gpt2["tie_word_embeddings"]},
        "anchor": {"name": anchor["name"], "vocab": text["vocab_size"], "d": text["hidden_size"], "tied": tables == 1,
                   "tables": tables, "embedding": anchor_emb,
                   "embedding_share": anchor_emb / anchor["published_param_count"]},
    }


def tokenizer_facts(data):
    sweep = data.get(SWEEP)
    if sweep is None:
        return None
    card = data["real-model/model-card"]
    ablation = data["real-model/ablation"]
    d = card["architecture"]["d_model"]
    params = next(v["params"] for v in ablation["variants"] if v["name"] == "baseline")
    vocab = card["architecture"]["vocab_size"]
    rest = params - vocab * d  # our model without its (tied) embedding table
    rows = []
    for r in sweep["rows"]:
        row = dict(r)
        row["embedding"] = r["vocab_size"] * d
        row["embedding_share"] = row["embedding"] / (rest + row["embedding"])
        # The 128 bytes 0x80-0xFF are fragments on their own; the rest of the fragments are merges.
        row["merged_fragments"] = r["fragment_tokens"] - 128
        # han: the token holds a Han character (punctuation runs alone would survive a GPT-2 regex pre-split)
        row["top_words"] = [dict(w, han=any("\u4e00" <= c <= "\u9fff" for c in w["text"])) for w in r["top_words"]]
        rows.append(row)
    by_size = {r["vocab_size"]: r for r in rows}
    ours = [r for r in rows if r["is_ours"]]
    if len(ours) != 1 or ours[0]["vocab_size"] != vocab:
        raise CourseError("data/real-model/tokenizer/sweep.json", f"no row reproduces our tokenizer ({vocab} tokens)")
    ours = ours[0]
    tok = card["tokenizer"]
    split = card["split"]
    if (ours["fragment_tokens"], ours["val_tokens"], ours["train_tokens"]) != (
            tok["fragment_tokens"], split["val_tokens"], split["train_tokens"]):
        raise CourseError("data/real-model/tokenizer/sweep.json",
                          "its row for our tokenizer disagrees with model-card.json (fragments or token counts): "
                          "the sweep and the model were made from different data")
    if sweep["window"] != card["architecture"]["block_size"]:
        raise CourseError("data/real-model/tokenizer/sweep.json", f"window {sweep['window']} is not our model's context "
                          f"({card['architecture']['block_size']} tokens): the page reads it as what the model holds")
    steps = [{"from": a["vocab_size"], "to": b["vocab_size"], "drop": 1 - b["tokens_per_char"] / a["tokens_per_char"]}
             for a, b in zip(rows, rows[1:])]
    drops = [s["drop"] for s in steps]
    shares = [r["fragment_share"] for r in rows]
    peak = max(range(len(rows)), key=lambda i: (shares[i], -i))
    chars = {c["name"]: c for c in sweep["characters"]}
    mc = sweep["model_card"]
    bytes_row = by_size.get(256)
    out = {
        "rows": rows, "by_size": by_size, "ours": ours, "bytes": bytes_row, "largest": rows[-1], "smallest": rows[0],
        "window": sweep["window"], "steps": steps,
        # each doubling shortens the text less than the one before: what "越来越不划算" needs
        "drops_shrink": all(b < a for a, b in zip(drops, drops[1:])),
        # byte fragments: their count with the vocabulary, their share from its largest value on
        "fragments_grow": all(b["fragment_tokens"] > a["fragment_tokens"] for a, b in zip(rows, rows[1:])),
        "fragment_peak": rows[peak],
        "fragment_share_falls": peak < len(rows) - 1 and all(b < a for a, b in zip(shares[peak:], shares[peak + 1:])), "chars": chars, "d_model": d, "params": params,
        "rest_params": rest, "ours_embedding_share": ours["embedding"] / params,
        "card": mc, "books": len(mc["corpus"]["files"]), "sample": mc["sample"],
        "train_seconds": sum(r["train_seconds"] for r in rows),
        "slowest": max(rows, key=lambda r: r["train_seconds"]),
        "bytes_over_ours": bytes_row["tokens_per_char"] / ours["tokens_per_char"] if bytes_row else None,
        "neighbours": neighbour_facts(data.get(NEIGHBOURS), vocab, data.get(ENCODER)),
        "encoder": encoder(data.get(ENCODER), vocab),
        "one_byte": one_byte(sweep.get("val_one_byte")),
    }
    out["fragment_kinds"] = fragment_kinds(out["encoder"])
    return out


def one_byte(rows):
    """The validation text's one-byte characters by kind: newlines, spaces, ASCII punctuation, letters."""
    if rows is None:
        return None
    kinds = {"newline": 0, "space": 0, "punct": 0, "letter": 0, "digit": 0, "other": 0}
    for r in rows:
        c = r["char"]
        k = ("newline" if c == "\n" else "space" if c == " " else "letter" if c.isalpha() else "digit" if c.isdigit()
             else "punct" if 33 <= ord(c) < 127 else "other")
        kinds[k] += r["count"]
    kinds["total"] = sum(r["count"] for r in rows)
    return kinds


def fragment_kinds(enc):
    """Our vocabulary's merged byte fragments by what they hold: `half` (part of one character, no whole
    one), `punct` (whole punctuation, then the first bytes of the next character; `punct_texts` the
    punctuation), `word` (a whole character with part of a neighbour; `word_texts` the whole characters,
    `word_after` whether every one of them comes after the partial bytes, i.e. carries the end of the
    character before it)."""
    if enc is None:
        return None
    bt = load_model("bpe-tokenizer")
    t = bt.tables(enc)
    half, punct, word, punct_texts, word_texts, after = 0, 0, 0, [], [], True
    for tid in range(256, t["V"]):
        piece = t["pieces"][tid]
        if bt.is_text(piece):
            continue
        shown = bt.piece_text(t, tid)
        whole = shown.replace("\ufffd", "")
        if not whole:
            half += 1
        elif all(not c.isalnum() for c in whole) and not shown.startswith("\ufffd"):
            punct += 1
            if whole not in punct_texts:
                punct_texts.append(whole)
        else:
            word += 1
            word_texts.append(whole)
            after = after and shown.startswith("\ufffd")
    return {"half": half, "punct": punct, "word": word, "punct_texts": punct_texts, "word_texts": word_texts,
            "word_after": after, "total": half + punct + word}


def encoder(doc, vocab):
    """The compact tokenizer for the widget and its check; it must be our model's tokenizer."""
    if doc is None:
        return None
    if doc["vocab_size"] != vocab or len(doc["merges"]) != 2 * (vocab - 256):
        raise CourseError("data/real-model/tokenizer/tokenizer.json", f"holds {doc['vocab_size']} tokens, our model {vocab}")
    return {"byte_ids": doc["byte_ids"], "merges": doc["merges"], "vocab_size": doc["vocab_size"],
            "check": doc["check"], "samples": doc["samples"]}


def token_text(enc, tid):
    """A token alone as text (U+FFFD where its bytes cut a character), from our tokenizer's export."""
    return load_model("bpe-tokenizer").token_info(enc, tid)["text"]


def neighbour_facts(doc, vocab, enc):
    """The embedding neighbours: each single-token query's nearest rows (trained, then untrained), each
    row with its book's title, and per query how many of its trained (and untrained) neighbours come
    from its own book (a token's book: lab/experiments/tokenizer.py book_rule)."""
    if doc is None:
        return None
    if enc is None:
        raise CourseError("data/real-model/tokenizer/neighbours.json", "needs tokenizer.json beside it (the tokens' text)")

    def titled(rows):
        return [dict(n, text=token_text(enc, n["id"]), title=BOOK_TITLES.get(n["book"], n["book"]) if n["book"] else None)
                for n in rows]

    queries = []
    for q in doc["queries"]:
        if not q["single"]:
            continue
        q = dict(q, title=BOOK_TITLES.get(q["book"], q["book"]) if q["book"] else None,
                 neighbours=titled(q["neighbours"]), init_neighbours=titled(q["init_neighbours"]))
        q["same_book"] = sum(1 for n in q["neighbours"] if n["book"] == q["book"])
        q["init_same_book"] = sum(1 for n in q["init_neighbours"] if n["book"] == q["book"])
        q["texts"] = [n["text"] for n in q["neighbours"]]
        queries.append(q)
    trained_top = [q["neighbours"][0]["cosine"] for q in queries]
    init_top = [q["init_neighbours"][0]["cosine"] for q in queries]
    return {"run": doc["run"], "k": doc["k"], "queries": queries,
            "split": [q for q in doc["queries"] if not q["single"]],
            "by_text": {q["text"]: q for q in queries}, "pairs": doc["pairs"],
            "trained_top": {"min": min(trained_top), "max": max(trained_top)},
            "init_top": {"min": min(init_top), "max": max(init_top)},
            "date": doc["model_card"]["date"], "command": doc["model_card"]["command"],
            "same_vocab": doc["run"]["vocab_size"] == vocab, "stats": stats_facts(doc), "check": check_facts(doc, queries)}


def stats_facts(doc):
    """The table by training frequency: never-seen rows, norms, the >0.9 tail, pairs over seen tokens,
    and the chance rate of a book label (the largest book's share of the seen tokens' labels)."""
    st = doc.get("stats")
    if st is None:
        return None
    out = dict(st)
    shares = sorted(((v, BOOK_TITLES.get(k, k)) for k, v in st["book_shares"].items()), reverse=True)
    out["book_shares"] = [{"title": t, "share": v} for v, t in shares]
    out["by_title"] = {t: v for v, t in shares}
    return out


def check_facts(doc, queries):
    """The second seed's neighbours against the first's: per query, how many of the k are the same tokens."""
    ch = doc.get("check")
    if not ch:
        return None
    other = {q["text"]: set(q["neighbours"]) for q in ch["queries"]}
    rows = [{"text": q["text"], "shared": len(other[q["text"]] & {n["id"] for n in q["neighbours"]})}
            for q in queries if q["text"] in other]
    shared = [r["shared"] for r in rows]
    return {"seed": ch["seed"], "val_loss": ch["val_loss"], "queries": rows,
            "min": min(shared), "max": max(shared), "total": sum(shared), "of": len(rows) * doc["k"]}
