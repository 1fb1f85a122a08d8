"""Compiled programs (save, load, bad files), `deltaseek evaluate` / `optimize` and their bad inputs.

The commands run on a scripted "oracle" LM that answers each question with its gold answer,
over the bundled seed corpus; MLflow goes to an unreachable server (a warning, nothing else)
unless a test says otherwise. The real-server tests are in test_mlflow_server.py.
"""

import json
import socket
import time
from pathlib import Path

import dspy
import pytest

import deltaseek.cli as cli
import deltaseek.programs.agent.program_file as compiled_programs
from deltaseek.optimize.compile import OPTIMIZERS, compile_program
from deltaseek.optimize.evaluate import evaluate_program
from deltaseek.optimize.evaluation_report import table_columns
from deltaseek.optimize.labeled_data import assign_split
from deltaseek import DeltaSeek, ProgramFileError, save_program
from deltaseek.cli import main
from deltaseek.programs.agent.program_file import load_state_into
from deltaseek.programs.lm import LlamaCppEngine
from deltaseek.programs.tools import LocalCorpusSearch
from tests.scripted import ScriptedEngine, classify, scripted_lm, step, synth

ROWS = [
    {"id": "t-rails", "question": "Who created Ruby on Rails?", "answer": "David Heinemeier Hansson",
     "aliases": ["DHH"], "answerability": "direct", "corpus": "seed", "split": "train"},
    {"id": "t-llama", "question": "Who started the llama.cpp project?", "answer": "Georgi Gerganov",
     "answerability": "direct", "corpus": "seed", "split": "train"},
    {"id": "d-ohio", "question": "What is the capital of Ohio?", "answer": "Columbus",
     "answerability": "direct", "corpus": "seed", "split": "dev", "group": "Ohio"},
    {"id": "d-xyzzy", "question": "What is the population of Xyzzyville?", "answer": "",
     "answerability": "unlikely", "corpus": "seed", "split": "dev"},
]
QUESTION_MARKER = "[[ ## question ## ]]"


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def current_question(prompt: str) -> str:
    """The question of the call itself, not of a demo: the last `question` field of the prompt."""
    return prompt[prompt.rfind(QUESTION_MARKER) + len(QUESTION_MARKER):].strip().splitlines()[0].strip()


def oracle_engine(rows=ROWS) -> ScriptedEngine:
    """Searches the question once, then answers it with the gold answer (an abstention when unlikely)."""
    gold = {r["question"]: r for r in rows}

    def step_handler(prompt):
        current = prompt[prompt.rfind(QUESTION_MARKER):]
        if "Searches already run" in current:
            return step(move="synthesize")
        return step(current_question(prompt))

    def synthesize_handler(prompt):
        row = gold[current_question(prompt)]
        if row["answerability"] == "unlikely":
            return synth("No information found about this.", answerability="unlikely")
        return synth(row["answer"], answerability=row["answerability"])

    return ScriptedEngine(classify=classify("lookup"), step=step_handler, synthesize=synthesize_handler,
                          diversify=lambda _: {"query": "entirely different angle words"},
                          judge=lambda _: {"answerability": "direct", "reason": "found"})


@pytest.fixture
def dataset(tmp_path):
    path = tmp_path / "labeled.jsonl"
    path.write_text("".join(json.dumps(r) + "\n" for r in ROWS))
    return path


@pytest.fixture
def scripted_cli(monkeypatch, tmp_path):
    """The commands run on the oracle LM, in tmp_path; DSPy's global settings are restored after."""
    monkeypatch.chdir(tmp_path)
    saved = {k: dspy.settings.get(k) for k in ("lm", "adapter", "callbacks", "track_usage")}
    engines = []

    def configure(args):
        engine = oracle_engine()
        engines.append(engine)
        lm = scripted_lm(engine)
        dspy.configure(lm=lm, adapter=dspy.JSONAdapter())
        return lm

    monkeypatch.setattr(cli, "configure_lm_from", configure)
    yield engines
    dspy.configure(**saved)


@pytest.fixture
def offline_tracking():
    """A tracking server nobody listens on: tracking warns and steps aside."""
    return f"http://127.0.0.1:{free_port()}"


def run_cli(capsys, *argv):
    code = main([str(a) for a in argv])
    out, err = capsys.readouterr()
    return code, out, err


def read_jsonl(path):
    return [json.loads(line) for line in path.read_text().splitlines() if line.strip()]


def seed_program(bundled_index):
    return DeltaSeek(tools=[LocalCorpusSearch(bundled_index)])


