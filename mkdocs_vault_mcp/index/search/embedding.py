"""The sentence-embedding model of search by meaning (index/search/semantic.py): loading it, embedding text with it,
and the cache file of the vectors it made.

The model is in ONNX (onnxruntime and the model's own tokenizer; mean pooling, unit length), loaded once per
process. Vectors are cached in the cache dir by the hash of the model, the cut and the text, so a rebuild embeds only
new or changed sections, and a rebuild that changed nothing loads no model.

An index names the model of its vectors by name and content (the SHA-256 of its files), not by where the build
found it: a server looks for it in the folder it was given, then where the build read it, and uses a folder only
if it holds that model (`locate`); else it says which model is missing and how to give it.
"""

from __future__ import annotations

import contextlib
import dataclasses
import functools
import hashlib
import logging
import os
import re
import sqlite3
import sys
import threading
import time
from collections.abc import Iterator
from contextvars import ContextVar
from pathlib import Path
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    import numpy as np

log = logging.getLogger("mkdocs.plugins.vault-mcp")

# all-MiniLM-L6-v2 was fine-tuned on 128 word pieces: longer text is cut there, which halves the work of a long
# section and ranked the judged queries no worse (bench/semantic_quality.py).
MAX_TOKENS = 128
# Word pieces embedded at once (texts x the longest of them): many short texts or few long ones, so that each
# run has the same work and the padding stays small; larger batches make onnxruntime hold more memory.
BATCH_TOKENS = 1024
PROGRESS_SECONDS = 10  # the build log reports the first embedding run this often
# Where a model folder (a download, or one of the user's) may hold its ONNX file, first found wins.
ONNX_FILES = ("model.onnx", "onnx/model.onnx", "onnx/model_quantized.onnx")
HUB_FILES = ["tokenizer.json", "onnx/model.onnx"]
# A query is one short text: a second thread saves less than waking it costs on a busy machine.
QUERY_THREADS = 1


class ModelUnavailable(Exception):
    """The model cannot be loaded: the extra is not installed, the folder lacks a file, the download failed."""


# A model hub name: "name" or "owner/name". Anything else the option or an index names is a folder.
_HUB_NAME = re.compile(r"[\w.-]+(/[\w.-]+)?")
# The index's `info` rows that name the model of its vectors: its name (a hub name, or a folder's own name), the
# SHA-256 of its two files, and the folder the build took it from (a local model only).
INFO_NAME, INFO_SHA256, INFO_FOLDER = "semantic_model", "semantic_model_sha256", "semantic_model_folder"
HOW_TO_GIVE = (
    "give its folder to the server: mkdocs-vault-mcp serve --semantic-model DIR, or the hosted app's setting "
    "VAULT_MCP_SEMANTIC_MODEL"
)
# The folder given to this server (serve --semantic-model): set around each call by the IndexReader that has one.
given_folder: ContextVar[Path | None] = ContextVar("given_folder", default=None)


def is_folder(model: str) -> bool:
    """Whether a model as given (the option, an index's record) names a folder rather than a model hub name."""
    return Path(model).is_absolute() or Path(model).is_dir() or not _HUB_NAME.fullmatch(model)


def model_files(folder: Path) -> tuple[Path, Path]:
    """The folder's tokenizer.json and ONNX file; ModelUnavailable, saying which, when it lacks one or is missing."""
    if not folder.is_dir():
        raise ModelUnavailable(f"the model folder {folder} does not exist")
    onnx = next((folder / name for name in ONNX_FILES if (folder / name).is_file()), None)
    if onnx is None or not (folder / "tokenizer.json").is_file():
        raise ModelUnavailable(f"{folder} must hold tokenizer.json and one of {', '.join(ONNX_FILES)}")
    return folder / "tokenizer.json", onnx


def folder_digest(folder: Path) -> str:
    """The SHA-256 of the folder's tokenizer and ONNX file: what names a local model wherever it lies. Computed
    once per process for files of the same size and time."""
    files = model_files(folder)
    stamp = tuple((str(path), status.st_size, status.st_mtime_ns) for path in files for status in [path.stat()])
    digest = _digests.get(stamp)
    if digest is None:
        whole = hashlib.sha256()
        for path in files:
            with path.open("rb") as file:
                whole.update(hashlib.file_digest(file, "sha256").digest())
        digest = _digests[stamp] = whole.hexdigest()
    return digest


