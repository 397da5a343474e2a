"""One bench session leaves no scratch directory, domain or environment behind."""
from __future__ import annotations

import os

import pytest

from triton_perception.bench.session.session import BenchSession


def test_the_session_restores_the_environment_and_removes_its_scratch() -> None:
    """Inside, ROS points at the session's own domain; after, os.environ is as it was."""
    before = dict(os.environ)
    with BenchSession('triton_perception-test-session-', lambda line: None) as session:
        assert os.environ['ROS_DOMAIN_ID'] == str(session.domain.domain_id)
        os.environ['TRITON_PERCEPTION_SET_BY_A_BENCH'] = '1'
        scratch = session.scratch
        assert scratch.is_dir()
    assert dict(os.environ) == before
    assert not scratch.exists()


def test_the_session_restores_the_environment_when_the_bench_fails() -> None:
    """An error inside the block still undoes everything, and reaches the caller."""
    before = dict(os.environ)
    with pytest.raises(RuntimeError, match='a failing case'):
        with BenchSession('triton_perception-test-session-', lambda line: None) as session:
            scratch = session.scratch
            raise RuntimeError('a failing case')
    assert dict(os.environ) == before
    assert not scratch.exists()
