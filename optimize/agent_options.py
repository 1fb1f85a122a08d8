"""The agent a command runs, from options a user gives (the command line's agent options, or
the same names from Python): its LM, its tools, its compiled program and settings."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Callable

import dspy
from pydantic import ValidationError

from deltaseek.errors import UsageError
from deltaseek.programs.agent import AgentSettings, DeltaSeek
from deltaseek.programs.agent.learned_reader import load_reader
from deltaseek.programs.agent.program_file import UNCOMPILED, default_program_path, load_state_into
from deltaseek.programs.agent.saved_state import RULE_READER

FEATURES_READER = "features"
"""`--reader features`: the program's reader with its ranker reading spans, not its adapter."""
from deltaseek.programs.index import CorpusIndex
from deltaseek.programs.lm import configure_lm
from deltaseek.programs.tools import build_tools


@dataclass(frozen=True)
class AgentOptions:
    """What `--lm`, `--corpus`, `--program` and the other agent options say (see `deltaseek ask --help`)."""

    lm: str | None = None
    """A litellm model string; None: $DELTASEEK_LM or the embedded SmolLM2."""
    api_base: str | None = None
    format: str = "auto"
    """How replies are asked for: auto, json or chat."""
    profile: str | None = None
    """small or capable; None: small for the embedded model or a GGUF file, else capable until a reply fails a check."""
    corpus: list[str] | None = None
    """JSONL corpora the local tool searches; None: the bundled corpus."""
    tools: str = "local"
    no_cache: bool = False
    program: str | None = None
    """A compiled program (a JSON state file or a models:/ URI), or "uncompiled"; None: the default."""
    reader: str | None = None
    """A learned reader's JSON weights; None: the program's own, else the shipped ones."""
    soft_budget: int | None = None
    hard_budget: int | None = None
    max_searches: int | None = None
    direct_confidence: float | None = None
    """The least confidence labelled direct; None: the program's, else its reader's fitted bound."""
    abstain_margin: float | None = None
    """The lead of the passages' not stating the answer over the span's confidence beyond which the
    reader's span is no answer; None: as for `direct_confidence`."""


SetupLM = Callable[..., dspy.BaseLM]
"""setup_lm(options, **kwargs): configure DSPy's LM for these options and return it (`configure_agent_lm`)."""


def configure_agent_lm(options: AgentOptions, **kwargs) -> dspy.BaseLM:
    """Configure DSPy's LM as the options say (`programs.lm.configure_lm`); returns it."""
    return configure_lm(options.lm, options.api_base, output_format=options.format, profile=options.profile, **kwargs)


def setting_overrides(options: AgentOptions) -> dict:
    """The settings the options name, which win over those saved with a program."""
    return {k: v for k, v in {"soft_budget": options.soft_budget, "hard_budget": options.hard_budget,
                              "max_searches": options.max_searches, "profile": options.profile,
                              "direct_confidence": options.direct_confidence,
                              "abstain_margin": options.abstain_margin}.items()
            if v is not None}


def build_tools_for(options: AgentOptions) -> list:
    corpus = list(options.corpus) if options.corpus else None
    return build_tools(options.tools or "local", lambda: CorpusIndex.open(corpus), use_cache=not options.no_cache)


def build_program(options: AgentOptions, source: str | None = None, tools: list | None = None,
                  program_type: type[DeltaSeek] = DeltaSeek) -> DeltaSeek:
    """The agent for these options: tools (unless given), settings, and a compiled program when
    there is one (`source`, else `options.program`); `program_type` a subclass that measures it."""
    overrides = setting_overrides(options)
    try:
        settings = AgentSettings(**overrides)
    except ValidationError as exc:
        raise UsageError(f"bad option --{exc.errors()[0]['loc'][0].replace('_', '-')}: {exc.errors()[0]['msg']}") from None
    if tools is None:
        tools = build_tools_for(options)
    if options.reader == RULE_READER:
        raise UsageError("--reader rules: deltaseek no longer has the rule reader; give a learned reader's JSON "
                         "weights, or leave --reader out for the program's own")
    own_reader = load_reader(options.reader) if options.reader not in (None, FEATURES_READER) else None
    program = program_type(tools=tools, settings=settings, reader=own_reader)
    load_state_into(program, options.program if source is None else source)
    if options.reader == FEATURES_READER:  # the program's reader, its ranker reading in place of its adapter
        program.reader = program.learned_reader().without_adapter()
    if overrides:  # an option given here wins over the settings saved with the program
        program.settings = program.settings.model_copy(update=overrides)
    return program


def program_source(options: AgentOptions, lm) -> str:
    """Which prompts run: a compiled program file, or "uncompiled" (DeltaSeek's own)."""
    if options.program == UNCOMPILED:
        return "uncompiled"
    source = options.program or default_program_path(lm)
    return str(source) if source else "uncompiled"
