"""
Drives' jobs run one after another or in parallel as Ray tasks (`--workers N [--ray-address A]`).

`run_each` is the one place that chooses: a drive's replay (drives.replay_drive) and a drive's
pairing (folder_comparison.compare_drive) both run through it.

Ray is the engine: each drive is one task (one CPU), Ray places and runs them and retries a task
whose worker process died (`max_retries`); nothing here queues, schedules or retries by itself.
Without an address a local Ray instance with N CPUs is started on this machine, so N drives
replay at once; with one (or RAY_ADDRESS) the tasks run on that cluster, one CPU each.

Each task runs its drive's job (a replay as `bag evaluate` replays one bag, in a ROS domain of
its own: evaluation.pipeline_session), so drives on one machine never hear each other, against
the shared Triton URL when there is one. Its outputs land under OUT/<drive>/,
which must be a directory every worker writes to (a shared file system on a cluster). Each
attempt is counted in OUT/<drive>/attempts, so the report says which drives Ray retried.
"""
from __future__ import annotations

from dataclasses import dataclass
import multiprocessing
import multiprocessing.queues
import os
from pathlib import Path
import queue
import time
from typing import Callable, Generic, Protocol, TypeVar

from triton_perception.bag import BagError

ATTEMPTS_FILE = 'attempts'
WORKER_PID_FILE = 'worker.pid'
# A task's worker that dies is started again once: a drive is failed after two deaths.
MAX_RETRIES = 1
QUIET_LIMIT_S = 60.0  # the longest the log stays silent while drives replay


class DriveJob(Protocol):
    """What a drive's task is given: at least the drive's output folder (OUT/<drive>/)."""

    @property
    def output(self) -> Path:
        """Return the drive's output folder, where its attempts are counted."""


Job = TypeVar('Job', bound=DriveJob)
Result = TypeVar('Result')


@dataclass(frozen=True)
class DriveOutcome(Generic[Result]):
    """One drive's result: its report, or the error that failed it, and Ray's attempts."""

    drive: str
    report: Result | None
    error: str
    attempts: int


def attempts_of(output: Path) -> int:
    """Return the attempts counted in a drive's output folder (0 before the first)."""
    try:
        return int((output / ATTEMPTS_FILE).read_text(encoding='utf-8'))
    except (OSError, ValueError):
        return 0


def run_each(task: Callable[[Job], Result], here: Callable[[Job], Result],
             drives: dict[str, Job], workers: int, address: str,
             log: Callable[[str], None]) -> dict[str, DriveOutcome[Result]]:
    """
    Run every drive's job and return each outcome: the one place that chooses Ray or not.

    With `workers` above 1 or a Ray `address`, each job is `task(job)` as a Ray
    task (run_tasks); else the jobs run one after another in this process as `here(job)`.
    """
    if workers > 1 or address:
        return run_tasks(task, drives, workers, address, log)
    outcomes = {}
    for name, job in drives.items():
        log(f'drive {name}')
        outcomes[name] = DriveOutcome(name, here(job), '', 1)
    return outcomes


def run_tasks(task: Callable[[Job], Result], drives: dict[str, Job], workers: int,
              address: str, log: Callable[[str], None]) -> dict[str, DriveOutcome[Result]]:
    """
    Run `task(job)` for each drive's job as a Ray task; return every outcome.

    `task` is a module-level function (Ray and the spawned driver pickle it by name).

    The Ray driver runs in a child process of its own (spawned, not forked): Ray leaves gRPC
    threads and fork handlers in the process that drives it, after which a later fork of that
    process (a pipeline's next node, in a test session or a user's replay_test) can hang. The
    child's progress lines come back through a queue. Raises BagError when Ray is not installed
    or cannot be reached.
    """
    context = multiprocessing.get_context('spawn')
    lines: multiprocessing.queues.Queue[str] = context.Queue()
    results: multiprocessing.queues.Queue[dict[str, DriveOutcome[Result]] | BagError] = \
        context.Queue()
    driver = context.Process(target=_drive, args=(task, drives, workers, address, lines,
                                                  results), name='ray-driver')
    driver.start()
    outcome: dict[str, DriveOutcome[Result]] | BagError | None = None
    while outcome is None:
        try:
            log(lines.get(timeout=0.5))
            continue
        except queue.Empty:
            pass
        if not driver.is_alive():
            try:  # what it put before it ended arrives through the pipe
                outcome = results.get(timeout=5.0)
            except queue.Empty:
                raise BagError(f'the Ray driver process ended with code {driver.exitcode} '
                               'before it reported') from None
        else:
            try:
                outcome = results.get_nowait()
            except queue.Empty:
                pass
    driver.join()
    while not lines.empty():
        log(lines.get())
    if isinstance(outcome, BagError):
        raise outcome
    return outcome


