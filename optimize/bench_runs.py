"""`deltaseek bench` as one function: deltaseek, dspy.ReAct and dspy.ReActV2 on the same LM,
tools, step budget and questions (`compare.compare`); one table, saved as JSON and logged as one
MLflow run per program."""

from __future__ import annotations

import json
import sys
from dataclasses import replace
from pathlib import Path

import dspy

from deltaseek.bundled import labeled_set
from deltaseek.files import write_text_atomically
from deltaseek.optimize.agent_options import AgentOptions, SetupLM, build_tools_for, configure_agent_lm
from deltaseek.optimize.command_options import RESULTS_DIR
from deltaseek.optimize.compare import compare, format_table
from deltaseek.optimize.evaluate import corpora_for
from deltaseek.optimize.run_tracking import TrackingOptions, log_dataset, positive, split_examples, timestamp
from deltaseek.optimize.scenario_lms import scenario_lm
from deltaseek.programs.agent.program_file import UNCOMPILED


def bench_programs(dataset: str | None = None, agent: AgentOptions = AgentOptions(),
                   tracking: TrackingOptions = TrackingOptions(), split: str | None = None, limit: int | None = None,
                   scenario: str = "model", budget: int = 8, json_out: str | Path | None = None,
                   setup_lm: SetupLM = configure_agent_lm) -> dict[str, dict]:
    """Each program's summary row on the `split` (default test) of `dataset` (default the bundled
    seed set). `scenario`: "model" (the LM `agent` names) or a scripted LM of
    `scenario_lms.SCENARIOS`. Printed as a table, written to `json_out` (default
    results/bench-SCENARIO-TIME.json) and returned, by program. `setup_lm(agent, cache=False)`
    configures DSPy's LM for the model scenario (default: the LM `agent` names)."""
    positive("--limit", limit)
    positive("--budget", budget)
    dataset = dataset or str(labeled_set("seed_set"))
    split, examples = split_examples(dataset, split, "test", limit)
    if not agent.corpus:
        agent = replace(agent, corpus=corpora_for(examples))
    tools = build_tools_for(agent)
    # DSPy's cache off: a call answered from an earlier run would make its seconds and tokens a lie.
    lm = setup_lm(agent, cache=False) if scenario == "model" else \
        scenario_lm(scenario, tools[0].name, examples)
    # the oracle stands for a capable model: DSPy's chat format, as such a model is asked; a model
    # gets the adapter configure_lm chose for it (--format)
    adapter = dspy.ChatAdapter() if scenario == "oracle" else dspy.settings.adapter if scenario == "model" else None
    from tqdm import tqdm

    with tqdm(total=len(examples), desc=f"bench {scenario}", unit="q", file=sys.stderr) as bar:
        rows = compare(examples, tools, lm, budget=budget, compiled_path=agent.program if agent.program not in
                       (None, UNCOMPILED) else None, progress=lambda: bar.update(1), profile=agent.profile,
                       adapter=adapter)
    print(format_table(rows))
    table = {row.program: row.summary() for row in rows}
    out = Path(json_out or Path(RESULTS_DIR) / f"bench-{scenario}-{timestamp()}.json")
    summary = {"dataset": dataset, "split": split, "scenario": scenario, "lm": getattr(lm, "model", ""),
               "budget": budget, "programs": table}
    write_text_atomically(out, json.dumps(summary, indent=2), mode=0o644)
    print(f"table as JSON: {out}")
    for program, row in table.items():
        with tracking.tracker(f"bench {program}", traces=False) as tracker:
            tracker.log_params({"command": "bench", "program": program, "dataset": dataset, "split": split,
                                "scenario": scenario, "lm": getattr(lm, "model", ""), "budget": budget})
            log_dataset(tracker, dataset, split, examples)
            tracker.log_metrics({k: v for k, v in row.items() if v is not None})
    return table
