"""Every name the README and docs/ write as code exists: a doc that names a function, an option or
a file that is not there sends its reader looking for nothing.

What counts as a name, in backticks outside code blocks: a call (`run_question(...)`), a dotted
name (`deltaseek.optimize.paired`, `AgentSettings.profile`), a command-line option (`--tune-only`,
also every option of a `deltaseek` command inside a code block), a repository path
(`programs/agent/checks.py`), and a bare identifier that is visibly code (`block_duplicate_call`,
`GrammarJSONAdapter`). Each must resolve to an importable module or attribute, a name the
package's source defines or uses (docstrings and comments do not count), an option of
`deltaseek.cli.build_parser()` (every subcommand), or a file of the repository. Relative links
must reach a file too. `from deltaseek import X` in a Python block must import.

Offline and fast: the package's source is parsed, not run; only dotted names are imported.
"""

from __future__ import annotations

import argparse
import ast
import importlib
import re
from functools import cache
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parent.parent
DOCS = [REPO / "README.md", *sorted((REPO / "docs").rglob("*.md"))]
PACKAGE_ROOTS = ("deltaseek", "signatures", "metrics", "programs", "optimize")
SUBCOMMANDS = {"deltaseek", "ask", "index", "evaluate", "optimize", "bench"}
FILE_EXTENSIONS = {"json", "jsonl", "py", "md", "csv", "gguf", "txt", "ipynb", "db", "toml", "ini", "parquet",
                   "yaml", "yml", "cfg", "conf", "log", "sh", "pid"}
# Folders and files a command writes, which a fresh checkout does not hold.
GENERATED = ("results/", "mlruns/", "build/", "mlflow.db", "programs/compiled/shipped.json")
# Names of other programs that the docs cite as code: Sphinx and Manticore configuration keys and
# ranking functions, pip's and MLflow's arguments, an OpenAI request field.
FOREIGN_NAMES = {"rt_field", "rt_attr_string", "data_dir", "editable_mode", "filter_string", "max_completion_tokens",
                 "bm25f", "bm25a"}

INLINE_CODE = re.compile(r"`([^`\n]+)`")
LINK = re.compile(r"\]\(([^)\s]+)\)")
FLAG = re.compile(r"(?<![\w-])(--[a-z][a-z0-9-]*)")
IDENTIFIER = r"[A-Za-z_][A-Za-z0-9_]*"
DOTTED = re.compile(rf"{IDENTIFIER}(?:\.{IDENTIFIER})+")
CALL = re.compile(rf"({IDENTIFIER}(?:\.{IDENTIFIER})*)\(")
CODE_LOOKING = re.compile(r"[a-z0-9]+_[a-z0-9_]+|[A-Z][A-Z0-9]*_[A-Z0-9_]+|[A-Z][a-z0-9]+[A-Z][A-Za-z0-9]*")
FROM_DELTASEEK = re.compile(r"^from (deltaseek(?:\.[\w.]+)?) import \(?([\w, ]+)")


def package_files() -> list[Path]:
    return [p for root in PACKAGE_ROOTS for p in sorted((REPO / root).rglob("*.py"))]


def docstring_nodes(tree: ast.AST) -> set[int]:
    """The ids of the string constants that are docstrings (a module's, class's or function's)."""
    found = set()
    for node in ast.walk(tree):
        if isinstance(node, (ast.Module, ast.ClassDef, ast.FunctionDef, ast.AsyncFunctionDef)):
            body = node.body
            if body and isinstance(body[0], ast.Expr) and isinstance(body[0].value, ast.Constant):
                found.add(id(body[0].value))
        # an attribute docstring: a string right after an assignment in a class body
        if isinstance(node, ast.ClassDef):
            for before, after in zip(node.body, node.body[1:]):
                if isinstance(before, (ast.Assign, ast.AnnAssign)) and isinstance(after, ast.Expr) \
                        and isinstance(after.value, ast.Constant):
                    found.add(id(after.value))
    return found