# --- saving and loading compiled programs ------------------------------------


def compiled_example(bundled_index):
    program = seed_program(bundled_index)
    program.synthesize.demos = [dspy.Example(question="Who created Ruby on Rails?", answer="David Heinemeier Hansson")]
    program.step_delta.signature = program.step_delta.signature.with_instructions("Only new facts, one move.")
    return program


def test_save_then_load_on_the_class_and_on_an_instance(tmp_path, bundled_index, use_lm):
    path = save_program(compiled_example(bundled_index), tmp_path / "nested" / "compiled.json")
    assert [p.name for p in path.parent.iterdir()] == ["compiled.json"]  # no staging file left behind

    loaded = DeltaSeek.from_compiled(path, tools=[LocalCorpusSearch(bundled_index)])
    assert isinstance(loaded, DeltaSeek)
    assert loaded.synthesize.demos[0]["answer"] == "David Heinemeier Hansson"
    assert loaded.step_delta.signature.instructions == "Only new facts, one move."

    fresh = seed_program(bundled_index)
    fresh.load(path)  # dspy.Module's own instance loader still works
    assert fresh.synthesize.demos == loaded.synthesize.demos
    assert fresh.step_delta.signature.instructions == "Only new facts, one move."

    with use_lm(scripted_lm(oracle_engine())):
        pred = loaded(question="Who created Ruby on Rails?")
    assert pred.answer == "David Heinemeier Hansson"


def test_class_load_defaults_to_the_bundled_corpus(tmp_path, bundled_index):
    path = save_program(compiled_example(bundled_index), tmp_path / "compiled.json")
    loaded = DeltaSeek.from_compiled(path)
    assert loaded.tool_names == ["search_corpus"]
    assert loaded.synthesize.demos


def test_saving_refuses_anything_but_json(tmp_path, bundled_index):
    with pytest.raises(ValueError, match=r"\.json"):
        save_program(seed_program(bundled_index), tmp_path / "compiled.pkl")
    assert not list(tmp_path.iterdir())


@pytest.mark.parametrize("content,problem", [
    ("{not json", "invalid JSON"),
    ("[1, 2]", "expected a JSON object"),
    ('{"step_delta": {}, "metadata": {}}', "saved from another program"),
])
def test_a_bad_program_file_names_the_file(tmp_path, content, problem):
    path = tmp_path / "bad.json"
    path.write_text(content)
    with pytest.raises(ProgramFileError, match=problem) as caught:
        DeltaSeek.from_compiled(path)
    assert str(path) in str(caught.value)


def test_a_file_saved_from_another_program_is_refused(tmp_path):
    path = tmp_path / "cot.json"
    dspy.ChainOfThought("question -> answer").save(str(path))
    with pytest.raises(ProgramFileError, match="saved from another program: its predictors are predict"):
        DeltaSeek.from_compiled(path)


def test_a_program_whose_signature_differs_is_refused(tmp_path, bundled_index):
    path = save_program(seed_program(bundled_index), tmp_path / "compiled.json")
    state = json.loads(path.read_text())
    state["judge"]["signature"]["fields"].pop()
    path.write_text(json.dumps(state))
    with pytest.raises(ProgramFileError, match="predictor 'judge' was saved with 4 signature fields"):
        DeltaSeek.from_compiled(path)


def test_missing_and_pickle_program_files(tmp_path):
    with pytest.raises(ProgramFileError, match="not found"):
        DeltaSeek.from_compiled(tmp_path / "nope.json")
    (tmp_path / "program.pkl").write_bytes(b"\x80\x04")
    with pytest.raises(ProgramFileError, match="pickles are never loaded"):
        DeltaSeek.from_compiled(tmp_path / "program.pkl")


def test_the_shipped_program_is_the_default_only_for_the_embedded_model(tmp_path, bundled_index, monkeypatch, use_lm):
    shipped = save_program(compiled_example(bundled_index), tmp_path / "shipped.json")
    monkeypatch.setattr(compiled_programs, "shipped_program_path", lambda: shipped)
    embedded = dspy.LM("embedded/smollm2-135m-instruct", engine=LlamaCppEngine())  # the model loads lazily

    with use_lm(scripted_lm(oracle_engine())):
        program = seed_program(bundled_index)
        assert load_state_into(program, None) is None and not program.synthesize.demos
    with use_lm(embedded):
        program = seed_program(bundled_index)
        assert load_state_into(program, None) == shipped and program.synthesize.demos
        assert load_state_into(seed_program(bundled_index), "none") is None  # --program none: own prompts
        monkeypatch.setattr(compiled_programs, "shipped_program_path", lambda: tmp_path / "absent.json")
        assert load_state_into(seed_program(bundled_index), None) is None


