# Copyright 2015 Open Source Robotics Foundation, Inc.
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

"""ament_pep257 (pydocstyle, ament convention) over the package, as `ros2 pkg create` writes it."""
from ament_pep257.main import main
import pytest

from support.checkout import REPO


@pytest.mark.linter
@pytest.mark.pep257
def test_pep257(monkeypatch: pytest.MonkeyPatch) -> None:
    """Every docstring of the package and its tests passes ament_pep257."""
    # ament_pep257 checks the working directory; colcon test runs from the package's. Build
    # output holds copies of the sources. '.' holds test/: naming test/ as well (as the
    # template does) would check every test file twice, once under each name.
    monkeypatch.chdir(REPO)
    rc = main(argv=['.', '--exclude', 'build', 'install', 'log', 'out'])
    assert rc == 0, 'Found code style errors / warnings'
