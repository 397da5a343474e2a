"""
`bench --rate-search`: the highest rate the pipeline sustains, found as ros2_benchmark does.

Owns: the settings and the search (rate_settings), the pipeline under test and each run's
figures (rate_pipeline), the run of the search and the fixed rates (rate_search), the stand-in
node of known capacity (stand_in_node), the results' shape and JSON Schema
(rate_search_schema), and the frames, machine and table of the report (rate_search_report).
It stands on bench/session/ through its face.
"""
from triton_perception.faces import lazy_face

__getattr__, __dir__, __all__ = lazy_face(__name__, __file__)
