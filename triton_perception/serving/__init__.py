"""
Triton Inference Server, in two rooms: the server's side (server/) and the request side (requests/).

Each room has its face; this folder's face is both. The request side reads the server's side
through its face; the server's side imports nothing of the request side.
"""
from triton_perception.faces import lazy_face

__getattr__, __dir__, __all__ = lazy_face(__name__, __file__)
