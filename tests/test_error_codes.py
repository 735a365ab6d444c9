"""Every error code the server can send is an ``ErrorCode`` and documented (issue #10.5).

The codes are enumerated from the source, so a new ``raise`` cannot slip past: the engine's
``IllegalMove``/``InvalidMove`` codes (they pass unchanged onto the wire) and every
``ErrorCode.NAME`` the protocol and the server use. Each must be a member of ``ErrorCode`` with
its number, and a row of the table in docs/PROTOCOL.md.
"""

from __future__ import annotations

import ast
import re
from pathlib import Path

from tongits.engine import RuleCode
from tongits.protocol import ErrorCode
from tongits.server.errors import FATAL

ROOT = Path(__file__).resolve().parent.parent
PROTOCOL_DOC = (ROOT / "docs" / "PROTOCOL.md").read_text(encoding="utf-8")


def _sources(*folders: str) -> list[ast.Module]:
    return [ast.parse(path.read_text(encoding="utf-8"))
            for folder in folders for path in sorted((ROOT / folder).rglob("*.py"))]


def engine_codes() -> set[str]:
    """The code of every ``IllegalMove(...)`` and ``InvalidMove(...)`` in the engine: a
    ``RuleCode.NAME`` (the engine's closed set) or a string."""
    codes: set[str] = set()
    for tree in _sources("engine"):
        for node in ast.walk(tree):
            if not (isinstance(node, ast.Call) and isinstance(node.func, ast.Name)
                    and node.func.id in ("IllegalMove", "InvalidMove") and node.args):
                continue
            code = node.args[0]
            if isinstance(code, ast.Constant) and isinstance(code.value, str):
                codes.add(code.value)
            elif (isinstance(code, ast.Attribute) and isinstance(code.value, ast.Name)
                  and code.value.id == "RuleCode"):
                codes.add(RuleCode[code.attr].value)
    return codes


def named_codes() -> set[str]:
    """Every ``ErrorCode.NAME`` the protocol and the server refer to."""
    names = set()
    for tree in _sources("protocol", "server"):
        for node in ast.walk(tree):
            if (isinstance(node, ast.Attribute) and isinstance(node.value, ast.Name)
                    and node.value.id == "ErrorCode"):
                names.add(node.attr)
    return {ErrorCode[name].value for name in names}


def documented_codes() -> dict[str, int]:
    """The rows ``| number | `code` | meaning |`` of the error table in PROTOCOL.md."""
    rows = re.findall(r"^\| (\d{4}) \| `([a-z_]+)` \|", PROTOCOL_DOC, re.MULTILINE)
    return {code: int(number) for number, code in rows}


def test_the_sources_are_enumerated() -> None:
    assert {"not_your_turn", "bad_card", "bad_move", "duplicate_card",
            "malformed_move"} <= engine_codes()
    assert {"bad_field", "frame_timeout", "too_many_connections"} <= named_codes()


def test_every_code_raised_is_an_error_code_and_documented_with_its_number() -> None:
    known = {member.value: member.number for member in ErrorCode}
    documented = documented_codes()
    for code in engine_codes() | named_codes():
        assert code in known, f"{code} is raised but is no ErrorCode"
        assert documented.get(code) == known[code], f"{code} is not in PROTOCOL.md's table"


def test_the_documented_table_is_exactly_the_error_codes() -> None:
    assert documented_codes() == {member.value: member.number for member in ErrorCode}


def test_the_codes_that_close_the_connection_are_listed_in_the_docs() -> None:
    sentence = PROTOCOL_DOC[PROTOCOL_DOC.index("After `frame_too_large`"):]
    listed = set(re.findall(r"`([a-z_]+)`", sentence[:sentence.index("the server closes")]))
    assert listed == {str(code) for code in FATAL}
