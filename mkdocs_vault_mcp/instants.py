"""Instants as the index stores them: integer microseconds since the Unix epoch, UTC.

A leaf module: documents (fingerprints), the index (rows, filters) and the answers (RFC 3339 text) all encode
time the same way, and none of them has to import another layer for it.
"""

from __future__ import annotations

import datetime as dt

EPOCH = dt.datetime(1970, 1, 1, tzinfo=dt.UTC)
ONE_MICROSECOND = dt.timedelta(microseconds=1)


def to_micros(instant: dt.datetime) -> int:
    """Microseconds since the epoch of an aware instant, as the index stores `modified`.

    Exact, and without converting to UTC first: that overflows near year 1 and year 9999.
    """
    return (instant - EPOCH) // ONE_MICROSECOND


NAIVE_EPOCH = dt.datetime(1970, 1, 1)


def rfc3339(micros: int) -> str:
    """UTC with `Z`, to the microsecond, the fraction left out when zero and trailing zeros dropped."""
    seconds, fraction = divmod(micros, 1_000_000)
    # isoformat rather than strftime: faster (every listed row has an instant), and the year always
    # has the four digits RFC 3339 asks for (glibc's %Y writes year 999 as "999").
    text = (NAIVE_EPOCH + dt.timedelta(seconds=seconds)).isoformat()
    if fraction:
        return f"{text}.{fraction:06d}".rstrip("0") + "Z"
    return text + "Z"


def now_micros() -> int:
    """The current instant, encoded."""
    return to_micros(dt.datetime.now(dt.UTC))
