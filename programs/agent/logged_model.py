"""Compiled programs as MLflow models of the DSPy flavor: logged, registered, loaded and served.

`log_program` logs a program with `mlflow.dspy.log_model` (DSPy's own save,
`use_dspy_model_save=True`), together with the LM and adapter configured now, wrapped in
`AnswerRecord`. The flavor's pyfunc returns a module's Prediction as a dict, and DeltaSeek's
Prediction holds the scratchpad object and bare source ids; the wrapper's output is instead the
JSON record of `deltaseek ask --json` (`run_question`). That record is what
`mlflow.pyfunc.load_model(uri).predict({"question": ...})` returns and what
`mlflow models serve` answers on POST /invocations (as `{"predictions": record}`).

    with mlflow.start_run():
        info = log_program(program, question="Who is the lieutenant governor of Ohio?",
                           registered_model_name="deltaseek")
    mlflow.pyfunc.load_model("models:/deltaseek/1").predict({"question": "..."})["answer"]

Both of the flavor's formats store the program and `dspy.settings` with cloudpickle (with
`use_dspy_model_save`, `program.pkl` and `dspy_config.pkl`: the flavor has no JSON form): load
models only from a store you trust (a compiled program's JSON state file is never a pickle).
`PICKLED` says so in one line where a model is logged; DSPy's warnings about "untrusted .pkl
files", written while this process pickles its own program, are left out.
The embedded LM is pickled as its configuration (`LlamaCppEngine.__reduce__`); its model is
loaded again, once per process, on first use.

`load_logged_module(uri)` loads the DSPy module of a `models:/` or `runs:/` URI without
touching this process's `dspy.settings`; `DeltaSeek.from_compiled(uri)` takes its prompts from it.
"""

from __future__ import annotations

import contextlib
import logging
import os
import tempfile

import dspy

from deltaseek.errors import LMConfigError, ProgramFileError
from deltaseek.programs.agent.run import run_question
from deltaseek.programs.mlflow_store import LOCAL_TRACKING_URI, fail_quickly, unreadable_reason

MODEL_NAME = "deltaseek"
"""The name of the model in its run (the registered name is the user's choice)."""
MODEL_URI_PREFIXES = ("models:/", "runs:/")
PICKLED = ("the MLflow model holds the program and its LM settings as cloudpickles (program.pkl, dspy_config.pkl: "
           "MLflow's DSPy flavor saves no other way); load it only from a store you trust")
"""The one line a command prints where it logs a model: what is pickled, and why."""
PICKLE_WARNING_LOGGERS = ("dspy.primitives.base_module", "dspy.dsp.utils.settings")
"""Where DSPy warns, on saving, that loading untrusted .pkl files can run arbitrary code."""


class AnswerRecord(dspy.Module):
    """A program whose output is the JSON record of `deltaseek ask --json`: what MLflow's DSPy
    flavor returns from pyfunc `predict` and serves over HTTP."""

    def __init__(self, program: dspy.Module):
        super().__init__()
        self.program = program

    def forward(self, question: str) -> dspy.Prediction:
        return dspy.Prediction(**run_question(self.program, question))


def record_signature():
    """The model's signature: a question in; the record out (its free-form parts, the tool calls
    and the trajectory, typed as any)."""
    from mlflow.models import ModelSignature
    from mlflow.types.schema import AnyType, Array, ColSpec, DataType, Object, Property, Schema

    text = DataType.string
    source = Object([Property("id", text), Property("title", text, required=False),
                     Property("url", text, required=False)])
    outputs = [ColSpec(text, "question"), ColSpec(text, "answer"), ColSpec(text, "answer_origin"),
               ColSpec(text, "proposed_answer", required=False), ColSpec(text, "replaced_because", required=False),
               ColSpec(text, "answerability"), ColSpec(DataType.double, "confidence", required=False),
               ColSpec(AnyType(), "confidence_signals", required=False),
               ColSpec(Array(text), "caveats"), ColSpec(Array(text), "assumptions"),
               ColSpec(text, "stop_reason"), ColSpec(text, "answered_by", required=False), ColSpec(text, "profile"),
               ColSpec(Array(source), "sources"), ColSpec(DataType.long, "steps"),
               ColSpec(AnyType(), "tool_calls"), ColSpec(AnyType(), "lm_faults", required=False),
               ColSpec(DataType.long, "lm_calls"), ColSpec(DataType.long, "tokens"),
               ColSpec(DataType.double, "seconds"), ColSpec(AnyType(), "trajectory")]
    return ModelSignature(inputs=Schema([ColSpec(text, "question")]), outputs=Schema(outputs))


def model_requirements() -> list[str]:
    """deltaseek and its dependencies, pinned to the versions installed here. Given explicitly:
    MLflow's own inference loads the model in a subprocess, and lists what that imports, which
    leaves out llama-cpp-python and the package holding the embedded model."""
    from importlib.metadata import PackageNotFoundError, requires, version

    from packaging.requirements import Requirement

    pins = [f"deltaseek=={version('deltaseek')}"]
    for line in requires("deltaseek") or []:
        requirement = Requirement(line)
        if requirement.marker is not None and not requirement.marker.evaluate({"extra": ""}):
            continue  # an extra (tests, notebooks), not needed to serve
        try:
            pins.append(f"{requirement.name}=={version(requirement.name)}")
        except PackageNotFoundError:
            pins.append(str(requirement))
    return pins


