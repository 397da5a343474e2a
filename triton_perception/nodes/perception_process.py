"""
perception_process: every camera's detection, lane and overlay nodes in one rclpy process.

Each node stays a node of its own, with its name, namespace, parameters, lifecycle,
/diagnostics entry and frame accounting, so what a user sees is what the per-node layout
shows, plus this process's own node. What changes is the cost: Python, rclpy, OpenCV and the
gRPC client are paid once per process instead of once per node, and a camera's image topic is
taken from DDS and converted to RGB once for all its nodes (camera_frames.CameraFrames), and
served by one request for all its models and its health statistics (`--joined-model`).

Cameras come as `--camera NAMESPACE=IMAGE_TOPIC[=CAMERA_INFO_TOPIC]`; without one, one camera
on the relative topics `image` and `camera_info` in the process's namespace, remapped by the
process's own `--ros-args` as for a single node. Parameters (`--params-file`, `-p`) apply to
every node of the process, as `ros2 run` gives them.
"""
from __future__ import annotations

import argparse
from dataclasses import dataclass
from functools import partial
import sys
from typing import Callable, TYPE_CHECKING

from rclpy.node import Node
from rclpy.utilities import remove_ros_args

from triton_perception.frames import camera_info_sibling, transport_remappings
from triton_perception.nodes.camera_frames import CameraFrames
from triton_perception.nodes.detection_node import DetectionNode
from triton_perception.nodes.executors import HOT_PATH
from triton_perception.nodes.lane_node import LaneNode
from triton_perception.nodes.node_process import run_nodes
from triton_perception.nodes.overlay_node import OverlayNode
from triton_perception.parameters import ParameterError
from triton_perception.serving import (CameraBatches, check_policy_cameras, JOINED_MODEL,
                                       MAX_BATCH, parse_camera_priorities, RequestGate)

if TYPE_CHECKING:  # rclpy's node options (typed from Jazzy on)
    from rclpy.lifecycle.node import LifecycleNodeArgs

PROCESS_NODE = 'perception_process'


@dataclass(frozen=True)
class Camera:
    """One camera: the namespace of its nodes and its topics ('' keeps the process's own)."""

    namespace: str
    image_topic: str = ''
    info_topic: str = ''

    def remappings(self) -> list[str]:
        """Return the `--ros-args` that point this camera's nodes at its topics."""
        if not self.image_topic:
            return []
        info = self.info_topic or camera_info_sibling(self.image_topic)
        remaps = [*transport_remappings(self.image_topic), ('camera_info', info)]
        return ['--ros-args', *(item for source, target in remaps
                                for item in ('-r', f'{source}:={target}'))]


def parse_camera(text: str) -> Camera:
    """`NAMESPACE=IMAGE_TOPIC[=CAMERA_INFO_TOPIC]` -> Camera (argparse type)."""
    parts = text.split('=')
    if len(parts) not in (2, 3) or not parts[0].startswith('/') or not parts[1].startswith('/'):
        raise argparse.ArgumentTypeError(
            f"'{text}' is not NAMESPACE=IMAGE_TOPIC[=CAMERA_INFO_TOPIC] with absolute names, "
            'e.g. /front=/front/image_raw')
    return Camera(parts[0].rstrip('/') or '/', parts[1], parts[2] if len(parts) == 3 else '')


def parse_arguments(argv: list[str]) -> argparse.Namespace:
    """Parse the process's own arguments (those before or without `--ros-args`)."""
    parser = argparse.ArgumentParser(prog=PROCESS_NODE, description=__doc__.split('\n\n')[0])
    parser.add_argument('--camera', dest='cameras', action='append', type=parse_camera,
                        default=[], metavar='NAMESPACE=IMAGE_TOPIC[=CAMERA_INFO_TOPIC]',
                        help='a camera and the namespace of its nodes; repeat for several')
    parser.add_argument('--namespace', default='',
                        help="the namespace of the process's own node, and of the nodes of the "
                        'camera without --camera')
    parser.add_argument('--no-detections', dest='detections', action='store_false')
    parser.add_argument('--no-lanes', dest='lanes', action='store_false')
    parser.add_argument('--no-overlay', dest='overlay', action='store_false')
    parser.add_argument('--joined-model', default=JOINED_MODEL, metavar='ENSEMBLE',
                        help="the ensemble that serves a camera's detection and lane models and "
                        'its health statistics with one request per frame; where it does not '
                        "serve the nodes' models, each model gets its own request; "
                        "'' always sends one request per model (default: %(default)s)")
    parser.add_argument('--camera-priorities', default='', metavar='CAMERA=always|HZ,...',
                        help='which cameras are served first when the process has more frames '
                        "than it serves, e.g. '/front=always,/left=10,/right=10' (a minimum "
                        'rate in Hz); unnamed cameras are served round-robin')
    parser.add_argument('--max-requests', type=int, default=0, metavar='N',
                        help='requests in flight for the whole process, granted by '
                        '--camera-priorities (default: one per camera without priorities, '
                        'half the cameras rounded up with them)')
    parser.add_argument('--max-batch', type=int, default=MAX_BATCH, metavar='N',
                        help='cameras served by one request: when a request thread is free it '
                        'sends the frames of every camera that has one, at most N '
                        f'(1-{MAX_BATCH}; 1: each camera its own requests; default: %(default)s)')
    arguments = parser.parse_args(argv)
    if not 1 <= arguments.max_batch <= MAX_BATCH:
        parser.error(f'--max-batch {arguments.max_batch}: give 1 to {MAX_BATCH}')
    if not (arguments.detections or arguments.lanes):
        parser.error('--no-detections and --no-lanes: nothing to run')
    names = [camera.namespace for camera in arguments.cameras]
    if len(set(names)) != len(names):
        parser.error(f'a namespace is given to two cameras: {names}')
    if arguments.max_requests < 0:
        parser.error(f'--max-requests {arguments.max_requests}: give 1 or more (0: the default)')
    if (arguments.camera_priorities.strip() or arguments.max_requests) \
            and not arguments.joined_model:
        parser.error("--camera-priorities and --max-requests need the camera's joined requests: "
                     "with --joined-model '' each node sends on its own and no policy applies")
    try:
        arguments.policy = parse_camera_priorities(arguments.camera_priorities)
        check_policy_cameras(arguments.policy, names or [arguments.namespace or '/'])
    except ParameterError as error:
        parser.error(f'--camera-priorities: {error}')
    return arguments


