"""The public face of nodes/: read by type checkers and by faces.lazy_face."""
from triton_perception.nodes.executors import EXECUTOR_ENV as EXECUTOR_ENV
from triton_perception.nodes.executors import EVENTS as EVENTS
from triton_perception.nodes.executors import SINGLE_THREADED as SINGLE_THREADED
from triton_perception.nodes.executors import MESSAGE_INFO_AVAILABLE as MESSAGE_INFO_AVAILABLE
from triton_perception.nodes.node_process import ends_cleanly as ends_cleanly
