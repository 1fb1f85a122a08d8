"""Hardening 3: answers that say what they quote, checks that read a sentence's content,
misspelt names, answers in other languages, plain wording, bounded index memory, full disks,
corpora and questions with no words, and program settings named where they are wrong.

The model is scripted (tests/scripted.py, optimize/scenario_lms.py) where the case is about
control flow; processes and file systems are real where the case is about them.
"""

import json
import os
import resource
import shutil
import signal
import subprocess
import sys
from pathlib import Path

import pytest

from deltaseek import AgentSettings, CorpusError, DeltaSeek, ProgramFileError, UsageError, save_program
from deltaseek.optimize.scenario_lms import scenario_lm
from deltaseek.programs.agent import checks, evidence
from deltaseek.programs.agent.answer import program_answer
from deltaseek.programs.agent.evidence import Reading, proxy_answer
from deltaseek.programs.agent.learned_reader import Extracted, shipped_reader
from deltaseek.programs.agent.scratchpad import Fact, Scratchpad
from deltaseek.programs.index import CorpusIndex, Passage
from deltaseek.programs.tools import LocalCorpusSearch
from tests.scripted import ScriptedEngine, classify, scripted_lm, step, synth
from tests.test_optimize import dataset, offline_tracking, run_cli, scripted_cli  # noqa: F401 (fixtures)


def untitled_items(count: int) -> list[Passage]:
    return [Passage(id=str(n), title="", text=f"The code of item {n} is X{n}.") for n in range(1, count + 1)]


# --- an answer that denies what it quotes --------------------------------------------------------

def test_a_sentence_that_restates_the_question_answers_it():
    fact = Fact(source="abbey", title="", text="Wendle Abbey stands on a hill. The motto of Wendle Abbey is Ora et "
                                               "labora, carved over its gate.", step=1)
    found = evidence.restated_answer("What is the motto of Wendle Abbey?", [fact])
    assert found is not None and found.span == "Ora et labora" and found.source == "abbey"
    assert evidence.restated_answer("What is the motto of Wendle Priory?", [fact]) is None  # another subject
    assert evidence.restated_answer("What is Wendle Abbey?", [fact]) is None  # a description, not a span


def test_the_closest_evidence_that_answers_the_question_is_the_answer_not_a_denial(use_lm):
    """A model whose replies are junk: the program answers, and a passage that says the answer in
    the question's own words is an answer, never "the passages do not state it"."""
    tool = LocalCorpusSearch(CorpusIndex.build(untitled_items(2000)))
    with use_lm(scenario_lm("echo", tool.name)):
        pred = DeltaSeek(tools=[tool])(question="What is the code of item 777?")
    assert "do not state" not in pred.answer and "X777" in pred.answer, pred.answer
    assert pred.answerability == "direct" and pred.sources == ["777"]


# --- plain wording ---------------------------------------------------------------------------------

def test_closest_evidence_of_an_untitled_passage_has_no_empty_brackets():
    pad = Scratchpad(question="Which colour is the gate of the Wendle mill?")
    pad.facts.append(Fact(source="mill", title="", text="The Wendle mill grinds oats for the valley.", step=1))
    answer = program_answer(pad, Reading()).text
    assert "()" not in answer and "Closest evidence: The Wendle mill grinds oats" in answer, answer


@pytest.mark.parametrize("question, figure", [
    ("Wendle has a population of how many inhabitants?", "population figure"),
    ("What is the population of Wendle?", "population figure"),
    ("What is the current rate of adoption for Wendle Mail?", "current rate of adoption figure"),
])
def test_the_figure_not_found_is_named_in_plain_words(question, figure):
    assert evidence.figure_asked(question) == figure
    proxy = Extracted("1,200", "About 1,200 people voted in Wendle.", "votes", "number", 1.0)
    answer = proxy_answer(question, Reading(proxies=[proxy]), {"votes": ""})
    assert answer.startswith(f"No {figure} was found in the sources. Related figures found: 1,200 (About"), answer


# --- a capable model's answer in a sentence --------------------------------------------------------

GUILD = [Passage(id="guild", title="Tarbury Writers Guild",
                 text="The Tarbury Writers Guild was founded in 1903 by the poet Ada Lind. It meets in the old mill."),
         Passage(id="mill", title="Tarbury mill", text="The old mill of Tarbury grinds oats for the valley.")]
