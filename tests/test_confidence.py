"""The answer's confidence: its signals, its model, its fit, and the label that follows it."""

import json
import math
import random
from dataclasses import replace

import pytest

from deltaseek import AgentSettings, DeltaSeek
from deltaseek.errors import DatasetError, ProgramFileError
from deltaseek.metrics.calibration import direct_figures, expected_calibration_error, reliability
from deltaseek.optimize import abstain_margin, fit_confidence
from deltaseek.programs.agent.answer import FinalAnswer, Proposal
from deltaseek.programs.agent.confidence import SET_ASIDE, answer_signals, follow_confidence, settable_aside
from deltaseek.programs.agent.evidence import Reading
from deltaseek.programs.agent.learned_reader import Extracted, shipped_reader
from deltaseek.programs.agent.learned_reader.model import (CONFIDENCE_SIGNALS, CalibratedLinear, ConfidenceModel,
                                                           Linear, reader_from_dict)
from deltaseek.programs.agent.scratchpad import Fact, Scratchpad
from deltaseek.programs.index import CorpusIndex, Passage
from deltaseek.programs.tools import LocalCorpusSearch
from tests.scripted import ScriptedEngine, classify, scripted_lm, step, synth

MILL = [Passage("orla-mill", "Orla mill", "The Orla mill was built by Ada Lind in 1850 on the river Tave."),
        Passage("tave", "Tave", "The Tave rises in the hills and joins the sea at Port Orla."),
        Passage("lind", "Ada Lind", "Ada Lind was an engineer. Ada Lind built mills.")]


def confidence_model(bound: float = 0.5, weight: float = 4.0, profile: str = "small") -> ConfidenceModel:
    """A model whose confidence rises with the reader's agreement with the answer, fitted on runs
    of `profile`."""
    coef = [weight if name == "answer_is_read_span" else 0.0 for name in CONFIDENCE_SIGNALS]
    return ConfidenceModel(linear=Linear(features=list(CONFIDENCE_SIGNALS), coef=coef, intercept=-2.0),
                           calibration=[(0.0, 0.05), (0.5, 0.5), (1.0, 0.9)], direct_bound=bound, profile=profile)


def pad_with(question: str, *texts: str) -> Scratchpad:
    pad = Scratchpad(question=question, profile="small")
    pad.facts = [Fact(source=f"p{i}", title=f"P{i}", text=t, step=1) for i, t in enumerate(texts)]
    return pad


def test_signals_say_how_the_answer_sits_in_the_passages_read():
    pad = pad_with("Who built the Orla mill?", MILL[0].text, MILL[2].text)
    span = Extracted("Ada Lind", MILL[0].text, "p0", "person", 2.0, 0.8, 0.3, {"ranker_probability": 0.8})
    reading = Reading(spans=[span], answerability="direct")
    signals = answer_signals(pad, FinalAnswer("Ada Lind", "extracted", ["p0"], "direct"), reading,
                             Proposal("Ada Lind built it.", [], [], [], "direct"), [], False)
    assert set(signals) <= set(CONFIDENCE_SIGNALS)
    assert signals["answer_passages_log"] == pytest.approx(math.log1p(2), abs=1e-3)  # both passages write the name
    assert signals["answer_is_read_span"] == 1.0 and signals["model_agrees_reader"] == 1.0
    assert signals["ask_person"] == 1.0 and signals["ranker_probability"] == 0.8
    assert signals["question_near_answer"] > 0.5  # "built", "orla", "mill" sit in the answer's sentence


def test_a_passage_titled_with_the_answer_writes_it_in_each_sentence_as_their_subject():
    pad = pad_with("Who designed the Vell bridge?", "She designed the Vell bridge in 1901 and the Orla mill later.")
    pad.facts[0].title = "Mara Quist"
    span = Extracted("Mara Quist", "", "p0", "person", 2.0, 0.8, 0.3, {"ranker_probability": 0.8})
    signals = answer_signals(pad, FinalAnswer("Mara Quist", "extracted", ["p0"], "direct"),
                             Reading(spans=[span], answerability="direct"), Proposal("", [], [], [], None), [], False)
    assert signals["answer_in_titles"] == 1.0 and "answer_in_facts" not in signals  # its text says "She"
    assert signals["answer_passages_log"] == pytest.approx(math.log1p(1), abs=1e-3)
    assert signals["question_near_answer"] == 1.0  # "designed", "vell", "bridge" in the sentence about her


