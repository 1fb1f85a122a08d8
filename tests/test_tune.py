"""The program's settings tuned with optuna on labeled examples, each trial a nested MLflow
run, and `deltaseek optimize --tune-settings N` (also with `--optimizer none`, the settings alone)."""

import json

import dspy
import mlflow
import optuna
import pytest
from optuna.distributions import CategoricalDistribution

from deltaseek import AgentSettings, DeltaSeek, combined_metric
from deltaseek.optimize.scenario_lms import scenario_lm
from deltaseek.programs.agent.prompting import prompt_facts, rendered_scratchpad
from deltaseek.optimize.tracking import Tracker
from deltaseek.optimize.tune import (SEARCH_SPACE, format_trials, sampler_for, settings_update, subspace,
                                     tune_settings)
from deltaseek.programs.agent.scratchpad import Fact, Scratchpad
from deltaseek.programs.agent.settings import SAVED_SETTINGS, TASK_PROFILES
from tests.test_saved_settings import tools  # noqa: F401 (the fixture: two passages)
from tests.test_optimize import (ROWS, dataset, offline_tracking, read_jsonl, run_cli,  # noqa: F401 (fixtures)
                                 scripted_cli)


def labeled(question, answer, label="direct", number=0):
    return dspy.Example(id=f"q{number}", question=question, answer=answer, aliases=[],
                        answerability=label).with_inputs("question")


EXAMPLES = [labeled("Who built the iron bridge over the Vey?", "Ada Lind", number=1),
            labeled("Who designed the Moss tower?", "Olaf Sund", number=2),
            labeled("Who built the wooden tunnel under the Vey?", "", "unlikely", number=3),
            labeled("Who painted the Moss tower?", "", "unlikely", number=4)]
"""Two questions the passages of the `tools` fixture answer, two they do not (the shipped reader answers
those too: its threshold is its weights', not a setting's)."""


def factory(tools):
    return lambda settings: DeltaSeek(tools=tools, settings=settings)


def test_tuning_chooses_the_settings_that_score_better(tools, tmp_path):
    # one step: the answer is forced before any search, so nothing read answers the questions
    start = AgentSettings(profile="small", hard_budget=1)
    space = {"hard_budget": CategoricalDistribution([1, 3])}
    tuning = tune_settings(factory(tools), start, EXAMPLES, combined_metric, n_trials=4, results_dir=tmp_path,
                           lm=scenario_lm("echo", "search_corpus"), space=space)
    assert tuning.baseline["hard_budget"] == 1 and tuning.baseline["trial"] == 0
    assert tuning.chosen == {"hard_budget": 3}
    assert tuning.best["combined_metric"] > tuning.baseline["combined_metric"]
    # a space of two settings is tried whole in two trials, and then the study stops
    assert len(tuning.trials) == 2 and sum(t["chosen"] for t in tuning.trials) == 1
    rows = read_jsonl(tmp_path.joinpath(tuning.best["results"]))  # each trial's rows were kept as they came
    assert [r["id"] for r in rows] == ["q1", "q2", "q3", "q4"]
    table = format_trials(tuning)
    assert "hard_budget" in table and "**chosen**" in table and "(as given)" in table


def test_a_trial_reads_its_lm_with_that_lm_s_adapter_whatever_was_configured_before(tools, tmp_path):
    """An adapter configured for another model (a served model's JSON object mode, which this LM
    refuses) does not reach the LM the tuning was given: a trial depends only on its inputs."""
    from deltaseek.programs.lm.adapter import ServerJSONAdapter

    start = AgentSettings(profile="small", hard_budget=1)
    with dspy.context(adapter=ServerJSONAdapter("json_object_schema")):
        tuning = tune_settings(factory(tools), start, EXAMPLES, combined_metric, n_trials=2, results_dir=tmp_path,
                               lm=scenario_lm("echo", "search_corpus"), space={"hard_budget": CategoricalDistribution([1, 3])})
    assert tuning.chosen == {"hard_budget": 3}


def test_each_trial_is_a_nested_run_and_the_choice_is_on_the_parent(tools, tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)  # the store's artifacts go to ./mlruns
    uri = f"sqlite:///{tmp_path}/mlflow.db"
    with Tracker(uri, run_name="tune", traces=False, experiment="tune-test") as tracker:
        tuning = tune_settings(factory(tools), AgentSettings(profile="small"), EXAMPLES[:2], combined_metric,
                               n_trials=2, results_dir=tmp_path / "results", lm=scenario_lm("echo", "search_corpus"),
                               tracker=tracker)
        parent = tracker.run_id
    assert set(tuning.chosen) == set(SEARCH_SPACE)
    mlflow.set_tracking_uri(uri)
    runs = mlflow.search_runs(experiment_names=["tune-test"])
    children = runs[runs["tags.mlflow.parentRunId"] == parent]
    assert sorted(children["tags.mlflow.runName"]) == ["trial 0", "trial 1"]
    assert children["metrics.objective"].notna().all() and children["params.hard_budget"].notna().all()
    logged = runs[runs.run_id == parent].iloc[0]
    assert logged["params.tuned.hard_budget"] == str(tuning.chosen["hard_budget"])
    assert logged["metrics.tune_chosen_combined_metric"] == tuning.best["combined_metric"]