def defined_names(tree: ast.AST) -> set[str]:
    """What a module or class body defines: functions, classes, assigned and annotated names, attributes."""
    names = set()
    for node in ast.walk(tree):
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
            names.add(node.name)
        elif isinstance(node, ast.Name) and isinstance(node.ctx, ast.Store):
            names.add(node.id)
        elif isinstance(node, ast.Attribute) and isinstance(node.ctx, ast.Store):
            names.add(node.attr)
    return names


@cache
def package_source() -> tuple[set[str], dict[str, set[str]], dict[str, set[str]], set[str]]:
    """(every identifier the code uses, including words of its non-docstring strings;
    the names each module stem defines; the names each class defines; its string constants)."""
    used: set[str] = set()
    strings: set[str] = set()
    modules: dict[str, set[str]] = {}
    classes: dict[str, set[str]] = {}
    for path in package_files():
        tree = ast.parse(path.read_text(encoding="utf-8"))
        docstrings = docstring_nodes(tree)
        for node in ast.walk(tree):
            if isinstance(node, ast.Name):
                used.add(node.id)
            elif isinstance(node, ast.Attribute):
                used.add(node.attr)
            elif isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
                used.add(node.name)
            elif isinstance(node, ast.arg):
                used.add(node.arg)
            elif isinstance(node, ast.keyword) and node.arg:
                used.add(node.arg)
            elif isinstance(node, ast.alias):
                used.update(node.name.split("."))
            elif isinstance(node, ast.Constant) and isinstance(node.value, str) and id(node) not in docstrings:
                used.update(re.findall(r"[A-Za-z_][A-Za-z0-9_]*", node.value))
                strings.add(node.value)
            if isinstance(node, ast.ClassDef):
                classes.setdefault(node.name, set()).update(defined_names(node))
        stem = path.stem if path.name != "__init__.py" else path.parent.name
        modules.setdefault(stem, set()).update(defined_names(tree))
        if path.name == "__init__.py":
            modules[stem].update(used & {p.stem for p in path.parent.glob("*.py")})
    return used | set(modules), modules, classes, strings


@cache
def settings_text() -> str:
    """Where environment variables are named: the package's source (docstrings included: a
    variable whose name is assembled in code is documented there), the notebooks and the tests."""
    files = [*package_files(), *(REPO / "notebooks").glob("*.ipynb"), *(REPO / "tests").glob("*.py")]
    return "\n".join(p.read_text(encoding="utf-8") for p in files)


@cache
def declared_markers() -> frozenset[str]:
    """The pytest markers pyproject.toml declares."""
    import tomllib

    config = tomllib.loads((REPO / "pyproject.toml").read_text(encoding="utf-8"))
    return frozenset(m.split(":")[0].strip() for m in config["tool"]["pytest"]["ini_options"]["markers"])


@cache
def cli_flags() -> frozenset[str]:
    from deltaseek.cli import build_parser

    flags, parsers = set(), [build_parser()]
    while parsers:
        parser = parsers.pop()
        for action in parser._actions:
            flags.update(o for o in action.option_strings if o.startswith("--"))
            if isinstance(action, argparse._SubParsersAction):
                parsers.extend(action.choices.values())
    return frozenset(flags)


def imports(dotted: str) -> bool:
    """The longest importable prefix of `dotted` (also under `deltaseek.`) holds the rest as attributes."""
    for candidate in (dotted, f"deltaseek.{dotted}"):
        parts = candidate.split(".")
        for cut in range(len(parts), 0, -1):
            try:
                obj = importlib.import_module(".".join(parts[:cut]))
            except ImportError:
                continue
            except Exception:  # a module that cannot be imported here counts as not found
                break
            for attr in parts[cut:]:
                fields = getattr(obj, "model_fields", {})  # a pydantic field is no class attribute
                if hasattr(obj, attr) or attr in fields:
                    obj = getattr(obj, attr, None)
                else:
                    break
            else:
                return True
            break
    return False