def log_program(program: dspy.Module, question: str, name: str = MODEL_NAME,
                registered_model_name: str | None = None):
    """Log `program` (wrapped in `AnswerRecord`) in the active MLflow run, with the LM and adapter
    configured now, a signature and `question` as the input example; register it as
    `registered_model_name` when given. Returns MLflow's ModelInfo (`model_uri`, and
    `registered_model_version` when registered).

    MLflow checks the input example by answering it with the logged model, in this process."""
    import mlflow

    lm = dspy.settings.lm
    if lm is None:
        raise LMConfigError("no LM is configured: call configure_lm() before logging a program")
    # The saved settings hold a copy of the LM without this process's call history, and no
    # callbacks (MLflow's tracing callback, when autolog is on, belongs to this run only).
    with dspy.context(lm=lm.copy(), callbacks=[]), quiet_mlflow(), keep_active_model(), no_pickle_warnings():
        return mlflow.dspy.log_model(AnswerRecord(program), name=name, signature=record_signature(),
                                     input_example={"question": question}, pip_requirements=model_requirements(),
                                     registered_model_name=registered_model_name, use_dspy_model_save=True)


def is_model_uri(text: str | os.PathLike) -> bool:
    return str(text).startswith(MODEL_URI_PREFIXES)


def load_logged_module(uri: str) -> dspy.Module:
    """The DSPy module of an MLflow model (a `models:/NAME/VERSION` or `runs:/` URI), read from
    MLflow's current store: `mlflow.set_tracking_uri` or `$MLFLOW_TRACKING_URI`, else
    `sqlite:///mlflow.db` here, as for `deltaseek optimize` (then made MLflow's tracking URI);
    the registry is MLflow's (`$MLFLOW_REGISTRY_URI`, else that store). ProgramFileError, in one
    line, when the store cannot be read or holds no such DSPy model.

    Loaded through pyfunc: `mlflow.dspy.load_model` would also replace this process's
    `dspy.settings` with the ones saved with the model."""
    import mlflow

    if not mlflow.is_tracking_uri_set():  # MLflow resolves `models:/` in its own current registry
        mlflow.set_tracking_uri(LOCAL_TRACKING_URI)
    where = mlflow.get_registry_uri() if uri.startswith("models:/") else mlflow.get_tracking_uri()
    if reason := unreadable_reason(where):
        raise ProgramFileError(f"{uri}: the MLflow store {where} cannot be read ({reason}); "
                               "set MLFLOW_TRACKING_URI to the store the model was logged in")
    fail_quickly()
    try:
        with quiet_mlflow(), keep_active_model(), tempfile.TemporaryDirectory(prefix="deltaseek-model-") as folder:
            loaded = mlflow.pyfunc.load_model(mlflow.artifacts.download_artifacts(artifact_uri=uri, dst_path=folder))
    except Exception as exc:  # MLflow raises many types: MlflowException, OSError, HTTP and unpickling errors
        message = " ".join(f"{type(exc).__name__}: {exc}".split())
        raise ProgramFileError(f"{uri}: cannot load the MLflow model from {where} ({message[:300]})") from None
    module = getattr(loaded._model_impl, "model", None)  # the flavor's wrapper keeps the module as `.model`
    if not isinstance(module, dspy.Module):
        raise ProgramFileError(f"{uri}: not a DSPy model (its pyfunc loader is {loaded.loader_module})")
    return module


@contextlib.contextmanager
def quiet_mlflow():
    """No download progress bar and no INFO lines from MLflow while a model loads (a command
    prints its answer, not MLflow's chatter); warnings and errors still show."""
    variable = "MLFLOW_ENABLE_ARTIFACTS_PROGRESS_BAR"
    previous, logger = os.environ.get(variable), logging.getLogger("mlflow")
    level = logger.level
    os.environ[variable] = "false"
    logger.setLevel(logging.WARNING)
    try:
        yield
    finally:
        logger.setLevel(level)
        if previous is None:
            os.environ.pop(variable, None)
        else:
            os.environ[variable] = previous


class _PickleWarnings(logging.Filter):
    def filter(self, record: logging.LogRecord) -> bool:
        message = record.getMessage()
        return "untrusted .pkl files" not in message and "serialized using cloudpickle" not in message


@contextlib.contextmanager
def no_pickle_warnings():
    """DSPy's warnings about pickles, left out while this process pickles its own program (the
    files are its own, just written; `PICKLED` is the line a user reads instead)."""
    loggers, dropped = [logging.getLogger(name) for name in PICKLE_WARNING_LOGGERS], _PickleWarnings()
    for logger in loggers:
        logger.addFilter(dropped)
    try:
        yield
    finally:
        for logger in loggers:
            logger.removeFilter(dropped)


@contextlib.contextmanager
def keep_active_model():
    """Loading a model makes it MLflow's active model, when none is set, and every metric logged
    after that is linked to it (and refused, when it lives in another store): a program loaded
    for its prompts, or checked while it is logged, leaves no active model behind."""
    import mlflow

    before = mlflow.get_active_model_id()
    try:
        yield
    finally:
        if before is None and mlflow.get_active_model_id() is not None:
            mlflow.clear_active_model()