def _drive(task: Callable[[Job], Result], drives: dict[str, Job], workers: int,
           address: str, lines: multiprocessing.queues.Queue[str],
           results: multiprocessing.queues.Queue[dict[str, DriveOutcome[Result]] | BagError]
           ) -> None:
    """Run the drives as the Ray driver process; put their outcomes (or the BagError)."""
    try:
        results.put(_run_drives(task, drives, workers, address, lines.put))
    except BagError as error:
        results.put(error)


def _run_drives(task: Callable[[Job], Result], drives: dict[str, Job], workers: int,
                address: str, log: Callable[[str], None]) -> dict[str, DriveOutcome[Result]]:
    """Submit one Ray task per drive and wait for them all; return each drive's outcome."""
    address = address or os.environ.get('RAY_ADDRESS', '')
    if not address:
        # A local instance serves this machine only: Ray then binds its services and workers
        # to loopback, as it does on macOS and Windows (ray_constants.ENABLE_RAY_CLUSTER),
        # instead of the machine's network address. Read when Ray is imported.
        os.environ.setdefault('RAY_ENABLE_WINDOWS_OR_OSX_CLUSTER', '0')
    try:
        import ray  # noqa: PLC0415 (an optional dependency: the evaluation extra)
    except ImportError:
        raise BagError('--workers needs Ray: pip install "ray>=2.10" (the evaluation extra of '
                       'the package; the development venv has it)') from None
    try:
        if address:
            ray.init(address=address, ignore_reinit_error=True, log_to_driver=False)
        else:
            ray.init(num_cpus=workers, include_dashboard=False, ignore_reinit_error=True,
                     log_to_driver=False)
    except (ConnectionError, RuntimeError, ValueError) as error:
        raise BagError(f'cannot start or reach Ray ({address or "local"}): {error}') from error
    log(f'{len(drives)} drives on Ray ({address or f"local, {workers} workers"})')
    remote = ray.remote(num_cpus=1, max_retries=MAX_RETRIES, retry_exceptions=False)(task)
    pending = {remote.remote(settings): name for name, settings in drives.items()}
    outcomes: dict[str, DriveOutcome[Result]] = {}
    started, frames = time.monotonic(), 0
    try:
        while pending:
            done, _rest = ray.wait(list(pending), num_returns=1, timeout=QUIET_LIMIT_S)
            if not done:
                log(f'drives still replaying after {time.monotonic() - started:.0f} s: '
                    f'{", ".join(sorted(pending.values()))}')
                continue
            name = pending.pop(done[0])
            attempts = attempts_of(drives[name].output)
            try:
                report = ray.get(done[0])
                outcomes[name] = DriveOutcome(name, report, '', attempts)
                frames += frames_of(report)
            except (ray.exceptions.RayTaskError, ray.exceptions.WorkerCrashedError,
                    ray.exceptions.RayError) as error:
                cause = getattr(error, 'cause', None) or error
                outcomes[name] = DriveOutcome(name, None, f'{type(cause).__name__}: {cause}'
                                              .splitlines()[0], attempts)
            elapsed = time.monotonic() - started
            left = elapsed / len(outcomes) * len(pending)
            log(f'drives done {len(outcomes)}/{len(drives)} ({name}: '
                f'{"failed" if outcomes[name].report is None else "ok"}'
                f'{f", {attempts} attempts" if attempts > 1 else ""}), {frames} frames replayed, '
                f'about {left:.0f} s left')
    finally:
        if not address:
            ray.shutdown()
    return outcomes


def frames_of(result: object) -> int:
    """Return the frames a task's result covers: a replay's input frames, a comparison's."""
    frames = result.get('input', result).get('frames', 0) if isinstance(result, dict) else 0
    return frames if isinstance(frames, int) else 0
