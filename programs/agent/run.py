"""One question run end to end: the prediction plus the record the CLI prints and evaluation stores."""

from __future__ import annotations

import time

import dspy
from dspy.utils.usage_tracker import track_usage


def usage_totals(tracker) -> tuple[int, int]:
    """(LM calls, tokens) recorded by one `track_usage()` block: this run's own, whatever other
    threads do with the same LM (the tracker lives in this thread's DSPy context)."""
    entries = [entry for per_lm in tracker.usage_data.values() for entry in per_lm]
    tokens = sum(entry.get("total_tokens") or (entry.get("prompt_tokens") or 0) + (entry.get("completion_tokens") or 0)
                 for entry in entries)
    return len(entries), tokens


def run_question(program: dspy.Module, question: str) -> dict:
    """Run one question and return its JSON record: the answer with everything needed to judge it."""
    started = time.perf_counter()
    with track_usage() as tracker:
        pred = program(question=question)
    seconds = time.perf_counter() - started
    lm_calls, tokens = usage_totals(tracker)
    facts = {f.source: f for f in pred.scratchpad.facts}
    sources = [{"id": s, "title": facts[s].title, "url": facts[s].url} for s in pred.sources if s in facts]
    return {
        "question": question, "answer": pred.answer, "answerability": pred.answerability,
        "confidence": pred.confidence, "confidence_signals": pred.scratchpad.confidence_signals,
        "caveats": pred.caveats, "assumptions": pred.assumptions, "stop_reason": pred.stop_reason,
        "answered_by": pred.answered_by, "profile": pred.profile, "answer_origin": pred.answer_origin,
        "proposed_answer": pred.proposed_answer, "replaced_because": pred.replaced_because,
        "steps": pred.steps, "tool_calls": pred.tool_calls, "sources": sources,
        "lm_calls": lm_calls, "tokens": tokens, "seconds": round(seconds, 2),
        "lm_faults": [fault.model_dump(mode="json") for fault in pred.scratchpad.lm_faults],
        "trajectory": pred.scratchpad.model_dump(mode="json"),
    }
