"""The retrieval methods (VisRet, structured rerank, PlugIR dialogue, Pareto coverage, answer with evidence,
relevance feedback) as stages of one search pipeline. See docs: ../shared/docs/methods.md.

Entry points: core.search.engine.SearchEngine (runs every stage here), plugir.DialogueSession."""
