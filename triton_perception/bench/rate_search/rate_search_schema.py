"""
The shape of `bench --rate-search --json`: TypedDicts for mypy and a JSON Schema for readers.

The figures of one run at one publisher rate take ros2_benchmark's names where they mean the
same thing (its results JSON writes its enums as `BasicPerformanceMetrics.MEAN_FRAME_RATE`,
`BenchmarkMetadata.PEAK_THROUGHPUT_PREDICTION`, ...), so a results file can be read beside
Isaac ROS's; what ros2_benchmark does not report (percentiles, the split of the latency, CPU
and memory per process kind) has names of its own. RESULTS_SCHEMA is the JSON Schema every
results file satisfies (test/bench/rate_search/test_rate_search.py validates one against it); a
change of shape raises RATE_SEARCH_SCHEMA_VERSION.
"""
from __future__ import annotations

from typing import TypedDict

from triton_perception.bench.session import Percentiles, StepTimers

RATE_SEARCH_SCHEMA_VERSION = 1

# ros2_benchmark's BasicPerformanceMetrics, as its results JSON spells them.
SENT = 'BasicPerformanceMetrics.NUM_FRAMES_SENT'
MISSED = 'BasicPerformanceMetrics.NUM_MISSED_FRAMES'
PLAYBACK_RATE = 'BasicPerformanceMetrics.MEAN_PLAYBACK_FRAME_RATE'
FRAME_RATE = 'BasicPerformanceMetrics.MEAN_FRAME_RATE'
LATENCY_KEYS = ('BasicPerformanceMetrics.MEAN_LATENCY', 'BasicPerformanceMetrics.MIN_LATENCY',
                'BasicPerformanceMetrics.MAX_LATENCY')
JITTER_KEYS = ('BasicPerformanceMetrics.MEAN_JITTER', 'BasicPerformanceMetrics.MIN_JITTER',
               'BasicPerformanceMetrics.MAX_JITTER', 'BasicPerformanceMetrics.STD_DEV_JITTER')


class LatencySplit(TypedDict):
    """Where one output's mean end-to-end time goes, ms (see rate_search.latency_split)."""

    end_to_end: float | None
    take_decode_queue: float | None
    request: float | None
    server: float | None
    publish: float | None
    transport_and_executor: float | None


class CpuFigures(TypedDict):
    """CPU of the pipeline's node processes and of tritonserver (with its stubs) over a run."""

    nodes_percent_of_core: float
    server_percent_of_core: float | None
    nodes_ms_per_frame: float
    server_ms_per_frame: float | None


class RunMemory(TypedDict):
    """Summed RSS (MiB) at the run's end: the node processes, tritonserver with its stubs."""

    nodes: float
    server: float | None


RateFigures = TypedDict('RateFigures', {
    'rate_hz': float,
    'window_s': float,
    'BasicPerformanceMetrics.NUM_FRAMES_SENT': int,
    'BasicPerformanceMetrics.NUM_MISSED_FRAMES': int,
    'BasicPerformanceMetrics.MEAN_PLAYBACK_FRAME_RATE': float | None,
    'BasicPerformanceMetrics.MEAN_FRAME_RATE': float | None,
    'BasicPerformanceMetrics.MEAN_LATENCY': float | None,
    'BasicPerformanceMetrics.MIN_LATENCY': float | None,
    'BasicPerformanceMetrics.MAX_LATENCY': float | None,
    'BasicPerformanceMetrics.MEAN_JITTER': float | None,
    'BasicPerformanceMetrics.MIN_JITTER': float | None,
    'BasicPerformanceMetrics.MAX_JITTER': float | None,
    'BasicPerformanceMetrics.STD_DEV_JITTER': float | None,
    'dropped_share': float,
    'sustained': bool,
    'latency_ms': Percentiles,
    'results_per_output': dict[str, int],
    'cpu': CpuFigures,
    'memory_mib': RunMemory,
    'latency_split_ms': dict[str, LatencySplit],
    'triton_steps_ms': StepTimers,
})


class Probe(TypedDict):
    """One run of the search: its phase (trial, bisection, linear, confirmation), its figures."""

    phase: str
    figures: RateFigures


class SearchResult(TypedDict):
    """The search: its bounds and steps, every probe, and the highest rate sustained."""

    drop_limit: float
    lower_hz: float
    upper_hz: float
    bisection_width_hz: float
    step_hz: float
    window_s: float
    probes: list[Probe]
    max_sustained_hz: float
    at_bound: str | None


class FixedRate(TypedDict):
    """The runs at one fixed publisher rate and their medians."""

    runs: list[RateFigures]
    median: dict[str, float | None]


class RateSearchMachine(TypedDict, total=False):
    """What the figures were measured on."""

    cpu_model: str
    architecture: str
    cores: int | None
    usable_cores: int
    gpu: str
    memory_gb: float
    os: str
    kernel: str
    python: str
    ros_distro: str
    triton: str
    profile: str
    precision: str
    load_average_start: list[float]
    load_average_end: list[float]


class InputData(TypedDict):
    """The frames played: the bag (or clip) they came from, its hash and size, what was kept."""

    path: str
    topic: str | None
    sha256: str
    size_bytes: int
    frames: int
    resolution: str


class PipelineRun(TypedDict):
    """What ran: cameras, models, layout (or the stand-in and its capacity)."""

    cameras: int
    models: str
    layout: str
    outputs: list[str]
    stand_in_capacity_hz: float | None