GUILD_QUESTION = "Who founded the Tarbury Writers Guild?"


def answered_in_a_sentence(answer: str, use_lm) -> object:
    def step_reply(prompt):
        return step(move="synthesize") if "Ada Lind" in prompt else step("Tarbury Writers Guild founder")
    engine = ScriptedEngine(classify=classify("lookup"), step=step_reply, judge=lambda _: {"answerability": "direct",
                            "reason": "read"}, diversify=lambda _: {"strategy": "direct", "query": "Tarbury guild"},
                            synthesize=lambda _: synth(answer, sources=["guild"]))
    program = DeltaSeek(tools=[LocalCorpusSearch(CorpusIndex.build(GUILD))], settings=AgentSettings(profile="capable"))
    with use_lm(scripted_lm(engine)):
        return program(question=GUILD_QUESTION)


@pytest.mark.parametrize("answer", [
    "Based on the passages, Ada Lind founded it.",
    "It was founded by Ada Lind in 1903.",
    "According to the sources, the guild was founded by the poet Ada Lind.",
    "Certainly! The Tarbury Writers Guild was founded by Ada Lind.",
    "In 1903, Ada Lind founded it.",
    "The passages say that Ada Lind founded it.",
    "From what I read, Ada Lind did.",
])
def test_a_capable_models_right_answer_in_a_sentence_comes_through_untouched(answer, use_lm):
    pred = answered_in_a_sentence(answer, use_lm)
    assert (pred.answer, pred.answer_origin, pred.replaced_because) == (answer, "lm", None)


@pytest.mark.parametrize("answer, named", [
    ("Based on the passages, Mira Holt founded it.", "holt, mira"),
    ("It was founded by Ada Lind in 1911.", "1911"),
    ("Zorbo founded it.", "zorb"),
])
def test_a_wrong_answer_in_a_sentence_is_still_named_and_set_aside(answer, named, use_lm):
    pred = answered_in_a_sentence(answer, use_lm)
    assert pred.answer_origin != "lm" and named in pred.replaced_because, pred.replaced_because


def test_the_claim_of_an_answer_leaves_out_its_framing_only():
    assert checks.claim("Based on the passages, Ada Lind founded it.") == "Ada Lind founded it."
    assert checks.claim("In 1903, Ada Lind founded it.") == "In 1903, Ada Lind founded it."  # a year is a claim
    assert checks.claim("Mira Holt, not Ada Lind, founded it.") == "Mira Holt, not Ada Lind, founded it."  # a name too


def test_a_sentence_that_describes_what_is_asked_does_not_answer_it():
    fact = Fact(source="mayor", title="", text="The mayor of Wendle is the head of its council.", step=1)
    assert evidence.restated_answer("Who is the mayor of Wendle?", [fact]) is None
    fact = Fact(source="mayor", title="", text="The mayor of Wendle is elected every four years.", step=1)
    assert evidence.restated_answer("Who is the mayor of Wendle?", [fact]) is None


# --- one misspelt word of a longer name --------------------------------------------------------------

BRIDGE = [Passage(id="thb", title="Tarbury Hall Bridge", text="The Tarbury Hall Bridge crosses the Vey below the old "
                  "hall. It was built in 1842 by the engineer Ada Lind."),
          Passage(id="mill", title="Tarbury mill", text="The old mill of Tarbury grinds oats for the valley.")]


def test_a_misspelt_word_of_a_name_does_not_end_the_search(use_lm):
    tool = LocalCorpusSearch(CorpusIndex.build(BRIDGE))
    with use_lm(scenario_lm("echo", tool.name)):
        pred = DeltaSeek(tools=[tool])(question="Who built the Tarbury Hal Bridge?")
    assert "No information found" not in pred.answer and "Ada Lind" in pred.answer, pred.answer
    assert pred.stop_reason != "answerability"


