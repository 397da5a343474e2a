"""
A camera's decoding queue: the callback that feeds it never waits, whatever the decoder does.

A decode that blocks (a stalled child) fills the queue; every further packet is refused at
once, and the next one taken in is marked as following a gap, so that the decoder waits for a
keyframe in order. A stop interrupts the decode, ends the thread, closes the decoder on it and
gives back what it never decoded.
"""
from __future__ import annotations

import threading
import time

from triton_perception.frames import DecodingQueue


class BlockingDecoder:
    """Records what it decodes; blocks on the packet 'block' until interrupted."""

    def __init__(self) -> None:
        """Nothing decoded yet."""
        self.decoded: list[tuple[str, bool]] = []
        self.interrupted = threading.Event()
        self.closed_on: str | None = None

    def decode(self, packet: str, after_gap: bool) -> None:
        """Record `packet`; 'block' waits for the interruption."""
        self.decoded.append((packet, after_gap))
        if packet == 'block':
            self.interrupted.wait(30.0)

    def close(self) -> None:
        """Record the thread that closed the decoder."""
        self.closed_on = threading.current_thread().name


def test_a_blocked_decoder_never_holds_the_caller_and_a_stop_ends_it() -> None:
    """Put never waits; refused packets break the stream; a stop interrupts and closes."""
    decoder = BlockingDecoder()
    packets: DecodingQueue[str] = DecodingQueue('decoding test', decoder.decode,
                                                decoder.interrupted.set, decoder.close, size=2)
    assert packets.put('first') and packets.put('block')
    deadline = time.monotonic() + 10.0
    while ('block', False) not in decoder.decoded:
        assert time.monotonic() < deadline
        time.sleep(0.01)
    started = time.monotonic()
    accepted = [packets.put(f'p{index}') for index in range(5)]
    assert time.monotonic() - started < 0.1
    assert accepted == [True, True, False, False, False]  # two wait, three refused
    packets.mark_gap()  # a packet lost before the queue
    started = time.monotonic()
    left = packets.stop()
    assert time.monotonic() - started < 1.0 and decoder.interrupted.is_set()
    assert left == ['p0', 'p1'] and not packets.put('late') and packets.stopped
    assert decoder.closed_on == 'decoding test'
    assert decoder.decoded == [('first', False), ('block', False)]


def test_the_packet_after_a_refused_one_follows_a_gap() -> None:
    """In order: a refused packet or a loss marks the next packet taken in, and only it."""
    decoder = BlockingDecoder()
    packets: DecodingQueue[str] = DecodingQueue('decoding gaps', decoder.decode,
                                                decoder.interrupted.set, decoder.close, size=1)

    def decoded(packet: str) -> None:
        deadline = time.monotonic() + 10.0
        while not any(name == packet for name, _gap in decoder.decoded):
            assert time.monotonic() < deadline, packet
            time.sleep(0.01)
    assert packets.put('block')
    decoded('block')
    assert packets.put('waiting') and not packets.put('refused')
    decoder.interrupted.set()  # the decode returns
    for packet in ('after the refused one', 'plain'):
        decoded('waiting')
        assert packets.put(packet)
        decoded(packet)
    packets.mark_gap()  # a packet lost before the queue
    for packet in ('after a loss', 'plain again'):
        assert packets.put(packet)
        decoded(packet)
    packets.stop()
    assert decoder.decoded == [('block', False), ('waiting', False),
                               ('after the refused one', True), ('plain', False),
                               ('after a loss', True), ('plain again', False)]
