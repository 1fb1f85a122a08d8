"""Reading with the reader adapter: the embedded model with its LoRA adapter, answers from the best
sentences of the facts with a span of them or "not stated".

No torch at run time: llama-cpp-python loads a copy of the base model with the adapter folded into
its matrices (`reading_copy.adapted_copy`; where none can be written, the base with llama.cpp
applying the adapter, `lora_path`) in a context of its own, so the agent's model is never changed.
Decoding is greedy and held to the passage: each token taken is the likeliest one that keeps the
answer a piece of the sentences shown, so the answer is always a span the facts write. Where the
answer starts, the probability of "not stated"'s first token against the span's
(`AdapterReading.doubt`) is the adapter's own doubt: at or above the bound chosen on dev
(`AdapterInfo.bound`) the reader abstains. Each read starts from an empty context, so a reading
depends only on its prompt.
"""

from __future__ import annotations

import functools
import threading
from dataclasses import dataclass
from pathlib import Path

import numpy as np
from cachetools import LRUCache
from scipy.special import log_softmax

from deltaseek.programs.agent.learned_reader.adapter_file import AdapterInfo, read_adapter_info
from deltaseek.programs.agent.learned_reader.prompt import NOT_STATED, Passage, best_sentences, reader_prompt
from deltaseek.programs.lm.gguf_file import find_smollm2_gguf
from deltaseek.programs.lm.reading_copy import adapted_copy

MAX_ANSWER_TOKENS = 16
ADAPTER_CONTEXT = 1024
"""Five sentences of at most 60 words and a question fit with room to spare."""


@dataclass(frozen=True)
class AdapterReading:
    """What the adapter read: its span (None: "not stated"), where it is written, and the
    probabilities of its answer and of "not stated"."""

    span: str | None
    sentence: str
    source: str
    answer_probability: float
    not_stated_probability: float
    start_probability: float = 0.0
    """The probability of the span's first token, where "not stated" would start instead."""
    question_surprise: float | None = None
    """How unlikely the question is after the passage, to the adapter: the mean negative log
    probability of its tokens (nats). A question written from a passage with one part changed, the
    way an unanswerable one is, surprises it more than one the passage answers (`question_surprise`)."""

    @property
    def doubt(self) -> float:
        """How much likelier "not stated" is than the span, as a share of the two: at or above the
        adapter's bound the reader abstains."""
        return doubt_of(self.not_stated_probability, self.start_probability)


def doubt_of(not_stated: float, start: float) -> float:
    return round(not_stated / (not_stated + start), 4) if not_stated + start > 0 else 1.0


