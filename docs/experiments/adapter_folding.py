"""The reader adapter applied by llama.cpp as it reads, or folded into a copy of the base
(`reading_copy.adapted_copy`): where a reading's time goes, and what each way reads on dev.

    python docs/experiments/adapter_folding.py time          # 20 scored SQuAD questions: a reading's parts
    python docs/experiments/adapter_folding.py dev [--torch]  # 160 dev questions, each way (and torch's)

`dev` reads the shipped adapter's dev sample (`train_adapter.dev_sample`) three ways in one
process: llama.cpp applying the adapter to the 8-bit copy, folded in 8 bits (shipped), folded in
16 bits; `--torch` adds the adapter in torch on the dequantized base, as it was trained (the
`train` extra; greedy, not held to the passage, 10 minutes on 2 cores), and each way's distance
from it. Figures: docs/experiments/2026-11-29-the-adapter-folded-into-the-reading-copy.md.
"""

from __future__ import annotations

import argparse
import json
import statistics
import tempfile
import time
from dataclasses import replace
from pathlib import Path
from types import SimpleNamespace
from unittest import mock

import numpy as np

from deltaseek.optimize.adapter_figures import figures_at
from deltaseek.optimize.train_adapter import dataset_examples, dev_sample
from deltaseek.programs.agent.learned_reader import adapter as adapter_module
from deltaseek.programs.agent.learned_reader.adapter import ReaderAdapter
from deltaseek.programs.agent.learned_reader.prompt import best_sentences, held_answer, reader_prompt
from deltaseek.programs.index import CorpusIndex
from deltaseek.programs.lm import reading_copy
from deltaseek.programs.lm.gguf_file import find_smollm2_gguf

ADAPTER = Path(__file__).resolve().parents[2] / "programs" / "compiled" / "reader-adapter.gguf"
SQUAD = Path(__file__).resolve().parents[2] / "datasets" / "squad2_articles.jsonl"


def sixteen_bit_fold(base: Path) -> Path:
    """The adapter folded in, its changed matrices stored in 16 bits: the copy first shipped, then
    replaced by the 8-bit one (`reading_copy.changed_type`)."""
    from gguf import GGMLQuantizationType, GGUFReader

    def sixteen_bits(tensor):
        return GGMLQuantizationType.F32 if tensor.tensor_type == GGMLQuantizationType.F32 else GGMLQuantizationType.F16

    target = Path(tempfile.mkdtemp(prefix="fold-f16-")) / "folded-f16.gguf"
    with mock.patch.object(reading_copy, "changed_type", sixteen_bits):
        return reading_copy.write_reading_copy(GGUFReader(base), target, reading_copy.lora_deltas(ADAPTER))


def reader_on(weights: Path | None) -> ReaderAdapter:
    """The shipped adapter read on `weights` (a copy with it folded in), or applied by llama.cpp
    to the 8-bit copy (None)."""
    loaded = {"model_path": str(weights)} if weights else {"model_path": str(reading_copy.q8_copy(find_smollm2_gguf())),
                                                             "lora_path": str(ADAPTER)}
    with mock.patch.object(ReaderAdapter, "weights", lambda self: loaded):
        reader = ReaderAdapter(ADAPTER)
        reader._model()
    return reader


