# verifymcp PyPI fetch driver. Contract: runs in the fetch step of a PyPI
# target's install phase, as uid 65534, in /work/tree, with egress only
# through the index proxy, started as `python3 -I` (isolated: the
# PYTHONHOME the step sets does not apply to this driver). It
#   1. checks that it reaches the index (the preflight: CONNECT through the
#      egress proxy, TLS with the image's and the operator's CAs, one GET of
#      the target's simple page) and the files host;
#   2. resolves the exact release and its dependency tree with uv
#      (or, with no target, the requirements it is given: a project's
#      dependencies)
#      (`uv pip compile -o pylock.toml`) for the sandbox's interpreter. uv
#      reads an sdist's metadata from its static PKG-INFO or pyproject.toml;
#      when it would have to run a build backend to learn it, the build
#      cannot start: PYTHONHOME points nowhere for every Python but this
#      driver, so no package code runs in the step that has the network;
#   3. downloads every file the resolution chose (a wheel when one fits,
#      else the sdist) and verifies each against the sha256 the index gave;
#   4. for each sdist, reads its declared build requirements (pyproject's
#      [build-system], statically, never by running anything), resolves and
#      downloads them the same way, so that the build step can run with no
#      network;
# then prints one line "VERIFYMCP-RESULT <json>" on stdout. Argument: a JSON
# object {requirements, target, probe (the project whose simple page the
# preflight asks for), index, files_host, python, metadata}; target "" is a
# tree without a target distribution (a project's dependencies).
#
# When uv needs the metadata of an sdist that only its build backend can
# give, the driver downloads that sdist and its build requirements and ends
# with error_kind "needs_metadata" (needs_metadata: the sdist): the metadata
# step (drivers/pymeta.py), with no network and watched, builds it, and the
# fetch runs again with what it learned as uv's dependency-metadata
# (metadata: [{name, version, requires_dist, requires_python,
# provides_extras}]).
import hashlib
import http.client
import json
import os
import re
import socket
import ssl
import subprocess
import sys
import tarfile
import time
import tomllib
import urllib.parse
import zipfile

TREE = "/work/tree"
STATE = TREE + "/.verifymcp"
DIST = STATE + "/dist"
MAX_FILE = 512 << 20

args = json.loads(sys.argv[1])
result = {
    "ok": False, "stage": "preflight", "preflight": None, "uv_exit": None, "log_tail": "",
    "error": "", "error_kind": "", "lockfile": "", "build_lockfiles": [], "packages": 0,
    "target": None, "files": [], "sdists": [], "archive_escapes": [], "needs_metadata": [],
}
UNSAFE_RE = re.compile(r'unsafe member path "([^"\n]*)": ([^\n]*)')
BUILD_RE = re.compile(r"Failed to (?:build|extract archive:?) `?([^`\n]+?)`?\s*$", re.M)
META_CONFIG = STATE + "/metadata.uv.toml"
asking = []  # the sdist whose metadata is being asked for, while it is


def tail(s, n):
    s = s or ""
    return s[-n:] if len(s) > n else s


def emit():
    for f in ("ca.pem",):
        try:
            os.unlink(os.path.join(STATE, f))
        except OSError:
            pass
    sys.stdout.write("\nVERIFYMCP-RESULT " + json.dumps(result) + "\n")
    sys.stdout.flush()
    sys.exit(0)


def fail(kind, msg):
    result["error_kind"], result["error"] = kind, msg
    emit()


def ssl_context():
    ctx = ssl.create_default_context()
    ca = os.environ.get("SSL_CERT_FILE")
    if ca and os.path.exists(ca):
        ctx.load_verify_locations(cafile=ca)
    return ctx


PROXY = urllib.parse.urlsplit(os.environ.get("HTTPS_PROXY", ""))
TLS_CODES = {
    20: "UNABLE_TO_GET_ISSUER_CERT_LOCALLY", 19: "SELF_SIGNED_CERT_IN_CHAIN", 18: "DEPTH_ZERO_SELF_SIGNED_CERT",
    21: "UNABLE_TO_VERIFY_LEAF_SIGNATURE", 10: "CERT_HAS_EXPIRED", 9: "CERT_NOT_YET_VALID", 62: "ERR_TLS_CERT_ALTNAME_INVALID",
}


class Failure(Exception):
    def __init__(self, stage, code="", message="", status=0, egress_error=""):
        super().__init__(message)
        self.stage, self.code, self.message, self.status, self.egress_error = stage, code, message, status, egress_error


