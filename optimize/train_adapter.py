"""Fine-tune the reader adapter: a LoRA adapter of the embedded model that answers from the best
sentences of the facts read, with a span of them or "not stated".

    python -m deltaseek.optimize.train_adapter --dataset datasets/squad2_articles.jsonl \
        --out programs/compiled/reader-adapter.gguf

Each train question is read as the agent reads it (its question as the query, `READ_PASSAGES`
passages of its corpus, the reader's best sentences of them); the target is the gold answer as the
passage writes it, or "not stated" when the sentences do not hold it or the question has none.
One question a step, in a seeded order; the dev split (other articles) chooses the steps kept and
the bound on the adapter's doubt ("not stated" against the span) at which the reader abstains. The test split is never
read. The adapter is written as a GGUF LoRA file that llama.cpp applies (`adapter.py`), with what
it was trained on, its dev figures and its loss curve.

Needs the `train` extra (torch, transformers, peft): pip install 'deltaseek[train]'.
"""

from __future__ import annotations

import argparse
import random
import time
from dataclasses import dataclass, field, replace
from pathlib import Path

from deltaseek.optimize.adapter_figures import chosen_figures, held_scores
from deltaseek.optimize.evaluate import corpora_for, load_dataset, select
from deltaseek.optimize.paired import beyond_chance
from deltaseek.optimize.train_reader import file_digest, read_facts
from deltaseek.programs.agent.learned_reader.adapter_file import (DEFAULT_ALPHA, DEFAULT_RANK, AdapterInfo,
                                                                  BaseShape, read_lora_tensors, write_adapter)
from deltaseek.programs.agent.learned_reader.prompt import (NOT_STATED, TRAIN_SENTENCES, best_sentences, held_answer,
                                                             reader_prompt)
from deltaseek.programs.index import CorpusIndex
from deltaseek.programs.lm.gguf_file import find_smollm2_gguf

TARGET_MODULES = ("q_proj", "k_proj", "v_proj", "o_proj", "gate_proj", "up_proj", "down_proj")
"""The projections the adapter changes: attention and MLP, in every layer."""
LEARNING_RATE = 5e-4
DEFAULT_STEPS = 900
EVAL_EVERY = 300
DEV_QUESTIONS = 160
"""Dev questions each checkpoint and the bound are chosen on (the first, in a seeded order):
enough to choose among a few checkpoints, few enough that scoring takes a minute or two."""


@dataclass(frozen=True)
class Example:
    """One question as the adapter reads it, with the target it learns."""

    id: str
    question: str
    facts: list = field(hash=False, compare=False)
    prompt: str = ""
    target: str = NOT_STATED
    answers: tuple[str, ...] = ()
    held: bool = False


def examples_of(questions, limit: int = TRAIN_SENTENCES) -> list[Example]:
    """Each question's prompt and target: its gold as the passage writes it, or "not stated";
    `limit` sentences of its facts."""
    found = []
    for q in questions:
        passage = best_sentences(q.question, q.facts, limit)
        held = held_answer(passage, q.answers)
        found.append(Example(q.id, q.question, q.facts, reader_prompt(q.question, passage), held or NOT_STATED,
                             q.answers, held is not None))
    return found


def dataset_examples(datasets: list[str], corpus: list[str] | None = None) -> dict[str, list[Example]]:
    """The train and dev examples of the labeled sets, each read against its corpus."""
    parts: dict[str, list[Example]] = {"train": [], "dev": []}
    for dataset in datasets:
        examples = load_dataset(dataset).examples
        index = CorpusIndex.open(corpus or corpora_for(examples) or None)
        for name in parts:
            parts[name] += examples_of(read_facts(select(examples, name), index))
    return parts


def load_base(base: Path):
    """The embedded model (dequantized from its GGUF by transformers) and its tokenizer."""
    import torch
    from transformers import AutoModelForCausalLM, AutoTokenizer

    tokenizer = AutoTokenizer.from_pretrained(str(base.parent), gguf_file=base.name)
    model = AutoModelForCausalLM.from_pretrained(str(base.parent), gguf_file=base.name, dtype=torch.float32)
    return model, tokenizer


def step_tensors(tokenizer, example: Example):
    """Input ids and labels: the loss counts only the target's tokens (and its newline)."""
    import torch

    prompt = tokenizer(example.prompt, add_special_tokens=False)["input_ids"]
    target = tokenizer(" " + example.target + "\n", add_special_tokens=False)["input_ids"]
    ids = torch.tensor([prompt + target])
    labels = torch.tensor([[-100] * len(prompt) + target])
    return ids, labels