def test_the_repository_ships_the_compiled_program_its_readme_promises(bundled_index):
    """programs/compiled/README.md says whether a compiled program is shipped (none is now). One
    that is shipped loads, and its demos are complete traces: each holds every field of its
    predictor, the condition the README sets (labeled demos taught the model "Not supplied")."""
    shipped = compiled_programs.shipped_program_path()
    says_none = "None is shipped now." in (shipped.parent / "README.md").read_text()
    assert shipped.is_file() != says_none, f"{shipped.parent}/README.md and the folder disagree"
    if says_none:
        return
    program = DeltaSeek.from_compiled(shipped, tools=[LocalCorpusSearch(bundled_index)])
    demos = [(name, predictor, demo) for name, predictor in program.named_predictors() for demo in predictor.demos]
    assert demos
    for name, predictor, demo in demos:
        assert set(predictor.signature.fields) <= set(demo.keys()), name


# --- deltaseek evaluate --------------------------------------------------------


def test_evaluate_writes_every_example_and_prints_the_means(capsys, scripted_cli, dataset, tmp_path, offline_tracking):
    out = tmp_path / "eval.jsonl"
    code, stdout, err = run_cli(capsys, "evaluate", "--dataset", dataset, "--split", "all", "--out", out,
                                "--tracking-uri", offline_tracking)
    assert code == 0, err
    rows = read_jsonl(out)
    assert [r["id"] for r in rows] == [r["id"] for r in ROWS]
    for row in rows:
        assert {"question", "gold", "answer", "answerability", "stop_reason", "tool_calls", "scores", "error"} <= set(row)
        assert set(row["scores"]) == {"exact_match", "token_f1", "answerability_accuracy", "efficiency", "combined"}
        assert row["tool_calls"] and row["error"] is None
    assert rows[0]["answer"] == "David Heinemeier Hansson" and rows[0]["scores"]["exact_match"] == 1.0
    assert rows[3]["answerability"] == "unlikely" and rows[3]["scores"]["answerability_accuracy"] == 1.0
    combined = sum(r["scores"]["combined"] for r in rows) / len(rows)
    [printed] = [line.split() for line in stdout.splitlines() if line.startswith("combined")]
    assert printed == ["combined", f"{combined:.3f}"]
    assert "4 examples" in stdout


def test_evaluate_and_optimize_run_from_python_as_from_the_command_line(capsys, dataset, tmp_path, offline_tracking,
                                                                        monkeypatch):
    from deltaseek import AgentOptions, TrackingOptions, evaluate_dataset, optimize_program

    monkeypatch.chdir(tmp_path)
    saved = {k: dspy.settings.get(k) for k in ("lm", "adapter")}
    made = []

    def setup_lm(agent, **kwargs):
        made.append(agent)
        lm = scripted_lm(oracle_engine())
        dspy.configure(lm=lm, adapter=dspy.JSONAdapter())
        return lm

    tracking = TrackingOptions(offline_tracking, no_traces=True)
    try:
        report = evaluate_dataset(dataset, AgentOptions(no_cache=True), tracking, split="all",
                                  out=tmp_path / "eval.jsonl", setup_lm=setup_lm)
        optimized = optimize_program(dataset, "labeled", AgentOptions(no_cache=True), tracking,
                                     out=tmp_path / "compiled.json", setup_lm=setup_lm)
    finally:
        dspy.configure(**saved)
    assert [r["id"] for r in report.rows] == [r["id"] for r in ROWS] and report.means["exact_match"] == 1.0
    assert made[0].corpus and made[0].corpus[0].endswith("seed_corpus.jsonl")  # the examples' bundled corpus
    assert optimized.path.is_file() and set(optimized.baselines) == set(optimized.compiled) == {"dev"}
    assert optimized.compiled["dev"].means["exact_match"] == 1.0
    assert "compiled in" in capsys.readouterr().out


def test_unreachable_tracking_server_warns_once_and_keeps_the_results(capsys, scripted_cli, dataset, tmp_path,
                                                                      offline_tracking):
    out = tmp_path / "eval.jsonl"
    code, stdout, err = run_cli(capsys, "evaluate", "--dataset", dataset, "--out", out,
                                "--tracking-uri", offline_tracking)
    assert code == 0, err
    warnings = [line for line in err.splitlines() if line.startswith("deltaseek: warning:")]
    assert len(warnings) == 1 and offline_tracking in warnings[0] and "unreachable" in warnings[0]
    assert [row["group"] for row in read_jsonl(out)] == ["Ohio", None]  # the dev split; the confidence fit's folds
    assert "combined" in stdout