def test_each_part_of_a_two_part_answer_is_looked_for_on_its_own():
    pad = pad_with("Who built the Orla mill, and when was it built?", MILL[0].text)
    span = Extracted("Ada Lind", MILL[0].text, "p0", "person", 2.0, 0.8, 0.3, {"ranker_probability": 0.8})
    signals = answer_signals(pad, FinalAnswer("Ada Lind; 1850", "extracted", ["p0"], "direct"),
                             Reading(spans=[span], answerability="direct"), Proposal("", [], [], [], None), [], False)
    assert signals["parts"] == 2.0 and signals["answer_in_facts"] == 1.0  # no passage writes "Ada Lind 1850"
    assert signals["answer_words_log"] == pytest.approx((math.log1p(2) + math.log1p(1)) / 2, abs=1e-3)


def test_an_abstention_is_described_by_where_it_came_from_not_by_its_words():
    pad = pad_with("Who built the Vell bridge?", MILL[0].text)
    final = FinalAnswer("The passages found do not state the answer.", "evidence", [], "unlikely")
    signals = answer_signals(pad, final, Reading(answerability="unlikely"), Proposal("", [], [], [], None), [], True)
    assert signals["abstains"] == 1.0 and signals["origin_evidence"] == 1.0 and signals["stopped_early"] == 1.0
    assert "answer_in_facts" not in signals


@pytest.mark.parametrize("confidence, label", [(0.8, "direct"), (0.3, "unknown")])
def test_the_label_follows_the_confidence(confidence, label):
    final = FinalAnswer("Ada Lind", "extracted", ["p0"], "direct")
    caveat = follow_confidence(final, confidence, 0.6)
    assert final.answerability == label
    assert (caveat is None) == (label == "direct")
    if caveat:
        assert "30%" in caveat and "60%" in caveat and final.text == "Ada Lind"  # the best guess is still shown


def test_an_abstention_or_a_proxy_answer_keeps_its_label():
    no_answer = FinalAnswer("The passages found do not state the answer.", "evidence", [], "unlikely")
    proxy = FinalAnswer("Stars are 40k; the rate is not published.", "extracted", ["p0"], "proxy_only")
    for final in (no_answer, proxy):
        assert follow_confidence(final, 0.01, 0.6) is None
    assert (no_answer.answerability, proxy.answerability) == ("unlikely", "proxy_only")


def test_the_calibration_map_is_interpolated_and_must_rise():
    model = confidence_model()
    assert model.probability({}) == pytest.approx(0.05 + 0.45 * (0.1192 / 0.5), abs=1e-3)  # sigmoid(-2) on the map
    assert model.probability({"answer_is_read_span": 1.0}) == pytest.approx(0.5 + 0.4 * (0.8808 - 0.5) / 0.5, abs=1e-3)
    with pytest.raises(ValueError, match="must rise"):
        ConfidenceModel(linear=model.linear, calibration=[(0.0, 0.9), (1.0, 0.1)], direct_bound=0.5)


def test_a_reader_file_whose_confidence_names_an_unknown_signal_is_refused():
    data = json.loads(shipped_reader().model_copy(update={"adapter": None}).model_dump_json())
    model = confidence_model().model_dump()
    model["linear"]["features"][0] = "lex:who|last=lind"
    data["confidence"] = model
    with pytest.raises(ProgramFileError, match="'confidence'.*lex:who"):
        reader_from_dict(data, "reader.json")


def synthetic_runs(n: int, seed: int = 0) -> list[dict]:
    """Runs where agreeing with the reader makes an answer right four times in five, else one in five."""
    rng = random.Random(seed)
    rows = []
    for i in range(n):
        agrees = rng.random() < 0.5
        right = rng.random() < (0.8 if agrees else 0.2)
        rows.append({"split": "dev", "answerability": "direct", "scores": {"token_f1": float(right)},
                     "confidence_signals": {"origin_extracted": 1.0, "answer_is_read_span": float(agrees)}})
    return rows