RateSearchReport = TypedDict('RateSearchReport', {
    'schema_version': int,
    'metadata': dict[str, object],  # ros2_benchmark's BenchmarkMetadata
    'command': str,
    'package': dict[str, str | None],
    'machine': RateSearchMachine,
    'models': dict[str, str],
    'input': InputData,
    'pipeline': PipelineRun,
    'search': SearchResult,
    'fixed_rates': dict[str, FixedRate],
}, total=False)

_NUMBER_OR_NULL = {'type': ['number', 'null']}
_RATE_FIGURES = {
    'type': 'object',
    'required': ['rate_hz', 'window_s', SENT, MISSED, PLAYBACK_RATE, FRAME_RATE, *LATENCY_KEYS,
                 *JITTER_KEYS, 'dropped_share', 'sustained', 'latency_ms',
                 'results_per_output', 'cpu', 'memory_mib', 'latency_split_ms',
                 'triton_steps_ms'],
    'properties': {
        'rate_hz': {'type': 'number', 'exclusiveMinimum': 0},
        'window_s': {'type': 'number', 'exclusiveMinimum': 0},
        SENT: {'type': 'integer', 'minimum': 1},
        MISSED: {'type': 'integer', 'minimum': 0},
        PLAYBACK_RATE: _NUMBER_OR_NULL, FRAME_RATE: _NUMBER_OR_NULL,
        **{key: _NUMBER_OR_NULL for key in (*LATENCY_KEYS, *JITTER_KEYS)},
        'dropped_share': {'type': 'number', 'minimum': 0, 'maximum': 1},
        'sustained': {'type': 'boolean'},
        'latency_ms': {'type': 'object', 'required': ['p50', 'p90', 'p99'],
                       'additionalProperties': _NUMBER_OR_NULL},
        'results_per_output': {'type': 'object', 'additionalProperties': {'type': 'integer'}},
        'cpu': {'type': 'object', 'required': list(CpuFigures.__annotations__),
                'additionalProperties': _NUMBER_OR_NULL},
        'memory_mib': {'type': 'object', 'required': ['nodes', 'server'],
                       'additionalProperties': _NUMBER_OR_NULL},
        'latency_split_ms': {'type': 'object', 'additionalProperties': {
            'type': 'object', 'required': list(LatencySplit.__annotations__),
            'additionalProperties': _NUMBER_OR_NULL}},
        'triton_steps_ms': {'type': 'object'},
    },
}
_STRING = {'type': 'string'}
METADATA_KEYS = ('BenchmarkMetadata.NAME', 'BenchmarkMetadata.TEST_DATETIME',
                 'BenchmarkMetadata.DEVICE_ARCH', 'BenchmarkMetadata.DEVICE_OS',
                 'BenchmarkMetadata.BENCHMARK_MODE', 'BenchmarkMetadata.INPUT_DATA_PATH',
                 'BenchmarkMetadata.INPUT_DATA_HASH', 'BenchmarkMetadata.INPUT_DATA_SIZE',
                 'BenchmarkMetadata.DATA_RESOLUTION',
                 'BenchmarkMetadata.PEAK_THROUGHPUT_PREDICTION', 'BenchmarkMetadata.CONFIG')
MACHINE_KEYS = ('cpu_model', 'architecture', 'cores', 'usable_cores', 'gpu', 'memory_gb', 'os',
                'kernel', 'python', 'ros_distro', 'triton', 'profile', 'precision',
                'load_average_start', 'load_average_end')
RESULTS_SCHEMA: dict[str, object] = {
    '$schema': 'https://json-schema.org/draft/2020-12/schema',
    'title': 'triton_perception bench --rate-search results',
    'type': 'object',
    'required': ['schema_version', 'metadata', 'command', 'package', 'machine', 'models',
                 'input', 'pipeline', 'search', 'fixed_rates'],
    'properties': {
        'schema_version': {'const': RATE_SEARCH_SCHEMA_VERSION},
        'metadata': {'type': 'object', 'required': list(METADATA_KEYS)},
        'command': _STRING,
        'package': {'type': 'object', 'required': ['version', 'source']},
        'machine': {'type': 'object', 'required': list(MACHINE_KEYS)},
        'models': {'type': 'object', 'additionalProperties': {
            'type': 'string', 'pattern': '^[0-9a-f]{64}$'}},
        'input': {'type': 'object', 'required': list(InputData.__annotations__),
                  'properties': {'sha256': {'type': 'string', 'pattern': '^[0-9a-f]{64}$'},
                                 'frames': {'type': 'integer', 'minimum': 1}}},
        'pipeline': {'type': 'object', 'required': list(PipelineRun.__annotations__)},
        'search': {'type': 'object', 'required': list(SearchResult.__annotations__),
                   'properties': {
                       'probes': {'type': 'array', 'minItems': 1, 'items': {
                           'type': 'object', 'required': ['phase', 'figures'],
                           'properties': {'phase': {'enum': [
                               'trial', 'bisection', 'linear', 'confirmation']},
                                          'figures': _RATE_FIGURES}}},
                       'max_sustained_hz': {'type': 'number', 'minimum': 0}}},
        'fixed_rates': {'type': 'object', 'additionalProperties': {
            'type': 'object', 'required': ['runs', 'median'],
            'properties': {'runs': {'type': 'array', 'minItems': 1, 'items': _RATE_FIGURES}}}},
    },
}
