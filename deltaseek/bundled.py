"""The data shipped inside the package, found with importlib.resources wherever it is installed.

In the repository the files live in `datasets/` and `programs/compiled/`; the wheel maps them to
`deltaseek/datasets/` and `deltaseek/programs/compiled/`. `datasets/` is data only (no
`__init__.py`, so it never shadows Hugging Face `datasets`), and an editable install cannot map a
folder without one under `deltaseek`: there the files are read from the checkout beside it.
"""

from __future__ import annotations

from importlib.resources import as_file, files
from importlib.resources.abc import Traversable
from pathlib import Path

SEED_QUESTIONS = (
    "Who is the lieutenant governor of Ohio?",
    "Who created the Ruby programming language, and where was he born?",
    "What is the street address of The New York Times headquarters?",
    "What is the population of Xyzzyville?",
    "What is the current rate of adoption for Ollama vs llama.cpp in the magnificent 7?",
)
"""The five cases the seeds name, asked by the benchmark and the end-to-end tests."""

CORPUS_NAMES = ("seed", "musique", "squad2", "hotpotqa")
"""The bundled corpora, by the name a labeled row's `corpus` field uses."""
DEFAULT_CORPORA = ("seed", "musique")
"""The corpora searched when none is given. SQuAD 2.0's paragraphs are searched only for its own
questions: ten articles' worth of New York City would crowd out the seed questions' passages."""


def _real_path(resource: Traversable) -> Path:
    # Installed from a wheel or a checkout the resource is a real file; as_file would copy
    # it out of a zip, which no supported install produces, so the context is left at once.
    with as_file(resource) as path:
        return Path(path)


def datasets_dir() -> Path:
    """`deltaseek/datasets/` of an installed wheel, else `datasets/` of the checkout (editable install)."""
    installed = files("deltaseek").joinpath("datasets")
    if installed.is_dir():
        return _real_path(installed)
    return _real_path(files("deltaseek")).parent / "datasets"


def corpus_path(name: str) -> Path:
    """The JSONL file of a bundled corpus: `seed` (the seed questions' passages) or `musique`."""
    return datasets_dir() / "corpus" / f"{name}_corpus.jsonl"


def bundled_corpora() -> tuple[Path, ...]:
    """The bundled corpora searched together by default (`DEFAULT_CORPORA`)."""
    return tuple(corpus_path(name) for name in DEFAULT_CORPORA)


def labeled_set(name: str) -> Path:
    """A bundled labeled set: `seed_set` (50 questions with splits), `musique` (100 questions),
    `squad2` (SQuAD 2.0 train questions, a third unanswerable), `squad2_articles` (all of them,
    split by article) or `hotpotqa` (500 two-hop questions)."""
    return datasets_dir() / f"{name}.jsonl"


def shipped_program_path() -> Path:
    """Where the program compiled for the embedded model is shipped (`deltaseek.shipped_program()`
    loads it; it is also the default whenever that model runs). The file may be absent."""
    return _real_path(files("deltaseek.programs").joinpath("compiled", "shipped.json"))


def shipped_reader_path() -> Path:
    """The learned reader the package ships (`programs/compiled/reader.json`, its weights as JSON)."""
    return _real_path(files("deltaseek.programs").joinpath("compiled", "reader.json"))