def test_the_tracking_server_comes_from_the_environment(capsys, scripted_cli, dataset, tmp_path, offline_tracking,
                                                        monkeypatch):
    monkeypatch.setenv("MLFLOW_TRACKING_URI", offline_tracking)
    code, _, err = run_cli(capsys, "evaluate", "--dataset", dataset, "--out", tmp_path / "e.jsonl")
    assert code == 0 and offline_tracking in err


def test_evaluate_logs_to_a_local_store_by_default(capsys, scripted_cli, dataset, tmp_path, monkeypatch):
    monkeypatch.delenv("MLFLOW_TRACKING_URI", raising=False)
    code, _, err = run_cli(capsys, "evaluate", "--dataset", dataset, "--limit", "1", "--no-traces")
    assert code == 0, err
    assert (tmp_path / "mlflow.db").is_file()
    assert len(list((tmp_path / "results").glob("evaluate-labeled-dev-*.jsonl"))) == 1

    import mlflow

    client = mlflow.MlflowClient(tracking_uri=f"sqlite:///{tmp_path / 'mlflow.db'}")
    experiment = client.get_experiment_by_name("deltaseek")
    [run] = client.search_runs([experiment.experiment_id])
    assert run.data.params["split"] == "dev" and run.data.params["examples"] == "1"
    assert "combined" in run.data.metrics


def test_a_crashing_example_is_kept_and_the_rest_still_run(capsys, scripted_cli, dataset, tmp_path, offline_tracking,
                                                           monkeypatch):
    import deltaseek.optimize.evaluate as evaluation

    real = evaluation.run_question

    def flaky(program, question):
        if "Ohio" in question:
            raise RuntimeError("tool exploded")
        return real(program, question)

    monkeypatch.setattr(evaluation, "run_question", flaky)
    out = tmp_path / "eval.jsonl"
    code, stdout, err = run_cli(capsys, "evaluate", "--dataset", dataset, "--out", out, "--tracking-uri", offline_tracking)
    assert code == 0, err
    crashed, fine = read_jsonl(out)
    assert crashed["error"] == "RuntimeError: tool exploded" and crashed["answer"] is None
    assert set(crashed["scores"].values()) == {0.0}
    assert fine["error"] is None and fine["scores"]["answerability_accuracy"] == 1.0
    assert "1 crashed" in stdout


def test_an_interrupted_evaluation_keeps_the_finished_examples(capsys, scripted_cli, dataset, tmp_path,
                                                               offline_tracking, monkeypatch):
    import deltaseek.optimize.evaluate as evaluation

    real = evaluation.run_question

    def interrupted(program, question):
        if "llama.cpp" in question:
            raise KeyboardInterrupt
        return real(program, question)

    monkeypatch.setattr(evaluation, "run_question", interrupted)
    out = tmp_path / "eval.jsonl"
    code, _, err = run_cli(capsys, "evaluate", "--dataset", dataset, "--split", "train", "--out", out,
                           "--tracking-uri", offline_tracking)
    assert code == 130 and "Traceback" not in err
    [line] = [line for line in err.splitlines() if line.startswith("deltaseek: stopped")]
    assert "1 finished examples kept in" in line
    [row] = read_jsonl(out)
    assert row["id"] == "t-rails" and row["answer"] == "David Heinemeier Hansson"


def test_evaluate_with_threads_keeps_the_example_order(tmp_path, bundled_index, use_lm):
    """The first example is the slowest, so with two threads the rows finish out of order: the file
    holds them as they finished, each with its example's index; the report (and the MLflow table
    made from it) lists them in the examples' order."""
    engine = oracle_engine()
    answer = engine.handlers["step"]

    def slow_first(prompt):
        if current_question(prompt) == ROWS[0]["question"]:
            time.sleep(4)  # longer than another question's run, the reader adapter's reading (a second) included
        return answer(prompt)

    engine.handlers["step"] = slow_first
    examples = [dspy.Example(**r).with_inputs("question") for r in ROWS]
    with use_lm(scripted_lm(engine)):
        report = evaluate_program(seed_program(bundled_index), examples, tmp_path / "eval.jsonl", threads=2)
    written = read_jsonl(tmp_path / "eval.jsonl")
    assert written[0]["id"] != ROWS[0]["id"]  # the threads really ran side by side
    assert all(ROWS[row["index"]]["id"] == row["id"] and row["error"] is None for row in written)
    assert [row["id"] for row in report.rows] == [r["id"] for r in ROWS]
    assert table_columns(report.rows)["id"] == [r["id"] for r in ROWS]