def connect(url, timeout=30):
    """An HTTPS connection to url's host through the egress proxy."""
    u = urllib.parse.urlsplit(url)
    port = u.port or (443 if u.scheme == "https" else 80)
    host = u.hostname
    try:
        sock = socket.create_connection((PROXY.hostname, PROXY.port or 80), timeout=timeout)
    except socket.gaierror as e:
        raise Failure("proxy", "ENOTFOUND", str(e))
    except ConnectionRefusedError as e:
        raise Failure("proxy", "ECONNREFUSED", str(e))
    except OSError as e:
        raise Failure("proxy", "ERROR", str(e))
    target = "%s:%d" % (host, port)
    sock.sendall(("CONNECT %s HTTP/1.1\r\nHost: %s\r\n\r\n" % (target, target)).encode())
    head = b""
    while b"\r\n\r\n" not in head:
        chunk = sock.recv(4096)
        if not chunk:
            raise Failure("proxy", "ECONNRESET", "the egress proxy closed the connection")
        head += chunk
    lines = head.split(b"\r\n\r\n", 1)[0].decode("latin-1").split("\r\n")
    status = int(lines[0].split()[1])
    if status != 200:
        hdr = {k.strip().lower(): v.strip() for k, _, v in (line.partition(":") for line in lines[1:])}
        sock.close()
        raise Failure("connect", "", hdr.get("x-verifymcp-egress-detail", lines[0]), status, hdr.get("x-verifymcp-egress-error", ""))
    if u.scheme != "https":
        return sock, host
    try:
        return ssl_context().wrap_socket(sock, server_hostname=host), host
    except ssl.SSLCertVerificationError as e:
        raise Failure("tls", TLS_CODES.get(e.verify_code, "CERT_VERIFY_FAILED"), str(e))
    except ssl.SSLError as e:
        raise Failure("tls", "EPROTO", str(e))
    except socket.timeout as e:
        raise Failure("tls", "ETIMEDOUT", str(e))


def get(url, out=None, limit=MAX_FILE, accept="*/*"):
    """GETs url through the proxy; returns (status, body or sha256)."""
    sock, host = connect(url)
    u = urllib.parse.urlsplit(url)
    conn = http.client.HTTPConnection(host)
    conn.sock = sock
    path = u.path + ("?" + u.query if u.query else "")
    try:
        conn.request("GET", path or "/", headers={"Host": host, "Accept": accept, "User-Agent": "verifymcp-fetch"})
        resp = conn.getresponse()
    except socket.timeout as e:
        raise Failure("http", "ETIMEDOUT", str(e))
    except OSError as e:
        raise Failure("http", "ECONNRESET", str(e))
    if resp.status in (301, 302, 303, 307, 308):
        loc = urllib.parse.urljoin(url, resp.getheader("Location", ""))
        conn.close()
        return get(loc, out, limit, accept)
    if out is None:
        body = resp.read(1 << 20)
        conn.close()
        return resp.status, body
    h, n = hashlib.sha256(), 0
    with open(out, "wb") as f:
        while True:
            chunk = resp.read(1 << 16)
            if not chunk:
                break
            n += len(chunk)
            if n > limit:
                conn.close()
                raise Failure("http", "EFBIG", "larger than %d bytes" % limit)
            h.update(chunk)
            f.write(chunk)
    conn.close()
    return resp.status, h.hexdigest()


def preflight():
    """Checks both hosts the step needs; 5xx is tried once more."""
    checks = [(args["index"].rstrip("/") + "/simple/" + args["probe"] + "/", "application/vnd.pypi.simple.v1+json, text/html;q=0.1")]
    if args.get("files_host"):
        checks.append(("https://" + args["files_host"] + "/", "*/*"))
    for url, accept in checks:
        u = urllib.parse.urlsplit(url)
        host = "%s:%d" % (u.hostname, u.port or 443)
        started = time.time()
        for attempt in (1, 2):
            try:
                status, _ = get(url, accept=accept)
                if status >= 500 and attempt == 1:
                    continue
                out = {"ok": status < 500, "stage": "http", "code": "", "message": "", "status": status, "egress_error": "", "host": host}
                break
            except Failure as e:
                out = {"ok": False, "stage": e.stage, "code": e.code, "message": e.message, "status": e.status, "egress_error": e.egress_error, "host": host}
                if e.code in ("ECONNRESET",) and attempt == 1:
                    continue
                break
        out["ms"] = int((time.time() - started) * 1000)
        result["preflight"] = out
        if not out["ok"]:
            return False
    return True


