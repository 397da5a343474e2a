"""The bench's overhead budget: stage arithmetic, the node's stage sums and the report (pure)."""
from __future__ import annotations

import os
from typing import Any

import pytest

from triton_perception.bench.budget import (counted_one_more, cpu_outside_graph, CpuSplit,
                                            frame_budget, FRAME_TO_NODE, node_stages, ordered_rows,
                                            row_label, stage_means, step_row, summarise,
                                            triton_request, TritonRequest)
from triton_perception.bench.report import budget_table
from triton_perception.bench.session.measures import stub_model
from triton_perception.bench.session.ros_side import dds_transport_ms
from triton_perception.bench.session.settings import (BenchError, BenchSettings,
                                                      DIAGNOSTICS_PERIOD_S, STEP_TIMERS)
from triton_perception.bench.session.triton_side import model_statistics
from triton_perception.frames.accounting import Fate, FrameAccounting, RequestTimes, STAGES
from triton_perception.frames.diagnostics import NodeStatus, stage_key, TIMED_KEY

STEPS = ('pre', 'net')


def statistics(ensemble_ns: int, count: int, step_ns: dict[str, int]) -> dict[str, dict[str, int]]:
    """Snapshots as triton_side.inference_statistics gives them: every timer of a step alike."""
    return {'ens': {'success': ensemble_ns, 'success_count': count},
            **{step: {'success': 0, 'success_count': count,
                      **dict.fromkeys(STEP_TIMERS, ns)} for step, ns in step_ns.items()}}


def test_one_request_between_two_statistics_snapshots() -> None:
    """Two snapshots one request apart give that request's time in Triton and each step's timers."""
    before = statistics(1_000_000_000, 7, {'pre': 0, 'net': 0})
    after = statistics(1_050_000_000, 8, {'pre': 1_000_000, 'net': 10_000_000})
    request = triton_request(before, after, 'ens', STEPS)
    assert request is not None
    assert request.request_ms == pytest.approx(50.0)
    assert request.steps['net'] == dict.fromkeys(STEP_TIMERS, pytest.approx(10.0))
    assert request.steps['pre']['compute_infer'] == pytest.approx(1.0)


@pytest.mark.parametrize('counts', [(7, 7), (7, 9)])
def test_no_request_or_two_requests_between_snapshots_give_none(counts: tuple[int, int]) -> None:
    """Snapshots zero or two requests apart give no request: neither is one frame's time."""
    before = statistics(0, counts[0], {'pre': 0, 'net': 0})
    after = statistics(5, counts[1], {'pre': 5, 'net': 5})
    assert triton_request(before, after, 'ens', STEPS) is None


def test_a_step_that_did_not_run_gives_none() -> None:
    """A step that did not count the request gives none, rather than a frame without that step."""
    before = statistics(0, 1, {'pre': 0, 'net': 0})
    after = statistics(5, 2, {'pre': 5, 'net': 5})
    after['net']['success_count'] = 1
    assert triton_request(before, after, 'ens', STEPS) is None


def test_statistics_count_one_more_request_once_every_model_does() -> None:
    """
    A request counts as done only once every model named has counted it.

    Triton releases a step's timers after the ensemble's, so reading earlier would miss them.
    """
    before = statistics(0, 3, {'pre': 0, 'net': 0})
    after = statistics(5, 4, {'pre': 5, 'net': 5})
    assert counted_one_more(before, after, ('ens', *STEPS))
    after['net']['success_count'] = 3  # the model step's timers not released yet
    assert not counted_one_more(before, after, ('ens', *STEPS))
    assert counted_one_more(before, after, ('ens', 'pre'))


def test_node_stages_are_the_deltas_of_one_timed_frame() -> None:
    """The node's stages are its stage sums' deltas over exactly one timed frame, else none."""
    before = {'to_request': 10.0, 'request': 100.0, 'to_publish': 20.0}
    after = {'to_request': 11.5, 'request': 160.0, 'to_publish': 22.0}
    assert node_stages(before, 4, after, 5) == {'to_request': 1.5, 'request': 60.0,
                                                'to_publish': 2.0}
    assert node_stages(before, 4, after, 6) is None
    assert node_stages({}, 4, after, 5) is None


def test_stage_means_over_a_phase() -> None:
    """Stage means over a phase are the sums' growth over the timed count's; none without growth."""
    def status(sums: tuple[float, float, float], timed: int) -> NodeStatus:
        return NodeStatus({**{stage_key(stage): str(value) for stage, value in zip(STAGES, sums)},
                           TIMED_KEY: str(timed)})
    assert stage_means(status((1.0, 10.0, 2.0), 1), status((5.0, 110.0, 12.0), 5)) == {
        'to_request': 1.0, 'request': 25.0, 'to_publish': 2.5}
    assert stage_means(status((1.0, 10.0, 2.0), 1), status((1.0, 10.0, 2.0), 1)) is None
    assert stage_means(None, status((1.0, 10.0, 2.0), 1)) is None


