"""The bundled (or a given) JSONL corpus, searched with BM25 in process. Works offline."""

from __future__ import annotations

from deltaseek.programs.index import CorpusIndex
from deltaseek.programs.text import meaningful_tokens, misspelt_in_a_name, name_runs, named_entities
from deltaseek.programs.tools.base import Hit, SearchTool, ToolResult, ranked_result


class LocalCorpusSearch(SearchTool):
    """BM25 over the bundled (or a given) JSONL corpus. Works offline."""

    name = "search_corpus"
    description = "Search the local document collection (encyclopedia-style passages). Args: query (keywords)."

    skips_seen = True

    def __init__(self, index: CorpusIndex, k: int = 3):
        self.index = index
        self.k = k

    def names(self, term: str) -> bool | None:
        return self.index.mentions(term)

    def search(self, query: str, seen: frozenset[str] = frozenset()) -> ToolResult:
        scored = [s for s in self.index.search(query, k=self.k + len(seen)) if s.passage.id not in seen][: self.k]
        hits = [Hit(title=s.passage.title, text=s.passage.text, score=round(s.score, 3), id=s.passage.id,
                    url=s.passage.url) for s in scored]
        found = meaningful_tokens(" ".join(f"{h.title} {h.text}" for h in hits))
        runs = name_runs(query)
        missing_entities = [e for e in named_entities(query) if not self.index.mentions(e)
                            and not misspelt_in_a_name(e, runs, self.index.mentions, found)]
        return ranked_result(self.name, query, hits, list(set(self.index.unknown_terms(query))), missing_entities,
                             "corpus")
