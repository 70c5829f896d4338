# verifymcp PyPI build driver. Contract: runs in the build step of a PyPI
# target's install phase, as uid 65534, in the bounded copy of the fetched
# tree at /work/tree, with no network, watched like npm's script step. It
#   1. creates the virtual environment /work/tree/venv with uv;
#   2. builds every sdist the fetch step downloaded into a wheel, one at a
#      time (`uv build --wheel`, offline, build requirements from the
#      fetched files only): this is where a Python package's install-time
#      code runs (setup.py, PEP 517 hooks), each build its own window;
#   3. installs the whole resolved tree into the venv (`uv pip install
#      --no-deps`, offline, from the fetched and built files only);
#   4. byte-compiles the installed tree (the image's python3 -I -S -m
#      compileall: no .pth file is read, no package code runs), which the
#      run phase's read-only venv could not do at each start;
#      then reads the target distribution's entry_points.txt;
#   5. reads, without extracting or running anything, every distribution
#      file of the tree (fetched or built) for members whose path leaves
#      the directory they are extracted into, and the installed tree for
#      start-up hooks (.pth files with import lines, sitecustomize and
#      usercustomize modules), which run code whenever Python starts;
# then prints "VERIFYMCP-RESULT <json>". Arguments: a JSON object
# {target, version, python, requirements: [lines], sdists: [{name, version,
# filename}]} and the time budget in milliseconds; target "" is a tree
# without a target distribution (a project's dependencies).
import configparser
import csv
import hashlib
import io
import json
import os
import re
import shutil
import subprocess
import sys
import tarfile
import time
import zipfile

TREE = "/work/tree"
STATE = TREE + "/.verifymcp"
DIST = STATE + "/dist"
BUILT = STATE + "/built"
VENV = TREE + "/venv"

# Our own PID first, before anything runs: the watch attributes the
# step's processes from it (the build driver is the sandbox's, what it
# starts is uv), whether or not the tracer saw this process's exec.
sys.stdout.write("VERIFYMCP-DRIVER-PID %d\n" % os.getpid())
sys.stdout.flush()

args = json.loads(sys.argv[1])
deadline = time.time() + int(sys.argv[2]) / 1000.0
result = {"ok": False, "venv": None, "builds": [], "install": None, "console_scripts": {}, "dist_info": "", "installed": [], "error": "",
          "archive_escapes": [], "startup_hooks": []}


# tail, emit, run, ancestors and sweep: drivers/pysteps.py, put before this
# driver by the sandbox.


def left():
    return deadline - time.time()


MAX_MEMBERS = 200000  # members read per archive
MAX_ESCAPES = 50      # escapes recorded in all


def escapes(member):
    """Why a member path leaves the directory it is extracted into: "parent",
    "absolute", or "" when it stays inside."""
    m = member.replace("\\", "/")
    if m.startswith("/") or re.match(r"^[A-Za-z]:", m):
        return "absolute"
    if ".." in m.split("/"):
        return "parent"
    return ""


def escape(f, member, where, why):
    if len(result["archive_escapes"]) < MAX_ESCAPES:
        result["archive_escapes"].append({"package": f.get("name", ""), "version": f.get("version", ""), "file": f["filename"],
                                          "member": member[:300], "where": where, "why": why})


