"""A JSON encoder made once and used for many values, with CPython's C encoder where it has a usable one.

`json.JSONEncoder.encode` makes its C encoder anew for every call, which costs a large part of encoding a small
value such as a page's front matter. This relies on `json.encoder.c_make_encoder` (CPython's
`_json.make_encoder`), an implementation detail that `JSONEncoder.iterencode` calls with nine positional
arguments. It is None where the `_json` accelerator is absent (PyPy, or a CPython built without it), and its
arguments may change in any CPython release: in either case the pure-Python `JSONEncoder.encode` is used, which
gives the same text. `C_ENCODER_PROBLEM` says why the C encoder is not used (tests/test_adapters.py asserts that
it is, on CPython). A public way to reuse an encoder would be worth proposing to CPython.
"""

from __future__ import annotations

import json
import json.encoder
from collections.abc import Callable
from typing import Any

PROBE = {"b": [1.5, None, True], "a": "é\n"}


def sorted_encoder(default: Callable[[Any], Any]) -> Callable[[Any], str]:
    """`json.dumps(value, sort_keys=True, default=default, allow_nan=False)` as a function, its encoder made once."""
    fast = _c_encoder(default) if C_ENCODER_PROBLEM is None else None
    return fast or json.JSONEncoder(sort_keys=True, default=default, allow_nan=False).encode


def _c_encoder(default: Callable[[Any], Any]) -> Callable[[Any], str] | None:
    make = getattr(json.encoder, "c_make_encoder", None)
    if make is None:
        return None
    # JSONEncoder.iterencode's arguments: no check for cycles, no indent, the separators and ASCII escapes of
    # json.dumps, sort_keys, skipkeys off, allow_nan off.
    encode = make(None, default, json.encoder.encode_basestring_ascii, None, ": ", ", ", True, False, False)
    return lambda value: "".join(encode(value, 0))


def _problem() -> str | None:
    """Why the C encoder is not used: absent, or not taking the arguments or not giving the text expected."""
    try:
        encode = _c_encoder(str)
        if encode is None:
            return "json.encoder.c_make_encoder is None (no _json accelerator)"
        if encode(PROBE) != json.dumps(PROBE, sort_keys=True):
            return "json.encoder.c_make_encoder encodes otherwise than json.dumps"
    except Exception as error:  # a changed signature or behaviour: any failure means the fallback
        return f"json.encoder.c_make_encoder fails ({error!r})"
    return None


C_ENCODER_PROBLEM = _problem()
