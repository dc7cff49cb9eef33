"""The languages of a build: mkdocs-static-i18n's view of the build that runs now, and what it means for a
page's place in the index.

mkdocs-static-i18n builds every other language by calling MkDocs' `build()` again from its on_post_build, so
the plugin's events run once per language within one `mkdocs build`.
"""

from __future__ import annotations

from typing import Any, NamedTuple

from mkdocs.structure.files import File


class I18nBuild(NamedTuple):
    """What mkdocs-static-i18n says about the build that runs now."""

    language: str  # the language this build publishes
    default: str
    languages: tuple[str, ...]  # every language it builds in one `mkdocs build`
    structure: str  # "folder" (docs/fr/page.md) or "suffix" (docs/page.fr.md)
    nested: bool  # a build it runs from its own on_post_build (not the first language's)

    @property
    def site_folder(self) -> str:
        """Where this language's pages go in the site: "" for the default language, else its code."""
        return "" if self.language == self.default else self.language


def i18n_build(config: Any) -> I18nBuild | None:
    i18n = config.plugins.get("i18n")
    if i18n is None or not hasattr(i18n, "build_languages"):
        return None
    default = i18n.default_language
    return I18nBuild(
        # None until its own on_config has run for the first time (when it is listed after this plugin)
        language=i18n.current_language or default,
        default=default,
        languages=tuple(i18n.build_languages),
        structure=i18n.config.docs_structure,
        nested=bool(i18n.building),
    )


def theme_language(config: Any) -> str:
    """A single-language site's language: Material's `theme.language`, MkDocs' `theme.locale`, else `en`."""
    language = config.theme.get("language") or config.theme.get("locale")
    return str(language) if language else "en"


def document_identity(file: File, i18n: I18nBuild | None) -> tuple[str, str | None]:
    """A page's `path`, and for a fallback copy the path of the default-language page it copies.

    A page is its file's `src_uri`. A fallback copy (mkdocs-static-i18n publishing a default-language file in
    a language that lacks it) takes the path its translation would have: `fr/guide.md` in the folder layout,
    `guide.fr.md` in the suffix layout. No file has that path (else it would not be a fallback), so paths stay
    unique, and the same in every build.
    """
    locale = getattr(file, "locale", None)
    if i18n is None or locale is None or locale == i18n.language:
        return file.src_uri, None
    plain = getattr(file, "norm_src_uri", file.src_uri)  # the src_uri without its language
    if i18n.structure == "suffix":
        stem, dot, extension = plain.rpartition(".")
        return (f"{stem}.{i18n.language}.{extension}" if dot else f"{plain}.{i18n.language}"), file.src_uri
    return f"{i18n.language}/{plain}", file.src_uri


class LanguageRun:
    """Which languages one `mkdocs build` (or one rebuild under serve) has indexed so far."""

    def __init__(self) -> None:
        self.indexed: set[str] = set()
        self.complete = True  # whether the running build is the last (or only) one of the run

    def build_started(self, i18n: I18nBuild | None) -> None:
        if i18n is None or not i18n.nested:
            self.indexed = set()  # a new `mkdocs build`, or a rebuild under serve

    def indexed_language(self, language: str, i18n: I18nBuild | None) -> None:
        self.indexed.add(language)
        self.complete = i18n is None or self.indexed >= set(i18n.languages)
