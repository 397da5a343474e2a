"""
What the model repository holds and how it gets there.

Owns: installing and checking the shipped models (shipped_models), your own detectors
(detectors) and your own lane models (lane_model_install).
"""
from triton_perception.faces import lazy_face

__getattr__, __dir__, __all__ = lazy_face(__name__, __file__)
