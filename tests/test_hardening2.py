"""Issue 24, hardening 2: a cache that cannot hold another file's content, LM faults named as
what they are, questions of invisible characters, JSON errors said once, small labeled sets.

One test (or a few) per numbered item of the issue; the weak tests of item 5 were made strong
where they stand. The model is a real OpenAI-compatible server on 127.0.0.1
(tests/fake_openai.py), rate-limiting the calls a test chooses; processes are real where a
test says so.
"""

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

import deltaseek.programs.index as index_module
from deltaseek.programs.index import CorpusIndex, cache_dir, corpus_fingerprint
from tests.fake_openai import FakeOpenAIServer
from tests.test_cli import STUCK_REPLY


# --- 1. the index cache holds what was indexed -------------------------------------------------

OLD = '{"id": "veltria", "title": "Veltria", "text": "Veltria is a small country. Its capital is Arlenton."}\n'
NEW = '{"id": "veltria", "title": "Veltria", "text": "Veltria is a small country. Its capital is Brisford."}\n'


def capital(index: CorpusIndex) -> str:
    [hit] = index.search("capital of Veltria", k=1)
    return hit.passage.text.rsplit(" ", 1)[1].rstrip(".")


def test_a_corpus_replaced_between_the_lookup_and_the_parse_is_keyed_by_what_was_parsed(tmp_path, monkeypatch):
    corpus = tmp_path / "veltria.jsonl"
    corpus.write_text(OLD)
    read_corpus = index_module.read_corpus

    def replaced_before_the_parse(*args, **kwargs):  # an editor's save lands between the two reads
        corpus.write_text(NEW)
        return read_corpus(*args, **kwargs)

    monkeypatch.setattr(index_module, "read_corpus", replaced_before_the_parse)
    built = CorpusIndex.open([corpus])
    monkeypatch.setattr(index_module, "read_corpus", read_corpus)
    assert capital(built) == "Brisford"
    assert built.fingerprint == corpus_fingerprint([corpus])  # keyed by the content it holds

    corpus.write_text(OLD)
    assert capital(CorpusIndex.open([corpus])) == "Arlenton"  # never the replaced file's passages
    corpus.write_text(NEW)
    reopened = CorpusIndex.open([corpus])
    assert capital(reopened) == "Brisford" and reopened.build_seconds == 0.0  # its own cache, loaded


def test_a_cache_folder_that_holds_another_corpus_is_rebuilt_not_trusted(tmp_path):
    """What the old code could leave behind: the new passages under the old content's key."""
    corpus = tmp_path / "veltria-poisoned.jsonl"
    corpus.write_text(NEW)
    new = CorpusIndex.open([corpus])
    corpus.write_text(OLD)
    old_key = corpus_fingerprint([corpus])
    shutil.copytree(cache_dir() / "index" / new.fingerprint, cache_dir() / "index" / old_key)
    index = CorpusIndex.open([corpus])
    assert capital(index) == "Arlenton" and index.build_seconds > 0


def test_ask_in_a_new_process_answers_from_the_corpus_as_it_is_now(tmp_path):
    """`deltaseek index`, then the file rewritten in place with the same size, modification time
    and inode: only its content tells it apart. `ask` answers from the new content, from an index
    built for it; the old content's index is still there, and answers for it again."""
    corpus = tmp_path / "veltria-process.jsonl"
    corpus.write_text(OLD)
    deltaseek = Path(sys.executable).parent / "deltaseek"
    subprocess.run([deltaseek, "index", corpus], check=True, capture_output=True, timeout=300)
    old_key = corpus_fingerprint([corpus])
    before = os.stat(corpus)
    with corpus.open("r+") as handle:  # in place: the inode stays
        handle.write(NEW)
    os.utime(corpus, ns=(before.st_atime_ns, before.st_mtime_ns))
    after = os.stat(corpus)
    assert (after.st_size, after.st_mtime_ns, after.st_ino) == (before.st_size, before.st_mtime_ns, before.st_ino)

    def ask() -> dict:
        with FakeOpenAIServer(STUCK_REPLY) as server:
            done = subprocess.run([deltaseek, "ask", "What is the capital of Veltria?", "--corpus", corpus, "--json",
                                   "--lm", "openai/stuck", "--api-base", server.url],
                                  capture_output=True, text=True, timeout=300,
                                  env={**os.environ, "OPENAI_API_KEY": "not-needed"})
        assert done.returncode == 0, done.stderr
        return json.loads(done.stdout)

    record = ask()
    facts = " ".join(f["text"] for f in record["trajectory"]["facts"])
    assert "Brisford" in record["answer"] and "Arlenton" not in facts
    rebuilt = cache_dir() / "index" / corpus_fingerprint([corpus])
    assert "Brisford" in (rebuilt / "passages.json").read_text()
    assert "Arlenton" in (cache_dir() / "index" / old_key / "passages.json").read_text()

    with corpus.open("r+") as handle:
        handle.write(OLD)
    os.utime(corpus, ns=(before.st_atime_ns, before.st_mtime_ns))
    assert "Arlenton" in ask()["answer"]
