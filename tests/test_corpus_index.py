"""The corpus index: passages checked at index time (file and line named), a cache that holds what
was indexed, and bounded memory, full disks and corpora with no searchable word."""

import json
import os
import resource
import shutil
import signal
import subprocess
import sys
from pathlib import Path

import pytest

import deltaseek.programs.index as index_module
from deltaseek import CorpusError, DatasetError
from deltaseek.optimize.labeled_data import load_labeled
from deltaseek.programs.corpus_files import MAX_LINE_BYTES
from deltaseek.programs.index import CorpusIndex, cache_dir, corpus_fingerprint
from tests.fake_openai import FakeOpenAIServer
from tests.test_cli import STUCK_REPLY
from tests.test_optimize import run_cli


@pytest.mark.parametrize("lines,problem", [
    (['{"text": "fine", "id": "a"}', '{"text": "Ruby.", "url": 123}'], ':2: field "url": expected text, got 123'),
    (['{"text": "fine"}', '{"title": "no text"}'], ':2: missing a non-empty "text" field'),
    (['{"text": "   "}'], ':1: missing a non-empty "text" field'),
    (['{"text": "fine", "title": ["a"]}'], ':1: field "title": expected text'),
    (['{"text": "one", "id": "x"}', '{"text": "two"}', '{"text": "three", "id": "x"}'],
     ":3: passage id 'x' repeats the id at "),
])
def test_a_bad_passage_is_rejected_at_index_time_with_file_and_line(capsys, tmp_path, lines, problem):
    corpus = tmp_path / "corpus.jsonl"
    corpus.write_text("\n".join(lines) + "\n")
    code, _, err = run_cli(capsys, "index", corpus)
    assert code == 2 and len(err.strip().splitlines()) == 1
    assert f"{corpus}{problem}" in err
    if "repeats" in problem:
        assert err.strip().endswith(f"{corpus}:1; ids must be unique (citations point at them)")


def test_duplicate_ids_across_two_corpus_files_are_rejected(tmp_path):
    first, second = tmp_path / "a.jsonl", tmp_path / "b.jsonl"
    first.write_text('{"text": "Ruby was created by Matz.", "id": "p1", "title": "Ruby"}\n')
    second.write_text('{"text": "Rails was created by DHH.", "id": "p1", "title": "Rails"}\n')
    with pytest.raises(CorpusError) as raised:
        CorpusIndex.open([first, second])
    assert f"{second}:1: passage id 'p1' repeats the id at {first}:1" in str(raised.value)


def test_an_over_long_corpus_line_is_rejected_without_reading_it_whole(capsys, tmp_path):
    corpus = tmp_path / "corpus.jsonl"
    with corpus.open("w") as handle:
        handle.write('{"text": "fine"}\n')
        handle.write('{"text": "' + "x" * (MAX_LINE_BYTES + 10) + '"}\n')
        handle.write('{"text": "after"}\n')
    code, _, err = run_cli(capsys, "index", corpus)
    assert code == 2 and f"{corpus}:2: the line is {MAX_LINE_BYTES + 23:,} bytes long; at most" in err


def test_the_bundled_corpora_pass_validation(tmp_path, monkeypatch):
    monkeypatch.setenv("DELTASEEK_CACHE", str(tmp_path))
    index = CorpusIndex.open(rebuild=True)
    assert len({p.id for p in index.passages}) == len(index.passages) > 1000


def test_a_corpus_that_is_not_utf8_names_the_file_and_line(capsys, tmp_path):
    corpus = tmp_path / "latin1.jsonl"
    corpus.write_bytes(b'{"text": "fine"}\n{"text": "caf\xe9"}\n')
    code, _, err = run_cli(capsys, "index", corpus)
    assert code == 2 and f"{corpus}:2: not UTF-8 text (byte 0xe9 at column 14)" in err


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


@pytest.mark.parametrize("value,problem", [
    ('"tab\there"', "Invalid control character at column {}"),  # json's message ends in "at"
    ('"never closed}', "Unterminated string starting at column {}"),
])
def test_a_json_error_says_at_once(capsys, tmp_path, value, problem):
    corpus = tmp_path / "corpus.jsonl"
    corpus.write_text(f'{{"text": {value}}}')  # no line end: an open string would run into it
    code, _, err = run_cli(capsys, "index", corpus)
    column = 10 + value.find("\t") if "\t" in value else 10
    assert code == 2 and err.strip().endswith(f"{corpus}:1: not valid JSON ({problem.format(column)})")
    labeled = tmp_path / "labeled.jsonl"
    labeled.write_text(f'{{"question": {value}}}')
    with pytest.raises(DatasetError) as raised:
        load_labeled(labeled)
    assert str(raised.value).endswith(f"\n{labeled}:1: not valid JSON ({problem.format(column + 4)})")


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
