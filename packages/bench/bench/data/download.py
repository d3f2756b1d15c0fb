"""Downloading a dataset archive: mirrors in order, resume, checksums, atomic publication.

fetch() returns a verified archive in the cache and downloads it at most once, however many
processes ask at the same time: the download runs under a lock into <file>.part, which becomes
<file> (an atomic rename) only after its size and checksums match, so no reader ever sees a
half-written or wrong archive. A dropped connection is resumed with an HTTP Range request
(or restarted, if the server ignores Range); a checksum mismatch deletes the download and
tries the next mirror. A good archive already in the cache is never touched by a failed one.
"""

import http.client
import os
import sys
import time
import urllib.error
import urllib.request

from .. import __version__
from ..console import ProgressView
from ..errors import DataError
from . import cache

RETRY_WAIT_S = 1.0  # times the attempt number: a short back-off before resuming
BLOCK = 1 << 16
CHECKSUMS = ("md5", "sha256")


class Mismatch(DataError):
    """A file that is not the configured archive (wrong size or checksum)."""


class MirrorFailed(Exception):
    """One URL did not deliver; its reason goes into the DataError that lists every URL."""


class Truncated(Exception):
    """The connection closed before the announced length arrived."""


def expected_checksums(source):
    wanted = {name: getattr(source, name).lower() for name in CHECKSUMS if getattr(source, name)}
    if not wanted:
        raise DataError(
            f"{source.filename}: no checksum configured; set its sha256 or md5 "
            "(bench caches only verified archives)"
        )
    return wanted


def verify(path, source):
    """{"size", "md5", "sha256"} of path; Mismatch when they are not the configured ones."""
    wanted = expected_checksums(source)
    size = os.path.getsize(path)
    if source.size is not None and size != source.size:
        raise Mismatch(f"{size:,} bytes, expected {source.size:,}")
    found = cache.digests(path, CHECKSUMS)
    for name, value in wanted.items():
        if found[name] != value:
            raise Mismatch(f"{name} {found[name]}, expected {value}")
    return {"size": size, **found}


def fetch(source, directory, timeout_s=60.0, attempts=3, lock_timeout_s=cache.LOCK_TIMEOUT_S):
    """(path, info) of a verified copy of source's archive in directory, downloaded from the
    first of source.urls that delivers it. info: size, checksums, url."""
    final = directory / source.filename
    with cache.locked(final, lock_timeout_s):
        if final.exists():
            try:
                return final, dict(verify(final, source), url=None)
            except Mismatch as exc:
                cache.say(f"{final} is damaged ({exc}): deleting it and downloading it again")
                final.unlink()
        part = final.with_name(final.name + ".part")
        errors = []
        for url in source.urls:
            try:
                info = _download_verified(url, part, source, timeout_s, attempts)
            except (MirrorFailed, Mismatch) as exc:
                cache.say(f"could not use {url}: {exc}")
                errors.append(f"{url} ({exc})")
                continue
            os.replace(part, final)
            return final, dict(info, url=url)
    tried = ", ".join(errors) if errors else "no URL configured"
    raise DataError(f"could not download {source.filename} from any of: {tried}.")


def _download_verified(url, part, source, timeout_s, attempts):
    """Download url into part and verify it; a bad file is deleted. A file pieced together
    from earlier bytes that fails the checksum gets one clean download from scratch."""
    pieced = _download(url, part, source, timeout_s, attempts)
    try:
        return verify(part, source)
    except Mismatch as exc:
        part.unlink()
        if not pieced:
            raise
        cache.say(f"{source.filename}: resumed download is damaged ({exc}); starting again")
    _download(url, part, source, timeout_s, attempts)
    try:
        return verify(part, source)
    except Mismatch:
        part.unlink()
        raise


def _download(url, part, source, timeout_s, attempts):
    """Fetch url into part, resuming what part already holds. True if the file was pieced
    together from more than one response."""
    pieced, responded, last = False, False, None
    for attempt in range(attempts):
        if attempt:
            time.sleep(RETRY_WAIT_S * attempt)
        offset = part.stat().st_size if part.exists() else 0
        headers = {"User-Agent": f"rosetta-bench/{__version__}"}
        if offset:
            headers["Range"] = f"bytes={offset}-"
        try:
            with urllib.request.urlopen(
                urllib.request.Request(url, headers=headers), timeout=timeout_s
            ) as response:
                responded = True
                start, total = _extent(response, offset)
                if source.size is not None and total is not None and total != source.size:
                    raise MirrorFailed(
                        f"the server offers {total:,} bytes, expected {source.size:,}"
                    )
                pieced = pieced or start > 0
                _copy(response, part, start, total, source.filename, url)
            return pieced
        except urllib.error.HTTPError as exc:
            if exc.code == 416 and offset and offset == source.size:
                return pieced  # the part is already complete
            if exc.code == 416:  # a part the server cannot continue: start again
                part.unlink()
            elif 400 <= exc.code < 500 and exc.code not in (408, 429):
                raise MirrorFailed(f"HTTP {exc.code} {exc.reason}") from None
            last = f"HTTP {exc.code} {exc.reason}"
        except urllib.error.URLError as exc:
            if not responded:  # never reached (DNS, refused, offline): the next mirror, now
                raise MirrorFailed(str(exc.reason)) from None
            last = str(exc.reason)
        except (OSError, http.client.HTTPException, Truncated) as exc:
            last = str(exc) or type(exc).__name__
    raise MirrorFailed(f"{last}; gave up after {attempts} attempts")


def _extent(response, offset):
    """(first byte, total bytes or None) of what the response delivers."""
    if offset and response.status == 206:
        # Content-Range: bytes <first>-<last>/<total or *>
        span, _, total = response.headers.get("Content-Range", "").partition("/")
        first = span.split()[-1].split("-")[0] if span else ""
        if first != str(offset):
            raise Truncated(f"the server resumed at byte {first or '?'}, not {offset}")
        return offset, int(total) if total.isdigit() else None
    length = response.headers.get("Content-Length")
    return 0, int(length) if length and length.isdigit() else None


def _copy(response, part, start, total, filename, url):
    if start:
        cache.say(f"resuming {filename} from {url} at byte {start:,}")
    else:
        cache.say(f"downloading {filename} from {url}")
    view = ProgressView(sys.stderr)
    view.handle(
        {
            "event": "phase",
            "phase": f"download {filename}",
            "total": total,
            "unit": "B",
            "unit_scale": True,
        }
    )
    began, done = time.monotonic(), start
    try:
        with open(part, "ab" if start else "wb") as out:
            for block in iter(lambda: response.read(BLOCK), b""):
                out.write(block)
                done += len(block)
                view.handle({"event": "step", "done": done})
        if total is not None and done < total:
            raise Truncated(f"connection closed after {done:,} of {total:,} bytes")
        view.handle({"event": "phase_end", "seconds": time.monotonic() - began})
    finally:
        view.close()
