"""
Lanes from a lane model's outputs: polylines, ego sides and the drivable area.

Owns: what an installed lane model is (lane_model, its record in lane_records), the one table
of output layouts (layouts: proposals, row_anchors, segmentation, each a module), their served
graphs (lane_model_graph) and decoding (decode); the shipped model's mask geometry
(lane_geometry, run_decoding, lane_fitting) and the ego-relative sides every layout shares
(lane_sides, polylines). Three output layouts cover the lane detectors deployed on Jetson
(docs/lane_models.md): proposals (LaneATT), row anchors (Ultra-Fast-Lane-Detection v1 and v2)
and segmentation (TwinLiteNet and its kin). Every layout decodes, in the client, to the same
LaneResult, so the lanes topic, the ground outputs, overlays and `bag evaluate` work unchanged
whichever model is served.
"""
from triton_perception.faces import lazy_face

__getattr__, __dir__, __all__ = lazy_face(__name__, __file__)
