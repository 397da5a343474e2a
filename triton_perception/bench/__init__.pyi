"""The public face of bench/: read by type checkers and by faces.lazy_face."""
from triton_perception.bench.bench_schema import BenchRun as BenchRun
from triton_perception.bench.glue import *
from triton_perception.bench.offline import *
from triton_perception.bench.process_memory import (
    measure_all as measure_all,
    memory_table as memory_table,
)
from triton_perception.bench.rate_search import *
from triton_perception.bench.report import (
    budget_table as budget_table,
    markdown_table as markdown_table,
    steps_table as steps_table,
)
from triton_perception.bench.run import run_bench as run_bench
from triton_perception.bench.session.settings import (
    BenchError as BenchError,
    BenchSettings as BenchSettings,
    parse_cases as parse_cases,
)