@cache
def program_attributes() -> frozenset[str]:
    """What a DeltaSeek program answers to (dspy.Module's own methods among them)."""
    from deltaseek import DeltaSeek

    return frozenset(dir(DeltaSeek))


def dotted_resolves(dotted: str) -> bool:
    if imports(dotted):
        return True
    used, modules, classes, strings = package_source()
    if dotted in strings:  # a name the code writes as text: an MLflow tag, a logger
        return True
    first, *_, last = dotted.split(".")
    if first in modules or first in classes:  # a module or class of the package: it must define the name
        return last in modules.get(first, set()) | classes.get(first, set())
    return last in used or last in program_attributes()  # `program.save`: a variable's attribute


def name_resolves(name: str) -> bool:
    if name in FOREIGN_NAMES:
        return True
    if name.startswith("DELTASEEK_") and re.search(rf"\b{name}\b", settings_text()):
        return True  # an environment variable
    if name in declared_markers():
        return True
    return name in package_source()[0] or imports(f"dspy.{name}")


def path_resolves(text: str, doc: Path) -> bool:
    text = text.rstrip("/")
    if any(text.startswith(g.rstrip("/")) for g in GENERATED):
        return True
    if any(ch in text for ch in "*?["):
        return any(REPO.glob(text))
    return (REPO / text).exists() or (doc.parent / text).exists()


def looks_like_path(text: str) -> bool:
    if " " in text or ":" in text or text.startswith(("~", "$", "/", "..", "-", ".")) or "/" not in text:
        return False
    return (REPO / text.split("/")[0]).exists()


def inline_problem(code: str, doc: Path) -> str | None:
    """Why a backticked span names nothing, or None."""
    code = code.strip()
    words = code.split()
    if code.startswith("--") or (words and words[0] in SUBCOMMANDS and FLAG.search(code)):
        missing = [f for f in FLAG.findall(code) if f not in cli_flags()]
        return f"no such command-line option: {', '.join(missing)}" if missing else None
    if looks_like_path(code):
        return None if path_resolves(code, doc) else "no such file or folder in the repository"
    if call := CALL.match(code):
        name = call.group(1)
        ok = dotted_resolves(name) if "." in name else name_resolves(name)
        return None if ok else f"no such function or class: {name}"
    if DOTTED.fullmatch(code) and code.rsplit(".", 1)[-1] not in FILE_EXTENSIONS:
        return None if dotted_resolves(code) else f"no such module or attribute: {code}"
    if assignment := re.fullmatch(rf"({IDENTIFIER})=\S+", code):
        code = assignment.group(1)
    if re.fullmatch(IDENTIFIER, code) and CODE_LOOKING.fullmatch(code):
        return None if name_resolves(code) else f"no such name in the package: {code}"
    return None


def fenced_problems(line: str, language: str) -> list[str]:
    """A `deltaseek` command's options; a Python block's `from deltaseek import` names."""
    problems = []
    command = line.split(" #")[0]
    if language in ("", "bash", "sh", "console") and re.search(r"(^|[\s/])deltaseek (ask|index|evaluate|optimize|"
                                                                r"bench)\b", command):
        problems += [f"no such command-line option: {f}" for f in FLAG.findall(command) if f not in cli_flags()]
    if language == "python" and (found := FROM_DELTASEEK.match(line.strip())):
        module = importlib.import_module(found.group(1))
        problems += [f"{found.group(1)} has no {name}" for name in re.findall(IDENTIFIER, found.group(2))
                     if not hasattr(module, name)]
    return problems


def unresolved(doc: Path) -> list[str]:
    found, fence = [], None
    for number, line in enumerate(doc.read_text(encoding="utf-8").splitlines(), 1):
        where = f"{doc.relative_to(REPO) if doc.is_relative_to(REPO) else doc}:{number}"
        if line.lstrip().startswith("```"):
            fence = None if fence is not None else line.strip()[3:].strip()
            continue
        if fence is not None:
            found += [f"{where}: {problem}" for problem in fenced_problems(line, fence)]
            continue
        for code in INLINE_CODE.findall(line):
            if problem := inline_problem(code, doc):
                found.append(f"{where}: `{code}`: {problem}")
        for link in LINK.findall(INLINE_CODE.sub("", line)):
            target, _, anchor = link.partition("#")
            if "://" in link or link.startswith("mailto:"):
                continue
            page = (doc.parent / target) if target else doc
            if not page.exists():
                found.append(f"{where}: link to {link}: no such file")
            elif anchor and page.suffix == ".md" and anchor not in heading_anchors(page):
                found.append(f"{where}: link to {link}: no such heading")
    return found


