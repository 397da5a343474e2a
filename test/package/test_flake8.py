# Copyright 2017 Open Source Robotics Foundation, Inc.
#
# Licensed under the Apache License, Version 2.0 (the "License");
# you may not use this file except in compliance with the License.
# You may obtain a copy of the License at
#
#     http://www.apache.org/licenses/LICENSE-2.0
#
# Unless required by applicable law or agreed to in writing, software
# distributed under the License is distributed on an "AS IS" BASIS,
# WITHOUT WARRANTIES OR CONDITIONS OF ANY KIND, either express or implied.
# See the License for the specific language governing permissions and
# limitations under the License.

"""ament_flake8 over the package, as `ros2 pkg create` writes it, with setup.cfg's settings."""
from ament_flake8.main import main_with_errors
import pytest

from support.checkout import REPO


@pytest.mark.flake8
@pytest.mark.linter
def test_flake8(monkeypatch: pytest.MonkeyPatch) -> None:
    """The package, its tests and scripts pass ament_flake8 with setup.cfg's settings."""
    # ament_flake8 checks the working directory; colcon test runs from the package's.
    monkeypatch.chdir(REPO)
    rc, errors = main_with_errors(argv=['--config', str(REPO / 'setup.cfg')])
    assert rc == 0, \
        'Found %d code style errors / warnings:\n' % len(errors) + \
        '\n'.join(errors)
