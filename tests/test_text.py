"""The words of questions and passages (programs/text.py), on hand-written text."""

import re

from deltaseek.programs.text import (DIGITS_OF_NUMBER_WORDS, NUMBER_WORDS, acronyms, capitalized_run, in_digits,
                                     initials, long_names, meaningful_tokens, named_entities, sentence_names, stem,
                                     stems, without_opening_word, words, written_acronyms)


def test_words_split_where_the_script_changes_but_not_inside_a_latin_word():
    assert words("Rubyの作者") == ["Ruby", "の作者"]
    assert words("Gabriel García Márquez") == ["Gabriel", "García", "Márquez"]
    assert words("Hernández") == ["Hernández"]


def test_a_hyphenated_name_is_one_name_whose_words_still_count():
    assert named_entities("Who invented Wi-Fi?") == ["Wi-Fi"]
    assert meaningful_tokens("Wi-Fi") == {"wi", "fi"}
    assert named_entities("Where was the creator of Ruby born?") == ["Ruby"]


def test_an_imperative_or_question_word_opening_a_sentence_is_no_name():
    assert sentence_names("List Ada Lind's films.") == ["Ada", "Lind"]
    assert sentence_names("Describe Tern.") == ["Tern"]
    assert sentence_names("Compare Tern and the Vey Bridge.") == ["Tern", "Vey", "Bridge"]
    assert sentence_names("Which river runs through Tarbury?") == ["Tarbury"]
    assert sentence_names("Where was Ada Lind born?") == ["Ada", "Lind"]


def test_an_opening_word_is_a_name_on_its_own_evidence():
    assert sentence_names("Ada Lind was born where?") == ["Ada", "Lind"]  # a name goes on after it
    assert sentence_names("Tern? Tern is a compiler.") == ["Tern"]  # written capitalized again later
    assert sentence_names("Tern was built where?") == []  # one capitalized word: nothing says it is a name
    assert sentence_names("") == []


def test_a_sentence_final_period_is_not_part_of_a_name_but_an_abbreviation_keeps_its_dots():
    assert sentence_names("The bridge was built by Ada Lind.") == ["Ada", "Lind"]
    assert sentence_names("Who founded the U.S. Navy?") == ["U.S.", "Navy"]


def test_the_opening_word_is_dropped_as_the_sentence_gives_it():
    assert without_opening_word("Describe the Vey bridge.") == "the Vey bridge."
    assert without_opening_word("Tern?") == ""


def test_a_stem_is_the_first_five_letters_so_related_words_meet():
    assert stem("Compiler,") == stem("compiled") == "compi"
    assert stems("The compilers compiled Tern.") == {"compi", "tern"}


def test_number_words_and_digits_read_both_ways():
    assert NUMBER_WORDS["2"] == "two" and DIGITS_OF_NUMBER_WORDS["ten"] == "10"
    assert len(NUMBER_WORDS) == len(DIGITS_OF_NUMBER_WORDS) == 11


def test_a_capitalized_run_takes_the_small_words_it_is_told_to():
    bank = re.compile(capitalized_run(small="of|the"))
    assert bank.findall("She joined the Bank of Tarbury in 1990.") == ["Bank of Tarbury"]
    assert bank.findall("She joined the Bank of the West.") == []  # one small word at a time
    assert re.compile(capitalized_run()).findall("Ada Lind met Olaf in Tarbury.") == ["Ada Lind"]
    assert re.compile(capitalized_run(fewest=1)).findall("Ada Lind met Olaf.") == ["Ada Lind", "Olaf"]
    repeated = re.compile(capitalized_run(small="of|the", several_small=True))
    assert repeated.findall("She joined the Bank of the West.") == ["Bank of the West"]


def test_acronyms_are_the_initials_of_names_of_several_words():
    assert initials("Canadian Broadcasting Corporation") == "cbc"
    assert acronyms("It joined the United Nations and the Bank of Tarbury.") == {"un", "bt"}
    assert long_names("The United Nations met.") == ["United Nations"]  # a sentence's "The" is no part of it
    assert written_acronyms("She left the U.S. for the UN, OK?") == {"us", "un", "ok"}


def test_numbers_are_written_one_way():
    assert in_digits("It cost 1,200 crowns.") == "It cost 1200 crowns."
    assert in_digits("1.2 million and 3.5 billion") == "1200000 and 3500000000"
    assert in_digits("twenty-five members, the third time, the 19th century") == "25 members, the 3 time, the 19 century"
    assert in_digits("one of two, 1,5 kg, 1,2345") == "one of two, 1,5 kg, 1,2345"  # small words and decimal commas stay
    assert in_digits("It opened on 1905-07-01.") == "It opened on 1 July 1905."
    assert in_digits("$1.2M, 3.5bn and \u00a3500k") == "$1200000, 3500000000 and \u00a3500000"
    assert in_digits("a 5m wall, a 5K race") == "a 5m wall, a 5K race"  # a bare letter may be a unit


def test_the_guardrails_read_a_questions_subjects_so():
    from deltaseek.programs.agent.guardrails import question_subjects

    assert question_subjects("List Ada Lind's films.") == ["Ada", "Lind"]
    assert question_subjects("Describe Tern.") == ["Tern"]
