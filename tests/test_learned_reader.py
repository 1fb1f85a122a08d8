"""The learned reader: candidates, features, weights as data, training and the opt-in in the agent.

Every sentence here is hand-written; none comes from a dataset (the example-guard tests check
the package's own docstring and comment examples against `datasets/`).
"""

import ast
import io
import json
import re
import tokenize
import tomllib
from pathlib import Path

import pytest

from deltaseek.bundled import datasets_dir, labeled_set
from deltaseek.errors import ProgramFileError
from deltaseek.programs.agent import DeltaSeek
from deltaseek.programs.agent.evidence import asks_what_a_name_is, read_evidence
from deltaseek.programs.agent.learned_reader import extract_answer, load_reader, shipped_reader
from deltaseek.programs.agent.learned_reader.candidates import Candidate, phrases, sentence_candidates
from deltaseek.programs.agent.learned_reader.features import (FEATURES, clause_subject, question_view, rarity,
                                                              sentence_view, word_class, wh_key)
from deltaseek.bundled import shipped_reader_path
from deltaseek.programs.agent.learned_reader.model import ANSWERABILITY_FEATURES, FORMAT_VERSION, Linear, ReaderModel
from deltaseek.programs.agent.learned_reader.read import looks_like_a_person
from deltaseek.programs.agent.learned_reader.train import (Outcome, Question, choose_threshold, fit_reader, prepare,
                                                           scores_at)
from deltaseek.programs.agent.scratchpad import Fact, Scratchpad, ToolCall
from deltaseek.programs.tools import ToolStatus

PACKAGE = Path(__file__).resolve().parent.parent / "programs" / "agent" / "learned_reader"


def fact(source, title, text):
    return Fact(source=source, title=title, text=text, step=1)


def test_candidates_cover_names_dates_figures_and_phrases():
    sentence = "The Vey Bridge, designed by Ida Brann, opened on 4 May 1911 and carried 3,000 carts a day."
    found = {c.text: c.kinds for c in sentence_candidates(sentence)}
    assert "name" in found["Ida Brann"] and "name" in found["Vey Bridge"]
    assert "date" in found["4 May 1911"]
    assert "number" in found["3,000 carts"]
    assert "phrase" in found["carts"]
    # a phrase never opens or closes with a function word, and never crosses a comma
    for text, _, _ in phrases(sentence):
        words = text.split()
        assert words[0].lower() not in {"the", "and", "on", "by", "a"} and words[-1].lower() not in {"the", "and", "a"}
        assert ", " not in text  # a comma inside a figure ("3,000") is not a break
    assert not any(c.text == "designed by Ida Brann, opened" for c in sentence_candidates(sentence))


def test_a_persons_name_is_words_not_initials_places_or_a_lone_word_with_no_fuller_name():
    facts = [fact("a", "Ida Brann", "Ida Brann chaired the Tarn Assembly. Brann met the U.N. envoy in Tarn.")]
    def person(text):
        return looks_like_a_person(Candidate(text, 0, len(text), frozenset({"name"})), facts)
    assert person("Ida Brann") and person("Brann")  # a surname the facts write in full
    assert not person("Tarn")  # one word with no fuller name: as often a place
    assert not person("Tarn Assembly")  # an institution's head noun
    assert not person("U.N")  # initials
    # an article opening a sentence, or a title written before its text, is no first name
    places = [fact("v", "Orla (river)", "The Orla rises in the hills."), fact("p", "Kestle", "Kestle is a port.")]
    assert not looks_like_a_person(Candidate("Orla", 0, 4, frozenset({"name"})), places)
    assert not looks_like_a_person(Candidate("Kestle", 0, 6, frozenset({"name"})), places)


def test_a_name_with_a_quoted_nickname_is_one_candidate():
    found = {c.text: c.kinds for c in sentence_candidates('The press was run by Margaret "Peggy" Alder until 1920.')}
    assert "name" in found['Margaret "Peggy" Alder']


def test_the_passage_titled_with_the_subject_and_the_current_holder_are_read_first():
    reader = shipped_reader()
    facts = [fact("hall", "Brann Hall", "Brann Hall in Kell was named after Ida Brann, born a century earlier."),
             fact("ida", "Ida Brann", "Ida Brann is a painter. She was born in Tarnwick.")]
    assert extract_answer("Where was Ida Brann born?", facts, reader)[0].span == "Tarnwick"
    council = [fact("c", "Tarn council", "The council named Ada Lind to fill the seat vacated by Ben Orr, and she "
                                         "became the mayor of Tarn in May 2024.")]
    assert extract_answer("Who is the mayor of Tarn?", council, reader)[0].span == "Ada Lind"


