"""
A stand-in tritonserver that parses its command line as a given Triton release does.

Triton's parser (src/command_line_parser.cc) hands its option table to getopt_long: an option
it does not know, or --help, makes main() print `Usage: tritonserver [options]` and one
`  --option <value>` line per option to stderr and exit 1, before anything starts. The stand-in
does the same with the option set of the release it stands for, and otherwise runs the real
server given to it with the same arguments (or exits 0 where there is none), so that what it
tests is whether that release would accept the package's command line.
"""
from __future__ import annotations

from pathlib import Path
import stat
import sys

from triton_perception.serving.server.server_installation import TritonInstallation

# The long options of r24.03 (Triton 2.44.0, the igpu release for JetPack 6.0), in the order of
# the option table of src/command_line_parser.cc on the r24.03 branch of
# triton-inference-server/server. --model-config-name arrived in r24.05 (PR #7185).
R24_03_OPTIONS = (
    'help id exit-timeout-secs model-store model-repository exit-on-error '
    'disable-auto-complete-config strict-readiness model-control-mode repository-poll-secs '
    'load-model model-load-thread-count model-load-retry-count model-namespacing allow-http '
    'http-address http-port reuse-http-port http-header-forward-pattern http-thread-count '
    'http-restricted-api allow-grpc grpc-address grpc-port reuse-grpc-port '
    'grpc-header-forward-pattern grpc-use-ssl grpc-use-ssl-mutual grpc-server-cert '
    'grpc-server-key grpc-root-cert grpc-keepalive-time grpc-keepalive-timeout '
    'grpc-max-connection-age grpc-restricted-protocol log-verbose log-info log-warning '
    'log-error log-format log-file allow-sagemaker sagemaker-port sagemaker-safe-port-range '
    'sagemaker-thread-count allow-vertex-ai vertex-ai-port vertex-ai-thread-count '
    'vertex-ai-default-model allow-metrics allow-gpu-metrics allow-cpu-metrics '
    'metrics-address metrics-port metrics-interval-ms metrics-config trace-config '
    'cache-config cache-directory rate-limit rate-limit-resource pinned-memory-pool-byte-size '
    'cuda-memory-pool-byte-size cuda-virtual-address-size buffer-manager-thread-count '
    'host-policy model-load-gpu-limit backend-directory backend-config repoagent-directory '
    'strict-model-config response-cache-byte-size trace-file trace-level trace-rate '
    'trace-count trace-log-frequency').split()
NO_ARGUMENT = ('help', 'disable-auto-complete-config')

SCRIPT = """#!{python}
import os, sys
options = {options!r}
no_argument = {no_argument!r}
real = {real!r}
calls = {calls!r}
with open(calls, 'a') as log:
    log.write(' '.join(sys.argv[1:]) + '\\n')
for argument in sys.argv[1:]:
    name = argument[2:].split('=', 1)[0] if argument.startswith('--') else None
    if name is None or name not in options or name == 'help':
        if name not in options:
            print(f"{{sys.argv[0]}}: unrecognized option '{{argument}}'", file=sys.stderr)
        print('Usage: tritonserver [options]', file=sys.stderr)
        for option in options:
            value = '' if option in no_argument else ' <string>'
            print(f'  --{{option}}{{value}}\\n\\tdescription', file=sys.stderr)
        sys.exit(1)
if real:
    os.execv(real, [real, *sys.argv[1:]])
"""


def stand_in_release(directory: Path, options: tuple[str, ...] | list[str] = tuple(R24_03_OPTIONS),
                     real: TritonInstallation | None = None, then: Path | None = None) -> Path:
    """
    Return a stand-in tritonserver in a release layout under `directory` (bin/, backends/, lib/).

    With `real`, an accepted command line runs that server; its backends and libraries are the
    release's. With `then`, it runs that program instead. Every command line the stand-in is
    given is appended to `directory`/calls.log.
    """
    root = directory / 'tritonserver'
    binary = root / 'bin' / 'tritonserver'
    binary.parent.mkdir(parents=True)
    if real is None:
        (root / 'backends').mkdir()
    else:
        (root / 'backends').symlink_to(real.backend_directory)
        if real.library_path:
            (root / 'lib').symlink_to(real.library_path[0])
    binary.write_text(SCRIPT.format(
        python=sys.executable, options=list(options), no_argument=list(NO_ARGUMENT),
        real=str(real.binary) if real else str(then or ''), calls=str(directory / 'calls.log')))
    binary.chmod(binary.stat().st_mode | stat.S_IXUSR)
    return binary


# A server that listens on its ports and, like Triton (src/triton_signal.cc), acts on its first
# SIGINT or SIGTERM only; it then drains for `drain_s` seconds whatever its --exit-timeout-secs
# says (a server whose unloading hangs), keeping its ports, and writes what it saw as it goes.
DRAINING = """
import os, signal, socket, sys, time
values = dict(argument[2:].split('=', 1) for argument in sys.argv[1:] if '=' in argument)
record = {record!r}
listening = []
for name in ('http', 'grpc', 'metrics'):
    server = socket.socket()
    server.bind((values[name + '-address'], int(values[name + '-port'])))
    server.listen()
    listening.append(server)
stopped = []
def stop(signum, _frame):
    stopped.append((signal.Signals(signum).name, time.time()))
    with open(record, 'a') as out:
        out.write(repr(stopped[-1]) + '\\n')
signal.signal(signal.SIGINT, stop)
signal.signal(signal.SIGTERM, stop)
with open(record, 'a') as out:
    out.write(repr(('listening', os.getpid())) + '\\n')
while not stopped:
    time.sleep(0.05)
time.sleep({drain_s!r})
"""


def draining_release(directory: Path, drain_s: float) -> Path:
    """
    Return a stand-in r24.03 tritonserver that serves nothing but holds its three ports.

    After its first stop signal it drains `drain_s` seconds, deaf to further signals and to its
    exit timeout; `directory`/server.log records its pid and each stop signal with its time.
    """
    program = directory / 'draining_server.py'
    directory.mkdir(parents=True, exist_ok=True)
    program.write_text(f'#!{sys.executable}\n' + DRAINING.format(
        record=str(directory / 'server.log'), drain_s=drain_s))
    program.chmod(program.stat().st_mode | stat.S_IXUSR)
    return stand_in_release(directory, then=program)
