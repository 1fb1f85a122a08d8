"""The package's shape: one import package, doors that open one way, no import cycles,
and a wheel that installs and answers from any folder."""

from __future__ import annotations

import ast
import graphlib
import json
import os
import shutil
import subprocess
import sys
import tomllib
import venv
import zipfile
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
LAYERS = [
    ("deltaseek.errors", "deltaseek.bundled", "deltaseek.files", "deltaseek.terminal"),
    ("deltaseek.signatures",),
    ("deltaseek.metrics",),
    ("deltaseek.programs",),
    ("deltaseek.optimize",),
    ("deltaseek.cli", "deltaseek.cli_parser"),
    ("deltaseek",),
]
"""Lowest first: a module may import its own layer or one below, never one above."""


def package_modules() -> dict[str, Path]:
    """Every module of the installed package, named as Python imports it, from pyproject's package-dir."""
    config = tomllib.loads((ROOT / "pyproject.toml").read_text())["tool"]["setuptools"]
    folders = config["package-dir"]
    modules = {}
    for package in config["packages"]:
        top = max((p for p in folders if package == p or package.startswith(p + ".")), key=len)
        folder = ROOT / folders[top] / Path(*package[len(top):].strip(".").split(".") if package != top else ())
        for path in folder.glob("*.py"):
            name = package if path.stem == "__init__" else f"{package}.{path.stem}"
            modules[name] = path
    return modules


def imports_of(name: str, path: Path, modules: dict[str, Path]) -> set[str]:
    """The package modules `name` imports anywhere in its file, inside functions included."""
    package = name if path.stem == "__init__" else name.rpartition(".")[0]
    found = set()
    for node in ast.walk(ast.parse(path.read_text(), str(path))):
        if isinstance(node, ast.Import):
            found.update(alias.name for alias in node.names)
        elif isinstance(node, ast.ImportFrom):
            base = node.module or ""
            if node.level:
                base = ".".join(package.split(".")[: len(package.split(".")) - node.level + 1] + ([base] if base else []))
            for alias in node.names:  # `from pkg import submodule` imports the submodule
                found.add(f"{base}.{alias.name}" if f"{base}.{alias.name}" in modules else base)
    return {m for m in found if m in modules and m != name}


def import_graph() -> dict[str, set[str]]:
    modules = package_modules()
    return {name: imports_of(name, path, modules) for name, path in modules.items()}


def layer_of(module: str) -> int:
    ranks = [(len(prefix), rank) for rank, prefixes in enumerate(LAYERS) for prefix in prefixes
             if module == prefix or module.startswith(prefix + ".")]
    return max(ranks)[1]


def import_cycle(graph: dict[str, set[str]]) -> list[str] | None:
    """One import cycle of the graph (its modules, the first repeated at the end), or None."""
    try:
        graphlib.TopologicalSorter(graph).prepare()
    except graphlib.CycleError as exc:
        return exc.args[1]
    return None


def probe_package(folder: Path, files: dict[str, str]) -> dict[str, Path]:
    """A throwaway package `probe` of these module sources, as `package_modules` names them."""
    modules = {}
    for name, source in files.items():
        path = folder / "probe" / f"{name.rpartition('.')[2] or '__init__'}.py"
        path.parent.mkdir(exist_ok=True)
        path.write_text(source)
        modules[name] = path
    return modules


def test_the_graph_sees_every_room_and_imports_inside_functions(tmp_path):
    graph = import_graph()
    assert {"deltaseek.cli", "deltaseek.signatures.agent", "deltaseek.metrics.combined",
            "deltaseek.programs.agent.deltaseek", "deltaseek.programs.tools.wikipedia",
            "deltaseek.programs.lm.llamacpp", "deltaseek.optimize.evaluate"} <= set(graph)
    # a probe through the walker itself: an import inside a function, or a relative one, is an edge like any other
    modules = probe_package(tmp_path, {
        "probe.a": "def f():\n    from probe.b import g\n    return g\n",
        "probe.b": "def g():\n    from . import c\n",
        "probe.c": "import json\n",
    })
    assert {name: imports_of(name, path, modules) for name, path in modules.items()} == \
        {"probe.a": {"probe.b"}, "probe.b": {"probe.c"}, "probe.c": set()}


def test_no_import_cycles_between_modules():
    cycle = import_cycle(import_graph())
    assert cycle is None, "import cycle: " + " -> ".join(cycle or [])