def heading_anchors(page: Path) -> set[str]:
    """The anchors GitHub gives a page's headings: lowercase, punctuation dropped, spaces as hyphens."""
    headings = re.findall(r"^#+\s+(.+)$", page.read_text(encoding="utf-8"), flags=re.MULTILINE)
    return {re.sub(r"[^\w\- ]", "", h.strip().lower()).replace(" ", "-") for h in headings}


def test_the_docs_are_found():
    assert REPO / "README.md" in DOCS and len(DOCS) > 5


@pytest.mark.parametrize("doc", DOCS, ids=lambda p: str(p.relative_to(REPO)))
def test_every_name_in_the_doc_exists(doc):
    problems = unresolved(doc)
    assert not problems, "names that resolve to nothing:\n" + "\n".join(problems)


def test_a_misspelled_name_is_caught(tmp_path):
    """The check can fail: a misspelled function, option, dotted name and path are each reported,
    and so is a name that only a docstring or comment mentions."""
    doc = tmp_path / "page.md"
    doc.write_text("Call `run_questoin(program, q)` with `--tune-onyl`; see `deltaseek.optimize.pairedd` "
                   "and `programs/agent/guardrail.py`, `settle_answerability`, `answer_fits_question`.\n"
                   "Fine: `run_question(program, q)`, `--tune-only`, `programs/agent/guardrails.py`, "
                   "`AgentSettings.profile`.\n")
    problems = [inline_problem(code, doc) for code in INLINE_CODE.findall(doc.read_text())]
    assert [p is not None for p in problems] == [True] * 6 + [False] * 4, problems


def test_a_broken_link_is_caught(tmp_path):
    doc = tmp_path / "page.md"
    doc.write_text("# Page\n\n## A lookup's cap\n\n[here](#a-lookups-cap), [gone](#no-such-part), [lost](lost.md)\n")
    assert [problem.split(": ", 1)[1] for problem in unresolved(doc)] == [
        "link to #no-such-part: no such heading", "link to lost.md: no such file"]


def test_the_experiment_tables_render_from_results_files(tmp_path, capsys):
    """docs/experiments/make_tables.py renders a record's tables from `evaluate --out` rows."""
    import importlib.util
    import json

    spec = importlib.util.spec_from_file_location("make_tables", REPO / "docs" / "experiments" / "make_tables.py")
    make_tables = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(make_tables)

    def row(qid, f1, abstained):
        return {"id": qid, "gold": {"answerability": "direct"}, "answer": "The passages do not say." if abstained
                else "x", "answerability": "unlikely" if abstained else "direct", "lm_calls": 1, "seconds": 2.0,
                "scores": {"combined": f1, "exact_match": f1, "token_f1": f1}}

    a, b = tmp_path / "a.jsonl", tmp_path / "b.jsonl"
    a.write_text("".join(json.dumps(row(i, 0.0, True)) + "\n" for i in range(4)))
    b.write_text("".join(json.dumps(row(i, 1.0, False)) + "\n" for i in range(4)))
    make_tables.main(["summary", str(a), str(b)])
    summary = capsys.readouterr().out.splitlines()
    assert summary[2].startswith("| a.jsonl | 4 | 0.000 |") and "| 1.000 |" in summary[2]  # false abstention 1
    assert summary[3].startswith("| b.jsonl | 4 | 1.000 |")
    make_tables.main(["paired", str(a), str(b)])
    assert "| combined | 4 | 0.000 | 1.000 | +1.000 |" in capsys.readouterr().out