def greedy_answer(model, tokenizer, prompt: str, max_tokens: int = 16) -> tuple[str, float]:
    """The model's greedy answer without "not stated", and its doubt (`adapter.doubt_of`: "not
    stated"'s first token against the answer's). Unheld to the passage: a checkpoint's figure."""
    import torch

    from deltaseek.programs.agent.learned_reader.adapter import doubt_of

    ids = torch.tensor([tokenizer(prompt, add_special_tokens=False)["input_ids"]])
    not_token = tokenizer(" " + NOT_STATED, add_special_tokens=False)["input_ids"][0]
    newline = tokenizer("\n", add_special_tokens=False)["input_ids"][0]
    with torch.no_grad():
        out = model(input_ids=ids, use_cache=True)
        first = torch.softmax(out.logits[0, -1], -1)
        answer, past, logits = [], out.past_key_values, out.logits[0, -1].clone()
        logits[not_token] = -float("inf")  # below the bound the reader reads a span
        doubt = doubt_of(float(first[not_token]), float(first[int(logits.argmax())]))
        for _ in range(max_tokens):
            token = int(logits.argmax())
            if token in (newline, tokenizer.eos_token_id):
                break
            answer.append(token)
            out = model(input_ids=torch.tensor([[token]]), past_key_values=past, use_cache=True)
            past, logits = out.past_key_values, out.logits[0, -1]
    return tokenizer.decode(answer).strip(), doubt


def dev_figures(model, tokenizer, dev: list[Example]) -> tuple[dict[str, float], list[float]]:
    """A checkpoint's dev figures (torch, greedy), at the bound chosen on the same questions, and
    each held question's F1 there."""
    rows = [(ex, *greedy_answer(model, tokenizer, ex.prompt)) for ex in dev]
    figures = chosen_figures(rows)
    return figures, held_scores(rows, figures["bound"])


def runtime_readings(path: Path, dev: list[Example], base: Path | None = None) -> list[tuple]:
    """The written adapter's readings of the dev questions by llama.cpp, as the agent reads with it
    (`PROMPT_SENTENCES` of the facts, not the training prompt's): rows of (example, its `held` as
    those sentences hold the gold, span read, doubt), every span read whatever its doubt."""
    from deltaseek.programs.agent.learned_reader.adapter import ReaderAdapter

    adapter = ReaderAdapter(path, base)
    rows = []
    for ex in dev:
        reading = adapter.read(ex.question, ex.facts, bound=1.01)
        held = held_answer(best_sentences(ex.question, ex.facts), ex.answers) is not None
        rows.append((replace(ex, held=held), (reading.span or "") if reading else "", reading.doubt if reading else 1.0))
    return rows


def runtime_figures(path: Path, dev: list[Example], base: Path | None = None) -> dict[str, float]:
    """The bound chosen on the written adapter's `runtime_readings` of these dev questions, the figures at it."""
    return chosen_figures(runtime_readings(path, dev, base))


def dev_sample(dev: list[Example], questions: int = DEV_QUESTIONS, seed: int = 0) -> list[Example]:
    """The dev questions checkpoints and the bound are chosen on: the first, in a seeded order."""
    return random.Random(seed).sample(dev, min(questions, len(dev)))


def lora_state(model) -> dict:
    return {k: v.detach().clone() for k, v in model.state_dict().items() if "lora_" in k}


def train(parts: dict[str, list[Example]], steps: int = DEFAULT_STEPS, rank: int = DEFAULT_RANK,
          seed: int = 0, eval_every: int = EVAL_EVERY, dev_questions: int = DEV_QUESTIONS,
          base: Path | None = None, start_from: Path | None = None, log=print, stop_after: int | None = None):
    """Fine-tune; return (model with the best dev checkpoint's adapter, tokenizer, figures, losses).
    `stop_after`: only the first steps of a run of `steps` (same schedule), scored at the last."""
    import torch
    from peft import LoraConfig, get_peft_model

    torch.manual_seed(seed)
    base = base or find_smollm2_gguf()
    model, tokenizer = load_base(base)
    model = get_peft_model(model, LoraConfig(r=rank, lora_alpha=DEFAULT_ALPHA * rank // DEFAULT_RANK,
                                             target_modules=list(TARGET_MODULES), lora_dropout=0.0))
    if start_from is not None:
        stored = read_lora_tensors(start_from, model.state_dict(), base, BaseShape.of(model.config))
        model.load_state_dict({k: torch.from_numpy(v) for k, v in stored.items()}, strict=False)
    order = random.Random(seed).sample(parts["train"], len(parts["train"]))
    dev = dev_sample(parts["dev"], dev_questions, seed)
    params = [p for p in model.parameters() if p.requires_grad]
    optimizer = torch.optim.AdamW(params, lr=LEARNING_RATE, weight_decay=0.0)
    schedule = torch.optim.lr_scheduler.LambdaLR(optimizer, lambda s: min(1.0, (s + 1) / 30) * max(0.05, 1 - s / steps))
    model.eval()
    best, start_scores = None, None
    if start_from is not None:
        figures, start_scores = dev_figures(model, tokenizer, dev)
        best = {"steps": 0, **figures}
        log(f"dev at step 0 (the adapter it starts from): {best}")
    best_state = lora_state(model) if best else None
    losses, started = [], time.perf_counter()
    last = min(steps, stop_after or steps)
    for step in range(1, last + 1):
        model.train()
        ids, labels = step_tensors(tokenizer, order[(step - 1) % len(order)])
        loss = model(input_ids=ids, labels=labels).loss
        loss.backward()
        optimizer.step(), schedule.step(), optimizer.zero_grad()
        losses.append(round(float(loss), 4))
        if step % 50 == 0:
            log(f"step {step}: loss {sum(losses[-50:]) / 50:.3f} ({time.perf_counter() - started:.0f} s)")
        if step % eval_every == 0 or step == last:
            model.eval()
            figures, scores = dev_figures(model, tokenizer, dev)
            figures = {"steps": step, **figures}
            log(f"dev at step {step}: {figures}")
            if best is None or (figures["f1_held"] > best["f1_held"]
                                and (start_scores is None or beyond_chance(start_scores, scores))):
                best, best_state = figures, lora_state(model)
    model.load_state_dict(best_state, strict=False)
    return model, tokenizer, best, losses