def test_a_space_the_trials_can_cover_is_tried_whole(tools, tmp_path):
    space = subspace(["max_searches"])
    tuning = tune_settings(factory(tools), AgentSettings(profile="small"), EXAMPLES[:2], combined_metric, n_trials=6,
                           results_dir=tmp_path, lm=scenario_lm("echo", "search_corpus"), space=space)
    assert tuning.trials[0]["max_searches"] is None  # trial 0: the settings as given
    assert sorted(map(str, (t["max_searches"] for t in tuning.trials))) == ["1", "2", "3", "None"]
    assert isinstance(sampler_for(SEARCH_SPACE, 20, 0), optuna.samplers.TPESampler)  # too large to try whole
    with pytest.raises(ValueError, match="cannot tune profile"):
        subspace(["max_searches", "profile"])


def test_one_kind_of_task_gets_its_own_search_cap(tools, tmp_path):
    # the questions are lookups ("Who built ...?"); multi-hop questions keep the start's cap of 3
    start = AgentSettings(profile="small", task_search_caps={"lookup": 2, "multi_hop": 3})
    tuning = tune_settings(factory(tools), start, EXAMPLES, combined_metric, n_trials=4, results_dir=tmp_path,
                           lm=scenario_lm("echo", "search_corpus"), space=subspace(["task_search_caps.lookup"]))
    assert tuning.trials[0]["task_search_caps.lookup"] == 2  # trial 0: the settings as given
    tried = {t["task_search_caps.lookup"]: t for t in tuning.trials}
    assert set(tried) == {None, 1, 2, 3}
    executed = {cap: [sum(call["executed"] for call in row["tool_calls"])
                      for row in read_jsonl(tmp_path.joinpath(trial["results"]))] for cap, trial in tried.items()}
    # the unanswerable questions search on until their trial's cap stops them; uncapped, past 3
    assert all(max(counts) == cap for cap, counts in executed.items() if cap) and max(executed[None]) > 3, executed
    lookup_cap = tuning.chosen["task_search_caps.lookup"]
    assert tuning.settings == {"task_search_caps": {"multi_hop": 3, **({"lookup": lookup_cap} if lookup_cap else {})}}


def test_a_key_of_a_dict_setting_is_set_or_unset_alone():
    start = AgentSettings(task_search_caps={"lookup": 2, "multi_hop": 3})
    assert settings_update(start, {"task_search_caps.lookup": 1, "hard_budget": 5}) == {
        "task_search_caps": {"lookup": 1, "multi_hop": 3}, "hard_budget": 5}
    assert settings_update(start, {"task_search_caps.multi_hop": None}) == {"task_search_caps": {"lookup": 2}}
    assert start.task_search_caps == {"lookup": 2, "multi_hop": 3}  # the start is not changed
    with pytest.raises(ValueError, match="only a dict setting"):
        tune_settings(lambda s: None, AgentSettings(), EXAMPLES, combined_metric, 1, ".",
                      space={"hard_budget.lookup": CategoricalDistribution([1, 2])})


def test_a_kind_s_first_strategy_leads_its_order_and_the_rest_follow(tools):
    question = "Who built the iron bridge over the Vey?"  # a lookup
    pads = [Scratchpad(question=question), Scratchpad(question=question)]
    DeltaSeek(tools=tools, settings=AgentSettings(profile="small")).begin(pads[0])
    first = {"lookup": "synonyms", "multi_hop": "bridge"}
    DeltaSeek(tools=tools, settings=AgentSettings(profile="small", first_strategies=first)).begin(pads[1])
    profile_order = list(TASK_PROFILES["lookup"][2])
    assert pads[0].strategy_order == profile_order
    assert pads[1].strategy_order == ["synonyms", *(s for s in profile_order if s != "synonyms")]
    # and the searches follow it: entity-focused first searches the thing the question names, alone
    queries = []
    for first in ({}, {"lookup": "entity-focused"}):
        program = DeltaSeek(tools=tools, settings=AgentSettings(profile="small", first_strategies=first))
        with dspy.context(lm=scenario_lm("echo", "search_corpus")):
            pad = program(question="Who built the wooden tunnel under the Vey?").scratchpad
        queries.append([call.query for call in pad.executed_calls])
    assert queries[0][0] != "Vey" and queries[1][0] == "Vey", queries


