"""The offline painter draws what the words say and lists the words it could not use."""
from __future__ import annotations

import numpy as np

from core.backends.base import ImageGenerator
from fieldguide.painter import FieldGuideGenerator, scene_from_text
from fieldguide.reading import read_text
from fieldguide.scene import visible_parts


def test_named_species_and_attribute_words_are_drawn():
    s, ignored = scene_from_text("a small photograph of the Gold-crested Tuftling carrying a twig over water", 1)
    assert s.species == "Tuftilla aurifrons" and s.colours["crest"] == "yellow"
    assert (s.behaviour, s.item, s.habitat) == ("carrying", "twig", "water")
    assert ignored == ["small", "photograph"]
    s, _ = scene_from_text("Veilumbra cinnabarina showing the underside of the wings", 2)
    assert "underside" in visible_parts(s) and s.colours["underside"] == "red"
    s, _ = scene_from_text("caterpillar larva of the Tawny Sailwing, curled up", 2)
    assert s.stage == "larva" and s.pose == "curled"


def test_unknown_species_gives_generic_drawing_from_words():
    s, ignored = scene_from_text("two purple zorblats sitting on sand, frog", 5)
    assert s.species == "" and s.plan == "frog" and s.count == 2 and s.habitat == "sand"
    assert s.colours["back"] == "purple" and "zorblats" in ignored


def test_generator_is_deterministic_and_sized():
    g = FieldGuideGenerator.from_settings(None, "fieldguide")
    assert isinstance(g, ImageGenerator) and g.is_standin
    a = g.generate("Cobalt Pondhopper leaping", seed=7)
    b = g.generate("Cobalt Pondhopper leaping", seed=7)
    c = g.generate("Cobalt Pondhopper leaping", seed=8)
    assert a.image.size == (224, 224) and a.model_id == "fieldguide-painter@v1"
    assert np.array_equal(np.asarray(a.image), np.asarray(b.image))
    assert not np.array_equal(np.asarray(a.image), np.asarray(c.image))
    assert g.generate("a bird", seed=1, size=128).image.size == (128, 128)


def test_reading_binds_colours_to_parts():
    r = read_text("red crest, blue wings and a white belly seen from below")
    assert r.colours == {"crest": "red", "wings": "blue", "belly": "white"}
    assert r.attrs["view"] == "underside"