# --- deltaseek optimize --------------------------------------------------------


def test_optimize_labeled_saves_a_loadable_program_and_prints_the_lift(capsys, scripted_cli, dataset, tmp_path,
                                                                       offline_tracking, bundled_index):
    out = tmp_path / "compiled" / "program.json"
    code, stdout, err = run_cli(capsys, "optimize", "--dataset", dataset, "--optimizer", "labeled", "--budget", "1",
                                "--out", out, "--tracking-uri", offline_tracking)
    assert code == 0, err
    assert "unreachable" in err
    program = DeltaSeek.from_compiled(out, tools=[LocalCorpusSearch(bundled_index)])
    demos = program.synthesize.demos
    assert len(demos) == 1 and demos[0]["question"] in {r["question"] for r in ROWS if r["split"] == "train"}
    assert "dev split: 2 examples" in stdout and "baseline" in stdout and "lift" in stdout
    written = sorted(p.name for p in (tmp_path / "results").iterdir())
    assert len(written) == 2 and any("baseline-dev" in n for n in written) and any("compiled-dev" in n for n in written)


def test_optimize_bootstrap_keeps_runs_that_pass_the_metric(capsys, scripted_cli, dataset, tmp_path,
                                                            offline_tracking, bundled_index):
    out = tmp_path / "program.json"
    code, stdout, err = run_cli(capsys, "optimize", "--dataset", dataset, "--optimizer", "bootstrap", "--budget", "1",
                                "--out", out, "--eval-split", "dev,train", "--tracking-uri", offline_tracking)
    assert code == 0, err
    program = DeltaSeek.from_compiled(out, tools=[LocalCorpusSearch(bundled_index)])
    [demo] = program.synthesize.demos
    assert demo.get("augmented") and demo["answer"] == "David Heinemeier Hansson"  # a bootstrapped trace
    assert program.step_delta.demos
    # complete traces only: no demo leaves a field for DSPy to fill with "Not supplied ..."
    for name, predictor in program.named_predictors():
        for demo in predictor.demos:
            assert set(predictor.signature.fields) <= set(demo.keys()), name
    assert "dev split" in stdout and "train split" in stdout


def test_optimize_starts_from_its_own_prompts_not_the_shipped_program(capsys, scripted_cli, dataset, tmp_path,
                                                                     offline_tracking, bundled_index, monkeypatch):
    shipped = save_program(compiled_example(bundled_index), tmp_path / "shipped.json")
    monkeypatch.setattr(compiled_programs, "default_program_path", lambda lm=None: shipped)
    out = tmp_path / "program.json"
    code, _, err = run_cli(capsys, "optimize", "--dataset", dataset, "--optimizer", "labeled", "--budget", "1",
                           "--out", out, "--tracking-uri", offline_tracking)
    assert code == 0, err
    state = json.loads(out.read_text())
    assert state["step_delta"]["signature"]["instructions"] != "Only new facts, one move."


class Recorder:
    """Stands in for a DSPy optimizer class and records how it was built and called."""

    calls: list = []

    def __init__(self, *args, **kwargs):
        Recorder.calls.append(("init", kwargs))

    def compile(self, student, **kwargs):
        Recorder.calls.append(("compile", kwargs))
        return student


@pytest.mark.parametrize("optimizer,cls,init,compile_kwargs", [
    ("labeled", "LabeledFewShot", {"k": 3}, {}),
    ("bootstrap", "BootstrapFewShot", {"max_bootstrapped_demos": 3, "max_labeled_demos": 0}, {}),
    ("random-search", "BootstrapFewShotWithRandomSearch", {"num_candidate_programs": 3}, {}),
    ("mipro", "MIPROv2", {"auto": None, "num_candidates": 3}, {"num_trials": 3, "minibatch_size": 3}),
    ("gepa", "GEPA", {"max_metric_calls": 3}, {}),
])
def test_the_budget_maps_onto_each_optimizers_knob(monkeypatch, bundled_index, optimizer, cls, init, compile_kwargs,
                                                    use_lm):
    monkeypatch.setattr(dspy, cls, Recorder)
    Recorder.calls = []
    trainset = [dspy.Example(**r).with_inputs("question") for r in ROWS]
    with use_lm(scripted_lm(oracle_engine())):
        compile_program(optimizer, seed_program(bundled_index), trainset, budget=3)
    (_, built), (_, called) = Recorder.calls
    assert init.items() <= built.items()
    assert compile_kwargs.items() <= called.items()
    if optimizer == "gepa":
        assert built["reflection_lm"] is not None  # the task LM when none is given
    assert set(OPTIMIZERS) == {"labeled", "bootstrap", "random-search", "mipro", "gepa"}


