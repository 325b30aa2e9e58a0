#!/usr/bin/env python3
"""What the benchmark scripts share (bench/bench.py, bench/cold.py,
bench/scale.py, and through bench.py bench/sets.py and bench/plan_choice.py):
tbloom, contrib/bloom's example table; progress lines and medians; figures
formatted for the reports; the machine's memory, CPU and load; pgbench runs.
"""

import os
import statistics
import subprocess

# tbloom: six random int columns, seeded, as SQL with %d for the row count
TBLOOM_COLS = ["i1", "i2", "i3", "i4", "i5", "i6"]
TBLOOM_SQL = """
SELECT setseed(0.42);
CREATE TABLE tbloom AS
SELECT
%s
FROM generate_series(1, %%d);
VACUUM (FREEZE, ANALYZE) tbloom;
""" % ",\n".join("  (random() * 1000000)::int AS %s" % c for c in TBLOOM_COLS)


def log(msg):
    """A progress line, indented under the shell script's own."""
    print("    " + msg, flush=True)


def median(xs):
    """The median of the figures measured (None: not measured)."""
    xs = [x for x in xs if x is not None]
    return statistics.median(xs) if xs else None


def fmt(x):
    """A figure for a table: '-' when missing, few significant digits."""
    if x is None:
        return "-"
    ax = abs(x)
    if ax >= 100:
        return "{:,.0f}".format(x)
    if ax >= 10:
        return "%.1f" % x
    if ax >= 1:
        return "%.2f" % x
    if ax == 0:
        return "0"
    return "%.3f" % x


# --- the machine -----------------------------------------------------------------

def memory_gb():
    with open("/proc/meminfo") as f:
        for line in f:
            if line.startswith("MemTotal:"):
                return round(int(line.split()[1]) / 1048576.0, 1)


def cpu_model():
    with open("/proc/cpuinfo") as f:
        for line in f:
            if line.startswith("model name"):
                return line.split(":", 1)[1].strip()
    return ""


def load_avg():
    with open("/proc/loadavg") as f:
        return float(f.read().split()[0])


# --- pgbench ---------------------------------------------------------------------

def write_scripts(d, scripts, prefix):
    """Write pgbench's custom scripts (name: text) into d as
    PREFIXname.sql, readable by the server's OS user; their paths by name."""
    paths = {}
    for name, text in scripts.items():
        paths[name] = os.path.join(d, "%s%s.sql" % (prefix, name))
        with open(paths[name], "w") as f:
            f.write(text)
        os.chmod(paths[name], 0o644)
    return paths


def pgbench(path, script, clients, seconds, opts):
    """Start pgbench (path) on a custom script, PGOPTIONS opts."""
    env = dict(os.environ, PGOPTIONS=opts)
    cmd = [path, "-n", "-f", script, "-c", str(clients),
           "-j", str(min(clients, 4)), "-T", str(seconds)]
    return subprocess.Popen(cmd, env=env, text=True, stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE, cwd="/")


def tps(p):
    """The transactions a second of a pgbench run started by pgbench()."""
    out, err = p.communicate()
    if p.returncode != 0:
        raise RuntimeError("pgbench failed: %s" % err.strip())
    for line in out.splitlines():
        if line.startswith("tps = "):
            return float(line.split()[2])
    raise RuntimeError("no tps in pgbench's output:\n" + out)
