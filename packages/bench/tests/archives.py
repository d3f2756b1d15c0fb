"""Small archives in the real datasets' formats, and a real HTTP server on 127.0.0.1 that
serves them, honours (or ignores) Range requests and can drop a connection mid-transfer."""

import hashlib
import io
import pickle
import struct
import tarfile
import threading
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

import numpy as np


class _Py2Pickler(pickle._Pickler):
    """Writes bytes as Python 2 str (BINSTRING), as the real CIFAR-10 batches hold them."""

    def save_bytes(self, obj):
        if len(obj) < 256:
            self.write(pickle.SHORT_BINSTRING + bytes([len(obj)]) + obj)
        else:
            self.write(pickle.BINSTRING + struct.pack("<i", len(obj)) + obj)
        self.memoize(obj)

    dispatch = dict(pickle._Pickler.dispatch)
    dispatch[bytes] = save_bytes


def py2_pickle(obj):
    """A protocol-2 pickle like the CIFAR-10 release's: str data, numpy.core module names."""
    out = io.BytesIO()
    _Py2Pickler(out, protocol=2).dump(obj)
    return out.getvalue().replace(b"cnumpy._core.multiarray\n", b"cnumpy.core.multiarray\n")


def cifar_archive(path, per_batch=16, num_test=20, seed=0):
    """A cifar-10-python.tar.gz: {"train": [(data, labels)] * 5, "test": [(data, labels)]}."""
    rng = np.random.default_rng(seed)
    raw = {"train": [], "test": []}
    with tarfile.open(path, "w:gz") as tar:

        def add(name, payload):
            info = tarfile.TarInfo("cifar-10-batches-py/" + name)
            info.size = len(payload)
            tar.addfile(info, io.BytesIO(payload))

        add("readme.html", b"<html>CIFAR-10</html>")
        for split, name, n in [("train", f"data_batch_{i}", per_batch) for i in range(1, 6)] + [
            ("test", "test_batch", num_test)
        ]:
            data = rng.integers(0, 256, (n, 3072), dtype=np.uint8)
            labels = [int(v) for v in rng.integers(0, 10, n)]
            raw[split].append((data, labels))
            add(
                name,
                py2_pickle(
                    {
                        b"batch_label": name.encode(),
                        b"labels": labels,
                        b"data": data,
                        b"filenames": [b"img%d.png" % i for i in range(n)],
                    }
                ),
            )
        add("batches.meta", py2_pickle({b"label_names": [b"airplane"]}))
    return raw


def imdb_archive(path, num_train=80, num_test=20, seed=0):
    """An imdb.npz in the Keras layout, sorted by label: {"x_train": [...], "y_train": ...}."""
    rng = np.random.default_rng(seed)
    raw = {}
    for split, n in (("train", num_train), ("test", num_test)):
        x = np.empty(n, dtype=object)  # lists of different lengths, as Keras stores them
        for i in range(n):
            x[i] = [int(v) for v in rng.integers(1, 40000, rng.integers(1, 300))]
        raw["x_" + split] = x
        raw["y_" + split] = np.repeat([0, 1], [n // 2, n - n // 2]).astype(np.int64)
    np.savez(path, **raw)
    return raw


def checksums(path):
    data = path.read_bytes()
    return {
        "size": len(data),
        "md5": hashlib.md5(data).hexdigest(),
        "sha256": hashlib.sha256(data).hexdigest(),
    }


class ArchiveServer:
    """serve(name, content, drops=..., drop_after=..., ranges=..., seconds=...); url(name);
    requests: one (path, Range header) per request."""

    def __init__(self):
        self.files, self.requests, self.lock = {}, [], threading.Lock()
        server = self

        class Handler(BaseHTTPRequestHandler):
            def log_message(self, *args):
                pass

            def do_GET(self):
                server.handle(self)

        self.httpd = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.httpd.daemon_threads = True
        self.thread = threading.Thread(
            target=self.httpd.serve_forever, kwargs={"poll_interval": 0.05}, daemon=True
        )
        self.thread.start()

    def serve(self, name, content, drops=0, drop_after=0, ranges=True, seconds=0.0):
        """drops: how many responses stop after drop_after bytes of their body; ranges: honour
        Range; seconds: how long a full transfer takes."""
        self.files[name] = dict(
            content=content, drops=drops, drop_after=drop_after, ranges=ranges, seconds=seconds
        )

    def url(self, name):
        return f"http://127.0.0.1:{self.httpd.server_address[1]}/{name}"

    def gets(self, name):
        return [r for r in self.requests if r[0] == "/" + name]

    def handle(self, request):
        with self.lock:
            self.requests.append((request.path, request.headers.get("Range")))
            spec = self.files.get(request.path.lstrip("/"))
            drop = spec is not None and spec["drops"] > 0
            if drop:
                spec["drops"] -= 1
        if spec is None:
            request.send_error(404)
            return
        content, start = spec["content"], 0
        wanted = request.headers.get("Range")
        if wanted and spec["ranges"]:
            start = int(wanted.split("=")[1].split("-")[0])
            if start >= len(content):
                request.send_error(416)
                return
            request.send_response(206)
            request.send_header("Content-Range", f"bytes {start}-{len(content) - 1}/{len(content)}")
        else:
            request.send_response(200)
        body = content[start:]
        request.send_header("Content-Length", str(len(body)))
        request.end_headers()
        if drop:
            body = body[: spec["drop_after"]]  # then the connection closes: a short body
        pieces = 10 if spec["seconds"] else 1
        step = -(-len(body) // pieces) or 1
        for i in range(0, len(body), step):
            request.wfile.write(body[i : i + step])
            request.wfile.flush()
            time.sleep(spec["seconds"] / pieces)

    def close(self):
        self.httpd.shutdown()
        self.httpd.server_close()