def test_features_see_the_question_near_the_candidate_and_the_clause_it_opens():
    question = "Who designed the Vey Bridge?"
    text = "Ida Brann designed the Vey Bridge, and the mill beside it was built by Olaf Sund."
    f = fact("a", "Vey Bridge", text)
    view = question_view(question, "person", rarity([text]))
    sentence = sentence_view(text, f, 0, 1.0, 0)
    brann, sund = (Candidate(n, text.index(n), text.index(n) + len(n), frozenset({"name"}))
                   for n in ("Ida Brann", "Olaf Sund"))
    assert clause_subject(sentence, brann, view) and not clause_subject(sentence, sund, view)
    assert wh_key(question) == "who" and wh_key("How many bridges cross the Vey?") == "how many"
    assert wh_key("Which river runs through Tarn?") == "which+noun" and wh_key("What is a kestrel?") == "what+be"
    assert word_class("Brann") == "<Name>" and word_class("1911,") == "<num>" and word_class("by") == "by"
    # a passage's content words are classes, not words: what is learned carries over to new articles
    assert word_class("mill") == "<word>" and word_class("University") == "university"


def small_world():
    """Hand-written passages and questions: who built each bridge and when it opened."""
    builders = ["Ida Brann", "Olaf Sund", "Mara Veil", "Piet Lorn", "Ansel Dray", "Cora Helm", "Ruth Pell",
                "Tomas Ek", "Lena Arbo", "Jon Fray", "Nils Odd", "Vera Kast"]
    rivers = ["Vey", "Tarn", "Osk", "Lume", "Brisk", "Corr", "Dunn", "Elm", "Fenn", "Gale", "Holt", "Iver"]
    questions = []
    for i, (builder, river) in enumerate(zip(builders, rivers)):
        year = 1850 + 7 * i
        text = (f"The {river} Bridge crosses the {river} river near the old mill. It was built by {builder} "
                f"for the county. The bridge opened in {year} after four years of work.")
        facts = [fact(f"b{i}", f"{river} Bridge", text)]
        questions.append(Question(f"who-{i}", f"Who built the {river} Bridge?", facts, (builder,)))
        questions.append(Question(f"when-{i}", f"When did the {river} Bridge open?", facts, (str(year),)))
        questions.append(Question(f"none-{i}", f"Who painted the {river} Bridge?", facts, ()))
    return prepare(questions)


def test_training_learns_to_pick_the_right_spans_and_keeps_the_false_abstention_bound():
    questions = small_world()
    train, dev = questions[:24], questions[24:]
    reader = fit_reader(train, dev, max_false_abstention=0.25)
    for q in dev:
        if q.answerable:
            found = extract_answer(q.question, q.facts, reader)
            assert found and found[0].span == q.answers[0], (q.question, found)
    assert reader.metrics["false_abstention"] <= 0.25
    assert set(reader.ranker.features) <= set(FEATURES) | {n for n in reader.ranker.features if n.startswith("lex:")}


def test_the_threshold_abstains_most_within_the_bound():
    found = [Outcome(True, 0.9, 1.0), Outcome(True, 0.3, 0.0), Outcome(True, 0.6, 1.0), Outcome(False, 0.2, 0.0),
             Outcome(False, 0.5, 0.0)]
    threshold, figures = choose_threshold(found, max_false_abstention=0.34)
    assert threshold == 0.6 and figures["abstention"] == 1.0 and figures["false_abstention"] == pytest.approx(1 / 3)
    threshold, figures = choose_threshold(found, max_false_abstention=0.0)
    assert figures["false_abstention"] == 0.0 and threshold <= 0.3