_digests: dict[tuple[tuple[str, int, int], ...], str] = {}


def model_key(model: str) -> str:
    """What cached vectors are filed under: the model's name, or a folder's digest (the same model moved keeps
    its vectors)."""
    if is_folder(model):
        with contextlib.suppress(ModelUnavailable, OSError):
            return f"sha256:{folder_digest(Path(model))}"
    return model


@dataclasses.dataclass(frozen=True)
class RecordedModel:
    """The model an index's vectors were made with, as its `info` names it."""

    name: str
    sha256: str | None
    folder: str | None  # where the build found a local model; None for a hub name

    @property
    def source(self) -> str:
        """What the build was given: the folder, or the hub name (an earlier version's index: either, as given)."""
        return self.folder or self.name


def recorded_model(conn: sqlite3.Connection) -> RecordedModel | None:
    rows = dict(
        conn.execute("SELECT key, value FROM info WHERE key IN (?, ?, ?)", [INFO_NAME, INFO_SHA256, INFO_FOLDER])
    )
    if INFO_NAME not in rows:
        return None
    return RecordedModel(rows[INFO_NAME], rows.get(INFO_SHA256), rows.get(INFO_FOLDER))


def record_model(conn: sqlite3.Connection, model: str) -> None:
    """Name `model` (a hub name or an absolute folder) in the index's `info`, with its digest when known: a folder's
    always, a hub model's once this process loaded it (or as recorded before)."""
    earlier = recorded_model(conn)
    if is_folder(model):
        name, folder = Path(model).name, model
        try:
            digest: str | None = folder_digest(Path(model))
        except (ModelUnavailable, OSError):
            digest = None
    else:
        name, folder = model, None
        loaded = [found for (key, _), found in _models.items() if key == model and isinstance(found, Model)]
        digest = loaded[0].sha256 if loaded else earlier.sha256 if earlier and earlier.source == model else None
    forget_model(conn)
    values = ((INFO_NAME, name), (INFO_SHA256, digest), (INFO_FOLDER, folder))
    conn.executemany(
        "INSERT INTO info (key, value) VALUES (?, ?)", [(key, value) for key, value in values if value is not None]
    )


def forget_model(conn: sqlite3.Connection) -> None:
    conn.execute("DELETE FROM info WHERE key IN (?, ?, ?)", [INFO_NAME, INFO_SHA256, INFO_FOLDER])


def locate(recorded: RecordedModel) -> str:
    """The model to load for an index's vectors: the folder given to this server, else the folder the build used
    when it is here, else the hub name; each folder only if it holds the same model (its digest). Else
    ModelUnavailable naming the missing model and how to give it. Once per process for each record and folder
    given (a failure too, as load_model's): the model once loaded needs its folder no more."""
    found = _located(recorded, given_folder.get())
    if isinstance(found, ModelUnavailable):
        raise found.with_traceback(None)  # the same exception each time: no traceback grown at each raise
    return found


@functools.lru_cache(maxsize=16)
def _located(recorded: RecordedModel, given: Path | None) -> str | ModelUnavailable:
    if given is not None:
        try:
            digest = folder_digest(given)
        except ModelUnavailable as error:
            return error
        if recorded.sha256 is None or recorded.sha256 == digest:
            return str(given)
        return ModelUnavailable(
            f"the model folder given, {given}, holds another model (sha256 {digest[:12]}) than the index's vectors "
            f"were made with: {recorded.name!r}, sha256 {recorded.sha256[:12]}"
        )
    if recorded.folder is None:
        return recorded.name
    with contextlib.suppress(ModelUnavailable, OSError):
        if recorded.sha256 in (None, folder_digest(Path(recorded.folder))):
            return recorded.folder
    held = f", sha256 {recorded.sha256[:12]}" if recorded.sha256 else ""
    return ModelUnavailable(
        f"the index's vectors were made with the local model {recorded.name!r}{held}, whose folder is not here "
        f"(the build read it from {recorded.folder}); {HOW_TO_GIVE}"
    )