def test_a_fitted_model_is_calibrated_and_its_direct_bound_keeps_direct_answers_right():
    model, held_out, held_right = fit_confidence.fit(synthetic_runs(400), direct_precision=0.75)
    agreeing = model.probability({"origin_extracted": 1.0, "answer_is_read_span": 1.0})
    apart = model.probability({"origin_extracted": 1.0})
    assert agreeing == pytest.approx(0.8, abs=0.08) and apart == pytest.approx(0.2, abs=0.08)
    assert apart < model.direct_bound <= agreeing
    assert model.metrics["held_out_ece"] <= 0.05 and model.metrics["direct_right"] >= 0.75
    assert len(held_out) == len(held_right) == 400


def test_the_fit_learns_how_often_an_abstention_is_right_from_the_unanswerable_questions():
    rng = random.Random(1)
    rows = synthetic_runs(600)
    for row in rows:  # one question in three unanswerable, its span seldom in a sentence holding the question's words
        unanswerable = rng.random() < 1 / 3
        near = rng.random() < (0.2 if unanswerable else 0.8)
        row["gold"] = {"answerability": "unlikely" if unanswerable else "direct"}
        row["scores"]["token_f1"] *= not unanswerable
        row["confidence_signals"]["question_near_answer"] = float(near)
    model, held_out, held_right = fit_confidence.fit(rows)
    far, near = (model.abstention_probability({"origin_extracted": 1.0, "question_near_answer": v}) for v in (0.0, 1.0))
    assert far == pytest.approx(2 / 3, abs=0.1) and near == pytest.approx(1 / 9, abs=0.08)  # Bayes: 0.27/0.40, 0.07/0.60
    assert round(expected_calibration_error(held_out, held_right), 4) == model.metrics["held_out_ece"]
    # runs with no unanswerable question: an abstention is never right, whatever the signals
    assert fit_confidence.fit(synthetic_runs(200))[0].abstention_probability({"question_near_answer": 0.0}) == 0.0


def test_the_questions_surprise_is_weighed_for_whether_the_passages_answer_not_for_the_answer():
    rng = random.Random(2)
    rows = synthetic_runs(600)
    for row in rows:  # a surprised adapter: the passages were not written for the question, or the answer is wrong
        unanswerable = rng.random() < 1 / 3
        row["gold"] = {"answerability": "unlikely" if unanswerable else "direct"}
        row["scores"]["token_f1"] *= not unanswerable
        surprised = unanswerable or not row["scores"]["token_f1"]
        row["confidence_signals"]["adapter_question_surprise"] = rng.gauss(3.6 if surprised else 2.6, 0.4)
    model, _, _ = fit_confidence.fit(rows)
    assert model.linear.weights["adapter_question_surprise"] == 0.0
    assert model.unanswerable.linear.weights["adapter_question_surprise"] > 0.5
    calm, surprised = (model.abstention_probability({"origin_extracted": 1.0, "adapter_question_surprise": v})
                       for v in (2.6, 3.6))
    assert surprised > calm + 0.2


def test_fitting_refuses_test_runs_with_the_file_and_line(tmp_path):
    runs = tmp_path / "runs.jsonl"
    rows = synthetic_runs(3)
    rows[1]["split"] = "test"
    runs.write_text("".join(json.dumps(r) + "\n" for r in rows))
    with pytest.raises(DatasetError, match=r"runs.jsonl:2: a test-split run"):
        fit_confidence.read_runs([str(runs)])
    rows[1]["split"] = "dev"
    rows[2]["caveats"] = [f'The reader\'s span "Tave" {SET_ASIDE}, 4.0%, below the 6.3% under which ...']
    runs.write_text("".join(json.dumps(r) + "\n" for r in rows))
    with pytest.raises(DatasetError, match=r"runs.jsonl:3: a run that set the reader's span aside"):
        fit_confidence.read_runs([str(runs)])  # its score is of the abstention, not of the span the fit learns of


