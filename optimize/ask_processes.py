"""Seconds a user waits: one `deltaseek ask` process per question, caches cold.

    python -m deltaseek.optimize.ask_processes --dataset datasets/squad2.jsonl --limit 30 --out results/asks-squad2.jsonl
    python -m deltaseek.optimize.ask_processes --seeds --out results/asks-seeds-served.jsonl \
        -- --lm openai/smollm2 --api-base http://127.0.0.1:8765/v1

Each of the first N questions of a labeled set's scored part (its `test` split) runs in a new
`deltaseek ask --json --no-cache` process with an empty DSPy cache folder of its own, so every
question pays the process start (imports, model load, index load) as a user's first question does;
the start is the wall seconds less the run's own. `--seeds` asks the five seed questions instead
(no gold: read their answers). Options after `--` go to `deltaseek ask` (another model, a server).
`--summarize FILE...` prints the summary of rows written before, one line a file.
Each question's row (wall seconds, the run's own seconds, LM calls, steps, scores) is appended to
`--out` as it ends; the summary prints medians, p90 and the questions with more than steps + 1 calls.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import dspy

from deltaseek.bundled import SEED_QUESTIONS
from deltaseek.optimize.evaluate import corpora_for, load_dataset, select
from deltaseek.optimize.evaluation_report import score


def ask_in_new_process(question: str, corpora: list[str], extra: list[str]) -> tuple[float, dict | None, str]:
    """Wall seconds, the JSON record (None when the process failed) and its last stderr line."""
    command = [sys.executable, "-m", "deltaseek.cli", "ask", question, "--json", "--no-cache", *extra]
    for corpus in corpora:
        command += ["--corpus", corpus]
    with tempfile.TemporaryDirectory() as cache:
        env = {**os.environ, "DSPY_CACHEDIR": cache}
        started = time.perf_counter()
        done = subprocess.run(command, capture_output=True, text=True, env=env)
        wall = time.perf_counter() - started
    lines = [line for line in done.stderr.splitlines() if line.strip()]
    try:
        return wall, json.loads(done.stdout), lines[-1] if lines else ""
    except json.JSONDecodeError:
        return wall, None, lines[-1] if lines else f"exit {done.returncode}"


def p90(values: list[float]) -> float:
    return statistics.quantiles(values, n=10)[-1] if len(values) > 1 else values[0]


def summarize(rows: list[dict]) -> str:
    walls = [row["wall_seconds"] for row in rows]
    starts = [row["wall_seconds"] - row["seconds"] for row in rows if row["seconds"] is not None]
    calls = [row["lm_calls"] or 0 for row in rows]
    over = sum(1 for row in rows if (row["lm_calls"] or 0) > (row["steps"] or 0) + 1)
    mean = {name: statistics.fmean(row["scores"][name] for row in rows) for name in rows[0]["scores"] or {}}
    start = f"start (imports, model and index load) median {statistics.median(starts):.2f} s; " if starts else ""
    return (f"{len(rows)} questions, one process each: wall median {statistics.median(walls):.2f} s, "
            f"p90 {p90(walls):.2f} s; {start}LM calls median {statistics.median(calls):g}, max {max(calls)}, "
            f"more than steps + 1 on {over}; " + ", ".join(f"{k} {v:.3f}" for k, v in mean.items()))


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    source = parser.add_mutually_exclusive_group(required=True)
    source.add_argument("--summarize", nargs="+", metavar="FILE", help="print the summary of these rows files and stop")
    source.add_argument("--dataset", help="a labeled set: its scored part is asked")
    source.add_argument("--seeds", action="store_true", help="the five seed questions, unscored")
    parser.add_argument("--split", default="test")
    parser.add_argument("--limit", type=int, default=30)
    parser.add_argument("--out", help="JSONL rows, appended as each question ends")
    parser.add_argument("ask_options", nargs=argparse.REMAINDER, help="after --: options passed to deltaseek ask")
    args = parser.parse_args(argv)
    if args.summarize:
        for path in args.summarize:
            rows = [json.loads(line) for line in Path(path).read_text(encoding="utf-8").splitlines() if line.strip()]
            print(f"{path}: {summarize(rows)}")
        return 0
    if not args.out:
        parser.error("--out is required to run questions")
    if args.seeds:
        examples, corpora = [dspy.Example(question=question) for question in SEED_QUESTIONS], []
    else:
        examples = select(load_dataset(args.dataset).examples, args.split, args.limit)
        corpora = corpora_for(examples)
    extra = [option for option in args.ask_options if option != "--"]
    rows = []
    Path(args.out).parent.mkdir(parents=True, exist_ok=True)  # results/asks/ in a fresh clone
    with open(args.out, "a", encoding="utf-8") as out:
        for index, example in enumerate(examples):
            wall, record, last_error = ask_in_new_process(example.question, corpora, extra)
            row = {"index": index, "id": example.get("id"), "question": example.question,
                   "wall_seconds": round(wall, 2), "answer": (record or {}).get("answer"),
                   "seconds": (record or {}).get("seconds"), "lm_calls": (record or {}).get("lm_calls"),
                   "steps": (record or {}).get("steps"),
                   "scores": {} if args.seeds else score(example, record),
                   "error": None if record else last_error}
            out.write(json.dumps(row) + "\n")
            out.flush()
            rows.append(row)
            print(f"{index + 1}/{len(examples)} {row['wall_seconds']:.1f} s, {row['lm_calls']} calls: "
                  f"{example.question[:60]!r} -> {row['answer']!r}", file=sys.stderr)
    print(summarize(rows))
    return 0


if __name__ == "__main__":
    sys.exit(main())
