"""The search form's helpers beside the query: the Filters map with the catalog's photo places, the taxon box's
choices, the button offering the taxon a query names as the filter, and the "answer my question" box shown
while the query is a question. Each answers with an empty offer, never a failed page, while the catalog is
still being built (the log line says why)."""
from __future__ import annotations

import logging
from typing import Any

import gradio as gr

from core.contracts.search_request import is_question
from ui import place_map
from ui import strings as S
from ui.taxa import choices as taxon_labels
from ui.taxa import named_taxa

log = logging.getLogger(__name__)


class SearchForm:
    def __init__(self, engine: Any):
        """`engine`: core.search.engine.SearchEngine (its corpus and settings)."""
        self.engine, self.settings = engine, engine.settings

    # ---- the Filters map --------------------------------------------------------------------------
    def place_map(self):
        """The Filters map with a sample of the catalog's photo places (asked on every page load)."""
        try:
            return place_map.panel(self.engine.corpus, self.settings)
        except Exception:  # the catalog is still being built: an empty map rather than a failed page
            log.exception("photo places could not be read from the catalog")
            return place_map.map_html([], self.settings.map_tiles_url, self.settings.map_tiles_attribution)

    # ---- taxa ---------------------------------------------------------------------------------------
    def taxon_choices(self):
        """The taxon box's choices: the catalog's names, by rank then name (asked on every page load, so a
        collection built after the server started is offered too). An empty box is any taxon."""
        try:
            names = self.engine.corpus.taxon_names()
        except Exception:  # the catalog is still being built: offer nothing rather than fail the page
            log.exception("taxon names could not be read from the catalog")
            names = []
        return gr.update(choices=taxon_labels(names))

    def suggest_taxon(self, query: str, taxon: str):
        """A button offering the species (or other taxon) the query names as a filter, if it is not set yet."""
        try:
            found = named_taxa(query or "", self.engine.corpus.taxon_names())
        except Exception:
            log.exception("taxon names could not be read from the catalog")
            found = []
        name = found[0] if found else ""
        show = bool(name) and name.lower() != (taxon or "").strip().lower()
        return gr.update(value=S.TAXON_SUGGEST.format(name=name) if show else "", visible=show), name

    @staticmethod
    def offer_answer(query: str):
        """The 'answer my question' box beside the query, shown while the query is a question (and cleared when
        it stops being one, so a hidden box never asks for an answer)."""
        return gr.update(visible=True) if is_question(query or "") else gr.update(visible=False, value=False)

    @staticmethod
    def take_taxon(name: str):
        """The suggested taxon becomes the filter (the suggestion button goes away)."""
        return gr.update(value=name), gr.update(visible=False)
