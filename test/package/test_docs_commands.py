"""Every command, launch argument, import, path and link the README and docs/ give is the code's."""
from __future__ import annotations

from pathlib import Path

import pytest

from support.checkout import REPO
from support.docs_commands import problems

PAGES = [REPO / 'README.md', *sorted((REPO / 'docs').glob('*.md'))]
BROKEN_PAGE = """
```bash
triton-perception bag evaluate drive/ --no-such-option
triton-perception bag evaluate drive/ --workers 2 --output report/
ros2 launch triton_perception pipeline.launch.py model_name:=laneatt
ros2 launch triton_perception pipeline.launch.py camera_topic:=/cam/image_raw
```

```python
from triton_perception.bag import replay_test
from triton_perception.evaluation import replay_test
```

See `config/no_such_file.yaml` beside `config/params.yaml`, and [upstream](https://example.org/x).

ros2/launch tag 1.0.7, `launch/launch/actions/execute_local.py`: a path of that project.
"""


@pytest.mark.parametrize('page', PAGES, ids=[page.name for page in PAGES])
def test_every_command_argument_import_path_and_link_of_a_page_is_the_codes(page: Path) -> None:
    """Each triton-perception line parses, each launch argument, import and path exists."""
    assert problems(page.read_text(encoding='utf-8'), REPO) == []


def test_a_broken_line_of_each_kind_is_caught() -> None:
    """The planted faults are found, one line each, and the sound lines beside them are not."""
    found = problems(BROKEN_PAGE, REPO)
    assert len(found) == 5, found
    for fault in ('--no-such-option', "'model_name'", 'from triton_perception.bag import '
                  'replay_test', 'config/no_such_file.yaml', 'https://example.org/x'):
        assert any(fault in line for line in found), (fault, found)
