"""The public face of bench/rate_search/: read by type checkers and by faces.lazy_face."""
from triton_perception.bench.rate_search.rate_search import run_rate_search as run_rate_search
from triton_perception.bench.rate_search.rate_search_report import rate_table as rate_table
from triton_perception.bench.rate_search.rate_search_schema import (
    RateSearchReport as RateSearchReport,
    RESULTS_SCHEMA as RESULTS_SCHEMA,
)
from triton_perception.bench.rate_search.rate_settings import (
    RateSearchSettings as RateSearchSettings,
)
