"""What the network may do to the server: no model (un)loading; TLS to the server."""
from __future__ import annotations

import json
from pathlib import Path
import subprocess
import urllib.error
import urllib.request

import pytest
from sensor_msgs.msg import Image
import tritonclient.grpc as grpcclient
from tritonclient.utils import InferenceServerException
from vision_msgs.msg import Detection2DArray

from support.fault_plumbing import (noise_frame, quiet_server, record_arrivals, Replay,
                                    StartNode, stop_cleanly)
from support.fault_repository import write_repository
from support.ros_helpers import Probe, wait_until
import triton_perception.serving.server.triton_server as server_module
from triton_perception.serving.server.triton_server import TritonServer
from triton_perception.system.processes import free_ports

# --- security --------------------------------------------------------------------------------


@pytest.mark.server
def test_models_cannot_be_unloaded_or_loaded_over_the_network(triton_server: TritonServer) -> None:
    """Requests to unload or load a model, over HTTP or gRPC, are refused; the model stays ready."""
    for action in ('unload', 'load'):
        request = urllib.request.Request(
            f'{triton_server.http_url}/v2/repository/models/yolov5/{action}', data=b'{}',
            method='POST')
        with pytest.raises(urllib.error.HTTPError) as refused:
            urllib.request.urlopen(request, timeout=10.0)
        assert refused.value.code >= 400
        assert 'not allowed' in json.loads(refused.value.read())['error']
    with grpcclient.InferenceServerClient(triton_server.grpc_url) as client:
        with pytest.raises(InferenceServerException, match='not allowed'):
            client.unload_model('yolov5')
        assert client.is_model_ready('yolov5')


def self_signed_certificate(directory: Path) -> tuple[Path, Path]:
    """Return a certificate for 127.0.0.1 (and localhost), made by the openssl command line."""
    key, certificate = directory / 'server.key', directory / 'server.pem'
    subprocess.run(['openssl', 'req', '-x509', '-newkey', 'rsa:2048', '-nodes', '-days', '1',
                    '-subj', '/CN=localhost', '-addext',
                    'subjectAltName=IP:127.0.0.1,DNS:localhost', '-keyout', str(key),
                    '-out', str(certificate)], check=True, capture_output=True, timeout=60)
    return key, certificate


@pytest.mark.ros
@pytest.mark.server
def test_node_connects_to_a_tls_server(probe: Probe, start_node: StartNode, tmp_path: Path,
                                       monkeypatch: pytest.MonkeyPatch) -> None:
    """
    A node given the server's root certificate gets detections over TLS.

    A client without TLS cannot talk to that server.
    """
    key, certificate = self_signed_certificate(tmp_path)
    command = server_module.server_command
    # TritonServer has no TLS option (a local server needs none): add Triton's own flags.
    monkeypatch.setattr(server_module, 'server_command', lambda config, installation: [
        *command(config, installation), '--grpc-use-ssl=true',
        f'--grpc-server-cert={certificate}', f'--grpc-server-key={key}'])
    repository = write_repository(tmp_path / 'repository', {'yolov5': 'ok'})
    namespace = '/faults_tls'
    with quiet_server(repository, tuple(free_ports(3)), ('yolov5',)) as server:
        with grpcclient.InferenceServerClient(server.grpc_url) as plain:
            with pytest.raises(InferenceServerException):
                plain.is_server_live(client_timeout=5.0)
        node = start_node('detection_node', namespace, server.grpc_url,
                          tls_root_certificates=str(certificate))
        detections = record_arrivals(probe, Detection2DArray, f'{namespace}/detections')
        replay = Replay(probe.publisher(Image, f'{namespace}/image'), [noise_frame()], 10.0)
        try:
            probe.wait_for_subscribers(replay.publisher)
            replay.start()
            wait_until(lambda: detections or 'Traceback' in node.output(), 30.0,
                       'detections over TLS')
            assert detections, node.output()
        finally:
            replay.stop()
        stop_cleanly(node)
