"""Published configs: tests/data/families/published/<org>--<name>.config.json (saved verbatim from
the official repo's Hub page when the search tools held it) and cards.json: what each model card
states, the count every_tensor_params gives for the published config, and the 3 GiB limit."""

import json
import os

from family_common import OUT, PUBLISHED
from family_gpt_neox import neox_params


LIMIT_BYTES = 3 * 2 ** 30
DTYPE_BYTES = {"float32": 4, "bfloat16": 2, "float16": 2}

PYTHIA_CARD_TABLE = ("| Pythia model | Non-Embedding Params | Layers | Model Dim | Heads | "
                     "Batch Size | Learning Rate | Equivalent Models |")
PYTHIA_CARD_READ_AT = ("https://hf.898520.xyz/EleutherAI/pythia-70m-deduped-v0 (a copy of the "
                       "Pythia card)")
# (model, non-embedding params, layers, model dim) rows of that table, as the card prints them.
PYTHIA_CARD_ROWS = [("70M", 18915328, 6, 512), ("160M", 85056000, 12, 768),
                    ("410M", 302311424, 24, 1024), ("1.0B", 805736448, 16, 2048),
                    ("1.4B", 1208602624, 24, 2048), ("2.8B", 2517652480, 32, 2560)]

# What the search tools held of each model's card (card_wording verbatim, card_read_at where).
PUBLISHED_MODELS = [
    dict(repo="EleutherAI/pythia-70m", family="gpt_neox",
         card_wording=PYTHIA_CARD_TABLE + " | 70M | 18,915,328 | 6 | 512 | 8 | 2M | "
                                          "1.0 x 10-3 | — |",
         card_read_at=PYTHIA_CARD_READ_AT, card_params=18915328, card_counts="non-embedding",
         stated_total=70e6),
    dict(repo="EleutherAI/pythia-410m", family="gpt_neox",
         card_wording=PYTHIA_CARD_TABLE + " | 410M | 302,311,424 | 24 | 1024 | 16 | 4M | "
                                          "3.0 x 10-4 | OPT-350M |",
         card_read_at=PYTHIA_CARD_READ_AT, card_params=302311424, card_counts="non-embedding",
         stated_total=410e6),
    dict(repo="Qwen/Qwen3-0.6B", family="qwen3",
         card_wording="Number of Parameters: 0.6B (0.44B non-embedding)",
         card_read_at="https://docs.m5stack.com/en/stackflow/models/qwen3-0.6b (quoting the card; "
                      "the card page itself was not found)",
         card_params=600000000, card_counts="total", stated_total=0.6e9),
    dict(repo="google/gemma-3-270m", family="gemma3_text",
         card_wording='The "270m" in the gemma-3-270m model name represents the exact number of '
                      "parameters (270 million) while 0.3b is common way to round up for easier "
                      "reference.",
         card_read_at="https://huggingface.co/google/gemma-3-270m/discussions/1 (a Google org "
                      "reply; the card page itself was not found)",
         card_params=270000000, card_counts="total", stated_total=270e6),
    dict(repo="google/gemma-2-2b", family="gemma2", card_wording=None,
         card_read_at="not found (gated repo); keras-hub's gemma2_2b_en preset states params "
                      "2614341888 (https://github.com/keras-team/keras-hub/pull/1721.diff)",
         card_params=None, card_counts=None, stated_total=2614341888),
    dict(repo="allenai/OLMo-2-0425-1B", family="olmo2", card_wording=None,
         card_read_at="not found; the repo's file list (https://huggingface.co/allenai/"
                      "OLMo-2-0425-1B/tree/main) shows model-00001-of-00002.safetensors 4.98 GB "
                      "+ model-00002-of-00002.safetensors 956 MB",
         card_params=None, card_counts=None, stated_total=None, bytes_evidence=4.98e9 + 956e6),
    dict(repo="microsoft/Phi-3-mini-4k-instruct", family="phi3",
         card_wording="The Phi-3-Mini-4K-Instruct is a 3.8B parameters, lightweight, "
                      "state-of-the-art open model trained with the Phi-3 datasets",
         card_read_at="https://huggingface.co/microsoft/Phi-3-mini-4k-instruct",
         card_params=3800000000, card_counts="total", stated_total=3.8e9),
]


