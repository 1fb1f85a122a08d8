"""The reader adapter: a GGUF LoRA adapter of the embedded model that llama.cpp applies, trained by
a command, weights as data.

On a tiny llama of random weights (tests/tiny_model.py): the file's round trip and its refusals,
llama.cpp reading with it (always a span of the sentences shown, or "not stated"; the same reading
from a fresh load), a few training steps (the `train` extra: torch, transformers, peft). On the
packaged SmolLM2 with the shipped adapter: the shipped recipe's first steps reproduce the losses
the file records, and the agent's reader reads hand-written passages with it.
"""

from pathlib import Path

import numpy as np
import pytest

from deltaseek.errors import ProgramFileError
from deltaseek.programs.agent.learned_reader import adapter_file, extract_answer, shipped_reader
from deltaseek.programs.agent.learned_reader.adapter import ReaderAdapter, whole_words
from deltaseek.programs.agent.learned_reader.adapter_file import (AdapterInfo, BaseShape, choose_bound, read_adapter_info,
                                                                  write_adapter)
from deltaseek.programs.agent.learned_reader.prompt import NOT_STATED, Passage, best_sentences, held_answer
from deltaseek.programs.agent.learned_reader.questions import expected_answer_types
from deltaseek.programs.agent.learned_reader.span_checks import span_failure
from deltaseek.programs.agent.scratchpad import Fact
from deltaseek.programs.lm import find_smollm2_gguf
from tests.tiny_model import lora_tensors, write_tiny_llama_gguf

TINY_SHAPE = BaseShape("llama", 4, 2)
MILL = [Fact(source="orla", title="Orla mill", step=1,
             text="The Orla mill was built in 1850 by Ada Lind. It ground oats until 1932, when a flood broke its "
                  "wheel. The mill stands on the river Tave, two miles north of Kessing."),
        Fact(source="tave", title="River Tave", step=1,
             text="The Tave is a slow river of the western plain. Its source is a spring near Ulm Hill.")]


@pytest.fixture(scope="module")
def tiny_base(tmp_path_factory) -> Path:
    return write_tiny_llama_gguf(tmp_path_factory.mktemp("adapter-base") / "tiny.gguf")


def written(tmp_path: Path, base: Path, rank: int = 4, info_rank: int | None = None, name: str = "a.gguf") -> Path:
    info = AdapterInfo(rank=info_rank or rank, bound=0.6, trained_on={"command": "by hand"}, metrics={"f1": 0.5},
                       losses=[2.0, 1.5])
    return write_adapter(lora_tensors(rank), info, tmp_path / name, base, TINY_SHAPE)


def test_an_adapter_file_says_what_it_is_and_for_which_model(tmp_path, tiny_base):
    path = written(tmp_path, tiny_base)
    info = read_adapter_info(str(path), str(tiny_base))
    assert (info.rank, info.bound, info.trained_on, info.metrics, info.losses) == (4, 0.6, {"command": "by hand"},
                                                                                    {"f1": 0.5}, [2.0, 1.5])
    assert info.base_model == f"tiny.gguf ({tiny_base.stat().st_size} bytes)"
    with pytest.raises(ProgramFileError, match=f"^{path}: an adapter of 'tiny.gguf .*not of the model"):
        read_adapter_info(str(path), str(find_smollm2_gguf()))


