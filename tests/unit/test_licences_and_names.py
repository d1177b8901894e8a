"""Licence codes and the licence filter's rule (core.licences), and names compared the way people mean them
(core.contracts.bounds.name / name_key): "renée" typed composed, decomposed or in capitals is one annotator."""
from __future__ import annotations

import unicodedata

import pytest

from core.contracts import bounds
from core.contracts.sessionlog import Label
from core.labels import agreement, disagreements, latest, same_annotator
from core.licences import Licence, LicenceFilter, like_escape, matches, parse_licence, parse_licence_filter, url_of

WRITTEN = [  # (as a source writes it, code, version)
    ("CC-BY-NC", "cc-by-nc", ""),
    ("cc-by", "cc-by", ""),
    ("CC BY", "cc-by", ""),
    ("cc_by", "cc-by", ""),
    ("cc-by-4.0", "cc-by", "4.0"),
    ("CC BY 4.0", "cc-by", "4.0"),
    ("CC_BY_NC_4_0", "cc-by-nc", "4.0"),  # GBIF
    ("CC BY-NC-SA 4.0 International", "cc-by-nc-sa", "4.0"),
    ("https://creativecommons.org/licenses/by-nc/4.0/legalcode", "cc-by-nc", "4.0"),
    ("http://creativecommons.org/licenses/by/3.0/", "cc-by", "3.0"),
    ("http://creativecommons.org/publicdomain/zero/1.0/", "cc0", "1.0"),
    ("https://creativecommons.org/publicdomain/mark/1.0/", "pdm", "1.0"),
    ("CC0", "cc0", ""),
    ("cc-0", "cc0", ""),
    ("CC0 1.0 Universal", "cc0", "1.0"),
    ("by-nc", "cc-by-nc", ""),
    ("All rights reserved", "all-rights-reserved", ""),
    ("  ", "", ""),
    (None, "", ""),
]


@pytest.mark.parametrize("text, code, version", WRITTEN, ids=[repr(w[0]) for w in WRITTEN])
def test_a_licence_is_read_as_one_code(text, code, version):
    assert parse_licence(text) == Licence(code, version)


STORED = ["cc-by", "CC-BY 4.0", "cc-by-nc", "CC-BY-NC-SA", "cc-by-sa-3.0", "cc0", "cc-by-nd", "%", "cc-by%",
          "cc_by", "All rights reserved", ""]
FILTERS = [  # (filter as typed, the stored licences it matches)
    ("cc-by", {"cc-by", "CC-BY 4.0", "cc_by"}),  # never cc-by-nc or cc-by-sa
    ("CC BY", {"cc-by", "CC-BY 4.0", "cc_by"}),
    ("cc-by-4.0", {"CC-BY 4.0"}),
    ("cc-by-nc", {"cc-by-nc"}),
    ("cc-by*", {"cc-by", "CC-BY 4.0", "cc-by-nc", "CC-BY-NC-SA", "cc-by-sa-3.0", "cc-by-nd", "cc_by"}),
    ("cc-by-nc*", {"cc-by-nc", "CC-BY-NC-SA"}),
    ("nc", {"cc-by-nc", "CC-BY-NC-SA"}),
    ("sa", {"CC-BY-NC-SA", "cc-by-sa-3.0"}),
    ("nc-sa", {"CC-BY-NC-SA"}),
    ("cc0", {"cc0"}),
    ("%", {"%"}),  # a plain character, matching only itself
    ("cc-by%", {"cc-by%"}),
    ("cc_%", set()),
    ("all rights reserved", {"All rights reserved"}),
    ("gpl", set()),
]


@pytest.mark.parametrize("typed, want", FILTERS, ids=[f[0] for f in FILTERS])
def test_the_licence_filter_matches_codes_not_substrings(typed, want):
    flt = parse_licence_filter(typed)
    assert {s for s in STORED if matches(flt, parse_licence(s))} == want


def test_filter_forms_and_like_escaping():
    assert parse_licence_filter("cc-by*") == LicenceFilter("cc-by", "", True)
    assert parse_licence_filter("NC") == LicenceFilter(elements=("nc",))
    assert like_escape("a%b_c\\d") == "a\\%b\\_c\\\\d"


NAMES = ["renée", "Renée", "RENÉE", unicodedata.normalize("NFD", "renée"), "  renée  ", "ren\u0065\u0301e"]


@pytest.mark.parametrize("typed", NAMES, ids=[ascii(n) for n in NAMES])
def test_one_name_however_it_is_typed(typed):
    assert bounds.name_key(typed) == "renée"
    assert unicodedata.is_normalized("NFC", bounds.name(typed)) and bounds.name(typed) == bounds.name(typed).strip()
    assert same_annotator(typed, "Renée")


