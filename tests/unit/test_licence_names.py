"""The photo view names a Creative Commons licence by its short name ('CC BY 4.0'), linked to its URL, as the
Camtrap DP example package writes it ('http://creativecommons.org/licenses/by/4.0/'); any other URL is shown
as it is, linked; other text as it is, escaped."""
from __future__ import annotations

import re

import pytest

from ui import present
from ui.licence_names import CC_SHORT_NAMES, licence_html, licence_text, short_name


@pytest.mark.parametrize("scheme", ["http", "https"])
@pytest.mark.parametrize("slash", ["", "/"])
def test_every_spelling_of_a_cc_url_gets_its_short_name(scheme, slash):
    assert short_name(f"{scheme}://creativecommons.org/licenses/by/4.0{slash}") == "CC BY 4.0"
    assert short_name(f"{scheme}://creativecommons.org/licenses/by-nc-sa/3.0{slash}") == "CC BY-NC-SA 3.0"
    assert short_name(f"{scheme}://creativecommons.org/publicdomain/zero/1.0{slash}") == "CC0 1.0"
    assert short_name(f" {scheme}://www.creativecommons.org/licenses/by-nd/2.5{slash} ") == "CC BY-ND 2.5"


def test_each_entry_of_the_table_is_read_back_from_its_url():
    for path, name in CC_SHORT_NAMES.items():
        assert short_name(f"https://creativecommons.org/{path}/4.0/legalcode") == f"{name} 4.0"
        assert short_name(f"http://creativecommons.org/{path}/4.0/deed.de") == f"{name} 4.0"


@pytest.mark.parametrize("text", ["https://creativecommons.org/licenses/xy/4.0/",  # no such licence
                                  "https://creativecommons.org/licenses/by/",  # no version
                                  "https://creativecommons.org.evil.example/licenses/by/4.0/",
                                  "https://example.org/licenses/by/4.0/", "cc-by", "", None])
def test_anything_else_has_no_short_name(text):
    assert short_name(text) == ""


def test_the_html_links_a_url_and_escapes_everything():
    cc = licence_html("http://creativecommons.org/licenses/by/4.0/")
    assert re.fullmatch(r"<a href='http://creativecommons\.org/licenses/by/4\.0/'[^>]*>CC BY 4\.0</a>", cc)
    other = licence_html("https://example.org/terms?a=1&b='2'")
    assert ">https://example.org/terms?a=1&amp;b=&#x27;2&#x27;</a>" in other
    assert "href='https://example.org/terms?a=1&amp;b=&#x27;2&#x27;'" in other
    assert licence_html("<b>all rights reserved</b>") == "&lt;b&gt;all rights reserved&lt;/b&gt;"
    assert licence_text("CC-BY-NC") == "CC-BY-NC" and licence_text(None) == ""


def test_the_photo_view_shows_the_short_name_in_its_table_and_attribution():
    hit = {"id": 3, "rank": 1, "license": "http://creativecommons.org/licenses/by/4.0/", "rights_holder": "INBO"}
    html = present.explanation_html(hit, {}, badges=False)
    row = re.search(r"<tr><th>Licence</th><td>(.*?)</td></tr>", html).group(1)
    assert ">CC BY 4.0</a>" in row and "href='http://creativecommons.org/licenses/by/4.0/'" in row
    assert "Photo: INBO · licence CC BY 4.0" in html
    plain = present.explanation_html({**hit, "license": "cc-by & more"}, {}, badges=False)
    assert "<td>cc-by &amp; more</td>" in plain and "licence cc-by &amp; more" in plain
