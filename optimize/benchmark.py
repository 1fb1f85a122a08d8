"""Speed and cost figures, printed side by side from one run (never asserted in tests).

    deltaseek bench [--skip-agents] [--sizes 1000 100000]

1. The embedded model: load time, tokens/s free and under a JSON-schema grammar.
2. The BM25 index: build time and query latency at 1k and 100k passages.
3. DeltaSeek vs vanilla dspy.ReAct on the seed questions, same model, same corpus.
"""

from __future__ import annotations

import argparse
import random
import statistics
import time

import dspy
from dspy import lm15

from deltaseek.bundled import SEED_QUESTIONS, bundled_corpora
from deltaseek.programs.agent import DeltaSeek
from deltaseek.programs.index import CorpusIndex, Passage, read_corpus
from deltaseek.programs.lm import LlamaCppEngine, make_lm
from deltaseek.programs.tools import LocalCorpusSearch


def bench_model(runs: int = 3) -> None:
    started = time.perf_counter()
    engine = LlamaCppEngine()
    engine._model()
    print(f"embedded model load: {time.perf_counter() - started:.2f} s")
    schema = {"type": "object", "required": ["answer", "facts"], "additionalProperties": False,
              "properties": {"answer": {"type": "string"}, "facts": {"type": "array", "items": {"type": "string"}}}}
    prompt = "Write a short paragraph about the history of the Ohio River and its cities."
    for label, config in (("free text", lm15.Config(max_tokens=128, temperature=0.0)),
                          ("JSON grammar", lm15.Config(max_tokens=128, temperature=0.0,
                                                       response_format={"type": "json_schema", "schema": schema}))):
        rates = []
        for _ in range(runs):
            t = time.perf_counter()
            response = engine.complete(lm15.Request(model="embedded", messages=(lm15.Message.user(prompt),), config=config))
            rates.append(response.usage.output_tokens / (time.perf_counter() - t))
        print(f"embedded model, {label}: {statistics.median(rates):.1f} generated tokens/s (median of {runs}, "
              f"prompt included in the time)")


def synthetic_passages(n: int) -> list[Passage]:
    """n passages made by resampling sentences of the bundled corpus (deterministic)."""
    sentences = [s for path in bundled_corpora() for p in read_corpus(path) for s in p.text.split(". ") if s]
    rng = random.Random(0)
    return [Passage(id=f"syn-{i}", title=f"Synthetic {i}", text=". ".join(rng.sample(sentences, 3))) for i in range(n)]


def bench_index(sizes: list[int], queries: int = 50) -> None:
    rng = random.Random(1)
    words = "ohio governor ruby creator times building ollama llama stars river census film music war".split()
    probes = [" ".join(rng.sample(words, 3)) for _ in range(queries)]
    for n in sizes:
        passages = synthetic_passages(n)
        index = CorpusIndex.build(passages)
        t = time.perf_counter()
        for q in probes:
            index.search(q, k=3)
        latency = (time.perf_counter() - t) / queries * 1000
        print(f"BM25 index, {n:>7,} passages: build {index.build_seconds:.2f} s, query {latency:.2f} ms (mean of {queries})")


def bench_agents() -> None:
    index = CorpusIndex.open()
    tool = LocalCorpusSearch(index)
    lm = make_lm(cache=False)

    def search_corpus(query: str) -> str:
        """Search the local document collection."""
        result = tool(query)
        return "\n".join(f"{h.title}: {h.text[:200]}" for h in result.hits) or "no results"

    programs = {
        "deltaseek": (DeltaSeek([tool]), dspy.JSONAdapter()),
        "dspy.ReAct": (dspy.ReAct("question -> answer", tools=[search_corpus], max_iters=8), dspy.ChatAdapter()),
    }
    print(f"\n{'question':<44} {'program':<11} {'ok':<4} {'lm calls':>8} {'searches':>8} {'seconds':>8}  answer")
    for question in SEED_QUESTIONS:
        for name, (program, adapter) in programs.items():
            before = len(lm.history)
            t = time.perf_counter()
            searches = "-"
            with dspy.context(lm=lm, adapter=adapter):
                try:
                    pred = program(question=question)
                    answer, ok = pred.answer, "yes"
                    if name == "deltaseek":
                        searches = str(sum(c["executed"] for c in pred.tool_calls))
                except Exception as exc:
                    answer, ok = f"{type(exc).__name__}: {str(exc)[:60]}", "no"
            seconds = time.perf_counter() - t
            print(f"{question[:43]:<44} {name:<11} {ok:<4} {len(lm.history) - before:>8} {searches:>8} "
                  f"{seconds:>8.1f}  {answer[:70]!r}")


def add_options(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--sizes", type=int, nargs="+", default=[1_000, 100_000], help="index sizes in passages")
    parser.add_argument("--skip-agents", action="store_true", help="only the model and index figures")


def run(args: argparse.Namespace) -> int:
    bench_model()
    bench_index(args.sizes)
    if not args.skip_agents:
        bench_agents()
    return 0


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    add_options(parser)
    raise SystemExit(run(parser.parse_args()))
