"""MkDocs hooks of the documentation site: publish the options' JSON schema at the site's root, as schema.json,
where Material for MkDocs and mkdocstrings publish theirs, so that an editor can refer to it by URL."""

from __future__ import annotations

from pathlib import Path

from mkdocs.config.defaults import MkDocsConfig
from mkdocs.structure.files import File, Files

SCHEMA = Path(__file__).resolve().parent / "schema.json"


def on_files(files: Files, *, config: MkDocsConfig) -> Files:
    files.append(File.generated(config, "schema.json", abs_src_path=str(SCHEMA)))
    return files
