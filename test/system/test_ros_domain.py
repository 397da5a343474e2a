"""The ROS domain a replay reserves: never the caller's, never one in use, never one reserved."""
from __future__ import annotations

import os
import socket

import pytest

from triton_perception.system.ros_domain import (DOMAIN_GAIN, domain_in_use, DOMAINS, PORT_BASE,
                                                 private_domain, UNICAST_OFFSETS)


def test_reservations_differ_and_are_never_the_callers() -> None:
    """Every reservation held at once is a different domain, and none is ROS_DOMAIN_ID's."""
    caller = int(os.environ['ROS_DOMAIN_ID'])
    held = [private_domain() for _ in range(20)]
    try:
        domains = [domain.domain_id for domain in held]
        assert len(set(domains)) == len(domains) and caller not in domains
        assert set(domains) <= set(DOMAINS)
    finally:
        for domain in held:
            domain.release()


def test_a_released_domain_can_be_reserved_again(monkeypatch: pytest.MonkeyPatch) -> None:
    """With one domain to choose from, a second reservation waits for the first's release."""
    monkeypatch.setattr('triton_perception.system.ros_domain.DOMAINS', range(101, 102))
    with private_domain() as first:
        with pytest.raises(RuntimeError, match='in use'):
            private_domain()
    with private_domain() as again:
        assert first.domain_id == again.domain_id == 101


def test_a_domain_with_a_participant_on_this_host_is_in_use() -> None:
    """A bound RTPS unicast port of a domain (any participant's, here the second) marks it."""
    domain = 101  # of DOMAINS, but above the 1-100 the test suites take (conftest)
    port = PORT_BASE + DOMAIN_GAIN * domain + UNICAST_OFFSETS[0] + 2
    with socket.socket(socket.AF_INET, socket.SOCK_DGRAM) as participant:
        participant.bind(('', port))
        assert domain_in_use(domain)
    assert not domain_in_use(domain)
