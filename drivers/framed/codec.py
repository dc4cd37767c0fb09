"""Frame <-> message: the one table from type byte to message class."""

from __future__ import annotations

import struct

from drivers.errors import ProtocolError
from drivers.framed import event_messages as ev
from drivers.framed import messages as m
from drivers.framed.framing import Frame, encode

MESSAGE_CLASSES: dict[int, type[m.Message]] = {
    cls.TYPE: cls for cls in (
        m.Ack, m.Nak, m.Identify, m.GetStatus, m.Shuffle, m.DispenseHand, m.EndRound,
        m.ClearFault, m.GetMeters, m.EventAck, m.Resync, m.IdentityReply, m.StatusReply, m.MetersReply,
        m.Heartbeat, ev.ShuffleDoneMsg, ev.HandReadyMsg, ev.HandTakenMsg, ev.FaultRaisedMsg,
        ev.FaultClearedMsg, ev.CardMsg, ev.NoReadMsg, ev.DoubleFeedMsg, ev.LidMsg, ev.ButtonMsg,
        ev.ForeignMsg,
    )
}
COMMANDS = frozenset({m.MsgType.IDENTIFY, m.MsgType.GET_STATUS, m.MsgType.SHUFFLE,
                      m.MsgType.DISPENSE_HAND, m.MsgType.END_ROUND, m.MsgType.CLEAR_FAULT,
                      m.MsgType.GET_METERS, m.MsgType.RESYNC})
REPLIES = frozenset({m.MsgType.ACK, m.MsgType.NAK, m.MsgType.IDENTITY, m.MsgType.STATUS,
                     m.MsgType.METERS})


def decode_message(frame: Frame) -> m.Message:
    """The message in ``frame``; :class:`ProtocolError` naming the type for anything malformed."""
    cls = MESSAGE_CLASSES.get(frame.type)
    if cls is None:
        raise ProtocolError(f"unknown frame type 0x{frame.type:02X}")
    try:
        return cls.decode(frame.payload)
    except ProtocolError:
        raise
    except (struct.error, ValueError, IndexError, TypeError) as e:
        raise ProtocolError(f"malformed {cls.TYPE.name} payload: {e}") from e


def encode_message(seq: int, message: m.Message) -> bytes:
    """Wire bytes of ``message`` in a frame with sequence number ``seq``."""
    return encode(Frame(seq, int(message.TYPE), message.encode()))


def is_event(message: m.Message) -> bool:
    return isinstance(message, ev.EventMessage)
