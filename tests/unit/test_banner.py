"""The banner tells the truth in each case: the synthetic demo world; the user's own photos with stand-in
models (not meaningful, and how to configure a real embedder and judge); real models."""
from core.config import Settings
from core.search.banner import EMPTY, OWN, SYNTHETIC, banner_for, headline, standins

REAL = dict(embedder="open_clip:hf-hub:imageomics/bioclip-2", judge="openai",
            generator="diffusers:stabilityai/sdxl-turbo", llm="openai", captioner="openai")


def test_synthetic_demo_world_with_stand_ins():
    text = banner_for(Settings(), {}, SYNTHETIC)
    assert text.startswith("SYNTHETIC DEMO") and "invented species" in text and "stand-in" in text
    assert "ECOLENS_CORPUS" in text


def test_own_photos_with_stand_in_models_are_not_meaningful_and_say_how_to_fix():
    text = banner_for(Settings(corpus="/photos"), {}, OWN)
    assert "YOUR PHOTOS" in text and "NOT meaningful" in text and "invented species" not in text
    assert "ECOLENS_EMBEDDER=open_clip:" in text and "ECOLENS_JUDGE=openai" in text and "ingest" in text
    assert "embedder 'fieldguide'" in text and "judge 'fieldguide'" in text
    hashed = banner_for(Settings(embedder="hash", judge="clip"), {}, EMPTY)  # nothing ingested yet: same truth
    assert "YOUR PHOTOS" in hashed and "embedder 'hash'" in hashed and "judge 'clip'" in hashed


def test_real_models_need_no_banner():
    assert banner_for(Settings(**REAL), {}, OWN) == ""


def test_real_embedder_with_some_stand_ins_names_them():
    text = banner_for(Settings(**{**REAL, "judge": "clip", "llm": "rule"}), {}, OWN)
    assert text.startswith("Real embedder") and "judge 'clip'" in text and "ECOLENS_JUDGE=openai" in text
    assert "llm 'rule'" in text and "generator" not in text


def test_built_backends_override_names():
    # open_clip with random weights is a stand-in although its name looks real; describe() says so
    described = {"embedder": {"model_id": "open_clip:ViT-B-32", "standin": True}}
    assert standins(Settings(**{**REAL, "embedder": "open_clip:ViT-B-32"}), described) == ["embedder"]
    assert "YOUR PHOTOS" in banner_for(Settings(**{**REAL, "embedder": "open_clip:ViT-B-32"}), described, OWN)


def test_the_banner_says_what_is_searched_with_counts():
    demo = banner_for(Settings(), {}, SYNTHETIC, (480, 0))
    assert demo.startswith("SYNTHETIC DEMO: the field-guide world (480 photos of invented species")
    mixed = banner_for(Settings(), {}, OWN, (480, 20))
    assert mixed.startswith("Searching 480 demo photos and 20 of your photos: the demo photos are synthetic")
    assert "STAND-IN MODELS" in mixed
    # with real models a mix is still said; the user's own photos alone need no banner
    assert banner_for(Settings(**REAL), {}, OWN, (480, 1)).startswith("Searching 480 demo photos and 1 of your photos")
    assert banner_for(Settings(**REAL), {}, OWN, (0, 20)) == ""
    assert banner_for(Settings(corpus="/photos"), {}, OWN, (0, 20)).startswith("Searching 20 of your photos. YOUR")


def test_the_headline_is_one_short_line_of_what_is_searched_with_which_models():
    """The page shows this line; the whole banner_for text opens under it (ui.server.banner_html)."""
    mixed = headline(Settings(), {}, OWN, (480, 20))
    assert mixed == "Searching 480 demo photos and 20 of your photos with stand-in models"
    demo = headline(Settings(), {}, SYNTHETIC, (480, 0))
    assert demo == "SYNTHETIC DEMO: 480 photos of invented species; stand-in models"
    some = headline(Settings(**{**REAL, "judge": "clip"}), {}, OWN, (0, 20))
    assert some.startswith("Searching 20 of your photos with ") and "stand-in judge" in some
    assert headline(Settings(**REAL), {}, OWN, (0, 20)) == ""  # no banner, no line
    assert all(len(t) <= 100 for t in (mixed, some))


def test_the_page_shows_the_line_and_the_whole_text_one_click_away():
    from ui.server import banner_html

    html = banner_html(("Searching 3 of your photos with x", "Searching 3 of your photos. <b>more</b>"))
    assert html.startswith("<details") and "<summary><b>Searching 3 of your photos with x</b>" in html
    assert "&lt;b&gt;more&lt;/b&gt;" in html  # the text is escaped, never read as markup
    assert banner_html("plain") == "<b>plain</b>" and banner_html(("", "")) == ""


def test_photos_kept_without_their_file_are_counted_apart_from_those_with_a_picture():
    """The Camtrap DP example: 423 media, 413 of them kept only as URLs: 'Searching 423 of your photos' said
    nothing of the 413 the picture search cannot find."""
    text = banner_for(Settings(corpus="/photos"), {}, OWN, (0, 423), fileless=413)
    assert text.startswith("Searching 423 of your photos (10 of them with a picture). The other 413 are kept "
                           "without their file"), text
    assert "a search for the words of their records (a species name) finds them" in text and "YOUR PHOTOS" in text
    mixed = banner_for(Settings(), {}, OWN, (480, 3), fileless=1)
    assert mixed.startswith("Searching 480 demo photos and 3 of your photos (2 of them with a picture): the demo")
    assert "(invented species of the field-guide world, made for testing). The other one is kept without its file" \
        in mixed
    line = headline(Settings(corpus="/photos"), {}, OWN, (0, 423), fileless=413)
    assert line == "Searching 423 of your photos (10 of them with a picture) with stand-in models"
    # every photo with its file: as before, no word of pictures
    assert banner_for(Settings(corpus="/photos"), {}, OWN, (0, 20), fileless=0).startswith(
        "Searching 20 of your photos. YOUR")
