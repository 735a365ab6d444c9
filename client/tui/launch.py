"""The sub-commands that open a screen: ``play`` (an embedded server with bots), ``connect``
(a remote server, through the lobby) and ``discover`` (servers on the LAN).

``play`` is the only place in the client that imports ``tongits.server``: the server runs in
the same Trio guest run as the client's connection. Its tables live in ``play.db`` in the
user's data directory, so a ``tongits play`` started again after a crash (or a confirmed quit)
restores the match and takes the player's seat back with the token saved beside it; each finished
hand is written there as a hand record for ``tongits replay``. A match under way keeps its
settings: flags that differ from the saved game's are named on the screen, and ``--new`` gives
the saved seat up and starts a new game with them (``play_setup``).

Arguments are checked before the screen opens: a bad one is one line and exit status 2, as
argparse does for the ones it checks itself.
"""

from __future__ import annotations

import asyncio
import math
import secrets
import socket
import sys
from collections.abc import Sequence
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any

import trio
from tongits.protocol.discovery import DISCOVERY_PORT
from tongits.protocol.phrases import counted
from tongits.server.net.lan import friends_host, is_wildcard
from tongits.server.storage.lock import DatabaseInUse
from tongits.server.storage.store import SQLiteJournal, StoreError, export

from ..connection import Connection
from ..user_files import data_dir
from .app import TableScreen
from .dial import Target
from .lobby import LobbyJoin
from .logs import quiet_logging
from .net import NetSession, SessionOptions, Sink
from .play_setup import PlaySetup, SetupStore
from .records import saved_words
from .seats import SeatStore
from .session import FakeSession, Session, local_policy
from .state import HandOver, Notice, ServerRefused, StateUpdate, Update

#: The longest name the server takes (``ServerConfig.name_max``).
NAME_MAX = 32


class UsageError(Exception):
    """A command-line argument that cannot work; ``str()`` is the one line to print."""


def run_screen(session: Session, lobby: LobbyJoin | None = None) -> int:
    """Show the table screen until quit; the terminal is restored on every exit path."""
    quiet_logging()
    asyncio.run(TableScreen(session, lobby=lobby).run())
    return 0


@dataclass(frozen=True, slots=True)
class PlayOptions:
    """What ``tongits play`` is asked for (``main`` reads it from the command line).

    ``options``: the table's rule options; ``home``: where the game is kept (None: the user's
    data directory); ``typed``: the settings typed on the command line (``PlaySetup.given``):
    on a resume, those that differ from the saved game's are named on the screen; ``new``
    forgets the saved seat first, so a new game starts; ``seed``: the offline game's deals."""

    name: str = "You"
    bots: int = 2
    timer: float = 0.0
    options: dict[str, Any] = field(default_factory=dict)
    bot_policy: str = "greedy"
    bot_delay: float = 0.8
    listen: str = "127.0.0.1"
    offline: bool = False
    seed: int | str | None = None
    home: Path | None = None
    typed: dict[str, Any] = field(default_factory=dict)
    new: bool = False
    #: the match's length in hands (None: open-ended)
    hands: int | None = None


def play(asked: PlayOptions) -> int:
    """One command, one game: a server in this process, ``bots`` server bots, our seat. The
    server keeps its tables in ``home/play.db`` and our seat token in ``home/seats``, so a
    restart resumes the match; finished hands are written to ``home/hands`` when the screen
    closes."""
    if asked.offline:
        return _play_offline(asked)
    home = asked.home if asked.home is not None else data_dir()
    db = home / "play.db"
    try:
        home.mkdir(mode=0o700, parents=True, exist_ok=True)
        journal = SQLiteJournal(str(db))
    except DatabaseInUse as error:
        holder = f" (pid {error.pid})" if error.pid is not None else ""
        print(f"tongits play: the game in {home} is open in another tongits play{holder}: go "
              "back to that terminal, or quit it first (Ctrl-Q)", file=sys.stderr)
        return 1
    except (OSError, StoreError) as error:
        print(f"tongits play: cannot keep the game in {home}: {error}", file=sys.stderr)
        return 1
    lobby = LobbyJoin()  # the embedded server's own, where `leave` and `lobby` go
    session = _play_session(asked, home, journal, lobby)
    try:
        lobby.session = session
        run_screen(session, lobby)
    finally:
        journal.close()
    if session.table:
        _say_records(db, home / "hands", session.table)
    return 0


def _play_offline(asked: PlayOptions) -> int:
    from tongits.engine import Options

    # No turn timer: with no server, nothing would play for us when it ran out (the
    # countdown stopped at 0:00 and the turn waited on).
    return run_screen(
        FakeSession(
            names=(asked.name, "Bot 1", "Bot 2"),
            options=Options.from_dict(asked.options),
            seed=asked.seed if asked.seed is not None else secrets.token_hex(4),
            bot_delay=asked.bot_delay,
            policy=local_policy(asked.bot_policy),
        )
    )


