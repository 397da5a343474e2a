"""
Node parameters: the table of every parameter and each node's settings typed from it.

Owns: what a parameter is and how a value is validated (specs), the tables of every node's
parameters (tables), each node's settings as a frozen dataclass (node_settings), and the
camera transports (transports: names, topics, message types, decoding). Launch
files and docs read the tables without ROS, numpy or scipy.
"""
from triton_perception.faces import lazy_face

__getattr__, __dir__, __all__ = lazy_face(__name__, __file__)