def test_a_subject_the_collection_lacks_abstains_only_where_the_dev_split_says_so():
    """The rule "no passage names X, so nothing answers" is scored as the program applies it: kept
    where it abstains on unanswerable questions, dropped where it only costs answerable ones."""
    named, absent = Outcome(True, 0.9, 1.0), Outcome(True, 0.9, 1.0, subject_absent=True)
    made_up = Outcome(False, 0.9, 0.0, subject_absent=True)
    assert scores_at([named, absent], 0.5)["false_abstention"] == 0.0
    assert scores_at([named, absent], 0.5, absent_subject_abstains=True)["false_abstention"] == 0.5
    assert scores_at([named, made_up], 0.5, absent_subject_abstains=True)["abstention"] == 1.0

    from deltaseek.optimize.train_reader import choose_absent_subject_rule
    sentences = [Question("q1", "Who founded the Orla mill?", [fact("a", "", "It was founded by Ada Lind in 1850.")],
                          ("Ada Lind",), subject_absent=True)]
    reader = shipped_reader().model_copy(update={"threshold": 0.0})
    assert choose_absent_subject_rule(reader, prepare(sentences))[0] is False  # the answer is read on
    nowhere = [Question("q2", "Who founded the Xelt mill?", [fact("b", "", "It was founded by Ben Orr in 1850.")],
                        subject_absent=True)]
    assert choose_absent_subject_rule(reader, prepare(nowhere))[0] is True  # a made-up place: abstain


def test_a_reader_that_reads_on_answers_a_question_whose_subject_no_passage_names():
    pad = searched_pad("Who founded the Orla mill?", [fact("a", "", "It was founded by Ada Lind in 1850 beside the weir.")],
                       "Orla mill founded")
    pad.subject_presence = {"Orla": False}
    abstaining = DeltaSeek(reader=shipped_reader().model_copy(update={"threshold": 0.0}))
    assert abstaining.missing_subjects(pad) == ["Orla"] and abstaining.read(pad).answerability == "unlikely"
    reading_on = DeltaSeek(reader=abstaining.reader.model_copy(update={"abstain_on_absent_subject": False}))
    assert reading_on.missing_subjects(pad) == []
    assert [e.span for e in reading_on.read(pad).spans] == ["Ada Lind"]


def test_a_reader_is_json_numbers_and_other_versions_are_refused_by_name(tmp_path):
    ranker = Linear(features=[*FEATURES, "lex:who|last=<Name>"], coef=[0.0] * len(FEATURES) + [1.5], intercept=0)
    answerability = Linear(features=list(ANSWERABILITY_FEATURES), coef=[0.5] * len(ANSWERABILITY_FEATURES),
                           intercept=-1.0)
    reader = ReaderModel(format_version=FORMAT_VERSION, ranker=ranker, answerability=answerability, threshold=0.3)
    path = reader.save(tmp_path / "reader.json")
    assert path.stat().st_mode & 0o044  # readable by others: it is data
    assert load_reader(path) == reader
    data = json.loads(path.read_text())
    data["format_version"] = FORMAT_VERSION + 1
    path.write_text(json.dumps(data))
    with pytest.raises(ProgramFileError, match=rf"^{re.escape(str(path))}: reader format version {FORMAT_VERSION + 1}"):
        load_reader(path)
    data["format_version"] = FORMAT_VERSION
    data["threshold"] = 7
    path.write_text(json.dumps(data))
    with pytest.raises(ProgramFileError, match="reader field 'threshold'"):
        load_reader(path)
    path.write_text("not json")
    with pytest.raises(ProgramFileError, match="not a JSON reader file"):
        load_reader(path)


def test_the_shipped_reader_says_what_it_was_trained_on_and_uses_known_features():
    reader = shipped_reader()
    assert shipped_reader_path().is_file() and 0 < reader.threshold < 1
    assert "squad2_articles.jsonl" in reader.trained_on["datasets"] and "hotpotqa.jsonl" not in reader.trained_on["datasets"]
    assert reader.trained_on["command"].startswith("python -m deltaseek.optimize.train_reader")
    assert {n for n in reader.ranker.features if not n.startswith("lex:")} <= set(FEATURES)
    assert reader.metrics["candidate_recall"] >= 0.8