def fit_command(tmp_path, rows: list[dict]) -> dict:
    """`fit_confidence`'s command run on `rows`, saving into a copy of the shipped reader: the file it wrote."""
    runs, reader = tmp_path / "runs.jsonl", tmp_path / "reader.json"
    runs.write_text("".join(json.dumps(r) + "\n" for r in rows))
    shipped_reader().model_copy(update={"adapter": None}).save(reader)
    assert fit_confidence.main(["--runs", str(runs), "--reader", str(reader)]) == 0
    return json.loads(reader.read_text())


def test_the_fit_command_saves_the_model_with_the_reader(tmp_path, capsys):
    saved = fit_command(tmp_path, synthetic_runs(200))
    assert saved["confidence"]["direct_bound"] > 0 and "Expected calibration error" in capsys.readouterr().out
    assert reader_from_dict(saved, "reader.json").confidence is not None


def test_the_fit_says_when_no_answer_will_be_labelled_direct(tmp_path, capsys):
    rows = synthetic_runs(200)
    for i, row in enumerate(rows):  # right one time in two whatever the signals: no bound reaches three in four
        row["scores"]["token_f1"] = float(i % 2)
    saved = reader_from_dict(fit_command(tmp_path, rows), "reader.json").confidence
    assert "no answer will be labelled direct" in capsys.readouterr().out
    assert saved.metrics["direct_share"] == 0 and saved.direct_bound == 0.75


def test_an_answer_less_likely_right_than_direct_says_is_not_direct_though_the_pooled_share_would_allow_it():
    rows = synthetic_runs(600)
    rng = random.Random(1)
    for row in rows:  # a middle kind, right seven times in ten: pooled with the best, still above 75%
        if row["confidence_signals"].get("answer_is_read_span") == 0.0 and rng.random() < 0.5:
            row["confidence_signals"]["model_agrees_reader"] = 1.0
            row["scores"]["token_f1"] = float(rng.random() < 0.7)
    model, _, _ = fit_confidence.fit(rows, direct_precision=0.75)
    middle = model.probability({"origin_extracted": 1.0, "model_agrees_reader": 1.0})
    assert middle < 0.75 <= model.probability({"origin_extracted": 1.0, "answer_is_read_span": 1.0})
    assert model.direct_bound == 0.75 and model.metrics["least_direct_bound"] <= middle
    assert model.metrics["direct_right"] >= 0.75


def test_reliability_bins_and_calibration_error_by_hand():
    confidences, rights = [0.05, 0.15, 0.95, 0.95, 1.0], [False, False, True, True, False]
    table = reliability(confidences, rights)
    assert [b.answers for b in table] == [1, 1, 0, 0, 0, 0, 0, 0, 0, 3]
    assert table[-1].right == pytest.approx(2 / 3)
    expected = (0.05 + 0.15 + 3 * abs((0.95 + 0.95 + 1.0) / 3 - 2 / 3)) / 5
    assert expected_calibration_error(confidences, rights) == pytest.approx(expected)
    assert direct_figures(["direct", "unknown", "direct"], [True, False, False]) == {
        "questions": 3, "direct": 2, "direct_share": 2 / 3, "direct_right": 0.5}


def test_a_run_carries_its_confidence_and_a_best_guess_says_so(use_lm):
    model = confidence_model(bound=0.95, profile="capable")  # the scripted model's runs are capable ones
    reader = shipped_reader().model_copy(update={"adapter": None, "confidence": model})
    engine = ScriptedEngine(classify=classify("lookup"), step=lambda _: step("Orla mill built"),
                            synthesize=lambda _: synth("Ada Lind"))
    program = DeltaSeek(tools=[LocalCorpusSearch(CorpusIndex.build(MILL))], settings=AgentSettings(), reader=reader)
    with use_lm(scripted_lm(engine)):
        pred = program(question="Who built the Orla mill?")
    assert pred.answer == "Ada Lind" and 0.0 <= pred.confidence <= 1.0
    assert pred.confidence == pytest.approx(reader.confidence.probability(pred.scratchpad.confidence_signals), abs=1e-4)
    assert pred.answerability == "unknown"  # below the bound of 0.95: a best guess, labelled as one
    assert any(c.startswith("A best guess") for c in pred.caveats)
    program.settings = AgentSettings(direct_confidence=0.1)  # a bound an optimizer moved
    with use_lm(scripted_lm(engine)):
        assert program(question="Who built the Orla mill?").answerability == "direct"
    program.reader = reader.model_copy(update={"confidence": confidence_model(bound=0.95, profile="small")})
    with use_lm(scripted_lm(engine)):  # a model fitted on another profile's runs says nothing of this one's
        pred = program(question="Who built the Orla mill?")
    assert pred.confidence is None and pred.answerability == "direct"


