"""The descriptor (datapackage.json) of a Camtrap DP package that EcoLens writes.

Its metadata comes from the package the deployments were imported from, when they all came from one (the
store keeps each imported package's descriptor without its resources), else from the settings
camtrap_project_title, camtrap_contributor, camtrap_contributor_email, camtrap_sampling_design,
camtrap_license and camtrap_media_license. What the data itself says is always computed from what is written:
the spatial coverage (the deployments' bounding box, GeoJSON), the temporal coverage (first deployment start,
last deployment end), the taxa (with the source's taxon ids and vernacular names where it gave them), the
capture methods, the observation levels and whether individuals are recognised."""
from __future__ import annotations

import logging
import uuid
from datetime import datetime, timezone
from typing import Any, Iterable, Mapping, Sequence

log = logging.getLogger(__name__)

VERSION = "1.0.2"
BASE_URL = f"https://raw.githubusercontent.com/tdwg/camtrap-dp/{VERSION}/"
PROFILE_URL = BASE_URL + "camtrap-dp-profile.json"
TABLES = ("deployments", "media", "observations")
# the standard's own descriptor members computed from the data, never copied from a source package
COMPUTED = ("resources", "profile", "created", "spatial", "temporal", "taxonomic")
DEFAULT_TITLE = "Camera-trap data exported from EcoLens"


def source_for(store: Any, deployments: Sequence[Any]) -> dict | None:
    """The metadata of the one imported package all `deployments` came from (each Deployment's
    extra["package"], the store's packages()), else None."""
    keys = {(d.extra or {}).get("package") for d in deployments}
    if len(keys) != 1 or None in keys:
        return None
    found = (store.packages() if hasattr(store, "packages") else {}).get(keys.pop())
    return dict(found) if isinstance(found, dict) else None


def _spatial(places: Sequence[tuple[float, float]]) -> dict:
    lats, lons = [p[0] for p in places], [p[1] for p in places]
    if min(lats) == max(lats) and min(lons) == max(lons):
        return {"type": "Point", "coordinates": [lons[0], lats[0]]}
    w, s, e, n = min(lons), min(lats), max(lons), max(lats)
    return {"type": "Polygon", "coordinates": [[[w, s], [e, s], [e, n], [w, n], [w, s]]]}


def _taxa(names: Iterable[str], source: Sequence[Mapping[str, Any]]) -> list[dict]:
    given = {str(t.get("scientificName")): dict(t) for t in source if isinstance(t, Mapping)}
    return [given.get(n, {"scientificName": n}) for n in sorted({n for n in names if n})]


def _from_settings(settings: Any) -> tuple[dict, list[str]]:
    notices = []
    who = str(settings.camtrap_contributor or "").strip()
    if not who:
        notices.append("the package names no contributor (set camtrap_contributor, and camtrap_contributor_email)")
    person = {"title": who or "unknown", "role": "contact"}
    email = str(settings.camtrap_contributor_email or "").strip()
    if email:
        person["email"] = email
    title = str(settings.camtrap_project_title or "").strip() or DEFAULT_TITLE
    design = settings.camtrap_sampling_design
    meta: dict[str, Any] = {"name": "ecolens-camtrap-export", "id": str(uuid.uuid4()), "title": title,
                            "contributors": [person], "project": {"title": title, "samplingDesign": design}}
    data, media = (str(getattr(settings, k) or "").strip() for k in ("camtrap_license", "camtrap_media_license"))
    if data and media:
        meta["licenses"] = [_licence(data, "data"), _licence(media, "media")]
    else:
        notices.append("the package states no licences (set camtrap_license for the data and "
                       "camtrap_media_license for the media files)")
    return meta, notices


def _in_order(found: set[str], given: Any) -> list[str]:
    """The values found in the data, in the order the source listed them (the rest sorted after)."""
    first = [v for v in given if v in found] if isinstance(given, list) else []
    return first + sorted(found - set(first))


def _licence(text: str, scope: str) -> dict:
    return {"path": text, "scope": scope} if "://" in text else {"name": text, "scope": scope}


def descriptor(settings: Any, deployments: Sequence[Mapping[str, Any]], media: Sequence[Mapping[str, Any]],
               observations: Sequence[Mapping[str, Any]], source: Mapping[str, Any] | None = None
               ) -> tuple[dict, list[str]]:
    """(datapackage.json's content, notices) for the rows written (Camtrap DP column names)."""
    notices: list[str] = []
    if source:
        meta = {k: v for k, v in source.items() if k not in COMPUTED}
    else:
        meta, notices = _from_settings(settings)
    project = dict(meta.get("project") or {})
    project.setdefault("title", meta.get("title") or DEFAULT_TITLE)
    project.setdefault("samplingDesign", settings.camtrap_sampling_design)
    project["captureMethod"] = _in_order({m["captureMethod"] for m in media if m.get("captureMethod")},
                                         project.get("captureMethod")) or ["activityDetection"]
    project["individualAnimals"] = any(o.get("individualID") for o in observations)
    project["observationLevel"] = _in_order({o["observationLevel"] for o in observations},
                                            project.get("observationLevel")) or ["media"]
    meta["project"] = project
    resources = [{"name": t, "path": f"{t}.csv", "profile": "tabular-data-resource", "format": "csv",
                  "mediatype": "text/csv", "encoding": "utf-8", "schema": BASE_URL + f"{t}-table-schema.json"}
                 for t in TABLES]
    inline = [r for r in (source or {}).get("resources") or [] if isinstance(r, dict) and "data" in r]
    starts = [str(d["deploymentStart"])[:10] for d in deployments]
    ends = [str(d["deploymentEnd"])[:10] for d in deployments]
    out = {"resources": resources + inline, "profile": PROFILE_URL,
           "created": datetime.now(timezone.utc).strftime("%Y-%m-%dT%H:%M:%SZ"), **meta,
           "spatial": _spatial([(float(d["latitude"]), float(d["longitude"])) for d in deployments]),
           "temporal": {"start": min(starts), "end": max(ends)},
           "taxonomic": _taxa((o.get("scientificName") for o in observations), (source or {}).get("taxonomic") or [])}
    return out, notices
