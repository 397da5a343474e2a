"""mypy over the package with setup.cfg's settings: type hints are checked, not only written."""
from mypy import api
import pytest

from support.checkout import REPO


@pytest.mark.linter
@pytest.mark.mypy
def test_mypy(monkeypatch: pytest.MonkeyPatch) -> None:
    """The package passes mypy with setup.cfg's settings: its type hints are checked."""
    # setup.cfg names the files and the settings; mypy reads it from the working directory.
    monkeypatch.chdir(REPO)
    report, errors, status = api.run(['--config-file', str(REPO / 'setup.cfg')])
    assert status == 0, f'mypy found type errors:\n{report}{errors}'
