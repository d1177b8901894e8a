"""The ingest's detections step: a detector's results file (MegaDetector / SpeciesNet) read and checked before
anything is written, then, at the end of every ingest with a camera-trap store, its boxes applied to the photos
of the folder (core.ingest.detections_file) and the crops of every box without a vector in the vector set
embedded (core.camtrap.crops). core.ingest.ingestor runs it."""
from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING

from core.backends.base import Embedder
from core.config import Settings
from core.contracts.camtrap import CamtrapStore
from core.contracts.catalog import Catalog, VectorSet
from core.contracts.errors import InputError
from core.ingest.state import IngestReport

if TYPE_CHECKING:
    from core.camtrap.megadetector import Results

# a results file as the step reads it: (the file, its parsed results)
ResultsFile = tuple[Path, "Results"]


def read(camtrap: CamtrapStore | None, path: str | Path, detections: str | Path) -> ResultsFile:
    """The results file `detections` for the folder `path`, read and checked (before the ingest writes anything);
    InputError when there is no camera-trap store to keep them or `path` is not a folder."""
    from core.camtrap.megadetector import read_results

    if camtrap is None:
        raise InputError("This catalog has no camera-trap store, so detections cannot be kept",
                         "upgrade the catalog (any `python app.py` command does) and ingest again")
    if not Path(str(path)).is_dir():
        raise InputError(f"--detections goes with a folder of photos; {path} is not a folder",
                         "give the folder the results file's paths are relative to")
    return Path(str(detections)), read_results(detections)


def run(path: Path | None, vs: VectorSet, report: IngestReport, results: ResultsFile | None, *, catalog: Catalog,
        camtrap: CamtrapStore, embedder: Embedder, index_root: Path, settings: Settings) -> None:
    """A results file's boxes (when given), then the crops of every box without a vector in `vs` (the crop index
    lives in `index_root`, beside the vector set's index)."""
    from core.camtrap.crop_index import CropIndex
    from core.camtrap.crops import embed_crops
    from core.camtrap.crops import reconcile as reconcile_crops
    from core.ingest.decode import decode_workers
    from core.ingest.detections_file import apply_results

    s = settings
    crops = CropIndex(index_root, vs.id, vs.dim).load()
    if crops.damage:
        report.notices.append(f"crop index: {crops.damage}; it starts again empty")
    report.notices += reconcile_crops(camtrap, crops, vs.id)
    if results is not None:
        file, parsed = results
        report.ignored = [n for n in report.ignored if Path(n).resolve() != file.resolve()]
        applied = apply_results(parsed, path, catalog, camtrap, s.detection_threshold)
        report.notices += applied.summary(file.name, s.detection_threshold)
        if crops.remove(applied.removed_ids):
            crops.save()
    done = embed_crops(camtrap, crops, embedder, vs.id,
                       lambda ids: {p.id: p.path for p in catalog.get_photos(ids)},
                       threshold=s.detection_threshold, margin=s.crop_margin, batch_size=s.batch_size,
                       max_pixels=s.max_image_pixels, workers=decode_workers(s.ingest_workers),
                       checkpoint_s=s.checkpoint_s)
    report.crops = done.embedded
    report.notices += done.notices()
