"""The public face of bench/glue/: read by type checkers and by faces.lazy_face."""
from triton_perception.bench.glue.glue_bench import (
    GlueSettings as GlueSettings,
    run_glue as run_glue,
)
from triton_perception.bench.glue.glue_report import glue_table as glue_table
from triton_perception.bench.glue.glue_schema import GlueReport as GlueReport
