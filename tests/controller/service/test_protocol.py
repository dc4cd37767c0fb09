"""The control protocol: request checks, refusals that say why, and who may send what."""

from __future__ import annotations

import json

import pytest
from hypothesis import given
from hypothesis import strategies as st

from controller.service.protocol import (
    VERBS,
    Access,
    ErrorCode,
    Refusal,
    Role,
    decode_request,
    encode,
    error_reply,
    event_message,
    ok_reply,
)


def _line(message: object) -> bytes:
    return json.dumps(message).encode()


def test_verb_list() -> None:
    """The verbs of issue 6, and the commands no device produces (deck, irregularity, options,
    withdrawal); only watch/status/list/events are reads."""
    assert set(VERBS) == {"round.open", "round.close", "round.status", "wager.place",
                          "wager.list", "decide", "supervisor.void", "supervisor.reconstruct",
                          "supervisor.order", "supervisor.swap", "watch", "round.shuffled",
                          "round.reveal", "round.settle", "option", "supervisor.continue",
                          "deck.replace", "deck.counted", "irregularity.report",
                          "options.close", "wager.withdraw", "supervisor.clear-fault",
                          "journal.acknowledge", "supervisor.answer", "supervisor.clock-override",
                          "wager.place-batch", "round.events"}
    reads = {verb for verb, spec in VERBS.items() if spec.access is Access.READ}
    assert reads == {"watch", "round.status", "wager.list", "round.events"}


@pytest.mark.parametrize(("role", "read", "command"), [
    (Role.ROOT, True, True), (Role.DEALER, True, True), (Role.SUPERVISOR, True, True),
    (Role.SURVEILLANCE, True, False), (Role.NONE, False, False)])
def test_roles(role: Role, read: bool, command: bool) -> None:
    """Surveillance only watches; operators and root command; anyone else nothing."""
    assert (role.may(Access.READ), role.may(Access.COMMAND)) == (read, command)


def test_decode_a_full_request() -> None:
    """Every field of a request survives decoding, and encoding round-trips."""
    request = decode_request(_line({"id": 7, "verb": "wager.place", "actor": "dealer:1042",
                                    "args": {"wager_id": "w1", "position": "3", "bet": "ante",
                                             "amount": 500, "seated": True}}))
    assert (request.id, request.verb, request.actor) == (7, "wager.place", "dealer:1042")
    assert request.args["amount"] == 500
    assert decode_request(encode(request.to_json())) == request


def test_args_may_be_left_out() -> None:
    """A verb without arguments needs no "args" field."""
    assert dict(decode_request(b'{"id": "a", "verb": "round.open"}').args) == {}


@pytest.mark.parametrize(("verb", "args"), [
    ("deck.replace", {}),
    ("deck.counted", {"count": 52}),
    ("deck.counted", {"count": 0}),
    ("options.close", {}),
    ("wager.withdraw", {"wager_id": "1-main"}),
    ("irregularity.report", {"kind": "dropped_card"}),
    ("irregularity.report", {"kind": "wrong_count_player", "position": "3", "handled": False,
                             "round": 12, "details": "box 3 has four cards"}),
    ("irregularity.report", {"kind": "dropped_card", "exposed_before_drop": True}),
])
def test_the_commands_no_device_produces(verb: str, args: dict[str, object]) -> None:
    """Deck replaced or counted (RWS-NC3P 5.5.2, MBS-R3P 5.9), an irregularity reported by the
    dealer, the options closed, a wager withdrawn: each decodes with its arguments."""
    request = decode_request(_line({"id": 9, "verb": verb, "args": args}))
    assert (request.verb, dict(request.args)) == (verb, args)
    assert request.spec.access is Access.COMMAND


