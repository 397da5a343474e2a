"""
A ROS domain of this process's own, for a replay, a bench or the demo and the nodes they start.

A replay scores what its nodes publish and counts what they receive: in the caller's domain it
also hears whatever else runs there (a live camera on the same topic, another replay), and
scores it. `private_domain` picks a domain that no participant on this host uses and that no
other process of this package has picked: its reservation is a lock file held while the domain
is in use (released when the process ends, however it ends), and a domain in use by another
ROS 2 process shows as a bound RTPS unicast port (the port numbers every RTPS implementation
derives from the domain, as the DDS interoperability specification gives them).
"""
from __future__ import annotations

import errno
import fcntl
import os
from pathlib import Path
import random
import socket
import tempfile
from types import TracebackType

from triton_perception.errors import TritonPerceptionError

# Domains 1-101: the ROS documentation advises 0-101 on Linux (higher ids can meet ephemeral
# ports); 0, everybody's default, is never taken.
DOMAINS = range(1, 102)
# RTPS well-known ports: PB + DG * domain + d1 (metatraffic) or d3 (user) + PG * participant.
PORT_BASE, DOMAIN_GAIN, PARTICIPANT_GAIN, UNICAST_OFFSETS = 7400, 250, 2, (10, 11)
PARTICIPANTS_CHECKED = 16  # a domain whose first participants are all gone counts as free
LOCK_DIRECTORY = Path(tempfile.gettempdir()) / 'triton_perception-ros-domains'


class NoFreeDomain(TritonPerceptionError, RuntimeError):
    """Every domain of DOMAINS is in use on this host."""


def domain_in_use(domain: int) -> bool:
    """Say whether a participant on this host uses `domain`: one of its unicast ports is bound."""
    for participant in range(PARTICIPANTS_CHECKED):
        for offset in UNICAST_OFFSETS:
            port = PORT_BASE + DOMAIN_GAIN * domain + offset + PARTICIPANT_GAIN * participant
            with socket.socket(socket.AF_INET, socket.SOCK_DGRAM) as probe:
                try:
                    probe.bind(('', port))
                except OSError as error:
                    if error.errno == errno.EADDRINUSE:
                        return True
                    raise
    return False


class PrivateDomain:
    """A ROS domain reserved for this process until `release` (or the end of a with block)."""

    def __init__(self, domain_id: int, lock: int) -> None:
        """Hold `lock`, the locked file descriptor that reserves `domain_id`."""
        self.domain_id = domain_id
        self._lock = lock

    def release(self) -> None:
        """Give the domain up: another process may pick it from now on."""
        if self._lock >= 0:
            os.close(self._lock)
            self._lock = -1

    def __enter__(self) -> PrivateDomain:
        """Return the reservation itself."""
        return self

    def __exit__(self, kind: type[BaseException] | None, error: BaseException | None,
                 trace: TracebackType | None) -> None:
        """Release the domain."""
        self.release()


def private_domain() -> PrivateDomain:
    """
    Reserve a ROS domain that nothing on this host uses, and that is not the caller's.

    Domains are tried in a random order, so that processes starting together rarely try the
    same one first. Raises NoFreeDomain when every domain of DOMAINS is taken.
    """
    caller = os.environ.get('ROS_DOMAIN_ID', '0')
    _make_lock_directory()
    for domain in random.sample(list(DOMAINS), len(DOMAINS)):
        if str(domain) == caller:
            continue
        try:  # read-only: a lock file another user made is locked all the same
            lock = os.open(LOCK_DIRECTORY / f'{domain}.lock', os.O_RDONLY | os.O_CREAT, 0o644)
        except OSError:  # no lock file, and none may be made: another user's reservation
            continue
        try:
            fcntl.flock(lock, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            os.close(lock)
            continue
        if domain_in_use(domain):
            os.close(lock)
            continue
        return PrivateDomain(domain, lock)
    raise NoFreeDomain(f'every ROS domain {DOMAINS.start}-{DOMAINS.stop - 1} is in use on this '
                       'host')


def _make_lock_directory() -> None:
    """Make the lock files' directory, writable by every user as /tmp is (sticky)."""
    try:
        LOCK_DIRECTORY.mkdir()
    except FileExistsError:
        return
    LOCK_DIRECTORY.chmod(0o1777)  # mkdir's mode is cut by the umask
