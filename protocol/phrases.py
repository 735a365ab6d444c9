"""The words a table is told in: one phrasebook for the terminal and the page.

Each phrase is a template with ``{name}`` fields (``str.format`` fields with no format spec,
so that the page fills them with a plain replace). The terminal client imports ``say``; the
server sends ``PHRASES`` to the page as ``/phrases.json`` (server/net/web.py), so a person at the
terminal and a friend on a phone read an event, a call and a hand's end in the same words.

Fields: ``who`` a seat's name as the reader knows it ("you" for the reader's own seat), ``cards``
and ``card`` cards in the notation the reader sees, ``meld`` a meld's number, ``top`` the card
picked, ``name`` a seat's name in a seat change, ``count`` a count of cards or points,
``whose`` a seat's name as an owner ("your" for the reader's own).

A hand's headline is put together the same way at both ends (``result_head`` in
client/tui/render.py, ``handStory`` in the page's app.js; tests/test_phrases_page.py runs both
on the same results): ``hand.won`` (``hand.you_won`` for the reader), then how: the ``end.``
words, or for a call ``end.call`` and whether anyone challenged, or, when a challenger beat the
caller, ``hand.call_lost`` after a comma.
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from types import MappingProxyType
from typing import Any, Final

#: Every phrase by key. A key's first word is what it tells: ``event.`` a step of the hand
#: (one per action of the protocol), ``turn.`` the reader's own turn, ``seat.`` a ``seat_update``
#: change, ``link.`` the reader's
#: own connection (in the log once it is back: the banner or status that said it was lost is
#: gone by then, and another seat's "is back" told nothing of it; and the hands settled while it
#: was gone, whose results are not sent again), ``chat.`` the speaker of
#: a chat line who holds no seat, ``end.`` how a hand ended (the ``end`` of its result),
#: ``call.`` a call and its answers (``call.confirm.`` a caller's question and ``call.answer.``
#: what the answers do, by the table's ``call_tie``), ``hand.`` a hand's start and its
#: headline, ``whose.`` a seat as an owner, ``why.`` a term of a seat's chips
#: (``hand_result.result.why``, ``chip_words``), ``review.`` what a lost hand was lost to
#: (``engine.review.Blame``: ``loss`` the decisions' expected chips, ``chips`` those lost).
PHRASES: Final = MappingProxyType({
    "event.draw": "{who} drew",
    "event.call": "{who} called",
    "event.challenge": "{who} challenged",
    "event.fold": "{who} folded",
    "event.pick": "{who} picked {top} with {cards} → #{meld}",
    "event.pick_onto": "{who} picked {top} onto meld {meld}",
    "event.meld": "{who} melded {cards} → #{meld}",
    "event.secret": "{who} laid a secret meld #{meld}",
    "event.secret_shown": "{who} laid a secret meld #{meld} {cards}",
    "event.sapaw": "{who} laid off {card} onto #{meld}",
    "event.discard": "{who} discarded {card}",
    "event.not_opened": " (not opened)",
    "event.timeout": " (time ran out: played by the server)",
    "turn.timed_out": "your time ran out: the server played for you ({moves})",
    "seat.sat": "{name} sat down",
    "seat.left": "{name} left the table",
    "seat.away": "{name} lost connection",
    "seat.back": "{name} is back",
    "seat.replaced": "{name} reconnected",
    "seat.stand_in": "a bot is standing in for {name}",
    "link.back": "connection back after {count} s",
    "link.missed_won": "{who} won hand {count} while you were away: your chips {chips}",
    "link.missed_hands": "{count} played while you were away: your chips {chips}",
    "chat.watching": "{name} (watching)",
    "end.tongits": "by Tongits",
    "end.call": "by call",
    "end.stock": "at stock-out",
    "end.void": "",
    "call.made": "{who} called, holding {count} cards",
    "call.ask": "{who} called: challenge or fold?",
    "call.confirm.challenger": "Call now? Your count is {count}: the lowest count wins, and a "
                               "challenger with a lower or equal count beats you.",
    "call.confirm.caller": "Call now? Your count is {count}: the lowest count wins, and a "
                           "challenger needs a lower count to beat you (a tie is yours).",
    "call.answer.challenger": "Challenge: your count against {who}'s, the lowest wins (a tie "
                              "beats {who}). Fold: you do not compare.",
    "call.answer.caller": "Challenge: your count against {who}'s, the lowest wins ({who} wins a "
                          "tie). Fold: you do not compare.",
    "call.challengers": "Challenged: {who}",
    "call.folders": "Folded: {who}",
    "call.nobody": "Nobody challenged",
    "hand.new": "— hand {count} —",
    "hand.won": "Hand over: {who} wins",
    "hand.you_won": "Hand over: you win",
    "hand.void": "Hand over: nobody won (void hand)",
    "hand.challenged": "(challenged)",
    "hand.unchallenged": "(nobody challenged)",
    "hand.call_lost": "challenging {whose} call",
    "whose.yours": "your",
    "whose.theirs": "{who}'s",
    "why.win": "win",
    "why.tongits": "Tongits",
    "why.challenged_call": "challenged call",
    "why.aces": "ace",
    "why.fours": "four of a kind in hand",
    "why.secret_melds": "secret meld",
    "why.concealed_melds": "concealed meld of 4+",
    "why.burned": "burned",
    "why.lost_challenge": "lost the challenge",
    "review.deal": "lost to the deal: your decisions cost {loss} of the {chips} chips",
    "review.decisions": "lost to your decisions: they cost {loss} chips, the hand {chips}",
})

_FIELD = re.compile(r"\{(\w+)\}")


def say(key: str, **fields: object) -> str:
    """The phrase ``key`` with its fields filled (``KeyError`` for an unknown key or a field
    not given: a caller's bug, not a reader's input)."""
    return _FIELD.sub(lambda match: str(fields[match.group(1)]), PHRASES[key])


def counted(n: int, noun: str, plural: str | None = None) -> str:
    """``1 card``, ``2 cards``, ``0 tables``: for the terminal's screens and the server's log
    lines alike (a host read "table t1 closed after 1 hands")."""
    return f"{n} {noun if n == 1 else plural or noun + 's'}"


def chip_words(items: Sequence[Mapping[str, Any]]) -> str:
    """Why a seat won or paid its chips, from its items of ``hand_result.result.why``: ``win
    +2 · ace ×2 +4 · burned +1`` (the page's ``chipWords`` writes the same; ``""`` for none;
    an item this phrasebook does not know, from a newer server, by its own name)."""
    return " · ".join(
        f"{PHRASES.get('why.' + item['why'], item['why'])}"
        f"{' ×' + str(item['n']) if item['n'] > 1 else ''} {item['chips']:+d}"
        for item in items)


def paid_to(items: Sequence[Mapping[str, Any]]) -> int | None:
    """The seat a seat's items were all paid to (with payments a loser's, to the winner), so
    that its line can say so: "Ben to Ana: win -1 · ace ×2 -2"; None for the others."""
    paid = {item["to"] for item in items if "to" in item}
    return paid.pop() if len(paid) == 1 else None


def missed_hands(before: Mapping[str, Any], after: Mapping[str, Any], seat: int,
                 names: Sequence[str], shown: Mapping[str, Any] | None = None) -> str | None:
    """What a seat back from a long absence (a phone locked past the grace period: a bot
    stood in and the table dealt on) is told of the hands settled meanwhile, whose results
    the server does not send again: who won the one hand, or how many there were, and the
    seat's chips in them (``link.missed_won``, ``link.missed_hands``). ``before`` and
    ``after``: the standings the reader had and the resuming state's; ``shown``: the result
    of the resumed hand when it is over (``after`` counts it, and its result is on screen or
    follows); ``names``: the seats as the log tells them. None when no hand was missed (the
    page's ``missedHands`` says the same)."""
    current = shown if shown is not None and after["hands"] > before["hands"] else None
    hands = after["hands"] - before["hands"] - (current is not None)
    if hands < 1:
        return None
    chips = (after["chips"][seat] - before["chips"][seat]
             - (current["chips"][seat] if current is not None else 0))
    signed = f"{chips:+d}" if chips else "0"
    winners = [s for s in range(3) if after["wins"][s] - before["wins"][s]
               - (current is not None and current["winner"] == s) > 0]
    if hands == 1 and len(winners) == 1:
        return say("link.missed_won", who=names[winners[0]], count=before["hands"] + 1,
                   chips=signed)
    return say("link.missed_hands", count=counted(hands, "hand"), chips=signed)