def test_optimize_refits_the_confidence_on_the_programs_dev_runs_and_saves_it_with_the_program(tmp_path, capsys):
    program = DeltaSeek(reader=shipped_reader().model_copy(update={"adapter": None, "confidence": None}))
    figures = fit_confidence.fit_into(program, synthetic_runs(200), "the dev split of mine.jsonl")
    assert program.reader.confidence is not None and figures["confidence_direct_bound"] == program.reader.confidence.direct_bound
    program.save(str(tmp_path / "compiled.json"))
    saved = json.loads((tmp_path / "compiled.json").read_text())["reader"]["confidence"]
    assert saved["fitted_on"] == {"runs": "the dev split of mine.jsonl"}
    assert fit_confidence.fit_into(program, synthetic_runs(10), "a small split") == {}
    assert "not fitted on a small split (10 usable runs" in capsys.readouterr().out


def test_optimize_fits_a_capable_models_confidence_on_the_runs_of_the_profile_most_ran_as(capsys):
    runs = [dict(row, profile="capable") for row in synthetic_runs(200)] + [
        dict(row, profile="small") for row in synthetic_runs(30, seed=5)]  # questions a failed check turned small
    program = DeltaSeek(reader=shipped_reader().model_copy(update={"adapter": None, "confidence": None}))
    assert fit_confidence.fit_into(program, runs, "the dev split of mine.jsonl")
    assert program.reader.confidence.profile == "capable" and program.reader.confidence.metrics["runs"] == 200
    assert "fitted on the 200 runs of the capable profile; 30 run as another profile are left out" in capsys.readouterr().out
    with pytest.raises(DatasetError, match="fit one model per profile"):
        fit_confidence.fit(runs)  # the command itself is told which runs to fit


def test_optimize_fits_the_confidence_on_runs_that_answer_every_span_and_then_restores_the_margin():
    from deltaseek.optimize.pipeline import every_span_answered

    program = DeltaSeek(settings=AgentSettings(abstain_margin=0.3))
    with pytest.raises(KeyboardInterrupt), every_span_answered(program) as answering:
        assert answering.settings.abstain_margin == 1.0  # no span set aside: each one's score is seen
        raise KeyboardInterrupt
    assert program.settings.abstain_margin == 0.3


def settled(final: FinalAnswer, span: Extracted, model: ConfidenceModel, reading: Reading | None = None, **settings):
    from deltaseek.programs.agent.confidence import settle

    pad = pad_with("Who built the Orla mill?", MILL[0].text)
    reader = shipped_reader().model_copy(update={"adapter": None, "confidence": model})
    reading = reading or Reading(spans=[span], answerability="direct")
    return settle(pad, final, reading, Proposal("", [], [], [], None, asked=False), [], False, reader,
                  AgentSettings(**settings))


