"""Checking a Camtrap DP package against the Camtrap DP 1.0.x profile and table schemas that the project ships
(core/camtrap/schemas/1.0, from tdwg/camtrap-dp 1.0.2, MIT), never against copies on the network.

The descriptor is checked against the profile (a JSON Schema) with `jsonschema`, its references resolved to
shipped copies only: the Data Package profile (schemas/frictionless, from frictionlessdata/specs, public
domain) and the GeoJSON schema that `frictionless` carries. The three tables are checked by `frictionless`
with each resource's schema URL replaced by the shipped schema and the package profile left out (frictionless
would fetch it), so nothing is fetched at all. A problem of the descriptor or of a table's header refuses the
package; a problem of a row (a cell of the wrong type, a missing required value, a foreign key that points
nowhere) is returned with the row and the field, for that row to be skipped."""
from __future__ import annotations

import copy
import json
import logging
import re
from dataclasses import dataclass, field
from importlib import resources
from pathlib import Path

from core.contracts.errors import InputError

log = logging.getLogger(__name__)

SCHEMAS = Path(__file__).with_name("schemas")
TABLES = ("deployments", "media", "observations")
SHIPPED_VERSION = "1.0.2"
# what a 1.0.x package names: https://raw.githubusercontent.com/tdwg/camtrap-dp/1.0.1/media-table-schema.json
_URL = re.compile(r"https?://raw\.githubusercontent\.com/tdwg/camtrap-dp/(1\.0(?:\.\d+)?)/"
                  r"(camtrap-dp-profile|deployments-table-schema|media-table-schema|observations-table-schema)\.json")
DATA_PACKAGE_URL = "https://specs.frictionlessdata.io/schemas/data-package.json"
GEOJSON_URL = "http://json.schemastore.org/geojson.json"
MAX_DESCRIPTOR_PROBLEMS = 10
MAX_ROW_PROBLEMS = 100_000  # past this the check stops: the package is refused rather than read unchecked
FIX_VERSION = ("Camtrap DP 1.0.x packages are read (the profile URL "
               "https://raw.githubusercontent.com/tdwg/camtrap-dp/1.0.2/camtrap-dp-profile.json); convert an older "
               "package with camtrapdp (R) or re-export it from its platform")


@dataclass
class Checked:
    """The outcome of a check that did not refuse the package: the bad rows, by resource and row number (the
    header is row 1), each with its reasons; notices about the package as a whole."""

    version: str
    bad_rows: dict[tuple[str, int], list[str]] = field(default_factory=dict)
    notices: list[str] = field(default_factory=list)


def shipped(name: str) -> dict:
    """A shipped Camtrap DP file by its stem ('media-table-schema', 'camtrap-dp-profile')."""
    return json.loads((SCHEMAS / "1.0" / f"{name}.json").read_text(encoding="utf-8"))


def version_of(descriptor: dict) -> str:
    """The Camtrap DP version the package's profile names; InputError when it names none of 1.0.x."""
    profile = str(descriptor.get("profile") or descriptor.get("$schema") or "")
    m = _URL.fullmatch(profile)
    if not m or m.group(2) != "camtrap-dp-profile":
        raise InputError("This data package is not a Camtrap DP 1.0 package "
                         f"(its profile is {profile or 'not given'!r})",
                         FIX_VERSION)
    return m.group(1)


def check(descriptor: dict, folder: Path) -> Checked:
    """Check the package in `folder` (its descriptor already read); InputError when it cannot be read at all."""
    version = version_of(descriptor)
    out = Checked(version)
    if version != SHIPPED_VERSION:
        out.notices.append(f"the package is Camtrap DP {version}; it was checked against the shipped "
                           f"{SHIPPED_VERSION} profile and schemas")
    problems = profile_problems(descriptor)
    if problems:
        raise InputError("datapackage.json does not meet the Camtrap DP profile: " + "; ".join(problems),
                         "correct those properties of the descriptor (https://camtrap-dp.tdwg.org/metadata/)")
    _check_tables(_offline_descriptor(descriptor), folder, out)
    return out


def profile_problems(descriptor: dict) -> list[str]:
    """What the descriptor breaks of the shipped profile (each with its place), at most a few."""
    import jsonschema
    from referencing import Registry, Resource
    from referencing.exceptions import NoSuchResource

    known = {DATA_PACKAGE_URL: json.loads((SCHEMAS / "frictionless" / "data-package.json").read_text(encoding="utf-8")),
             GEOJSON_URL: json.loads(resources.files("frictionless").joinpath("assets/profiles/geojson.json")
                                     .read_text(encoding="utf-8"))}

    def retrieve(uri: str):
        if uri.rstrip("#") in known:
            return Resource.from_contents(known[uri.rstrip("#")])
        raise NoSuchResource(ref=uri)  # never fetched: only the shipped schemas are used

    profile = shipped("camtrap-dp-profile")
    validator = jsonschema.Draft4Validator(profile, registry=Registry(retrieve=retrieve),
                                           format_checker=jsonschema.Draft4Validator.FORMAT_CHECKER)
    problems = []
    for error in sorted(validator.iter_errors(_as_shipped_version(descriptor)), key=lambda e: list(e.absolute_path)):
        problems.append(_describe(error))
        if len(problems) >= MAX_DESCRIPTOR_PROBLEMS:
            break
    return problems