def test_a_capable_models_answer_about_a_misspelt_name_comes_through(use_lm):
    engine = ScriptedEngine(classify=classify("lookup"),
                            step=lambda p: step(move="synthesize") if "Ada Lind" in p else step("Tarbury Hal Bridge"),
                            synthesize=lambda _: synth("Ada Lind built it in 1842.", sources=["thb"]))
    program = DeltaSeek(tools=[LocalCorpusSearch(CorpusIndex.build(BRIDGE))], settings=AgentSettings(profile="capable"))
    with use_lm(scripted_lm(engine)):
        pred = program(question="Who built the Tarbury Hal Bridge?")
    assert (pred.answer, pred.answer_origin) == ("Ada Lind built it in 1842.", "lm"), pred.replaced_because


def test_a_name_no_passage_holds_is_still_missing(use_lm):
    tool = LocalCorpusSearch(CorpusIndex.build(BRIDGE))
    with use_lm(scenario_lm("echo", tool.name)):
        pred = DeltaSeek(tools=[tool])(question="Who built the Tarbury Xyzzy Bridge?")
    assert pred.answer.startswith("No information found about Xyzzy") and pred.answerability == "unlikely"


def test_the_corpus_tool_ranks_a_name_with_a_misspelt_word_and_names_the_word():
    result = LocalCorpusSearch(CorpusIndex.build(BRIDGE)).search("Tarbury Hal Bridge")
    assert result.hits and result.hits[0].id == "thb" and "hal" in result.note, (result.status, result.note)
    result = LocalCorpusSearch(CorpusIndex.build(BRIDGE)).search("Tarbury Xyzzy Bridge")
    assert not result.hits and "Xyzzy" in result.note


# --- a question in another language --------------------------------------------------------------------

def test_a_question_the_reader_cannot_type_is_answered_with_a_label_that_agrees(bundled_index, use_lm):
    """The reader reads English question words; for another language it cannot tell whether the
    closest passage answers, so the answer neither denies it nor is labelled unanswerable."""
    tool = LocalCorpusSearch(bundled_index)
    with use_lm(scenario_lm("echo", tool.name)):
        pred = DeltaSeek(tools=[tool])(question="Qui a créé le langage Ruby ?")
    assert "Matsumoto" in pred.answer and "do not state" not in pred.answer, pred.answer
    assert pred.answerability == "unknown"


def test_an_english_question_the_passages_leave_unanswered_is_still_denied(use_lm):
    """Only a question in another language is beyond the reader: an English question it read, with
    no kind of answer to type, over passages that do not answer it, is answered unanswerable (by a
    reader whose answerability is below its threshold)."""
    tool = LocalCorpusSearch(CorpusIndex.build([
        Passage(id="m", title="Orla mill", text="The Orla mill stands on the Orla river below the weir at Kestle."),
        Passage(id="k", title="Kestle", text="Kestle is a village of stone cottages on the Orla river.")]))
    program = DeltaSeek(tools=[tool], reader=shipped_reader().model_copy(update={"threshold": 0.99}))
    with use_lm(scenario_lm("echo", tool.name)):
        pred = program(question="What did the Orla mill grind?")
    assert "do not state" in pred.answer and pred.answerability == "unlikely", (pred.answer, pred.answerability)


def french_answer(answer: str, bundled_index, use_lm):
    engine = ScriptedEngine(classify=classify("lookup"),
                            step=lambda p: step(move="synthesize") if "Matsumoto" in p else step("Ruby langage créateur"),
                            synthesize=lambda _: synth(answer))
    program = DeltaSeek(tools=[LocalCorpusSearch(bundled_index)], settings=AgentSettings(profile="capable"))
    with use_lm(scripted_lm(engine)):
        return program(question="Qui a créé le langage Ruby ?")


def test_a_capable_models_answer_in_another_language_keeps_its_label(bundled_index, use_lm):
    pred = french_answer("Yukihiro Matsumoto a créé Ruby en 1995.", bundled_index, use_lm)
    assert (pred.answer, pred.answer_origin, pred.answerability) == ("Yukihiro Matsumoto a créé Ruby en 1995.", "lm",
                                                                     "direct"), pred.replaced_because
    wrong = french_answer("Guido van Rossum a créé Ruby en 1995.", bundled_index, use_lm)
    assert wrong.answer_origin != "lm" and "rossu" in wrong.replaced_because



# --- index memory, full disks, corpora with no words -------------------------------------------------

