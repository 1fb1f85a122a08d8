"""Speed and cost figures, printed side by side from one run (never asserted in tests).

    deltaseek bench [--skip-agents] [--sizes 1000 100000]
    deltaseek bench --speed --sphinx sphinx:HOST:PORT/front --sphinx-shard sphinx:HOST:PORT/shard ...

1. The embedded model: load time, tokens/s free and under a JSON-schema grammar.
2. The BM25 index: build time and query latency at 1k and 100k passages.
3. The seed questions on the embedded model with prefix reuse off and on: LM calls, prompt,
   restored and generated tokens, seconds; medians, their ratio, and llama.cpp's token rates.
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
from deltaseek.programs.agent import DeltaSeek, run_question
from deltaseek.programs.index import CorpusIndex, Passage, read_corpus
from deltaseek.errors import UsageError
from deltaseek.programs.lm import LlamaCppEngine, adapter_for, embedded_engine, find_smollm2_gguf, make_lm
from deltaseek.programs.lm.llamacpp import default_threads, import_llama_cpp
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


def bench_threads(configs: tuple[tuple[int, int], ...] = ((1, 512), (2, 512), (2, 256), (2, 1024)),
                  prompt_tokens: int = 1000, generate: int = 64) -> list[dict]:
    """llama.cpp's own timings for prompt evaluation and generation at each (threads, n_batch):
    the figures `default_threads` was chosen by."""
    llama_cpp = import_llama_cpp()
    path = str(find_smollm2_gguf())
    text = " ".join(p.text for corpus in bundled_corpora() for p in read_corpus(corpus))
    rows = []
    for threads, batch in configs:
        llama = llama_cpp.Llama(model_path=path, n_ctx=4096, n_threads=threads, n_threads_batch=threads, n_batch=batch,
                      n_ubatch=min(batch, 512), verbose=False, seed=0)
        tokens = llama.tokenize(text.encode())[:prompt_tokens]
        llama.create_completion(tokens[:16], max_tokens=1)  # warm-up
        llama_cpp.llama_perf_context_reset(llama.ctx)
        llama.reset()
        llama.create_completion(tokens, max_tokens=generate, temperature=0.0)
        perf = llama_cpp.llama_perf_context(llama.ctx)
        rows.append({"threads": threads, "n_batch": batch, "prompt_tokens_per_s": perf.n_p_eval / perf.t_p_eval_ms * 1000,
                     "generated_tokens_per_s": perf.n_eval / max(perf.t_eval_ms, 1e-9) * 1000})
        del llama
    print(f"{'threads':>7} {'n_batch':>7} {'prompt tok/s':>12} {'generate tok/s':>14}   ({prompt_tokens}-token prompt, "
          f"{generate} tokens generated; deltaseek uses {default_threads()} thread(s), n_batch 512)")
    for r in rows:
        print(f"{r['threads']:>7} {r['n_batch']:>7} {r['prompt_tokens_per_s']:>12.0f} {r['generated_tokens_per_s']:>14.0f}")
    return rows


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
        engine.forget_prefixes()
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
    bench_threads()
    bench_index(args.sizes)
    if not args.skip_agents:
        bench_seed_speed()
    return 0


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    add_options(parser)
    raise SystemExit(run(parser.parse_args()))
