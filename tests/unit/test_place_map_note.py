"""The line above the filters' map says how many photos its dots stand for, or, for a card without GPS or
deployment places (the MegaDetector fixture), that none has a place yet and how one gets one: it said
"Dots: where 0 of the collection's photos were taken" over an empty grid."""
from __future__ import annotations

from ui.place_map import map_html


def test_the_maps_note_counts_the_dots_or_says_there_are_none_and_why():
    placed = map_html([(51.18, 5.66), (50.7, 4.01)], installed=True)
    assert "Dots: where 2 of the collection&#x27;s photos were taken" in placed
    empty = map_html([], installed=True)
    assert "where 0" not in empty and "No photo of the collection has a known place yet" in empty
    assert "deployments CSV with latitude and longitude" in empty and "a box drawn here finds none" in empty
    assert "plain grid" in empty  # no tiles set up: still said