def test_the_budget_rows_sum_to_the_end_to_end_time_in_the_order_a_frame_meets_them() -> None:
    """
    A frame's budget rows add up to its end-to-end time, in the order the frame meets them.

    Client-server is the round trip less Triton's time, the ensemble row Triton's time less the
    steps', and the frame's way to the node what is left.
    """
    triton = TritonRequest(50.0, {'pre': dict.fromkeys(STEP_TIMERS, 1.0),
                                  'net': dict.fromkeys(STEP_TIMERS, 10.0)})
    rows = frame_budget(70.0, {'to_request': 2.0, 'request': 53.0, 'to_publish': 4.0}, triton,
                        0.5)
    assert sum(rows.values()) == pytest.approx(70.0)
    assert list(rows) == [FRAME_TO_NODE, 'node_to_request', 'client_server',
                          *(step_row(step, timer) for step in STEPS for timer in STEP_TIMERS),
                          'triton_ensemble', 'node_to_publish', 'result_to_subscriber']
    assert rows['client_server'] == pytest.approx(3.0)  # 53 round trip - 50 in Triton
    assert rows['triton_ensemble'] == pytest.approx(6.0)  # 50 - 4 x (1 + 10)
    assert rows[FRAME_TO_NODE] == pytest.approx(70.0 - 2.0 - 53.0 - 4.0 - 0.5)


def test_without_dds_timestamps_the_result_transport_is_in_the_remainder() -> None:
    """Without DDS timestamps the result's transport has no row and stays in the remainder."""
    triton = TritonRequest(5.0, {'net': dict.fromkeys(STEP_TIMERS, 1.0)})
    rows = frame_budget(20.0, {'to_request': 1.0, 'request': 6.0, 'to_publish': 1.0}, triton, None)
    assert 'result_to_subscriber' not in rows
    assert rows[FRAME_TO_NODE] == pytest.approx(12.0)
    assert sum(rows.values()) == pytest.approx(20.0)


def test_summary_gives_median_and_p90_per_row_and_the_excess_over_the_reference() -> None:
    """
    The summary gives each row's median and p90 and the end-to-end time's excess.

    The excess is over the reference and over the steps' compute; with no frames the figures are
    None rather than zero.
    """
    frames = [{'node_to_request': float(value), 'triton net compute_infer': 10.0 * value}
              for value in range(1, 11)]
    figures = summarise(frames, [float(value) for value in range(20, 30)], 20.0)
    assert figures['frames'] == 10
    assert list(figures['stages_ms']) == ['node_to_request', 'triton net compute_infer']
    assert figures['stages_ms']['node_to_request'] == {'median': 5.5, 'p90': 9.1}
    assert figures['e2e_ms'] == {'median': 24.5, 'p90': 28.1}
    assert figures['beyond_reference_ms'] == 4.5
    assert figures['beyond_triton_compute_ms'] == 24.5 - 55.0  # e2e minus the steps' compute
    empty = summarise([], [], None)
    assert empty['e2e_ms'] == {'median': None, 'p90': None}
    assert empty['beyond_reference_ms'] is None and empty['beyond_triton_compute_ms'] is None


def test_rows_are_ordered_and_labelled() -> None:
    """Rows are put in a frame's order and labelled for the table (Triton steps, gRPC)."""
    assert ordered_rows(['node_to_publish', 'triton net queue', FRAME_TO_NODE]) == [
        FRAME_TO_NODE, 'triton net queue', 'node_to_publish']
    assert row_label('triton net queue') == 'Triton: net queue'
    assert row_label('client_server').startswith('gRPC')


def test_cpu_outside_the_graph_counts_the_node_the_server_and_the_other_steps() -> None:
    """
    CPU outside the model graph counts the node, the server's main process and the other steps.

    It leaves out the graph step and other models; without the graph step's stub there is no
    figure, and with no frames none at all.
    """
    split = CpuSplit(node_s=1.0, server_main_s=0.5,
                     stub_s={'pre': 0.25, 'net': 4.0, 'other_model': 0.05})
    figures = cpu_outside_graph(split, ('pre', 'net'), 'net', 100)
    assert figures['outside_graph_ms'] == pytest.approx(17.5)  # (1 + 0.5 + 0.25) s / 100
    assert figures['graph_ms'] == 40.0
    assert figures['server_steps_ms'] == {'net': 40.0, 'pre': 2.5}
    assert figures['server_other_models_ms'] == 0.5
    inside = cpu_outside_graph(CpuSplit(1.0, 5.0, {}), ('net',), 'net', 100)
    assert inside['outside_graph_ms'] is None and inside['graph_ms'] is None
    assert cpu_outside_graph(split, ('net',), 'net', 0) == {}