GENERIC_FIELDS = {"program_description": "A search agent.", "module_description": "One step of it.",
                  "proposed_instruction": "Answer with the fact alone.", "observations": "Factual questions.",
                  "summary": "Factual questions."}


PROPOSED_INSTRUCTION = GENERIC_FIELDS["proposed_instruction"]


def teachable_engine() -> ScriptedEngine:
    """The oracle, but untaught its steps wander: two more searches before the answer, which costs
    efficiency. A prompt with a demo or the proposed instruction teaches it to answer after one
    search, so there is something for an optimizer to find."""
    engine = oracle_engine()
    oracle_step = engine.handlers["step"]

    def step_handler(prompt):
        # the marker stands in the format's description and before the question: more is a demo
        taught = prompt.count(QUESTION_MARKER) > 2 or PROPOSED_INSTRUCTION in prompt
        current = prompt[prompt.rfind(QUESTION_MARKER):]
        searches = current.count("- search_corpus:")
        if taught or searches >= 3:
            return oracle_step(prompt)
        return step(f"{current_question(prompt)} {('history', 'overview', 'origins')[searches]} details")

    engine.handlers["step"] = step_handler
    return engine


@pytest.mark.parametrize("optimizer,budget", [("random-search", 1), ("mipro", 2), ("gepa", 12)])
def test_the_search_optimizers_compile_a_program_that_saves_and_loads(tmp_path, bundled_index, use_lm, optimizer,
                                                                       budget):
    """End to end on an oracle LM that wanders until it is taught; the proposer prompts (MIPROv2) and
    the reflection LM (GEPA) get stock replies. A compiled program must differ from the student
    in its prompts (returning the student unchanged fails), and load back as it was saved."""
    if optimizer == "mipro":
        pytest.importorskip("optuna")
    engine = teachable_engine()
    engine.handlers["unknown"] = lambda _: GENERIC_FIELDS
    reflection = scripted_lm(ScriptedEngine(default=lambda _: {"new_instruction": PROPOSED_INSTRUCTION}))
    trainset = [dspy.Example(**r).with_inputs("question") for r in ROWS]
    with use_lm(scripted_lm(engine)):
        compiled = compile_program(optimizer, seed_program(bundled_index), trainset, budget, reflection_lm=reflection)
    assert isinstance(compiled, DeltaSeek)
    loaded = DeltaSeek.from_compiled(save_program(compiled, tmp_path / "compiled.json"), tools=[LocalCorpusSearch(bundled_index)])
    assert [n for n, _ in loaded.named_predictors()] == ["step_delta", "diversify", "judge", "classify", "synthesize"]
    prompts = {name: prompt_state(p) for name, p in compiled.named_predictors()}
    assert prompts != {name: prompt_state(p) for name, p in seed_program(bundled_index).named_predictors()}, \
        "compiled: no predictor got a demo or another instruction"
    assert {name: prompt_state(p) for name, p in loaded.named_predictors()} == prompts  # saved and loaded whole


def prompt_state(predictor) -> tuple[str, list[dict]]:
    """What a compile can change in a predictor: its instructions and its demos."""
    return predictor.signature.instructions, [dict(demo) for demo in predictor.demos]


def test_an_optimizer_whose_package_is_missing_fails_before_any_work(capsys, scripted_cli, dataset, monkeypatch):
    import dataclasses

    import deltaseek.optimize.compile as compiling

    monkeypatch.setitem(compiling.OPTIMIZERS, "mipro",
                        dataclasses.replace(compiling.OPTIMIZERS["mipro"], requires=("no_such_package_xyz",)))
    code, _, err = run_cli(capsys, "optimize", "--dataset", dataset, "--optimizer", "mipro")
    assert code == 2 and "needs no_such_package_xyz, which is not installed" in err
    assert not scripted_cli


# --- bad input: one line, non-zero exit, nothing computed lost --------------------------


