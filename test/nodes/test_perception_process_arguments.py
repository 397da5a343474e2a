"""perception_process's own arguments: a mistaken one stops the process with what to give."""
from __future__ import annotations

import pytest

from triton_perception.nodes.perception_process import parse_arguments

CAMERAS = ['--camera=/front=/front/image_raw', '--camera=/rear=/rear/image_raw']


@pytest.mark.parametrize(('arguments', 'says'), [
    (['--max-batch', '0'], '--max-batch 0: give 1 to 4'),
    (['--max-batch', '5'], '--max-batch 5: give 1 to 4'),
    (['--joined-model', '', '--camera-priorities', '/front=always'],
     "need the camera's joined requests"),
    (['--joined-model', '', '--max-requests', '1'], "need the camera's joined requests"),
])
def test_a_mistaken_argument_says_what_to_give(arguments: list[str], says: str,
                                               capsys: pytest.CaptureFixture[str]) -> None:
    """Each mistake exits with 2 and a message naming the argument and the accepted values."""
    with pytest.raises(SystemExit) as exited:
        parse_arguments([*CAMERAS, *arguments])
    assert exited.value.code == 2
    assert says in capsys.readouterr().err


def test_batching_is_on_by_default_and_one_turns_it_off() -> None:
    """Several cameras are served by one request unless --max-batch 1."""
    assert parse_arguments(CAMERAS).max_batch == 4
    assert parse_arguments([*CAMERAS, '--max-batch', '1']).max_batch == 1