def python(code: str, *args: str, env: dict | None = None, file_limit: int | None = None) -> subprocess.CompletedProcess:
    """A real Python process running `code`; with `file_limit`, no file it writes may grow past that
    many bytes (a write past it fails with EFBIG, as one on a full disk fails with ENOSPC)."""
    def limit():
        signal.signal(signal.SIGXFSZ, signal.SIG_IGN)
        resource.setrlimit(resource.RLIMIT_FSIZE, (file_limit, file_limit))
    return subprocess.run([sys.executable, "-c", code, *args], capture_output=True, text=True, timeout=300,
                          env={**os.environ, **(env or {})}, preexec_fn=limit if file_limit else None)


CLI = "import sys; from deltaseek.cli import main; sys.exit(main(sys.argv[1:]))"


@pytest.fixture
def small_disk(tmp_path):
    """(a folder, a file size limit or None): a 64 KB tmpfs where mounting is allowed, else a
    folder whose writers are held to 16 KB a file by RLIMIT_FSIZE."""
    mount = tmp_path / "small"
    mount.mkdir()
    mounted = shutil.which("mount") and subprocess.run(["mount", "-t", "tmpfs", "-o", "size=64k", "tmpfs", str(mount)],
                                                        capture_output=True).returncode == 0
    if not mounted and not hasattr(resource, "RLIMIT_FSIZE"):
        pytest.skip("neither a tmpfs mount nor RLIMIT_FSIZE is available here")
    yield mount, (None if mounted else 16 * 1024)
    if mounted:
        subprocess.run(["umount", str(mount)], check=True)


def items_corpus(folder: Path, count: int = 2000) -> Path:
    corpus = folder / "items.jsonl"
    corpus.write_text("".join(json.dumps({"text": f"The code of item {n} is X{n}."}) + "\n" for n in range(1, count + 1)))
    return corpus


def test_a_cache_that_cannot_be_written_costs_one_warning_and_the_index_answers(small_disk, tmp_path):
    folder, file_limit = small_disk
    corpus = items_corpus(tmp_path)
    search = ("import sys; from deltaseek import CorpusIndex; "
              "print(CorpusIndex.open([sys.argv[1]]).search('code of item 777', k=1)[0].passage.text)")
    done = python(search, str(corpus), env={"DELTASEEK_CACHE": str(folder)}, file_limit=file_limit)
    assert done.returncode == 0 and done.stdout.strip() == "The code of item 777 is X777.", done.stderr
    [warning] = done.stderr.strip().splitlines()
    assert warning.startswith(f"deltaseek: warning: the index cache could not be written in {folder / 'index'} (")


def test_index_names_the_folder_it_cannot_write(small_disk, tmp_path):
    folder, file_limit = small_disk
    done = python(CLI, "index", str(items_corpus(tmp_path)), env={"DELTASEEK_CACHE": str(folder)}, file_limit=file_limit)
    assert done.returncode == 2 and done.stderr.startswith(
        f"deltaseek: error: the index could not be saved in {folder / 'index'}: "), done.stderr
    assert len(done.stderr.strip().splitlines()) == 1
    assert not any(p.name.startswith(".building-") for p in (folder / "index").iterdir())  # nothing half-written left


def test_evaluate_on_a_full_disk_names_the_file_and_the_rows_kept_and_resumes(capsys, scripted_cli, dataset,
                                                                               offline_tracking, small_disk):
    folder, file_limit = small_disk
    if file_limit:
        pytest.skip("evaluate runs in this process, which RLIMIT_FSIZE would hold too: it needs a tmpfs mount")
    out = folder / "eval.jsonl"
    assert run_cli(capsys, "evaluate", "--dataset", dataset, "--split", "all", "--out", out,
                   "--tracking-uri", offline_tracking)[0] == 0
    first = out.read_text().splitlines()[0]
    out.write_text(first + "\n")  # one row kept from an earlier run; then the disk fills up
    filler = folder / "filler"
    with filler.open("wb", buffering=0) as handle:
        try:
            while handle.write(b"x" * 512):
                pass
        except OSError:
            pass
    code, _, err = run_cli(capsys, "evaluate", "--dataset", dataset, "--split", "all", "--resume", "--out", out,
                           "--tracking-uri", offline_tracking)
    assert code == 2 and f"deltaseek: error: {out}: the result of example " in err, err
    kept = [json.loads(line) for line in out.read_text().splitlines() if line.endswith("}")]
    assert 1 <= len(kept) < 4 and kept[0] == json.loads(first)
    assert f"the {len(kept)} rows written before it are kept: free some space, then run again with --resume" in err
    filler.unlink()
    code, _, err = run_cli(capsys, "evaluate", "--dataset", dataset, "--split", "all", "--resume", "--out", out,
                           "--tracking-uri", offline_tracking)
    assert code == 0, err
    rows = [json.loads(line) for line in out.read_text().splitlines() if line.endswith("}")]  # a cut line is skipped
    assert sorted(r["id"] for r in rows) == sorted(["t-rails", "t-llama", "d-ohio", "d-xyzzy"])