def test_a_span_below_the_readers_threshold_is_an_answer_unless_the_passages_silence_leads_it_by_the_margin():
    """The reader's threshold decides whether to search on; the confidence decides whether its span is an answer."""
    from deltaseek.programs.agent.answer import program_answer

    span = Extracted("Ada Lind", MILL[0].text, "p0", "person", 1.0, 0.05, 0.1, {"ranker_share": 0.3})
    doubted = Reading(unsure=[span], answerability="unknown")
    unstated = program_answer(pad_with("Who built the Orla mill?", MILL[0].text), doubted)
    assert unstated.origin == "evidence"  # the reader's own doubt: its sentence as the closest evidence
    model = confidence_model(bound=0.99).model_copy(update={"abstain_margin": 0.0, "unanswerable": unanswerable_at(0.5)})
    # the span's confidence: 0.8, against 0.5 that the passages do not state the answer
    final, confidence, signals, caveat = settled(replace(unstated), span, model, doubted)
    assert (final.text, final.origin, final.answerability) == ("Ada Lind", "extracted", "unknown")
    assert caveat.startswith("A best guess") and "reader_sure" not in signals  # zeros are left out
    assert confidence == pytest.approx(0.8, abs=0.05) and "abstains" not in signals
    final, confidence, signals, caveat = settled(replace(unstated), span, model.model_copy(update={"abstain_margin": None}),
                                                 doubted)  # no bound: the reader's doubt stands
    assert (final.text, final.origin, caveat) == (unstated.text, "evidence", None) and signals["abstains"] == 1.0
    doubting = model.model_copy(update={"abstain_margin": 0.02, "unanswerable": unanswerable_at(0.85)})
    final, confidence, signals, caveat = settled(replace(unstated), span, doubting, doubted)
    assert (final.text, final.origin) == (unstated.text, "evidence") and caveat.startswith(f'The reader\'s span "Ada Lind" {SET_ASIDE}')
    assert confidence == 0.85 and "abstains" not in signals  # the chance the passages do not say, read from the span
    # the passages' silence (0.81) likelier than the span (0.8), but not by more than the margin: the span is given
    unlikely_silence = doubting.model_copy(update={"unanswerable": unanswerable_at(0.81)})
    final, confidence, _, caveat = settled(replace(unstated), span, unlikely_silence, doubted)
    assert (final.text, final.origin) == ("Ada Lind", "extracted") and caveat.startswith("A best guess")


def unanswerable_at(share: float) -> CalibratedLinear:
    """A model of whether the passages do not state the answer that says `share`, whatever the run."""
    zeros = Linear(features=list(CONFIDENCE_SIGNALS), coef=[0.0] * len(CONFIDENCE_SIGNALS), intercept=0.0)
    return CalibratedLinear(linear=zeros, calibration=[(0.0, share), (1.0, share)])


def test_a_span_the_passages_silence_leads_by_the_margin_is_set_aside_for_its_sentence():
    span = Extracted("Tave", MILL[0].text, "p0", "place", 1.0, 0.2, 0.1, {"ranker_share": 0.3})
    model = confidence_model(bound=0.99).model_copy(update={"abstain_margin": 0.0, "unanswerable": unanswerable_at(0.85)})
    final, confidence, signals, caveat = settled(FinalAnswer("Tave", "extracted", ["p0"], "direct"), span, model)
    assert final.origin == "evidence" and final.answerability == "unlikely"  # the span's confidence: 0.8
    assert "do not state the answer for sure" in final.text and MILL[0].text in final.text  # the closest evidence
    assert caveat.startswith(f'The reader\'s span "Tave" {SET_ASIDE}') and signals["answer_is_read_span"] == 1.0
    # its confidence: the chance that the passages do not state the answer, read from the span's signals
    final, confidence, signals, _ = settled(FinalAnswer("Tave", "extracted", ["p0"], "direct"), span,
                                            model.model_copy(update={"unanswerable": unanswerable_at(0.9)}))
    assert final.origin == "evidence" and confidence == 0.9 and "abstains" not in signals
    # set in the settings, the margin moves: at 0.2 the span stands, as a best guess below direct's 0.99
    final, _, _, caveat = settled(FinalAnswer("Tave", "extracted", ["p0"], "direct"), span, model,
                                  abstain_margin=0.2)
    assert (final.text, final.answerability) == ("Tave", "unknown") and caveat.startswith("A best guess")


def test_the_models_answer_is_never_set_aside_for_a_low_confidence():
    span = Extracted("Tave", MILL[0].text, "p0", "place", 1.0, 0.2, 0.1, {"ranker_share": 0.3})
    model = confidence_model(bound=0.9).model_copy(update={"abstain_margin": -1.0})
    final, _, _, caveat = settled(FinalAnswer("Ada Lind", "lm", ["p0"], "direct"), span, model)
    assert (final.text, final.origin, final.answerability) == ("Ada Lind", "lm", "unknown")  # shown, as a best guess


