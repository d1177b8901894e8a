"""Ingest: read photos from a source, skip duplicates and broken files with reasons, embed them, and add
them to the catalog and the index. Resumable (the index is checkpointed, the catalog follows it) and
incremental (known content hashes are not embedded twice).

Three phases whatever the engine: scan and hash (deduplicated against the catalog), embed (the local
engine's decoding threads, or Ray Data actors), commit on this process (the one SQLite writer, FAISS and
its checkpoints). A parquet of precomputed vectors skips the embedding (core.ingest.precomputed)."""
from __future__ import annotations

import fcntl
import logging
import time
from concurrent.futures import Future, ThreadPoolExecutor
from itertools import chain
from pathlib import Path
from typing import Callable

from core.backends.base import Embedder
from core.camtrap import card as camtrap_card
from core.config import Settings
from core.contracts.camtrap import CamtrapStore
from core.contracts.catalog import Catalog, VectorSet
from core.contracts.errors import InputError
from core.contracts.records import Photo
from core.ingest import companion_vectors, detections_step, downloads
from core.ingest.sources import scan
from core.ingest.state import Deduper, EmbeddedBatch, IngestReport
from core.vectors.gpu import choose as choose_gpu
from core.vectors.index import VectorIndex
from core.vectors.index_store import IndexStore
from core.vectors.threads import set_threads
from core.vectors.threads import threads as faiss_threads

__all__ = ["Ingestor", "IngestReport"]

log = logging.getLogger(__name__)

Progress = Callable[[int, int], None]  # (done, total)
RETRAIN_GROWTH = 16  # an IVF index trained on N vectors serves up to this many times N well
# source kinds that say what their photos show (not folders)
METADATA_SOURCES = ("inat-csv", "inquire-parquet", "camtrap-dp")
FIELD_WORDS = {"scientific_name": "species", "observed_on": "date", "common_name": "common name",
               "class_name": "class", "rights_holder": "rights holder", "license": "licence"}