def test_budget_table_prints_each_stage_and_the_cpu_line() -> None:
    """
    The budget table prints a row per stage, the excess over the reference and the CPU line.

    A case without a budget has no row.
    """
    budget = summarise([{'node_to_request': 1.0, 'triton net compute_infer': 30.0}], [40.0], 33.0)
    cpu = cpu_outside_graph(CpuSplit(0.5, 0.1, {'net': 3.0}), ('net',), 'net', 100)
    budget['steps'] = ['net']
    loaded = {'node_stages_ms': {'detection_node': {'to_request': 1.0, 'request': 50.0,
                                                    'to_publish': 2.0}},
              'triton_steps_ms': {'net': {'queue_ms': 12.0, 'compute_input_ms': 1.0,
                                          'compute_infer_ms': 30.0, 'compute_output_ms': 1.0}}}
    report: dict[str, Any] = {'detection': {'budget': budget, 'throughput': loaded,
                                            'cpu_outside_graph_ms_per_frame': cpu},
                              'both': {'budget': None}}
    table = budget_table(report)
    assert '| detection | node: callback -> request sent | 1 | 1 |' in table
    assert '| detection | Triton: net compute_infer | 30 | 30 |' in table
    assert '| detection | **beyond the reference** | 7 | – |' in table
    assert 'detection: CPU ms per result outside the model graph 6' in table
    assert ('request round trip 50 (Triton queue 12.00, compute 32.00), response -> published 2'
            in table)
    assert '| both |' not in table


def test_accounting_sums_the_stages_of_published_frames_only() -> None:
    """
    Frame accounting sums the stage times of published frames with request times only.

    A failed frame or one without request times would skew the means.
    """
    accounting = FrameAccounting()
    # Received 20 ms ago, sent 1 ms later, answered 10 ms after that, published now.
    received = accounting.received() - 0.020
    accounting.settle(Fate.PUBLISHED, received,
                      request=RequestTimes(received + 0.001, received + 0.011))
    accounting.settle(Fate.FAILED, accounting.received(), 'timeout',
                      request=RequestTimes(received, received))
    accounting.settle(Fate.PUBLISHED, accounting.received())  # no request times: not timed
    snapshot = accounting.snapshot()
    assert snapshot.timed == 1
    assert set(snapshot.stage_ms_sums) == set(STAGES)
    assert snapshot.stage_ms_sums['to_request'] == pytest.approx(1.0)
    assert snapshot.stage_ms_sums['request'] == pytest.approx(10.0)
    assert snapshot.stage_ms_sums['to_publish'] >= 9.0


def test_node_status_reads_the_stage_sums() -> None:
    """A NodeStatus reads the stage sums and the timed count from diagnostics; none if absent."""
    status = NodeStatus({stage_key('to_request'): '1.500', stage_key('request'): '60.000',
                         stage_key('to_publish'): '2.000', TIMED_KEY: '3'})
    assert status.stage_ms_sums == {'to_request': 1.5, 'request': 60.0, 'to_publish': 2.0}
    assert status.timed == 3
    assert NodeStatus({}).stage_ms_sums == {} and NodeStatus({}).timed == 0


def test_model_statistics_reads_the_statistics_json() -> None:
    """model_statistics reads Triton's statistics JSON into counts and ns, missing timers as 0."""
    model = {'name': 'net', 'inference_count': '4', 'inference_stats': {
        'success': {'count': '4', 'ns': '400'}, 'queue': {'count': '4', 'ns': '8'},
        'compute_infer': {'count': '4', 'ns': '300'}}}
    assert model_statistics(model) == {'requests': 4, 'success': 400, 'success_count': 4,
                                       'queue': 8, 'compute_input': 0, 'compute_infer': 300,
                                       'compute_output': 0}


def test_dds_transport_from_message_info() -> None:
    """DDS transport is received minus source timestamp; without both timestamps it is None."""
    assert dds_transport_ms({'source_timestamp': 1_000_000, 'received_timestamp': 3_500_000}) \
        == pytest.approx(2.5)
    assert dds_transport_ms({'source_timestamp': 0, 'received_timestamp': 5}) is None
    assert dds_transport_ms({}) is None


def test_a_process_that_is_no_stub_serves_no_model() -> None:
    """A process that is no Python-backend stub (this one) is credited to no model."""
    assert stub_model(os.getpid()) is None


def test_bench_settings_pass_max_in_flight_to_the_nodes() -> None:
    """The bench passes max-in-flight to the nodes only when given, and refuses less than one."""
    assert BenchSettings().node_parameters() == {'diagnostics_period_s': DIAGNOSTICS_PERIOD_S}
    assert BenchSettings(max_in_flight=2).node_parameters()['max_in_flight'] == 2
    with pytest.raises(BenchError, match='max-in-flight'):
        BenchSettings(max_in_flight=0)
