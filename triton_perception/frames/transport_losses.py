"""
Frames lost before they reach a node's callback, counted from the publishers' sequence numbers.

A DDS reader's history (KEEP_LAST) overwrites a sample the executor has not taken yet, and a
best-effort transport drops fragments of large frames; neither shows in a node's own counts,
since the frame never reaches its callback. Each publisher numbers its samples, so a gap in
the numbers a subscription sees from one publisher is a count of frames lost on the way.
"""
from __future__ import annotations

from dataclasses import dataclass, field
from typing import Hashable, Mapping, Protocol

# rmw's "sequence numbers unsupported" value (RMW_MESSAGE_INFO_SEQUENCE_NUMBER_UNSUPPORTED = 0).
UNSUPPORTED_SEQUENCE_NUMBER = 0


class LossSink(Protocol):
    """Where frames lost before a node are counted: its FrameAccounting, or all of a camera's."""

    def lost_before_node(self, count: int, reason: str) -> int:
        """Count `count` frames lost for `reason`; return the total so far."""


@dataclass
class SequenceGapCounter:
    """
    Counts gaps in each publisher's publication sequence numbers.

    Counting starts at the first sample seen from a publisher (what it sent before the reader
    matched it was never meant for this reader). A publisher that restarts has a new GID, so it
    starts a count of its own; a sequence that goes backwards (a GID reused by a restarted
    process) also starts a new count: neither is ever counted as loss.
    """

    _last: dict[Hashable, int] = field(default_factory=dict)
    lost: int = 0

    def observe(self, publisher: Hashable, sequence_number: int) -> int:
        """
        Record one received sample.

        Returns how many samples of this publisher were missed just before it.
        """
        previous = self._last.get(publisher)
        self._last[publisher] = sequence_number
        if previous is None or sequence_number <= previous:
            return 0
        missed = sequence_number - previous - 1
        self.lost += missed
        return missed

    def forget(self) -> None:
        """
        Start over (e.g. the subscription was recreated).

        Earlier samples say nothing about what the next subscription will see.
        """
        self._last.clear()


def publisher_sequence(message_info: Mapping[str, object]) -> tuple[Hashable, int] | None:
    """
    Return (publisher key, publication sequence number) from rclpy's MessageInfo.

    None when the RMW does not provide them (Humble's rclpy has no MessageInfo at all).
    """
    sequence_number = message_info.get('publication_sequence_number')
    gid = message_info.get('publisher_gid')
    if (not isinstance(sequence_number, int) or sequence_number == UNSUPPORTED_SEQUENCE_NUMBER
            or not gid):
        return None
    if isinstance(gid, Mapping):
        data = gid.get('data', b'')
        key: Hashable = (gid.get('implementation_identifier'),
                         bytes(data) if isinstance(data, (bytes, list)) else b'')
    else:
        key = gid if isinstance(gid, Hashable) else repr(gid)
    return key, sequence_number