def test_what_the_abstain_margin_can_set_aside_is_one_rule_for_a_run_and_for_its_record():
    span = Extracted("Tave", MILL[0].text, "p0", "place", 1.0, 0.2, 0.1, {"ranker_share": 0.3})
    model = confidence_model(bound=0.99).model_copy(update={"abstain_margin": 0.0, "unanswerable": unanswerable_at(0.85)})
    for answer, set_aside in [(FinalAnswer("Tave", "extracted", ["p0"], "direct"), True),
                              (FinalAnswer("Tave", "extracted", ["p0"], "unknown"), True),
                              (FinalAnswer("Ada Lind", "lm", ["p0"], "direct"), False),
                              (FinalAnswer("Tave", "extracted", ["p0"], "proxy_only"), False)]:
        final, _, signals, caveat = settled(answer, span, model)
        record = {"answerability": answer.answerability, "confidence_signals": signals}
        assert (SET_ASIDE in (caveat or "")) == set_aside == bool(abstain_margin.readers_spans([record])), answer
    # a span no ranker read (a comparison, a description) is never set aside
    compared = replace(span, signals={})
    final, _, signals, caveat = settled(FinalAnswer("Tave", "extracted", ["p0"], "direct"), compared, model)
    assert final.text == "Tave" and not settable_aside(signals, "direct")


def test_the_abstain_margin_is_the_lowest_whose_false_abstention_stays_within_the_limit():
    rows, confidences = [], []
    for i in range(100):  # 30 unanswerable at 0.02; answerable ones at 0.05 (10 of them) and 0.5 (60)
        unanswerable = i < 30
        rows.append({"gold": {"answerability": "unlikely" if unanswerable else "direct"}, "answerability": "direct",
                     "scores": {"token_f1": float(i >= 40)}, "source": "squad.jsonl",
                     "confidence_signals": {"origin_extracted": 1.0, "ranker_share": 0.4}})
        confidences.append(0.02 if unanswerable else 0.05 if i < 40 else 0.5)
    # the chance the passages do not state the answer: leads of 0.88, 0.55 and -0.4 over the span's
    absent = [0.9 if c == 0.02 else 0.6 if c == 0.05 else 0.1 for c in confidences]
    margin, figures = abstain_margin.abstain_margin(rows, confidences, absent, max_false=0.15)
    assert margin < 0.55 and figures == {"abstention": 1.0, "false_abstention": round(10 / 70, 4), "set_aside": 40}
    margin, figures = abstain_margin.abstain_margin(rows, confidences, absent, max_false=0.10)
    assert 0.55 <= margin < 0.88 and figures["false_abstention"] == 0.0 and figures["set_aside"] == 30
    # a span likelier right than the passages' silence is kept at any margin from 0 up
    assert abstain_margin.set_aside(rows, confidences, absent, 0.0) == list(range(40))
    # the trade-off at each limit: abstention stays at all 30 once the limit lets the 10 doubtful answerable go too
    curve = abstain_margin.trade_off(rows, confidences, absent)
    assert [(p["max_false_abstention"], p["abstention"], p["false_abstention"]) for p in curve] == [
        (0.05, 1.0, 0.0), (0.10, 1.0, 0.0), *((limit, 1.0, round(10 / 70, 4)) for limit in (0.15, 0.20, 0.30, 0.40))]
    # a set with no unanswerable question (two-hop questions) says nothing of the trade: not counted
    two_hop = [dict(r, gold={"answerability": "direct"}, source="hotpot.jsonl") for r in rows[30:]]
    assert abstain_margin.abstain_margin(rows + two_hop, confidences + confidences[30:], absent + absent[30:],
                                         0.10)[1]["false_abstention"] == 0.0
    assert abstain_margin.abstain_margin(two_hop, confidences[30:], absent[30:], 0.10) == (None, {})


def test_the_bounds_are_agent_options_refused_with_their_name_when_out_of_range(capsys):
    from deltaseek.cli import main

    assert main(["ask", "Who built the Orla mill?", "--abstain-margin", "2"]) != 0
    assert "bad option --abstain-margin: Input should be less than or equal to 1" in capsys.readouterr().err
