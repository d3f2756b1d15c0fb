"""The set-up behind a proxy that intercepts TLS: a package index on 127.0.0.1 over HTTPS with a
certificate from a CA of the test's own (as a corporate proxy's), which pip is configured to
trust and uv, with its bundled roots, does not. noxfile.py gives uv the certificates and the
index pip would use (uv_settings), asks uv whether it reaches the index (uv_reaches, which a
session's install asks before falling back to pip), and pip, configured as the user has it,
installs what uv could not reach. Real uv, real pip, a real TLS server."""

import base64
import hashlib
import http.server
import importlib.util
import io
import os
import shutil
import ssl
import subprocess
import sys
import threading
import zipfile
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[3]
PACKAGE, VERSION = "rosetta-probe", "1.0"


def load_noxfile():
    spec = importlib.util.spec_from_file_location("noxfile_proxy", ROOT / "noxfile.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def openssl(*args, cwd):
    subprocess.run(["openssl", *args], cwd=cwd, check=True, capture_output=True)


def certificates(directory: Path):
    """(the CA's certificate, the server's certificate and key) for 127.0.0.1."""
    openssl(
        "req", "-x509", "-newkey", "rsa:2048", "-nodes", "-keyout", "ca.key", "-out", "ca.pem",
        "-days", "2", "-subj", "/CN=Rosetta test proxy CA",
        "-addext", "basicConstraints=critical,CA:TRUE", "-addext", "keyUsage=critical,keyCertSign",
        cwd=directory,
    )  # fmt: skip
    openssl(
        "req", "-newkey", "rsa:2048", "-nodes", "-keyout", "server.key", "-out", "server.csr",
        "-subj", "/CN=127.0.0.1", cwd=directory,
    )  # fmt: skip
    (directory / "san.cnf").write_text(
        "subjectAltName=IP:127.0.0.1\nbasicConstraints=CA:FALSE\n"
        "extendedKeyUsage=serverAuth\nkeyUsage=digitalSignature,keyEncipherment\n"
    )
    openssl(
        "x509", "-req", "-in", "server.csr", "-CA", "ca.pem", "-CAkey", "ca.key",
        "-CAcreateserial", "-out", "server.pem", "-days", "2", "-extfile", "san.cnf",
        cwd=directory,
    )  # fmt: skip
    return directory / "ca.pem", directory / "server.pem", directory / "server.key"


def wheel(directory: Path):
    """A pure-Python wheel of PACKAGE, VERSION: (its file name, its bytes)."""
    name = PACKAGE.replace("-", "_")
    files = {
        f"{name}/__init__.py": b"PROBE = 1\n",
        f"{name}-{VERSION}.dist-info/METADATA": (
            f"Metadata-Version: 2.1\nName: {PACKAGE}\nVersion: {VERSION}\n".encode()
        ),
        f"{name}-{VERSION}.dist-info/WHEEL": (
            b"Wheel-Version: 1.0\nGenerator: test\nRoot-Is-Purelib: true\nTag: py3-none-any\n"
        ),
    }
    record = (
        "".join(
            f"{path},sha256={base64.urlsafe_b64encode(hashlib.sha256(data).digest()).rstrip(b'=').decode()},{len(data)}\n"
            for path, data in files.items()
        )
        + f"{name}-{VERSION}.dist-info/RECORD,,\n"
    )
    files[f"{name}-{VERSION}.dist-info/RECORD"] = record.encode()
    out = io.BytesIO()
    with zipfile.ZipFile(out, "w") as archive:
        for path, data in files.items():
            archive.writestr(path, data)
    return f"{name}-{VERSION}-py3-none-any.whl", out.getvalue()


class Index:
    """A PEP 503 simple index of one wheel, over HTTPS on 127.0.0.1."""

    def __init__(self, directory: Path):
        self.ca, cert, key = certificates(directory)
        filename, data = wheel(directory)
        digest = hashlib.sha256(data).hexdigest()
        pages = {
            "/simple/": f'<a href="/simple/{PACKAGE}/">{PACKAGE}</a>'.encode(),
            f"/simple/{PACKAGE}/": (
                f'<a href="/files/{filename}#sha256={digest}">{filename}</a>'.encode()
            ),
            f"/files/{filename}": data,
        }

        class Handler(http.server.BaseHTTPRequestHandler):
            def do_GET(self):
                body = pages.get(self.path)
                self.send_response(200 if body is not None else 404)
                html = not self.path.startswith("/files/")
                self.send_header("Content-Type", "text/html" if html else "application/zip")
                self.send_header("Content-Length", str(len(body or b"")))
                self.end_headers()
                self.wfile.write(body or b"")

            def log_message(self, *args):
                pass

        self.server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        context = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
        context.load_cert_chain(cert, key)
        self.server.socket = context.wrap_socket(self.server.socket, server_side=True)
        self.url = f"https://127.0.0.1:{self.server.server_address[1]}/simple"
        threading.Thread(target=self.server.serve_forever, daemon=True).start()

    def close(self):
        self.server.shutdown()
        self.server.server_close()


@pytest.fixture
def index(tmp_path):
    if shutil.which("openssl") is None:
        pytest.skip("no openssl command to make the test CA (Debian: apt-get install openssl)")
    served = Index(tmp_path)
    yield served
    served.close()


def uv_binary():
    found = shutil.which("uv") or shutil.which("uv", path=str(Path(sys.executable).parent))
    assert found, "uv is in the core session's lock (noxfile.TOOLS): it must be installed"
    return found


def without_tls_settings():
    """This environment less every variable that would give uv certificates or an index."""
    drop = ("SSL_CERT_FILE", "SSL_CERT_DIR", "UV_NATIVE_TLS", "UV_SYSTEM_CERTS", "UV_DEFAULT_INDEX",
            "UV_INDEX_URL", "UV_INDEX", "PIP_CERT", "PIP_INDEX_URL", "REQUESTS_CA_BUNDLE",
            "CURL_CA_BUNDLE")  # fmt: skip
    return {k: v for k, v in os.environ.items() if k not in drop}


def test_uv_is_given_what_pip_trusts_and_reaches_the_index(index, tmp_path):
    noxfile = load_noxfile()
    uv, env = uv_binary(), without_tls_settings()
    venv = tmp_path / "venv"
    subprocess.run([uv, "venv", "-q", str(venv)], check=True, env=env)
    requirement = f"{PACKAGE}=={VERSION}"
    # as uv starts on a proxied network: its own roots, no pip configuration
    reached, why = noxfile.uv_reaches(
        uv, str(venv), requirement, dict(env, UV_DEFAULT_INDEX=index.url)
    )
    assert not reached and "certificate" in why.lower(), why
    # pip's configuration, as the user has it, handed to uv
    settings, notes = noxfile.uv_settings(env, {"cert": str(index.ca), "index-url": index.url})
    assert settings == {"SSL_CERT_FILE": str(index.ca), "UV_DEFAULT_INDEX": index.url}
    assert notes == []
    assert noxfile.uv_reaches(uv, str(venv), requirement, dict(env, **settings)) == (True, None)
    done = subprocess.run(
        [uv, "pip", "install", "-q", "--no-deps", "--python", str(venv), requirement],
        env=dict(env, **settings),
        capture_output=True,
        text=True,
    )
    assert done.returncode == 0, done.stderr
    # a user's own uv settings win; what uv is not given is said
    mine = dict(env, SSL_CERT_FILE="/mine.pem", UV_DEFAULT_INDEX="https://mine/simple")
    settings, notes = noxfile.uv_settings(
        mine, {"cert": str(index.ca), "index-url": index.url, "find-links": "/opt/wheels"}
    )
    assert settings == {}
    assert notes == [
        "pip's find-links (/opt/wheels) is not passed to uv, which reads no pip "
        "configuration: UV_FIND_LINKS=... passes it"
    ]


def test_pip_reads_its_configuration_where_uv_cannot_reach(index, tmp_path):
    """The fallback's half: pip, as the user configured it (cert and index in PIP_*
    variables, read by noxfile.pip_settings too), installs from the index uv did not reach."""
    noxfile = load_noxfile()
    env = dict(without_tls_settings(), PIP_CERT=str(index.ca), PIP_INDEX_URL=index.url)
    env.pop("PIP_FIND_LINKS", None)
    env["PIP_CONFIG_FILE"] = os.devnull  # no machine-wide configuration beyond the variables
    assert noxfile.pip_settings(env, listing="") == {"cert": str(index.ca), "index-url": index.url}
    venv = tmp_path / "pipvenv"
    subprocess.run([sys.executable, "-m", "venv", str(venv)], check=True)
    done = subprocess.run(
        [
            str(venv / "bin" / "python"),
            "-m",
            "pip",
            "install",
            "-q",
            "--no-deps",
            f"{PACKAGE}=={VERSION}",
        ],
        env=env,
        capture_output=True,
        text=True,
    )
    assert done.returncode == 0, done.stdout + done.stderr
    listed = noxfile.pip_settings(
        {},
        listing="global.cert='/etc/ca.pem'\n:env:.cert='/x'\nglobal.index-url='https://mirror/simple'\n",
    )
    assert listed == {"cert": "/etc/ca.pem", "index-url": "https://mirror/simple"}
