"""
Record topics into a rosbag2 from raw rclpy subscriptions, like `ros2 bag record`.

Messages are stored as received (serialised CDR; nothing is deserialised) with the node
clock's receive time as bag time, as rosbag2 does, so a bag of pipeline outputs shows when
results arrived; their header stamps still tie them to the input frames.
"""
from __future__ import annotations

from collections.abc import Mapping
from functools import partial
from pathlib import Path
import queue
import shutil
import threading
from types import TracebackType

from rclpy.node import Node
from rclpy.subscription import Subscription
from rosbags.interfaces import Connection

from triton_perception.bag.bag_format import BagError, header_stamp_ns, new_writer, typestore_for
from triton_perception.bag.ros_endpoints import message_class, qos_profile


class BagRecorder:
    """
    Write every message on ``topics`` ({topic: 'pkg/msg/Type'}) to a new bag at ``output``.

    The caller spins ``node`` (any executor; callbacks may run on several threads). Default
    QoS is reliable with depth 100: lossless against reliable publishers (the ROS default,
    and play_bag's). A reliable subscription never matches a best-effort publisher (e.g. a
    camera driver using sensor-data QoS; rclpy logs an incompatible-QoS warning): record
    those with ``reliability='best_effort'``, which matches both kinds but may drop under load.
    Topics are keyed by their resolved names in the bag and in the counts.
    """

    def __init__(self, node: Node, output: Path, topics: Mapping[str, str], *,
                 storage: str | None = None, reliability: str = 'reliable',
                 depth: int = 100) -> None:
        """
        Prepare a bag at `output` ('mcap' or 'sqlite3', None: the distribution's default).

        `start` creates it and subscribes. `reliability` and `depth` make the subscriptions' QoS
        (see the class docstring).

        Raises BagError if `topics` is empty.
        """
        if not topics:
            raise BagError('no topics to record')
        self._node = node
        self._output = Path(output)
        self._qos = qos_profile(reliability, depth)
        self._types = {node.resolve_topic_name(topic): type_name
                       for topic, type_name in topics.items()}
        self._classes = {topic: message_class(t) for topic, t in self._types.items()}
        self._store = typestore_for(set(self._types.values()))
        self._writer = new_writer(self._output, storage)
        self._lock = threading.Lock()
        self._counts: dict[str, int] = dict.fromkeys(self._types, 0)
        self._header_stamps: dict[str, set[int]] = {topic: set() for topic in self._types}
        self._subscriptions: list[Subscription[object]] = []
        # The writer lives on a thread of its own: sqlite3 storage refuses to be written from
        # another thread than the one that opened it, and the executor's callbacks run anywhere.
        self._queue: queue.SimpleQueue[tuple[str, int, bytes] | None] = queue.SimpleQueue()
        self._thread: threading.Thread | None = None
        self._failure: BaseException | None = None
        self._started = False
        self._recording = False

    def start(self) -> None:
        """Create the bag and subscribe; messages count from here on."""
        with self._lock:
            if self._started:
                raise BagError(f'recorder for {self._output} was already started')
            self._started = True
        opened = threading.Event()
        self._thread = threading.Thread(target=self._write_bag, args=(opened,),
                                        name=f'bag writer {self._output.name}', daemon=True)
        self._thread.start()
        opened.wait()
        if self._failure is not None:
            raise self._failure
        with self._lock:
            self._recording = True
        for topic, msg_class in self._classes.items():
            self._subscriptions.append(self._node.create_subscription(
                msg_class, topic, partial(self._on_message, topic), self._qos, raw=True))

    def counts(self) -> dict[str, int]:
        """Messages written so far per topic (safe to call from any thread)."""
        with self._lock:
            return dict(self._counts)

    def stop(self) -> dict[str, int]:
        """
        Unsubscribe, finish the bag (metadata.yaml) and return the message counts.

        Raises
        ------
        BagError
            The bag could not be written; the message says why.

        """
        with self._lock:
            was_recording, self._recording = self._recording, False
        if not was_recording:
            return self.counts()
        for subscription in self._subscriptions:
            self._node.destroy_subscription(subscription)
        self._subscriptions.clear()
        self._queue.put(None)
        if self._thread is not None:
            self._thread.join()
        if self._failure is not None:
            raise BagError(f'{self._output}: writing failed: {self._failure}') from self._failure
        return self.counts()

    def __enter__(self) -> BagRecorder:
        """Start recording."""
        self.start()
        return self

    def __exit__(self, exc_type: type[BaseException] | None, exc: BaseException | None,
                 traceback: TracebackType | None) -> None:
        """Stop recording and close the bag."""
        self.stop()

    def has_header_stamp(self, topic: str, stamp_ns: int) -> bool:
        """Return whether a message of `topic` (resolved name) with this header stamp arrived."""
        with self._lock:
            return stamp_ns in self._header_stamps[topic]

    def _on_message(self, topic: str, data: bytes) -> None:
        stamp_ns = self._node.get_clock().now().nanoseconds
        header_stamp = header_stamp_ns(data)
        with self._lock:
            if self._recording:
                self._queue.put((topic, stamp_ns, data))
                self._counts[topic] += 1
                if header_stamp is not None:
                    self._header_stamps[topic].add(header_stamp)

    def _write_bag(self, opened: threading.Event) -> None:
        """Open, write and close the bag on this one thread, until stop() sends None."""
        connections: dict[str, Connection] = {}
        try:
            self._writer.open()
            for topic, type_name in self._types.items():
                connections[topic] = self._writer.add_connection(topic, type_name,
                                                                 typestore=self._store)
        except BaseException as error:  # handed to start()
            self._failure = error
            self._writer.abort()
            shutil.rmtree(self._output, ignore_errors=True)
            opened.set()
            return
        opened.set()
        try:
            while (item := self._queue.get()) is not None:
                topic, stamp_ns, data = item
                self._writer.write(connections[topic], stamp_ns, data)
        except BaseException as error:  # handed to stop()
            self._failure = error
        finally:
            self._writer.close()
