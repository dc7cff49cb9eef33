"""How sections are embedded for search by meaning: cut at the model's length, batched by word pieces, and each
vector the same whatever batch it was made in."""

from __future__ import annotations

import sqlite3
from pathlib import Path

import pytest

from helpers import minilm
from mkdocs_vault_mcp.index.search import embedding

numpy = pytest.importorskip("numpy")


@pytest.fixture(scope="module")
def folder(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return minilm.model_folder(tmp_path_factory.mktemp("minilm"))


@pytest.fixture(scope="module")
def model(folder: Path) -> embedding.Model:
    return embedding.load_model(str(folder))


def test_batches_hold_each_text_once_in_order_within_the_word_piece_budget():
    lengths = [3, 5, 5, 40, 90, 128, 128, 128, 128, 128, 128, 128, 128, 128, 700]
    order = [f"text {n}" for n in range(len(lengths))]
    batches = list(embedding.token_batches(order, lengths))
    assert [key for batch in batches for key in batch] == order
    size = dict(zip(order, lengths, strict=True))
    for batch in batches:
        # A text longer than the budget goes alone; any other batch fits once padded to its longest.
        assert len(batch) == 1 or len(batch) * max(size[key] for key in batch) <= embedding.BATCH_TOKENS
    assert len(batches) < len(order)  # short texts share a batch


def test_text_is_cut_at_max_tokens(model):
    words = " ".join(f"word{n}" for n in range(400))
    pieces = model.tokens([words, "a short text"])
    assert len(pieces[0]) == embedding.MAX_TOKENS
    assert len(pieces[1]) < 10  # no padding to a fixed length, whatever tokenizer.json says
    # What lies past the cut does not change the vector.
    longer = model.embed([words + " and a different ending about databases"])
    assert float(longer[0] @ model.embed([words])[0]) > 0.9999


def test_a_vector_is_the_same_alone_and_beside_longer_texts(model):
    short = "How to declare a path parameter"
    alone = model.embed([short])[0]
    beside = model.embed([short, "Dependencies with yield: " + "the code after yield runs later. " * 30])[0]
    assert float(alone @ beside) > 0.9999
    assert abs(float(alone @ alone) - 1) < 1e-5


def test_the_cache_embeds_every_text_once_and_serves_it_again(tmp_path, folder, model):
    texts = {f"key {n}": f"section {n}: " + "words " * (n * 7) for n in range(40)}
    first = embedding.cached_vectors(str(folder), tmp_path / "cache.sqlite", texts)
    assert set(first) == set(texts)
    for key in ("key 0", "key 39"):  # the shortest and the longest, each in a batch of its own length
        cached = numpy.frombuffer(first[key], dtype=numpy.float16).astype(numpy.float32)
        assert float(cached @ model.embed([texts[key]])[0]) > 0.999
    with sqlite3.connect(tmp_path / "cache.sqlite") as cache:
        assert cache.execute("SELECT count(*) FROM vectors").fetchone()[0] == len(texts)
    assert embedding.cached_vectors(str(folder), tmp_path / "cache.sqlite", texts) == first
