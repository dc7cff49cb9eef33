"""`tools/list` as the SDK client receives it, and the stored copy that tests/test_answer_types.py holds it to.

PYTHONPATH=.:tests .venv/bin/python -m helpers.tools_list    # rewrite the stored copy, after a meant change
"""

from __future__ import annotations

import tempfile
from pathlib import Path

from helpers.mcp_session import Session, session_over

STORED = Path(__file__).resolve().parent.parent / "fixtures" / "tools_list.json"


def published_tools_list(session: Session) -> str:
    """The listing as JSON, in the order and with the members it came in (no null members)."""
    listing = session.portal.call(session.client.list_tools)
    return str(listing.model_dump_json(by_alias=True, exclude_none=True)) + "\n"


def main() -> None:
    with tempfile.TemporaryDirectory() as root, session_over(Path(root) / "index.sqlite") as session:
        STORED.write_text(published_tools_list(session), encoding="utf-8")
    print(f"wrote {STORED}")


if __name__ == "__main__":
    main()
