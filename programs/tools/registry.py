"""`--tools`: the tools a user names, built in the order given."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

from deltaseek.errors import ToolConfigError
from deltaseek.programs.index import CorpusIndex
from deltaseek.programs.tools.base import SearchTool
from deltaseek.programs.tools.cache import SearchCache
from deltaseek.programs.tools.corpus import LocalCorpusSearch
from deltaseek.programs.tools.files import LocalFilesSearch
from deltaseek.programs.tools.network import WebSettings
from deltaseek.programs.tools.sphinx import SphinxSearch, SphinxSettings, parse_target
from deltaseek.programs.tools.web_search import WebSearch
from deltaseek.programs.tools.wikipedia import WikipediaSearch

TOOL_CHOICES = "local, web, wikipedia or files:PATH; or sphinx:HOST:PORT/INDEX for a search cluster"


def parse_tool_spec(spec: list[str] | str | None) -> list[str]:
    """`["web,wikipedia", "files:src"]` → `["web", "wikipedia", "files:src"]`; nothing → `["local"]`.
    A tool named twice is an error: the user meant something else."""
    values = [spec] if isinstance(spec, str) else list(spec or [])
    items = [part.strip() for value in values for part in value.split(",") if part.strip()]
    if repeated := sorted({item for item in items if items.count(item) > 1}):
        raise ToolConfigError(f"--tools names {', '.join(repeated)} more than once")
    return items or ["local"]


def build_tools(spec: list[str] | str | None = "local", corpus_index_factory: Callable[[], CorpusIndex] = CorpusIndex.open,
                use_cache: bool = True, settings: WebSettings | None = None,
                sphinx_settings: SphinxSettings | None = None) -> list[SearchTool]:
    """The tools named by `--tools`, in the order given. Raises ToolConfigError, naming the value,
    for an unknown tool, a files: path that does not exist or a malformed sphinx target."""
    items = parse_tool_spec(spec)
    for item in items:
        kind, _, arg = item.partition(":")
        if kind == "sphinx":
            parse_target(item)
            continue
        if item not in ("local", "web", "wikipedia") and not (kind == "files" and arg.strip()):
            raise ToolConfigError(f"unknown --tools value {item!r}: choose {TOOL_CHOICES}")
        if kind == "files" and not Path(arg.strip()).expanduser().exists():
            raise ToolConfigError(f"--tools {item}: no such file or folder")

    settings = settings or WebSettings.from_env()
    cache = SearchCache(ttl=settings.cache_ttl) if use_cache and {"web", "wikipedia"} & set(items) else None
    tools: list[SearchTool] = []
    for item in items:
        if item == "local":
            tools.append(LocalCorpusSearch(corpus_index_factory()))
        elif item == "web":
            tools.append(WebSearch(settings=settings, cache=cache))
        elif item == "wikipedia":
            tools.append(WikipediaSearch(settings=settings, cache=cache))
        elif item.partition(":")[0] == "sphinx":
            sphinx_settings = sphinx_settings or SphinxSettings.from_env()
            tools.append(SphinxSearch(parse_target(item), settings=sphinx_settings))
        else:
            tools.append(LocalFilesSearch(item.partition(":")[2].strip()))
    names = [t.name for t in tools]
    if len(set(names)) < len(names):
        shared = sorted({n for n in names if names.count(n) > 1})
        kind = "sphinx:HOST:PORT/INDEX" if shared == ["search_sphinx"] else "files:PATH"
        raise ToolConfigError(f"--tools {','.join(items)}: give {kind} once (two tools would share the name "
                              f"{', '.join(shared)})")
    return tools