def read_archives(files):
    """Reads each distribution file's member names (and a wheel's RECORD)
    for paths that leave the tree. Nothing is extracted: the names are
    what an installer would write."""
    for f in files:
        path = f["path"]
        try:
            if path.endswith(".whl") or path.endswith(".zip"):
                with zipfile.ZipFile(path) as z:
                    infos = z.infolist()[:MAX_MEMBERS]
                    record, members = None, set()
                    for i in infos:
                        why = escapes(i.filename)
                        if why:
                            escape(f, i.filename, "archive", why)
                            members.add(i.filename)
                        if path.endswith(".whl") and i.filename.count("/") == 1 and i.filename.endswith(".dist-info/RECORD"):
                            record = i
                    if record is not None and record.file_size < (64 << 20):
                        text = z.read(record).decode("utf-8", "replace")
                        for row in csv.reader(io.StringIO(text)):
                            if row and escapes(row[0]) and row[0] not in members:
                                escape(f, row[0], "record", escapes(row[0]))
            elif ".tar" in path or path.endswith(".tgz"):
                with tarfile.open(path) as t:
                    n = 0
                    for m in t:
                        n += 1
                        if n > MAX_MEMBERS:
                            break
                        why = escapes(m.name)
                        if why:
                            escape(f, m.name, "archive", why)
                        elif m.issym() or m.islnk():
                            target = m.linkname if m.islnk() else os.path.join(os.path.dirname(m.name), m.linkname)
                            if escapes(m.linkname) == "absolute" or os.path.normpath(target).startswith(".."):
                                escape(f, m.name + " -> " + m.linkname, "archive", "link")
        except (OSError, zipfile.BadZipFile, tarfile.TarError, EOFError, ValueError) as e:
            result.setdefault("archive_errors", []).append("%s: %s" % (f["filename"], e))


def snapshot(site):
    """The files of site-packages and their sha256, as the venv left them."""
    out = {}
    if site and os.path.isdir(site):
        for d, _, names in os.walk(site):
            for n in names:
                p = os.path.join(d, n)
                try:
                    with open(p, "rb") as fh:
                        out[os.path.relpath(p, site)] = hashlib.sha256(fh.read()).hexdigest()
                except OSError:
                    pass
    return out


def site_packages():
    lib = os.path.join(VENV, "lib")
    for d in sorted(os.listdir(lib)) if os.path.isdir(lib) else []:
        if d.startswith("python"):
            return os.path.join(lib, d, "site-packages")
    return None


def owners(site):
    """Which installed distribution's RECORD lists each path of
    site-packages."""
    own = {}
    for d in os.listdir(site):
        if not d.endswith(".dist-info"):
            continue
        name = d[: -len(".dist-info")].rpartition("-")[0]
        try:
            with open(os.path.join(site, d, "RECORD"), encoding="utf-8", errors="replace") as fh:
                for row in csv.reader(fh):
                    if row:
                        own[os.path.normpath(row[0])] = name
        except OSError:
            pass
    return own


def startup_hooks(site, before):
    """The files of site-packages that run code whenever Python starts:
    a .pth file's lines that begin with "import" (site.py executes them),
    and sitecustomize and usercustomize modules. A file the venv held
    before any package code ran, unchanged, is the sandbox's own."""
    own = owners(site)
    hooks = []
    for n in sorted(os.listdir(site)):
        p = os.path.join(site, n)
        hook = None
        if n.endswith(".pth") and os.path.isfile(p):
            try:
                with open(p, encoding="utf-8", errors="replace") as fh:
                    for line in fh:
                        if line.startswith(("import ", "import\t")):
                            hook = {"path": n, "kind": "pth", "line": line.strip()[:300]}
                            break
            except OSError:
                continue
        elif n in ("sitecustomize.py", "usercustomize.py", "sitecustomize", "usercustomize"):
            hook = {"path": n, "kind": n.split(".")[0]}
        if hook is None:
            continue
        if n in before and os.path.isfile(p):
            with open(p, "rb") as fh:
                if hashlib.sha256(fh.read()).hexdigest() == before[n]:
                    continue
        if n in own:
            hook["package"] = own[n]
        else:
            key = n + ("/__init__.py" if os.path.isdir(p) else "")
            hook["package"] = own.get(os.path.normpath(key), "")
        hooks.append(hook)
    result["startup_hooks"] = hooks[:MAX_ESCAPES]


