"""Replay dev questions through the shipped reader adapter: each reading and its seconds.

    python docs/experiments/reader_decoding.py results/decoding/plain.json
    python docs/experiments/reader_decoding.py results/decoding/flash.json --flash-attention --against results/decoding/plain.json

Reads 100 dev questions of SQuAD's articles and 82 of HotpotQA's (`train_adapter.dev_sample`, seed
1), each from its six passages, with no bound (every span read), one at a time on a loaded adapter
with its cache of readings emptied. With `--against`, prints how many readings (span and
probabilities) and spans are the same as another run's, and the median paired difference in seconds.
"""

from __future__ import annotations

import argparse
import json
import statistics
import time
from pathlib import Path
from unittest import mock

import llama_cpp

from deltaseek.optimize.train_adapter import dataset_examples, dev_sample
from deltaseek.programs.agent.learned_reader.adapter import ReaderAdapter
from deltaseek.programs.agent.learned_reader.model import shipped_reader

SETS = {"datasets/squad2_articles.jsonl": 100, "datasets/hotpotqa.jsonl": 100}


def readings(flash_attention: bool) -> list[dict]:
    dev = [ex for dataset, n in SETS.items() for ex in dev_sample(dataset_examples([dataset])["dev"], n, 1)]
    llama = llama_cpp.Llama
    with mock.patch.object(llama_cpp, "Llama", lambda *a, **k: llama(*a, **k, flash_attn=flash_attention)):
        adapter = ReaderAdapter(shipped_reader().adapter)
        adapter.read(dev[0].question, dev[0].facts, bound=1.01)  # loads the model
        rows = []
        for ex in dev:
            adapter._readings.clear()
            start = time.perf_counter()
            r = adapter.read(ex.question, ex.facts, bound=1.01)
            rows.append({"id": ex.id, "seconds": time.perf_counter() - start, "reading": None if r is None else
                         [r.span, r.answer_probability, r.not_stated_probability, r.start_probability]})
    return rows


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("out")
    parser.add_argument("--flash-attention", action="store_true")
    parser.add_argument("--against")
    args = parser.parse_args()
    rows = readings(args.flash_attention)
    Path(args.out).parent.mkdir(parents=True, exist_ok=True)
    Path(args.out).write_text(json.dumps(rows), encoding="utf-8")
    print(f"{len(rows)} readings: median {statistics.median(r['seconds'] for r in rows):.3f} s")
    if args.against:
        other = {r["id"]: r for r in json.loads(Path(args.against).read_text(encoding="utf-8"))}
        pairs = [(other[r["id"]], r) for r in rows if r["id"] in other]
        same = sum(a["reading"] == b["reading"] for a, b in pairs)
        spans = sum((a["reading"] or [None])[0] == (b["reading"] or [None])[0] for a, b in pairs)
        added = statistics.median(b["seconds"] - a["seconds"] for a, b in pairs)
        print(f"against {args.against}: {same} of {len(pairs)} readings the same, {spans} spans; "
              f"median paired difference {added:+.3f} s")


if __name__ == "__main__":
    main()
