"""Completion in two stages (pgcli's ``suggest_type`` then ``pgcompleter``).

Stage one, ``suggest(text)``, is a pure function of the typed text alone: it says what kind of
word comes next and what has been typed already (``sapaw 8d `` wants a meld id that accepts
``8d``). Stage two, ``candidates(suggestion, view)``, turns that into words drawn only from the
view's legal moves, so only legal things complete. ``MoveCompleter`` glues both to prompt_toolkit.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass
from enum import StrEnum

from prompt_toolkit.completion import CompleteEvent, Completer, Completion
from prompt_toolkit.document import Document
from tongits.engine import Action, Card, InvalidMove, Move, SeatView

from .commands import COMMANDS, Args, resolve


class Want(StrEnum):
    """The kind of word that comes next."""

    COMMAND = "command"
    PICK = "pick"  # hand cards melding with the top discard (or a meld id, pick_to_sapaw)
    MELD_CARDS = "meld_cards"  # hand cards forming a meld
    SECRET_CARDS = "secret_cards"  # four of a kind from the hand
    SAPAW_CARD = "sapaw_card"  # a hand card that some meld accepts
    SAPAW_MELD = "sapaw_meld"  # a meld id accepting ``card``
    DISCARD_CARD = "discard_card"  # a card in hand
    TEXT = "text"  # free text (chat)
    NOTHING = "nothing"


@dataclass(frozen=True, slots=True)
class Suggestion:
    want: Want
    word: str = ""  # the partial word under the cursor, replaced by a completion
    given: tuple[Card, ...] = ()  # cards already typed for this command
    card: Card | None = None  # the card of ``sapaw CARD ``


_CARD_WANTS = {
    Action.PICK: Want.PICK,
    Action.MELD: Want.MELD_CARDS,
    Action.SECRET: Want.SECRET_CARDS,
}


def suggest(text: str) -> Suggestion:
    """What comes next after ``text`` (the line up to the cursor)."""
    tokens = text.replace(",", " ").split()
    if text and not (text[-1].isspace() or text[-1] == ",") and tokens:
        word = tokens.pop()
    else:
        word = ""
    if not tokens:
        return Suggestion(Want.COMMAND, word)
    spec = resolve(tokens[0])
    args = tokens[1:]
    if spec is None:
        return Suggestion(Want.NOTHING, word)
    if spec.args is Args.TEXT:
        return Suggestion(Want.TEXT, word)
    if spec.action in _CARD_WANTS:
        if spec.action is Action.PICK and any(a.isdigit() for a in args):
            return Suggestion(Want.NOTHING, word)
        given = _cards(args)
        if given is None:
            return Suggestion(Want.NOTHING, word)
        return Suggestion(_CARD_WANTS[spec.action], word, given)
    if spec.args is Args.CARD_MELD:
        if not args:
            return Suggestion(Want.SAPAW_CARD, word)
        card = _cards(args[:1])
        if len(args) == 1 and card:
            return Suggestion(Want.SAPAW_MELD, word, card=card[0])
        return Suggestion(Want.NOTHING, word)
    if spec.args is Args.CARD and not args:
        return Suggestion(Want.DISCARD_CARD, word)
    return Suggestion(Want.NOTHING, word)


def _cards(tokens: Iterable[str]) -> tuple[Card, ...] | None:
    try:
        return tuple(Card.parse(t) for t in tokens)
    except InvalidMove:
        return None


def card_prefix(word: str) -> str:
    """A typed card prefix in canonical lower case: ``10`` → ``t``, ``K♠`` → ``ks``."""
    w = word.strip()
    for symbol, char in (("♣", "c"), ("♦", "d"), ("♥", "h"), ("♠", "s")):
        w = w.replace(symbol, char)
    if w.startswith("10"):
        w = "t" + w[2:]
    return w.lower()


def card_matches(card: Card, word: str) -> bool:
    return str(card).lower().startswith(card_prefix(word))


@dataclass(frozen=True, slots=True)
class Candidate:
    """One completion: ``text`` replaces the word under the cursor."""

    text: str
    meta: str = ""


def candidates(s: Suggestion, view: SeatView | None) -> list[Candidate]:
    """Stage two: the words for ``s`` that lead only to legal moves of ``view``."""
    legal: tuple[Move, ...] = view.legal if view is not None else ()
    if s.want is Want.COMMAND:
        actions = {m.action for m in legal}
        out = [
            Candidate(name if spec.args is Args.NONE else name + " ", spec.help)
            for name, spec in COMMANDS.items()
            if (spec.action is None or spec.action in actions) and name.startswith(s.word.lower())
        ]
        return sorted(out, key=lambda c: COMMANDS[c.text.strip()].action is None)
    if s.want in (Want.PICK, Want.MELD_CARDS, Want.SECRET_CARDS):
        action = {Want.PICK: Action.PICK, Want.MELD_CARDS: Action.MELD}.get(s.want, Action.SECRET)
        return _combinations(s, [m for m in legal if m.action is action], view)
    if s.want is Want.SAPAW_CARD:
        fits_into: dict[Card, list[int]] = {}
        for m in legal:
            if m.action is Action.SAPAW and m.card is not None and m.meld is not None:
                fits_into.setdefault(m.card, []).append(m.meld)
        return [
            Candidate(str(c), "→ meld " + ", ".join(str(i) for i in ids))
            for c, ids in sorted(fits_into.items())
            if card_matches(c, s.word)
        ]
    if s.want is Want.SAPAW_MELD:
        melds = {m.id: m for m in view.melds} if view is not None else {}
        out = []
        for m in legal:
            if m.action is Action.SAPAW and m.card == s.card and m.meld is not None:
                if str(m.meld).startswith(s.word):
                    shown = melds.get(m.meld)
                    meta = " ".join(str(c) for c in shown.cards) if shown else ""
                    out.append(Candidate(str(m.meld), meta))
        return out
    if s.want is Want.DISCARD_CARD and view is not None:
        out = []
        for m in legal:
            if m.action is Action.DISCARD and m.card is not None and card_matches(m.card, s.word):
                out.append(Candidate(str(m.card), f"count → {view.count((m.card,))}"))
        return out
    return []


def _combinations(s: Suggestion, moves: list[Move], view: SeatView | None) -> list[Candidate]:
    """Legal card groups that contain every card already typed; the completion is the rest of
    the group, with a card matching the partial word first."""
    given = set(s.given)
    top = view.top if view is not None else None
    out: list[Candidate] = []
    seen: set[str] = set()
    for m in moves:
        if m.meld is not None:
            if not given and str(m.meld).startswith(s.word):
                out.append(Candidate(str(m.meld), f"lay {top} off onto meld {m.meld}"))
            continue
        if not given <= set(m.cards):
            continue
        rest = [c for c in m.cards if c not in given]
        if not rest:
            continue
        if s.word:
            first = next((c for c in rest if card_matches(c, s.word)), None)
            if first is None:
                continue
            rest.remove(first)
            rest.insert(0, first)
        text = " ".join(str(c) for c in rest)
        if text in seen:
            continue
        seen.add(text)
        whole = [*m.cards, top] if m.action is Action.PICK and top is not None else m.cards
        out.append(
            Candidate(
                text, "→ " + " ".join(str(c) for c in sorted(whole, key=lambda c: (c.rank, c.suit)))
            )
        )
    return out


class MoveCompleter(Completer):
    """prompt_toolkit completer reading the current view through ``get_view``."""

    def __init__(self, get_view: Callable[[], SeatView | None]) -> None:
        self.get_view = get_view

    def get_completions(
        self, document: Document, complete_event: CompleteEvent
    ) -> Iterator[Completion]:
        text = document.text_before_cursor
        if not text.strip() and not complete_event.completion_requested:
            return  # an empty line shows no menu until Tab asks for one
        s = suggest(text)
        for c in candidates(s, self.get_view()):
            yield Completion(c.text, start_position=-len(s.word), display_meta=c.meta)
