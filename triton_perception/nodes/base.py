"""
What both inference nodes share: the lifecycle node that wires their collaborators.

Parameters and their live changes (parameter_changes), a frame's way in from the subscription
to the worker (frame_intake), the Triton worker, overlay gating
(overlay_gate) and /diagnostics (node_diagnostics) are each a class of their own module.

A node's callbacks only hand frames to the InferenceWorker and return; conversion, inference
and publishing happen on the worker's threads, so a slow Triton never blocks the executor.
"""
from __future__ import annotations

from pathlib import Path
from typing import Callable, Generic, TYPE_CHECKING, TypeVar

import numpy as np
from numpy.typing import NDArray
from rclpy.lifecycle import LifecycleNode, LifecycleState, TransitionCallbackReturn
from rclpy.node import Node
from rclpy.publisher import Publisher
from sensor_msgs.msg import Image
from std_msgs.msg import Header

from triton_perception.frames import Frame, FrameAccounting, VideoDecoderError
from triton_perception.nodes.camera_frames import CameraFrames
from triton_perception.nodes.camera_health import camera_health
from triton_perception.nodes.camera_subscription import open_camera_stream
from triton_perception.nodes.frame_intake import FrameChecks, ImageInput, RgbConversion
from triton_perception.nodes.node_diagnostics import NodeDiagnostics
from triton_perception.nodes.overlay_gate import OverlayGate
from triton_perception.nodes.parameter_changes import ParameterChanges
from triton_perception.nodes.ros_parameters import declare_parameters
from triton_perception.parameters import (InferenceSettings, ParameterError, ParameterSpec,
                                          ParameterValues)
from triton_perception.qos import stream_qos
from triton_perception.serving import (ClientSettings, FrameWorker, InferenceWorker, Tensors,
                                       TlsOptions)

if TYPE_CHECKING:  # rclpy's node options (typed from Jazzy on)
    from rclpy.lifecycle.node import LifecycleNodeArgs
    from typing_extensions import Unpack

FRAME_PROBLEM_THROTTLE_S = 5.0
InferenceT = TypeVar('InferenceT', bound=InferenceSettings)
MessageT = TypeVar('MessageT')


class RosLog:
    """The worker's Log on top of a ROS logger; per-frame problems are throttled."""

    def __init__(self, node: Node) -> None:
        """Log through `node`'s logger."""
        self._logger = node.get_logger()

    def info(self, message: str) -> None:
        """Log `message` at info level."""
        self._logger.info(message)

    def warning(self, message: str) -> None:
        """Log `message` at warning level."""
        self._logger.warning(message)

    def frame_problem(self, message: str) -> None:
        """Log `message` as a warning, at most once per FRAME_PROBLEM_THROTTLE_S (5 s)."""
        self._logger.warning(message, throttle_duration_sec=FRAME_PROBLEM_THROTTLE_S)


def read_text_file(path: str) -> str | None:
    """
    Return the contents of the file at `path` (~ expanded), or None for an empty path.

    Raises OSError if the file cannot be read.
    """
    return Path(path).expanduser().read_text(encoding='utf-8') if path else None


