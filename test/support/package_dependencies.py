"""
package.xml's dependency keys, and the pip packages rosdep installs for them.

The rules of a key come from the package's own rosdep file first, then from the offline copy of
rosdistro's python.yaml in ../shared/rosdistro.
"""
from __future__ import annotations

from typing import Any
import xml.etree.ElementTree as ElementTree

import yaml

from support.checkout import REPO, shared_path

DEPENDENCY_TAGS = ('depend', 'build_depend', 'buildtool_depend', 'exec_depend', 'test_depend',
                   'build_export_depend')


def dependency_keys() -> list[str]:
    """Return every dependency key of package.xml, whatever its tag."""
    root = ElementTree.parse(REPO / 'package.xml').getroot()
    return sorted({element.text.strip() for tag in DEPENDENCY_TAGS
                   for element in root.findall(tag) if element.text})


def pip_keys() -> dict[str, dict[str, Any]]:
    """Every key of package.xml that rosdep installs with pip, with its rules."""
    rules = {}
    for source in (REPO / 'rosdep' / 'triton_perception.yaml',
                   shared_path('rosdistro', 'rosdep', 'python.yaml')):
        for key, rule in yaml.safe_load(source.read_text()).items():
            rules.setdefault(key, rule)
    return {key: rules[key] for key in dependency_keys() if key.endswith('-pip')}


def pip_packages(rules: dict[str, Any], platform: str) -> list[str]:
    """
    Return the pip packages a key's rules give 'os' or 'os:codename', as rosdep resolves them.

    A codename's own entry wins over the entry for every release of the OS.
    """
    os_name, _, codename = platform.partition(':')
    rule = rules.get(os_name, {})
    if codename and codename in rule:
        rule = rule[codename]
    return list(rule.get('pip', {}).get('packages', []))