def uv(argv, timeout):
    env = dict(os.environ)
    p = subprocess.run(["uv"] + argv, env=env, capture_output=True, text=True, timeout=timeout)
    return p.returncode, p.stdout + p.stderr


def compile_lock(requirements, out, kind):
    """uv pip compile requirements (lines) into the pylock file out."""
    req = out + ".in"
    with open(req, "w") as f:
        f.write("\n".join(requirements) + "\n")
    extra = ["--config-file", META_CONFIG] if args.get("metadata") else []
    code, log = uv(["pip", "compile", req, "-o", out, "--python", args["python"], "--index-url", args["index"].rstrip("/") + "/simple",
                    "--no-header", "--quiet", "--color", "never"] + extra, 600)
    result["uv_exit"] = code
    if code == 0:
        return tomllib.loads(open(out).read()), open(out).read()
    result["log_tail"] = tail(log, 4000)
    low = log.lower()
    unsafe = UNSAFE_RE.search(log)
    if unsafe:
        # uv refuses an archive that would write outside its directory:
        # the package's own archive, not metadata it could not read.
        who = BUILD_RE.search(log)
        name = who.group(1) if who else "a distribution of the tree"
        pkg, _, url = name.partition(" @ ")
        result["archive_escapes"].append({"package": pkg.split("==")[0], "file": os.path.basename(url) if url else name, "member": unsafe.group(1)[:300], "where": "archive",
                                          "why": "absolute" if "absolute" in unsafe.group(2) else "parent"})
        fail("unsafe_archive", "uv refused %s: unsafe member path \"%s\": %s" % (name, unsafe.group(1)[:300], unsafe.group(2)))
    if "fatal python error" in low or "failed to build" in low or "build backend" in low or "encodings" in low:
        ask_metadata(log)
        fail("dynamic_metadata", "resolving %s needs the metadata of an sdist that does not declare it statically (PKG-INFO 2.2+ or pyproject.toml [project]); only its build backend could say, and the fetch step, the one with network, never runs package code" % kind)
    if "python>=" in low.replace(" ", "") or "requires-python" in low or "python version" in low:
        fail("requires_python", "no release of the tree fits the sandbox's Python %d.%d: %s" % (sys.version_info[0], sys.version_info[1], first_error(log)))
    if "invalid peer certificate" in low or "certificate" in low and "unknownissuer" in low.replace(" ", ""):
        fail("tls", first_error(log))
    if "not found in the package registry" in low or "was not found in the package registry" in low:
        fail("not_found", first_error(log))
    if "dns error" in low or "failed to lookup address" in low or "connection refused" in low or "403 forbidden" in low or "502 bad gateway" in low:
        fail("network", first_error(log))
    fail("resolution", first_error(log))


def first_error(log):
    lines = [line.strip() for line in log.splitlines() if line.strip()]
    for i, line in enumerate(lines):
        if line.startswith("error:") or line.startswith("×") or line.startswith("x "):
            rest = [x for x in lines[i + 1:i + 3] if not x.startswith("hint")]
            return " ".join([line] + rest)[:600]
    return (lines[-1] if lines else "uv failed")[:600]


def choose(pkg):
    """The file to fetch: a platform wheel, else any wheel, else the sdist.
    uv lists only the wheels that fit the interpreter it resolved for."""
    wheels = pkg.get("wheels") or []
    for w in wheels:
        name = os.path.basename(w.get("url") or w.get("path") or w.get("name", ""))
        if not name.endswith("-none-any.whl"):
            return "wheel", w
    if wheels:
        return "wheel", wheels[0]
    if pkg.get("sdist"):
        return "sdist", pkg["sdist"]
    if pkg.get("archive"):
        return "archive", pkg["archive"]
    return None, None


