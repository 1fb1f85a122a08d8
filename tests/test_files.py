"""Atomic writes (deltaseek/files.py): a file is replaced whole or not at all."""

import pytest

from deltaseek.files import replaced_atomically, write_text_atomically


def test_a_write_replaces_the_file_and_leaves_no_staging_file(tmp_path):
    path = tmp_path / "out" / "state.json"
    write_text_atomically(path, "{}")
    write_text_atomically(path, '{"a": 1}')
    assert path.read_text(encoding="utf-8") == '{"a": 1}'
    assert [p.name for p in path.parent.iterdir()] == ["state.json"]


def test_a_writer_that_fails_leaves_the_old_file_as_it_was(tmp_path):
    path = tmp_path / "state.json"
    path.write_text("old", encoding="utf-8")
    with pytest.raises(RuntimeError), replaced_atomically(path) as staging:
        staging.write_text("half", encoding="utf-8")
        raise RuntimeError("the writer failed")
    assert path.read_text(encoding="utf-8") == "old"
    assert [p.name for p in tmp_path.iterdir()] == ["state.json"]