REFUSED = [
    (b"not json", ErrorCode.MALFORMED, "not a JSON line", None),
    (b"[1, 2]", ErrorCode.MALFORMED, "JSON object", None),
    (_line({"verb": "round.open"}), ErrorCode.MALFORMED, "missing or bad 'id'", None),
    (_line({"id": True, "verb": "round.open"}), ErrorCode.MALFORMED, "'id'", None),
    (_line({"id": 1}), ErrorCode.MALFORMED, "missing or bad 'verb'", 1),
    (_line({"id": 1, "verb": "round.open", "user": "root"}), ErrorCode.MALFORMED,
     "unknown field 'user'", 1),
    (_line({"id": 1, "verb": "round.explode"}), ErrorCode.UNKNOWN_VERB,
     "unknown verb 'round.explode'; verbs are round.open", 1),
    (_line({"id": 1, "verb": "round.open", "args": []}), ErrorCode.MALFORMED,
     "'args' must be a JSON object", 1),
    (_line({"id": 1, "verb": "round.open", "actor": ""}), ErrorCode.MALFORMED, "'actor'", 1),
    (_line({"id": 2, "verb": "decide", "args": {"position": "3"}}), ErrorCode.BAD_ARGS,
     "decide: missing argument 'choice'", 2),
    (_line({"id": 2, "verb": "decide", "args": {"position": "3", "choice": "raise"}}),
     ErrorCode.BAD_ARGS, "must be one of play, fold, got 'raise'", 2),
    (_line({"id": 2, "verb": "round.open", "args": {"now": True}}), ErrorCode.BAD_ARGS,
     "unknown argument 'now' \\(it takes no arguments\\)", 2),
    (_line({"id": 3, "verb": "wager.place", "args": {"wager_id": "w", "position": "1",
                                                     "bet": "ante", "amount": "5"}}),
     ErrorCode.BAD_ARGS, "'amount' must be an integer", 3),
    (_line({"id": 3, "verb": "wager.place", "args": {"wager_id": "w", "position": "1",
                                                     "bet": "ante", "amount": True}}),
     ErrorCode.BAD_ARGS, "'amount' must be an integer", 3),
    (_line({"id": 4, "verb": "supervisor.swap", "args": {"positions": ["1"]}}),
     ErrorCode.BAD_ARGS, "exactly two positions", 4),
    (_line({"id": 4, "verb": "supervisor.reconstruct", "args": {"moves": [["1"]]}}),
     ErrorCode.BAD_ARGS, "\\[from, to\\] pairs", 4),
    (_line({"id": 4, "verb": "supervisor.reconstruct", "args": {"hands": {"1": "QDKS"}}}),
     ErrorCode.BAD_ARGS, "position -> list of card codes", 4),
    (_line({"id": 5, "verb": "deck.counted"}), ErrorCode.BAD_ARGS,
     "deck.counted: missing argument 'count' \\(it takes count\\)", 5),
    (_line({"id": 5, "verb": "deck.counted", "args": {"count": -1}}), ErrorCode.BAD_ARGS,
     "'count' must be a whole number, 0 or more, got -1", 5),
    (_line({"id": 5, "verb": "deck.counted", "args": {"count": "52"}}), ErrorCode.BAD_ARGS,
     "'count' must be a whole number, 0 or more, got '52'", 5),
    (_line({"id": 5, "verb": "deck.counted", "args": {"count": 52.0}}), ErrorCode.BAD_ARGS,
     "'count' must be a whole number", 5),
    (_line({"id": 5, "verb": "deck.replace", "args": {"count": 52}}), ErrorCode.BAD_ARGS,
     "deck.replace: unknown argument 'count' \\(it takes no arguments\\)", 5),
    (_line({"id": 6, "verb": "irregularity.report", "args": {}}), ErrorCode.BAD_ARGS,
     "irregularity.report: missing argument 'kind'", 6),
    (_line({"id": 6, "verb": "irregularity.report", "args": {"kind": "spilled_drink"}}),
     ErrorCode.BAD_ARGS, ("'kind' must be one of foreign_card, .*dropped_card, "
                          "reversed_sequence, .*, got 'spilled_drink'"), 6),
    (_line({"id": 6, "verb": "irregularity.report", "args": {"kind": "dropped_card",
                                                             "position": 3}}),
     ErrorCode.BAD_ARGS, "'position' must be a non-empty string, got 3", 6),
    (_line({"id": 6, "verb": "irregularity.report", "args": {"kind": "dropped_card",
                                                             "handled": "yes"}}),
     ErrorCode.BAD_ARGS, "'handled' must be true or false", 6),
    (_line({"id": 6, "verb": "irregularity.report", "args": {"kind": "dropped_card",
                                                             "round": -2}}),
     ErrorCode.BAD_ARGS, "'round' must be a whole number", 6),
    (_line({"id": 6, "verb": "irregularity.report", "args": {"kind": "other", "box": "3"}}),
     ErrorCode.BAD_ARGS, ("unknown argument 'box' \\(it takes kind, position, handled, "
                          "exposed_before_drop, round, details, source\\)"), 6),
    (_line({"id": 7, "verb": "options.close", "args": {"position": "1"}}), ErrorCode.BAD_ARGS,
     "options.close: unknown argument 'position'", 7),
    (_line({"id": 8, "verb": "wager.withdraw", "args": {}}), ErrorCode.BAD_ARGS,
     "wager.withdraw: missing argument 'wager_id'", 8),
    (_line({"id": 8, "verb": "wager.withdraw", "args": {"wager_id": ""}}), ErrorCode.BAD_ARGS,
     "'wager_id' must be a non-empty string", 8),
]


@pytest.mark.parametrize(("line", "code", "message", "request_id"), REFUSED)
def test_refusals_say_why(line: bytes, code: ErrorCode, message: str,
                          request_id: object) -> None:
    """Every invalid request is refused with its code, the reason, and its id when it had one."""
    with pytest.raises(Refusal, match=message) as caught:
        decode_request(line)
    assert caught.value.code is code
    assert caught.value.request_id == request_id


def test_reply_shapes() -> None:
    """Replies and events have the documented shape and are one line each."""
    assert json.loads(encode(ok_reply(1, {"a": 1}))) == {"id": 1, "ok": True, "result": {"a": 1}}
    assert json.loads(encode(error_reply(None, ErrorCode.TOO_LONG, "x"))) == {
        "id": None, "ok": False, "error": {"code": "too_long", "message": "x"}}
    assert event_message("w", {"event": "card_assigned"}) == {
        "id": "w", "event": {"event": "card_assigned"}}
    assert encode({"a": "é"}).endswith(b"\n") and b"\n" not in encode({"a": "x\ny"})[:-1]


@given(st.binary(max_size=200))
def test_any_bytes_are_a_request_or_a_refusal(data: bytes) -> None:
    """Whatever a client sends, decoding yields a request or a Refusal, never a crash."""
    try:
        decode_request(data)
    except Refusal:
        pass


@given(st.dictionaries(st.sampled_from(["id", "verb", "args", "actor", "x"]),
                       st.one_of(st.none(), st.booleans(), st.integers(), st.text(max_size=8),
                                 st.sampled_from(list(VERBS)),
                                 st.dictionaries(st.text(max_size=8), st.integers()))))
def test_any_object_is_a_request_or_a_refusal(message: dict[str, object]) -> None:
    """Any JSON object with any mix of fields decodes or is refused, never crashes."""
    try:
        decode_request(_line(message))
    except Refusal:
        pass
