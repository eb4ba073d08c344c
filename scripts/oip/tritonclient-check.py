"""Runs Triton's official Python client (tritonclient.http) against a running edge or
origin and checks what it gets back: every call the client offers that this server
implements, inference in binary and JSON, gzip and deflate, and error decoding. The client
is not part of this repository: point PYTHONPATH at a checkout of
triton-inference-server/client (src/python/library), with Debian's python3-numpy,
python3-rapidjson and python3-geventhttpclient installed:

    PYTHONPATH=/path/to/client/src/python/library /usr/bin/python3 scripts/oip/tritonclient-check.py localhost:8787 [API_KEY]
"""
import sys

import numpy as np
import tritonclient.http as httpclient
from tritonclient.utils import InferenceServerException

url = sys.argv[1] if len(sys.argv) > 1 else "localhost:8787"
headers = {"Authorization": f"Bearer {sys.argv[2]}"} if len(sys.argv) > 2 else None
client = httpclient.InferenceServerClient(url)
failures = 0


def check(label, ok, detail=""):
    global failures
    failures += 0 if ok else 1
    print(f"{'ok  ' if ok else 'FAIL'} {label}{': ' + str(detail) if detail else ''}")


check("is_server_live", client.is_server_live())
check("is_server_ready", client.is_server_ready())
metadata = client.get_server_metadata()
check("get_server_metadata", "binary_tensor_data" in metadata["extensions"], metadata)
model = client.get_model_metadata("spam-classifier", headers=headers)
check("get_model_metadata", model["name"] == "spam-classifier", model["inputs"])
check("is_model_ready", client.is_model_ready("spam-classifier", headers=headers))
config = client.get_model_config("spam-classifier", headers=headers)
check("get_model_config", config["input"][0]["data_type"] == "TYPE_INT64", config["input"])
index = client.get_model_repository_index(headers=headers)
check("get_model_repository_index", any(entry["name"] == "spam-classifier" for entry in index), index)

ids = np.array([[5, 6, 7, 8], [9, 10, 11, 12]], dtype=np.int64)


def spam(binary, **kwargs):
    inputs = [httpclient.InferInput("input_ids", [2, 4], "INT64"), httpclient.InferInput("attention_mask", [2, 4], "INT64")]
    inputs[0].set_data_from_numpy(ids, binary_data=binary)
    inputs[1].set_data_from_numpy(np.ones_like(ids), binary_data=binary)
    return client.infer("spam-classifier", inputs, headers=headers, **kwargs).as_numpy("logits")


reference = spam(False, outputs=[httpclient.InferRequestedOutput("logits", binary_data=False)])
check("infer JSON in, JSON out", reference.shape == (2, 2), reference.tolist())
for label, kwargs in [
    ("infer binary in, binary out (the client's default)", {}),
    ("infer gzip request body", {"request_compression_algorithm": "gzip"}),
    ("infer deflate request body", {"request_compression_algorithm": "deflate"}),
    ("infer gzip response asked for", {"response_compression_algorithm": "gzip"}),
]:
    logits = spam(True, **kwargs)
    check(label, np.array_equal(logits, reference), logits.tolist())

fraud = httpclient.InferInput("transactions", [7, 3, 180], "FP32")
fraud.set_data_from_numpy(np.random.default_rng(1).random((7, 3, 180), dtype=np.float32))
scores = client.infer("fraud-gru", [fraud], model_version="1.1.0", headers=headers).as_numpy("scores")
check("infer FP32 binary at a version", scores.shape == (3,), scores.tolist())

for label, call in [
    ("unknown model", lambda: client.infer("nope", [fraud], headers=headers)),
    ("BYTES input the model does not take", lambda: client.infer("spam-classifier", [
        httpclient.InferInput("input_ids", [1], "BYTES").set_data_from_numpy(np.array([b"hi"], dtype=np.object_))], headers=headers)),
    ("an extension this server lacks (statistics)", lambda: client.get_inference_statistics("spam-classifier", headers=headers)),
]:
    try:
        call()
        check(label, False, "no error")
    except InferenceServerException as error:
        decoded = "exception occurred in the client while decoding" not in error.message()
        check(f"{label} → error decoded", decoded, f"[{error.status()}] {error.message()}")

client.close()
print(f"{failures} failed")
sys.exit(1 if failures else 0)