def test_the_agent_reads_with_a_learned_reader_when_given_one_and_saves_it_with_the_program(tmp_path):
    pad = Scratchpad(question="Who built the Vey Bridge?")
    pad.facts = [fact("v", "Vey Bridge", "The Vey Bridge crosses the Vey river. It was built by Ida Brann in 1911.")]
    pad.tool_calls = [ToolCall(step=1, tool="search", args={"query": pad.question}, status=ToolStatus.SUCCESS,
                               executed=True, result_count=1, new_facts=1)]
    reader = shipped_reader().without_adapter().model_copy(update={"threshold": 0.0})  # the ranker's threshold
    reading = read_evidence(pad, reader=reader)
    assert [e.span for e in reading.spans] == ["Ida Brann"] and reading.answerability == "direct"
    never = shipped_reader().without_adapter().model_copy(update={"threshold": 1.0})
    assert read_evidence(pad, reader=never).answerability != "direct"  # below the threshold it abstains
    from deltaseek.programs.tools import LocalCorpusSearch
    from deltaseek.programs.index import CorpusIndex, Passage
    index = CorpusIndex.build([Passage(id="v", title="Vey Bridge", text=pad.facts[0].text)])
    program = DeltaSeek([LocalCorpusSearch(index)], reader=reader)
    program.save(str(tmp_path / "program.json"))
    loaded = DeltaSeek([LocalCorpusSearch(index)])
    loaded.load(str(tmp_path / "program.json"))
    assert loaded.reader == reader


def comment_blocks(source: str) -> list[str]:
    """The comments of a module, consecutive comment lines joined into one text (their `#` dropped)."""
    blocks, lines, last_row = [], [], None
    for token in tokenize.generate_tokens(io.StringIO(source).readline):
        if token.type != tokenize.COMMENT:
            continue
        if last_row is not None and token.start[0] != last_row + 1:
            blocks.append(" ".join(lines))
            lines = []
        lines.append(token.string.lstrip("#"))
        last_row = token.start[0]
    return blocks + [" ".join(lines)] if lines else blocks


def one_line(text: str) -> str:
    """Text as one line: a line break, an indent or a run of spaces is one space."""
    return " ".join(text.split())


def docstring_examples(path: Path) -> list[str]:
    """The quoted examples ("...") of a module's docstrings and comments, of three words or more,
    each on one line: a quote wrapped over two lines (or two comment lines) is read whole."""
    source = path.read_text(encoding="utf-8")
    tree = ast.parse(source)
    texts = [ast.get_docstring(node) or "" for node in ast.walk(tree)
             if isinstance(node, (ast.Module, ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef))]
    texts += comment_blocks(source)
    texts += [node.value for node in ast.walk(tree) if isinstance(node, ast.Constant)
              and isinstance(node.value, str) and node.value.count(" ") > 8]  # attribute docstrings
    quoted = [one_line(q) for text in texts for q in re.findall(r"[\"“]([^\"“”]{8,}?)[\"”]", text)]
    # "What is the name of ..." is a pattern, not an example
    return [q for q in quoted if "..." not in q and len(q.split()) >= 3]


def datasets_text() -> str:
    """Every string the bundled datasets hold (questions, answers, passages), lowercased, each on one line."""
    def strings(value):
        if isinstance(value, str):
            yield one_line(value).lower()
        elif isinstance(value, dict):
            for v in value.values():
                yield from strings(v)
        elif isinstance(value, list):
            for v in value:
                yield from strings(v)

    return "\n".join(s for path in sorted(datasets_dir().rglob("*.jsonl"))
                     for line in path.read_text(encoding="utf-8").splitlines() if line.strip()
                     for s in strings(json.loads(line)))


def package_modules() -> list[Path]:
    """Every module of the package: the folders pyproject.toml maps to `deltaseek` and its rooms."""
    root = PACKAGE.parents[2]
    folders = tomllib.loads((root / "pyproject.toml").read_text())["tool"]["setuptools"]["package-dir"].values()
    return sorted(p for folder in set(folders) for p in (root / folder).rglob("*.py"))


def test_the_example_guard_reads_a_quote_wrapped_over_two_lines(tmp_path):
    module = tmp_path / "wrapped.py"
    module.write_text('"""Reads phrases: "the tall\n    grey tower" and more."""\n\n'
                      '# a comment that quotes "the small\n# green door" too\nX = 1\n')
    assert set(docstring_examples(module)) == {"the tall grey tower", "the small green door"}


def test_the_example_guard_covers_every_folder_of_the_package():
    folders = {p.relative_to(PACKAGE.parents[2]).parts[0] for p in package_modules()}
    assert {"deltaseek", "signatures", "metrics", "programs", "optimize"} <= folders


def test_no_example_in_the_learned_reader_quotes_a_dataset():
    said = datasets_text()
    examples = {e for path in PACKAGE.rglob("*.py") for e in docstring_examples(path)}
    assert len(examples) > 10
    quoted = sorted(e for e in examples if e.lower().rstrip(".?") in said)
    assert not quoted, quoted


