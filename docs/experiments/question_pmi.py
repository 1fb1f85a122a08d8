"""Does the embedded model's reading of the question tell an unanswerable question from an
answerable one? (Run from the repository root.)

    python docs/experiments/question_pmi.py [--article "The Legend of Zelda: Twilight Princess"]

A crowd-written unanswerable question is written from its passage with one part changed: a word
made its opposite, a name or number swapped, a condition the passage never sets. The passage then
predicts most of the question, and not that part. For each question of the dev article that holds
unanswerable questions, the base model (its 8-bit reading copy) scores each token of
the question twice: after the sentences the adapter would read ("Passage: ...\\nQuestion:") and
after "Question:" alone. A token's gain is the difference of the two log probabilities: what the
passage told the model about it. Reported: how well each summary of the gains separates the
unanswerable questions (ROC AUC, the unanswerable side scored low), beside the adapter's own
doubt, and both in a logistic regression scored in five folds of the article's questions.
No word of a passage is a feature; only the model's probabilities.
"""

import argparse
import json
from pathlib import Path

import numpy as np
from sklearn.linear_model import LogisticRegression
from sklearn.metrics import roc_auc_score
from sklearn.model_selection import StratifiedKFold, cross_val_predict

from deltaseek.bundled import labeled_set
from deltaseek.optimize import train_adapter
from deltaseek.programs.agent.learned_reader.prompt import best_sentences
from deltaseek.programs.lm.gguf_file import find_smollm2_gguf
from deltaseek.programs.lm.llamacpp import default_threads, import_llama_cpp
from deltaseek.programs.lm.prefix_cache import clear_memory
from deltaseek.programs.lm.reading_copy import q8_copy

ADAPTER = "programs/compiled/reader-adapter.gguf"


def token_log_probs(llama, prefix: str, text: str) -> tuple[list[int], np.ndarray]:
    """The tokens of `text` after `prefix`, and the model's log probability of each."""
    head = llama.tokenize(prefix.encode(), add_bos=False, special=False)
    tail = llama.tokenize(text.encode(), add_bos=False, special=False)
    llama.reset()
    clear_memory(llama)
    llama.eval(head + tail)
    logits = np.array(llama.scores[len(head) - 1:len(head) + len(tail) - 1], dtype=np.float64)
    logits -= logits.max(axis=1, keepdims=True)
    log_probs = logits - np.log(np.exp(logits).sum(axis=1, keepdims=True))
    return tail, log_probs[np.arange(len(tail)), tail]


def gains(llama, question: str, passage: str) -> dict[str, float]:
    """Summaries of what the passage adds to the model's probability of each question token."""
    text = " " + " ".join(question.split())
    tokens, alone = token_log_probs(llama, "Question:", text)
    _, after = token_log_probs(llama, f"Passage: {passage}\nQuestion:", text)
    gain = after - alone
    word_starts = [i for i, t in enumerate(tokens) if llama.detokenize([t]).startswith(b" ")] or [0]
    return {"mean_gain": float(gain.mean()), "min_gain": float(gain.min()),
            "least_gains_3": float(np.sort(gain)[:3].mean()),
            "min_word_start_gain": float(gain[word_starts].min()),
            "after_mean": float(after.mean()), "after_min": float(after.min())}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--article", default="The Legend of Zelda: Twilight Princess",
                        help="the dev article (group) whose questions are read")
    parser.add_argument("--out", help="a JSONL file for each question's figures")
    parser.add_argument("--limit", type=int, help="only the first questions (a trial run)")
    args = parser.parse_args()
    dataset = str(labeled_set("squad2_articles"))
    parts = train_adapter.dataset_examples([dataset])
    groups = {row["id"]: row.get("group") for row in map(json.loads, open(dataset, encoding="utf-8"))}
    dev = [ex for ex in parts["dev"] if groups.get(ex.id) == args.article]
    dev = dev[:args.limit] if args.limit else dev
    generate, batch = default_threads()
    base = str(q8_copy(find_smollm2_gguf()))
    models = {"": {}, "with_adapter_": {"lora_path": ADAPTER}}  # the base, and the base as the adapter reads
    rows = [{"id": ex.id, "unanswerable": not ex.answers, "held": ex.held} for ex in dev]
    for prefix, extra in models.items():
        llama = import_llama_cpp().Llama(model_path=base, n_ctx=1024, logits_all=True, n_threads=generate,
                                         n_threads_batch=batch, verbose=False, seed=0, **extra)
        for row, ex in zip(rows, dev):
            passage = best_sentences(ex.question, ex.facts)
            row.update({prefix + k: v for k, v in gains(llama, ex.question, passage.text).items()})
        del llama
    readings = {ex.id: doubt for ex, _, doubt in train_adapter.runtime_readings(
        Path(ADAPTER), dev)}
    for row in rows:
        row["adapter_doubt"] = readings.get(row["id"], 1.0)
    if args.out:
        with open(args.out, "w", encoding="utf-8") as out:
            out.writelines(json.dumps(row) + "\n" for row in rows)
    unanswerable = np.array([row["unanswerable"] for row in rows])
    print(f"{len(rows)} questions of {args.article}, {unanswerable.sum()} unanswerable")
    names = [k for k in rows[0] if k not in ("id", "unanswerable", "held")]
    for name in names:
        values = np.array([row[name] for row in rows])
        sign = 1 if name == "adapter_doubt" else -1  # a low gain, a high doubt: unanswerable
        print(f"  {name}: AUC {roc_auc_score(unanswerable, sign * values):.3f}")
    folds = StratifiedKFold(5, shuffle=True, random_state=0)
    base_names = [n for n in names if not n.startswith("with_adapter_") and n != "adapter_doubt"]
    adapter_names = [n for n in names if n.startswith("with_adapter_")]
    for chosen in (["adapter_doubt"], ["adapter_doubt", *base_names], ["adapter_doubt", *adapter_names], names):
        x = np.array([[row[n] for n in chosen] for row in rows])
        x = (x - x.mean(axis=0)) / (x.std(axis=0) + 1e-9)
        p = cross_val_predict(LogisticRegression(), x, unanswerable, cv=folds, method="predict_proba")[:, 1]
        print(f"  logistic regression over {', '.join(chosen)}: AUC {roc_auc_score(unanswerable, p):.3f} (5 folds)")


if __name__ == "__main__":
    main()
