"""Text in other scripts: accents folded only on Latin letters, text written without spaces
found by the index, and a question in a language the reader does not read never denied.
Every passage is written here by hand."""

from deltaseek import DeltaSeek
from deltaseek.optimize.scenario_lms import scenario_lm
from deltaseek.programs.index import CorpusIndex, Passage
from deltaseek.programs.text import fold_accents, normalize_query, split_unspaced
from deltaseek.programs.tools import LocalCorpusSearch

JAPANESE = [Passage(id="biru", title="ビル", text="ビルは東京にあります。"),
            Passage(id="hiru", title="ヒル", text="ヒルは川にいます。"),
            Passage(id="mill", title="Tarbury mill", text="The Tarbury mill was built by Ada Lind in 1903.")]


def test_marks_are_folded_on_latin_letters_only():
    assert fold_accents("Beyoncé Aschenbrödel Hernández") == "Beyonce Aschenbrodel Hernandez"
    assert fold_accents("ビル") == "ビル" != fold_accents("ヒル")  # a voicing mark makes another letter
    assert fold_accents("йод") == "йод"  # the Russian й is not и
    assert normalize_query("ルビーを作ったのは誰ですか") == "ルビーを作ったのは誰ですか"


def test_text_without_spaces_is_indexed_as_pairs_of_characters():
    assert split_unspaced("東京にあります").split() == ["東京", "京に", "にあ", "あり", "りま", "ます"]
    assert split_unspaced("Rubyの作者は誰ですか").split()[:3] == ["Ruby", "の作", "作者"]
    assert split_unspaced("Tarbury mill") == "Tarbury mill"
    assert split_unspaced("The Tarbury mill (塔伯里磨坊) was built in 1903.") == "The Tarbury mill (塔伯里磨坊) was built in 1903."
    hits = CorpusIndex.build(JAPANESE).search("ビルはどこにありますか？", 3)
    assert hits[0].passage.id == "biru"


def run_alone(passages, question):
    """The program's own moves and answer: the echo model's replies are all replaced."""
    import dspy

    tool = LocalCorpusSearch(CorpusIndex.build(passages))
    with dspy.context(lm=scenario_lm("echo", tool.name), adapter=dspy.JSONAdapter()):
        return DeltaSeek(tools=[tool])(question=question)


def test_a_japanese_question_finds_its_passage_and_is_not_denied():
    pred = run_alone(JAPANESE, "ビルはどこにありますか？")
    assert "東京" in pred.answer and "biru" in pred.sources and pred.answerability != "unlikely"


def test_a_question_no_search_can_match_in_another_language_is_unknown_never_unlikely():
    english = run_alone(JAPANESE, "What is the population of Xyzzyville?")
    assert english.answerability == "unlikely"  # an English question the reader read, and found unanswered
    russian = run_alone(JAPANESE, "Сколько жителей в Ксиззивилле?")
    assert russian.answerability == "unknown", (russian.answer, russian.answerability)
