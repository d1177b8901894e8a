"""How every view shows a picture: the one function gallery and image code calls.

A page shows a catalog photo by its id (`photo_file`, `gallery`) and a generated picture by the path the
engine reported (`pictures`); both come back as copies in the served folder (core.served), never as the
original file. Photos whose file is gone show a placeholder, and the views say so with a notice."""
from __future__ import annotations

from typing import Any, Sequence
from urllib.parse import quote

from core.camtrap.people import person_boxes
from core.contracts.records import Photo
from core.served import ServedFiles
from ui import present
from ui import strings as S


def served_files(settings: Any) -> ServedFiles:
    """The served folder of these settings (data_dir/served); the server allows it and nothing else there."""
    return ServedFiles(settings.path("served"), [settings.path("generated"), settings.path("artefacts")],
                       settings.max_image_pixels)


class PhotoFiles:
    def __init__(self, engine: Any):
        """`engine`: core.search.engine.SearchEngine (its corpus answers which photo an id is)."""
        self.corpus = engine.corpus
        self.settings = engine.settings
        self.served = served_files(engine.settings)

    def people(self, ids: Sequence[int]) -> dict[int, list]:
        """photo id -> the person boxes to keep from a viewer who is not logged in (setting hide_people). A web
        app with a password or a users file has only logged-in viewers: nothing is kept from them; without one
        every viewer counts as not logged in (a Hugging Face login on a Space is not told apart yet: people stay
        blurred)."""
        store = getattr(self.corpus, "camtrap", None)
        mode = self.settings.hide_people
        logins = self.settings.password or self.settings.users_file
        if store is None or mode == "show" or logins or not ids:
            return {}
        threshold = float(self.settings.detection_threshold)
        found = {pid: person_boxes(dets, threshold) for pid, dets in store.detections(list(ids)).items()}
        return {pid: boxes for pid, boxes in found.items() if boxes}

    def files(self, ids: Sequence[int], size: str = "thumb", boxes: dict[int, dict] | None = None,
              edits: dict[int, Any] | None = None, logged_in: bool = False) -> tuple[list[str], list[str]]:
        """(file per id, notices): the served copy of each catalog photo at `size` ('thumb' or 'view'), or a
        placeholder; the notices say which photos could not be shown and why. `boxes`: photo id -> the detection
        its match went through (a hit's matched_detection), drawn on that photo's copy; `edits`: photo id ->
        what is drawn instead (the photo view's boxes: ui.camtrap_form.CamtrapPage.view_edit); `logged_in`: the
        view knows its viewer is logged in (a Hugging Face login on a Space): people are not kept from them."""
        ids = [int(i) for i in ids]
        photos = {p.id: p for p in self.corpus.photos(ids)} if ids else {}
        people = {} if logged_in else self.people(ids)
        paths, missing = [], []
        for i in ids:
            if people.get(i) and self.settings.hide_people == "hide":
                paths.append(str(self.served.placeholder(size)))
                missing.append((i, S.PERSON_WITHHELD.format(photo=i)))
                continue
            got = self.served.photo(photos.get(i), size, (boxes or {}).get(i), people.get(i, ()),
                                    (edits or {}).get(i))
            paths.append(str(got.path))
            if got.missing:
                missing.append((i, got.missing))
        return paths, summarise(missing)

    def photo_file(self, photo_id: int, size: str = "view", box: dict | None = None, edit: Any = None,
                   logged_in: bool = False) -> tuple[str, list[str]]:
        """(file, notices) for one catalog photo (with `box` drawn on it, or `edit` applied, when given)."""
        paths, notices = self.files([photo_id], size, {int(photo_id): box} if box else None,
                                    {int(photo_id): edit} if edit else None, logged_in)
        return paths[0], notices

    def gallery(self, hits: Sequence[dict[str, Any]], stages: dict[str, Any] | None = None,
                scale: str | None = None, logged_in: bool = False) -> tuple[list[tuple[str, str]], list[str]]:
        """(gallery items, notices) for result hits (dicts with id, rank, score, names); captions show the
        score on `scale` (default: the scale the stages call for, ui.present.scale_of)."""
        boxes = {int(h["id"]): h["matched_detection"] for h in hits if h.get("matched_detection")}
        paths, notices = self.files([h["id"] for h in hits], boxes=boxes, logged_in=logged_in)
        return present.gallery_items(hits, stages, paths, scale), notices

    def example(self, upload: str | None) -> str | None:
        """A served thumbnail of the user's own example photo (an upload already checked by ui.forms), so the
        page can show it beside the drawings; None when there is none or it cannot be read."""
        if not upload:
            return None
        got = self.served.photo(Photo(path=str(upload), id=0), "thumb")
        return None if got.missing else str(got.path)

    def picture_url(self, path: str | None) -> str | None:
        """The page-relative URL of a generated picture's served copy (for an <img> in HTML), None when it
        cannot be shown."""
        if not path:
            return None
        got = self.served.picture(path)
        return None if got.missing else file_url(str(got.path))

    def pictures(self, items: Sequence[tuple[str, str]]) -> list[tuple[str, str]]:
        """Generated pictures [(path, caption)] as served copies (a placeholder for one that is gone)."""
        out = []
        for path, caption in items:
            got = self.served.picture(path)
            out.append((str(got.path), f"{caption} · {S.PICTURE_GONE}" if got.missing else caption))
        return out


def file_url(path: str) -> str:
    """The URL of a served copy, relative to the page (so the app works under a path prefix too)."""
    return "gradio_api/file=" + quote(str(path))


def summarise(missing: Sequence[tuple[int, str]]) -> list[str]:
    """One notice per photo for a few, one line for many."""
    if len(missing) <= 3:
        return [reason for _, reason in missing]
    ids = ", ".join(str(i) for i, _ in missing[:10]) + (", ..." if len(missing) > 10 else "")
    return [S.PHOTOS_MISSING.format(n=len(missing), ids=ids, first=missing[0][1])]