class Ingestor:
    def __init__(self, catalog: Catalog, index_store: IndexStore, embedder: Embedder, settings: Settings,
                 camtrap: CamtrapStore | None = None):
        """`camtrap`: the camera-trap store (core.contracts.camtrap.CamtrapStore): a Camtrap DP package writes its
        rows there, a card its capture facts, and every ingest ends by embedding the detections' crops that have
        no vector yet (core.camtrap.crops); None keeps none."""
        self.catalog, self.store, self.embedder, self.settings = catalog, index_store, embedder, settings
        self.camtrap = camtrap

    def run(self, path: str | Path, progress: Progress | None = None, *, engine: str | None = None,
            workers: int | None = None, model: str | None = None, detections: str | Path | None = None,
            deployments: str | None = None) -> IngestReport:
        """Ingest every photo of `path` (folder, CSV, INQUIRE parquet, a Camtrap DP package, or a parquet of
        precomputed vectors);
        raises InputError only if `path` itself is unusable or another ingest is writing to the same data
        directory. Bad photos are skipped and listed in the report. `engine`/`workers` override the
        ingest_engine/ingest_workers settings; `model` names the model of precomputed vectors; `detections`:
        a MegaDetector / SpeciesNet results file for the folder `path` (read and checked before anything is
        written; core.ingest.detections_step); `deployments`: a camera-trap
        deployments CSV (core.camtrap.deployments)."""
        results = detections_step.read(self.camtrap, path, detections) if detections is not None else None
        with self._locked():
            return self._run(Path(str(path)), progress, engine or self.settings.ingest_engine,
                             self.settings.ingest_workers if workers is None else workers, model,
                             results=results, deployments=deployments)

    def reembed(self, progress: Progress | None = None, *, retrain: bool = False) -> IngestReport:
        """Embed the catalog photos that have no vector in the current embedder's set (after a repair);
        `retrain`: train the approximate index again on the corpus as it is now."""
        with self._locked():
            return self._run(None, progress, self.settings.ingest_engine, self.settings.ingest_workers, None,
                             retrain=retrain)

    def _locked(self):
        settings = self.settings
        settings.path().mkdir(parents=True, exist_ok=True)

        class _Lock:
            def __enter__(inner):
                inner.fh = open(settings.path("ingest.lock"), "w")
                try:  # why: two ingests would both rewrite the index file and one's vectors would be lost
                    fcntl.flock(inner.fh, fcntl.LOCK_EX | fcntl.LOCK_NB)
                except BlockingIOError:
                    inner.fh.close()
                    raise InputError(f"Another ingest is running in {settings.path()}",
                                     "wait for it to finish, then run this ingest again") from None

            def __exit__(inner, *exc):
                fcntl.flock(inner.fh, fcntl.LOCK_UN)
                inner.fh.close()
        return _Lock()

    def _run(self, path: Path | None, progress: Progress | None, engine_name: str, workers: int,
             model: str | None, retrain: bool = False, results: detections_step.ResultsFile | None = None,
             deployments: str | None = None) -> IngestReport:
        started = time.perf_counter()
        from core.ingest.precomputed import is_precomputed, precomputed_batches

        known: list[tuple[int, Photo]] = []  # photos already in the catalog, with the source's metadata
        lookup = None  # precomputed vectors beside a hub dataset's parquet (core.ingest.companion_vectors)
        items: list = []

        precomputed = path is not None and is_precomputed(path)
        # a source that cannot be read is refused here, before anything is written
        source = self._scan(path) if path is not None and not precomputed else None
        if source is not None:  # photo URLs are fetched within the settings' time limit and address rule
            policy = downloads.DownloadPolicy.from_settings(self.settings)
            if source.hooks:
                source.hooks.bind(policy)
            else:
                downloads.bind(source.items, policy)
        # every photo's EXIF capture facts, a card's deployments and events (refuses a bad deployments CSV here); a
        # Camtrap DP package says all this itself (its hooks)
        plain = source if source is not None and not source.hooks else None
        card = camtrap_card.begin(self.camtrap, self.settings, plain, path, deployments) \
            if plain is not None or deployments else None
        vs = self.catalog.vector_set(self.embedder.model_id, self.embedder.dim)
        index, rec = self.store.open(vs, self.catalog, writer=True)
        index.gpu, gpu_notice = choose_gpu(self.settings.device)
        if retrain and index.approx is not None and index.has_flat:
            index.approx, index.approx_kind = None, "flat"
        report = IngestReport(source=str(path or "(catalog)"), engine=engine_name)
        report.notices += rec.notices() + ([gpu_notice] if gpu_notice else [])
        if source is not None:
            proxy = downloads.proxy_notice([str(i.photo.path) for i in source.items
                                            if str(i.photo.path or "").lower().startswith(("http://", "https://"))])
            report.notices += [proxy] if proxy else []
        run_id = self.catalog.start_ingest(str(path or "(re-embed)"))
        commit = _Committer(self, vs, index, run_id, report)
        if precomputed:
            report.kind, report.engine = "precomputed", "precomputed"
            total = 0
            self._start_compressed(path, vs, index, report)
            batches = precomputed_batches(path, self.embedder, self.catalog, vs, report, model, self.settings,
                                          known=known)
        else:
            items = list(source.items) if source else []
            report.kind, report.ignored = (source.kind, source.ignored) if source else ("catalog", [])
            report.notices += source.notices if source else []
            total = len(items)
            resume = self.catalog.get_photos(self.catalog.unindexed_ids(vs.id))
            dedupe = Deduper(self.catalog, report, self.settings.path("media"),
                             carries_metadata=bool(source) and source.kind in METADATA_SOURCES)
            known = dedupe.known
            lookup = self._companion(path, source.kind if source else "", vs, report)
            given, items = companion_vectors.split(items, lookup) if lookup else ([], items)
            known_vectors, resume = companion_vectors.resumed(resume, lookup) if lookup else ([], resume)
            embedded = self._engine(engine_name, workers, report).batches(resume, items, dedupe, report) \
                if resume or items or not (given or known_vectors) else iter(())
            batches = chain(known_vectors, companion_vectors.batches(given, lookup, dedupe, self.settings.batch_size),
                            embedded) if lookup else embedded
        done = 0
        with self.catalog.bulk_writes(self.settings.ingest_cache_mb):
            try:
                for batch in batches:
                    commit.add(batch)
                    done += batch.seen
                    if progress and batch.seen:
                        progress(done, max(total, done))
                commit.checkpoint()
            finally:
                commit.close()
        if lookup is not None:
            note = (f"{lookup.used} photos took their vectors from the precomputed file {lookup.source} beside the "
                    f"dataset (made by {vs.model_id.split('#', 1)[0]}): they were not embedded here"
                    + (f"; {len(items)} photos it has no vector for were embedded" if items else ""))
            log.info("ingest %s: %s", path, note)
            report.notices.append(note)
            report.vector_notes.append(note)
        if known:
            self._update_metadata(known, report)
        if source is not None and source.hooks:
            source.hooks.finish(self.catalog, self.camtrap, run_id, report)
        report.seen = total or done
        self._finish_index(vs, index, report)
        if self.camtrap is not None:
            detections_step.run(path, vs, report, results, catalog=self.catalog, camtrap=self.camtrap,
                                embedder=self.embedder, index_root=self.store.root, settings=self.settings)
        if card is not None:  # after the detections: an event's MaxN counts their animals
            card.finish(self.catalog, report)
        if self.settings.near_copies:  # after the card: its deployments say which frames never fold
            self._near_copies(index, report)
        report.seconds = time.perf_counter() - started
        self.catalog.finish_ingest(run_id, report.to_json())
        return report

    def _near_copies(self, index: VectorIndex, report: IngestReport) -> None:
        """Hash the photos without perceptual hashes (this run's, and an older catalog's) and say how many of them
        are near-copies of another photo (core.ingest.near_hashing)."""
        from core.ingest.near_hashing import MOST_PER_INGEST, hash_missing, index_neighbours

        if report.kind == "precomputed":  # its pictures are never read: hashing them would read every one
            report.near_copies = None
            report.notices.append("near-copies: photos of a precomputed-vector ingest are not hashed (their pictures "
                                  "are not read), so searches do not fold their near-copies")
            return
        report.hashed, report.near_copies, left = hash_missing(self.catalog, self.settings, self.camtrap,
                                                               index_neighbours(index))
        if left:
            report.notices.append(f"near-copies: {left} older photos are not hashed yet (an ingest hashes at most "
                                  f"{MOST_PER_INGEST}, the newest first); the next ingests hash them")
        if report.near_copies:
            report.notices.append(
                f"{report.near_copies} of the {report.hashed} photos hashed for near-copies are near-copies of "
                "another photo (a re-encode, resize, rotation or crop of one picture): search results show each "
                "group once, with '+N near-copies'")
        elif report.near_copies is None:
            report.notices.append(f"{report.hashed} photos hashed for near-copies; the catalog is too large to "
                                  "count how many are near-copies here (searches still fold them)")

    def _scan(self, path: Path):
        """The source at `path`: a Camtrap DP package (core.camtrap), else a folder, CSV or parquet."""
        from core.camtrap import package_files
        from core.ingest import camtrapdp_source

        media = self.settings.path("media", path.stem)
        if package_files.is_package(path.expanduser()):
            if not path.expanduser().exists():
                raise InputError(f"{path} does not exist", "give a Camtrap DP folder, its datapackage.json or a .zip")
            return camtrapdp_source.scan(path.expanduser(), media / "package")
        return scan(path, media)

    def _companion(self, path: Path | None, kind: str, vs: VectorSet, report: IngestReport):
        """The precomputed vectors downloaded beside a hub dataset's parquet, when their model is the embedder's
        (else None, with a notice saying why they were not used)."""
        files = companion_vectors.beside(path) if path is not None and kind == "inquire-parquet" else []
        if not files:
            return None
        lookup, notes = companion_vectors.load(files, vs)
        report.notices += notes
        report.vector_notes += notes
        return lookup

    def _start_compressed(self, path: Path, vs: VectorSet, index: VectorIndex, report: IngestReport) -> None:
        """With index_type ivfpq, no flat copy and the float16 store (settings), an empty index is trained
        before anything is added, on a sample of the file's own vectors: each vector then goes straight into
        the compressed lists and the store, and the ingest's memory does not grow with the file. Saved at
        once, so that a resumed ingest adds to the same trained index."""
        s = self.settings
        if not (s.index_type == "ivfpq" and not s.index_flat_copy and s.index_float16_file) or len(index) \
                or index.approx is not None:
            return
        from core.ingest.precomputed import row_count, training_sample
        from core.vectors.ivf import MIN_PER_LIST, TRAIN_PER_LIST, default_nlist

        expected = row_count(path)
        nlist = s.index_nlist or default_nlist(expected)
        started = time.perf_counter()
        sample = training_sample(path, vs.dim, max(MIN_PER_LIST, TRAIN_PER_LIST) * nlist)
        if index.start_compressed(sample, expected, self.store.store_path_for(vs), nlist=nlist, pq_m=s.index_pq_m,
                                  nprobe=s.index_nprobe, pq_bits=s.index_pq_bits):
            self.store.save(vs, index)
            self.store.root.joinpath(f"vectors-{vs.id}.trained").write_text(str(expected))
            log.info("ingest %s: ivfpq (%d lists, PQ%d) trained on %d of %d vectors in %.1f s, float16 store %s",
                     path, nlist, s.index_pq_m, len(sample), expected, time.perf_counter() - started,
                     self.store.store_path_for(vs))
        else:
            report.notices.append(f"index: {expected} vectors are too few to train ivfpq with {nlist} lists "
                                  f"(or index_pq_m {s.index_pq_m} does not divide {vs.dim}); the flat index is built")

    def _update_metadata(self, known: list[tuple[int, Photo]], report: IngestReport) -> None:
        """Photos the catalog already holds, met again in a source that says what they show (a CSV after
        their folder, a re-exported CSV with a corrected identification): their metadata follows the
        source (empty cells erase nothing, replaced values are kept in their history); no vector changes."""
        changed = self.catalog.update_metadata(known, source=report.source)
        report.updated = len(changed)
        for names in changed.values():
            for name in names:
                report.updated_fields[name] = report.updated_fields.get(name, 0) + 1
        what = {"inat-csv": "the CSV", "camtrap-dp": "the package"}.get(report.kind, "the parquet file")
        if changed:
            fields = ", ".join(f"{FIELD_WORDS.get(n, n)} {c}" for n, c in sorted(report.updated_fields.items(),
                                                                                   key=lambda kv: -kv[1]))
            report.notices.append(f"{len(changed)} photo{'s' if len(changed) != 1 else ''} already indexed: their "
                                  f"metadata was updated from {what} ({fields}); they were not embedded again")
            log.info("ingest %s: metadata of %d photos already indexed updated (%s)", report.source, len(changed),
                     fields)
        else:
            report.notices.append(f"{len(known)} photo{'s' if len(known) != 1 else ''} already indexed: {what} "
                                  "says nothing new about them (metadata unchanged)")

    def _engine(self, name: str, workers: int, report: IngestReport):
        if name == "ray":
            from core.ingest.ray_engine import RayEngine

            engine = RayEngine(self.embedder, self.settings, workers)
        elif name == "local":
            from core.ingest.local_engine import LocalEngine

            engine = LocalEngine(self.embedder, self.settings.replace(ingest_workers=workers))
        else:
            raise InputError(f"Unknown ingest engine {name!r}", "use --engine local or --engine ray")
        report.workers = engine.workers
        return engine

    def _finish_index(self, vs: VectorSet, index: VectorIndex, report: IngestReport) -> None:
        s = self.settings
        before = (index.approx_kind, index.has_flat, len(index))
        trained_on = len(index) if index.approx is None else None
        report.index_kind = index.ensure_approximate(
            s.index_type, nlist=s.index_nlist, pq_m=s.index_pq_m, nprobe=s.index_nprobe, hnsw_m=s.hnsw_m,
            ef_search=s.hnsw_ef_search, on_disk=self.store.lists_path_for(vs) if s.index_on_disk else None,
            keep_flat=s.index_flat_copy,
            store_path=self.store.store_path_for(vs) if s.index_float16_file else None)
        if report.index_kind != s.index_type:
            report.notices.append(f"index: too few photos ({len(index)}) to train {s.index_type}; "
                                  "the exact flat index is used")
        if (index.approx_kind, index.has_flat, len(index)) != before:
            self.store.save(vs, index)
        if report.index_kind == "ivfpq":
            meta = self.store.root / f"vectors-{vs.id}.trained"
            if trained_on is not None and index.approx is not None:
                meta.write_text(str(trained_on))
            elif meta.exists() and len(index) > RETRAIN_GROWTH * int(meta.read_text() or 1):
                report.notices.append(f"index: the ivfpq index was trained when the corpus had {meta.read_text()} "
                                      f"photos and it has {len(index)} now; `python app.py repair --retrain` "
                                      "trains it again for the larger corpus")


