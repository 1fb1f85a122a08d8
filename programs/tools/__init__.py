"""Search tools, a file each, behind one small protocol (`SearchTool`): adding a tool is adding a file.

Every tool returns a `ToolResult` (status, hits, note); `feedback.format_observation` turns it
into what the LM reads; `registry.build_tools` builds the tools `--tools` names.
"""

from deltaseek.programs.tools.base import Hit, SearchTool, ToolResult, ToolStatus
from deltaseek.programs.tools.cache import SearchCache
from deltaseek.programs.tools.corpus import LocalCorpusSearch
from deltaseek.programs.tools.files import LocalFilesSearch
from deltaseek.programs.tools.network import WebSettings
from deltaseek.programs.tools.registry import build_tools, parse_tool_spec
from deltaseek.programs.tools.sphinx import SphinxSearch, SphinxSettings, SphinxTarget, parse_target
from deltaseek.programs.tools.sphinx_load import load_passages
from deltaseek.programs.tools.web_search import WebSearch
from deltaseek.programs.tools.wikipedia import WikipediaSearch

__all__ = [
    "Hit",
    "LocalCorpusSearch",
    "LocalFilesSearch",
    "SearchCache",
    "SearchTool",
    "SphinxSearch",
    "SphinxSettings",
    "SphinxTarget",
    "ToolResult",
    "ToolStatus",
    "WebSearch",
    "WebSettings",
    "WikipediaSearch",
    "build_tools",
    "load_passages",
    "parse_target",
    "parse_tool_spec",
]
