import os

if os.environ.get("PYTEST_XDIST_WORKER"):
    # Two workers on two cores: each computes on one thread (llama.cpp, torch, and the servers and
    # processes a test starts, which inherit this), for two threads each would wait on each other at
    # every barrier of llama.cpp's OpenMP loops. A user's own setting stands.
    os.environ.setdefault("DELTASEEK_THREADS", "1")
    os.environ.setdefault("OMP_NUM_THREADS", "1")

import dspy
import pytest

from deltaseek.programs.index import CorpusIndex

# Tests never read answers cached on disk by earlier runs (or write into the user's cache).
dspy.configure_cache(enable_disk_cache=False)

LONGEST_FILES = ("test_pass_through.py", "test_learned_reader.py", "test_reader_adapter.py", "test_interrupts.py",
                 "test_mlflow_server.py", "test_notebooks.py", "test_mlflow_models.py", "test_end_to_end.py")
"""The files whose tests took longest on 2 cores (`--durations`, 2026-12-01: 75 to 300 s each), longest
first. The two workers (`-n 2 --dist loadfile`) are handed whole files in the order collected, so these
start first and the many short files fill in beside them: the workers end together, not one idle
while the other runs a long file last."""


def pytest_collection_modifyitems(config, items):
    """Collect the longest files first (`LONGEST_FILES`), the rest in their own order."""
    def rank(item) -> int:
        name = item.path.name
        return LONGEST_FILES.index(name) if name in LONGEST_FILES else len(LONGEST_FILES)
    items.sort(key=rank)  # stable: each file's tests keep their order


@pytest.fixture(autouse=True)
def isolated_cache(tmp_path_factory, monkeypatch):
    """Indexes and search caches go to a folder of this test session, never the user's."""
    monkeypatch.setenv("DELTASEEK_CACHE", str(tmp_path_factory.getbasetemp() / "deltaseek-cache"))
    monkeypatch.delenv("DELTASEEK_LM", raising=False)
    monkeypatch.delenv("DELTASEEK_API_BASE", raising=False)


@pytest.fixture(scope="session")
def bundled_index(tmp_path_factory):
    import os

    os.environ.setdefault("DELTASEEK_CACHE", str(tmp_path_factory.getbasetemp() / "deltaseek-cache"))
    return CorpusIndex.open()


@pytest.fixture
def replies_not_cached():
    """A test whose replies come from the model now and stay out of DSPy's memory cache, where a
    later test of the same question would find them and count no LM call."""
    dspy.configure_cache(enable_disk_cache=False, enable_memory_cache=False)
    yield
    dspy.configure_cache(enable_disk_cache=False)


@pytest.fixture
def use_lm():
    """Run a test with a given LM under the JSON adapter, restoring DSPy's settings after."""
    def configure(lm):
        return dspy.context(lm=lm, adapter=dspy.JSONAdapter())
    return configure


@pytest.fixture(autouse=True)
def fresh_schema_probes(isolated_cache):
    """Each test probes its own servers: a port reused by another fake server is another server
    (so neither the process nor the disk remembers an earlier test's)."""
    import shutil

    from deltaseek.programs.lm import schema_dialect
    from deltaseek.programs.lm.model_memory import model_memory_dir

    schema_dialect.cache_clear()
    shutil.rmtree(model_memory_dir(), ignore_errors=True)


@pytest.fixture(scope="session")
def llama_server(tmp_path_factory):
    """One llama-cpp-python server (`llama_cpp.server`) with the bundled GGUF on a free loopback port
    for the whole test session; its URL. Stopped at the end."""
    from tests.llama_server import LlamaServer

    with LlamaServer(tmp_path_factory.mktemp("llama-server")) as server:
        yield server.url


@pytest.fixture
def restored_dspy():
    """The CLI configures DSPy's global LM; put back what was there."""
    saved = {k: dspy.settings.get(k) for k in ("lm", "adapter")}
    yield
    dspy.configure(**saved)
