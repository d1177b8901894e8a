"""The field-guide world as a plug-in: `register()` makes its rule book, backends (encoder, judge, painter,
captioner, answer reader), demo builder (with its camera-trap card) and benchmark known to core by the name
"fieldguide", in one registration (core.plugins.registry.register). Only the composition root (app.py), tests and
benchmarks call it; core, ui, storage and cli never import this package."""
from __future__ import annotations

from core.contracts.world import World
from core.plugins import registry

NAME = "fieldguide"
BACKENDS = {
    "embedder": {NAME: "fieldguide.encoder:create_fieldguide_embedder"},
    "judge": {NAME: "fieldguide.judge:FieldGuideJudge.from_settings"},
    "generator": {NAME: "fieldguide.painter:FieldGuideGenerator.from_settings"},
    "captioner": {NAME: "fieldguide.captioner:FieldGuideCaptioner.from_settings"},
}
READER = "fieldguide.reader:FieldGuideReader.from_settings"


def _build_demo(folder, seed: int = 0, progress=None):
    from fieldguide.world import build_world

    return build_world(folder, seed=seed, progress=progress)


def _build_card(folder, seed: int = 0, progress=None):
    from fieldguide.camtrap_card import build_camtrap_demo

    return build_camtrap_demo(folder, seed=seed, progress=progress)


def _load_benchmark(data, limit=None):
    from fieldguide.eval_benchmark import load_fieldguide

    return load_fieldguide(data, limit)


# a catalog larger than this is never the world (480 photos by default): no taxon count is needed to say so
MOST_WORLD_PHOTOS = 20_000


def recognises(catalog, demo_folder: str) -> bool:
    """The catalog holds nothing but the world's photos: all of them in the demo folder, or (the world drawn
    elsewhere and ingested from its CSV) every photo catalogued as one of the world's species."""
    if catalog.count_outside(demo_folder) == 0:
        return True
    total = catalog.count()
    if total > MOST_WORLD_PHOTOS:
        return False
    from fieldguide.species import SPECIES

    names = {sp.scientific_name.lower() for sp in SPECIES}
    of_world = sum(n for name, rank, n in catalog.taxon_names()
                   if rank == "species" and name.lower() in names)
    return of_world == total


def register() -> World:
    """Register the world (idempotent) and return it."""
    known = registry.get_world(NAME)
    if known is not None:
        return known
    from fieldguide.eval_benchmark import METRICS
    from fieldguide.rules import FieldGuideRules

    return registry.register(World(
        name=NAME, title="field-guide", rule_book=FieldGuideRules(),  # its photos' source: NAME
        backends=dict(BACKENDS), runs_model=True, judge_reads_embedder=True,  # its judge reads its encoder's heads
        reader=READER, build_demo=_build_demo, demo_folder=NAME, recognises=recognises, build_card=_build_card,
        benchmark=_load_benchmark, benchmark_metrics=tuple(METRICS), benchmark_own_catalog=True))
