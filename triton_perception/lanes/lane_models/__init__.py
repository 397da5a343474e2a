"""
Lane models other than the shipped TwinLiteNet: their layouts, install and decoding.

Three output layouts cover the lane detectors deployed on Jetson (docs/lane_models.md):
proposals (LaneATT), row anchors (Ultra-Fast-Lane-Detection v1 and v2) and segmentation
(TwinLiteNet and its kin). Every layout decodes, in the client, to the same LaneResult
(polylines in frame pixels, scores, ego sides, drivable area), so the lanes topic, the ground
outputs, overlays and `bag evaluate` work unchanged whichever model is served.
"""
from triton_perception.faces import lazy_face

__getattr__, __dir__, __all__ = lazy_face(__name__, __file__)
