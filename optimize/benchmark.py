"""Speed and cost figures, printed side by side from one run (never asserted in tests).

    deltaseek bench [--skip-agents] [--sizes 1000 100000]
    deltaseek bench --speed --sphinx sphinx:HOST:PORT/front --sphinx-shard sphinx:HOST:PORT/shard ...

1. The embedded model: load time, tokens/s free and under a JSON-schema grammar.
2. The BM25 index: build time and query latency at 1k and 100k passages.
3. The seed questions on the embedded model with prefix reuse off and on: LM calls, prompt,
   restored and generated tokens, seconds; medians, their ratio, and llama.cpp's token rates.
4. The seed questions by path: the embedded model in-process and, with --lm and --api-base, the
   model behind that OpenAI-compatible server, question by question in turn; a row per path
   (answers, steps, LM calls, median seconds) and the ratio of the medians. `--paths-only`: only this.
With --sphinx, only this instead: query latency of the in-process index and of a distributed
Sphinx/Manticore index, side by side, at 10k and 100k passages (`bench_sphinx`).
"""

from __future__ import annotations

import argparse
import os
import random
import statistics
import time

import dspy
from dspy import lm15

from deltaseek.bundled import SEED_QUESTIONS, bundled_corpora
from deltaseek.optimize import speed_table
from deltaseek.optimize.agent_options import AgentOptions
from deltaseek.optimize.command_options import add_speed_options
from deltaseek.optimize.speed_table import SpeedRun
from deltaseek.programs.agent import AgentSettings, DeltaSeek, run_question
from deltaseek.programs.corpus_files import Passage, read_corpus
from deltaseek.programs.index import CorpusIndex
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


def bench_threads(configs: tuple[tuple[int, int, int], ...] = ((1, 1, 512), (1, 2, 512), (2, 2, 512), (1, 2, 256),
                                                                (1, 2, 1024)),
                  prompt_tokens: int = 1000, generate: int = 64) -> list[dict]:
    """llama.cpp's own timings for prompt evaluation and generation at each (generation threads,
    prompt threads, n_batch): the figures `default_threads` was chosen by."""
    llama_cpp = import_llama_cpp()
    path = str(find_smollm2_gguf())
    text = " ".join(p.text for corpus in bundled_corpora() for p in read_corpus(corpus))
    rows = []
    for threads, batch_threads, batch in configs:
        llama = llama_cpp.Llama(model_path=path, n_ctx=4096, n_threads=threads, n_threads_batch=batch_threads,
                                n_batch=batch, n_ubatch=min(batch, 512), verbose=False, seed=0)
        tokens = llama.tokenize(text.encode())[:prompt_tokens]
        llama.create_completion(tokens[:16], max_tokens=1)  # warm-up
        llama_cpp.llama_perf_context_reset(llama.ctx)
        llama.reset()
        llama.create_completion(tokens, max_tokens=generate, temperature=0.0)
        perf = llama_cpp.llama_perf_context(llama.ctx)
        rows.append({"threads": threads, "batch_threads": batch_threads, "n_batch": batch,
                     "prompt_tokens_per_s": perf.n_p_eval / perf.t_p_eval_ms * 1000,
                     "generated_tokens_per_s": perf.n_eval / max(perf.t_eval_ms, 1e-9) * 1000})
        del llama
    generate_threads, prompt_threads = default_threads()
    print(f"generate threads / prompt threads / n_batch: prompt tok/s, generated tok/s ({prompt_tokens}-token prompt, "
          f"{generate} generated; deltaseek uses {generate_threads} / {prompt_threads} / 512, "
          f"OMP_WAIT_POLICY={os.environ.get('OMP_WAIT_POLICY')}, GOMP_SPINCOUNT={os.environ.get('GOMP_SPINCOUNT')})")
    for r in rows:
        print(f"  {r['threads']} / {r['batch_threads']} / {r['n_batch']:>4}: {r['prompt_tokens_per_s']:>5.0f}, "
              f"{r['generated_tokens_per_s']:>4.0f}")
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


