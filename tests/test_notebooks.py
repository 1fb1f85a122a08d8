"""Every notebook runs top to bottom on the embedded model, so none of them rots.

Each runs in a kernel of its own started in the test's tmp folder, with every
cache it could write to (deltaseek's, DSPy's, Hugging Face's, matplotlib's, IPython's, any
other under $HOME, and $TMPDIR) sent to that folder too: a notebook writes only into a temporary
folder of its own, never where it was started, into the repository or into the user's home.
"""

import subprocess
import time
from pathlib import Path

import nbformat
import pytest

REPO = Path(__file__).resolve().parent.parent
NOTEBOOKS = sorted((REPO / "notebooks").glob("*.ipynb"))


def repository_changes() -> set[str]:
    """The checkout's changed, untracked and ignored files (git status; bytecode aside), or nothing
    outside a git checkout."""
    if not (REPO / ".git").exists():
        return set()
    out = subprocess.run(["git", "-C", str(REPO), "status", "--porcelain", "--ignored"],
                         capture_output=True, text=True, check=True).stdout
    return {line for line in out.splitlines() if "__pycache__" not in line}


def test_there_are_the_three_notebooks():
    assert {p.name for p in NOTEBOOKS} >= {"quickstart.ipynb", "optimize_and_track.ipynb",
                                           "bring_your_own_dataset.ipynb"}


@pytest.mark.parametrize("path", NOTEBOOKS, ids=lambda p: p.name)
def test_the_notebook_is_committed_without_outputs(path):
    notebook = nbformat.read(path, as_version=4)
    nbformat.validate(notebook)
    code = [cell for cell in notebook.cells if cell.cell_type == "code"]
    assert code
    assert [i for i, cell in enumerate(code) if cell.outputs or cell.execution_count is not None] == []


@pytest.mark.embedded
@pytest.mark.parametrize("path", NOTEBOOKS, ids=lambda p: p.name)
def test_the_notebook_runs_top_to_bottom(path, tmp_path, monkeypatch):
    from nbclient import NotebookClient

    home = tmp_path / "home"
    home.mkdir()
    work = tmp_path / "work"
    work.mkdir()
    scratch = tmp_path / "tmp"  # where tempfile.mkdtemp puts the notebook's own folder
    scratch.mkdir()
    monkeypatch.setenv("TMPDIR", str(scratch))
    # The kernel inherits this environment (conftest already points DELTASEEK_CACHE at this session's folder).
    for name, folder in {"HOME": home, "XDG_CACHE_HOME": home / ".cache", "DSPY_CACHEDIR": home / "dspy",
                         "HF_HOME": home / "huggingface", "MPLCONFIGDIR": home / "matplotlib",
                         "IPYTHONDIR": home / "ipython"}.items():
        monkeypatch.setenv(name, str(folder))
    for name in ("MLFLOW_TRACKING_URI", "DELTASEEK_ONLINE"):
        monkeypatch.delenv(name, raising=False)
    before = repository_changes()

    notebook = nbformat.read(path, as_version=4)
    started = time.perf_counter()
    NotebookClient(notebook, timeout=900, kernel_name="python3", resources={"metadata": {"path": str(work)}}).execute()
    print(f"{path.name}: ran in {time.perf_counter() - started:.0f} s")

    errors = [o for cell in notebook.cells for o in cell.get("outputs", []) if o.get("output_type") == "error"]
    assert not errors
    code = [cell for cell in notebook.cells if cell.cell_type == "code"]
    assert all(cell.execution_count for cell in code)
    assert any(cell.outputs for cell in code)
    assert repository_changes() == before
    # What a notebook writes goes to a temporary folder of its own, never where it was started.
    assert not any(work.iterdir())
    assert any(scratch.rglob("*.jsonl")) or path.name == "quickstart.ipynb"
