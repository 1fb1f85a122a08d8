"""The reader's noun classes (WordNet's lexicographer files) and its neighbourhood features.

Every question and sentence here is hand-written; the WordNet files of the converter's test are
made here in WordNet's own format.
"""

import json

from deltaseek.optimize import convert_wordnet
from deltaseek.programs.agent.learned_reader.features import FEATURES
from deltaseek.programs.agent.learned_reader.neighbours import NEIGHBOUR_FEATURES
from deltaseek.programs.agent.learned_reader.nouns import SENSE_FEATURES, asked_thing, class_features, noun_classes
from deltaseek.programs.agent.learned_reader.read import candidate_rows
from deltaseek.programs.agent.scratchpad import Fact


def test_a_noun_has_the_classes_of_its_senses_most_frequent_first_and_a_plural_its_singulars():
    assert noun_classes("decade")[0] == "time"
    assert noun_classes("painter")[0] == "person"
    assert noun_classes("kilograms") == noun_classes("kilogram") == ["quantity"]
    assert noun_classes("cities") == noun_classes("city") and "location" in noun_classes("city")
    assert noun_classes("Decade,") == noun_classes("decade")  # as a sentence writes it
    assert noun_classes("quickly") == [] and noun_classes("") == []


def test_the_noun_asked_for_is_found_behind_a_kind_or_as_what_is_asked_of_something():
    assert asked_thing("What kind of tree grows by the lake?") == "tree"
    assert asked_thing("Which types of boats sail there?") == "boats"
    assert asked_thing("What was the capital of the old duchy?") == "capital"
    assert asked_thing("In what decade did the mill close?") == "decade"
    assert asked_thing("Who built the mill?") is None


def test_a_candidate_is_compared_with_the_asked_nouns_class_and_the_pair_is_left_to_the_model():
    time = noun_classes("decade")
    assert class_features(time, "in+noun", "the late spring") == {
        "lex:class:time|time": 1.0, "class_shared": 1.0, "class_same": 1.0}
    assert class_features(time, "in+noun", "a painter")["class_same"] == 0.0
    # a figure or a word WordNet has no noun for is of no class; a name is left to its shape
    assert class_features(time, "in+noun", "1920s") == {"lex:class:time|<num>": 1.0, "class_unknown": 1.0}
    assert class_features(time, "in+noun", "Ida Brann") == {"lex:class:time|<Name>": 1.0}
    # a question naming no noun pairs its asking phrase with the candidate's class
    assert class_features([], "who", "the painter") == {"lex:class:who|person": 1.0}
    assert set(SENSE_FEATURES) <= set(FEATURES) and set(NEIGHBOUR_FEATURES) <= set(FEATURES)


def test_the_neighbourhood_features_see_the_questions_word_pairs_and_the_words_beside_a_candidate():
    facts = [Fact(source="a", title="Vey Bridge", step=1,
                  text="The old bridge over the Vey closed in 1990 after a flood. A ferry began running in 1994.")]
    rows = candidate_rows("When did the old bridge close?", "date", facts)
    by_text = {r.candidate.text: r.features for r in rows}
    closed, opened = by_text["1990"], by_text["1994"]
    assert closed["question_bigrams_in_sentence"] > opened["question_bigrams_in_sentence"]  # "old bridge"
    assert closed["left_three_in_question"] > opened["left_three_in_question"]  # "closed in" before 1990
    assert closed["best_window"] == 1.0 and closed["window_gap"] == 0.0 < opened["window_gap"]
    assert closed["nearest_in_sentence"] == opened["nearest_in_sentence"] == 1.0  # each alone in its sentence


def test_the_converter_reads_wordnets_noun_index_and_data_files(tmp_path):
    header = "  1 This software and database is provided under the license in WordNet_LICENSE.  \n"
    # data.noun: offset, lexicographer file number (18 noun.person, 06 noun.artifact, 28 noun.time) ...
    (tmp_path / "data.noun").write_text(header + "00000101 18 n 01 weaver 0 000 | one who weaves  \n"
                                        "00000202 06 n 01 weaver 0 000 | a finch's nest-maker's tool  \n"
                                        "00000303 28 n 02 dusk 0 nightfall 0 000 | the time of evening  \n"
                                        "00000404 06 n 01 loom_house 0 000 | a shed for looms  \n", encoding="latin-1")
    # index.noun: lemma pos synset_cnt p_cnt [ptr_symbol...] sense_cnt tagsense_cnt synset_offset...
    (tmp_path / "index.noun").write_text(header + "dusk n 1 1 @ 1 0 00000303  \n"
                                         "loom_house n 1 0 1 0 00000404  \n"
                                         "weaver n 2 2 @ ~ 2 1 00000101 00000202  \n", encoding="latin-1")
    out = tmp_path / "noun_classes.json"
    convert_wordnet.main(["--source", str(tmp_path), "--out", str(out)])
    data = json.loads(out.read_text())
    assert data["classes"][ord(data["nouns"]["weaver"][0]) - ord("a")] == "person"
    assert [data["classes"][ord(c) - ord("a")] for c in data["nouns"]["weaver"]] == ["person", "artifact"]
    assert [data["classes"][ord(c) - ord("a")] for c in data["nouns"]["dusk"]] == ["time"]
    assert "loom_house" not in data["nouns"]  # one-word nouns only: a candidate's last word is one word
