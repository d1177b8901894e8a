"""Hybrid retrieval's pure parts (core.search.catalog_text, core.methods.rrf weights) with a fake catalog: which
words are searched, how the catalog's ranking is ordered and fused, and what each photo says matched."""
from __future__ import annotations

from types import SimpleNamespace

import numpy as np

from core.methods.rrf import rrf
from core.search import catalog_text


class _Catalog:
    """Per word, the photos whose own text holds it ({form: [(id, bm25, in names)]}) and the taxa whose names
    hold it ({form: [taxon id]}), the photos of each taxon ({taxon id: [photo ids]})."""

    def __init__(self, rows, taxa=None, photos=None):
        self.rows, self.taxa, self.photos, self.asked = rows, taxa or {}, photos or {}, []

    def text_matches(self, words, limit):
        self.asked.append([list(w) for w in words])
        return [(self.taxa.get(w[0].lower(), []), self.rows.get(w[0].lower(), [])[:limit])  # FTS5 folds case
                for w in words]

    def taxon_photos(self, taxon_ids):
        return np.unique(np.asarray([p for t in taxon_ids for p in self.photos.get(t, [])], dtype=np.int64))


SETTINGS = SimpleNamespace(hybrid_vector_weight=1.0, hybrid_text_weight=2.0, hybrid_rrf_lambda=60.0)


def test_query_words_leave_out_stop_words_short_words_and_repeats():
    assert catalog_text.query_words("Two ocelots at night, an ocelots photo") == ["ocelots", "night"]
    assert catalog_text.query_words("Leopardus pardalis") == ["leopardus", "pardalis"]
    assert catalog_text.query_words("a photo of it") == []


def test_words_are_searched_in_their_singular_and_names_rank_first():
    cat = _Catalog({"wolf": [(7, 3.0, True), (9, 5.0, False)], "night": [(9, 1.0, False), (4, 2.0, False)]})
    found = catalog_text.search(cat, "wolves at night", 10, None)
    assert cat.asked == [[["wolf"], ["night"]]]
    # 7 holds the word among its names; 9 holds both words in its notes; 4 one word in its notes
    assert [i for i, _ in found.ranked] == [7, 9, 4]
    assert found.matched == {7: ["wolves"], 9: ["wolves", "night"], 4: ["night"]}
    assert found.named == {7: ["wolves"]} and found.matched_words() == ["wolves", "night"]


def test_the_pool_and_depth_bound_the_catalogs_ranking():
    cat = _Catalog({"fox": [(1, 3.0, True), (2, 2.0, True), (3, 1.0, True)]})
    found = catalog_text.search(cat, "fox", 10, np.asarray([2, 3]))
    assert [i for i, _ in found.ranked] == [2, 3] and set(found.matched) == {2, 3}
    assert [i for i, _ in catalog_text.search(cat, "fox", 1, None).ranked] == [1]


def test_a_taxon_name_stands_for_its_photos_in_the_vectors_order():
    cat = _Catalog({"fox": [(40, 1.0, False)]}, taxa={"fox": [7]}, photos={7: [11, 12, 13]})
    asked = []

    def rank_within(ids, n):
        asked.append((sorted(int(i) for i in ids), n))
        return [(13, 0.9), (11, 0.5)]  # 12 not embedded

    found = catalog_text.search(cat, "red foxes", 10, None, rank_within=rank_within)
    # the taxon's photos hold "foxes" among their names (one tier, the vectors' order, then the unranked one);
    # 40 holds it in its notes only
    assert [i for i, _ in found.ranked] == [13, 11, 12, 40]
    assert asked == [([11, 12, 13], 10)]
    assert found.named == {13: ["foxes"], 11: ["foxes"], 12: ["foxes"]} and found.total == 4
    inside = catalog_text.search(cat, "foxes", 10, np.asarray([12, 40]))
    assert [i for i, _ in inside.ranked] == [12, 40]


def test_a_group_words_taxa_are_searched_as_further_words():
    cat = _Catalog({"aves": [(5, 2.0, True)]})
    found = catalog_text.search(cat, "a bird", 10, None, [("bird (Aves)", "Aves")])
    assert cat.asked == [[["bird"], ["Aves"]]]
    assert found.matched == {5: ["bird (Aves)"]}


def test_weighted_fusion_puts_catalog_matches_above_photos_the_vectors_alone_found():
    vectors = [(i, 1.0 - i / 100) for i in range(10, 40)]
    found = catalog_text.CatalogText(["ocelot"], [(50, 9.0), (51, 8.0)], {50: ["ocelot"], 51: ["ocelot"]})
    fused = catalog_text.fuse(vectors, found, SETTINGS, 100)
    assert [i for i, _ in fused[:3]] == [50, 51, 10]
    assert len(fused) == 32
    assert catalog_text.fuse(vectors, catalog_text.CatalogText(["x"]), SETTINGS, 100) == vectors
    # equal weights: the vectors' first and the catalog's first tie, broken by the smaller id
    assert rrf([[1, 2], [3, 4]], 60, [1.0, 1.0])[:2] == [(1, 2 / 122), (3, 2 / 122)]
    assert rrf([[1, 2], [3, 4]], 60, [1.0, 2.0])[0][0] == 3


def test_the_notice_and_each_photos_words():
    found = catalog_text.CatalogText(["ocelots", "night"], [(5, 1.0)], {5: ["ocelots"]}, total=1)
    text = catalog_text.notice_text(found)
    assert "“ocelots”" in text and "night" not in text and "for 1 photo:" in text
    assert catalog_text.matches_of(found, [4, 5]) == {5: ["ocelots"]}
    assert catalog_text.matches_of(None, [5]) == {}
