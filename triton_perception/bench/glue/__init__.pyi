"""The public face of bench/glue/: read by type checkers and by faces.lazy_face."""
from triton_perception.bench.glue.glue_bench import (
    GlueSettings as GlueSettings,
    run_glue as run_glue,
)
from triton_perception.bench.glue.glue_report import glue_table as glue_table
from triton_perception.bench.glue.glue_schema import GlueReport as GlueReport
from triton_perception.bench.glue.publish_cost import (
    measure_publish_cost as measure_publish_cost,
    publish_cost_table as publish_cost_table,
)
