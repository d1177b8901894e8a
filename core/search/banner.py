"""The banner: one truthful line about what the user is searching and with which models.

Three cases: the synthetic demo world (invented species, stand-in models); the user's own photos searched
with stand-in models (the results are not meaningful, and this says how to configure a real embedder and
judge); real models (no banner, or a note naming the parts that are still stand-ins). `banner_for` is pure:
the app passes the settings, Backends.describe() (backends not built yet are judged by their names) and the
kind of corpus in the catalog."""
from __future__ import annotations

from typing import Any, Mapping

from core.plugins.registry import demo_world, worlds

SYNTHETIC = "synthetic"  # the field-guide world built by EcoLens
OWN = "own"  # photos the user ingested (a folder, CSV or parquet)
EMPTY = "empty"  # nothing ingested yet

# Backend names that are offline stand-ins (besides open_clip with random weights, which says so itself).
# A world plug-in's backends (core.contracts.world) are stand-ins too: see standin_names.
STANDIN_NAMES = {
    "embedder": {"hash"},
    "llm": {"rule"},
    "judge": {"clip"},
    "generator": {"standin"},
    "captioner": {"metadata"},
}


def standin_names(kind: str) -> set[str]:
    """The backend names of `kind` that are offline stand-ins: the built-in ones and every world's."""
    return STANDIN_NAMES[kind] | {n for w in worlds().values() for n in w.backends.get(kind, {})}
# What each stand-in costs the user, and the setting that replaces it.
FIXES = {
    "embedder": ("rankings", "ECOLENS_EMBEDDER=open_clip:hf-hub:imageomics/bioclip-2 (or another open_clip model)"),
    "judge": ("sub-question answers and reranking",
              "ECOLENS_JUDGE=openai with a vision-language model (ECOLENS_JUDGE_MODEL, and OPENAI_API_KEY or "
              "ECOLENS_OPENAI_BASE_URL)"),
    "generator": ("VisRet pictures", "ECOLENS_GENERATOR=diffusers:stabilityai/sdxl-turbo or openai:gpt-image-1"),
    "llm": ("query rewriting by rules, not a language model", "ECOLENS_LLM=openai or llama_cpp"),
    "captioner": ("captions from the metadata", "ECOLENS_CAPTIONER=openai"),
}
ORDER = ("embedder", "judge", "generator", "llm", "captioner")


def standins(settings: Any, described: Mapping[str, Mapping[str, Any]] | None = None) -> list[str]:
    """The backends (in ORDER) that are stand-ins: as built (described) where known, else by configured name."""
    described = described or {}
    out = []
    for kind in ORDER:
        info = described.get(kind)
        if info is not None and "standin" in info:
            standin = bool(info["standin"])
        else:
            standin = str(getattr(settings, kind)) in standin_names(kind)
        if standin:
            out.append(kind)
    return out


def _photos(n: int) -> str:
    return f"{n} photo" if n == 1 else f"{n} photos"


def searched(demo: int, own: int, fileless: int = 0) -> str:
    """What is searched, with counts: '480 demo photos and 20 of your photos', '20 of your photos'; with
    `fileless` of the user's photos kept without their file, how many have a picture: '423 of your photos (10
    of them with a picture)'."""
    parts = []
    if demo:
        parts.append(f"{demo} demo photo" if demo == 1 else f"{demo} demo photos")
    if own or not demo:
        with_picture = f" ({max(0, own - fileless)} of them with a picture)" if fileless and own else ""
        parts.append((f"{own} of your photos" if own != 1 else "1 of your photos") + with_picture)
    return " and ".join(parts)


def _fileless_note(fileless: int) -> str:
    """The sentence on the photos kept without their file: what finds them."""
    if not fileless:
        return ""
    them = f"The other {fileless} are kept without their file" if fileless != 1 else \
        "The other one is kept without its file"
    return (f"{them} (a Camtrap DP package's media the ingest could not fetch): a search for the words of their "
            "records (a species name) finds them, the picture search cannot. ")


