"""
What every bench stands on: the session, the ROS and Triton sides, the cases, the records.

Owns: one bench session (session: scratch directory, a private ROS domain and the environment
pointing at it, tritonserver started or found, the bench's ROS participant, all undone on
exit, os.environ included), the bench's settings and errors (settings), the ROS side
(ros_side: frames published, results and statuses heard), Triton's statistics (triton_side),
what a request carries (transfers), process measures (measures), what a case launches and the
frames paced to it (cases, and floor_node, the bare node the glue bench sets against the
package's), the shapes every report shares (schema) and its machine, source and writer
(run_record). It imports no other room of bench/: `bench`, `bench --glue` and
`bench --rate-search` stand on it.
"""
from triton_perception.faces import lazy_face

__getattr__, __dir__, __all__ = lazy_face(__name__, __file__)