def fetch_all(lock, role):
    files = []
    for pkg in lock.get("packages", []):
        kind, f = choose(pkg)
        if f is None:
            fail("resolution", "the resolution gives %s %s no file to fetch (a VCS or directory source: the sandbox fetches only from the index)" % (pkg.get("name"), pkg.get("version")))
        want = (f.get("hashes") or {}).get("sha256", "")
        src = f.get("url") or ""
        name = os.path.basename(urllib.parse.urlsplit(src).path) if src else os.path.basename(f.get("path", ""))
        if kind == "archive":
            # A local file: a wheel or an sdist, by its name.
            kind = "wheel" if name.endswith(".whl") else "sdist"
        entry = {"name": pkg["name"], "version": pkg.get("version", ""), "filename": name, "kind": kind, "sha256": want, "computed": "", "role": role, "url": src}
        dest = os.path.join(DIST, name)
        if f.get("path"):
            local = f["path"] if os.path.isabs(f["path"]) else os.path.join(STATE, "input", f["path"])
            h = hashlib.sha256(open(local, "rb").read()).hexdigest()
            if local != dest:
                with open(local, "rb") as a, open(dest, "wb") as b:
                    b.write(a.read())
            entry["computed"], entry["local"] = h, True
        elif os.path.exists(dest):
            entry["computed"] = hashlib.sha256(open(dest, "rb").read()).hexdigest()
        else:
            if not want:
                fail("hash_missing", "the index gave no sha256 for %s" % name)
            for attempt in (1, 2):
                try:
                    status, h = get(src, out=dest)
                except Failure as e:
                    if e.code == "EFBIG":
                        # The sandbox's bound, not the network: no retry.
                        result["log_tail"] = "%s: %s %s" % (src, e.code, e.message)
                        fail("too_large", "%s is larger than the fetch step's bound of %d MiB per file" % (name, MAX_FILE >> 20))
                    if attempt == 1:
                        continue
                    result["log_tail"] = "%s: %s %s" % (src, e.code, e.message)
                    fail("network", "downloading %s failed: %s %s" % (name, e.code, e.message))
                if status == 200:
                    break
                if attempt == 2 or status < 500:
                    fail("download", "downloading %s: HTTP %d" % (name, status))
            entry["computed"] = h
        if want and entry["computed"] != want:
            os.unlink(dest)
            entry["mismatch"] = True
            files.append(entry)
            result["files"] = files
            fail("hash_mismatch", "%s: the sha256 of what was served (%s) is not the index's (%s)" % (name, entry["computed"], want))
        files.append(entry)
    return files


def sdist_build_system(path):
    """[build-system] of an sdist, read from its pyproject.toml without
    running anything; the PEP 517 default when it has none."""
    data = None
    try:
        if path.endswith(".zip"):
            with zipfile.ZipFile(path) as z:
                for n in z.namelist():
                    if n.count("/") == 1 and n.endswith("/pyproject.toml"):
                        data = z.read(n)
                        break
        else:
            with tarfile.open(path) as t:
                for m in t.getmembers():
                    if m.isfile() and m.name.strip("./").count("/") == 1 and m.name.endswith("/pyproject.toml"):
                        data = t.extractfile(m).read(1 << 20)
                        break
    except (OSError, tarfile.TarError, zipfile.BadZipFile) as e:
        return {"requires": [], "backend": "", "backend_path": False, "error": str(e)}
    bs = {}
    if data is not None:
        try:
            bs = tomllib.loads(data.decode("utf-8")).get("build-system", {})
        except (UnicodeDecodeError, tomllib.TOMLDecodeError) as e:
            return {"requires": [], "backend": "", "backend_path": False, "error": "pyproject.toml: %s" % e}
    if not bs or "requires" not in bs:
        return {"requires": ["setuptools>=40.8.0"], "backend": "setuptools.build_meta:__legacy__", "backend_path": False, "default": True}
    return {"requires": [str(r) for r in bs.get("requires", [])], "backend": str(bs.get("build-backend", "setuptools.build_meta:__legacy__")),
            "backend_path": bool(bs.get("backend-path"))}


def write_metadata():
    """uv's dependency-metadata, from what the metadata step learned."""
    with open(META_CONFIG, "w") as f:
        for m in args.get("metadata") or []:
            f.write("[[dependency-metadata]]\nname = %s\n" % json.dumps(m["name"]))
            if m.get("version"):
                f.write("version = %s\n" % json.dumps(m["version"]))
            f.write("requires-dist = %s\n" % json.dumps(list(m.get("requires_dist") or [])))
            if m.get("requires_python"):
                f.write("requires-python = %s\n" % json.dumps(m["requires_python"]))
            if m.get("provides_extras"):
                f.write("provides-extras = %s\n" % json.dumps(list(m["provides_extras"])))
            f.write("\n")


def norm(name):
    return re.sub(r"[-_.]+", "-", name).lower()


