"""The errors every layer raises or catches; this module imports nothing of the package, so any module may import it."""

from __future__ import annotations


class InvalidArgument(ValueError):
    """A tool argument that is wrong; the message says what is accepted."""
