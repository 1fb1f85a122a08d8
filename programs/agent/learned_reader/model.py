"""The reader's learned part: two linear models whose weights are data.

The ranker scores every candidate (`features.FEATURES`) and the best one is the reader's span;
the answerability model gives the probability that the facts read answer the question with that
span (`ANSWERABILITY_FEATURES`), and below `threshold` the reader abstains. Both are logistic
regressions trained by `python -m deltaseek.optimize.train_reader` (scikit-learn); what they
learned is stored as JSON (feature names beside their coefficients, the threshold, the format
version, what it was trained on), never a pickle: loading a reader runs no code. Scoring needs
only the numbers.
"""

from __future__ import annotations

import functools
import json
import math
from collections import Counter
from collections.abc import Collection
from pathlib import Path

from pydantic import BaseModel, ConfigDict, Field, ValidationError, model_validator

from deltaseek.bundled import shipped_reader_path
from deltaseek.errors import ProgramFileError
from deltaseek.files import write_text_atomically
from deltaseek.programs.agent.learned_reader.features import FEATURES, LEXICAL_PREFIX
from deltaseek.programs.agent.learned_reader.questions import ANSWER_TYPES

FORMAT_VERSION = 1
SUMMARY_FEATURES = ("top_score", "margin", "top_share", "candidates_log")
"""What the ranker's scores say of a question: the best score, its lead over the next distinct
span, its share of the probability mass, how many candidates there were."""
BEST_FEATURES = ("sentence_share", "window_share", "name_share", "passage_name_share", "support", "closeness",
                 "in_question_share", "sentence_relevance", "passage_rank", "no_anchor", "past_for_present")
"""The best candidate's own features the answerability model reads too."""
ANSWERABILITY_FEATURES = (*SUMMARY_FEATURES, *(f"best_{n}" for n in BEST_FEATURES),
                          *(f"ask_{t}" for t in ANSWER_TYPES))


class Linear(BaseModel):
    """A logistic regression as numbers: one coefficient per named feature and an intercept."""

    model_config = ConfigDict(allow_inf_nan=False)  # one NaN weight makes every score NaN, and no span wins

    features: list[str]
    coef: list[float]
    intercept: float

    @model_validator(mode="after")
    def _one_weight_per_feature(self):
        if len(self.features) != len(self.coef):
            raise ValueError(f"{len(self.features)} features but {len(self.coef)} coefficients")
        repeated = [(name, n) for name, n in Counter(self.features).items() if n > 1]
        if repeated:
            name, n = repeated[0]
            raise ValueError(f"feature {name!r} is named {n} times (a weight per name, not two)")
        return self

    @functools.cached_property
    def weights(self) -> dict[str, float]:
        return dict(zip(self.features, self.coef))

    def score(self, values: dict[str, float]) -> float:
        """The logit: features absent from `values` are 0, features the model lacks weigh nothing."""
        weights = self.weights
        return self.intercept + sum(weights.get(name, 0.0) * v for name, v in values.items() if v)

    def probability(self, values: dict[str, float]) -> float:
        z = self.score(values)
        return 1 / (1 + math.exp(-z)) if z > -60 else 0.0


CONFIDENCE_SIGNALS = (
    *(f"origin_{o}" for o in ("lm", "extracted", "evidence")),
    *(f"label_{a}" for a in ("direct", "unknown", "unlikely", "proxy_only")),
    *(f"ask_{t}" for t in ANSWER_TYPES), "parts", "question_words_log", "abstains", "subject_missing", "facts_log",
    "stopped_early", "read_span", "reader_sure", "reader_confidence", "ranker_probability", "ranker_margin",
    "ranker_share", "adapter_read", "adapter_doubt", "adapter_question_surprise", "adapter_agrees", "ranker_agrees",
    *(f"span_{t}" for t in ANSWER_TYPES), "answer_words_log", "answer_in_question", "answer_in_facts",
    "answer_in_titles", "answer_passages_log", "question_near_answer", "answer_is_read_span", "model_proposed",
    "model_agrees_reader")
"""What the confidence model reads of a finished run (`confidence.answer_signals`): where the
answer came from and its label, the type asked, the reader's own signals, and how the answer sits
in the passages read. None names a word of a passage: what it learns carries over to new text."""