class ReaderAdapter:
    """A reader adapter file applied to the embedded model, loaded on first read."""

    def __init__(self, path: str | Path, base: str | Path | None = None):
        self.path = Path(path)
        self.base = Path(base) if base else find_smollm2_gguf()
        self.info: AdapterInfo = read_adapter_info(str(self.path), str(self.base))
        self._llama = None
        self._lock = threading.Lock()
        self._readings: LRUCache = LRUCache(maxsize=256)

    def _model(self):
        if self._llama is None:
            from deltaseek.programs.lm.llamacpp import import_llama_cpp

            self._llama = import_llama_cpp().Llama(**self.llama_settings(), n_ctx=ADAPTER_CONTEXT,
                                                   n_batch=ADAPTER_CONTEXT, verbose=False, seed=0)
        return self._llama

    def llama_settings(self) -> dict:
        """The weights (`weights`) and the threads: the answer's tokens are written with as many
        threads as the prompt is evaluated with on the folded copy (a token there takes 19 ms on two
        threads and 32 ms on one, a reading 0.49 s against 0.54 s, paired), and with the agent's
        fewer where llama.cpp applies the adapter as it reads (many small products, where two threads
        wait on each other: 103 ms a token against 34)."""
        from deltaseek.programs.lm.llamacpp import default_threads

        weights = self.weights()
        generate, batch = default_threads()
        return {**weights, "n_threads": generate if "lora_path" in weights else batch, "n_threads_batch": batch}

    def weights(self) -> dict[str, str]:
        """What llama.cpp loads: the copy with the adapter folded in; where none can be written, the
        base, with llama.cpp applying the adapter as it reads."""
        adapted = adapted_copy(self.base, self.path)
        return {"model_path": str(adapted)} if adapted else {"model_path": str(self.base), "lora_path": str(self.path)}

    def read(self, question: str, facts: list, bound: float | None = None) -> AdapterReading | None:
        """The adapter's answer from the best sentences of `facts`, None when there are none: "not
        stated" (span None) when its doubt reaches `bound` (default: the file's), else the likeliest
        span. `bound` above 1 always reads a span (dev figures at every bound)."""
        passage = best_sentences(question, facts)
        if not passage.sentences:
            return None
        prompt = reader_prompt(question, passage)
        bound = self.info.bound if bound is None else bound
        with self._lock:
            if (prompt, bound) not in self._readings:  # the same prompt reads the same: a cache, never a state
                self._readings[prompt, bound] = self._decode(prompt, passage, bound)
            return self._readings[prompt, bound]

    def _decode(self, prompt: str, passage: Passage, bound: float) -> AdapterReading:
        import llama_cpp

        from deltaseek.programs.lm.prefix_cache import clear_memory

        llama = self._model()
        llama.reset()
        clear_memory(llama)
        tokens = llama.tokenize(prompt.encode("utf-8"), add_bos=False, special=False)
        tokens = tokens[-(ADAPTER_CONTEXT - MAX_ANSWER_TOKENS - 1):]
        asked = question_positions(llama, tokens, prompt)
        rows = evaluate_prompt(llama, tokens, range(asked.start - 1, asked.stop - 1) if asked else range(0))
        surprise = question_surprise(rows, tokens[asked.start:asked.stop]) if asked else None
        stops = {llama.token_eos(), *llama.tokenize(b"\n", add_bos=False, special=False)}
        not_token = llama.tokenize(f" {NOT_STATED}".encode(), add_bos=False, special=False)[0]
        text, answer, log_probability, not_stated, start = passage.text, b"", 0.0, 0.0, 0.0
        pieces = np.array(sorted(set(llama.tokenize(f" {text}".encode(), add_bos=False, special=False))
                                 | set(llama.tokenize(text.encode(), add_bos=False, special=False)) | stops))
        for step in range(MAX_ANSWER_TOKENS):
            logits = np.ctypeslib.as_array(llama_cpp.llama_get_logits_ith(llama.ctx, -1), shape=(llama.n_vocab(),))
            log_probs = log_softmax(logits)
            chosen = self._next_token(llama, pieces[np.argsort(-log_probs[pieces])], answer, text, stops)
            if step == 0:
                not_stated = float(np.exp(log_probs[not_token]))
                start = float(np.exp(log_probs[chosen])) if chosen is not None else 0.0
                if chosen is None or doubt_of(not_stated, start) >= bound:
                    sentence, source = passage.source_of("")
                    return AdapterReading(None, sentence, source, 0.0, round(not_stated, 4), round(start, 4), surprise)
            if chosen is None:
                break
            log_probability += float(log_probs[chosen])
            if chosen in stops:
                break
            answer += llama.detokenize([chosen])
            llama.eval([chosen])
        said = answer.decode("utf-8", errors="ignore").strip()
        span = whole_words(said, text) if said else None
        sentence, source = passage.source_of(span or "")
        return AdapterReading(span, sentence, source, round(float(np.exp(log_probability)), 4), round(not_stated, 4),
                              round(start, 4), surprise)

    def option_log_probabilities(self, question: str, facts: list,
                                 options: list[str]) -> tuple[list[float], Passage] | None:
        """The adapter's log probability of answering with each of `options` (each a whole answer:
        its tokens and the line's end) after the best sentences of `facts`; None when there are
        none. Each option is evaluated after the prompt from an empty context, so a choice between
        two options costs two prompt evaluations (about 0.5 s each on 2 cores)."""
        passage = best_sentences(question, facts)
        if not passage.sentences:
            return None
        prompt = reader_prompt(question, passage)
        with self._lock:
            key = (prompt, tuple(options))
            if key not in self._readings:  # the same prompt and options score the same: a cache, never a state
                self._readings[key] = self._score_options(prompt, options)
            return self._readings[key], passage

    def _score_options(self, prompt: str, options: list[str]) -> list[float]:
        from deltaseek.programs.lm.prefix_cache import clear_memory

        llama = self._model()
        asked = llama.tokenize(prompt.encode("utf-8"), add_bos=False, special=False)
        newline = llama.tokenize(b"\n", add_bos=False, special=False)
        scores = []
        for option in options:
            written = llama.tokenize(f" {option}".encode("utf-8"), add_bos=False, special=False) + newline
            tokens = asked[-(ADAPTER_CONTEXT - len(written) - 1):]
            llama.reset()
            clear_memory(llama)
            # the logits of the prompt's last position and of each option token but the last
            rows = evaluate_prompt(llama, tokens + written[:-1], range(len(tokens) - 1, len(tokens) + len(written) - 1))
            log_probs = log_softmax(rows.astype(np.float64), axis=1)[np.arange(len(written)), written]
            scores.append(float(log_probs.sum()))
        return scores

    @staticmethod
    def _next_token(llama, likeliest: np.ndarray, answer: bytes, text: str, stops: set[int]) -> int | None:
        """The likeliest token (of those the passage's own tokens are, likeliest first) that keeps
        the answer a piece of the passage (a stop only once something is said); None when none
        does."""
        said = answer.decode("utf-8", errors="ignore").strip()
        for token in likeliest:
            token = int(token)
            if token in stops:
                if said:
                    return token
                continue
            piece = llama.detokenize([token])
            if not answer and piece.isspace():
                return token  # the space before a figure: SmolLM2 writes " 1850" as " ", "1", "8", ...
            candidate = (answer + piece).decode("utf-8", errors="ignore").lstrip()
            if candidate.strip() and candidate.rstrip() in text:
                return token
        return None