def test_a_file_of_another_version_rank_or_kind_is_refused_with_one_line(tmp_path, tiny_base, monkeypatch):
    wrong_rank = written(tmp_path, tiny_base, rank=4, info_rank=8, name="rank.gguf")
    with pytest.raises(ProgramFileError, match=f"^{wrong_rank}: rank 8 in its description but tensors of another"):
        read_adapter_info(str(wrong_rank), str(tiny_base))
    with pytest.raises(ProgramFileError, match=f"^{tiny_base}: not a LoRA adapter"):
        read_adapter_info(str(tiny_base), str(tiny_base))
    garbage = tmp_path / "garbage.gguf"
    garbage.write_bytes(b"not a gguf file at all")
    with pytest.raises(ProgramFileError, match=f"^{garbage}: not a readable GGUF LoRA adapter"):
        read_adapter_info(str(garbage), str(tiny_base))
    monkeypatch.setattr(adapter_file, "FORMAT_VERSION", 2)
    newer = written(tmp_path, tiny_base, name="newer.gguf")
    monkeypatch.undo()
    with pytest.raises(ProgramFileError, match=f"^{newer}: reader adapter format version 2, this deltaseek reads 1"):
        read_adapter_info(str(newer), str(tiny_base))


def test_llama_cpp_reads_a_span_of_the_sentences_shown_and_the_same_from_a_fresh_load(tmp_path, tiny_base):
    path = written(tmp_path, tiny_base)
    passage = best_sentences("Who built the Orla mill?", MILL)
    first = ReaderAdapter(path, tiny_base).read("Who built the Orla mill?", MILL, bound=1.01)
    assert first.span is not None and first.span in passage.text  # random weights, still a span
    assert 0.0 <= first.not_stated_probability <= 1.0 and 0.0 <= first.answer_probability <= 1.0
    assert ReaderAdapter(path, tiny_base).read("Who built the Orla mill?", MILL, bound=1.01) == first
    abstained = ReaderAdapter(path, tiny_base).read("Who built the Orla mill?", MILL, bound=0.0)
    assert abstained.span is None and abstained.not_stated_probability == first.not_stated_probability


def test_the_prompt_target_is_the_gold_as_the_passage_writes_it():
    passage = Passage(("The mill was built by ADA LIND in 1850.",), ("orla",))
    assert held_answer(passage, ("Ada Lind",)) == "ADA LIND"
    assert held_answer(passage, ("Ben Orr", "")) is None  # the target is "not stated"
    # a gold inside a longer word or number is not written: "no" is not in "north", "8" not in "1850"
    assert held_answer(Passage(("It stands north of the river, from 1850.",), ("orla",)), ("no", "8")) is None
    assert held_answer(Passage(("It cost US$75 billion (No. 8).",), ("orla",)), ("$75 billion",)) == "$75 billion"
    assert held_answer(Passage(("It cost US$75 billion (No. 8).",), ("orla",)), ("no", "8")) == "No"
    assert NOT_STATED == "not stated"
    assert whole_words("LIN", passage.text) == "LIND" and whole_words("in 1850.", passage.text) == "in 1850."
    assert whole_words("Kessing", passage.text) is None


def test_the_bound_is_the_lowest_that_keeps_false_abstention_within_its_limit():
    rows = [(0.05, True), (0.10, True), (0.20, True), (0.90, True), (0.30, False), (0.95, False)]
    assert choose_bound(rows, 0.25) == 0.9  # one held question of four abstained on: 25%
    assert choose_bound(rows, 0.0) == 1.0
    assert choose_bound([(0.5, False)], 0.1) == 1.0  # nothing held: never abstain on the bound's word