def banner_for(settings: Any, described: Mapping[str, Mapping[str, Any]] | None, corpus: str,
               counts: tuple[int, int] | None = None, fileless: int = 0) -> str:
    """The banner text for these settings, backends and corpus kind (SYNTHETIC, OWN or EMPTY); '' when
    every backend is real and the photos are the user's own. `counts` (demo photos, own photos), when known,
    says how many photos of each are searched: a mix of both is always said, real models or not; `fileless`:
    how many of the user's own are kept without their file (no picture to search)."""
    fake = standins(settings, described)
    demo, own = counts or (0, 0)
    world = demo_world()
    title = (world.title or world.name) if world else "demo"
    if corpus == SYNTHETIC:
        size = f"{_photos(demo)} of invented species" if demo else "invented species"
        return (f"SYNTHETIC DEMO: the {title} world ({size}, made for testing) searched with "
                + ("offline stand-in models, not real CLIP / diffusion / vision-language models"
                   if fake else "the models you configured")
                + ". To search your own photos, set ECOLENS_CORPUS=/path/to/photos (see 'Switching to real "
                "models' in the README).")
    lead = ""
    if demo and own:  # the demo world is still searched beside the user's photos
        lead = (f"Searching {searched(demo, own, fileless)}: the demo photos are synthetic (invented species of "
                f"the {title} world, made for testing). " + _fileless_note(fileless))
    elif own:
        lead = f"Searching {searched(0, own, fileless)}. " + _fileless_note(fileless)
    if not fake:
        return lead.strip() if demo and own else ""
    names = ", ".join(f"{kind} '{getattr(settings, kind)}'" for kind in fake)
    if "embedder" in fake:
        return lead + (f"YOUR PHOTOS, STAND-IN MODELS ({names}): the offline stand-ins were made for the synthetic "
                "demo world, so rankings, sub-question answers and pictures are NOT meaningful for real photos. "
                f"For real results set {FIXES['embedder'][1]} and {FIXES['judge'][1]}; then run "
                "`python app.py ingest` again to embed the photos with the new model.")
    parts = "; ".join(f"{kind} '{getattr(settings, kind)}': {FIXES[kind][0]} are not meaningful "
                      f"(set {FIXES[kind][1]})" for kind in fake if kind != "llm" and kind != "captioner")
    minor = [kind for kind in fake if kind in ("llm", "captioner")]
    text = lead + "Real embedder; stand-ins in use: " + (parts if parts else "")
    if minor:
        text += ("; " if parts else "") + ", ".join(f"{kind} '{getattr(settings, kind)}' ({FIXES[kind][0]})"
                                                    for kind in minor)
    return text + "."


def model_name(spec: str) -> str:
    """'open_clip:hf-hub:imageomics/bioclip-2' -> 'bioclip-2'; 'transformers:/models/x' -> 'x'."""
    return str(spec).rstrip("/").rsplit("/", 1)[-1].rsplit(":", 1)[-1]


def hub_line(label: str, count: int, licences: list[str], settings: Any, card_licence: str = "",
             judged: bool = True) -> str:
    """What a hub corpus is and which models search it: '4000 photos from INQUIRE-Rerank (validation split),
    under CC BY-NC 4.0 (the dataset card's licence; each photo shows its own licence and rights holder);
    searched with bioclip, checked by SmolVLM-256M-Instruct.' Without a licence on the card, the photos'
    licence values, saying where they came from. `judged` False (the judge failed its check): no 'checked by'."""
    shown = ", ".join(licences[:4]) + (f" and {len(licences) - 4} more" if len(licences) > 4 else "")
    what = f"{count} photos from {label}" if count else f"{label}, being prepared"
    if card_licence:
        lic = f", under {card_licence} (the dataset card's licence; each photo shows its own licence and rights holder)"
    elif shown:
        lic = (f", licences {shown} (from the photos' licence column, as the dataset card names none; each photo "
               "shows its rights holder)")
    else:
        lic = ""
    models = f"; searched with {model_name(settings.embedder)}" + (
        f", checked by {model_name(settings.judge)}" if judged else "")
    return f"{what}{lic}{models}."


def models_phrase(settings: Any, described: Mapping[str, Mapping[str, Any]] | None = None) -> str:
    """Which models search, in a few words: 'stand-in models', 'bioclip-2, checked by SmolVLM-256M',
    'bioclip-2 and stand-in judge, generator'."""
    fake = standins(settings, described)
    if "embedder" in fake:
        return "stand-in models"
    real = model_name(settings.embedder) + ("" if "judge" in fake else f", checked by {model_name(settings.judge)}")
    major = [kind for kind in fake if kind not in ("llm", "captioner")]
    return real + (f" and stand-in {', '.join(major)}" if major else "")


def headline(settings: Any, described: Mapping[str, Mapping[str, Any]] | None, corpus: str,
             counts: tuple[int, int] | None = None, fileless: int = 0) -> str:
    """The banner in one short line (the page shows the whole banner_for text one click away): what is searched,
    with which models. '' where banner_for says nothing."""
    if not banner_for(settings, described, corpus, counts):
        return ""
    demo, own = counts or (0, 0)
    models = models_phrase(settings, described)
    if corpus == SYNTHETIC:
        size = f"{_photos(demo)} of invented species" if demo else "invented species"
        return f"SYNTHETIC DEMO: {size}; {models}"
    if demo or own:
        return f"Searching {searched(demo, own, fileless)} with {models}"
    return f"Searching with {models}"