def request_gate(arguments: argparse.Namespace) -> RequestGate | None:
    """
    Return the process's request gate, None where it would never hold a request back.

    Without priorities each camera's one request thread gets a slot (round-robin is then
    what the server's own queue gives); with them, half the cameras' requests fit at once,
    so that under overload the policy, not chance, picks the frames that are served.
    """
    cameras = max(1, len(arguments.cameras))
    policy = arguments.policy
    if not arguments.max_requests and not policy.cameras:
        return None
    slots = arguments.max_requests or (-(-cameras // 2) if policy.cameras else cameras)
    return RequestGate(slots, policy)


class _Process:
    """The process's own node and one CameraFrames per camera, made once rclpy is initialised."""

    def __init__(self, namespace: str, joined_model: str, gate: RequestGate | None,
                 max_batch: int) -> None:
        self.namespace = namespace
        self.joined_model = joined_model
        self.gate = gate
        self.max_batch = max_batch
        self.node: Node | None = None
        self.frames: dict[int, CameraFrames] = {}
        self.batches: dict[str, CameraBatches] = {}  # by server URL

    def camera_batches(self, triton_url: str) -> CameraBatches:
        """Return the process's request threads for the server at `triton_url`, made once."""
        if triton_url not in self.batches:
            self.batches[triton_url] = CameraBatches(self.gate, self.max_batch)
        return self.batches[triton_url]

    def host(self) -> Node:
        """Create the process's node (the first factory)."""
        self.node = Node(PROCESS_NODE, namespace=self.namespace)
        return self.node

    def camera_frames(self, camera: int, name: str) -> CameraFrames:
        """Return camera number `camera`'s shared frames (its namespace `name`), made once."""
        assert self.node is not None  # the host is the first factory run_nodes calls
        if camera not in self.frames:
            self.frames[camera] = CameraFrames(
                self.node, HOT_PATH.node(), self.joined_model, name, self.gate,
                self.camera_batches if self.max_batch > 1 else None)
        return self.frames[camera]

    def perception_node(self, kind: type[DetectionNode] | type[LaneNode], camera: int, name: str,
                        options: LifecycleNodeArgs) -> Node:
        """Create a detection or lane node of `camera`, fed by its shared frames."""
        return kind(frame_source=self.camera_frames(camera, name), **options)


def node_factories(arguments: argparse.Namespace) -> list[Callable[[], Node]]:
    """Return the process node's factory, then each camera's nodes' (frames shared per camera)."""
    cameras = arguments.cameras or [Camera(arguments.namespace)]
    process = _Process(arguments.namespace, arguments.joined_model, request_gate(arguments),
                       arguments.max_batch if len(cameras) > 1 else 1)
    factories: list[Callable[[], Node]] = [process.host]
    for number, camera in enumerate(cameras):
        options: LifecycleNodeArgs = {'cli_args': camera.remappings()}
        if camera.namespace:
            options['namespace'] = camera.namespace
        name = camera.namespace or arguments.namespace or '/'
        if arguments.detections:
            factories.append(partial(process.perception_node, DetectionNode, number, name,
                                     options))
        if arguments.lanes:
            factories.append(partial(process.perception_node, LaneNode, number, name, options))
        if arguments.overlay:
            factories.append(partial(OverlayNode, **options))
    return factories


def main(args: list[str] | None = None) -> None:
    """Run the perception process until SIGINT or SIGTERM; exit 2 on bad arguments."""
    argv = sys.argv if args is None else args
    arguments = parse_arguments(remove_ros_args(argv)[1:])
    sys.exit(run_nodes(node_factories(arguments), args=argv))


if __name__ == '__main__':
    main()
