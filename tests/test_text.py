"""The words of questions and passages (programs/text.py), on hand-written text."""

from deltaseek.programs.text import meaningful_tokens, named_entities, words


def test_words_split_where_the_script_changes_but_not_inside_a_latin_word():
    assert words("Rubyの作者") == ["Ruby", "の作者"]
    assert words("Gabriel García Márquez") == ["Gabriel", "García", "Márquez"]
    assert words("Hernández") == ["Hernández"]


def test_a_hyphenated_name_is_one_name_whose_words_still_count():
    assert named_entities("Who invented Wi-Fi?") == ["Wi-Fi"]
    assert meaningful_tokens("Wi-Fi") == {"wi", "fi"}
    assert named_entities("Where was the creator of Ruby born?") == ["Ruby"]
