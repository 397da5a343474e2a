"""The public face of bench/session/: read by type checkers and by faces.lazy_face."""
from triton_perception.bench.session.cases import (
    BOTH as BOTH,
    camera_namespaces as camera_namespaces,
    CAMERAS_PER_PROCESS as CAMERAS_PER_PROCESS,
    DETECTIONS as DETECTIONS,
    EVENTS_LAYOUT as EVENTS_LAYOUT,
    GlueCase as GlueCase,
    LANES as LANES,
    LAYOUTS as LAYOUTS,
    publish_paced as publish_paced,
    start_processes as start_processes,
    wait_ready as wait_ready,
)
from triton_perception.bench.session.floor_node import spin_node as spin_node
from triton_perception.bench.session.measures import (
    check_alive as check_alive,
    p95 as p95,
    ratio as ratio,
    server_cpu_by_process as server_cpu_by_process,
    summary as summary,
    TreeRssPeak as TreeRssPeak,
)
from triton_perception.bench.session.ros_side import (
    CaseWiring as CaseWiring,
    read_clip as read_clip,
    ResultTracker as ResultTracker,
    rgb_message as rgb_message,
    rgb_view as rgb_view,
    RosSide as RosSide,
)
from triton_perception.bench.session.run_record import (
    busy_note as busy_note,
    load_averages as load_averages,
    machine_description as machine_description,
    source_version as source_version,
    table_cell as table_cell,
    write_report as write_report,
)
from triton_perception.bench.session.schema import (
    Machine as Machine,
    Percentiles as Percentiles,
    StepTimers as StepTimers,
    Summary as Summary,
)
from triton_perception.bench.session.session import (
    BenchSession as BenchSession,
    ServedTriton as ServedTriton,
)
from triton_perception.bench.session.settings import (
    BenchError as BenchError,
    BenchSettings as BenchSettings,
    CASES as CASES,
    DEFAULT_VIDEO as DEFAULT_VIDEO,
    detection_request_inputs as detection_request_inputs,
    DIAGNOSTICS_PERIOD_S as DIAGNOSTICS_PERIOD_S,
    DRAIN_TIMEOUT_S as DRAIN_TIMEOUT_S,
    FRAME_TIMEOUT_S as FRAME_TIMEOUT_S,
    NodeKind as NodeKind,
    NODES as NODES,
    PROGRESS_PERIOD_S as PROGRESS_PERIOD_S,
    RATE_HZ as RATE_HZ,
    READY_TIMEOUT_S as READY_TIMEOUT_S,
    RSS_SAMPLE_PERIOD_S as RSS_SAMPLE_PERIOD_S,
    Stamp as Stamp,
    STATUS_TIMEOUT_S as STATUS_TIMEOUT_S,
    STEP_TIMERS as STEP_TIMERS,
    WARMUP_FRAMES as WARMUP_FRAMES,
    WINDOW_S as WINDOW_S,
)
from triton_perception.bench.session.transfers import (
    ensemble_steps as ensemble_steps,
    transfer_bytes as transfer_bytes,
)
from triton_perception.bench.session.triton_side import (
    EnsembleRequests as EnsembleRequests,
    inference_statistics as inference_statistics,
    step_breakdown as step_breakdown,
)