def ask_metadata(log):
    """When uv names the sdist it could not build (for its metadata), fetches
    it and its build requirements and ends the step asking for its metadata;
    returns when it cannot (the caller fails as before)."""
    m = re.search(r"Failed to (?:download and )?build `([^`]+)`", log)
    if not m or asking:
        return
    spec = m.group(1)
    if " @ " in spec:
        # The local input file (the only one the step has).
        name, _, url = spec.partition(" @ ")
        path = urllib.parse.unquote(urllib.parse.urlsplit(url).path)
        if os.path.dirname(path) != STATE + "/input" or not os.path.isfile(path):
            return
        lock = {"packages": [{"name": name.strip(), "version": "", "archive": {"path": path}}]}
    else:
        name, sep, version = spec.partition("==")
        if not sep:
            return
        name, version = name.strip(), version.strip()
        page = STATE + "/simple-%s.json" % norm(name)
        try:
            status, _ = get(args["index"].rstrip("/") + "/simple/" + norm(name) + "/", out=page, limit=64 << 20,
                            accept="application/vnd.pypi.simple.v1+json")
            data = json.load(open(page)) if status == 200 else {}
        except (Failure, ValueError):
            return
        finally:
            if os.path.exists(page):
                os.unlink(page)
        sdist = None
        for f in data.get("files") or []:
            fn = f.get("filename", "")
            for ext in (".tar.gz", ".zip"):
                if fn.endswith(ext):
                    n, _, v = fn[: -len(ext)].rpartition("-")
                    if norm(n) == norm(name) and v == version and not f.get("yanked"):
                        sdist = f
        if sdist is None:
            return
        lock = {"packages": [{"name": name, "version": version, "sdist": {
            "url": urllib.parse.urljoin(args["index"].rstrip("/") + "/simple/" + norm(name) + "/", sdist["url"]),
            "hashes": {"sha256": (sdist.get("hashes") or {}).get("sha256", "")}}}]}
    asking.append(spec)
    files = fetch_all(lock, "metadata")
    f = files[0]
    bs = sdist_build_system(os.path.join(DIST, f["filename"]))
    sd = {"name": f["name"], "version": f["version"], "filename": f["filename"], "local": bool(f.get("local"))}
    sd.update(bs)
    if bs.get("error"):
        fail("sdist", "%s: %s" % (f["filename"], bs["error"]))
    if bs["requires"]:
        blk, _ = compile_lock(bs["requires"], STATE + "/pylock.metabuild.toml", "the build requirements of " + f["filename"])
        files.extend(fetch_all(blk, "build:" + f["name"]))
    result["files"] = files
    result["needs_metadata"] = [sd]
    result["stage"] = "metadata"
    fail("needs_metadata", "resolving the tree needs the metadata of %s, which only its build backend can give" % spec)


def main():
    os.makedirs(DIST, exist_ok=True)
    if args.get("metadata"):
        write_metadata()
    if PROXY.hostname and not preflight():
        emit()
    result["stage"] = "resolve"
    lock, text = compile_lock(args["requirements"], STATE + "/pylock.toml", "the package's tree")
    result["lockfile"] = text
    result["packages"] = len(lock.get("packages", []))
    result["stage"] = "download"
    files = fetch_all(lock, "tree")
    result["files"] = files
    for f in files:
        if f["name"] == args["target"] or f.get("local"):
            if f["name"] == args["target"]:
                result["target"] = f
    if result["target"] is None and args["target"]:
        fail("resolution", "the resolution does not hold %s" % args["target"])
    result["stage"] = "build-requires"
    for i, f in enumerate(files):
        if f["kind"] not in ("sdist", "archive"):
            continue
        bs = sdist_build_system(os.path.join(DIST, f["filename"]))
        sd = {"name": f["name"], "version": f["version"], "filename": f["filename"]}
        sd.update(bs)
        result["sdists"].append(sd)
        if bs.get("error"):
            fail("sdist", "%s: %s" % (f["filename"], bs["error"]))
        if bs["requires"]:
            blk, btext = compile_lock(bs["requires"], STATE + "/pylock.build-%d.toml" % i, "the build requirements of " + f["filename"])
            result["build_lockfiles"].append(btext)
            result["files"].extend(fetch_all(blk, "build:" + f["name"]))
    result["ok"] = True
    result["stage"] = "done"
    emit()


try:
    main()
except SystemExit:
    raise
except Exception as e:  # the result must say what broke
    result["error_kind"] = result["error_kind"] or "driver"
    result["error"] = result["error"] or "%s: %s" % (type(e).__name__, e)
    emit()
