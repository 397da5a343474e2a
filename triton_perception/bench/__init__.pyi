"""The public face of bench/: read by type checkers and by faces.lazy_face."""
from triton_perception.bench.bench_schema import (
    BenchRun as BenchRun,
    GlueReport as GlueReport,
)
from triton_perception.bench.glue import (
    GlueSettings as GlueSettings,
    run_glue as run_glue,
)
from triton_perception.bench.glue_report import glue_table as glue_table
from triton_perception.bench.process_memory import (
    measure_all as measure_all,
    memory_table as memory_table,
)
from triton_perception.bench.rate_search import (
    RateSearchSettings as RateSearchSettings,
    run_rate_search as run_rate_search,
)
from triton_perception.bench.rate_search_report import rate_table as rate_table
from triton_perception.bench.rate_search_schema import (
    RateSearchReport as RateSearchReport,
    RESULTS_SCHEMA as RESULTS_SCHEMA,
)
from triton_perception.bench.report import (
    budget_table as budget_table,
    markdown_table as markdown_table,
    steps_table as steps_table,
)
from triton_perception.bench.run import run_bench as run_bench
from triton_perception.bench.settings import (
    BenchError as BenchError,
    BenchSettings as BenchSettings,
    parse_cases as parse_cases,
)
