"""
What both inference nodes share.

Parameters, lifecycle, image subscription, Triton worker, diagnostics.

A node's callbacks only hand frames to the InferenceWorker and return; conversion, inference
and publishing happen on the worker's threads, so a slow Triton never blocks the executor.
"""
from __future__ import annotations

from pathlib import Path
from typing import Any, Callable

from diagnostic_msgs.msg import DiagnosticArray, DiagnosticStatus, KeyValue
from rclpy.lifecycle import LifecycleNode, LifecycleState, TransitionCallbackReturn
from rclpy.node import Node
from rclpy.subscription import Subscription
from sensor_msgs.msg import CompressedImage, Image
from std_msgs.msg import Header

from triton_perception.frames.accounting import (AccountingSnapshot, Fate, FrameAccounting,
                                                 FrameRejected)
from triton_perception.frames.diagnostics import reason_key, stage_key, status_name, TIMED_KEY
from triton_perception.frames.image_conversion import (check_compressed, check_image,
                                                       compressed_to_rgb, image_to_rgb)
from triton_perception.nodes.camera_frames import CameraFrames
from triton_perception.nodes.frame_losses import FrameLossCounter
from triton_perception.nodes.parameter_changes import ParameterChanges
from triton_perception.nodes.ros_parameters import declare_parameters
from triton_perception.outputs.result_messages import image_message
from triton_perception.parameters import ParameterSpec, Settings
from triton_perception.qos import DIAGNOSTICS_QOS, stream_qos
from triton_perception.serving.triton_client import (ClientSettings, Frame, InferenceWorker,
                                                     Tensors, TlsOptions)

FRAME_PROBLEM_THROTTLE_S = 5.0


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


