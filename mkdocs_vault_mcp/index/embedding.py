"""The sentence-embedding model of search by meaning (index/semantic.py): loading it, embedding text with it,
and the cache file of the vectors it made.

The model is in ONNX (onnxruntime and the model's own tokenizer; mean pooling, unit length), loaded once per
process. Vectors are cached in the cache dir by the hash of the model and the text, so a rebuild embeds only
new or changed sections, and a rebuild that changed nothing loads no model.
"""

from __future__ import annotations

import logging
import os
import sqlite3
import sys
import threading
import time
from pathlib import Path
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    import numpy as np

log = logging.getLogger("mkdocs.plugins.vault-mcp")

MAX_TOKENS = 256  # what all-MiniLM-L6-v2 was trained on; longer text is cut
BATCH = 8  # texts embedded at once: larger batches make onnxruntime hold more memory and are no faster
PROGRESS_SECONDS = 10  # the build log reports the first embedding run this often
# Where a model folder (a download, or one of the user's) may hold its ONNX file, first found wins.
ONNX_FILES = ("model.onnx", "onnx/model.onnx", "onnx/model_quantized.onnx")
HUB_FILES = ["tokenizer.json", "onnx/model.onnx"]
# A query is one short text: a second thread saves less than waking it costs on a busy machine.
QUERY_THREADS = 1


class ModelUnavailable(Exception):
    """The model cannot be loaded: the extra is not installed, the folder lacks a file, the download failed."""


def model_key(model: str) -> str:
    """What cached vectors are filed under: the model's name, or its folder and the size of its ONNX file."""
    folder = Path(model)
    if folder.is_dir():
        for name in ONNX_FILES:
            if (folder / name).is_file():
                return f"{model}:{(folder / name).stat().st_size}"
    return model


class Model:
    def __init__(self, model: str, threads: int = 0) -> None:
        """`threads`: onnxruntime's threads for one text (0: one a CPU)."""
        try:
            import numpy
            import onnxruntime
            from tokenizers import Tokenizer
        except ImportError as error:
            raise ModelUnavailable(f"{error.name} is not installed; pip install 'mkdocs-vault-mcp[semantic]'") from None
        self.np = numpy
        folder = Path(model) if Path(model).is_dir() else _download(model)
        onnx = next((folder / name for name in ONNX_FILES if (folder / name).is_file()), None)
        if onnx is None or not (folder / "tokenizer.json").is_file():
            raise ModelUnavailable(f"{folder} must hold tokenizer.json and one of {', '.join(ONNX_FILES)}")
        try:
            self.tokenizer = Tokenizer.from_file(str(folder / "tokenizer.json"))
            self.tokenizer.enable_truncation(MAX_TOKENS)
            self.tokenizer.enable_padding()
            options = onnxruntime.SessionOptions()
            options.log_severity_level = 3
            options.intra_op_num_threads = threads
            # Threads that spin between runs would take the CPUs from the build and from the numpy scan.
            options.add_session_config_entry("session.intra_op.allow_spinning", "0")
            self.session = onnxruntime.InferenceSession(str(onnx), options, providers=["CPUExecutionProvider"])
        except Exception as error:  # a damaged file: the model is unavailable, the build goes on
            raise ModelUnavailable(f"{onnx} could not be loaded: {error}") from None
        self.inputs = {model_input.name for model_input in self.session.get_inputs()}

    def embed(self, texts: list[str]) -> np.ndarray:
        """Unit vectors (float32, one row per text): the model's token states, averaged over the real tokens."""
        numpy = self.np
        encoded = self.tokenizer.encode_batch(texts)
        ids = numpy.array([encoding.ids for encoding in encoded], dtype=numpy.int64)
        mask = numpy.array([encoding.attention_mask for encoding in encoded], dtype=numpy.int64)
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
        raise loaded
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
    """Embed `todo` (cache key -> text), shortest texts together (less padding), each batch cached as it is
    made (a build stopped half-way keeps what it embedded); report progress to the build log."""
    order = sorted(todo, key=lambda key: len(todo[key]))
    if not log.hasHandlers():  # a writer started as a new Python: its stderr is the build's, without MkDocs' log
        handler = logging.StreamHandler(sys.stderr)
        handler.setFormatter(logging.Formatter("%(levelname)-8s-  %(message)s"))
        log.addHandler(handler)
        log.setLevel(logging.INFO)
    made: dict[str, bytes] = {}
    started = last_report = time.monotonic()
    log.info(f"vault-mcp: embedding {len(order)} sections for search by meaning (cached for later builds)")
    for start in range(0, len(order), BATCH):
        keys = order[start : start + BATCH]
        vectors = model.embed([todo[key] for key in keys]).astype(model.np.float16)
        rows = [(key, vector.tobytes()) for key, vector in zip(keys, vectors, strict=True)]
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


def _duration(seconds: float) -> str:
    return f"{seconds:.0f} s" if seconds < 120 else f"{seconds / 60:.0f} min"
