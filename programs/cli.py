"""The `deltaseek` command: ask, index (and evaluate / optimize, see optimize/)."""

from __future__ import annotations

import argparse
import json
import sys
import time
from pathlib import Path

from programs.corpus import CorpusError, CorpusIndex
from programs.lm import LMConfigError


class UsageError(ValueError):
    """Bad input from the command line."""


def add_lm_options(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--lm", help="a litellm model string (openai/gpt-4o-mini, ollama_chat/qwen2.5:7b, ...); "
                                     "default: $DELTASEEK_LM or the embedded SmolLM2")
    parser.add_argument("--api-base", help="an OpenAI-compatible server URL; default: $DELTASEEK_API_BASE")


def add_agent_options(parser: argparse.ArgumentParser) -> None:
    add_lm_options(parser)
    parser.add_argument("--corpus", action="append", help="JSONL corpus to search (repeatable); default: the bundled corpus")
    parser.add_argument("--tools", default="local", help="comma-separated: local, web, wikipedia, files:PATH")
    parser.add_argument("--no-cache", action="store_true", help="do not read or write the search result cache")
    parser.add_argument("--program", help="a compiled program (JSON state) to load instead of the default")
    parser.add_argument("--soft-budget", type=int)
    parser.add_argument("--hard-budget", type=int)
    parser.add_argument("--max-searches", type=int)


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="deltaseek", description="A DSPy search agent that never gets stuck.")
    parser.add_argument("--debug", action="store_true", help="show Python tracebacks")
    sub = parser.add_subparsers(dest="command", required=True)

    ask = sub.add_parser("ask", help="answer one question")
    ask.add_argument("question")
    add_agent_options(ask)
    ask.add_argument("--trace", action="store_true", help="show each step: thought, tool call, short observation")
    ask.add_argument("--json", action="store_true", help="print one JSON object")
    ask.add_argument("--debug", action="store_true", default=argparse.SUPPRESS)

    index = sub.add_parser("index", help="build the BM25 index of a corpus now")
    index.add_argument("corpus", nargs="+")
    index.add_argument("--debug", action="store_true", default=argparse.SUPPRESS)

    from optimize.cli import register_commands  # imported here: optimize.cli imports this module

    register_commands(sub)
    return parser


def open_index(corpus: list[str] | None) -> CorpusIndex:
    return CorpusIndex.open(corpus)


def build_program(args):
    """The agent for these options: tools, settings, and a compiled program when there is one."""
    from programs.deltaseek import DeltaSeek
    from programs.guardrails import AgentSettings

    overrides = {k: v for k, v in {"soft_budget": args.soft_budget, "hard_budget": args.hard_budget,
                                   "max_searches": args.max_searches}.items() if v is not None}
    try:
        settings = AgentSettings(**overrides)
    except ValueError as exc:
        raise UsageError(f"bad budget option: {exc.errors()[0]['loc'][0]} {exc.errors()[0]['msg']}") from None
    tools = build_tools(args)
    program = DeltaSeek(tools=tools, settings=settings)
    load_program_state(program, args.program)
    return program


def build_tools(args):
    from programs.web_tools import build_tools as build_from_spec

    try:
        return build_from_spec(args.tools or "local", lambda: open_index(args.corpus), use_cache=not args.no_cache)
    except CorpusError:
        raise
    except ValueError as exc:
        raise UsageError(str(exc)) from None


def load_program_state(program, path: str | None) -> None:
    """Load a compiled program; the shipped one is the default for the embedded model."""
    from optimize.programs import load_state_into

    load_state_into(program, path)


def configure_lm(args):
    import dspy

    from programs.lm import is_embedded, make_lm

    lm = make_lm(args.lm, args.api_base)
    # The embedded model gets JSON-schema constrained decoding through the JSON adapter.
    adapter = dspy.JSONAdapter() if is_embedded(lm) else dspy.ChatAdapter()
    dspy.configure(lm=lm, adapter=adapter)
    return lm


def run_question(program, lm, question: str) -> dict:
    """Run one question and return the JSON record the CLI prints."""
    history_before = len(lm.history)
    started = time.perf_counter()
    pred = program(question=question)
    seconds = time.perf_counter() - started
    calls = lm.history[history_before:]
    facts = {f.source: f for f in pred.scratchpad.facts}
    sources = [{"id": s, "title": facts[s].title, "url": facts[s].url} for s in pred.sources if s in facts]
    tokens = sum((c.get("usage") or {}).get("total_tokens") or 0 for c in calls)
    return {
        "question": question, "answer": pred.answer, "answerability": pred.answerability,
        "caveats": pred.caveats, "assumptions": pred.assumptions, "stop_reason": pred.stop_reason,
        "steps": pred.steps, "tool_calls": pred.tool_calls, "sources": sources,
        "lm_calls": len(calls), "tokens": tokens, "seconds": round(seconds, 2),
        "trajectory": pred.scratchpad.model_dump(mode="json"),
    }


def print_trace(record: dict) -> None:
    for step in record["trajectory"]["steps"]:
        thought = "; ".join(step["new_evidence"]) or "(nothing new)"
        print(f"[step {step['step']}] thought: {thought}")
        print(f"  move: {step['move'] or '-'}" + (f"  ({step['note']})" if step["note"] else ""))
        if step["observation"]:
            print("  observation: " + step["observation"].splitlines()[0])
    for call in record["tool_calls"]:
        if not call["executed"]:
            print(f"  blocked: {call['tool']}(\"{call['args'].get('query', '')}\"): {call['blocked_reason']}")
    print()


def print_answer(record: dict) -> None:
    print(record["answer"])
    print(f"\nanswerability: {record['answerability']}  (stopped: {record['stop_reason']}; "
          f"{record['steps']} steps, {sum(c['executed'] for c in record['tool_calls'])} searches, "
          f"{record['lm_calls']} LM calls, {record['seconds']} s)")
    cited = [" ".join(filter(None, (s["title"], s["url"] or f"[{s['id']}]"))) for s in record["sources"]]
    for label, items in (("caveats", record["caveats"]), ("assumptions", record["assumptions"]), ("sources", cited)):
        if items:
            print(f"{label}:")
            for item in items:
                print(f"  - {item}")


def cmd_ask(args) -> int:
    question = (args.question or "").strip()
    if not question:
        raise UsageError("the question is empty")
    lm = configure_lm(args)
    program = build_program(args)
    record = run_question(program, lm, question)
    if args.json:
        print(json.dumps(record, ensure_ascii=False))
        return 0
    if args.trace:
        print_trace(record)
    print_answer(record)
    return 0


def cmd_index(args) -> int:
    for path in args.corpus:
        if not Path(path).is_file():
            raise CorpusError(f"corpus file not found: {path}")
    index = CorpusIndex.open(args.corpus, rebuild=True)
    print(f"indexed {len(index.passages)} passages in {index.build_seconds:.2f} s ({index.fingerprint})")
    return 0


COMMANDS = {"ask": cmd_ask, "index": cmd_index}


def main(argv: list[str] | None = None) -> int:
    parser = build_parser()
    args = parser.parse_args(argv)
    handler = COMMANDS.get(args.command) or args.handler
    try:
        return handler(args)
    except (UsageError, CorpusError, LMConfigError) as exc:
        if args.debug:
            raise
        print(f"deltaseek: error: {exc}", file=sys.stderr)
        return 2
    except Exception as exc:
        if args.debug:
            raise
        print(f"deltaseek: error: {type(exc).__name__}: {exc} (run with --debug for the traceback)", file=sys.stderr)
        return 1


if __name__ == "__main__":
    sys.exit(main())
