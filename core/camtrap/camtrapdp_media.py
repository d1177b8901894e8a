"""The media files of a Camtrap DP package being written: each medium's mediaID and filePath.

A medium that came from a URL keeps its URL. A file on disk is copied into the package, at the relative path
its source package gave it when that path is safe (so a package round-trips unchanged), else into media/
under its own file name (made unique with its mediaID where two frames share a name). Every filePath meets the
media table schema's pattern (relative, never starting with '.', '/' or '~', no '..'). A file that cannot be
copied keeps its filePath and is counted in `missing`, for a notice."""
from __future__ import annotations

import logging
import re
import shutil
from pathlib import Path, PurePosixPath

from core.contracts.camtrap import Capture
from core.contracts.records import Photo

log = logging.getLogger(__name__)

FOLDER = "media"
REMOTE = ("http://", "https://")
_SAFE = re.compile(r"^(?=[^./~])(?!.*\.\.)[^\\:]+$")  # the schema's filePath pattern, and no \ or : (Windows)


def public_name(text: str) -> str:
    """A bare file name that the filePath pattern accepts (no folders, no '..', no leading dot or tilde)."""
    return Path(text.replace("\\", "/")).name.replace("..", ".").lstrip(".~") or "medium"


def media_id(c: Capture, photo: Photo, photo_id: int, taken: set[str]) -> str:
    """The source's mediaID, else the start of the photo's content hash (the same in every catalog), all of it
    where two start alike, else the photo's id."""
    if c.media_key:
        return c.media_key
    digest = photo.sha256 if photo.sha256 and ":" not in photo.sha256 else ""
    return next((m for m in (digest[:16], digest) if m and m not in taken), f"p{photo_id}")


class MediaFiles:
    def __init__(self, package: Path):
        self.package = package
        self.taken: set[str] = set()  # filePaths given out (case-folded: two names one file on some disks)
        self.copied = 0
        self.missing: list[str] = []  # mediaIDs whose file could not be copied

    def _free(self, rel: str) -> bool:
        return rel.casefold() not in self.taken

    def place(self, photo: Photo, c: Capture, mid: str) -> tuple[str, str]:
        """(filePath, fileName) of one medium, its file copied into the package when it has one on disk."""
        given = str((c.extra or {}).get("filePath") or "").strip()
        name = c.file_name or public_name(photo.path or mid)
        if (photo.path or "").startswith(REMOTE):
            return photo.path, name
        if given.startswith(REMOTE):
            return given, name
        rel = given if _SAFE.match(given) and PurePosixPath(given).suffix else f"{FOLDER}/{public_name(name)}"
        if not self._free(rel):
            rel = f"{FOLDER}/{public_name(mid)}-{public_name(name)}"
        self.taken.add(rel.casefold())
        target = self.package / rel
        try:
            target.parent.mkdir(parents=True, exist_ok=True)
            shutil.copyfile(photo.path, target)
            self.copied += 1
        except OSError as exc:
            log.warning("medium %s: file %s not copied: %s", mid, photo.path, exc)
            self.missing.append(mid)
        return rel, name