class _Committer:
    """Commits embedded batches on this process: catalog rows, index vectors, periodic checkpoints. A photo
    is recorded as indexed only once the index file holding its vector has been written.

    A batch's vectors go into the index on a thread of their own while the next batch is read and its catalog
    rows written (FAISS runs without Python's lock, and adding the vectors is most of a precomputed ingest's
    work); one batch at most is in flight, and a checkpoint waits for it before the index is written."""

    def __init__(self, ingestor: Ingestor, vs: VectorSet, index: VectorIndex, run_id: int, report: IngestReport):
        self.catalog, self.store, self.vs, self.index = ingestor.catalog, ingestor.store, vs, index
        self.run_id, self.report, self.every = run_id, report, ingestor.settings.checkpoint_s
        self.pending: list[int] = []
        self.last = time.monotonic()
        # (OpenMP's thread count is the calling thread's own: the adding thread takes this one's)
        self._adder = ThreadPoolExecutor(max_workers=1, thread_name_prefix="ingest-index-add",
                                         initializer=set_threads, initargs=(faiss_threads(),))
        self._adding: Future | None = None

    def add(self, batch: EmbeddedBatch) -> None:
        if batch.photos:
            if batch.new:
                self.catalog.add_photos(batch.photos, self.run_id)
            ids = [p.id for p in batch.photos]
            self._settle()
            self._adding = self._adder.submit(self.index.add, ids, batch.vectors)
            self.pending += ids
            if batch.new:
                self.report.added += len(ids)
            else:
                self.report.reembedded += len(ids)
        if time.monotonic() - self.last >= self.every:
            self.checkpoint()

    def _settle(self) -> None:
        """Wait until the batch in flight is in the index (raising its error, if adding it failed)."""
        if self._adding is not None:
            adding, self._adding = self._adding, None
            adding.result()

    def checkpoint(self) -> None:
        self._settle()
        self.store.save(self.vs, self.index)
        if self.pending:
            self.catalog.mark_indexed(self.vs.id, self.pending)
            self.pending.clear()
        self.last = time.monotonic()

    def close(self) -> None:
        """Stop the adding thread once its batch is done (also when the ingest failed: nothing is written
        after this returns)."""
        self._adder.shutdown(wait=True)