class CalibratedLinear(BaseModel):
    """A probability: a logistic regression over the run's signals, then a calibration map
    (Platt's sigmoid or an isotonic regression, as points) fitted on held-out questions, so that
    of the runs given 0.7 about seven in ten are so."""

    model_config = ConfigDict(allow_inf_nan=False)

    linear: Linear
    calibration: list[tuple[float, float]] = Field(min_length=2)
    """The calibration map as points (the linear model's probability, the calibrated one), increasing."""

    @model_validator(mode="after")
    def _increasing_map(self):
        xs = [x for x, _ in self.calibration]
        ys = [y for _, y in self.calibration]
        if xs != sorted(xs) or ys != sorted(ys) or not all(0.0 <= v <= 1.0 for v in xs + ys):
            raise ValueError("the calibration points must rise, within [0, 1]")
        return self

    def probability(self, signals: dict[str, float]) -> float:
        raw = self.linear.probability(signals)
        points = self.calibration
        if raw <= points[0][0]:
            return points[0][1]
        for (x0, y0), (x1, y1) in zip(points, points[1:]):
            if raw <= x1:
                return y0 if x1 == x0 else y0 + (y1 - y0) * (raw - x0) / (x1 - x0)
        return points[-1][1]


class ConfidenceModel(CalibratedLinear):
    """The probability that an answer shown is right (its own linear model and map, fitted on the
    runs that answered), and that the passages do not state the answer (`unanswerable`, fitted on
    every run): an abstention is right as often as that. `direct_bound` is the least confidence
    labelled `direct`: `direct_precision` itself, the share of `direct` answers meant to be right, for
    the confidence is calibrated on dev (an answer below it is, by that estimate, right less often)."""

    direct_bound: float = Field(ge=0.0, le=1.0)
    direct_precision: float = Field(0.75, ge=0.0, le=1.0)
    abstain_margin: float | None = Field(None, ge=-1.0, le=1.0)
    """Where the probability that the passages do not state the answer leads the span's confidence
    by more than this, the reader's own span is no answer: the facts read are taken not to hold one
    (`unlikely`, with the span's sentence as the closest evidence). Chosen on dev as the lowest
    margin whose false abstention on answerable questions stays within `max_false_abstention`;
    None (no span set aside) where the dev runs held no unanswerable question to choose it on.
    A model's answer is never replaced by it: only a named failure replaces the model's answer."""
    max_false_abstention: float = Field(0.20, ge=0.0, le=1.0)
    unanswerable: CalibratedLinear | None = None
    """The probability that the passages read do not state the answer, from the same signals: the
    confidence of an abstention, and of a span taken as no answer (read from the span's signals,
    for a span the answer model doubts is often the sign of an unanswerable question). Fitted on
    every run, its map constant where the runs held no unanswerable question. None (a model fitted
    before it had one): the answer model reads the abstention."""
    profile: str = "small"
    """The profile of the runs it was fitted on: a run of another profile (a capable model's, whose
    answers are right far more often) carries no confidence rather than one calibrated on another
    model's answers, and keeps its labels."""
    fitted_on: dict = Field(default_factory=dict)
    metrics: dict = Field(default_factory=dict)

    def abstention_probability(self, signals: dict[str, float]) -> float:
        """How likely an abstention, or taking the span `signals` describe as no answer, is right."""
        return (self.unanswerable or self).probability(signals)


class ReaderModel(BaseModel):
    """A trained reader: the ranker, the answerability model and the abstention threshold."""

    model_config = ConfigDict(allow_inf_nan=False)

    format_version: int
    ranker: Linear
    answerability: Linear
    threshold: float = Field(ge=0.0, le=1.0)
    """The answerability probability below which the reader abstains, chosen on a dev split."""
    abstain_on_absent_subject: bool = True
    """Whether a subject of the question that no passage of the collection names means nothing
    answers it ("No information found about X"). True where passages name what they are about
    (titled articles); a collection of sentences that call their subject "it" or "the film" holds
    answers to questions whose subject it never names. Chosen on a dev split with the threshold."""
    reads_untyped: bool = True
    """Whether the reader reads a question that names no answer type ("What did the treaty end?")
    and answers it above the threshold, rather than leaving it to the model's answer. True where
    the dev split's answer score says reading them does better than leaving them (a set whose
    such questions are mostly unanswerable says otherwise). Chosen on a dev split with the threshold."""
    trained_on: dict = Field(default_factory=dict)
    """What it was trained and chosen on: dataset files, splits, question counts, the command."""
    metrics: dict = Field(default_factory=dict)
    """Its scores on the dev split it was chosen on (candidate recall, F1, abstention)."""
    adapter: str | None = None
    """A reader adapter (a GGUF LoRA adapter of the embedded model, `adapter.py`) that reads the
    span and decides abstaining in place of the ranker; None: the ranker reads. Bridges,
    comparisons and the small profile's checks read with the ranker either way. A relative path
    is the reader file's folder's."""

    confidence: ConfidenceModel | None = None
    """The answer's confidence model, fitted on the agent's runs over held-out questions with this
    reader (`python -m deltaseek.optimize.fit_confidence`); None: answers carry no confidence and
    keep the labels the reading gives."""

    def adapter_reader(self):
        """The loaded adapter this reader reads with, or None."""
        if not self.adapter:
            return None
        from deltaseek.programs.agent.learned_reader.adapter import reader_adapter

        return reader_adapter(self.adapter)

    def without_adapter(self) -> "ReaderModel":
        """The same reader reading with its ranker (`--reader features`)."""
        return self.model_copy(update={"adapter": None})

    def save(self, path: str | Path) -> Path:
        """Write the reader as JSON, atomically (a crash never leaves half a file)."""
        return write_text_atomically(path, self.model_dump_json(indent=1) + "\n", mode=0o644)  # data anyone may read