@pytest.mark.parametrize("compact,setting,shown", [(True, None, 4), (True, 2, 2), (False, None, 6), (False, 3, 3)])
def test_prompt_facts_sets_how_many_facts_a_prompt_shows(tools, compact, setting, shown):
    program = DeltaSeek(tools=tools, settings=AgentSettings(compact_prompts=compact, prompt_facts=setting))
    pad = Scratchpad(question="Who built the iron bridge over the Vey?")
    pad.facts = [Fact(source=f"p{n}", title=f"Passage {n}", text=f"Text {n} of the Vey.", step=1) for n in range(9)]
    assert len(prompt_facts(pad, program.profile(pad))) == shown
    assert rendered_scratchpad(pad, program.profile(pad)).count("\n- [p") == shown


def test_no_first_strategy_choice_repeats_the_kind_s_own_order():
    # a kind's own first strategy, tried again, would only repeat trial 0 (None: the profile's order)
    for name in (name for name in SEARCH_SPACE if name.startswith("first_strategies.")):
        kind = name.partition(".")[2]
        assert SEARCH_SPACE[name].choices[0] is None
        assert TASK_PROFILES[kind][2][0] not in SEARCH_SPACE[name].choices
        assert len(SEARCH_SPACE[name].choices) == 4


def test_the_space_holds_only_settings_a_program_saves():
    assert {name.partition(".")[0] for name in SEARCH_SPACE} <= set(SAVED_SETTINGS)
    assert {"reader_min_confidence", "hard_budget", "soft_budget", "exhaustion_window",
            "budgets_from_task_kind"} <= set(SEARCH_SPACE)
    with pytest.raises(ValueError, match="cannot tune profile"):
        tune_settings(lambda s: None, AgentSettings(), EXAMPLES, combined_metric, 1, ".",
                      space={"profile": CategoricalDistribution(["small"])})


# --- deltaseek optimize --tune-settings ------------------------------------------


def test_optimize_tunes_the_settings_alone_and_saves_them(capsys, scripted_cli, dataset, tmp_path, offline_tracking):
    out = tmp_path / "tuned.json"
    code, printed, err = run_cli(capsys, "optimize", "--dataset", dataset, "--optimizer", "none",
                                 "--tune-settings", "2", "--out", out, "--tracking-uri", offline_tracking)
    assert code == 0, err
    assert "| trial |" in printed and "settings tuned on the train split (2 trials" in printed
    saved = json.loads(out.read_text())
    fields = {name.partition(".")[0] for name in SEARCH_SPACE}  # task_search_caps.lookup is task_search_caps'
    assert fields <= set(saved["settings"])
    assert not any(saved[name]["demos"] for name in ("step_delta", "synthesize"))  # no prompt compiled
    tune_files = sorted(tmp_path.glob("results/optimize-tuned-tune-*.jsonl"))
    assert 1 <= len(tune_files) <= 2 and all(len(read_jsonl(f)) == 2 for f in tune_files)  # the train split
    loaded = DeltaSeek.from_compiled(out)
    assert {name: getattr(loaded.settings, name) for name in fields} == \
        {name: saved["settings"][name] for name in fields}


def test_optimize_none_without_tuning_is_refused(capsys, scripted_cli, dataset, tmp_path):
    code, _, err = run_cli(capsys, "optimize", "--dataset", dataset, "--optimizer", "none", "--out",
                           tmp_path / "x.json")
    assert code == 2 and err.strip() == ("deltaseek: error: --optimizer none compiles no prompts: pass "
                                         "--tune-settings N to tune the settings alone, or --train-reader to train "
                                         "the reader alone")
    code, _, err = run_cli(capsys, "optimize", "--dataset", dataset, "--optimizer", "none", "--tune-settings", "0",
                           "--out", tmp_path / "x.json")
    assert code == 2 and "--tune-settings must be a positive integer" in err


def test_optimize_tunes_only_the_settings_named(capsys, scripted_cli, dataset, tmp_path, offline_tracking):
    out = tmp_path / "searches.json"
    code, printed, err = run_cli(capsys, "optimize", "--dataset", dataset, "--optimizer", "none", "--tune-settings",
                                 "4", "--tune-only", "max_searches", "--out", out, "--tracking-uri", offline_tracking)
    assert code == 0, err
    header = next(line for line in printed.splitlines() if line.startswith("| trial |"))
    assert "max_searches" in header and "soft_budget" not in header  # the rest keep the program's values
    assert len(sorted(tmp_path.glob("results/optimize-searches-tune-*.jsonl"))) == 4  # None, 1, 2, 3: all tried
    code, _, err = run_cli(capsys, "optimize", "--dataset", dataset, "--optimizer", "none", "--tune-settings", "2",
                           "--tune-only", "max_searches,profile", "--out", tmp_path / "x.json")
    assert code == 2 and "--tune-only: cannot tune profile" in err