def bench_paths(lm_name: str | None = None, api_base: str | None = None, output_format: str = "auto",
                profile: str | None = None, questions: tuple[str, ...] = SEED_QUESTIONS) -> list[dict]:
    """Each seed question in-process and, given `api_base`, through the server, one after the other
    (a busy machine slows both alike), DSPy's cache off, the embedded model's saved prefixes cleared
    first. Both paths run the same program: `profile`, by default small (the embedded model's)."""
    profile = profile or "small"
    engine = embedded_engine()
    engine.forget_prefixes()
    local = make_lm(cache=False)
    paths = [("in-process", local, adapter_for(local, output_format, profile))]
    if api_base:
        remote = make_lm(lm_name, api_base, cache=False)
        paths.append((f"server {api_base}", remote, adapter_for(remote, output_format, profile)))
    index = CorpusIndex.open()
    rows = []
    for question in questions:
        for path, lm, adapter in paths:
            program = DeltaSeek([LocalCorpusSearch(index)], settings=AgentSettings(profile=profile))
            with dspy.context(lm=lm, adapter=adapter):
                record = run_question(program, question)
            rows.append({"path": path, "adapter": type(adapter).__name__, "question": question,
                         **{k: record[k] for k in ("answer", "answerability", "stop_reason", "steps", "lm_calls",
                                                   "seconds")}})
    print(format_paths_table(rows))
    return rows


def format_paths_table(rows: list[dict]) -> str:
    """A row per path: its answers, steps, LM calls and median seconds; then the ratio of the medians
    and whether every path gave the in-process answers."""
    paths = list(dict.fromkeys(r["path"] for r in rows))
    by_path = {p: [r for r in rows if r["path"] == p] for p in paths}
    lines = ["| path | adapter | answers | answerability | steps | LM calls | s | median s |",
             "|---|---|---|---|---|---|---|---:|"]
    for path, part in by_path.items():
        answers = " / ".join(r["answer"][:40] for r in part)
        cells = [", ".join(str(r[k]) for r in part) for k in ("answerability", "steps", "lm_calls")]
        cells.append(", ".join(f"{r['seconds']:.1f}" for r in part))
        lines.append(f"| {path} | {part[0]['adapter']} | {answers} | {' | '.join(cells)} | "
                     f"{statistics.median(r['seconds'] for r in part):.1f} |")
    base = by_path[paths[0]]
    for path in paths[1:]:
        other = by_path[path]
        ratio = statistics.median(r["seconds"] for r in other) / max(statistics.median(r["seconds"] for r in base), 1e-9)
        same = [a["answer"] == b["answer"] for a, b in zip(base, other)]
        within = all(r["lm_calls"] <= r["steps"] + 1 for r in other)
        lines.append(f"\n{path}: median {ratio:.2f}x in-process; answers the same as in-process on {sum(same)} of "
                     f"{len(same)}; LM calls at most steps + 1: {'yes' if within else 'NO'}")
    return "\n".join(lines)


def bench_sets(args: argparse.Namespace, agent: AgentOptions = AgentOptions()) -> dict[str, dict]:
    """Speed and quality on the scored part of each labeled set (see `speed_table`), for the
    program the agent options describe (`--reader PATH` times another reader's weights)."""
    sets = [args.dataset] if getattr(args, "dataset", None) else args.sets
    speed = SpeedRun(sets, getattr(args, "limit", None), agent, reader_beside=getattr(args, "reader_beside", None))
    summaries = speed.run()
    print(speed_table.format_table(summaries, speed_table.process_start()))
    print(f"per-question rows: {speed.out}")
    return summaries


def run(args: argparse.Namespace, agent: AgentOptions = AgentOptions()) -> int:
    if args.sphinx:
        if not args.sphinx_shard:
            raise UsageError("--sphinx needs --sphinx-shard for each shard behind it (the benchmark fills them)")
        bench_sphinx(args.sphinx, args.sphinx_shard, args.sphinx_sizes)
        return 0
    api_base = getattr(args, "api_base", None)
    if not args.paths_only:
        bench_model()
        bench_threads()
        bench_index(args.sizes)
    if not args.skip_agents and not args.paths_only:
        bench_sets(args, agent)
        if args.prefix_reuse:
            bench_seed_speed()
    if args.paths_only or not args.skip_agents:
        bench_paths(getattr(args, "lm", None), api_base, getattr(args, "format", "auto"), getattr(args, "profile", None))
    return 0


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    add_speed_options(parser)
    raise SystemExit(run(parser.parse_args()))
