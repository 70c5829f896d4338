# verifymcp PyPI metadata driver. Contract: runs in the metadata step of a
# PyPI target's install phase, between two fetch steps, as uid 65534, in a
# bounded copy of the fetched tree at /work/tree, with no network, watched
# like the build step (it is package code: an sdist's build backend). For
# each sdist the fetch step could not resolve without its metadata, it
#   1. builds the sdist into a wheel, as the build step would (`uv build
#      --wheel`, offline, build requirements from the fetched files only),
#      in its own process group; whatever the build leaves running is
#      killed, as pybuild.py does;
#   2. reads the built wheel's METADATA: Name, Version, Requires-Dist,
#      Requires-Python, Provides-Extra;
# then empties the tree (the build step gets a fresh copy of the next
# fetch) and prints "VERIFYMCP-RESULT <json>". Arguments: a JSON object
# {python, sdists: [{name, version, filename}]} and the time budget in
# milliseconds.
import email.parser
import json
import os
import shutil
import stat
import subprocess
import sys
import time
import zipfile

TREE = "/work/tree"
STATE = TREE + "/.verifymcp"
DIST = STATE + "/dist"
META = STATE + "/meta"

# Our own PID first, before anything runs: the watch attributes the step's
# processes from it (the driver is the sandbox's, what it starts is uv).
sys.stdout.write("VERIFYMCP-DRIVER-PID %d\n" % os.getpid())
sys.stdout.flush()

args = json.loads(sys.argv[1])
deadline = time.time() + int(sys.argv[2]) / 1000.0
result = {"ok": False, "builds": [], "cleaned": False, "error": ""}


# tail, emit, run, ancestors and sweep: drivers/pysteps.py, put before this
# driver by the sandbox.


def metadata(wheel):
    """The core metadata of a built wheel."""
    with zipfile.ZipFile(wheel) as z:
        names = [n for n in z.namelist() if n.count("/") == 1 and n.endswith(".dist-info/METADATA")]
        if len(names) != 1:
            raise ValueError("the built wheel holds %d METADATA files" % len(names))
        text = z.read(names[0]).decode("utf-8", "replace")
    msg = email.parser.Parser().parsestr(text, headersonly=True)
    return {
        "name": (msg.get("Name") or "").strip(),
        "version": (msg.get("Version") or "").strip(),
        "requires_dist": [v.strip() for v in msg.get_all("Requires-Dist") or []],
        "requires_python": (msg.get("Requires-Python") or "").strip(),
        "provides_extras": [v.strip() for v in msg.get_all("Provides-Extra") or []],
    }


def clean():
    """Empties the tree: nothing the builds wrote there reaches the build
    step, which gets a fresh copy of the next fetch."""
    def writable(fn, path, _):
        try:
            os.chmod(os.path.dirname(path), stat.S_IRWXU)
            os.chmod(path, stat.S_IRWXU)
            fn(path)
        except OSError:
            pass
    for n in os.listdir(TREE):
        p = os.path.join(TREE, n)
        if os.path.isdir(p) and not os.path.islink(p):
            shutil.rmtree(p, onerror=writable)
        else:
            try:
                os.unlink(p)
            except OSError:
                pass
    return not os.listdir(TREE)


def main():
    for i, sd in enumerate(args["sdists"]):
        entry = {"name": sd["name"], "version": sd["version"], "filename": sd["filename"]}
        if deadline - time.time() <= 0:
            entry.update({"ran": False, "timed_out": True})
            result["builds"].append(entry)
            continue
        out = os.path.join(META, str(i))
        os.makedirs(out, exist_ok=True)
        b = run(["uv", "build", "--wheel", "--offline", "--no-index", "--find-links", DIST, "--out-dir", out,
                 "--python", args["python"], "--color", "never", os.path.join(DIST, sd["filename"])], deadline - time.time())
        entry.update(b)
        if b["exit_code"] == 0 and not b["timed_out"]:
            wheels = sorted(n for n in os.listdir(out) if n.endswith(".whl"))
            try:
                if len(wheels) != 1:
                    raise ValueError("the build gave %d wheels" % len(wheels))
                entry["metadata"] = metadata(os.path.join(out, wheels[0]))
            except (OSError, ValueError, zipfile.BadZipFile) as e:
                entry["error"] = str(e)
        result["builds"].append(entry)
    result["ok"] = True


try:
    main()
except Exception as e:
    result["error"] = "%s: %s" % (type(e).__name__, e)
sweep()
try:
    result["cleaned"] = clean()
except OSError as e:
    result["error"] = result["error"] or "clean: %s" % e
shutil.rmtree(os.environ.get("UV_CACHE_DIR", "/nonexistent"), ignore_errors=True)
emit()