@contextlib.contextmanager
def folder_given(folder: Path | None) -> Iterator[None]:
    """Within the block, `locate` looks in `folder` first (None: no folder given)."""
    token = given_folder.set(folder)
    try:
        yield
    finally:
        given_folder.reset(token)


class Model:
    def __init__(self, model: str, threads: int = 0) -> None:
        """`model`: a folder, or a model hub name; `threads`: onnxruntime's threads for one text (0: one a CPU)."""
        try:
            import numpy
            import onnxruntime
            from tokenizers import Tokenizer
        except ImportError as error:
            raise ModelUnavailable(f"{error.name} is not installed; pip install 'mkdocs-vault-mcp[semantic]'") from None
        self.np = numpy
        folder = Path(model) if is_folder(model) else _download(model)
        tokenizer, onnx = model_files(folder)
        self.sha256 = folder_digest(folder)
        try:
            self.tokenizer = Tokenizer.from_file(str(tokenizer))
        except Exception as error:  # a damaged file: the model is unavailable, the build goes on
            raise ModelUnavailable(f"{tokenizer} could not be loaded: {error}") from None
        self.tokenizer.enable_truncation(MAX_TOKENS)
        self.tokenizer.no_padding()  # a tokenizer.json may pad every text to a fixed length: embed_tokens pads
        options = onnxruntime.SessionOptions()
        options.log_severity_level = 3
        options.intra_op_num_threads = threads
        # Threads that spin between runs would take the CPUs from the build and from the numpy scan.
        options.add_session_config_entry("session.intra_op.allow_spinning", "0")
        # Every batch has a shape of its own: a memory plan kept per shape would only grow.
        options.enable_mem_pattern = False
        try:
            self.session = onnxruntime.InferenceSession(str(onnx), options, providers=["CPUExecutionProvider"])
        except Exception as error:
            raise ModelUnavailable(f"{onnx} could not be loaded: {error}") from None
        self.inputs = {model_input.name for model_input in self.session.get_inputs()}

    def tokens(self, texts: list[str]) -> list[np.ndarray]:
        """Each text's word pieces, cut at MAX_TOKENS (int32: a tenth of a list's memory, for every section)."""
        return [self.np.array(encoding.ids, dtype=self.np.int32) for encoding in self.tokenizer.encode_batch(texts)]

    def embed(self, texts: list[str]) -> np.ndarray:
        """Unit vectors (float32, one row per text): the model's token states, averaged over the real tokens."""
        return self.embed_tokens(self.tokens(texts))

    def embed_tokens(self, pieces: list[np.ndarray]) -> np.ndarray:
        """`embed` for texts already cut into word pieces (`tokens`), padded here to the longest."""
        numpy = self.np
        longest = max(map(len, pieces))
        ids = numpy.zeros((len(pieces), longest), dtype=numpy.int64)
        mask = numpy.zeros((len(pieces), longest), dtype=numpy.int64)
        for row, text in enumerate(pieces):
            ids[row, : len(text)] = text
            mask[row, : len(text)] = 1
        feed = {"input_ids": ids, "attention_mask": mask, "token_type_ids": numpy.zeros_like(ids)}
        states = self.session.run(None, {name: value for name, value in feed.items() if name in self.inputs})[0]
        summed = (states * mask[..., None]).sum(axis=1)
        vectors = summed / numpy.maximum(mask.sum(axis=1, keepdims=True), 1)
        unit: np.ndarray = vectors / numpy.maximum(numpy.linalg.norm(vectors, axis=1, keepdims=True), 1e-12)
        return unit.astype(numpy.float32)


def _download(name: str) -> Path:
    try:
        from huggingface_hub import snapshot_download

        return Path(snapshot_download(name, allow_patterns=HUB_FILES))
    except Exception as error:
        raise ModelUnavailable(f"model {name!r} could not be fetched from the model hub: {error}") from None


_models: dict[tuple[str, int], Model | ModelUnavailable] = {}
_models_lock = threading.Lock()
# Models inherited by a forked child: kept, never used nor freed (freeing a session waits for its worker threads,
# which were not forked with it).
_inherited: list[dict[tuple[str, int], Model | ModelUnavailable]] = []


def _forget_models_in_child() -> None:
    """A forked writer loads its own model: the parent's session would run on threads the child lacks."""
    _inherited.append(_models.copy())
    _models.clear()


