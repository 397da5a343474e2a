"""
One camera's frames taken from DDS once and handed to every node of a perception process.

rclpy has no intra-process transport (rclpy #575): two nodes of one process subscribed to the
same camera each take and deserialise every frame. In `perception_process` a camera's image
topic is subscribed once, on the process's own node; each frame, taken serialized and read
once (frames.read_frame), goes to the frame callback of every active node of that camera,
which accounts for it as its own subscription would, the RGB conversion of the latest frame is
done once for all of them, and their workers write it into Triton's shared memory once
(serving.requests.shared_frames). With a joined model (`--joined-model`, default `perception`) the
camera's nodes share one worker too, and a frame is served by one request for all of them,
with the camera's health statistics (serving.requests.joined_worker).
"""
from __future__ import annotations

from contextlib import ExitStack
import threading
from typing import Callable

import numpy as np
from numpy.typing import NDArray
from rclpy.node import Node
from rclpy.qos import QoSProfile
from rclpy.subscription import Subscription

from triton_perception.frames import (FrameAccounting, FrameMessage, FrameRejected, read_frame,
                                      Taken)
from triton_perception.nodes.camera_health import CameraHealthReporter
from triton_perception.nodes.camera_subscription import (CameraMessage, CameraStream,
                                                         FrameCallback, subscribe_camera)
from triton_perception.nodes.frame_losses import FrameLossCounter
from triton_perception.parameters import Transport
from triton_perception.serving import CameraBatches, JoinedWorker, RequestGate, SharedFrames


class _EveryConsumer:
    """The FrameAccounting face FrameLossCounter counts into: a loss counts for every consumer."""

    def __init__(self, accountings: Callable[[], list[FrameAccounting]]) -> None:
        self._accountings = accountings

    def lost_before_node(self, count: int, reason: str) -> int:
        """Count `count` frames lost before each consumer; return the largest total."""
        return max((accounting.lost_before_node(count, reason)
                    for accounting in self._accountings()), default=0)


