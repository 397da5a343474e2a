"""
What a camera's joined request is: the ensemble that serves its models, and a round's requests.

A camera's nodes are served by one request to the joined ensemble (`perception`) when its steps
serve every node's model and outputs (JoinedModel.serves); otherwise each node's frame goes to
its own model. A process's cameras share request threads (ProcessRequests) that can carry the
rounds of several cameras in one request (serving.requests.camera_batches.CameraBatches).
"""
from __future__ import annotations

from typing import NamedTuple

import tritonclient.grpc as grpcclient
from tritonclient.utils import InferenceServerException

from triton_perception.frames import FrameMessage

from triton_perception.serving.requests.joined_slot import Member, MemberFrames
from triton_perception.serving.requests.request_errors import is_unreachable
from triton_perception.serving.requests.request_inputs import Tensors

HEALTH_OUTPUT = 'HEALTH_STATISTICS'  # the joined ensemble's camera health statistics


class JoinedModel(NamedTuple):
    """What the joined ensemble serves: its steps' models and its outputs."""

    steps: frozenset[str]
    outputs: frozenset[str]

    def serves(self, members: list[Member]) -> bool:
        """Whether one request to it answers every member (two or more) with all it asks for."""
        return len(members) > 1 and all(
            member.settings.model in self.steps and set(member.settings.outputs) <= self.outputs
            for member in members)


class Request(NamedTuple):
    """One request of a joined round: the model, its inputs and outputs, whom it answers."""

    model: str
    inputs: Tensors
    outputs: tuple[str, ...]
    members: list[Member]


class CameraRound(NamedTuple):
    """A camera's frames taken at once, and the requests planned to serve them."""

    frames: MemberFrames
    requests: list[Request]
    message: FrameMessage  # the camera message the frames came from


def read_joined_model(client: grpcclient.InferenceServerClient, name: str) -> JoinedModel | None:
    """
    Return the steps and outputs of ensemble `name`, None if the server has no such model.

    Raises InferenceServerException when the server is unreachable.
    """
    try:
        config = client.get_model_config(name).config
    except InferenceServerException as error:
        if is_unreachable(error):
            raise
        return None
    return JoinedModel(frozenset(step.model_name for step in config.ensemble_scheduling.step),
                       frozenset(output.name for output in config.output))