def test_a_few_training_steps_on_a_tiny_model_write_an_adapter_llama_cpp_reads(tmp_path, tiny_base):
    pytest.importorskip("peft")
    from deltaseek.optimize.train_adapter import examples_of, runtime_figures, train
    from deltaseek.optimize.train_reader import Question

    questions = [Question("q1", "Who built the Orla mill?", MILL, ("Ada Lind",)),
                 Question("q2", "Which river is the Orla mill on?", MILL, ("Tave", "river Tave")),
                 Question("q3", "Who owns the Orla mill today?", MILL)]
    parts = {"train": examples_of(questions), "dev": examples_of(questions[:2])}
    assert [e.target for e in parts["train"]] == ["Ada Lind", "Tave", NOT_STATED]
    model, _, figures, losses = train(parts, steps=3, rank=4, eval_every=3, dev_questions=2, base=tiny_base,
                                      log=lambda line: None)
    assert len(losses) == 3 and all(np.isfinite(losses)) and figures["steps"] == 3
    tensors = {k: v.detach().numpy() for k, v in model.state_dict().items() if "lora_" in k}
    path = write_adapter(tensors, AdapterInfo(rank=4, bound=figures["bound"], losses=losses), tmp_path / "t.gguf",
                         tiny_base, BaseShape.of(model.config))
    assert BaseShape.of(model.config) == TINY_SHAPE
    back = adapter_file.read_lora_tensors(path, model.state_dict(), tiny_base, TINY_SHAPE)
    assert set(back) == set(tensors)
    assert max(float(np.abs(back[k] - tensors[k]).max()) for k in back) < 1e-3  # stored as float16
    read = runtime_figures(path, parts["dev"], base=tiny_base)
    assert read["questions"] == 2 and 0.0 <= read["f1_answerable"] <= 1.0


def test_fine_tuning_starts_from_an_adapter_and_keeps_a_checkpoint_only_if_dev_reads_better(tmp_path, tiny_base):
    """`optimize --train-reader`'s fine-tune: step 0 is the adapter it starts from, scored on dev
    first; a run whose later checkpoints read dev no better writes nothing."""
    pytest.importorskip("peft")
    from deltaseek.optimize.train_adapter import examples_of, fit_adapter
    from deltaseek.optimize.train_reader import Question

    start = written(tmp_path, tiny_base, name="start.gguf")
    questions = [Question("q1", "Who built the Orla mill?", MILL, ("Ada Lind",)),
                 Question("q2", "Which river is the Orla mill on?", MILL, ("Tave",))]
    parts = {"train": examples_of(questions), "dev": examples_of(questions)}
    lines = []
    info = fit_adapter(parts, tmp_path / "tuned.gguf", {"command": "a test"}, steps=2, rank=4, eval_every=1,
                       dev_questions=2, start_from=start, base=tiny_base, log=lines.append)
    assert lines[0].startswith("dev at step 0 (the adapter it starts from)")
    assert any(line.startswith("dev at step 1") for line in lines)
    if info is None:  # random weights rarely read better: nothing written, the start kept
        assert not (tmp_path / "tuned.gguf").exists()
    else:
        assert info.trained_on["fine_tuned_from"] == str(start) and info.trained_on["steps"] in (1, 2)
        assert read_adapter_info(str(tmp_path / "tuned.gguf"), str(tiny_base)).rank == 4


def test_a_fine_tune_is_kept_only_when_its_dev_gain_is_beyond_chance():
    from deltaseek.optimize.paired import beyond_chance

    start = [0.0] * 40 + [1.0] * 20
    assert beyond_chance(start, [1.0] * 15 + [0.0] * 25 + [1.0] * 20)  # 15 more right, none lost
    # the same gain in F1 made of answers traded for others: 9 gained, 6 lost, within chance
    traded = [1.0] * 9 + [0.0] * 31 + [0.0] * 6 + [1.0] * 14
    assert sum(traded) > sum(start) and not beyond_chance(start, traded)
    assert not beyond_chance(start, start) and not beyond_chance([0.0], [1.0])  # one question says nothing


@pytest.mark.embedded
def test_the_shipped_adapter_is_what_its_recipe_trains(tmp_path):
    """The shipped file's first steps again, from its own command's data and seed: the losses it
    records, within 0.05 (threads and CPUs round differently)."""
    pytest.importorskip("peft")
    from deltaseek.bundled import labeled_set
    from deltaseek.optimize.train_adapter import dataset_examples, train

    shipped = shipped_reader().adapter_reader()
    info = shipped.info
    parts = dataset_examples([str(labeled_set("squad2_articles"))])
    assert info.trained_on["train_questions"] == len(parts["train"])
    steps = info.trained_on["total_steps"]
    _, _, _, losses = train(parts, steps=steps, rank=info.rank, seed=info.trained_on["seed"], dev_questions=2,
                            stop_after=8, log=lambda line: None)
    assert losses == pytest.approx(info.losses[:8], abs=0.05)


