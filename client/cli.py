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
    arena = sub.add_parser("arena", help="bots against bots, in-process, on duplicate deals")
    arena.add_argument("--bots", default="strong,greedy,greedy", help="three policy names")
    arena.add_argument("--hands", type=int, default=3000, help="hands to play (rounded up to x3)")
    arena.add_argument("--seed", default="0", help="deals come from deck_for(seed, i)")
    arena.add_argument("--jobs", type=int, default=1, help="worker processes")
    arena.add_argument("--record", metavar="DIR", help="write every hand record into DIR")
    arena.add_argument("--json", action="store_true", help="print the standings as one JSON line")
    arena.add_argument("--options", metavar="JSON", help="table options, e.g. '{\"ante\": 1}'")
    return parser


def main(argv: list[str] | None = None) -> int:
    args = build_parser().parse_args(argv)
    if args.command == "replay":
        from . import replay

        return replay.run(args.file, as_json=args.json)
    if args.command == "arena":
        from . import arena

        return arena.run(
            args.bots,
            hands=args.hands,
            seed=args.seed,
            jobs=args.jobs,
            record=args.record,
            as_json=args.json,
            options=args.options,
        )
    return 2


if __name__ == "__main__":
    sys.exit(main())