def published_path(repo):
    return os.path.join(PUBLISHED, repo.replace("/", "--") + ".config.json")


def pythia_card_check():
    """neox_params minus the embeddings for each row of Pythia's card table (intermediate 4 × model
    dim, GPT-NeoX's default): the card's non-embedding counts, exactly."""
    rows = []
    for model, stated, layers, dim in PYTHIA_CARD_ROWS:
        config = {"hidden_size": dim, "vocab_size": 0, "intermediate_size": 4 * dim,
                  "num_hidden_layers": layers}
        count = neox_params(config)
        assert count == stated, (model, count, stated)
        rows.append({"model": model, "card_non_embedding": stated, "reference": count})
    return rows


def write_cards(families):
    """cards.json: per published model, the card's statement, the reference count for the saved
    config (when it was found) and whether a 3 GiB parameter-byte limit refuses it."""
    entries = []
    for p in PUBLISHED_MODELS:
        path = published_path(p["repo"])
        entry = {
            "repo": p["repo"], "family": p["family"],
            "config_url": "https://huggingface.co/%s/blob/main/config.json" % p["repo"],
            "config_file": os.path.relpath(path, OUT), "config_found": os.path.exists(path),
            "card_url": "https://huggingface.co/%s" % p["repo"], "card_wording": p["card_wording"],
            "card_read_at": p["card_read_at"], "card_params": p["card_params"],
            "card_counts": p["card_counts"],
        }
        if entry["config_found"]:
            with open(path) as f:
                config = json.load(f)
            count = families[config["model_type"]]["params"](config)
            dtype = config.get("torch_dtype") or config.get("dtype")
            entry.update(reference_params=count, published_dtype=dtype,
                         param_bytes=count * DTYPE_BYTES[dtype],
                         refused_by_limit=count * DTYPE_BYTES[dtype] > LIMIT_BYTES,
                         limit_basis="reference count × published dtype")
        else:
            entry.update(reference_params=None, published_dtype=None, param_bytes=None)
            if p.get("bytes_evidence"):
                entry.update(refused_by_limit=p["bytes_evidence"] > LIMIT_BYTES,
                             limit_basis="the official file list's weight bytes, %.2f GB (float32 "
                                         "weights), against %d" % (p["bytes_evidence"] / 1e9,
                                                                   LIMIT_BYTES))
            elif p["stated_total"] is not None:
                # Whatever the published dtype, the weights are F16/BF16 (2 bytes) or F32 (4).
                low, high = p["stated_total"] * 2, p["stated_total"] * 4
                verdict = True if low > LIMIT_BYTES else False if high <= LIMIT_BYTES else None
                entry.update(refused_by_limit=verdict,
                             limit_basis="the stated ~%.3g parameters at 2 (F16/BF16) to 4 (F32) "
                                         "bytes each: %.2f to %.2f GB, limit %.2f GB"
                                         % (p["stated_total"], low / 1e9, high / 1e9,
                                            LIMIT_BYTES / 1e9))
            else:
                entry.update(refused_by_limit=None, limit_basis="no count or size found")
        entries.append(entry)
    cards = {
        "limit_bytes": LIMIT_BYTES,
        "counting": "every tensor the family's checkpoint holds as a parameter "
                    "(make-family-golden.py <family>_params; tied embeddings once; GPT-NeoX's "
                    "attention.bias / masked_bias / inv_freq buffers are not parameters)",
        "note": "No official config.json was found with the search tools (docs and pages "
                "corpora): only fine-tunes, duplicates and quantised copies of these repos, which "
                "this file does not use. Save a repo's config.json verbatim as config_file and "
                "rerun the generator to fill reference_params, published_dtype and param_bytes.",
        "pythia_card_table_check": pythia_card_check(),
        "models": entries,
    }
    os.makedirs(PUBLISHED, exist_ok=True)
    with open(os.path.join(PUBLISHED, "cards.json"), "w") as f:
        json.dump(cards, f, indent=2, sort_keys=True, ensure_ascii=False)
        f.write("\n")
    return entries
