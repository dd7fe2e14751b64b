"""Facts about our own model, derived from data/real-model/ (lab/'s export of the FFN experiment).

The lesson reads these as `facts.real`; the ablation chart and the neuron
heatmap widgets receive their slices of the export from here. The baseline row is ablation.json's
seeds plus those trained for it later (course/facts/_baseline.py). The lesson's readings of the
FFN experiment (every comparison, by seeds protocol v2) are facts.ffn (course/facts/ffn.py).
"""
from . import _baseline


def largest_power_of_two_factor(n):
    """largest_power_of_two_factor(688) -> 16 (688 = 43 x 16)"""
    return n & -n


def ffn_shapes(d, d_ff, d_ff_linear):
    """Per-layer FFN sizes: SwiGLU's three d x d_ff matrices, the linear control's two d x d_ff_linear,
    the 256 x 256 map those two multiply into, and the plain two-matrix FFN 4d wide."""
    swiglu = 3 * d * d_ff
    linear = 2 * d * d_ff_linear
    plain_4d = 2 * d * 4 * d
    multiple = largest_power_of_two_factor(d_ff)
    return {"swiglu_per_layer": swiglu, "linear_per_layer": linear, "linear_map_numbers": d * d,
            "plain_4d_per_layer": plain_4d, "swiglu_over_plain_4d": swiglu / plain_4d - 1,
            "eight_thirds": 8 * d / 3, "d_ff_multiple": multiple, "d_ff_units": d_ff // multiple,
            # True when d_ff is the multiple of `multiple` nearest to 8d/3 (688 for d = 256).
            "d_ff_is_nearest_multiple": round(8 * d / 3 / multiple) * multiple == d_ff}


def neuron_model_facts(neurons, ablation):
    """The checkpoint the heatmap reads, against the ablation's run of the same variant and seed."""
    m = neurons["model"]
    run = next(v for v in ablation["variants"] if v["name"] == m["variant"])
    committed = dict(zip(run["seeds"], run["val_losses"])).get(m["seed"])
    differs = sorted(k for k in m["train_config"].keys() | ablation["train_config"].keys()
                     if m["train_config"].get(k) != ablation["train_config"].get(k))
    return {"variant": m["variant"], "seed": m["seed"], "val_loss": m["val_loss"], "train_loss": m["train_loss"],
            "precision": m["precision"], "fp32": m["precision"] == "fp32",
            "committed_val_loss": committed, "same_settings": not differs, "settings_differ": differs,
            "command": neurons["command"], "date": neurons["date"],
            "select_chapters": neurons["split"]["select_chapters"], "read_chapters": neurons["split"]["read_chapters"]}


# The corpus's books by file name (../shared/corpus/README.md), in the characters the texts use.
BOOK_TITLES = {"sanguo-yanyi.txt": "三國演義", "shuihu-zhuan.txt": "水滸傳", "xiyou-ji.txt": "西遊記",
               "honglou-meng.txt": "紅樓夢", "yushi-mingyan.txt": "喻世明言", "jingshi-tongyan.txt": "警世通言",
               "xingshi-hengyan.txt": "醒世恆言"}


def books(card):
    """Per book of the model card's corpus: title, file, sha256, chars and its split (chapters, tokens).
    A card before the seven-book edition has one book."""
    files = card["corpus"].get("files") or [card["corpus"]]
    return [{**f, "title": BOOK_TITLES.get(f["file"], f["file"]), "split": book_split(card, f["file"])} for f in files]


def book_split(card, file):
    """The split of one book (its chapters and tokens). A model card before the seven-book
    edition (schema 2) has one book, described by the split itself."""
    books = card["split"].get("books")
    if not books:
        return card["split"]
    return next((b for b in books if b["file"] == file), books[0])


def real_model_facts(card, ablation, neurons):
    """Numbers the lesson quotes about our model, and the data its two widgets draw."""
    arch = card["architecture"]
    variants = {v["name"]: v for v in ablation["variants"]}
    return {
        "name": card["name"],
        "date": card["date"],
        "n_layer": arch["n_layer"],
        "d_model": arch["d_model"],
        "d_ff": arch["d_ff"],
        "n_head": arch["n_head"],
        "vocab_size": arch["vocab_size"],
        "block_size": arch["block_size"],
        "init_std": arch["init_std"],
        # GPT-2's rule as lab/model.py applies it (init_std / sqrt(2 * n_layer)), recorded by the export.
        "residual_init_std": arch["residual_init_std"],
        "card": card,
        "variants": variants,
        "layer_number": neurons["layer"]["number"],
        "shapes": ffn_shapes(arch["d_model"], arch["d_ff"], variants["linear_ffn"]["d_ff"]),
        "neuron_model": neuron_model_facts(neurons, ablation),
        "ablation": {
            "variants": ablation["variants"],  # the widget's page_params keeps what the page needs
            "references": ablation["references"],
            "metric": ablation["metric"],
            "tokens_per_run": ablation["tokens_per_run"],
            "date": card["date"],
        },
        # The training set's size and how often it was read (facts.ffn's fit reading has them too).
        "train_tokens": card["split"]["train_tokens"],
        "epochs": card["training"]["epochs"],
        "val_chapters": book_split(card, neurons["corpus"]["file"])["val_chapters"],
        "neurons": neurons,
        "books": books(card),
        "heat_book": BOOK_TITLES.get(neurons["corpus"]["file"], neurons["corpus"]["file"]),
    }


def facts(data):
    """facts.real, or None before lab/ has exported (the lesson then leaves its section out)."""
    if "real-model/model-card" not in data:
        return {"real": None}
    return {"real": real_model_facts(data["real-model/model-card"], _baseline.ablation(data),
                                     data["real-model/neurons"])}