def feature_mismatch(model: Linear, computed: Collection[str], lexical: bool = False) -> str | None:
    """What is wrong with `model`'s feature names against the features the code `computed` (with
    `lexical`, names of `features.lexical_features`, learned from the training words, are allowed
    too), or None. A name the code does not compute would weigh nothing, and a computed feature
    the file lacks would weigh nothing either: a file cut short or edited reads silently wrong."""
    names = set(model.features)
    unknown = [n for n in model.features if n not in computed and not (lexical and n.startswith(LEXICAL_PREFIX))]
    if unknown:
        return f"feature {unknown[0]!r} is not one this deltaseek computes" + more(unknown)
    missing = [n for n in computed if n not in names]
    if missing:
        return f"feature {missing[0]!r} is missing" + more(missing)
    return None


def more(names: list[str]) -> str:
    return f" (and {len(names) - 1} more)" if len(names) > 1 else ""


def reader_from_dict(data: dict, source: str) -> ReaderModel:
    """A reader from its JSON object; ProgramFileError names `source` when it is of another format
    version, does not fit, or names other features than the code computes."""
    if not isinstance(data, dict):
        raise ProgramFileError(f"{source}: a reader is a JSON object, not {type(data).__name__}")
    version = data.get("format_version")
    if type(version) is not int:  # "1" is not 1; and True would compare equal to it
        raise ProgramFileError(f"{source}: reader field 'format_version' must be a whole number such as "
                               f"{FORMAT_VERSION}, not {json.dumps(version)}")
    if version != FORMAT_VERSION:
        raise ProgramFileError(f"{source}: reader format version {version!r}, this deltaseek reads version "
                               f"{FORMAT_VERSION}; retrain it with python -m deltaseek.optimize.train_reader")
    try:
        reader = ReaderModel.model_validate(data)
    except ValidationError as exc:
        first = exc.errors()[0]
        where = ".".join(str(p) for p in first["loc"])
        raise ProgramFileError(f"{source}: reader field {where!r}: {first['msg']}") from None
    for name, computed, lexical in (("ranker", FEATURES, True), ("answerability", ANSWERABILITY_FEATURES, False)):
        if problem := feature_mismatch(getattr(reader, name), computed, lexical):
            raise ProgramFileError(f"{source}: reader field '{name}': {problem}; retrain it with "
                                   "python -m deltaseek.optimize.train_reader")
    confidence = reader.confidence
    for part in (confidence, confidence and confidence.unanswerable):
        if part and (problem := feature_mismatch(part.linear, CONFIDENCE_SIGNALS)):
            raise ProgramFileError(f"{source}: reader field 'confidence': {problem}; refit it with "
                                   "python -m deltaseek.optimize.fit_confidence")
    if reader.adapter:
        adapter = Path(source).parent / reader.adapter
        if not adapter.is_file():
            raise ProgramFileError(f"{source}: reader field 'adapter': no adapter file at {adapter}")
        reader = reader.model_copy(update={"adapter": str(adapter.absolute())})
    return reader


def load_reader(path: str | Path) -> ReaderModel:
    """A reader saved as JSON; ProgramFileError with the file named when it cannot be used."""
    path = Path(path)
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except FileNotFoundError:
        raise ProgramFileError(f"{path}: no reader file there") from None
    except (json.JSONDecodeError, UnicodeDecodeError) as exc:
        raise ProgramFileError(f"{path}: not a JSON reader file ({exc})") from None
    return reader_from_dict(data, str(path))


@functools.cache
def shipped_reader() -> ReaderModel:
    """The reader trained on the bundled SQuAD 2.0 articles, loaded once."""
    return load_reader(shipped_reader_path())
