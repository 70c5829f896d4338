# verifymcp PyPI step library: what the build and metadata drivers
# (pybuild.py, pymeta.py) share. The sandbox runs each driver as one
# `python3 -I -c` script with this file put before it, so these functions
# are the drivers' own. emit() prints the driver's global `result`.
import json
import os
import subprocess
import sys
import time


def tail(s, n):
    s = s or ""
    return s[-n:] if len(s) > n else s


def emit():
    sys.stdout.write("\nVERIFYMCP-RESULT " + json.dumps(result) + "\n")
    sys.stdout.flush()
    sys.exit(0)


def run(argv, budget):
    """Runs argv in its own process group; whatever it leaves running is
    killed when it ends, so that it is never taken for the next one's."""
    started = time.time()
    out = {"ran": True, "exit_code": 0, "timed_out": False, "output_tail": "", "started_at": int(started * 1000)}
    p = subprocess.Popen(argv, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, start_new_session=True, env=dict(os.environ))
    try:
        data, _ = p.communicate(timeout=max(budget, 1))
    except subprocess.TimeoutExpired:
        os.killpg(p.pid, 9)
        data, _ = p.communicate()
        out["timed_out"] = True
    try:
        os.killpg(p.pid, 9)
        out["left_running"] = True
    except ProcessLookupError:
        out["left_running"] = False
    # A process that left the group (setsid, a double fork) is killed too:
    # nothing the step started may outlive it and act in the next.
    if sweep():
        out["left_running"] = True
    out["exit_code"] = p.returncode
    if p.returncode is not None and p.returncode < 0:
        out["signal"] = "SIG%d" % -p.returncode
    out["ended_at"] = int(time.time() * 1000)
    out["duration_ms"] = out["ended_at"] - out["started_at"]
    out["output_tail"] = tail(data.decode("utf-8", "replace"), 6000)
    return out


def ancestors():
    """The driver's pid and its ancestors' in this PID namespace."""
    seen = set()
    pid = os.getpid()
    while pid > 0 and pid not in seen:
        seen.add(pid)
        try:
            with open("/proc/%d/stat" % pid) as f:
                stat = f.read()
            pid = int(stat[stat.rindex(")") + 2:].split()[1])
        except (OSError, ValueError, IndexError):
            break
    return seen


def sweep():
    """Kills every process of the driver's user but the driver and its
    ancestors: whatever a step left running, wherever it went. In the
    step's PID namespace (its own, or the observer's, whose processes run
    as root) no other process runs as this user while the step runs. It
    says whether it killed any; a fork racing the sweep is caught by the
    next pass."""
    keep, uid, killed = ancestors(), os.getuid(), False
    for _ in range(5):
        found = False
        for d in os.listdir("/proc"):
            if not d.isdigit() or int(d) in keep:
                continue
            try:
                if os.stat("/proc/" + d).st_uid != uid:
                    continue
                with open("/proc/%s/stat" % d) as f:
                    if f.read().rsplit(")", 1)[1].split()[0] == "Z":
                        continue  # a zombie: dead already, its parent reaps it
                os.kill(int(d), 9)
                found = killed = True
            except (OSError, ValueError, IndexError):
                pass
        if not found:
            break
        time.sleep(0.05)
    return killed
