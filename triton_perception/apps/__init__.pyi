"""The public face of apps/: read by type checkers and by faces.lazy_face."""
from triton_perception.apps.demo import run_demo as run_demo
from triton_perception.apps.docs_tables import main as main
from triton_perception.apps.soak_run import soak as soak
