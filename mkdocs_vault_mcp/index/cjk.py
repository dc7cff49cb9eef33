"""Chinese, Japanese and Korean text: one character, one token.

FTS5's `unicode61` tokenizer cuts text at spaces and punctuation, so an unbroken
run of Han, Hiragana, Katakana or Hangul (a whole Chinese sentence) is one token,
and a word inside it (`跨域` in `本页说明跨域资源共享的配置`) cannot be found.
Python's sqlite3 cannot register a tokenizer of its own, and the tokenizer must stay
`porter unicode61` for Latin text. So the text is changed instead of the tokenizer:

- Index time (`separate`): a ZERO WIDTH SPACE (U+200B, category Cf, which
  `unicode61` treats as a separator) goes on both sides of every CJK character,
  so each is a token of its own and Latin words keep theirs. Only the FTS5 copy of the text (the `sections` table) is
  changed; what a reader gets back has the separators taken out (`join`).
- Query time (`fts_query`, `query_phrase`): a CJK run becomes an FTS5 phrase of its
  characters, and a phrase matches adjacent tokens in order, so `"跨 域"` finds
  exactly the text `跨域`, wherever it stands in a sentence. The search planner's
  relaxed form uses the run's overlapping bigrams (`bigram_phrases`), ORed, as
  Lucene's CJK analyzer indexes them, so a longer query still finds text that
  holds most of it.
"""

from __future__ import annotations

import functools
import re

SEPARATOR = "\u200b"  # ZERO WIDTH SPACE: a token boundary for unicode61, invisible to a reader

# Han (with the iteration marks 々 〆 〇), Hiragana, Katakana (half-width too) and Hangul (syllables and jamo).
CJK_RANGES = (
    (0x1100, 0x11FF),
    (0x3005, 0x3007),
    (0x3040, 0x309F),
    (0x30A0, 0x30FF),
    (0x3130, 0x318F),
    (0x31F0, 0x31FF),
    (0x3400, 0x4DBF),
    (0x4E00, 0x9FFF),
    (0xAC00, 0xD7AF),
    (0xF900, 0xFAFF),
    (0xFF66, 0xFF9F),
    (0x20000, 0x2FA1F),
)
CJK_CHARACTERS = "".join(f"{chr(first)}-{chr(last)}" for first, last in CJK_RANGES)  # for a regex class


@functools.cache
def _runs() -> re.Pattern[str]:
    """One expression for both questions (is there a character, where are the runs). Compiling a class this wide
    takes milliseconds: paid by the first text that is not ASCII, not by every build at import (a build whose
    writer is a process of its own never needs it on MkDocs' side)."""
    return re.compile(f"[{CJK_CHARACTERS}]+")


# Two marked matches that only separators divide (`**跨**\u200b**域**`): one match to a reader.
_SPLIT_MARK = re.compile(r"\*\*" + SEPARATOR + r"+\*\*")


def has_cjk(text: str) -> bool:
    return _runs().search(text) is not None


def runs(text: str) -> list[str]:
    """The unbroken runs of CJK characters in `text`, in order."""
    return _runs().findall(text)


def _separated_run(run: re.Match[str]) -> str:
    return SEPARATOR + SEPARATOR.join(run.group()) + SEPARATOR


def separate(text: str) -> str:
    """The text as the index stores it: each CJK character a token of its own.

    A build-time hot path (every section's text): ASCII text, most of a site, is passed over without a scan,
    and each run is spelled out at once (faster than str.translate with a table of every CJK character).
    """
    if text.isascii() or not has_cjk(text):
        return text
    return _runs().sub(_separated_run, text).replace(SEPARATOR + SEPARATOR, SEPARATOR)


def join(text: str) -> str:
    """Stored (separated) text as the reader sees it; adjacent marked matches become one."""
    if SEPARATOR not in text:
        return text
    return _SPLIT_MARK.sub("", text).replace(SEPARATOR, "")


def query_phrase(run: str) -> str:
    """A CJK run as an FTS5 phrase: its characters, adjacent and in order (the run as a substring)."""
    return '"' + " ".join(run) + '"'


def bigram_phrases(run: str) -> list[str]:
    """The run's overlapping two-character phrases (`容器镜像`: `容器`, `器镜`, `镜像`); a one-character run itself."""
    if len(run) <= 2:
        return [query_phrase(run)]
    return list(dict.fromkeys(query_phrase(run[start : start + 2]) for start in range(len(run) - 1)))


# A double-quoted FTS5 string (`""` inside is a quote), or any other text.
_QUOTED = re.compile(r'"(?:[^"]|"")*"')


def fts_query(query: str) -> str:
    """An FTS5 expression with each CJK run spelled as the index stores it.

    Inside a quoted phrase a run becomes its characters (`"跨域 资源"` -> `"跨 域 资 源"`); outside,
    a phrase of its characters with spaces around it, so it stays one operand (`跨域*` -> ` "跨 域" *`,
    `title:跨域` -> `title: "跨 域" `). A query without CJK is returned as it is.
    """
    if not has_cjk(query):
        return query
    pieces = []
    position = 0
    for quoted in _QUOTED.finditer(query):
        pieces.append(_runs().sub(lambda run: f" {query_phrase(run.group())} ", query[position : quoted.start()]))
        pieces.append(_runs().sub(lambda run: " " + " ".join(run.group()) + " ", quoted.group()))
        position = quoted.end()
    pieces.append(_runs().sub(lambda run: f" {query_phrase(run.group())} ", query[position:]))
    return "".join(pieces)