def _play_session(asked: PlayOptions, home: Path, journal: SQLiteJournal,
                  lobby: LobbyJoin) -> PlaySession:
    """The session of a ``play`` game: its server starts in the screen's Trio run, and our
    seat is the saved one, or a new table's."""
    db = home / "play.db"
    name, listen = asked.name, asked.listen
    # On the LAN, the port `tongits discover` asks (when free): friends find the game by it.
    port = 0 if _is_loopback(listen) or not _port_free(listen, DISCOVERY_PORT) else DISCOVERY_PORT

    async def embedded_server(nursery: trio.Nursery) -> tuple[str, int]:
        from tongits.server.app import Server
        from tongits.server.config import ServerConfig

        config = ServerConfig(
            host=listen,
            port=port,
            name=f"tongits play on {socket.gethostname()}",
            timer=asked.timer,
            bot_delay=asked.bot_delay,
            bot_policy=asked.bot_policy,
            log_level="WARNING",
        )
        listeners = await nursery.start(Server(config, journal).serve)
        bound = listeners[0].socket.getsockname()[1]
        friends = _friends_join(listen, bound, seated_bots)
        if friends is not None:
            session.sink(friends)
        return "127.0.0.1", bound

    seats = SeatStore(home / "seats")
    server_key = f"play:{db}"
    setups = SetupStore(home / "play-setups.json")
    if asked.new:
        seats.forget(server_key, name)
    setup = PlaySetup(asked.bots, asked.timer, asked.bot_policy, dict(asked.options),
                      asked.hands)
    saved = setups.load(name) if seats.load(server_key, name) is not None else None
    seated_bots = saved.bots if saved is not None else asked.bots  # a saved game keeps its bots

    async def sit_down(conn: Connection) -> None:
        await conn.create_table("play", options=asked.options, timer=asked.timer,
                                bots=asked.bots, hands=asked.hands)
        setups.save(name, setup)

    options = SessionOptions(name=name, join=sit_down, lobby=lobby, prelude=embedded_server,
                             seats=seats, server_key=server_key)
    session = PlaySession("127.0.0.1", 0, options, db=db, records=home / "hands",
                          resume_notice=resume_notice(setups.load(name), asked.typed))
    session.on_quit = "The game is saved: `tongits play` again takes you back to this seat."
    return session


def _say_records(db: Path, out: Path, table: str) -> None:
    """Write the hand records of ``table`` in ``out`` and say where they are."""
    try:
        written = write_records(db, out, table)
    except (OSError, StoreError) as error:
        print(f"tongits play: hand records not written: {error}", file=sys.stderr)
        return
    if written:
        print(f"{counted(len(written), 'hand record')} of table {table} in "
              f"{out}/ — see one with: tongits replay {written[-1]}")


class PlaySession(NetSession):
    """The session of ``tongits play``: when a hand ends, the table's hand records are written
    to ``records`` (from the embedded server's database) and the screen says where."""

    def __init__(self, host: str, port: int, options: SessionOptions, *, db: Path,
                 records: Path, resume_notice: Sequence[str] = ()) -> None:
        sit_down = options.join

        async def join(conn: Connection) -> None:
            self.created = True
            await sit_down(conn)

        super().__init__(host, port, replace(options, join=join))
        self.db, self.records = db, records
        #: Said on the first state of a resumed game (never after taking a new seat).
        self.resume_notice = list(resume_notice)
        self.created = False

    def start(self, sink: Sink) -> None:
        def recording(update: Update) -> None:
            sink(update)
            if isinstance(update, StateUpdate) and self.resume_notice:
                if not self.created:
                    for line in self.resume_notice:
                        sink(Notice(line, this_hand=True))
                self.resume_notice = []
            if isinstance(update, HandOver) and self.table:
                try:
                    written = write_records(self.db, self.records, self.table)
                except (OSError, StoreError) as error:
                    sink(ServerRefused("records", f"hand record not written: {error}"))
                    return
                if written:
                    for line in saved_words(written[-1], self._records_said):
                        sink(Notice(line, this_hand=True))
                    self._records_said = True

        super().start(recording)


def _friends_join(listen: str, port: int, bots: int) -> Notice | None:
    """How friends join the game served at ``listen``:``port``: from the LAN; or, with a seat
    left to them (``bots`` < 2), from this computer (the port is one of the moment, not
    7777: nothing else says it)."""
    if not _is_loopback(listen):
        host = friends_host(listen) if is_wildcard(listen) else listen
        if ":" in host:
            host = f"[{host}]"
        return Notice(f"friends join: tongits connect {host}:{port} --name NAME "
                      "(or tongits discover)")
    if bots < 2:
        return Notice(f"friends on this computer join: tongits connect 127.0.0.1:{port} "
                      "--name NAME")
    return None