if hasattr(os, "register_at_fork"):  # Windows has no fork, so no child to forget them in
    os.register_at_fork(after_in_child=_forget_models_in_child)


def load_model(model: str, threads: int = 0) -> Model:
    """The model, loaded once per process (a failure too: it is not retried at every query)."""
    with _models_lock:
        loaded = _models.get((model, threads))
        if loaded is None:
            try:
                loaded = Model(model, threads)
            except ModelUnavailable as error:
                loaded = error
            _models[model, threads] = loaded
    if isinstance(loaded, ModelUnavailable):
        raise loaded.with_traceback(None)  # the same exception each time: no traceback grown at each raise
    return loaded


def cached_vectors(model: str, cache_path: Path, texts: dict[str, str]) -> dict[str, bytes]:
    """The float16 vector of each text (cache key -> text): read from the cache file, or embedded now and cached."""
    cache_path.parent.mkdir(parents=True, exist_ok=True)
    cache = sqlite3.connect(cache_path)
    try:
        cache.execute("CREATE TABLE IF NOT EXISTS vectors (key TEXT PRIMARY KEY, vector BLOB NOT NULL)")
        found: dict[str, bytes] = {}
        keys = list(texts)
        for start in range(0, len(keys), 500):
            chunk = keys[start : start + 500]
            found.update(
                cache.execute(f"SELECT key, vector FROM vectors WHERE key IN ({', '.join('?' * len(chunk))})", chunk)
            )
        todo = {key: text for key, text in texts.items() if key not in found}
        if todo:
            found.update(_embed_with_progress(load_model(model), todo, cache))
    finally:
        cache.close()
    return found


def _embed_with_progress(model: Model, todo: dict[str, str], cache: sqlite3.Connection) -> dict[str, bytes]:
    """Embed `todo` (cache key -> text), texts of as many word pieces together (less padding), each batch cached
    as it is made (a build stopped half-way keeps what it embedded); report progress to the build log."""
    keys = list(todo)
    pieces = dict(zip(keys, model.tokens([todo[key] for key in keys]), strict=True))
    order = sorted(keys, key=lambda key: len(pieces[key]))
    if not log.hasHandlers():  # a writer started as a new Python: its stderr is the build's, without MkDocs' log
        handler = logging.StreamHandler(sys.stderr)
        handler.setFormatter(logging.Formatter("%(levelname)-8s-  %(message)s"))
        log.addHandler(handler)
        log.setLevel(logging.INFO)
    made: dict[str, bytes] = {}
    started = last_report = time.monotonic()
    log.info(f"vault-mcp: embedding {len(order)} sections for search by meaning (cached for later builds)")
    for batch in token_batches(order, [len(pieces[key]) for key in order]):
        vectors = model.embed_tokens([pieces.pop(key) for key in batch]).astype(model.np.float16)
        rows = [(key, vector.tobytes()) for key, vector in zip(batch, vectors, strict=True)]
        with cache:
            cache.executemany("INSERT OR REPLACE INTO vectors (key, vector) VALUES (?, ?)", rows)
        made.update(rows)
        now = time.monotonic()
        if now - last_report >= PROGRESS_SECONDS and len(made) < len(order):
            last_report = now
            rate = len(made) / (now - started)
            log.info(
                f"vault-mcp: embedded {len(made)} of {len(order)} sections, {rate:.1f} a second,"
                f" about {_duration((len(order) - len(made)) / rate)} left"
            )
    elapsed = time.monotonic() - started
    log.info(f"vault-mcp: embedded {len(made)} sections in {_duration(elapsed)}")
    return made


def token_batches(order: list[str], lengths: list[int]) -> Iterator[list[str]]:
    """`order` (shortest first; `lengths`: each one's word pieces) in runs of at most BATCH_TOKENS word pieces once
    padded to the longest of the run (at least one text a run)."""
    batch: list[str] = []
    for key, length in zip(order, lengths, strict=True):
        if batch and (len(batch) + 1) * length > BATCH_TOKENS:
            yield batch
            batch = []
        batch.append(key)
    if batch:
        yield batch


def _duration(seconds: float) -> str:
    return f"{seconds:.0f} s" if seconds < 120 else f"{seconds / 60:.0f} min"
