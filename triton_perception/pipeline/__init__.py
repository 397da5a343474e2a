"""
How a pipeline is started: launch arguments -> processes, parameters and remappings.

Owns: the plan (plan), the launch files' helpers (launch_support) and `triton-perception run`
without ROS launch (runner). Never nodes/: nodes are started as processes.
"""
from triton_perception.faces import lazy_face

__getattr__, __dir__, __all__ = lazy_face(__name__, __file__)