class CameraFrames:
    """
    The shared image subscription of one camera: consumers attach while they are active.

    The subscription exists while at least one consumer is attached, with the QoS of the first
    (a camera's nodes share one parameters file; a consumer asking for another QoS is told
    that it gets the first one's). Callbacks run on the process's executor thread and only
    hand frames on, so one camera's slow or bad frames never hold up another camera.
    """

    def __init__(self, host: Node, subscriber: Node, joined_model: str = '', name: str = '',
                 gate: RequestGate | None = None,
                 batches: Callable[[str], CameraBatches] | None = None) -> None:
        """
        Subscribe on `subscriber` (the hot path node) once the first consumer attaches.

        `host`, the process's own node, logs.

        `joined_model`: the ensemble that serves all the camera's models with one request per
        frame; '' sends each node's requests on their own. `name` (the camera's namespace) and
        `gate` (the process's request gate) decide the camera's turn under overload.
        `batches`: the process's request threads for a server URL, which send the frames of
        all its ready cameras in one request; None gives the camera request threads of its own.
        """
        self._host = host
        self._subscriber = subscriber
        self.joined_model = joined_model
        self._name = name
        self._gate = gate
        self._batches = batches
        self._joined: dict[str, JoinedWorker] = {}
        self._lock = threading.Lock()
        self._consumers: dict[str, tuple[FrameCallback, FrameAccounting]] = {}
        self._subscription: Subscription[CameraMessage] | None = None
        self._shape: tuple[str, Transport, QoSProfile] | None = None  # topic, transport, QoS
        self._losses: FrameLossCounter | None = None
        self._conversion_lock = threading.Lock()
        self._latest: tuple[FrameMessage, NDArray[np.uint8]] | None = None
        self._shared_frames: dict[str, SharedFrames] = {}
        self._health: CameraHealthReporter | None = None

    @property
    def loss_counting(self) -> str:
        """Return how frames lost before the nodes are counted (FrameLossCounter.method)."""
        return self._losses.method if self._losses is not None else 'none'

    def attach(self, name: str, topic: str, stream: CameraStream, on_frame: FrameCallback,
               accounting: FrameAccounting, qos: QoSProfile) -> None:
        """
        Hand every frame of `topic` to `on_frame` from now on.

        `topic` is the consumer's resolved image topic, `stream` how it takes it (its
        transport; a video stream is decoded once for every consumer by the first one's
        decoder); `accounting` counts the frames lost before the consumer.

        Raises ValueError if the camera is already subscribed on another topic or transport.
        """
        with self._lock:
            if self._shape is not None and self._shape[:2] != (topic, stream.transport):
                raise ValueError(f'{name} takes {topic} (transport {stream.transport.name}), '
                                 f'but its camera is subscribed on {self._shape[0]} (transport '
                                 f'{self._shape[1].name}): one camera has one image topic')
            self._consumers[name] = (on_frame, accounting)
            if self._subscription is not None:
                if self._shape is not None and qos != self._shape[2]:
                    self._host.get_logger().warning(
                        f'{name} asks for other QoS on {topic} than the node that subscribed '
                        'first; the camera is subscribed once, with the first QoS')
                return
            self._shape = (topic, stream.transport, qos)
            if self._losses is None:
                every = _EveryConsumer(self._accountings)
                self._losses = FrameLossCounter(
                    self._host,
                    every if stream.video is None else stream.video.losses_into(every), topic)
            # A video is decoded here, once, in order; consumers get the frames.
            self._subscription = subscribe_camera(self._subscriber, topic, self._on_message, qos,
                                                  stream, losses=self._losses)

    def detach(self, name: str) -> None:
        """Stop handing frames to `name`; the last consumer to leave ends the subscription."""
        with self._lock:
            self._consumers.pop(name, None)
            if self._consumers or self._subscription is None:
                return
            subscription, self._subscription = self._subscription, None
            self._shape = None
            self._latest = None
        self._subscriber.destroy_subscription(subscription)

    def rgb(self, message: FrameMessage,
            convert: Callable[[], NDArray[np.uint8]]) -> NDArray[np.uint8]:
        """
        Return `message` as RGB, converted once for all consumers of the latest frame.

        The array is read-only: consumers share it (drawing works on copies). `convert` raises
        FrameRejected for a bad frame, for each consumer alike.
        """
        with self._conversion_lock:
            if self._latest is not None and self._latest[0] is message:
                return self._latest[1]
            rgb = convert()
            rgb.flags.writeable = False
            self._latest = (message, rgb)
            return rgb

    def shared_frames(self, triton_url: str) -> SharedFrames:
        """
        Return the camera's frames in the shared memory of the server at `triton_url`.

        The camera's workers for that server write each frame once for all its models.
        """
        with self._lock:
            return self._shared_frames.setdefault(triton_url, SharedFrames())

    def joined_worker(self, triton_url: str) -> JoinedWorker:
        """Return the camera's one worker for the server at `triton_url` (`joined_model` set)."""
        with self._lock:
            if triton_url not in self._joined:
                self._joined[triton_url] = JoinedWorker(
                    self.joined_model, self._shared_frames.setdefault(triton_url, SharedFrames()),
                    self._on_statistics, self._name, self._gate,
                    None if self._batches is None else self._batches(triton_url))
            return self._joined[triton_url]

    def _on_statistics(self, message: FrameMessage, values: NDArray[np.float32]) -> None:
        health = self._health
        if health is not None:
            health.statistics(message, values)

    def camera_health(self, make: Callable[[], CameraHealthReporter]) -> CameraHealthReporter:
        """Return the camera's one health reporter, made by `make` for the first node asking."""
        with self._lock:
            if self._health is None:
                self._health = make()
            return self._health

    def _accountings(self) -> list[FrameAccounting]:
        with self._lock:
            return [accounting for _callback, accounting in self._consumers.values()]

    def _on_message(self, message: Taken) -> None:
        with self._lock:
            callbacks = [callback for callback, _accounting in self._consumers.values()]
            transport = None if self._shape is None else self._shape[1]
            joined = list(self._joined.values())
        if isinstance(message, bytes) and transport is not None:  # read once for every consumer
            try:
                message = read_frame(message, transport)
            except FrameRejected:
                pass  # each consumer's frame callback reads it, and rejects it with the reason
        with ExitStack() as offering:  # no joined request takes the frame before every node has
            for worker in joined:
                offering.enter_context(worker.slot.offering())
            for callback in callbacks:
                callback(message)