def test_doors_open_one_way():
    upward = [f"{a} imports {b}" for a, targets in import_graph().items() for b in targets
              if layer_of(b) > layer_of(a)]
    assert not upward, "\n".join(upward)


def test_only_the_cli_and_the_public_api_import_optimize():
    importers = {a for a, targets in import_graph().items() for b in targets
                 if b.startswith("deltaseek.optimize") and not a.startswith("deltaseek.optimize")}
    assert importers <= {"deltaseek.cli", "deltaseek.cli_parser", "deltaseek"}


def test_the_cycle_check_fails_on_a_cycle(tmp_path):
    """The check the package runs, on files whose only import back hides inside a function."""
    modules = probe_package(tmp_path, {
        "probe.a": "from probe.b import g\n",
        "probe.b": "def g():\n    from probe.c import h\n",
        "probe.c": "def h():\n    import probe.a\n",
    })
    cycle = import_cycle({name: imports_of(name, path, modules) for name, path in modules.items()})
    assert cycle is not None and set(cycle) == {"probe.a", "probe.b", "probe.c"}


def test_datasets_is_data_only():
    assert not list((ROOT / "datasets").rglob("*.py")), "datasets/ must never become a package"


def test_every_labeled_set_shipped_is_a_name_the_commands_take():
    from deltaseek.optimize.command_options import BUNDLED_SETS, SPEED_SETS

    assert sorted(BUNDLED_SETS) == sorted(path.stem for path in (ROOT / "datasets").glob("*.jsonl"))
    assert set(SPEED_SETS) <= set(BUNDLED_SETS)


@pytest.fixture(scope="session")
def wheel(tmp_path_factory) -> Path:
    """Built from a copy of the checkout: setuptools writes build/ and the egg-info into the tree it
    builds, and a test running beside this one (the notebooks') checks that the checkout is untouched."""
    source = tmp_path_factory.mktemp("wheel-source") / "deltaseek"
    shutil.copytree(ROOT, source, ignore=shutil.ignore_patterns(".git", ".venv", "build", "*.egg-info", "results",
                                                                "mlruns", "mlflow.db*", "__pycache__", ".pytest_cache"))
    out = tmp_path_factory.mktemp("wheel")
    subprocess.run([sys.executable, "-m", "pip", "wheel", "--no-deps", "--no-build-isolation", "--quiet",
                    "-w", str(out), str(source)], check=True, cwd=out)
    return next(out.glob("deltaseek-*.whl"))


def test_the_wheel_installs_only_the_deltaseek_package(wheel):
    names = zipfile.ZipFile(wheel).namelist()
    tops = {name.split("/")[0] for name in names}
    assert tops == {"deltaseek", f"{wheel.name.split('-')[0]}-{wheel.name.split('-')[1]}.dist-info"}
    for data in ("deltaseek/datasets/corpus/seed_corpus.jsonl", "deltaseek/datasets/corpus/musique_corpus.jsonl",
                 "deltaseek/datasets/seed_set.jsonl", "deltaseek/datasets/musique.jsonl"):
        assert data in names


@pytest.mark.embedded
def test_the_wheel_answers_from_an_empty_folder(wheel, tmp_path):
    """A regular (not editable) install in a fresh venv, run from a folder with nothing in it.
    Its dependencies come from this test environment's site-packages through a .pth line
    (installing them again would compile llama.cpp); the package itself only from the wheel."""
    env_dir = tmp_path / "venv"
    venv.create(env_dir, with_pip=True)
    python = env_dir / "bin" / "python"
    subprocess.run([str(python), "-m", "pip", "install", "--no-deps", "--no-index", "--quiet", str(wheel)], check=True)
    site = Path(subprocess.run([str(python), "-c", "import sysconfig; print(sysconfig.get_path('purelib'))"],
                               capture_output=True, text=True, check=True).stdout.strip())
    ours = [p for p in sys.path if p.endswith("site-packages")]
    (site / "zz_test_dependencies.pth").write_text("\n".join(ours) + "\n")
    empty = tmp_path / "empty"
    empty.mkdir()
    env = {k: v for k, v in os.environ.items() if k not in ("PYTHONPATH",)}

    where = subprocess.run([str(python), "-c", "import deltaseek, deltaseek.bundled as b; from deltaseek import "
                            "DeltaSeek; print(deltaseek.__file__); print(b.corpus_path('seed'))"],
                           cwd=empty, env=env, capture_output=True, text=True)
    assert where.returncode == 0, where.stderr
    package_file, corpus = where.stdout.split()
    assert Path(package_file).is_relative_to(site) and Path(corpus).is_relative_to(site)

    asked = subprocess.run([str(env_dir / "bin" / "deltaseek"), "ask", "Who created Ruby?", "--json"],
                           cwd=empty, env=env, capture_output=True, text=True, timeout=600)
    assert asked.returncode == 0, asked.stderr
    record = json.loads(asked.stdout)
    assert record["answer"].strip() and record["tool_calls"][0]["executed"]
    assert record["sources"], "the bundled corpus was searched and cited"
    assert not list(empty.iterdir()) or all(p.name in ("mlflow.db", "mlruns") for p in empty.iterdir())


