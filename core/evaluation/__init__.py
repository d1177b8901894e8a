"""Evaluation harness: benchmark loaders, metrics with the benchmarks' definitions, TREC scoring,
significance tests, reports and an engine-independent evaluation loop (issue 6)."""
