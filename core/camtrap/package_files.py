"""Where a Camtrap DP package lies: a folder holding datapackage.json, that file itself, or a .zip of it (as
Agouti exports). A zip is unpacked once under the data directory, bounded in member count and size and never
outside its folder, so that the catalog's paths to its media stay valid after the ingest."""
from __future__ import annotations

import json
import logging
import shutil
import zipfile
from pathlib import Path, PurePosixPath

from core.contracts.errors import InputError

log = logging.getLogger(__name__)

DESCRIPTOR = "datapackage.json"
MAX_MEMBERS = 1_000_000  # files in one zip
MAX_UNPACKED_BYTES = 200 * 1024**3  # 200 GB: a season of a large project with its media
MAX_DESCRIPTOR_BYTES = 50 * 1024**2
FIX = "give ingest a folder holding datapackage.json, that file, or a .zip with datapackage.json at its top"


def is_package(path: Path) -> bool:
    """Whether `path` is to be read as a data package (rather than a folder of photos, a CSV, a parquet)."""
    if path.is_dir():
        return (path / DESCRIPTOR).is_file()
    return path.suffix.lower() in (".zip", ".json")


def locate(path: Path, unpack_to: Path) -> Path:
    """The folder holding the package's datapackage.json (a zip is unpacked into `unpack_to` first)."""
    if path.is_dir():
        return path
    if path.suffix.lower() == ".json":
        return path.parent
    return _unpack(path, unpack_to)


def read_descriptor(folder: Path) -> dict:
    f = folder / DESCRIPTOR
    try:
        if f.stat().st_size > MAX_DESCRIPTOR_BYTES:
            raise InputError(f"{f} is larger than {MAX_DESCRIPTOR_BYTES >> 20} MB",
                             "check that it is a package descriptor")
        data = json.loads(f.read_text(encoding="utf-8"))
    except FileNotFoundError:
        raise InputError(f"{folder} holds no {DESCRIPTOR}", FIX) from None
    except UnicodeDecodeError:
        raise InputError(f"{f} is not UTF-8 text", "save the descriptor as UTF-8 JSON") from None
    except json.JSONDecodeError as exc:
        raise InputError(f"{f} is not valid JSON (line {exc.lineno}, column {exc.colno}: {exc.msg})",
                         "correct the JSON (a validator such as `python -m json.tool` shows where)") from None
    if not isinstance(data, dict):
        raise InputError(f"{f} is not a JSON object", "a data package descriptor is an object with resources")
    return data


def _unpack(zip_path: Path, target: Path) -> Path:
    """Unpack the zip into `target` (once: a finished unpacking is marked and reused), refusing members that
    would land outside it, links, too many members or too many bytes."""
    done = target / ".unpacked"
    if done.is_file() and done.read_text() == _fingerprint(zip_path):
        return _package_root(target, zip_path)
    try:
        archive = zipfile.ZipFile(zip_path)
    except (zipfile.BadZipFile, OSError) as exc:
        raise InputError(f"{zip_path.name} is not a readable zip file ({exc})",
                         "download the package again, or unzip it and give ingest the folder") from None
    with archive:
        members = archive.infolist()
        names = [m.filename for m in members]
        if not any(PurePosixPath(n).name == DESCRIPTOR for n in names):
            raise InputError(f"{zip_path.name} is not a data package: it holds no {DESCRIPTOR}", FIX)
        if len(members) > MAX_MEMBERS or sum(m.file_size for m in members) > MAX_UNPACKED_BYTES:
            raise InputError(f"{zip_path.name} holds more than {MAX_MEMBERS} files or "
                             f"{MAX_UNPACKED_BYTES >> 30} GB unpacked", "unzip it yourself and give ingest the folder")
        for m in members:
            p = PurePosixPath(m.filename)
            link = (m.external_attr >> 16) & 0o170000 == 0o120000
            if p.is_absolute() or ".." in p.parts or "\\" in m.filename or link:
                raise InputError(f"{zip_path.name}: member {m.filename!r} would be written outside the package "
                                 "folder (or is a link)",
                                 "unzip it yourself, check its contents, and give ingest the folder")
        if target.exists():
            shutil.rmtree(target)  # an unpacking that was interrupted
        target.mkdir(parents=True)
        written = 0
        for m in members:
            if m.is_dir():
                continue
            out = target / m.filename
            out.parent.mkdir(parents=True, exist_ok=True)
            with archive.open(m) as src, open(out, "wb") as dst:
                while chunk := src.read(1 << 20):
                    written += len(chunk)
                    if written > MAX_UNPACKED_BYTES:  # sizes in the directory can lie
                        raise InputError(f"{zip_path.name} unpacks to more than {MAX_UNPACKED_BYTES >> 30} GB",
                                         "unzip it yourself and give ingest the folder")
                    dst.write(chunk)
    done.write_text(_fingerprint(zip_path))
    log.info("unpacked %s into %s (%d bytes)", zip_path, target, written)
    return _package_root(target, zip_path)


def _fingerprint(zip_path: Path) -> str:
    st = zip_path.stat()
    return f"{st.st_size}:{st.st_mtime_ns}"


def _package_root(target: Path, zip_path: Path) -> Path:
    """The unpacked folder holding datapackage.json (at the top, or in the one folder the zip wraps it in)."""
    found = sorted(target.rglob(DESCRIPTOR), key=lambda p: len(p.parts))
    if not found:
        raise InputError(f"{zip_path.name} is not a data package: it holds no {DESCRIPTOR}", FIX)
    return found[0].parent