class PerceptionNode(LifecycleNode, Generic[InferenceT]):
    """
    Base of detection_node and lane_node; subclasses say what to send and what to publish.

    A managed (lifecycle) node. Its interface (parameters, result publishers, /diagnostics)
    exists from construction, so subscribers stay matched across transitions. Configuring
    reads the TLS files; activating starts the Triton worker and subscribes to images;
    deactivating unsubscribes and stops the worker (a frame waiting in its slot is counted as
    dropped). With `autostart` (the default) `node_process.run_nodes` configures and activates
    at start-up.
    """

    def __init__(self, node_name: str, specs: tuple[ParameterSpec, ...],
                 settings_type: type[InferenceT], outputs: tuple[str, ...] = (), *,
                 frame_source: CameraFrames | None = None,
                 **node_options: Unpack[LifecycleNodeArgs]) -> None:
        """
        Declare `specs` as parameters and create what exists in every lifecycle state.

        That is the /diagnostics publisher and timer and the parameter callback; subclasses add
        their result publishers.

        `node_name`: the node's default name.
        `specs`: the node's parameter table (parameters.tables); values are validated at
        start-up and read, typed, as `settings_type` (`settings`).
        `outputs`: the output tensors to request from the Triton model; a subclass that learns
        them from its parameters passes none and calls `_set_model_outputs`.
        `frame_source`: the camera subscription shared by the nodes of a perception process;
        None subscribes the node itself.
        `node_options`: passed on to rclpy's LifecycleNode.

        Raises ParameterError if a start-up parameter value is not accepted, or video_decoder
        names a decoder the FFmpeg in use does not have.
        """
        super().__init__(node_name, **node_options)
        # What destroy_node reads exists before anything below can raise: rclpy from Jazzy on
        # destroys every node of a context at shutdown, one whose constructor failed included.
        self._worker: FrameWorker | None = None
        self._image_input: ImageInput | None = None
        self._frame_source = frame_source
        self._parameter_changes = ParameterChanges(
            specs, declare_parameters(self, specs, settings_type), self.check_parameters,
            self.apply_parameters)
        self._outputs = outputs
        self._log = RosLog(self)
        self.accounting = FrameAccounting()
        self._client_settings: ClientSettings | None = None
        try:  # the camera's one transport value, with its decoder for a video transport
            stream = open_camera_stream(self.settings.input_transport,
                                        self.settings.video_decoder,
                                        self.settings.max_image_pixels, self.get_logger().warning)
        except VideoDecoderError as error:
            raise ParameterError(str(error)) from None
        image_input = ImageInput(self, self.accounting, stream, frame_source)
        self._image_input = image_input
        self._health = camera_health(self, self.settings, image_input.topic,
                                     self.settings.diagnostics_period_s,
                                     None if frame_source is None
                                     else frame_source.camera_health)
        self._frame_checks = FrameChecks(
            self.accounting, self._settings, image_input.topic, stream.transport,
            self._log, self.active_worker,
            None if self._health is None else self._health.frame)
        self._rgb = RgbConversion(self._settings, frame_source)
        self._overlays = OverlayGate(self._settings)
        self._diagnostics = NodeDiagnostics(self, self._settings, self.accounting, image_input,
                                            self._overlays, self.active_worker,
                                            self.extra_diagnostics)
        self.add_on_set_parameters_callback(self._parameter_changes.on_set_parameters)

    def active_worker(self) -> FrameWorker | None:
        """Return the Triton worker while the node is active, else None."""
        return self._worker

    @property
    def settings(self) -> InferenceT:
        """Return the node's parameters now: the start-up values and every accepted change."""
        return self._parameter_changes.current

    def _settings(self) -> InferenceT:
        """Return `settings` (what collaborators call to read the values of the moment)."""
        return self._parameter_changes.current

    def _set_model_outputs(self, outputs: tuple[str, ...]) -> None:
        """Set the output tensors to request, for a subclass that reads them from its model."""
        self._outputs = outputs

    def wanted_outputs(self) -> tuple[str, ...]:
        """
        Return the outputs to ask for the next frame: all of the model's but what goes unused.

        A subclass names fewer while it publishes fewer. Read per frame by a perception
        process's joined requests (a node in a process of its own asks for all of them).
        """
        return self._outputs

    def autostart(self) -> bool:
        """
        Configure and activate, unless `autostart` is false.

        Then a lifecycle manager or `ros2 lifecycle set` does. False when a transition failed (the
        reason is logged).
        """
        if not self.settings.autostart:
            self.get_logger().info(
                'autostart is false: unconfigured until a lifecycle manager or `ros2 lifecycle '
                f'set {self.get_fully_qualified_name()} configure` (then activate) starts it')
            return True
        return (self.trigger_configure() == TransitionCallbackReturn.SUCCESS
                and self.trigger_activate() == TransitionCallbackReturn.SUCCESS)

    def on_configure(self, state: LifecycleState) -> TransitionCallbackReturn:
        """Read the TLS files and fix the client settings; FAILURE if a TLS file is unreadable."""
        try:
            tls = TlsOptions(
                root_certificates=read_text_file(self.settings.tls_root_certificates),
                private_key=read_text_file(self.settings.tls_private_key),
                certificate_chain=read_text_file(self.settings.tls_certificate_chain))
        except OSError as error:
            self.get_logger().error(f'cannot configure: a TLS file is unreadable: {error}')
            return TransitionCallbackReturn.FAILURE
        self._client_settings = ClientSettings(
            url=self.settings.triton_url, model=self.settings.model_name,
            outputs=self._outputs, max_in_flight=self.settings.max_in_flight,
            timeout_s=self.settings.request_timeout_s, transport=self.settings.transport,
            tls=tls)
        return TransitionCallbackReturn.SUCCESS

    def on_activate(self, state: LifecycleState) -> TransitionCallbackReturn:
        """Start the Triton worker, then subscribe to the camera's image topic."""
        assert self._client_settings is not None  # the state machine activates configured nodes
        assert self._image_input is not None  # made by the constructor
        self._worker = self._make_worker(self._client_settings)
        self._worker.start()
        self._image_input.subscribe(
            self._frame_checks.on_frame,
            stream_qos(self.settings.qos_reliability, self.settings.qos_depth))
        self.get_logger().info(
            f'active: subscribed to {self._image_input.topic} '
            f'({self.settings.input_transport}, {self.settings.qos_reliability}); '
            f'model {self.settings.model_name} at {self.settings.triton_url}')
        return TransitionCallbackReturn.SUCCESS

    def _make_worker(self, settings: ClientSettings) -> FrameWorker:
        """
        Return the node's worker: its camera's joined worker in a perception process, else its own.

        Joined, one request per frame serves every node of the camera
        (serving.requests.joined_worker).
        """
        source = self._frame_source
        if source is None:
            return InferenceWorker(settings, self.accounting, self._prepare, self._deliver,
                                   self._log)
        if source.joined_model:
            return source.joined_worker(settings.url).member(
                self.get_fully_qualified_name(), settings, self.accounting, self._prepare,
                self._deliver, self._log, self.wanted_outputs)
        return InferenceWorker(settings, self.accounting, self._prepare, self._deliver,
                               self._log, source.shared_frames(settings.url))

    def on_deactivate(self, state: LifecycleState) -> TransitionCallbackReturn:
        """Unsubscribe and stop the worker; a frame waiting in its slot counts as dropped."""
        self._stop_inference('node deactivated')
        assert self._image_input is not None  # made by the constructor
        self.get_logger().info(f'inactive: unsubscribed from {self._image_input.topic}')
        return TransitionCallbackReturn.SUCCESS

    def on_cleanup(self, state: LifecycleState) -> TransitionCallbackReturn:
        """Forget the client settings (the TLS files are read again at the next configure)."""
        self._client_settings = None
        return TransitionCallbackReturn.SUCCESS

    def on_shutdown(self, state: LifecycleState) -> TransitionCallbackReturn:
        """Stop inference and forget the client settings."""
        self._stop_inference('shutting down')
        self._client_settings = None
        return TransitionCallbackReturn.SUCCESS

    def on_error(self, state: LifecycleState) -> TransitionCallbackReturn:
        """Log the transition that raised (Humble's rclpy does not) and go back to unconfigured."""
        self._stop_inference('lifecycle error')
        self._client_settings = None
        self.get_logger().error(f'a lifecycle transition from {state.label} failed; inference '
                                'stopped, the node is unconfigured (configure to retry)')
        return TransitionCallbackReturn.SUCCESS

    def _stop_inference(self, reason: str) -> None:
        if self._image_input is not None:
            self._image_input.unsubscribe()
        if self._worker is not None:
            self._worker.stop(reason)
            self._worker = None

    def check_parameters(self, updates: ParameterValues) -> None:
        """
        Refuse new values that pass their specs but not the node's state; subclasses override this.

        `updates`: every validated value of one set_parameters call, by name.

        Raises ParameterError to refuse the whole call; changes nothing either way (the values
        are applied by `apply_parameters` once every check of the call has passed).
        """

    def apply_parameters(self, updates: ParameterValues) -> None:
        """
        Take accepted new values into what the node derives from them; subclasses override this.

        `updates`: the values of one accepted call, already in `settings`.
        """

    def frame_rgb(self, frame: Frame) -> NDArray[np.uint8]:
        """Return the frame as RGB uint8 [H, W, 3]; raises FrameRejected (counted) for bad input."""
        rgb = self._rgb.rgb(frame)
        if self._health is not None:
            self._health.image(frame.message, rgb)  # the check sees what the model sees
        return rgb

    def _prepare(self, frame: Frame) -> Tensors:
        raise NotImplementedError

    def _deliver(self, frame: Frame, inputs: Tensors, outputs: Tensors) -> None:
        raise NotImplementedError

    def publish_overlay(self, publisher: Publisher[Image], draw: Callable[[], NDArray[np.uint8]],
                        header: Header) -> None:
        """
        Draw (a copy of the frame) and publish only while someone subscribes.

        Counted in /diagnostics as `overlays_published`.
        """
        self._overlays.publish(publisher, draw, header)

    def publish_annotations(self, publisher: Publisher[MessageT],
                            build: Callable[[], MessageT]) -> None:
        """
        Build and publish Foxglove annotations only while someone subscribes.

        Counted in /diagnostics as `annotations_published`.
        """
        self._overlays.publish_annotations(publisher, build)

    def extra_diagnostics(self) -> dict[str, str]:
        """Values a subclass adds to its /diagnostics status."""
        return {}

    def _stamped_header(self) -> Header:
        return Header(stamp=self.get_clock().now().to_msg())

    def destroy_node(self) -> None:
        """Stop inference (unsubscribe, stop the worker, end decoding) before rclpy destroys it."""
        self._stop_inference('shutting down')
        if self._image_input is not None:
            self._image_input.close()
        super().destroy_node()