def test_nothing_imports_a_room_by_its_folder_name():
    """From the repository root `import optimize` would load the folder a second time, as another module."""
    rooms = {"programs", "signatures", "metrics", "optimize"}
    offenders = []
    for path in [*package_modules().values(), *(ROOT / "tests").glob("*.py")]:
        for node in ast.walk(ast.parse(path.read_text())):
            names = ([a.name for a in node.names] if isinstance(node, ast.Import)
                     else [node.module or ""] if isinstance(node, ast.ImportFrom) and not node.level else [])
            offenders += [f"{path.name}: {n}" for n in names if n.split(".")[0] in rooms]
    assert not offenders, offenders


def third_party_imports(modules: dict[str, Path]) -> dict[str, str]:
    """Each top-level name the package imports that is neither the standard library nor deltaseek,
    with a module that imports it (imports inside functions included)."""
    found = {}
    for name, path in sorted(modules.items()):
        for node in ast.walk(ast.parse(path.read_text(), str(path))):
            if isinstance(node, ast.Import):
                tops = [alias.name.split(".")[0] for alias in node.names]
            elif isinstance(node, ast.ImportFrom) and not node.level and node.module:
                tops = [node.module.split(".")[0]]
            else:
                continue
            for top in tops:
                if top not in sys.stdlib_module_names and top != "deltaseek":
                    found.setdefault(top, name)
    return found


def test_every_third_party_import_of_the_package_is_a_declared_dependency():
    """An undeclared import works here because something else installed it, and breaks a user's
    install when that something drops it."""
    from importlib.metadata import packages_distributions

    from packaging.requirements import Requirement
    from packaging.utils import canonicalize_name

    project = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]
    declared = {canonicalize_name(Requirement(line).name) for line in project["dependencies"]}
    training = {canonicalize_name(Requirement(line).name) for line in project["optional-dependencies"]["train"]}
    distributions = packages_distributions()
    imported = third_party_imports(package_modules())
    assert {"dspy", "mlflow", "numpy"} <= set(imported)  # the walk sees the package's imports
    names = {top: {canonicalize_name(d) for d in distributions.get(top, [top])} for top in imported}
    undeclared = {top: where for top, where in imported.items() if not names[top] & (declared | training)}
    assert undeclared == {}, f"imported by the package but not declared in pyproject's dependencies: {undeclared}"
    # the train extra's packages only where the reader adapter is fine-tuned: asking never needs them
    extra_only = {top: where for top, where in imported.items() if names[top] & training and not names[top] & declared}
    assert extra_only and all(w.startswith("deltaseek.optimize.train_adapter") for w in extra_only.values()), extra_only


def test_the_python_snippets_work_outside_the_repository(tmp_path):
    """datasets/README.md's loading snippet and the README's program (less the model), run from an
    empty folder: imports and bundled data resolve through the package, not the working folder."""
    readme = (Path(__file__).parents[1] / "datasets" / "README.md").read_text()
    snippet = readme.split("### Loading")[1].split("```python")[1].split("```")[0]
    runnable = "\n".join(line for line in snippet.splitlines() if "mine.csv" not in line and "hf:" not in line)
    script = runnable + ("\nassert len(labeled.examples) == 50 and parts['test']\n"
                         "from deltaseek import DeltaSeek\n"
                         "print(DeltaSeek().tools['search_corpus'].search('creator of Ruby').hits[0].title)\n")
    done = subprocess.run([sys.executable, "-c", script], cwd=tmp_path, capture_output=True, text=True, timeout=120,
                          env={**os.environ, "DELTASEEK_CACHE": str(tmp_path / "cache")})
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip()
