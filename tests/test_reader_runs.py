"""`optimize --train-reader` keeps the reader its dev figures proposed, or one of its rules turned,
only where the program's own runs of the dev split score better beyond chance. The runs here are
scripted score lists: what is tested is which runs are made and what is kept."""

from deltaseek.optimize.pipeline import keep_reader_by_runs
from deltaseek.optimize.reader_runs import choose_by_runs, reader_candidates
from deltaseek.programs.agent import DeltaSeek, save_program
from deltaseek.programs.agent.learned_reader import shipped_reader

QUESTIONS = 40


class RecordingTracker:
    """The tracker's one call `keep_reader_by_runs` makes, its metrics kept."""

    def __init__(self):
        self.logged = []

    def log_metrics(self, metrics):
        self.logged.append(metrics)


def start_and_proposal():
    start = shipped_reader()
    return start, start.model_copy(update={"threshold": 0.0, "trained_on": {"chosen_as": "a new threshold"}})


def test_each_rule_of_the_start_and_of_the_proposal_is_run_the_other_way():
    start, proposed = start_and_proposal()
    candidates = reader_candidates(start, proposed)
    assert list(candidates) == [
        "the proposal",
        "the starting reader, a subject the collection lacks: read on",
        "the starting reader, a question naming no type: left to the model",
        "the proposal, a subject the collection lacks: read on",
        "the proposal, a question naming no type: left to the model"]
    assert candidates["the proposal"].threshold == 0.0
    assert not candidates["the starting reader, a subject the collection lacks: read on"].abstain_on_absent_subject
    assert candidates["the starting reader, a subject the collection lacks: read on"].threshold == start.threshold


def test_a_proposal_that_changes_nothing_the_runs_see_is_not_run_again():
    start = shipped_reader()
    same = start.model_copy(update={"trained_on": {"chosen_as": "shipped"}, "metrics": {"f1": 0.5}})
    assert list(reader_candidates(start, same)) == [
        "the starting reader, a subject the collection lacks: read on",
        "the starting reader, a question naming no type: left to the model"]


def scripted_runs(better: str, gained: int):
    """Runs where the candidate named `better` answers `gained` more questions right than the start."""
    start = [1.0] * 20 + [0.0] * (QUESTIONS - 20)
    made = []

    def run(name, reader):
        made.append(name)
        return start[:20] + [1.0] * gained + [0.0] * (QUESTIONS - 20 - gained) if name == better else list(start)

    return start, run, made


def test_a_rule_turned_is_kept_where_its_runs_beat_the_start_beyond_chance():
    start, proposed = start_and_proposal()
    scores, run, made = scripted_runs("the starting reader, a subject the collection lacks: read on", gained=8)
    kept, reader, means = choose_by_runs(start, scores, proposed, run)
    assert kept == "the starting reader, a subject the collection lacks: read on"
    assert not reader.abstain_on_absent_subject and reader.threshold == start.threshold
    assert len(made) == 5 and means["the starting reader"] == 0.5 and means[kept] == 0.7


def test_a_gain_of_one_question_keeps_the_start():
    start, proposed = start_and_proposal()
    scores, run, _ = scripted_runs("the proposal", gained=1)
    kept, reader, means = choose_by_runs(start, scores, proposed, run)
    assert kept == "the starting reader" and reader is start
    assert means["the proposal"] > means["the starting reader"]


def test_the_program_reads_with_the_reader_its_runs_chose(tmp_path):
    """`keep_reader_by_runs` sets each candidate on the program for its run, reuses the baseline's
    runs of the start, and leaves the kept reader on the program, saved with it."""
    start, proposed = start_and_proposal()
    program = DeltaSeek(reader=proposed)
    start_rows = [{"index": i, "scores": {"combined": 1.0 if i < 20 else 0.0}} for i in range(QUESTIONS)]
    tracker = RecordingTracker()

    def run_dev(side):
        reader = program.learned_reader()
        right = 30 if not reader.abstain_on_absent_subject and reader.threshold == start.threshold else 20
        # rows in another order than the questions': runs paired by index
        return [{"index": i, "scores": {"combined": 1.0 if i < right else 0.0}} for i in reversed(range(QUESTIONS))]

    keep_reader_by_runs(program, start, start_rows, run_dev, tracker)
    assert not program.reader.abstain_on_absent_subject and program.reader.threshold == start.threshold
    assert tracker.logged[0]["reader_runs_candidates"] == 5 and tracker.logged[0]["reader_runs_kept_combined"] == 0.75
    loaded = DeltaSeek.from_compiled(save_program(program, tmp_path / "compiled.json"))
    assert loaded.learned_reader().abstain_on_absent_subject is False


def test_without_the_baselines_runs_the_start_is_run_first():
    """Compiled prompts, or a dev split the optimize does not report: the start's runs are made
    too, first, with the reader the program started with."""
    start, proposed = start_and_proposal()
    program = DeltaSeek(reader=proposed)
    readers = []

    def run_dev(side):
        readers.append((side, program.learned_reader().threshold))
        return [{"index": i, "scores": {"combined": 0.5}} for i in range(QUESTIONS)]

    keep_reader_by_runs(program, start, None, run_dev, RecordingTracker())
    assert readers[0] == ("reader-run-0", start.threshold) and len(readers) == 6
    assert program.reader.threshold == start.threshold  # a tie keeps the start
