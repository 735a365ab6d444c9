"""The ``tongits`` command and its sub-commands."""

from __future__ import annotations

import argparse
import sys


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="tongits", description="Tongits: play, host, replay.")
    sub = parser.add_subparsers(dest="command", required=True, metavar="COMMAND")
    replay = sub.add_parser("replay", help="replay a hand record (docs/RECORD.md)")
    replay.add_argument("file", help="a tongits-hand/1 JSON file")
    replay.add_argument("--json", action="store_true", help="print one JSON object")
    return parser


def main(argv: list[str] | None = None) -> int:
    args = build_parser().parse_args(argv)
    if args.command == "replay":
        from . import replay

        return replay.run(args.file, as_json=args.json)
    return 2


if __name__ == "__main__":
    sys.exit(main())
