"""The public face of serving/: read by type checkers and by faces.lazy_face."""
from triton_perception.serving.requests import *
from triton_perception.serving.server import *
