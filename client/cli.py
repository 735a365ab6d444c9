"""The ``tongits`` command and its sub-commands."""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

from .cli_options import add_transport_options


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="tongits", description="Tongits: play, host, replay.")
    sub = parser.add_subparsers(dest="command", required=True, metavar="COMMAND")
    replay = sub.add_parser("replay", help="replay a hand record (docs/RECORD.md)")
    replay.add_argument("file", help="a tongits-hand/1 JSON file (a bare name: the one "
                        "`tongits connect` saved under that name)")
    replay.add_argument("--json", action="store_true", help="print one JSON object")
    replay.add_argument(
        "--step",
        action="store_true",
        help="walk through the hand position by position, each decision marked as review "
        "grades it (interactive in a terminal: Enter next, p back, q quit)",
    )
    replay.add_argument("--no-review", action="store_true", help="with --step: no marks")
    replay.add_argument("--budget", type=int, default=96, help="with --step: rollouts of the "
                        "review's search per decision (default 96, the hint's)")
    arena = sub.add_parser("arena", help="any bots against each other on duplicate deals")
    arena.add_argument(
        "--bots",
        default="strong,greedy,greedy",
        help="three bots: built-in names, py:MODULE:FACTORY, cmd:COMMAND (docs/BOTS.md)",
    )
    arena.add_argument(
        "--tournament",
        metavar="BOTS",
        help="three or more bots (as --bots): every triple plays --hands hands, then one rating "
        "per bot (openskill Plackett-Luce, bootstrap intervals)",
    )
    arena.add_argument("--hands", type=int, default=3000, help="hands to play (rounded up to x3)")
    arena.add_argument("--seed", default="0", help="deals come from deck_for(seed, i)")
    arena.add_argument("--jobs", type=int, default=1, help="worker processes")
    arena.add_argument(
        "--cluster",
        metavar="ADDRESS",
        help="a Dask scheduler (tcp://HOST:8786), or local:N for N local workers",
    )
    arena.add_argument(
        "--timer",
        type=float,
        default=5.0,
        help="seconds an external bot may think per decision (default 5)",
    )
    arena.add_argument("--record", metavar="DIR", help="write every hand record into DIR")
    arena.add_argument("--json", action="store_true", help="print the standings as one JSON line")
    arena.add_argument("--options", metavar="JSON", help="table options, e.g. '{\"ante\": 1}'")
    review = sub.add_parser("review", help="grade each decision of a hand record, or a bot's "
                            "lost hands in a folder of them")
    review.add_argument("file", help="a tongits-hand/1 JSON file, or a DIR of them (`tongits "
                        "arena --record DIR`, `tongits export --out DIR`): the hands a bot lost "
                        "there, worst first")
    review.add_argument("--seat", type=int, help="only this seat (default: every seat)")
    review.add_argument("--bot", help="with a DIR: whose lost hands (default: the arena's first "
                        "bot, or the name that played most of the hands)")
    review.add_argument("--worst", type=int, default=3,
                        help="with a DIR: how many of the worst lost hands to grade (default 3)")
    review.add_argument("--json", action="store_true", help="one JSON object per seat")
    review.add_argument(
        "--budget", type=int, default=96, help="rollouts of the search per decision (default 96)"
    )
    review.add_argument("--quiet", action="store_true",
                        help="no progress bar (none either when stderr is not a terminal)")
    _add_screen_commands(sub)
    _add_bot_command(sub)
    from .ladder import add_command as add_ladder_command

    add_ladder_command(sub)
    export = sub.add_parser("export", help="write a server database's hands as hand records")
    export.add_argument("--db", required=True, metavar="PATH", help="the tongits-server database")
    export.add_argument("--table", help="only this table id (e.g. t3)")
    export.add_argument("--out", default=".", metavar="DIR", help="where to write (default: .)")
    return parser