@pytest.mark.embedded
def test_the_shipped_reader_reads_with_its_adapter():
    reader = shipped_reader()
    assert reader.adapter_reader() is not None and reader.without_adapter().adapter_reader() is None
    [built] = extract_answer("Who built the Orla mill?", MILL, reader)
    assert built.span == "Ada Lind" and not built.unsure
    [built_in] = extract_answer("In what year was the Orla mill built?", MILL, reader)
    assert built_in.span == "1850" and not built_in.unsure  # a figure: its first token is a bare space
    [river] = extract_answer("Which river does the Orla mill stand on?", MILL, reader)
    assert river.span == "Tave" and not river.unsure


@pytest.mark.embedded
def test_a_question_with_one_part_changed_surprises_the_reader_more_than_one_its_passage_answers():
    adapter = shipped_reader().adapter_reader()
    asked = adapter.read("When did a flood break the wheel of the Orla mill?", MILL, bound=1.01)
    changed = adapter.read("When did a fire break the roof of the Orla mill?", MILL, bound=1.01)
    assert asked.span == "1932" and asked.question_surprise is not None
    assert changed.question_surprise > asked.question_surprise + 0.3, (asked, changed)


def test_a_check_on_the_adapters_span_names_a_failure_and_passes_what_is_not_one():
    def failure(span, question, sentence, source="a", facts=(), others=()):
        kinds = expected_answer_types(question)
        return span_failure(span, kinds[0], question, sentence, source, list(facts), list(others))

    # what the ranker's candidates miss stands: a year before 1500, a count in words, a common noun's place
    assert failure("1247", "When did the Vell abbey burn?", "The Vell abbey burned in 1247.") is None
    assert failure("seventeen", "How many bells does the abbey have?", "It has seventeen bells.") is None
    assert failure("the 14th century", "When was the abbey built?", "It was built in the 14th century.") is None
    assert failure("the upper gallery", "Where did the choir sing?", "The choir sang in the upper gallery.") is None
    # each failure is named
    assert failure("the abbey", "When did the abbey burn?", "The abbey burned.") == "the question's own words"
    assert failure("the governor", "Who is the mayor of Tarn?", "She serves the governor.") == "not a person"
    assert failure("many monks", "When did the abbey burn?", "It burned with many monks.") == "not a date"
    assert failure("Ben Orr", "Who is the mayor of Tarn?",
                   "The council named Ada Lind to fill the seat vacated by Ben Orr.") == "a post's former holder"
    assert failure("Mark Olsen", "Who is the mayor of Tarn?", "Mark Olsen was mayor of Tarn from 2010 to 2018.",
                   others=["Dana Ruiz is the mayor of Tarn."]) == "a holder whose term ended"
    studio = [Fact(source="compiler", title="Tern", step=1, text="Tern is a compiler for the Kestrel language."),
              Fact(source="studio", title="Tern Studio", step=1, text="It was founded by Ida Brann.")]
    assert failure("Ida Brann", "Who designed Tern?", "It was founded by Ida Brann.", "studio", studio) == \
        "another subject's passage"
    assert failure("Ida Brann", "Who designed Tern?", "Tern was designed by Ida Brann.", "studio", studio) is None


@pytest.mark.embedded
def test_the_adapters_span_stands_where_the_rules_find_no_candidate():
    abbey = [Fact(source="vell", title="Vell abbey", step=1,
                  text="The Vell abbey was founded by monks from Orla. It burned in 1247 and was rebuilt in stone. "
                       "Its tower holds seventeen bells.")]
    [burned] = extract_answer("In what year did the Vell abbey burn?", abbey, shipped_reader())
    assert burned.span == "1247"  # no date candidate: the rules' years start at 1500
