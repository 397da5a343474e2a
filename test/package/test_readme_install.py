"""The README's apt-get line names every Debian package that `make setup` checks for."""
from __future__ import annotations

import re

from support.checkout import REPO


def test_the_readme_install_line_names_what_setup_needs() -> None:
    """dev/setup.sh's GST_PACKAGES (it fails without them unless it runs as root) are there."""
    setup = (REPO / 'dev' / 'setup.sh').read_text(encoding='utf-8')
    [packages] = re.findall(r'^GST_PACKAGES=\(([^)]*)\)', setup, re.MULTILINE)
    readme = (REPO / 'README.md').read_text(encoding='utf-8')
    [line] = re.findall(r'^sudo apt-get install -y ((?:.*\\\n)*.*)$', readme, re.MULTILINE)
    named = set(line.replace('\\\n', ' ').split())
    assert set(packages.split()) <= named, sorted(set(packages.split()) - named)
    assert {'python3-venv', 'python3-dev', 'make'} <= named