def test_no_example_elsewhere_in_the_package_quotes_a_dataset_but_the_seed_questions():
    """The seed questions are the product's own demo questions (`SEED_QUESTIONS`), named as such;
    every other quoted example in the package is written by hand."""
    from deltaseek import SEED_QUESTIONS

    said = datasets_text()
    examples = {e for path in package_modules() for e in docstring_examples(path)} - set(SEED_QUESTIONS)
    assert len(examples) > 100
    quoted = sorted(e for e in examples if e.lower().rstrip(".?") in said)
    assert not quoted, quoted


def test_the_training_command_reproduces_the_shipped_reader():
    """`python -m deltaseek.optimize.train_reader` (its defaults) gives the shipped reader within a
    stated tolerance: the same best span on at least 95% of the dev questions, the same
    answerability features, and dev figures (F1, abstention, false abstention, candidate recall)
    and threshold within 0.01. The weights themselves are not compared: thousands of sparse
    lexical weights sit near the cut that leaves small ones out (`MIN_WEIGHT`), and a rebuild on
    another machine moves some across it (1.8% of the ranker's features on one, 97.8% of the dev
    questions given the same span). About a minute and a half on 2 cores."""
    from deltaseek.optimize.train_reader import SHIPPED_DATASETS, dataset_questions, train_on
    from deltaseek.programs.agent.learned_reader.train import best_span, score_rows

    datasets = [str(labeled_set(name)) for name in SHIPPED_DATASETS]
    parts = dataset_questions(datasets)
    retrained = train_on(datasets, parts=parts)
    shipped = shipped_reader()
    dev = [q for q in parts["dev"] if q.rows]
    same = 0
    for q in dev:
        score_rows(q.rows, shipped)
        before = best_span(q)
        score_rows(q.rows, retrained)
        same += best_span(q) == before
    assert same >= 0.95 * len(dev), f"the same best span on {same} of {len(dev)} dev questions"
    assert retrained.answerability.features == shipped.answerability.features
    assert retrained.threshold == pytest.approx(shipped.threshold, abs=0.01)
    for figure in ("f1_answerable", "false_abstention", "candidate_recall"):
        assert retrained.metrics[figure] == pytest.approx(shipped.metrics[figure], abs=0.01), figure
    # abstention is a share of the dev split's 163 unanswerable questions: 0.02 is three of them
    assert retrained.metrics["abstention"] == pytest.approx(shipped.metrics["abstention"], abs=0.02)
    # the shipped reader also names its adapter (train_reader --adapter), which training does not change
    assert shipped.trained_on["command"] == f"{retrained.trained_on['command']} --adapter reader-adapter.gguf"
    assert Path(shipped.adapter).name == "reader-adapter.gguf"


def test_a_retrained_reader_replaces_the_shipped_weights_only_beyond_chance():
    from deltaseek.optimize.train_reader import RETRAINED, chosen_reader

    shipped = [0.0] * 40 + [1.0] * 20
    rethresholded = [0.0] * 38 + [1.0] * 22
    traded = [1.0] * 9 + [0.0] * 31 + [0.0] * 6 + [1.0] * 14  # 9 gained, 6 lost: more right, within chance
    scores = {"shipped": shipped, "shipped, threshold on this dev split": rethresholded,
              RETRAINED[0]: traded, RETRAINED[1]: shipped}
    assert sum(traded) > sum(rethresholded) > sum(shipped)
    assert chosen_reader(scores, RETRAINED) == "shipped, threshold on this dev split"
    scores[RETRAINED[1]] = [1.0] * 15 + [0.0] * 25 + [1.0] * 20  # 15 more right, none lost
    assert chosen_reader(scores, RETRAINED) == RETRAINED[1]


def test_optimize_trains_a_reader_for_a_users_set_and_keeps_the_best_on_its_dev_split(monkeypatch, tmp_path):
    """`deltaseek optimize --train-reader`: the shipped reader as it is, re-thresholded, trained on
    the set, trained on both; the one chosen on the set's dev split is the program's and is saved with it
    (the shipped data stands in small here: the seed set)."""
    from deltaseek.optimize import train_reader

    monkeypatch.setattr(train_reader, "SHIPPED_DATASETS", ("seed_set",))
    program = DeltaSeek()
    metrics = train_reader.train_reader_into(program, str(labeled_set("musique")))
    assert program.reader is not None and program.reader.trained_on["chosen_as"] in {
        "shipped", "shipped, threshold on this dev split", "trained on this set",
        "trained on the shipped data and this set"}
    assert {"reader_dev_f1_answerable", "reader_dev_false_abstention", "reader_threshold"} <= set(metrics)
    program.save(str(tmp_path / "compiled.json"))
    assert json.loads((tmp_path / "compiled.json").read_text())["reader"]["threshold"] == program.reader.threshold