def fit_adapter(parts: dict[str, list[Example]], out: str | Path, trained_on: dict, steps: int = DEFAULT_STEPS,
                rank: int = DEFAULT_RANK, seed: int = 0, eval_every: int = EVAL_EVERY,
                dev_questions: int = DEV_QUESTIONS, start_from: Path | None = None, base: Path | None = None,
                log=print) -> AdapterInfo | None:
    """Train, keep the best dev checkpoint, write it to `out` with the bound llama.cpp's reading
    chooses on the dev sample; None (nothing written) when fine-tuning `start_from` found no
    checkpoint better on dev than the adapter it started from, beyond chance (`beyond_chance`)."""
    base = base or find_smollm2_gguf()
    model, _, figures, losses = train(parts, steps, rank, seed, eval_every, dev_questions, base=base,
                                      start_from=start_from, log=log)
    if start_from is not None and figures["steps"] == 0:
        return None
    info = AdapterInfo(rank=rank, bound=figures["bound"], metrics=figures, losses=losses,
                       trained_on={**trained_on, "train_questions": len(parts["train"]),
                                   "dev_questions": figures["questions"], "steps": figures["steps"],
                                   "total_steps": steps, "seed": seed,
                                   **({"fine_tuned_from": str(start_from)} if start_from else {})})
    tensors = {k: v.detach().numpy() for k, v in model.state_dict().items() if "lora_" in k}
    shape = BaseShape.of(model.config)
    write_adapter(tensors, info, out, base, shape)
    read = runtime_figures(Path(out), dev_sample(parts["dev"], dev_questions, seed), base)  # as llama.cpp reads
    info.bound, info.metrics = read["bound"], {**read, "steps": figures["steps"], "checkpoint": figures}
    write_adapter(tensors, info, out, base, shape)
    return info


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--dataset", action="append", help="labeled questions with splits (repeatable; "
                        "default: datasets/squad2_articles.jsonl)")
    parser.add_argument("--corpus", action="append", help="the corpus the questions are asked against")
    parser.add_argument("--out", default="programs/compiled/reader-adapter.gguf")
    parser.add_argument("--steps", type=int, default=DEFAULT_STEPS)
    parser.add_argument("--rank", type=int, default=DEFAULT_RANK)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--eval-every", type=int, default=EVAL_EVERY)
    parser.add_argument("--dev-questions", type=int, default=DEV_QUESTIONS)
    args = parser.parse_args(argv)
    from deltaseek.bundled import labeled_set

    started = time.perf_counter()
    datasets = args.dataset or [str(labeled_set("squad2_articles"))]
    parts = dataset_examples(datasets, args.corpus)
    print(f"{len(parts['train'])} train, {len(parts['dev'])} dev questions; sentences hold the gold for "
          f"{sum(e.held for e in parts['dev'])} dev ({time.perf_counter() - started:.0f} s)")
    command = "python -m deltaseek.optimize.train_adapter " + " ".join(
        [f"--dataset {d}" for d in (args.dataset or [])] + [f"--steps {args.steps}", f"--rank {args.rank}",
                                                             f"--seed {args.seed}"])
    info = fit_adapter(parts, args.out, {"datasets": {Path(d).name: file_digest(d) for d in datasets},
                                         "command": command},
                       args.steps, args.rank, args.seed, args.eval_every, args.dev_questions)
    print(f"wrote {args.out} in {time.perf_counter() - started:.0f} s: {info.metrics}")


if __name__ == "__main__":
    main()
