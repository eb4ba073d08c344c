"""Captures the exact HTTP requests Triton's official Python client (tritonclient.http)
sends, as test fixtures (test/fixtures/tritonclient/*.json), so the Worker's tests replay
real client bytes. The client itself is not part of this repository: point PYTHONPATH at
a checkout of triton-inference-server/client (src/python/library) and install its
dependencies from Debian (python3-numpy, python3-rapidjson, python3-geventhttpclient):

    PYTHONPATH=/path/to/client/src/python/library /usr/bin/python3 scripts/oip/capture-tritonclient.py

A capture server on loopback records each request and answers a minimal valid response.
"""
import base64
import json
import os
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

import numpy as np
import tritonclient.http as httpclient

OUT = os.path.join(os.path.dirname(__file__), "..", "..", "test", "fixtures", "tritonclient")
captured = []


class Capture(BaseHTTPRequestHandler):
    def _record(self):
        length = int(self.headers.get("Content-Length", "0"))
        body = self.rfile.read(length) if length else b""
        captured.append({
            "method": self.command,
            "path": self.path,
            "headers": [[name.lower(), value] for name, value in self.headers.items()],
            "body_base64": base64.b64encode(body).decode(),
        })
        answer = b"[]" if self.path.endswith("/repository/index") else b'{"model_name":"captured","outputs":[]}'
        self.send_response(200)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(answer)))
        self.end_headers()
        self.wfile.write(answer)

    do_GET = _record
    do_POST = _record

    def log_message(self, *args):
        pass


def main():
    server = ThreadingHTTPServer(("127.0.0.1", 0), Capture)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    client = httpclient.InferenceServerClient(f"127.0.0.1:{server.server_port}")
    ids = np.array([[5, 6, 7, 8], [9, 10, 11, 12]], dtype=np.int64)
    mask = np.ones_like(ids)
    rng = np.random.default_rng(20261123)
    transactions = rng.random((7, 2, 180), dtype=np.float32)

    def spam_inputs(binary):
        inputs = [httpclient.InferInput("input_ids", [2, 4], "INT64"), httpclient.InferInput("attention_mask", [2, 4], "INT64")]
        inputs[0].set_data_from_numpy(ids, binary_data=binary)
        inputs[1].set_data_from_numpy(mask, binary_data=binary)
        return inputs

    fixtures = {}

    def take(name, call):
        before = len(captured)
        call()
        fixtures[name] = captured[before]

    take("spam-binary", lambda: client.infer("spam-classifier", spam_inputs(True)))
    take("spam-binary-gzip", lambda: client.infer("spam-classifier", spam_inputs(True), request_compression_algorithm="gzip"))
    take("spam-binary-deflate", lambda: client.infer("spam-classifier", spam_inputs(True), request_compression_algorithm="deflate"))
    take("spam-json", lambda: client.infer(
        "spam-classifier", spam_inputs(False), request_id="r1",
        outputs=[httpclient.InferRequestedOutput("logits", binary_data=False)]))

    def fraud():
        tensor = httpclient.InferInput("transactions", [7, 2, 180], "FP32")
        tensor.set_data_from_numpy(transactions)
        client.infer("fraud-gru", [tensor], model_version="1.1.0", outputs=[httpclient.InferRequestedOutput("scores")])
    take("fraud-binary", fraud)

    def bytes_and_fp16():
        text = httpclient.InferInput("input_ids", [2], "BYTES")
        text.set_data_from_numpy(np.array([b"hello", "w\u00f6rld".encode()], dtype=np.object_))
        half = httpclient.InferInput("attention_mask", [2, 2], "FP16")
        half.set_data_from_numpy(np.array([[1.0, 0.5], [-2.0, 65504.0]], dtype=np.float16))
        client.infer("spam-classifier", [text, half])
    take("bytes-fp16", bytes_and_fp16)

    take("repository-index", lambda: client.get_model_repository_index())
    take("model-config", lambda: client.get_model_config("spam-classifier"))
    take("server-metadata", lambda: client.get_server_metadata())

    client.close()
    server.shutdown()
    os.makedirs(OUT, exist_ok=True)
    for name, request in fixtures.items():
        request = {
            "source": "captured from tritonclient.http (triton-inference-server/client src/python/library/tritonclient/http/_client.py) by scripts/oip/capture-tritonclient.py",
            **request,
        }
        with open(os.path.join(OUT, f"{name}.request.json"), "w") as file:
            json.dump(request, file, indent=1)
            file.write("\n")
    print(f"{len(fixtures)} requests captured into {os.path.normpath(OUT)}")


if __name__ == "__main__":
    main()