class PerceptionNode(LifecycleNode):
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
                 outputs: tuple[str, ...] = (), *, frame_source: CameraFrames | None = None,
                 **node_options: Any) -> None:
        """
        Declare `specs` as parameters and create what exists in every lifecycle state.

        That is the /diagnostics publisher and timer and the parameter callback; subclasses add
        their result publishers.

        `node_name`: the node's default name.
        `specs`: the node's parameter table (parameters.py); values are validated at start-up.
        `outputs`: the output tensors to request from the Triton model; a subclass that learns
        them from its parameters passes none and calls `_set_model_outputs`.
        `frame_source`: the camera subscription shared by the nodes of a perception process;
        None subscribes the node itself.
        `node_options`: passed on to rclpy's LifecycleNode.

        Raises ParameterError if a start-up parameter value is not accepted.
        """
        super().__init__(node_name, **node_options)
        # What destroy_node reads exists before anything below can raise: rclpy from Jazzy on
        # destroys every node of a context at shutdown, one whose constructor failed included.
        self._worker: InferenceWorker | None = None
        self._image_subscription: Subscription | None = None
        self.settings = declare_parameters(self, specs)
        self._outputs = outputs
        self._log = RosLog(self)
        self.accounting = FrameAccounting()
        self._previous_snapshot: AccountingSnapshot | None = None
        self._client_settings: ClientSettings | None = None
        self._compressed_input = self.settings['input_transport'] == 'compressed'
        self._image_topic = self.resolve_topic_name(
            'image/compressed' if self._compressed_input else 'image')
        self._frame_losses = FrameLossCounter(self, self.accounting, self._image_topic)
        self._frame_source = frame_source
        self._overlays_published = 0
        self._diagnostics = self.create_publisher(DiagnosticArray, '/diagnostics', DIAGNOSTICS_QOS)
        self.create_timer(self.settings['diagnostics_period_s'], self._publish_diagnostics)
        self._parameter_changes = ParameterChanges(specs, self.settings, self.check_parameters,
                                                   self.apply_parameters)
        self.add_on_set_parameters_callback(self._parameter_changes.on_set_parameters)

    def autostart(self) -> bool:
        """
        Configure and activate, unless `autostart` is false.

        Then a lifecycle manager or `ros2 lifecycle set` does. False when a transition failed (the
        reason is logged).
        """
        if not self.settings['autostart']:
            self.get_logger().info(
                'autostart is false: unconfigured until a lifecycle manager or `ros2 lifecycle '
                f'set {self.get_fully_qualified_name()} configure` (then activate) starts it')
            return True
        return (self.trigger_configure() == TransitionCallbackReturn.SUCCESS
                and self.trigger_activate() == TransitionCallbackReturn.SUCCESS)

    def _set_model_outputs(self, outputs: tuple[str, ...]) -> None:
        """Set the output tensors to request, for a subclass that reads them from its model."""
        self._outputs = outputs

    def on_configure(self, state: LifecycleState) -> TransitionCallbackReturn:
        """Read the TLS files and fix the client settings; FAILURE if a TLS file is unreadable."""
        try:
            tls = TlsOptions(read_text_file(self.settings['tls_root_certificates']),
                             read_text_file(self.settings['tls_private_key']),
                             read_text_file(self.settings['tls_certificate_chain']))
        except OSError as error:
            self.get_logger().error(f'cannot configure: a TLS file is unreadable: {error}')
            return TransitionCallbackReturn.FAILURE
        self._client_settings = ClientSettings(
            url=self.settings['triton_url'], model=self.settings['model_name'],
            outputs=self._outputs, max_in_flight=self.settings['max_in_flight'],
            timeout_s=self.settings['request_timeout_s'], transport=self.settings['transport'],
            tls=tls)
        return TransitionCallbackReturn.SUCCESS

    def on_activate(self, state: LifecycleState) -> TransitionCallbackReturn:
        """Start the Triton worker, then subscribe to the camera's image topic."""
        assert self._client_settings is not None  # the state machine activates configured nodes
        self._worker = InferenceWorker(self._client_settings, self.accounting, self._prepare,
                                       self._deliver, self._log)
        self._worker.start()
        qos = stream_qos(self.settings['qos_reliability'], self.settings['qos_depth'])
        if self._frame_source is not None:
            self._frame_source.attach(self.get_fully_qualified_name(), self._image_topic,
                                      self._compressed_input, self._on_frame, self.accounting,
                                      qos)
        else:
            self._image_subscription = self.create_subscription(
                CompressedImage if self._compressed_input else Image,
                'image/compressed' if self._compressed_input else 'image', qos_profile=qos,
                **self._frame_losses.subscription_arguments(self._on_frame))
        self.get_logger().info(
            f"active: subscribed to {self._image_topic} ({self.settings['input_transport']}, "
            f"{self.settings['qos_reliability']}); model {self.settings['model_name']} at "
            f"{self.settings['triton_url']}")
        return TransitionCallbackReturn.SUCCESS

    def on_deactivate(self, state: LifecycleState) -> TransitionCallbackReturn:
        """Unsubscribe and stop the worker; a frame waiting in its slot counts as dropped."""
        self._stop_inference('node deactivated')
        self.get_logger().info(f'inactive: unsubscribed from {self._image_topic}')
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
        if self._frame_source is not None:
            self._frame_source.detach(self.get_fully_qualified_name())
        if self._image_subscription is not None:
            self.destroy_subscription(self._image_subscription)
            self._image_subscription = None
        if self._worker is not None:
            self._worker.stop(reason)
            self._worker = None

    def check_parameters(self, updates: Settings) -> None:
        """
        Refuse new values that pass their specs but not the node's state; subclasses override this.

        `updates`: every validated value of one set_parameters call, by name.

        Raises ParameterError to refuse the whole call; changes nothing either way (the values
        are applied by `apply_parameters` once every check of the call has passed).
        """

    def apply_parameters(self, updates: Settings) -> None:
        """
        Take accepted new values into what the node derives from them; subclasses override this.

        `updates`: the values of one accepted call, already in `settings`.
        """

    def _on_frame(self, message: Image | CompressedImage) -> None:
        """
        Reject malformed frames here (header checks only).

        A burst of them then cannot hide behind the latest-frame slot; conversion happens on the
        worker.
        """
        received_at = self.accounting.received()
        worker = self._worker
        if worker is None:  # taken in the same executor wake-up as the deactivation
            self.accounting.settle(Fate.DROPPED, received_at, 'node not active')
            return
        try:
            if isinstance(message, CompressedImage):
                check_compressed(message, self.settings['max_image_pixels'])
            else:
                check_image(message, self.settings['max_image_pixels'])
        except FrameRejected as rejection:
            self.accounting.settle(Fate.REJECTED, received_at, rejection.reason)
            self._log.frame_problem(
                f'rejected a frame on {self._image_topic}: {rejection} '
                f'({self.accounting.count(Fate.REJECTED)} rejected so far)')
            return
        worker.submit(Frame(message, received_at))

    def frame_rgb(self, frame: Frame) -> Any:
        """Return the frame as RGB uint8 [H, W, 3]; raises FrameRejected (counted) for bad input."""
        def convert() -> Any:
            if isinstance(frame.message, CompressedImage):
                return compressed_to_rgb(frame.message, self.settings['max_image_pixels'])
            return image_to_rgb(frame.message, self.settings['max_image_pixels'])
        if self._frame_source is not None:
            return self._frame_source.rgb(frame.message, convert)
        return convert()

    def _prepare(self, frame: Frame) -> Tensors:
        raise NotImplementedError

    def _deliver(self, frame: Frame, inputs: Tensors, outputs: Tensors) -> None:
        raise NotImplementedError

    def publish_overlay(self, publisher: Any, draw: Callable[[], Any], header: Header) -> None:
        """
        Draw (a copy of the frame) and publish only while someone subscribes.

        Counted in /diagnostics as `overlays_published`.
        """
        if self.settings['overlay'] and publisher.get_subscription_count() > 0:
            publisher.publish(image_message(draw(), header, 'rgb8'))
            self._overlays_published += 1

    def _publish_diagnostics(self) -> None:
        snapshot = self.accounting.snapshot()
        previous, self._previous_snapshot = self._previous_snapshot, snapshot
        new_failures = snapshot.counts['failed'] - (previous.counts['failed'] if previous else 0)
        new_rejections = snapshot.counts['rejected'] - (
            previous.counts['rejected'] if previous else 0)
        new_losses = snapshot.lost_before_node - (previous.lost_before_node if previous else 0)
        worker = self._worker
        if worker is None:
            level, summary = DiagnosticStatus.OK, 'inactive (lifecycle): not subscribed'
        elif not worker.ready:
            level, summary = DiagnosticStatus.ERROR, f'Triton not ready: {worker.status}'
        elif new_failures or new_rejections or new_losses:
            level = DiagnosticStatus.WARN
            summary = (f'{new_failures} failed, {new_rejections} rejected, {new_losses} lost '
                       'before the node since the last report')
        else:
            level, summary = DiagnosticStatus.OK, 'ok'
        values = {
            'model': self.settings['model_name'], 'triton_url': self.settings['triton_url'],
            'active': str(worker is not None).lower(),
            'triton_ready': str(worker is not None and worker.ready).lower(),
            # A replayer starts once this is >= 1: a volatile reader misses what a writer sends
            # before the reader has matched it, even when the writer has matched the reader.
            'image_publishers': self.count_publishers(self._image_topic),
            'received': snapshot.received,
            'lost_before_node': snapshot.lost_before_node,
            'loss_counting': (self._frame_source.loss_counting if self._frame_source is not None
                              else self._frame_losses.method),
            **snapshot.counts, 'pending': snapshot.pending,
            'input_rate_hz': f'{snapshot.input_rate_hz:.1f}',
            'output_rate_hz': f'{snapshot.output_rate_hz:.1f}',
            **{f'latency_{key}_ms': f'{value:.1f}' for key, value in snapshot.latency_ms.items()},
            # Where that latency goes, summed over the timed frames (the bench divides deltas).
            **{stage_key(stage): f'{value:.3f}' for stage, value in snapshot.stage_ms_sums.items()},
            TIMED_KEY: snapshot.timed,
            'last_error': snapshot.last_error,
            'overlays_published': self._overlays_published,
            **{reason_key(reason): count for reason, count in sorted(snapshot.reasons.items())},
            **self.extra_diagnostics(),
        }
        status = DiagnosticStatus(
            level=level, name=status_name(self.get_fully_qualified_name()),
            message=summary, hardware_id=self.settings['triton_url'],
            values=[KeyValue(key=key, value=str(value)) for key, value in values.items()])
        self._diagnostics.publish(
            DiagnosticArray(header=self._stamped_header(), status=[status]))

    def extra_diagnostics(self) -> dict[str, str]:
        """Values a subclass adds to its /diagnostics status."""
        return {}

    def _stamped_header(self) -> Header:
        return Header(stamp=self.get_clock().now().to_msg())

    def destroy_node(self) -> None:
        """Stop inference (unsubscribe, stop the worker) before rclpy destroys the node."""
        self._stop_inference('shutting down')
        super().destroy_node()
