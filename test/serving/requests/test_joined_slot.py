"""A camera's JoinedSlot: a frame a member hands over after it left is dropped, never served."""
from __future__ import annotations

import numpy as np

from support.recording_log import RecordingLog
from triton_perception.frames import Fate, Frame, FrameAccounting
from triton_perception.serving.requests.joined_slot import JoinedSlot, Member
from triton_perception.serving.requests.request_inputs import Tensors
from triton_perception.serving.requests.triton_client import ClientSettings
from triton_perception.serving.requests.worker_log import WorkerLog


def member(name: str) -> Member:
    """Return a member whose frames are never prepared or delivered here."""
    def prepare(frame: Frame) -> Tensors:
        return {'IMAGE': np.zeros((1, 1, 3), np.uint8)}

    def deliver(frame: Frame, inputs: Tensors, outputs: Tensors) -> None:
        """Deliver nothing: these frames never reach a request."""
    return Member(name, ClientSettings(url='127.0.0.1:1', model=name, outputs=()),
                  FrameAccounting(), prepare, deliver, WorkerLog(RecordingLog()))


def test_a_frame_put_after_its_member_left_is_dropped_and_served_again_after_it_rejoins() -> None:
    """Frames of a member that left are dropped as `node not active` until it is admitted."""
    slot = JoinedSlot()
    slot.accept_frames()
    detection, lanes = member('detection'), member('lanes')
    slot.remove('lanes', 'node deactivated')
    for one in (detection, lanes):
        slot.put(one, Frame(1, one.accounting.received()))
    assert lanes.accounting.snapshot().reasons == {'dropped: node not active': 1}
    assert list(slot.take(wait=False) or {}) == ['detection']
    slot.admit('lanes')
    slot.put(lanes, Frame(2, lanes.accounting.received()))
    assert list(slot.take(wait=False) or {}) == ['lanes']
    assert lanes.accounting.count(Fate.DROPPED) == 1
