"""What the label view and the taxon box keep in real SQLite: undo deletes one label (the annotator's earlier
label of the photo counts again), instructions per query (migration 0003), and the catalog's taxon names with
their ranks, most photographed first."""
from __future__ import annotations

import pytest

from core.contracts.errors import NotFoundError
from core.contracts.records import Photo
from core.contracts.sessionlog import Label
from core.labels import latest
from storage.catalog import SqlCatalog
from storage.db import open_engine
from storage.sessionlog import SqlSessionLog


@pytest.fixture()
def engine(tmp_path):
    return open_engine(tmp_path / "ecolens.sqlite")


def test_undo_removes_one_label_and_the_earlier_one_counts_again(engine):
    log = SqlSessionLog(engine)
    sid = log.start_session("label", "moths (ada)")
    first = log.add_label(Label(session_id=sid, query="moths", photo_id=7, label=1, annotator="ada"))
    second = log.add_label(Label(session_id=sid, query="moths", photo_id=7, label=0, annotator="ada"))
    removed = log.remove_label(second)
    assert removed.id == second and removed.label == 0 and removed.photo_id == 7
    (kept,) = latest(log.labels(query="moths"))
    assert kept.id == first and kept.label == 1
    assert log.sessions()[0].labels == 1
    with pytest.raises(NotFoundError):
        log.remove_label(second)


def test_queries_are_stored_and_compared_normalised(engine):
    """A query typed with a decomposed accent or extra spaces is the same query for labels and instructions."""
    import unicodedata

    composed = unicodedata.normalize("NFC", "the heron of renée")
    typed = ["  the heron of ren\u0065\u0301e ", composed, "the\theron  of renée  "]
    log = SqlSessionLog(engine)
    sid = log.start_session("label", "herons")
    for i, t in enumerate(typed):
        log.add_label(Label(session_id=sid, query=t, photo_id=i + 1, label=1, annotator="ada"))
    assert [lb.query for lb in log.labels(query=typed[0])] == [composed] * 3
    log.set_instructions(typed[2], "adults only")
    assert log.instructions(typed[0]) == log.instructions(composed) == "adults only"


def test_instructions_per_query(engine):
    log = SqlSessionLog(engine)
    assert log.instructions("moths") == ""
    log.set_instructions("moths", "  relevant only if the hindwings show  ")
    log.set_instructions("frogs", "calling males only")
    log.set_instructions("moths", "relevant only if the red hindwings show")
    assert log.instructions("moths") == "relevant only if the red hindwings show"
    assert log.instructions("frogs") == "calling males only"
    log.set_instructions("frogs", "")
    assert log.instructions("frogs") == ""
    assert SqlSessionLog(engine).instructions("moths").startswith("relevant only")  # stored, not kept in memory


def test_taxon_names_with_ranks_most_photographed_first(engine):
    catalog = SqlCatalog(engine)
    photos = [Photo(path=f"/p/{i}.jpg", sha256=f"{i:064x}", scientific_name=name, common_name=common,
                    genus=name.split()[0], family="Hylidae")
              for i, (name, common) in enumerate([("Hyla arborea", "European tree frog")] * 3
                                                 + [("Hyla meridionalis", "Stripeless tree frog")])]
    catalog.add_photos(photos)
    names = catalog.taxon_names()
    assert names[:2] == [("Hyla", "genus", 4), ("Hylidae", "family", 4)]
    assert ("Hyla arborea", "species", 3) in names and ("Stripeless tree frog", "common name", 1) in names
    assert len(catalog.taxon_names(limit=3)) == 3