def reader_time() -> None:
    """A reading's parts on the first of every 50 scored SQuAD questions, 20 of them."""
    index = CorpusIndex.open()
    rows = [json.loads(line) for line in SQUAD.open()]
    questions = [r["question"] for r in rows if r["split"] == "test"][::50][:20]
    reader = reader_on(reading_copy.adapted_copy(find_smollm2_gguf(), ADAPTER))
    llama, parts = reader._llama, []
    evaluate = adapter_module.evaluate_prompt

    def timed_prompt(*args):
        started = time.perf_counter()
        rows = evaluate(*args)
        parts[-1]["prompt"] = time.perf_counter() - started
        return rows

    step = llama.eval

    def timed_step(tokens):
        started = time.perf_counter()
        step(tokens)
        parts[-1]["tokens"] += time.perf_counter() - started

    timing = mock.patch.object(adapter_module, "evaluate_prompt", timed_prompt)
    with timing, mock.patch.object(llama, "eval", timed_step):
        for question in questions:
            facts = [SimpleNamespace(title=s.passage.title, text=s.passage.text, source=s.passage.id)
                     for s in index.search(question, k=6)]
            passage = best_sentences(question, facts)
            prompt = reader_prompt(question, passage).encode()
            parts.append({"tokens": 0.0, "prompt_tokens": len(llama.tokenize(prompt, add_bos=False))})
            started = time.perf_counter()
            reader.read(question, facts, bound=1.01)
            parts[-1]["reading"] = time.perf_counter() - started
    for name in ("reading", "prompt", "tokens", "prompt_tokens"):
        print(f"{name}: median {statistics.median(p[name] for p in parts):.3f}, "
              f"range {min(p[name] for p in parts):.3f} to {max(p[name] for p in parts):.3f}")


def torch_readings(dev: list) -> list[tuple[str, float]]:
    import torch
    from peft import LoraConfig, get_peft_model

    from deltaseek.optimize.train_adapter import TARGET_MODULES, greedy_answer, load_base
    from deltaseek.programs.agent.learned_reader.adapter_file import BaseShape, read_lora_tensors

    base = find_smollm2_gguf()
    model, tokenizer = load_base(base)
    config = LoraConfig(r=16, lora_alpha=32, target_modules=list(TARGET_MODULES), lora_dropout=0.0)
    model = get_peft_model(model, config)
    stored = read_lora_tensors(ADAPTER, model.state_dict(), base, BaseShape.of(model.config))
    model.load_state_dict({k: torch.from_numpy(v) for k, v in stored.items()}, strict=False)
    model.eval()
    return [greedy_answer(model, tokenizer, reader_prompt(ex.question, best_sentences(ex.question, ex.facts)))
            for ex in dev]


def dev_readings(with_torch: bool) -> None:
    dev = dev_sample(dataset_examples([str(SQUAD)])["dev"])
    reference = torch_readings(dev) if with_torch else None
    base = find_smollm2_gguf()
    ways = {"applied to the 8-bit copy": None, "folded, 8-bit (shipped)": reading_copy.adapted_copy(base, ADAPTER),
            "folded, 16-bit": sixteen_bit_fold(base)}
    before = None
    for name, weights in ways.items():
        reader, rows, seconds = reader_on(weights), [], []
        for ex in dev:
            started = time.perf_counter()
            reading = reader.read(ex.question, ex.facts, bound=1.01)
            seconds.append(time.perf_counter() - started)
            held = held_answer(best_sentences(ex.question, ex.facts), ex.answers) is not None
            rows.append((replace(ex, held=held), (reading.span or "") if reading else "",
                         reading.doubt if reading else 1.0))
        print(f"{name}: a reading {statistics.median(seconds):.3f} s (median); at the file's bound",
              figures_at(rows, reader.info.bound))
        if before is None:
            before = [span for _, span, _ in rows]
        else:
            same = sum(a == span for a, (_, span, _) in zip(before, rows))
            print(f"  span the same as applied: {same} of {len(dev)}")
        if reference:
            distance = np.array([abs(doubt - theirs) for (_, _, doubt), (_, theirs) in zip(rows, reference)])
            same = sum(span.strip() == answer.strip() for (_, span, _), (answer, _) in zip(rows, reference))
            print(f"  doubt's distance from torch's: median {np.median(distance):.4f}, mean {distance.mean():.4f};"
                  f" answer the same as torch's: {same} of {len(dev)}")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("what", choices=("time", "dev"))
    parser.add_argument("--torch", action="store_true", help="dev: the adapter in torch too, as it was trained")
    args = parser.parse_args()
    reader_time() if args.what == "time" else dev_readings(args.torch)


if __name__ == "__main__":
    main()
