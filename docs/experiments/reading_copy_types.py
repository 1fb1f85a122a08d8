"""The reading copy with the adapter folded in, its matrices stored in 8 bits (Q8_0, shipped) or in
4 bits (Q4_0, which llama.cpp's CPU backend repacks for its matrix-matrix kernels on x86 with
AVX2): what a reading and its prompt cost on each, and whether the span is the same.

    python docs/experiments/reading_copy_types.py time [KIND...]   # 20 scored SQuAD questions, each copy in turns

KIND is a gguf quantization type name (default: Q8_0 Q4_0). Each question is read with every copy
in turn, twice, so the machine's drift falls on all of them alike.
"""

from __future__ import annotations

import argparse
import json
import statistics
import tempfile
import time
from pathlib import Path
from types import SimpleNamespace
from unittest import mock

from deltaseek.programs.agent.learned_reader import adapter as adapter_module
from deltaseek.programs.agent.learned_reader.adapter import ReaderAdapter
from deltaseek.programs.index import CorpusIndex
from deltaseek.programs.lm import reading_copy
from deltaseek.programs.lm.gguf_file import find_smollm2_gguf

ADAPTER = Path(__file__).resolve().parents[2] / "programs" / "compiled" / "reader-adapter.gguf"
SQUAD = Path(__file__).resolve().parents[2] / "datasets" / "squad2_articles.jsonl"


def folded_copy(kind_name: str) -> Path:
    """The adapter folded into the base, every matrix the 8-bit copy requantizes stored as `kind_name`."""
    from gguf import GGMLQuantizationType, GGUFReader

    base = find_smollm2_gguf()
    if kind_name == "Q8_0":
        return reading_copy.adapted_copy(base, ADAPTER)
    kind = GGMLQuantizationType[kind_name]
    shipped = reading_copy.changed_type

    def stored_as(tensor):
        chosen = shipped(tensor)
        return kind if chosen == GGMLQuantizationType.Q8_0 else chosen

    target = Path(tempfile.mkdtemp(prefix=f"fold-{kind_name}-")) / f"folded-{kind_name}.gguf"
    with mock.patch.object(reading_copy, "changed_type", stored_as):
        return reading_copy.write_reading_copy(GGUFReader(base), target, reading_copy.lora_deltas(ADAPTER))


def reader_on(weights: Path) -> ReaderAdapter:
    with mock.patch.object(ReaderAdapter, "weights", lambda self: {"model_path": str(weights)}):
        reader = ReaderAdapter(ADAPTER)
        reader._model()
    return reader


def scored_facts(count: int = 20) -> list[tuple[str, list]]:
    index = CorpusIndex.open()
    rows = [json.loads(line) for line in SQUAD.open()]
    questions = [r["question"] for r in rows if r["split"] == "test"][::50][:count]
    return [(q, [SimpleNamespace(title=s.passage.title, text=s.passage.text, source=s.passage.id)
                 for s in index.search(q, k=6)]) for q in questions]


def reading_times(kinds: list[str]) -> None:
    readers = {kind: reader_on(folded_copy(kind)) for kind in kinds}
    asked = scored_facts()
    seconds = {kind: [] for kind in kinds}
    prompt = {kind: [] for kind in kinds}
    spans = {kind: [] for kind in kinds}
    evaluate = adapter_module.evaluate_prompt
    for round_ in range(2):
        for number, (question, facts) in enumerate(asked):
            order = kinds if (number + round_) % 2 == 0 else list(reversed(kinds))
            for kind in order:
                reader = readers[kind]
                reader._readings.clear()

                def timed(*args, kind=kind):
                    started = time.perf_counter()
                    rows = evaluate(*args)
                    prompt[kind].append(time.perf_counter() - started)
                    return rows

                with mock.patch.object(adapter_module, "evaluate_prompt", timed):
                    started = time.perf_counter()
                    reading = reader.read(question, facts, bound=1.01)
                    seconds[kind].append(time.perf_counter() - started)
                if round_ == 0:
                    spans[kind].append(reading.span if reading else None)
    for kind in kinds:
        same = sum(a == b for a, b in zip(spans[kinds[0]], spans[kind]))
        paired = [b - a for a, b in zip(seconds[kinds[0]], seconds[kind])]
        print(f"{kind}: a reading {statistics.median(seconds[kind]):.3f} s median, its prompt "
              f"{statistics.median(prompt[kind]):.3f} s; paired against {kinds[0]} {statistics.median(paired):+.3f} s; "
              f"span the same as {kinds[0]}'s: {same} of {len(asked)}")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("what", choices=("time",))
    parser.add_argument("kinds", nargs="*", default=["Q8_0", "Q4_0"])
    reading_times(parser.parse_args().kinds)


if __name__ == "__main__":
    main()