def test_names_keep_their_case_and_differ_from_other_names():
    assert bounds.name(" Rana   temporaria ") == "Rana temporaria"
    assert bounds.name_key("Straße") == bounds.name_key("STRASSE")
    assert not same_annotator("renée", "renee")  # an accent is not a spelling variant


def _lb(photo: int, label: int, who: str) -> Label:
    return Label(session_id=1, query="q", photo_id=photo, label=label, annotator=who)


def test_labels_by_one_annotator_typed_five_ways_are_one_annotator():
    decomposed = unicodedata.normalize("NFD", "Renée")
    assert Label(session_id=1, query="q", photo_id=1, label=1, annotator=f" {decomposed} ").checked().annotator \
        == "Renée"
    labels = [_lb(1, 1, "Renée"), _lb(1, 0, decomposed), _lb(2, 1, "RENÉE"), _lb(3, 1, "renée "),
              _lb(1, 1, "bob"), _lb(2, 0, "bob"), _lb(3, 1, "Bob")]
    assert len(latest(labels)) == 6  # photos 1 (relabelled), 2, 3 by Renée; 1, 2, 3 by bob
    [pair] = agreement(labels)
    assert pair.annotators == ("Renée", "bob") and pair.pairs == 3  # names as first written
    assert [(d.photo_id, d.labels) for d in disagreements(labels)] == [(1, {"Renée": 0, "bob": 1}),
                                                                       (2, {"Renée": 1, "bob": 0})]
    assert agreement(labels, "RENEE", "BOB")[0].pairs == 0  # unknown name: no shared pairs
    assert agreement(labels, "renée", "BOB")[0].pairs == 3


URLS = [  # (as a source writes it, the URL records carry)
    ("CC-BY-NC", "https://creativecommons.org/licenses/by-nc/4.0/"),  # iNaturalist: no version, 4.0 assumed
    ("cc-by-nc 3.0", "https://creativecommons.org/licenses/by-nc/3.0/"),
    ("CC_BY_4_0", "https://creativecommons.org/licenses/by/4.0/"),  # GBIF
    ("CC BY-NC-SA 4.0 International", "https://creativecommons.org/licenses/by-nc-sa/4.0/"),
    ("cc-by-sa-nc", "https://creativecommons.org/licenses/by-nc-sa/4.0/"),  # elements in the deed's order
    ("https://creativecommons.org/licenses/by-nd/2.5/legalcode", "https://creativecommons.org/licenses/by-nd/2.5/"),
    ("CC0", "https://creativecommons.org/publicdomain/zero/1.0/"),
    ("http://creativecommons.org/publicdomain/zero/1.0/", "https://creativecommons.org/publicdomain/zero/1.0/"),
    ("PDM", "https://creativecommons.org/publicdomain/mark/1.0/"),
    ("https://example.org/our-licence", "https://example.org/our-licence"),  # not CC: the source's own URL
    ("all rights reserved", ""),
    ("cc-by-xyz", ""),
    ("", ""),
]


@pytest.mark.parametrize("written,url", URLS)
def test_each_licence_has_the_url_its_code_and_version_name(written, url):
    assert url_of(written) == url


def test_records_going_out_carry_the_raw_licence_its_code_and_its_url(tmp_path):
    import csv

    from core.contracts.records import Hit, Photo
    from core.exports import export_marks

    photo = Photo(path="p.jpg", id=1, license="CC-BY-NC", rights_holder="ada")
    hit = Hit(rank=1, photo_id=1, score=0.5, photo=photo).to_json()
    assert (hit["license"], hit["license_code"], hit["license_url"]) == \
        ("CC-BY-NC", "cc-by-nc", "https://creativecommons.org/licenses/by-nc/4.0/")
    export_marks([{"id": 1, "query": "q", "preset": "Fast"}], {1: photo}, "csv", tmp_path / "m.csv")
    row = next(csv.DictReader(open(tmp_path / "m.csv", newline="", encoding="utf-8")))
    assert (row["license"], row["license_url"]) == ("CC-BY-NC", "https://creativecommons.org/licenses/by-nc/4.0/")


def test_queries_are_normalised_before_they_are_searched_stored_or_compared():
    from core.contracts.search_request import SearchRequest, clean_query
    from core.contracts.sessionlog import Label
    from core.sessions.memory_log import MemorySessionLog

    composed = unicodedata.normalize("NFC", "the heron of renée")
    typed = ["  the heron of ren\u0065\u0301e ", composed, "the\theron  of renée  "]
    assert {clean_query(t) for t in typed} == {composed}
    request = SearchRequest(query=typed[0])
    request.validate()
    assert request.query == composed
    log = MemorySessionLog()
    sid = log.start_session("label")
    for i, t in enumerate(typed):
        log.add_label(Label(session_id=sid, query=t, photo_id=i + 1, label=1, annotator="ada"))
    assert [lb.query for lb in log.labels(query=typed[2])] == [composed] * 3