def question_positions(llama, tokens: list[int], prompt: str) -> range | None:
    """Where the question's own tokens lie in the prompt's `tokens`; None where they are not how the
    prompt was cut into tokens."""
    _, _, tail = prompt.rpartition("\nQuestion:")
    question, _, after = tail.rpartition("\nAnswer:")
    asked = llama.tokenize(question.encode("utf-8"), add_bos=False, special=False)
    ending = llama.tokenize(f"\nAnswer:{after}".encode("utf-8"), add_bos=False, special=False)
    end = len(tokens) - len(ending)
    start = end - len(asked)
    if not asked or start < 1 or list(tokens[start:end]) != asked:
        return None
    return range(start, end)


def question_surprise(logits: np.ndarray, asked: list[int]) -> float:
    """The mean negative log probability (nats) of the question's tokens `asked`, each after the
    passage and the question's tokens before it (`logits`: the rows of the positions before each).
    On the dev article holding unanswerable questions it separates them from the answerable ones
    (ROC AUC 0.71, against 0.60 for the adapter's doubt; docs/experiments/question_pmi.py)."""
    log_probs = log_softmax(np.asarray(logits, dtype=np.float64), axis=1)[np.arange(len(asked)), asked]
    return round(float(-log_probs.mean()), 4)


def evaluate_prompt(llama, tokens: list[int], kept: range) -> np.ndarray:
    """Evaluate `tokens` from an empty context and return the logits of the positions in `kept`, in
    order; the last position's stay where `llama_get_logits_ith(ctx, -1)` reads them, and generation
    goes on after the prompt. Only those positions go through the output layer: every position's
    logits (llama-cpp-python's `logits_all`) cost 0.06 s of a 150-token prompt's 0.45 s."""
    import llama_cpp

    batch = llama_cpp.llama_batch_init(len(tokens), 0, 1)
    try:
        batch.n_tokens = len(tokens)
        for i, token in enumerate(tokens):
            batch.token[i], batch.pos[i], batch.n_seq_id[i] = token, i, 1
            batch.seq_id[i][0] = 0
            batch.logits[i] = i in kept or i == len(tokens) - 1
        if llama_cpp.llama_decode(llama.ctx, batch) != 0:
            raise RuntimeError(f"llama.cpp could not evaluate the reader's prompt of {len(tokens)} tokens")
        vocabulary = llama.n_vocab()
        rows = np.array([np.ctypeslib.as_array(llama_cpp.llama_get_logits_ith(llama.ctx, i), shape=(vocabulary,))
                         for i in kept], dtype=np.float32).reshape(len(kept), vocabulary)
    finally:
        llama_cpp.llama_batch_free(batch)
    llama.input_ids[:len(tokens)] = tokens  # where llama-cpp-python's `eval` goes on from
    llama.n_tokens = len(tokens)
    return rows


def whole_words(span: str, text: str) -> str | None:
    """The span widened to the whole words it cuts in the passage (an answer that stops inside a
    word means the word), without the punctuation around it; None when the passage lacks it."""
    at = text.find(span)
    if at < 0:
        return None
    start, end = at, at + len(span)
    while start > 0 and text[start - 1].isalnum() and text[start].isalnum():
        start -= 1
    while end < len(text) and text[end].isalnum() and text[end - 1].isalnum():
        end += 1
    return text[start:end].strip(" ,;:\"'") or None


@functools.lru_cache(maxsize=4)
def reader_adapter(path: str) -> ReaderAdapter:
    """One loaded adapter per file and process: every program reading with it shares it."""
    return ReaderAdapter(path)
