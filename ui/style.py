"""The page's own CSS: the photo view as an overlay, the labelling grid, badges, captions that keep the species
name on narrow screens, a phone layout (the explanation right under the tapped photo, in the photo view), and
text colours with at least WCAG AA contrast (4.5:1) on their backgrounds."""
from __future__ import annotations

import gradio as gr

TEXT, MUTED = "#1f2328", "#4a4f57"  # 15.8:1 and 8.1:1 on white

CSS = f"""
/* the first start's progress note: dark text on light blue, never dimmed while it updates every second */
#prepare-status {{ background: #e8f1fb; border: 1px solid #1a56db; padding: 6px 12px; border-radius: 6px;
  opacity: 1 !important; }}
#prepare-status, #prepare-status * {{ color: {TEXT} !important; }}
#standin-banner {{ background: #fff3cd; border: 1px solid #e0a800; padding: 6px 12px; border-radius: 6px;
  color: {TEXT}; }}
/* the banner is one line (what is searched, with which models); its whole text opens under it */
#standin-banner summary {{ cursor: pointer; }} #standin-banner details p {{ margin: 6px 0 0 0; }}
#standin-banner .banner-more {{ color: {MUTED}; font-size: 0.9em; }}
/* help texts under labels (preset help, hints) and placeholders: Gradio's light grey is 1.9:1 */
.info-text, [data-testid="block-info"], .block-info, span.info {{ color: {MUTED} !important; }}
textarea::placeholder, input::placeholder {{ color: #5f6670 !important; opacity: 1; }}
footer, footer a, footer button {{ color: {MUTED} !important; }}

/* badges and the explanation */
.ecolens-badge {{ border-radius: 6px; padding: 4px 8px; margin: 3px 0; border: 1px solid #b9bec6; color: {TEXT}; }}
.badge-yes {{ background: #e3f6e5; }} .badge-no {{ background: #fbe4e4; }} .badge-unsure {{ background: #eef0f3; }}
.badge-unchecked {{ background: #f4f1e8; }}
.badge-reason {{ font-size: 0.85em; color: {MUTED}; }} .badge-conf {{ font-size: 0.85em; color: {TEXT}; }}
.ecolens-meta th {{ text-align: left; padding-right: 10px; }}
.ecolens-closest {{ display: flex; align-items: center; gap: 8px; margin: 0 0 6px 0; }}
.ecolens-closest-img {{ width: 64px; height: 64px; object-fit: contain; border: 1px solid {MUTED};
  border-radius: 4px; flex: none; }}
.ecolens-score {{ margin: 0 0 6px 0; }} .ecolens-scale, .ecolens-attribution {{ color: {MUTED}; font-size: 0.9em; }}

/* gallery captions: species first, wrapped whole (never cut to a few letters or an ellipsis) */
.thumbnail-item .caption-label, .caption-label {{ white-space: normal !important; overflow: visible !important;
  text-overflow: clip !important; max-width: 100% !important; line-height: 1.25; display: block;
  max-height: none !important; height: auto !important; color: {TEXT} !important;
  background: rgba(255, 255, 255, 0.92) !important; }}
/* ... and under the picture, never over it (a camera-trap frame's caption runs to three lines: deployment, time,
   box): the tile is a column whose picture keeps a 4:3 frame at the tile's width (a square tile left a four-line
   caption a strip of picture) and which grows by its caption; a row is as tall as its longest caption */
.thumbnail-item.thumbnail-lg {{ display: flex !important; flex-direction: column; aspect-ratio: auto !important; }}
.thumbnail-item.thumbnail-lg > img {{ flex: none; aspect-ratio: 4 / 3; min-height: 0 !important;
  height: auto !important; width: 100%; }}
.thumbnail-item.thumbnail-lg > .caption-label {{ position: static !important; flex: 1 0 auto; border: 0 !important;
  border-top: 1px solid var(--border-color-primary) !important; border-radius: 0 !important; }}
/* Gradio fades a caption under the pointer (to show the picture under it): here it covers nothing */
.thumbnail-item.thumbnail-lg:hover > .caption-label {{ opacity: 1 !important; }}
#search-visualizations .thumbnail-item, #history-visualizations .thumbnail-item {{ min-height: 160px; }}
/* the pictures strips keep their fixed squares: there the picture takes the room its caption leaves */
#search-visualizations .thumbnail-item.thumbnail-lg > img, #history-visualizations .thumbnail-item.thumbnail-lg > img {{
  flex: 1 1 0; aspect-ratio: auto; }}
#search-visualizations .thumbnail-item.thumbnail-lg > .caption-label,
#history-visualizations .thumbnail-item.thumbnail-lg > .caption-label {{ flex: none; }}
/* the pictures strip: each picture whole at a fixed size, however few there are (one is never blown up) */
#search-visualizations .grid-container, #history-visualizations .grid-container {{
  grid-template-columns: repeat(auto-fill, 200px) !important; grid-auto-rows: 200px !important; }}
#search-visualizations .thumbnail-item img, #history-visualizations .thumbnail-item img {{
  object-fit: contain !important; }}
/* a gallery keeps its columns however few photos it shows: Gradio narrows the grid to the number of photos, so
   a lone result (one event of a camera-trap package) filled the whole gallery, cropped, its caption out of view */
#search-gallery .grid-container {{ grid-template-columns: repeat(5, minmax(0, 1fr)) !important; }}
#history-gallery .grid-container {{ grid-template-columns: repeat(6, minmax(0, 1fr)) !important; }}
#dialogue-gallery .grid-container {{ grid-template-columns: repeat(4, minmax(0, 1fr)) !important; }}
/* a gallery's floating label sits above its first row, not over the top of its pictures (the event's strip had
   none of the room Gradio leaves it elsewhere, the results a little too little) */
#lightbox-strip .grid-container, #search-gallery .grid-container {{ padding-top: 30px !important; }}
/* strips with nothing in them take no room */
#search-pictures-row:not(:has(.thumbnail-item)), #history-visualizations:not(:has(.thumbnail-item)),
#history-chat:not(:has(.message-row)), #label-adjudication:not(:has(.thumbnail-item)),
#marks-gallery:not(:has(.thumbnail-item)), #label-export-file:not(:has(a)), #marks-file:not(:has(a)),
#label-photo:not(:has(img)) {{ display: none !important; }}
.ecolens-map-canvas {{ height: 340px; border: 1px solid {MUTED}; border-radius: 6px; background: #f3f5f7; }}
.ecolens-map-bar {{ display: flex; align-items: center; gap: 10px; margin: 0 0 6px 0; }}
.ecolens-map-note {{ color: {TEXT}; font-size: 0.9em; }}
.ecolens-map-draw {{ padding: 4px 10px; border: 1px solid {MUTED}; border-radius: 6px; background: #fff;
  color: {TEXT}; cursor: pointer; }}
.ecolens-map-draw.active {{ background: #b03a2e; color: #fff; border-color: #b03a2e; }}
#search-scale p {{ margin: 0; font-size: 0.9em; color: {MUTED}; }}

/* the photo view: an overlay above the page */
#lightbox {{ position: fixed; inset: 3vh 3vw; width: auto !important; max-width: none !important;
  min-width: 0 !important; box-sizing: border-box; z-index: 1000; background: var(--background-fill-primary, #fff);
  overflow: auto; border-radius: 10px; padding: 12px 16px; box-shadow: 0 0 0 100vmax rgba(0, 0, 0, 0.55); }}
#lightbox-title h2 {{ margin: 0; font-size: 1.3em; color: {TEXT}; }}
#lightbox-title .lightbox-where {{ margin: 2px 0 0 0; color: {MUTED}; font-size: 0.9em; }}
#lightbox-photo img {{ object-fit: contain !important; }}

/* the labelling grid */
.lb-board {{ display: grid; grid-template-columns: repeat(auto-fill, minmax(132px, 1fr)); gap: 8px; }}
.lb-tile {{ position: relative; border: 3px solid #d0d4da; border-radius: 8px; overflow: hidden; cursor: pointer;
  background: #fff; }}
.lb-tile img {{ width: 100%; aspect-ratio: 1 / 1; object-fit: cover; display: block; }}
.lb-tile.is-cur {{ border-color: #1a56db; box-shadow: 0 0 0 3px #93b4f5; }}
.lb-tile.is-rel {{ border-color: #1e7b34; }} .lb-tile.is-non {{ border-color: #b42318; }}
.lb-tile.is-skip {{ border-style: dashed; }}
.lb-num {{ position: absolute; top: 4px; left: 4px; background: #fff; color: {TEXT}; border-radius: 4px;
  padding: 0 5px; font-weight: 700; font-size: 0.85em; }}
.lb-state {{ position: absolute; top: 4px; right: 4px; border-radius: 4px; padding: 0 5px; font-size: 0.8em;
  background: #fff; color: {TEXT}; }}
.lb-tile.is-rel .lb-state {{ background: #1e7b34; color: #fff; }}
.lb-tile.is-non .lb-state {{ background: #b42318; color: #fff; }}
.lb-cap {{ font-size: 0.8em; padding: 2px 6px; color: {TEXT}; line-height: 1.2; height: 2.4em; overflow: hidden; }}
.lb-acts {{ display: flex; }}
.lb-acts button {{ flex: 1; border: 0; padding: 4px 0; font-size: 1.05em; cursor: pointer; color: #fff; }}
.lb-acts .lb-yes {{ background: #1e7b34; }} .lb-acts .lb-no {{ background: #b42318; }}
.label-done {{ font-weight: 600; color: #1e7b34; }}

/* phones: two photos a row, the photo view full screen with the explanation right under the photo */
@media (max-width: 640px) {{
  #standin-banner {{ font-size: 0.85em; padding: 4px 8px; }} #standin-banner .banner-more {{ display: none; }}
  /* the query box and the ways to search one above the other: the box keeps the phone's width */
  .form:has(> #search-query), .row:has(> #search-query) {{ flex-wrap: wrap !important; }}
  #search-query, #search-preset {{ flex: 1 1 100% !important; min-width: 100% !important; }}
  #search-gallery .grid-container, #history-gallery .grid-container {{
    grid-template-columns: repeat(2, minmax(0, 1fr)) !important; }}
  #lightbox {{ inset: 0; border-radius: 0; padding: 8px; }}
  #lightbox-photo {{ height: auto !important; }}
  #lightbox-photo img {{ max-height: 46vh; }}
  .lb-board {{ grid-template-columns: repeat(2, minmax(0, 1fr)); }}
}}
"""


def theme() -> gr.themes.Base:
    """Gradio's default look in greens, with every text colour at WCAG AA contrast: the default orange buttons
    (2.8:1 with white), red Stop button (3.8:1) and grey help texts (1.9:1) are darkened."""
    return gr.themes.Default(primary_hue="emerald", secondary_hue="sky", neutral_hue="gray").set(
        body_text_color_subdued="*neutral_600", block_info_text_color="*neutral_600", color_accent="*primary_700",
        button_primary_background_fill="*primary_700", button_primary_background_fill_hover="*primary_800",
        button_primary_text_color="white", button_primary_text_color_hover="white",
        button_cancel_background_fill="#b42318", button_cancel_background_fill_hover="#912018",
        button_cancel_text_color="white", button_cancel_text_color_hover="white",
        link_text_color="*secondary_700", slider_color="*primary_700")