def searched_pad(question: str, facts: list, *queries: str) -> Scratchpad:
    pad = Scratchpad(question=question)
    pad.facts = facts
    pad.tool_calls = [ToolCall(step=i + 1, tool="search", args={"query": q}, status=ToolStatus.SUCCESS,
                               executed=True, result_count=1, new_facts=1) for i, q in enumerate(queries or [question])]
    return pad


def test_the_program_reads_with_the_shipped_reader_unless_it_has_its_own():
    pad = searched_pad("Who is the mayor of Tarn?", [fact("c", "Tarn council", "The council named Ada Lind to fill the seat "
                                                      "vacated by Ben Orr, and she became the mayor of Tarn in May 2024.")])
    assert [e.span for e in DeltaSeek().read(pad).spans] == ["Ada Lind"]  # between searches the ranker reads
    assert read_evidence(pad, reader=shipped_reader().without_adapter()).spans == DeltaSeek().read(pad).spans
    assert read_evidence(pad, reader=shipped_reader()).spans == DeltaSeek().read(pad, final=True).spans
    never = shipped_reader().without_adapter().model_copy(update={"threshold": 1.0})
    assert DeltaSeek(reader=never).learned_reader() is never and not DeltaSeek(reader=never).read(pad).spans


def test_a_later_part_about_the_first_answer_waits_for_a_search_that_names_it():
    question = "Who built the Orla mill, and where did she train?"
    facts = [fact("m", "Orla mill", "The Orla mill was built by Ada Lind in 1850 beside the weir at Kestle."),
             fact("a", "Ada Lind", "Ada Lind was an engineer. She trained in Tarnwick under a millwright.")]
    before = read_evidence(searched_pad(question, facts), reader=shipped_reader().model_copy(update={"threshold": 0.0}))
    assert before.answerability == "unknown"  # what is asked of her is to be searched under her name
    after = read_evidence(searched_pad(question, facts, question, "Ada Lind trained"),
                          reader=shipped_reader().model_copy(update={"threshold": 0.0}))
    assert [e.span for e in after.spans][:1] == ["Ada Lind"] and after.answerability == "direct"


def test_a_sentence_of_a_passage_on_another_thing_answers_only_if_it_names_the_subject():
    facts = [fact("s", "Tern Studio", "Tern Studio is a design firm in Kell. It was founded by Ida Brann in 1990."),
             fact("t", "Tern (compiler)", "Tern is a compiler for small boards, first released in 2004.")]
    # the compiler's own passage was read and names no one: the studio's founder is no answer
    assert extract_answer("Who designed Tern?", facts, shipped_reader()) == []
    facts.append(fact("u", "Tern (compiler): history", "Ben Orr designed Tern while teaching in Kell."))
    assert [e.span for e in extract_answer("Who designed Tern?", facts, shipped_reader())] == ["Ben Orr"]


def test_a_learned_reader_reads_a_question_naming_no_answer_type_and_leaves_a_definition_to_the_model():
    facts = [fact("v", "Vey Bridge", "The Vey Bridge crosses the Vey river. Its builders sank the piers into "
                  "granite bedrock.")]
    question = "What did the builders sink the piers into?"
    reading = read_evidence(searched_pad(question, facts), reader=shipped_reader().model_copy(update={"threshold": 0.0}))
    assert reading.answerability == "direct" and "granite" in reading.spans[0].span
    never = shipped_reader().without_adapter().model_copy(update={"threshold": 1.0})
    assert read_evidence(searched_pad(question, facts), reader=never).answerability == "unknown"  # unsure: abstains
    leaving = shipped_reader().model_copy(update={"threshold": 0.0, "reads_untyped": False})
    assert read_evidence(searched_pad(question, facts), reader=leaving).answerability == "untyped"
    definition = searched_pad("What is the Vey Bridge?", facts)
    assert read_evidence(definition, reader=shipped_reader()).answerability == "untyped"
    # a sentence saying what it is answers it: "X is a ...", or a line "X: ..." (a docstring)
    for said in ("The Vey Bridge is a stone bridge of 1911 over the Vey.", '"""Vey Bridge: the stone bridge of 1911."""'):
        defined = searched_pad("What is the Vey Bridge?", [*facts, fact("d", "Bridges", said)])
        reading = read_evidence(defined, reader=shipped_reader())
        assert reading.answerability == "direct" and reading.spans[0].span == said
    assert asks_what_a_name_is("Who was Ida Brann?") and not asks_what_a_name_is("What is the capital of Tarn?")


