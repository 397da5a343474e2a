"""
Lanes from a lane model's outputs: polylines, ego sides and the drivable area.

Owns: the shipped model's decoding (lane_geometry), ego-relative sides (lane_sides) and other
lane models' layouts, specs and decoding (lane_models/). May import frames/ and graphs/.
Public names: lane_geometry.postprocess and LaneResult, lane_models.decode.decode_lanes.
"""
