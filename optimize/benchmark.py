"""Speed and cost figures, printed side by side from one run (never asserted in tests).

    deltaseek bench [--skip-agents] [--sizes 1000 100000]
    deltaseek bench --speed --sphinx sphinx:HOST:PORT/front --sphinx-shard sphinx:HOST:PORT/shard ...

1. The embedded model: load time, tokens/s free and under a JSON-schema grammar.
2. The BM25 index: build time and query latency at 1k and 100k passages.
3. DeltaSeek vs vanilla dspy.ReAct on the seed questions, same model, same corpus.
With --sphinx, only this instead: query latency of the in-process index and of a distributed
Sphinx/Manticore index, side by side, at 10k and 100k passages (`bench_sphinx`).
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
from deltaseek.errors import UsageError
from deltaseek.programs.tools import LocalCorpusSearch, SphinxSearch, SphinxSettings, load_passages, parse_target
from deltaseek.programs.tools.sphinx import SphinxClient


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


def probe_queries(queries: int) -> list[str]:
    """The same `queries` three-word queries on every run."""
    rng = random.Random(1)
    words = "ohio governor ruby creator times building ollama llama stars river census film music war".split()
    return [" ".join(rng.sample(words, 3)) for _ in range(queries)]


def bench_index(sizes: list[int], queries: int = 50) -> None:
    probes = probe_queries(queries)
    for n in sizes:
        passages = synthetic_passages(n)
        index = CorpusIndex.build(passages)
        t = time.perf_counter()
        for q in probes:
            index.search(q, k=3)
        latency = (time.perf_counter() - t) / queries * 1000
        print(f"BM25 index, {n:>7,} passages: build {index.build_seconds:.2f} s, query {latency:.2f} ms (mean of {queries})")


def query_latencies(tool, probes: list[str]) -> list[float]:
    """Milliseconds per call of the tool (as the agent calls it), after one warm-up call."""
    tool(probes[0])
    latencies = []
    for q in probes:
        t = time.perf_counter()
        tool(q)
        latencies.append((time.perf_counter() - t) * 1000)
    return latencies


def bench_sphinx(front: str, shards: list[str], sizes: list[int], queries: int = 200) -> None:
    """Query latency of the in-process BM25 tool and of the sphinx tool on a distributed index,
    side by side, on the same synthetic passages and queries. The shards are emptied first
    (TRUNCATE RTINDEX), then filled size by size (each size resumes the previous load)."""
    target, shard_targets = parse_target(front), [parse_target(s) for s in shards]
    settings = SphinxSettings.from_env()
    for shard in shard_targets:
        client = SphinxClient(shard, settings)
        client.run([(f"TRUNCATE RTINDEX {shard.index}", None)])
        client.close()
    probes = probe_queries(queries)
    remote = SphinxSearch(target, settings=settings)
    print(f"{'passages':>9}  {'in-process BM25':>22}  {f'sphinx, {len(shards)} shard(s)':>22}  {'sphinx load':>11}")
    print(f"{'':>9}  {'mean / p95 ms/query':>22}  {'mean / p95 ms/query':>22}")
    for n in sorted(sizes):
        passages = synthetic_passages(n)
        t = time.perf_counter()
        load_passages(passages, shard_targets, settings)
        load_seconds = time.perf_counter() - t
        here = query_latencies(LocalCorpusSearch(CorpusIndex.build(passages)), probes)
        there = query_latencies(remote, probes)
        cells = [f"{statistics.mean(x):.2f} / {statistics.quantiles(x, n=20)[-1]:.2f}" for x in (here, there)]
        print(f"{n:>9,}  {cells[0]:>22}  {cells[1]:>22}  {load_seconds:>9.1f} s")
    print(f"({queries} three-word queries each; both through the search tool, as the agent calls it; "
          f"sphinx at {target})")


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
    parser.add_argument("--sphinx", metavar="sphinx:HOST:PORT/INDEX",
                        help="instead: in-process vs this distributed Sphinx/Manticore index, query latency side by side")
    parser.add_argument("--sphinx-shard", action="append", default=[], metavar="sphinx:HOST:PORT/INDEX",
                        help="a real-time shard behind --sphinx (repeatable); the benchmark EMPTIES and fills it")
    parser.add_argument("--sphinx-sizes", type=int, nargs="+", default=[10_000, 100_000],
                        help="passages for the --sphinx comparison (default: 10000 100000)")


def run(args: argparse.Namespace) -> int:
    if args.sphinx:
        if not args.sphinx_shard:
            raise UsageError("--sphinx needs --sphinx-shard for each shard behind it (the benchmark fills them)")
        bench_sphinx(args.sphinx, args.sphinx_shard, args.sphinx_sizes)
        return 0
    bench_model()
    bench_index(args.sizes)
    if not args.skip_agents:
        bench_agents()
    return 0


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    add_options(parser)
    raise SystemExit(run(parser.parse_args()))