def _as_shipped_version(descriptor: dict) -> dict:
    """A copy whose Camtrap DP URLs name the shipped version (the 1.0.2 profile asks for 1.0.2 URLs; a 1.0 or
    1.0.1 package is checked against 1.0.2, as its notice says)."""
    def swap(text):
        m = _URL.fullmatch(text) if isinstance(text, str) else None
        return text.replace(f"/{m.group(1)}/", f"/{SHIPPED_VERSION}/") if m else text
    d = copy.deepcopy(descriptor)
    d["profile"] = swap(d.get("profile"))
    for res in d.get("resources") or []:
        if isinstance(res, dict) and "schema" in res:
            res["schema"] = swap(res["schema"])
    return d


_TYPE_NOTE = re.compile(r'type is "(\w+)(?:/(.*))?"')


def _where(error) -> str:
    return "/".join(str(p) for p in error.absolute_path) or "(top level)"


def _describe(error) -> str:
    """Where and what: for a value that meets none of several allowed forms, what each form found wrong."""
    if error.context:
        return " or ".join(sorted({f"{_where(c)}: {c.message[:200]}" for c in error.context})[:3])
    return f"{_where(error)}: {error.message[:300]}"


def _note(error) -> str:
    """frictionless' note, with a type error said in words ('type is "number/default"': 'is not a number')."""
    m = _TYPE_NOTE.fullmatch(str(error.note or "")) if error.type == "type-error" else None
    if not m:
        return str(error.note)
    kind, form = m.group(1), m.group(2)
    return f"is not a {kind}" + (f" of the form {form}" if form and form not in ("default", "any") else "")


def _offline_descriptor(descriptor: dict) -> dict:
    """The descriptor as frictionless is to read it: each Camtrap DP table's schema URL replaced by the shipped
    schema, the package profile left out (already checked); a table without a resource is refused."""
    d = copy.deepcopy(descriptor)
    d.pop("profile", None)
    d.pop("$schema", None)
    names = set()
    for res in d.get("resources") or []:
        if not isinstance(res, dict):
            continue
        name = res.get("name")
        names.add(name)
        schema = res.get("schema")
        if name in TABLES:
            m = _URL.fullmatch(str(schema or ""))
            if not m or m.group(2) != f"{name}-table-schema":
                raise InputError(f"resource {name!r} names the schema {schema!r}, not the Camtrap DP 1.0 "
                                 f"{name} table schema", FIX_VERSION)
            res["schema"] = shipped(f"{name}-table-schema")
            res.pop("profile", None)
    missing = [t for t in TABLES if t not in names]
    if missing:
        raise InputError(f"datapackage.json has no {', '.join(missing)} resource", FIX_VERSION)
    # other resources (a package may add its own) are kept out of the check: they are not read, and their
    # schemas or data may be URLs
    d["resources"] = [r for r in d.get("resources") or [] if isinstance(r, dict) and r.get("name") in TABLES]
    return d


def _check_tables(descriptor: dict, folder: Path, out: Checked) -> None:
    from frictionless import FrictionlessException, Package

    for res in descriptor["resources"]:
        path = res.get("path")
        if not isinstance(path, str) or "://" in path or not (folder / path).is_file():
            raise InputError(f"the {res['name']} table {path!r} is not a file in {folder}",
                             "keep deployments.csv, media.csv and observations.csv beside datapackage.json")
    try:
        report = Package(descriptor, basepath=str(folder)).validate(limit_errors=MAX_ROW_PROBLEMS)
    except (FrictionlessException, OSError, ValueError) as exc:  # a descriptor frictionless cannot read
        raise InputError(f"the package's tables cannot be read ({type(exc).__name__}: {exc})",
                         "check datapackage.json's resources (name, path, format csv)") from None
    for task in report.tasks:
        fatal = []
        for error in task.errors:
            row = getattr(error, "row_number", None)
            if row is None:
                fatal.append(f"{error.type}: {error.message}")
                continue
            fields = getattr(error, "field_names", None) or [getattr(error, "field_name", "")]
            what = ", ".join(f for f in fields if f) or "the row"
            cell = getattr(error, "cell", None)
            value = f" {cell!r}" if isinstance(cell, str) and cell else ""
            out.bad_rows.setdefault((task.name, int(row)), []).append(f"{what}{value}: {_note(error)}")
        if fatal:
            raise InputError(f"{task.name}.csv cannot be read: " + "; ".join(fatal[:5]),
                             "give the table the Camtrap DP columns (https://camtrap-dp.tdwg.org/data/)")
    if sum(len(t.errors) for t in report.tasks) >= MAX_ROW_PROBLEMS:
        raise InputError(f"the package's tables have more than {MAX_ROW_PROBLEMS} problems (the first: "
                         + "; ".join(f"{t} row {r}: {', '.join(w)}"
                                     for (t, r), w in list(out.bad_rows.items())[:3]) + ")",
                         "correct the tables (or re-export the package from its platform) and ingest it again")
    log.info("camtrap-dp check of %s: %d bad rows", folder, len(out.bad_rows))