@pytest.mark.parametrize("content,problem", [
    ('{"answer": "x", "answerability": "direct", "corpus": "seed"}\n', ":1: field 'question': missing"),
    ("", "the dataset is empty"),
    ('{"question": "Q?", "answer": "x", "answerability": "maybe", "corpus": "seed"}\n',
     ":1: field 'answerability': 'maybe' is not one of direct, proxy_only, unlikely"),
])
@pytest.mark.parametrize("command", ["evaluate", "optimize"])
def test_a_bad_dataset_is_one_line(capsys, scripted_cli, tmp_path, content, problem, command):
    path = tmp_path / "bad.jsonl"
    path.write_text(content)
    extra = ["--optimizer", "labeled"] if command == "optimize" else []
    code, _, err = run_cli(capsys, command, "--dataset", path, *extra)
    assert code == 2
    assert len(err.strip().splitlines()) == 1 and err.startswith("deltaseek: error: ")
    assert str(path) in err and problem in err
    assert not scripted_cli  # failed before any LM was configured


def test_a_missing_dataset_is_one_line(capsys, scripted_cli, tmp_path):
    code, _, err = run_cli(capsys, "evaluate", "--dataset", tmp_path / "nope.jsonl")
    assert code == 2 and err.strip() == f"deltaseek: error: {tmp_path / 'nope.jsonl'}: file not found"


def test_a_dataset_of_an_unknown_corpus_asks_for_the_corpus_file(capsys, scripted_cli, tmp_path):
    path = tmp_path / "other.jsonl"
    path.write_text(json.dumps({"question": "Q?", "answer": "A", "answerability": "direct", "corpus": "wiki",
                                "split": "dev"}) + "\n")
    code, _, err = run_cli(capsys, "evaluate", "--dataset", path)
    assert code == 2 and "corpus 'wiki' is not bundled" in err and "--corpus" in err


@pytest.mark.parametrize("content,problem", [
    ("{not json", "invalid JSON"),
    ('{"predict": {"demos": [], "signature": {"fields": []}}}', "saved from another program"),
])
def test_a_bad_program_file_is_one_line(capsys, scripted_cli, dataset, tmp_path, content, problem, offline_tracking):
    program = tmp_path / "program.json"
    program.write_text(content)
    out = tmp_path / "eval.jsonl"
    code, _, err = run_cli(capsys, "evaluate", "--dataset", dataset, "--program", program, "--out", out,
                           "--tracking-uri", offline_tracking)
    assert code == 2 and len(err.strip().splitlines()) == 1
    assert str(program) in err and problem in err
    assert not out.exists()


@pytest.mark.parametrize("budget", ["0", "-3"])
def test_a_budget_below_one_is_one_line(capsys, scripted_cli, dataset, tmp_path, budget):
    out = tmp_path / "program.json"
    code, _, err = run_cli(capsys, "optimize", "--dataset", dataset, "--optimizer", "bootstrap", "--budget", budget,
                           "--out", out)
    assert code == 2 and err.strip() == f"deltaseek: error: --budget must be a positive integer, got {budget}"
    assert not out.exists() and not scripted_cli


def test_an_unknown_optimizer_is_refused_by_the_parser(capsys, dataset):
    with pytest.raises(SystemExit) as caught:
        main(["optimize", "--dataset", str(dataset), "--optimizer", "simulated-annealing"])
    assert caught.value.code == 2
    assert "invalid choice: 'simulated-annealing'" in capsys.readouterr().err


@pytest.mark.parametrize("argv,problem", [
    (["optimize", "--optimizer", "labeled", "--out", "program.pkl"], "use a .json path"),
    (["optimize", "--optimizer", "labeled", "--eval-split", "holdout"], "--eval-split 'holdout'"),
    (["evaluate", "--limit", "0"], "--limit must be a positive integer"),
    (["evaluate", "--threads", "0"], "--threads must be a positive integer"),
])
def test_other_bad_options_are_one_line(capsys, scripted_cli, dataset, argv, problem):
    code, _, err = run_cli(capsys, *argv, "--dataset", dataset)
    assert code == 2 and problem in err and len(err.strip().splitlines()) == 1


def test_a_failing_compile_keeps_the_baseline_results(capsys, scripted_cli, dataset, tmp_path, offline_tracking,
                                                      monkeypatch):
    import deltaseek.optimize.pipeline as optimize_pipeline

    def broken(*args, **kwargs):
        raise RuntimeError("optimizer blew up")

    monkeypatch.setattr(optimize_pipeline, "compile_program", broken)
    code, stdout, err = run_cli(capsys, "optimize", "--dataset", dataset, "--optimizer", "labeled",
                                "--out", tmp_path / "program.json", "--tracking-uri", offline_tracking)
    assert code == 1 and "RuntimeError: optimizer blew up" in err
    [baseline] = list((tmp_path / "results").glob("*baseline-dev.jsonl"))
    assert len(read_jsonl(baseline)) == 2 and "baseline dev: 2 examples" in stdout
    assert not (tmp_path / "program.json").exists()