def resume_notice(saved: PlaySetup | None, typed: dict[str, Any]) -> list[str]:
    """What the screen says on resuming the saved game, a line each: that it is the saved one,
    the typed flags it did not apply (a match keeps its settings), how to start a new one."""
    ignored = saved.not_applied(typed) if saved is not None else []
    if not ignored:
        return ["back in your saved game · tongits play --new starts a new one"]
    return [
        "back in your saved game: a match keeps its settings; not applied:",
        *(f"  {flag}" for flag in ignored),
        "tongits play --new with these flags gives it up and starts a new game",
    ]


def _is_loopback(host: str) -> bool:
    return host in ("localhost", "::1") or host.startswith("127.")


def _port_free(host: str, port: int) -> bool:
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as probe:
        try:
            probe.bind((host, port))
        except OSError:
            return False
    return True


def write_records(db: Path, out: Path, table: str) -> list[Path]:
    """Write ``table``'s finished hands as hand records in ``out``, oldest first."""
    written = export(str(db), str(out), table)
    return sorted((p for p in written if p.name != "standings.json"), key=_hand_number)


def _hand_number(path: Path) -> int:
    number = path.stem.rpartition("-")[2]
    return int(number) if number.isdigit() else 0


def parse_options(items: list[str]) -> dict[str, Any]:
    """``KEY=VALUE`` pairs as a table-options map: true/false and integers are typed."""
    out: dict[str, Any] = {}
    for item in items:
        key, sep, raw = item.partition("=")
        if not sep:
            raise UsageError(f"--option {item!r} is not KEY=VALUE")
        value: Any = raw
        if raw.lower() in ("true", "false"):
            value = raw.lower() == "true"
        elif raw.isdigit():
            value = int(raw)
        out[key.strip()] = value
    return out


def check_name(name: str) -> None:
    if not name.strip() or len(name.strip()) > NAME_MAX or not name.isprintable():
        raise UsageError(f"--name must be 1 to {NAME_MAX} printable characters, not {name!r}")


def check_play(args: Any) -> dict[str, Any]:
    """Every ``play`` argument the server would refuse, refused here; returns the options."""
    from tongits.engine import Options, RecordError
    from tongits.engine.policies import POLICIES

    check_name(args.name)
    defaults = PlaySetup()
    for setting in ("bots", "timer", "policy"):  # not typed: the default
        if getattr(args, setting, None) is None:
            setattr(args, setting, getattr(defaults, setting))
    if args.bots not in (0, 1, 2):
        raise UsageError(f"--bots must be 0, 1 or 2, not {args.bots}")
    if getattr(args, "hands", None) is not None and not 1 <= args.hands <= 10000:
        raise UsageError(f"--hands must be 1 to 10000, not {args.hands}")
    for flag, value in (("--timer", args.timer), ("--bot-delay", args.bot_delay)):
        if not math.isfinite(value) or value < 0:
            raise UsageError(f"{flag} must be a number of seconds ≥ 0, not {value:g}")
    if args.policy not in POLICIES:
        known = ", ".join(sorted(POLICIES))
        raise UsageError(f"--policy must be one of {known}, not {args.policy!r}")
    options = parse_options(args.option)
    try:
        Options.from_dict(options)
    except RecordError as error:
        raise UsageError(f"--option: {error.message}") from None
    return options


def check_connect(args: Any) -> Target:
    """Every ``connect`` argument that cannot work, refused here; returns where to connect."""
    from .dial import DialError, Target

    check_name(args.name)
    try:
        target = Target.parse(args.address, tls=args.tls)
    except DialError as error:
        raise UsageError(str(error)) from None
    if args.watch and target.invite is None:
        raise UsageError("--watch takes an invite link (tongits://HOST:PORT/t/TABLE"
                         "?code=CODE); in the lobby, type watch TABLE")
    return target


def main(args: Any) -> int:
    """Dispatch of ``tongits play | connect | discover`` (argparse namespace from cli.py)."""
    try:
        if args.command == "play":
            typed = {s: getattr(args, s, None) for s in ("bots", "timer", "policy", "hands")}
            options = check_play(args)
            typed["options"] = options or None
        elif args.command == "connect":
            target = check_connect(args)
    except UsageError as error:
        print(f"tongits {args.command}: error: {error}", file=sys.stderr)
        return 2
    if args.command in ("play", "connect") and not (sys.stdin.isatty() and sys.stdout.isatty()):
        print(f"tongits {args.command}: needs a terminal (standard input or output is not one)",
              file=sys.stderr)
        return 1
    if args.command == "play":
        return play(PlayOptions(
            name=args.name.strip(),
            bots=args.bots,
            timer=args.timer,
            options=options,
            bot_policy=args.policy,
            bot_delay=args.bot_delay,
            listen=args.listen,
            offline=args.offline,
            typed=typed,
            new=args.new,
            hands=args.hands,
        ))
    if args.command == "connect":
        from .lobby import connect

        return connect(target, args.name.strip(), password_file=args.password_file,
                       watch=args.watch)
    if args.command == "trust":
        from .dial import trust

        return trust(args.address, args.fingerprint)
    if args.command == "discover":
        from .discovery import print_servers

        return print_servers(port=args.port, timeout=args.timeout)
    return 2
