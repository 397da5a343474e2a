"""
Lanes from a lane model's outputs: polylines, ego sides and the drivable area.

Owns: the shipped model's decoding (lane_geometry), ego-relative sides (lane_sides) and other
lane models' layouts, specs and decoding (lane_models/).
Public names: lane_geometry.postprocess and LaneResult, lane_models.decode.decode_lanes.
"""
from triton_perception.faces import lazy_face

__getattr__, __dir__, __all__ = lazy_face(__name__, __file__)