@pytest.mark.parametrize("corrupt,problem", [
    (lambda state: state["synthesize"].update(demos=[{"bogus": 1}, 5]), "predictor 'synthesize': demo 1 holds none"),
    (lambda state: state["classify"].update(demos=[{"question": "q", "kind": "lookup"}, 5]),
     "predictor 'classify': demo 2 must be an object"),
    (lambda state: state["judge"]["signature"].update(instructions=12345),
     "predictor 'judge': instructions must be text, got int 12345"),
])
def test_a_corrupt_program_file_is_one_line_naming_the_file(tmp_path, bundled_index, corrupt, problem):
    from deltaseek.programs.tools import LocalCorpusSearch

    program = DeltaSeek(tools=[LocalCorpusSearch(bundled_index)])
    path = tmp_path / "compiled.json"
    program.save(str(path))
    state = json.loads(path.read_text())
    corrupt(state)
    path.write_text(json.dumps(state))
    with pytest.raises(ProgramFileError) as raised:
        load_state_into(DeltaSeek(tools=[LocalCorpusSearch(bundled_index)]), path)
    message = str(raised.value)
    assert message.startswith(f"{path}: ") and problem in message and "\n" not in message


def test_evaluate_on_a_set_with_no_corpus_searches_the_given_or_bundled_corpus(capsys, scripted_cli, tmp_path,
                                                                              offline_tracking):
    path = tmp_path / "mine.jsonl"
    path.write_text("".join(json.dumps({k: v for k, v in r.items() if k != "corpus"}) + "\n" for r in ROWS))
    out = tmp_path / "eval.jsonl"
    code, _, err = run_cli(capsys, "evaluate", "--dataset", path, "--split", "all", "--out", out,
                           "--tracking-uri", offline_tracking)
    assert code == 0, err
    rows = read_jsonl(out)
    assert len(rows) == 4 and all(r["error"] is None for r in rows)
    assert rows[0]["answer"] == "David Heinemeier Hansson" and rows[0]["sources"]

    corpus = tmp_path / "own.jsonl"
    corpus.write_text('{"id": "own-1", "title": "Rails", "text": "Ruby on Rails was created by '
                      'David Heinemeier Hansson."}\n')
    code, _, err = run_cli(capsys, "evaluate", "--dataset", path, "--split", "train", "--limit", "1", "--out",
                           tmp_path / "own.jsonl.out", "--corpus", corpus, "--tracking-uri", offline_tracking)
    assert code == 0, err
    [row] = read_jsonl(tmp_path / "own.jsonl.out")
    assert [s["id"] for s in row["sources"]] == ["own-1"]


def small_set(tmp_path) -> Path:
    """Three rows without a split field whose ids all hash outside the dev split."""
    ids = [i for i in (f"mine-{n}" for n in range(40)) if assign_split(i) != "dev"][:3]
    rows = [{k: v for k, v in r.items() if k != "split"} | {"id": i} for r, i in zip(ROWS, ids)]
    path = tmp_path / "my3rows.jsonl"
    path.write_text("".join(json.dumps(r) + "\n" for r in rows))
    return path


def test_a_set_too_small_to_split_is_evaluated_whole_with_a_note(capsys, tmp_path, monkeypatch, restored_dspy):
    monkeypatch.chdir(tmp_path)
    monkeypatch.setattr(cli, "configure_lm_from",
                        lambda args: dspy.configure(lm=scripted_lm(oracle_engine()), adapter=dspy.JSONAdapter()))
    path, out = small_set(tmp_path), tmp_path / "eval.jsonl"
    code, stdout, err = run_cli(capsys, "evaluate", "--dataset", path, "--out", out, "--tracking-uri",
                                f"sqlite:///{tmp_path / 'mlflow.db'}", "--no-traces")
    assert code == 0, err
    assert f"deltaseek: note: {path}: the dev split holds none of its 3 examples (too few to split); all of them " \
           "are run, as with --split all" in err
    assert len(read_jsonl(out)) == 3 and "3 examples" in stdout

    code, _, err = run_cli(capsys, "evaluate", "--dataset", path, "--split", "dev", "--out", tmp_path / "dev.jsonl")
    assert code == 2 and err.strip() == (f"deltaseek: error: {path}: the dev split holds none of its 3 examples; "
                                         "pass --split all to run every example")