def test_a_corpus_with_no_searchable_word_is_one_line_naming_the_file(capsys, tmp_path):
    corpus = tmp_path / "stopwords.jsonl"
    corpus.write_text('{"text": "the of and"}\n{"text": "a ? !"}\n')
    with pytest.raises(CorpusError, match="stopwords.jsonl: no passage holds a searchable word"):
        CorpusIndex.open([corpus])
    done = python(CLI, "index", str(corpus), env={"DELTASEEK_CACHE": str(tmp_path / "cache"), "PYTHONWARNINGS": "error"})
    assert done.returncode == 2 and done.stderr.count("\n") == 1, done.stderr
    assert done.stderr.startswith(f"deltaseek: error: {corpus}: no passage holds a searchable word")


def test_a_corpus_too_large_for_the_memory_is_refused_before_it_is_read(tmp_path):
    corpus = items_corpus(tmp_path, 20_000)
    done = python(CLI, "index", str(corpus), env={"DELTASEEK_CACHE": str(tmp_path / "cache"),
                                                 "DELTASEEK_INDEX_MEMORY": "300M"})
    assert done.returncode == 2 and len(done.stderr.strip().splitlines()) == 1, done.stderr
    assert "GB of memory to index in process and 0.3 GB is available" in done.stderr
    assert "--to sphinx:HOST:PORT/INDEX" in done.stderr and not (tmp_path / "cache" / "index").exists()
    done = python(CLI, "index", str(corpus), env={"DELTASEEK_CACHE": str(tmp_path / "cache"),
                                                 "DELTASEEK_INDEX_MEMORY": "8G"})
    assert done.returncode == 0 and "indexed 20000 passages" in done.stdout, done.stderr


# --- a question with no words; bad settings in a program file ----------------------------------------

@pytest.mark.parametrize("question", ["?" * 2000, "?! ... ¿¡", "— * —"])
def test_a_question_of_punctuation_alone_is_refused_as_empty(capsys, question):
    code = run_cli(capsys, "ask", question)
    assert code[0] == 2 and code[2] == "deltaseek: error: the question is empty: it holds no word, only punctuation " \
                                       "or symbols\n", code[2]
    with pytest.raises(UsageError, match="the question is empty"):
        DeltaSeek(tools=[LocalCorpusSearch(CorpusIndex.build(GUILD))])(question=question)


@pytest.mark.parametrize("settings, problem", [
    ({"reader_min_confidence": 7}, "setting reader_min_confidence: 7 is not allowed; it must be at least 0 and at most 1"),
    ({"relevance_drop": 0}, "setting relevance_drop: 0 is not allowed; it must be above 0 and below 1"),
    ({"reader_min_confidence_by_type": {"person": 3}},
     "setting reader_min_confidence_by_type.person: 3 is not allowed; input should be less than or equal to 1"),
])
def test_a_setting_out_of_range_in_a_program_file_is_one_line_naming_the_file_and_range(tmp_path, settings, problem):
    path = save_program(DeltaSeek(), tmp_path / "program.json")
    state = json.loads(path.read_text())
    state["settings"] = settings
    path.write_text(json.dumps(state))
    with pytest.raises(ProgramFileError) as raised:
        DeltaSeek.from_compiled(path)
    message = str(raised.value)
    assert message.startswith(str(path)) and problem in message and "\n" not in message, message
