"""
One video camera's packets, decoded in order on a thread of their own, behind a bounded queue.

Why: decoding on the subscription callback held the hot path's one thread, the thread of every
camera of the process, for as long as a decoder took; a stalled decoder child froze them all and
a stop signal was only recorded. Here the callback only puts the packet in the camera's queue; a
full queue refuses it at once (the caller counts it as dropped, `decoder_queue_full`), and the
decoding thread, a daemon that a stop ends whatever its decoder is doing, hands each packet's
outcome on in order.

A packet that never reaches the decoder (lost before the node, or refused by a full queue)
breaks the stream: the next packet that does is marked `after_gap`, and the decoder then waits
for a keyframe (StreamDecoder.packet_lost), in the order the packets came.
"""
from __future__ import annotations

import queue
import threading
from typing import Callable, Generic, TypeVar

QUEUE_PACKETS = 16  # a camera's packets waiting to be decoded: half a second at 30 Hz
QUEUE_FULL = 'decoder_queue_full'
DECODER_STOPPED = 'decoder_stopped'
STOP_JOIN_S = 0.5  # a stop's longest wait for the thread (it is a daemon: it never holds exit)
PacketT = TypeVar('PacketT')


class DecodingQueue(Generic[PacketT]):
    """A bounded queue of one camera's packets and the thread that decodes them in order."""

    def __init__(self, name: str, decode: Callable[[PacketT, bool], None],
                 interrupt: Callable[[], None], close: Callable[[], None],
                 size: int = QUEUE_PACKETS) -> None:
        """
        Call `decode(packet, after_gap)` for each packet put, in order, on thread `name`.

        `decode` must not raise (it settles its own failures). `interrupt` (any thread) makes a
        decode that waits on a child return; `close`, on the thread as it ends, releases the
        decoder (StreamDecoder's).
        """
        self._name = name
        self._decode = decode
        self._interrupt = interrupt
        self._close = close
        self._queue: queue.Queue[tuple[PacketT, bool] | None] = queue.Queue(size)
        self._lock = threading.Lock()
        self._gap = False
        self._decoding = False
        self._stopped = threading.Event()
        self._thread: threading.Thread | None = None

    def put(self, packet: PacketT) -> bool:
        """
        Queue `packet` for decoding and return True; False, at once, when full or stopped.

        A refused packet breaks the stream: the next one queued is marked after a gap.
        """
        with self._lock:
            if self._stopped.is_set():
                return False
            if self._thread is None:
                self._thread = threading.Thread(target=self._run, name=self._name, daemon=True)
                self._thread.start()
            try:
                self._queue.put_nowait((packet, self._gap))
            except queue.Full:
                self._gap = True
                return False
            self._gap = False
            return True

    @property
    def waiting(self) -> int:
        """
        Return the packets taken in and not yet decoded (queued, or being decoded).

        Their frames are not counted as received until their outcome is known, so /diagnostics
        says how many wait here: received + waiting is what the queue was given.
        """
        return self._queue.qsize() + int(self._decoding)

    @property
    def stopped(self) -> bool:
        """Return whether `stop` was called (put refuses every packet from then on)."""
        return self._stopped.is_set()

    def mark_gap(self) -> None:
        """Say that a packet was lost before the queue: the next one queued follows a gap."""
        with self._lock:
            self._gap = True

    def stop(self) -> list[PacketT]:
        """
        End the thread (its decode interrupted) and return the packets it will not decode.

        Waits STOP_JOIN_S at most: the thread is a daemon, so a decode that ignores the
        interruption never holds the process's exit.
        """
        with self._lock:
            self._stopped.set()
            thread = self._thread
        self._interrupt()
        left = []
        while True:
            try:
                item = self._queue.get_nowait()
            except queue.Empty:
                break
            if item is not None:
                left.append(item[0])
        self._queue.put_nowait(None)  # room: drained, and nothing is put once stopped
        if thread is not None:
            thread.join(STOP_JOIN_S)
        return left

    def _run(self) -> None:
        """Decode until the stop's wake-up; a packet taken before the stop is still decoded."""
        while True:
            item = self._queue.get()
            if item is None:
                self._close()
                return
            packet, after_gap = item
            self._decoding = True
            try:
                self._decode(packet, after_gap)
            finally:
                self._decoding = False