def main():
    os.makedirs(BUILT, exist_ok=True)
    v = run(["uv", "venv", VENV, "--python", args["python"], "--no-project", "--quiet", "--color", "never"], left())
    result["venv"] = v
    if v["exit_code"] != 0:
        result["error"] = "uv venv failed"
        emit()
    before = snapshot(site_packages())
    for sd in args["sdists"]:
        if left() <= 0:
            result["builds"].append({"name": sd["name"], "version": sd["version"], "filename": sd["filename"], "ran": False, "timed_out": True})
            continue
        b = run(["uv", "build", "--wheel", "--offline", "--no-index", "--find-links", DIST, "--out-dir", BUILT,
                 "--python", args["python"], "--color", "never", os.path.join(DIST, sd["filename"])], left())
        b.update({"name": sd["name"], "version": sd["version"], "filename": sd["filename"]})
        result["builds"].append(b)
    if any(b.get("timed_out") for b in result["builds"]):
        result["error"] = "the build step ran out of time"
        emit()
    files = [{"name": sd["name"], "version": sd["version"], "filename": sd["filename"], "path": os.path.join(DIST, sd["filename"])} for sd in args["sdists"]]
    fetched = {sd["filename"] for sd in args["sdists"]}
    for n in sorted(os.listdir(DIST)):
        if n not in fetched and n.endswith(".whl"):
            parts = n.split("-")
            files.append({"name": parts[0], "version": parts[1] if len(parts) > 1 else "", "filename": n, "path": os.path.join(DIST, n)})
    for n in sorted(os.listdir(BUILT)):
        if n.endswith(".whl"):
            parts = n.split("-")
            files.append({"name": parts[0], "version": parts[1] if len(parts) > 1 else "", "filename": n, "path": os.path.join(BUILT, n)})
    read_archives(files)
    req = STATE + "/requirements.txt"
    with open(req, "w") as f:
        f.write("\n".join(args["requirements"]) + "\n")
    inst = run(["uv", "pip", "install", "--python", VENV + "/bin/python", "--offline", "--no-index", "--find-links", DIST, "--find-links", BUILT,
                "--no-deps", "--no-build", "--link-mode", "copy", "--color", "never", "-r", req], left())
    result["install"] = inst
    if inst["exit_code"] != 0:
        result["error"] = "uv pip install failed"
        emit()
    site = site_packages()
    startup_hooks(site, before)
    # Byte-compile the tree once, here, since the run phase's venv is
    # read-only and would compile every module at every start. The image's
    # own interpreter (the venv's is a link to it, and a wheel could have
    # put another in the venv's bin), -S: it reads no .pth file (a start-up
    # hook runs no code here); compileall only compiles.
    result["compile"] = run([args["python"], "-I", "-S", "-m", "compileall", "-q", "-j", "0", site], left())
    norm = re.sub(r"[-_.]+", "_", args["target"]).lower()
    for d in sorted(os.listdir(site)):
        if not d.endswith(".dist-info"):
            continue
        base = d[: -len(".dist-info")]
        name, _, version = base.rpartition("-")
        result["installed"].append({"name": name, "version": version})
        if re.sub(r"[-_.]+", "_", name).lower() == norm:
            result["dist_info"] = os.path.join(site, d)
    if not result["dist_info"] and args["target"]:
        result["error"] = "the venv holds no distribution named " + args["target"]
        emit()
    ep = os.path.join(result["dist_info"], "entry_points.txt")
    if result["dist_info"] and os.path.exists(ep):
        cp = configparser.ConfigParser(delimiters=("=",), interpolation=None)
        cp.optionxform = str
        cp.read(ep)
        if cp.has_section("console_scripts"):
            result["console_scripts"] = {k: v.strip() for k, v in cp.items("console_scripts")}
    # uv's cache of this step served the install (copied, not linked);
    # the run phase does not need it.
    shutil.rmtree(os.environ.get("UV_CACHE_DIR", "/nonexistent"), ignore_errors=True)
    result["ok"] = True
    emit()


try:
    main()
except SystemExit:
    raise
except Exception as e:
    result["error"] = result["error"] or "%s: %s" % (type(e).__name__, e)
    emit()