def _add_bot_command(sub: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    """``bot``: a built-in or ``py:`` policy as a remote client (client/sdk.py, docs/BOTS.md)."""
    bot = sub.add_parser("bot", help="run a built-in bot (random, greedy, strong, expert) or "
                         "a py:MODULE:FACTORY one")
    bot.add_argument("policy", metavar="NAME",
                     help="random, greedy, strong, expert, or py:MODULE:FACTORY / "
                     "py:FILE.py:FACTORY as in the arena (docs/BOTS.md)")
    bot.add_argument(
        "--connect",
        metavar="HOST:PORT",
        help="the server: HOST:PORT, tls://HOST[:PORT] or an invite link (a host such as the "
        "arena may assign one with TONGITS_SERVER)",
    )
    add_transport_options(bot)
    bot.add_argument("--code", help="join code of a private table")
    bot.add_argument("--table", help="table id or name to join (or to name, with --create)")
    bot.add_argument("--create", action="store_true", help="open a table instead of joining")
    bot.add_argument(
        "--bots",
        default="0",
        metavar="N|NAMES",
        help="with --create: N server bots, or their policies, e.g. strong,greedy",
    )
    bot.add_argument("--timer", type=float, help="with --create: seconds per turn, 0 for none")
    bot.add_argument("--hands", type=int, help="leave after N hands (default: play on)")
    bot.add_argument(
        "--ladder",
        action="store_true",
        help="play rated ladder matches as account --name (registered on first use, its key "
        "kept in the user's key file)",
    )
    bot.add_argument("--matches", type=int, help="with --ladder: stop after N matches")
    bot.add_argument("--seed", help="seed of the bot's own randomness")
    bot.add_argument("--name", help="name at the table (default: the policy's name)")
    bot.add_argument("--text", action="store_true", help="speak JSON lines instead of msgpack")
    bot.add_argument("--record", metavar="DIR", help="write each hand's record into DIR, for "
                     "`tongits review DIR --bot NAME`")


def _add_screen_commands(sub: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    """``play``, ``connect`` and ``discover`` (client/tui/launch.py)."""
    play = sub.add_parser(
        "play",
        help="play now: embedded server, two server bots, this screen",
        description="Play now: a server in this process, server bots, this screen. The game "
        "and each hand's record are kept in the user's data directory (tongits replay). "
        "Run again, it resumes the saved game, whose bots, timer and rules stay as they were: "
        "the screen names any of these flags it did not apply; --new starts a new game.",
    )
    from tongits.engine.policies import POLICIES

    from .tui.play_setup import PlaySetup

    default = " (default: %(default)s)"
    # None: not typed (the default applies): a resumed game names the flags it did not apply.
    setup = PlaySetup()
    play.add_argument("--name", default="You", help="your name at the table" + default)
    play.add_argument(
        "--bots", type=int, help=f"server bots to seat, 0-2 (default: {setup.bots})"
    )
    play.add_argument(
        "--timer", type=float, help=f"seconds per turn, 0 for none (default: {setup.timer})"
    )
    play.add_argument(
        "--policy", help=f"bots: {'/'.join(POLICIES)} (default: {setup.policy})"
    )
    play.add_argument(
        "--hands", type=int, help="a match of this many hands (default: open-ended)"
    )
    play.add_argument("--bot-delay", type=float, default=0.8, help="seconds a bot waits" + default)
    play.add_argument(
        "--new",
        action="store_true",
        help="give up the saved game (if any) and start a new one with these flags",
    )
    play.add_argument(
        "--option",
        action="append",
        default=[],
        metavar="KEY=VALUE",
        help="a table option of RULES.md §10, e.g. pick_to_sapaw=true (repeatable)",
    )
    play.add_argument(
        "--listen",
        default="127.0.0.1",
        help="address of the embedded server (0.0.0.0 lets the LAN join, on port 7777 "
        "when free, found by tongits discover)" + default,
    )
    play.add_argument(
        "--offline",
        action="store_true",
        help="no server at all: a game in this process against two local bots (--policy), "
        "with no turn timer and nothing saved",
    )
    connect = sub.add_parser("connect", help="join a server: lobby, then the table")
    connect.add_argument(
        "address",
        help="HOST[:PORT] (default port 7777), tls://HOST[:PORT], or an invite link "
        "tongits://HOST:PORT/t/TABLE?code=CODE (or its browser form http(s)://…/t/TABLE?…)",
    )
    connect.add_argument("--name", required=True, help="your name")
    connect.add_argument(
        "--watch",
        action="store_true",
        help="with an invite link: watch its table (a private one too) instead of sitting down",
    )
    add_transport_options(connect)
    trust = sub.add_parser(
        "trust", help="accept a server's self-signed TLS certificate (first use or a new one)"
    )
    trust.add_argument("address", help="tls://HOST[:PORT]")
    trust.add_argument("--fingerprint", help="accept only this SHA256:… fingerprint, no question")
    discover = sub.add_parser("discover", help="find Tongits servers on the LAN (UDP)")
    discover.add_argument("--port", type=int, default=7777, help="UDP port servers answer on")
    discover.add_argument("--timeout", type=float, default=1.5, help="seconds to listen")


def main(argv: list[str] | None = None) -> int:
    args = build_parser().parse_args(argv)
    if args.command == "replay":
        from . import replay

        return replay.run(args.file, as_json=args.json, step=args.step,
                          review=not args.no_review, budget=args.budget)
    if args.command == "review":
        from . import review as review_command

        # the bar redraws one line: in a log file or a pipe it is a heap of \r-joined lines
        progress = not args.quiet and sys.stderr.isatty()
        if Path(args.file).is_dir():
            return review_command.run_lost(args.file, bot=args.bot, worst=args.worst,
                                           as_json=args.json, budget=args.budget,
                                           progress=progress)
        return review_command.run(
            args.file,
            seat=args.seat,
            as_json=args.json,
            budget=args.budget,
            progress=progress,
        )
    if args.command == "arena":
        from .arena import runner, tournament

        command = runner.ArenaCommand(
            args.tournament or args.bots, args.hands, args.seed, jobs=args.jobs,
            cluster=args.cluster, timer=args.timer, record=args.record, as_json=args.json,
            options=args.options,
        )
        return (tournament.run if args.tournament else runner.run)(command)
    if args.command == "export":
        from tongits.server.storage.store import StoreError, export

        try:
            written = export(args.db, args.out, args.table)
        except (OSError, StoreError) as exc:
            print(f"tongits export: {exc}", file=sys.stderr)
            return 1
        print(f"{len(written) - 1} hand records and standings.json written to {args.out}")
        return 0
    if args.command == "bot":
        from . import sdk

        return sdk.run_builtin(args)
    if args.command == "ladder":
        from . import ladder

        return ladder.run(args)
    if args.command in ("play", "connect", "discover", "trust"):
        from .tui import launch

        return launch.main(args)
    return 2


if __name__ == "__main__":
    sys.exit(main())