def test_questions_naming_no_type_are_read_unless_the_dev_split_says_leaving_them_scores_better():
    from deltaseek.optimize.train_reader import choose_untyped_rule
    facts = [fact("v", "Vey Bridge", "The Vey Bridge crosses the Vey river. Its builders sank the piers into "
                  "granite bedrock.")]
    reader = shipped_reader().model_copy(update={"threshold": 0.0})
    answerable = [Question("q1", "What did the builders sink the piers into?", facts, ("granite bedrock",))]
    assert choose_untyped_rule(reader, prepare(answerable))[0] is True
    unanswerable = [Question("q2", "What did the builders paint the piers with?", facts)]
    reads, read, left = choose_untyped_rule(reader, prepare(unanswerable))
    assert reads is False and left["abstention"] == 1.0 and read["abstention"] == 0.0


def test_a_surname_alone_is_answered_with_the_full_name_the_facts_write():
    from deltaseek.programs.agent.learned_reader.names import full_name
    from deltaseek.programs.agent.scratchpad import Fact

    own = Fact(source="b", title="Ida Brann", text="Ida Marie Brann led the guild. Brann retired in 1990.", step=1)
    other = Fact(source="o", title="Ola Brann", text="Ola Brann was a sculptor.", step=1)
    assert full_name("Brann", [other, own], own=own) == "Ida Brann"  # its own passage's title first
    assert full_name("Brann", [other, own]) == "Ola Brann"
    assert full_name("Tarbury", [Fact(source="t", title="Tarbury", text="Tarbury is a town.", step=1)]) is None


def test_a_word_of_nationality_before_a_noun_is_no_place():
    from deltaseek.programs.agent.learned_reader.names import used_as_adjective

    sentence = "Ida Brann is a Veltrian painter. She was born in Tarbury, Veltria."
    start = sentence.index("Veltrian")
    assert used_as_adjective("Veltrian", sentence, start, start + len("Veltrian"))
    start = sentence.index("Veltria.")
    assert not used_as_adjective("Veltria", sentence, start, start + len("Veltria"))
    assert not used_as_adjective("Tarbury", sentence, sentence.index("Tarbury"), sentence.index("Tarbury") + 7)


def test_passages_that_disagree_on_the_value_asked_for_are_said_in_a_caveat(use_lm):
    from deltaseek import DeltaSeek
    from deltaseek.programs.agent.learned_reader.disagreement import disagreeing_values
    from deltaseek.programs.index import CorpusIndex, Passage
    from deltaseek.programs.tools import LocalCorpusSearch
    from tests.scripted import ScriptedEngine, classify, scripted_lm, step, synth

    minutes = [24, 55, 23, 59, 34, 48]
    passages = [Passage(f"f{n}", f"Tarbury ferry {n}", f"The Tarbury ferry crossing to Lundby takes {m} minutes.")
                for n, m in enumerate(minutes)]
    question = "How long does the Tarbury ferry crossing to Lundby take?"
    facts = [fact(p.id, p.title, p.text) for p in passages]
    assert disagreeing_values(question, facts, shipped_reader()) == [f"{m} minutes" for m in minutes]
    assert disagreeing_values(question, facts[:1] * 2, shipped_reader()) == []  # one value: no disagreement
    assert disagreeing_values("Who runs the Tarbury ferry?", facts, shipped_reader()) == []  # not a value

    engine = ScriptedEngine(classify=classify("lookup"), step=lambda p: step("Tarbury ferry Lundby minutes"),
                            synthesize=lambda _: synth("24 minutes"))
    with use_lm(scripted_lm(engine)):
        pred = DeltaSeek(tools=[LocalCorpusSearch(CorpusIndex.build(passages))])(question=question)
    assert any("disagree" in c and "55 minutes" in c for c in pred.caveats), pred.caveats
