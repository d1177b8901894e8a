"""The retrieval methods (VisRet, structured rerank, PlugIR dialogue, Pareto coverage, answer with evidence,
relevance feedback) as stages of one search pipeline. How each follows its paper, and where it does not:
docs/methods.md.

Entry points: core.search.engine.SearchEngine (runs every stage here), plugir.DialogueSession."""
