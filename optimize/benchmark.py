"""Speed and cost figures, printed side by side from one run (never asserted in tests).

    deltaseek bench [--skip-agents] [--sizes 1000 100000]

1. The embedded model: load time, tokens/s free and under a JSON-schema grammar.
2. The BM25 index: build time and query latency at 1k and 100k passages.
3. The seed questions on the embedded model with prefix reuse off and on: LM calls, prompt,
   restored and generated tokens, seconds; medians, their ratio, and llama.cpp's token rates.
"""

from __future__ import annotations

import argparse
import random
import statistics
import time

import dspy
from dspy import lm15

from deltaseek.bundled import SEED_QUESTIONS, bundled_corpora
from deltaseek.programs.agent import DeltaSeek, run_question
from deltaseek.programs.index import CorpusIndex, Passage, read_corpus
from deltaseek.programs.lm import LlamaCppEngine, adapter_for, embedded_engine, make_lm
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


def bench_seed_speed(questions: tuple[str, ...] = SEED_QUESTIONS) -> list[dict]:
    """Each seed question on the embedded model, DSPy's cache off, with prefix reuse off and then
    on (the saved prefixes cleared first, so the first question starts cold). Prints one table
    side by side and returns its rows."""
    engine = embedded_engine()
    lm = make_lm(cache=False)
    index = CorpusIndex.open()
    rows = []
    for reuse in (False, True):
        engine.reuse_prefixes = reuse
        engine.prefix_states.clear()
        engine.reset_stats()
        for question in questions:
            program = DeltaSeek([LocalCorpusSearch(index)])
            with dspy.context(lm=lm, adapter=adapter_for(lm)):
                record = run_question(program, question)
            stats = engine.reset_stats()
            rows.append({"question": question, "prefix_reuse": reuse, "answer": record["answer"],
                         "steps": record["steps"], "lm_calls": record["lm_calls"], "prompt_tokens": stats.prompt_tokens,
                         "restored_tokens": stats.restored_tokens, "generated_tokens": stats.generated_tokens,
                         "seconds": record["seconds"], "prompt_eval_tokens": stats.prompt_eval_tokens,
                         "prompt_eval_ms": stats.prompt_eval_ms, "generate_ms": stats.generate_ms})
    print(format_speed_table(rows))
    return rows


def format_speed_table(rows: list[dict]) -> str:
    """Per question, off and on side by side; then medians, the ratio and llama.cpp's token rates."""
    off = {r["question"]: r for r in rows if not r["prefix_reuse"]}
    on = {r["question"]: r for r in rows if r["prefix_reuse"]}
    lines = ["| seed question | steps | LM calls | prompt tokens | restored (on) | generated | s (reuse off) | s (reuse on) |",
             "|---|---:|---:|---:|---:|---:|---:|---:|"]
    for question, a in off.items():
        b = on.get(question, a)
        lines.append(f"| {question[:60]} | {b['steps']} | {b['lm_calls']} | {b['prompt_tokens']:,} | "
                     f"{b['restored_tokens']:,} | {b['generated_tokens']:,} | {a['seconds']:.1f} | {b['seconds']:.1f} |")
    median_off = statistics.median(r["seconds"] for r in off.values())
    median_on = statistics.median(r["seconds"] for r in on.values()) if on else median_off
    same = all(on[q]["answer"] == off[q]["answer"] for q in on)
    lines.append(f"\nmedian seconds per question: {median_off:.1f} with prefix reuse off, {median_on:.1f} on "
                 f"({median_off / median_on:.1f}x); answers identical off and on: {'yes' if same else 'NO'}")
    for label, part in (("off", off.values()), ("on", on.values())):
        evaluated = sum(r["prompt_eval_tokens"] for r in part)
        prompt_ms = sum(r["prompt_eval_ms"] for r in part)
        generated = sum(r["generated_tokens"] for r in part)
        generate_ms = sum(r["generate_ms"] for r in part)
        lines.append(f"reuse {label}: prompt evaluation {evaluated / max(prompt_ms, 1e-9) * 1000:.0f} tokens/s "
                     f"({evaluated:,} tokens evaluated), generation {generated / max(generate_ms, 1e-9) * 1000:.0f} tokens/s")
    return "\n".join(lines)


def add_options(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--sizes", type=int, nargs="+", default=[1_000, 100_000], help="index sizes in passages")
    parser.add_argument("--skip-agents", action="store_true", help="only the model and index figures, not the seed questions")


def run(args: argparse.Namespace) -> int:
    bench_model()
    bench_index(args.sizes)
    if not args.skip_agents:
        bench_seed_speed()
    return 0


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    add_options(parser)
    raise SystemExit(run(parser.parse_args()))
