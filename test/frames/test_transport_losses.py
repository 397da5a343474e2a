"""Counting frames lost before a node from the publishers' sequence numbers (pure)."""
from __future__ import annotations

from triton_perception.frames.accounting import FrameAccounting
from triton_perception.frames.transport_losses import publisher_sequence, SequenceGapCounter


def test_gaps_in_one_publishers_sequence_are_counted() -> None:
    """The numbers missing from one publisher's sequence are counted as lost."""
    counter = SequenceGapCounter()
    missed = [counter.observe('camera', number) for number in (1, 2, 5, 6, 10)]
    assert missed == [0, 0, 2, 0, 3]
    assert counter.lost == 5


def test_counting_starts_at_the_first_sample_seen() -> None:
    """Samples a publisher sent before this reader matched it were never meant for it."""
    counter = SequenceGapCounter()
    assert counter.observe('camera', 40) == 0
    assert counter.observe('camera', 41) == 0
    assert counter.lost == 0


def test_publishers_are_counted_apart() -> None:
    """Each publisher's sequence is counted apart: interleaving is no loss."""
    counter = SequenceGapCounter()
    for publisher, number in (('a', 1), ('b', 1), ('a', 2), ('b', 3), ('a', 3)):
        counter.observe(publisher, number)
    assert counter.lost == 1


def test_a_restarted_publisher_counts_no_loss() -> None:
    """
    A new GID starts its own count.

    A sequence that goes backwards under the same key (a process restarted with a reused GID) starts
    over; neither is a loss.
    """
    counter = SequenceGapCounter()
    for number in (1, 2, 3, 4):
        counter.observe('old-gid', number)
    assert counter.observe('new-gid', 1) == 0
    assert counter.observe('old-gid', 1) == 0
    assert counter.observe('old-gid', 2) == 0
    assert counter.lost == 0


def test_forget_starts_over() -> None:
    """After forget, a publisher's next number starts a new count."""
    counter = SequenceGapCounter()
    counter.observe('camera', 1)
    counter.forget()
    assert counter.observe('camera', 9) == 0


def test_message_info_without_sequence_numbers_gives_none() -> None:
    """Message info without a sequence number or a publisher GID gives no sequence to count."""
    gid = {'implementation_identifier': 'rmw_x', 'data': b'\x01\x02'}
    assert publisher_sequence({'publication_sequence_number': None, 'publisher_gid': gid}) is None
    assert publisher_sequence({'publication_sequence_number': 0, 'publisher_gid': gid}) is None
    assert publisher_sequence({'publication_sequence_number': 7, 'publisher_gid': None}) is None
    assert publisher_sequence({'publication_sequence_number': 7, 'publisher_gid': gid}) == (
        ('rmw_x', b'\x01\x02'), 7)


def test_losses_are_outside_the_received_identity() -> None:
    """Frames lost before the node are counted apart from those received, with their reason."""
    accounting = FrameAccounting()
    accounting.received()
    assert accounting.lost_before_node(3, 'sequence gap') == 3
    assert accounting.lost_before_node(0, 'sequence gap') == 3
    snapshot = accounting.snapshot()
    assert (snapshot.received, snapshot.pending, snapshot.lost_before_node) == (1, 1, 3)
    assert snapshot.reasons == {'lost before the node: sequence gap': 3}


def test_demo_fails_on_faults_and_only_reports_losses() -> None:
    """
    The demo fails on failed frames, no frames, no results or broken accounting.

    Frames lost before the node only are reported, not failed on.
    """
    from triton_perception.apps.demo import demo_problems

    def node(**counts: int) -> dict:
        figures = {'received': 100, 'published': 40, 'failed': 0, 'lost_before_node': 0,
                   'frames_in': 100, 'accounted': True, 'reasons': {}}
        figures.update(counts)
        return figures
    assert demo_problems({'nodes': {'lane_node': node(received=98, lost_before_node=2)}}) == []
    assert demo_problems({'nodes': {'lane_node': node(failed=1)}}) == [
        'lane_node: 1 frames failed: {}']
    assert demo_problems({'nodes': {'lane_node': node(received=0, published=0)}}) == [
        'lane_node received no frame (is it running? see the log above)']
    assert demo_problems({'nodes': {'lane_node': node(published=0)}}) == [
        'lane_node published no result']
    assert demo_problems({'nodes': {'lane_node': node(received=97, lost_before_node=2,
                                                      accounted=False)}}) == [
        'lane_node: frames not accounted for (received 97 + lost 2 of 100 published)']
