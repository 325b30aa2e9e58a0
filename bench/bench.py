#!/usr/bin/python3
"""bench/bench.py: the measurements and the report of the bloomidx benchmark.

bench/run.sh sets up a throwaway cluster and calls this twice:

  bench.py measure --rows N --runs N --psql PSQL --raw raw.json ...
      Connects with psql (PGHOST, PGPORT, PGUSER, PGDATABASE from the
      environment), makes the data, and measures every contender; writes all
      raw figures to raw.json.
  bench.py report --raw raw.json --plan-choice FILE --out DIR --chart-script GP
      Writes DIR/results.md, DIR/results.csv and DIR/chart.png (gnuplot).

Standard library only (Debian's /usr/bin/python3).  Each figure is the
median over --runs repetitions after a warm-up, with the data and indexes in
shared buffers (pg_prewarm).
"""

import argparse
import csv
import datetime
import json
import math
import os
import re
import subprocess
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import common  # noqa: E402
from common import (TBLOOM_COLS, log, median, memory_gb,  # noqa: E402
                    cpu_model, load_avg)

# --- what is measured ------------------------------------------------------

MIXED_COLS = ["t", "u", "b", "d", "n", "f"]


def with_cols(value, ncols):
    """Index options giving each of ncols columns `value` bits."""
    return ", ".join("col%d=%d" % (i + 1, value) for i in range(ncols))


# Contenders: key, label, access method (None: no index), index options,
# whether each column gets its own index, which tables it supports.
CONTENDERS = [
    # The defaults are the sliced layout's; the row layout is named
    dict(key="bloomidx", label="bloomidx (defaults)", am="bloomidx",
         opts="", single=False, tables=("tbloom", "tmixed"),
         serial_build=True),
    dict(key="bloomidx_80x2", label="bloomidx (length=80, 2 bits/col)",
         am="bloomidx", opts="length=80, " + with_cols(2, 6),
         single=False, tables=("tbloom", "tmixed")),
    dict(key="bloomidx_row", label="bloomidx (layout=row)",
         am="bloomidx", opts="layout='row'", single=False,
         tables=("tbloom", "tmixed"), serial_build=True),
    dict(key="bloomidx_row_80x2",
         label="bloomidx (layout=row, length=80, 2 bits/col)",
         am="bloomidx", opts="layout='row', length=80, " + with_cols(2, 6),
         single=False, tables=("tbloom", "tmixed")),
    dict(key="bloom", label="contrib/bloom (defaults)", am="bloom",
         opts="", single=False, tables=("tbloom",)),
    dict(key="bloom_tuned", label="contrib/bloom (length=64, 7 bits/col)",
         am="bloom", opts="length=64, " + with_cols(7, 6),
         single=False, tables=("tbloom",)),
    # GIN over btree_gin: an exact inverted index on every column
    dict(key="gin", label="GIN (btree_gin), one 6-column index", am="gin",
         opts="", single=False, tables=("tbloom",), build_runs=1,
         skip_reason="measured on the int4 table only"),
    # BRIN's bloom operator class, sized for random data: a filter per
    # column per 4 pages (about 630 rows, all distinct; with the default
    # n_distinct_per_range of -0.1 the filters are too small to exclude
    # anything, and with the default 128 pages a range they do not fit a
    # page: "index row size ... exceeds maximum")
    dict(key="brin_bloom",
         label="BRIN bloom (pages_per_range=4, 700 values/range)", am="brin",
         opts="pages_per_range = 4",
         colfmt="%s int4_bloom_ops(n_distinct_per_range = 700)",
         single=False, tables=("tbloom",),
         skip_reason="measured on the int4 table only"),
    dict(key="btree6", label="btree, one 6-column index", am="btree",
         opts="", single=False, tables=("tbloom", "tmixed")),
    dict(key="btree1x6", label="btree, six 1-column indexes", am="btree",
         opts="", single=True, tables=("tbloom", "tmixed")),
    dict(key="seqscan", label="no index (seq scan)", am=None,
         opts="", single=False, tables=("tbloom", "tmixed")),
]
BASE = "bloom"      # ratios are to contrib/bloom with defaults
NCOLS = ("1col", "2col", "3col")

# Queries: (columns, name).  Present values come from one existing row,
# absent ones are outside every column's domain.
QUERY_COLS = {
    "tbloom": [["i2"], ["i2", "i5"], ["i1", "i3", "i6"]],
    "tmixed": [["b"], ["t", "d"], ["u", "n", "f"]],
}
ABSENT = {
    "i1": "-1", "i2": "-2", "i3": "-3", "i4": "-4", "i5": "-5", "i6": "-6",
    "t": "'absent-text'", "u": "'00000000-0000-0000-0000-000000000000'",
    "b": "-1", "d": "'1900-01-01'", "n": "-1.5", "f": "false",
}
# f (bool) has two values: an "absent" 3-column query still needs one
# absent column to match nothing, which u gives.

# Which metrics the report shows, with units.
QUERY_METRICS = [
    ("latency_ms", "latency ms"),
    ("index_ms", "bitmap index scan ms"),
    ("candidates", "candidate rows"),
    ("recheck_removed", "removed by recheck"),
    ("heap_blocks", "heap blocks"),
]


# --- talking to the server ---------------------------------------------------

class Pg:
    """Runs SQL through psql against the benchmark cluster."""

    def __init__(self, psql):
        self.psql = psql

    def run(self, script):
        """Run a psql script; return its stdout (errors raise)."""
        cmd = [self.psql, "-X", "-q", "-A", "-t", "-v", "ON_ERROR_STOP=1"]
        p = subprocess.run(cmd, input=script, text=True,
                           stdout=subprocess.PIPE, stderr=subprocess.PIPE)
        if p.returncode != 0:
            raise RuntimeError("psql failed (exit %d):\n%s\n--- script ---\n%s"
                               % (p.returncode, p.stderr.strip(),
                                  script[:2000]))
        return p.stdout

    def run_messages(self, script):
        """Run a psql script; return what the server said on stderr
        (NOTICE, DEBUG, ...)."""
        cmd = [self.psql, "-X", "-q", "-A", "-t", "-v", "ON_ERROR_STOP=1"]
        p = subprocess.run(cmd, input=script, text=True,
                           stdout=subprocess.PIPE, stderr=subprocess.PIPE)
        if p.returncode != 0:
            raise RuntimeError("psql failed (exit %d):\n%s\n--- script ---\n%s"
                               % (p.returncode, p.stderr.strip(),
                                  script[:2000]))
        return p.stderr

    def value(self, sql):
        """The single value a query returns, as a string."""
        return self.run(sql + ";\n").strip()

    def times(self, script, setup=""):
        """Run setup, then script with \\timing on and the query output
        dropped; return the ms of every statement of script."""
        out = self.run(setup + "\n\\o /dev/null\n\\timing on\n" + script)
        return [float(m) for m in re.findall(r"^Time: ([0-9.]+) ms",
                                             out, re.M)]


# --- data -----------------------------------------------------------------------

# The tables, seeded, as SQL with %d for the row count: bench/plan_choice.py
# makes them from here too, so that either can reuse the other's.
TABLE_SQL = {
    "tbloom": common.TBLOOM_SQL,
    "tmixed": """
SELECT setseed(0.43);
CREATE TABLE tmixed AS
SELECT
  'item-' || (random() * 1000000)::int AS t,
  md5(random()::text)::uuid AS u,
  (random() * 1e12)::bigint AS b,
  date '2000-01-01' + (random() * 10000)::int AS d,
  round((random() * 1000000)::numeric, 2) AS n,
  random() < 0.5 AS f
FROM generate_series(1, %d);
VACUUM (FREEZE, ANALYZE) tmixed;
""",
}


def make_tables(pg, rows):
    """Create tbloom (contrib/bloom's example) and tmixed, seeded."""
    t0 = time.time()
    pg.run(TABLE_SQL["tbloom"] % rows + TABLE_SQL["tmixed"] % rows
           + "CHECKPOINT;\n")
    log("tables made in %.1f s" % (time.time() - t0))


def present_values(pg, table, cols, rows):
    """Column values of one existing row (the one in the middle)."""
    out = pg.value("SELECT %s FROM %s OFFSET %d LIMIT 1"
                   % (", ".join("quote_literal(%s)" % c for c in cols),
                      table, rows // 2))
    vals = [v[1:-1] if re.fullmatch(r"'-?[0-9.]+'", v) else v
            for v in out.split("|")]
    return dict(zip(cols, vals))


def where(cols, values):
    return " AND ".join("%s = %s" % (c, values[c]) for c in cols)


# A 10-value IN list on one column and an equality on another (tbloom):
# the present row's value and the nine after it, then its value or an
# absent one in the second column.
IN_QUERY = {"tbloom": ("i2", "i5")}


def in_queries(table, values):
    if table not in IN_QUERY:
        return []
    c1, c2 = IN_QUERY[table]
    v = int(values[c1])
    lst = ", ".join(str(v + i) for i in range(10))
    return [dict(name="in10_%s" % kind, kind=kind, cols=[c1, c2],
                 where="%s IN (%s) AND %s = %s"
                 % (c1, lst, c2, values[c2] if kind == "present"
                    else ABSENT[c2]))
            for kind in ("present", "absent")]


# --- one contender -------------------------------------------------------------

def index_ddl(c, table, cols, prefix):
    """CREATE INDEX statements of contender c on table (names start prefix)."""
    if c["am"] is None:
        return []
    with_ = " WITH (%s)" % c["opts"] if c["opts"] else ""
    colfmt = c.get("colfmt", "%s")
    if c["single"]:
        return ["CREATE INDEX %s_%s ON %s USING %s (%s)%s"
                % (prefix, col, table, c["am"], colfmt % col, with_)
                for col in cols]
    return ["CREATE INDEX %s ON %s USING %s (%s)%s"
            % (prefix, table, c["am"], ", ".join(colfmt % col for col in cols),
               with_)]


def index_names(pg, table):
    out = pg.run("SELECT indexrelid::regclass FROM pg_index "
                 "WHERE indrelid = '%s'::regclass;\n" % table)
    return [l for l in out.split("\n") if l]


def plan_settings(c):
    """Settings that make the planner use contender c (or nothing)."""
    if c["am"] is None:
        return ("SET enable_indexscan = off; SET enable_bitmapscan = off; "
                "SET enable_indexonlyscan = off;")
    if c["am"] in ("bloom", "bloomidx"):
        return "SET enable_seqscan = off; SET enable_indexscan = off;"
    return "SET enable_seqscan = off;"


def walk(node):
    yield node
    for child in node.get("Plans", []):
        yield from walk(child)


def explain_figures(plan_json):
    """Index time, candidates, recheck, heap blocks and plan shape of a plan."""
    top = plan_json[0]
    root = top["Plan"]
    nodes = list(walk(root))
    bis = [n for n in nodes if n["Node Type"] == "Bitmap Index Scan"]
    bhs = [n for n in nodes if n["Node Type"] == "Bitmap Heap Scan"]
    f = dict(exec_ms=top["Execution Time"], plan_ms=top.get("Planning Time"))
    if bis:
        f["index_ms"] = sum(n["Actual Total Time"] for n in bis)
        if len(bis) == 1:
            f["candidates"] = bis[0]["Actual Rows"]
    if bhs:
        h = bhs[0]
        f["recheck_removed"] = h.get("Rows Removed by Index Recheck", 0)
        f["heap_blocks"] = h.get("Exact Heap Blocks", 0) + \
            h.get("Lossy Heap Blocks", 0)
        f["lossy_blocks"] = h.get("Lossy Heap Blocks", 0)
        f["matches"] = h["Actual Rows"]
    scans = [n for n in nodes if n["Node Type"] in (
        "Seq Scan", "Index Scan", "Index Only Scan", "Bitmap Heap Scan")]
    if scans and "matches" not in f:
        f["matches"] = scans[0]["Actual Rows"]
    shape = []
    for n in nodes:
        t = n["Node Type"]
        if t in ("Bitmap Index Scan", "Index Scan", "Index Only Scan"):
            shape.append("%s(%s)" % (t, n.get("Index Name", "?")))
        elif t in ("Seq Scan", "BitmapAnd", "BitmapOr"):
            shape.append(t)
    f["plan"] = " / ".join(shape)
    return f


def measure_queries(pg, c, table, queries, runs):
    """Latency and EXPLAIN figures of every query for contender c."""
    res = {}
    settings = plan_settings(c)
    for q in queries:
        sql = "SELECT * FROM %s WHERE %s" % (table, q["where"])
        explain = "EXPLAIN (ANALYZE, BUFFERS, FORMAT JSON) " + sql
        # Warm-up, then runs EXPLAIN ANALYZE for the node figures.
        script = settings + "\n" + "\n".join(
            [explain + ";"] * (runs + 1))
        out = pg.run(script)
        plans = [json.loads(chunk) for chunk in split_json(out)]
        figs = [explain_figures(p) for p in plans[1:]]
        # Warm-up, then runs plain executions timed by psql (output dropped).
        ms = pg.times("\n".join([sql + ";"] * (runs + 1)),
                      setup=settings)
        assert len(ms) == runs + 1, "expected %d timings, got %r" % (runs + 1, ms)
        ms = ms[1:]
        r = dict(latency_ms=median(ms), latency_all=ms,
                 plan=figs[-1]["plan"])
        for k in ("index_ms", "candidates", "recheck_removed",
                  "heap_blocks", "lossy_blocks", "matches", "exec_ms",
                  "plan_ms"):
            r[k] = median([f.get(k) for f in figs])
        if c["am"] is not None and c["am"] not in r["plan"] and \
                "Index" not in r["plan"]:
            r["note"] = "index not used"
        res[q["name"]] = r
        log("  %-12s %8.2f ms (planning %s, execution %s)  idx %s  cand %s"
            "  plan %s"
            % (q["name"], r["latency_ms"], fmt(r["plan_ms"]),
               fmt(r["exec_ms"]), fmt(r["index_ms"]), fmt(r["candidates"]),
               r["plan"]))
    return res


def split_json(out):
    """Split psql output of several EXPLAIN (FORMAT JSON) into documents."""
    docs, buf, depth = [], [], 0
    for line in out.splitlines():
        if not line.strip() and depth == 0:
            continue
        buf.append(line)
        depth += line.count("[") - line.count("]")
        if depth == 0 and buf:
            docs.append("\n".join(buf))
            buf = []
    return docs


def measure_insert(pg, c, table, cols, nrows, runs):
    """Median ms to insert nrows rows into a fresh copy of table with c's
    indexes (no index for the seq scan contender)."""
    ms = []
    for _ in range(runs):
        ddl = index_ddl(c, "tins", cols, "tins_idx")
        setup = ("DROP TABLE IF EXISTS tins;\n"
                 "CREATE TABLE tins (LIKE %s);\n" % table +
                 "".join(d + ";\n" for d in ddl) +
                 "CHECKPOINT;\n")
        t = pg.times("INSERT INTO tins SELECT * FROM %s LIMIT %d;\n"
                     % (table, nrows), setup=setup)
        assert len(t) == 1
        ms.append(t[0])
        pg.run("DROP TABLE tins;\n")
    return median(ms), ms


def latency_percentiles(pg, from_where):
    """Median, 99th and 99.9th percentiles and maximum, in ms, of the ms
    column of the rows from_where ("FROM t WHERE ...") gives."""
    v = pg.value("SELECT concat_ws(' ', p[1], p[2], p[3], mx) FROM "
                 "(SELECT percentile_cont(ARRAY[0.5, 0.99, 0.999]) WITHIN "
                 "GROUP (ORDER BY ms) AS p, max(ms) AS mx %s) s" % from_where)
    p50, p99, p999, mx = (float(x) for x in v.split())
    return dict(p50=p50, p99=p99, p999=p999, max=mx)


def measure_insert_latency(pg, c, table, cols, nrows):
    """Latency of single-row INSERT statements into a fresh copy of table
    with c's indexes: nrows of them in one PL/pgSQL loop, each timed with
    clock_timestamp(); returns the median, 99th and 99.9th percentiles and
    the maximum, in ms.  A sliced index merges its pending rows in steps,
    each inside an insert that starts a pending page: the DEBUG1 line each
    merge logs gives the number of merge steps and the longest one (the
    merge work one insert paid)."""
    ddl = index_ddl(c, "tlat", cols, "tlat_idx")
    msgs = pg.run_messages(
           "DROP TABLE IF EXISTS tlat, lat_ms;\n"
           "CREATE TABLE tlat (LIKE %s);\n" % table +
           "".join(d + ";\n" for d in ddl) +
           "CREATE UNLOGGED TABLE lat_ms (ms float8);\n"
           "CHECKPOINT;\n"
           "SET client_min_messages = debug1;\n"
           "DO $$\n"
           "DECLARE r %s; t0 timestamptz;\n" % table +
           "BEGIN\n"
           "  FOR r IN SELECT * FROM %s LIMIT %d LOOP\n" % (table, nrows) +
           "    t0 := clock_timestamp();\n"
           "    INSERT INTO tlat VALUES (r.*);\n"
           "    INSERT INTO lat_ms VALUES (1000 * extract(epoch FROM "
           "clock_timestamp() - t0));\n"
           "  END LOOP;\n"
           "END $$;\n")
    r = latency_percentiles(pg, "FROM lat_ms")
    pg.run("DROP TABLE tlat; DROP TABLE lat_ms;\n")
    # "merged N rows from N pending pages in X ms (Y ms CPU)", and
    # "allocated N pages of stripe N in X ms (Y ms CPU)" for the steps that
    # allocate a new stripe's pages instead
    steps = [(float(w), float(c) if c else None) for w, c in re.findall(
        r"(?:merged \d+ rows from \d+ pending pages|allocated \d+ pages "
        r"of stripe \d+) in ([0-9.]+) ms(?: \(([0-9.]+) ms CPU\))?", msgs)]
    cpus = [c for _, c in steps if c is not None]
    r.update(n=nrows, merges=len(steps),
             merge_max=max(w for w, _ in steps) if steps else None,
             merge_cpu_max=max(cpus) if cpus else None)
    return r


def measure_insert_latency_pair(pg, c1, c2, table, cols, nrows):
    """Single-row INSERT latency of two contenders measured in alternation:
    each row of table is inserted into a fresh copy with c1's index and
    into one with c2's, in turn (which goes first alternates), each
    statement timed with clock_timestamp(), so that both see the same
    machine at the same moments.  Returns, per contender, the median, 99th
    and 99.9th percentiles and the maximum, in ms."""
    ddl1 = index_ddl(c1, "tlat1", cols, "tlat1_idx")
    ddl2 = index_ddl(c2, "tlat2", cols, "tlat2_idx")
    pg.run("DROP TABLE IF EXISTS tlat1, tlat2, lat_pair;\n"
           "CREATE TABLE tlat1 (LIKE %s);\n" % table +
           "CREATE TABLE tlat2 (LIKE %s);\n" % table +
           "".join(d + ";\n" for d in ddl1 + ddl2) +
           "CREATE UNLOGGED TABLE lat_pair (which int, ms float8);\n"
           "CHECKPOINT;\n"
           "DO $$\n"
           "DECLARE r %s; t0 timestamptz; t1 timestamptz; t2 timestamptz;\n"
           % table +
           "  odd bool := false;\n"
           "BEGIN\n"
           "  FOR r IN SELECT * FROM %s LIMIT %d LOOP\n" % (table, nrows) +
           "    odd := NOT odd;\n"
           "    IF odd THEN\n"
           "      t0 := clock_timestamp();\n"
           "      INSERT INTO tlat1 VALUES (r.*);\n"
           "      t1 := clock_timestamp();\n"
           "      INSERT INTO tlat2 VALUES (r.*);\n"
           "      t2 := clock_timestamp();\n"
           "      INSERT INTO lat_pair VALUES\n"
           "        (1, 1000 * extract(epoch FROM t1 - t0)),\n"
           "        (2, 1000 * extract(epoch FROM t2 - t1));\n"
           "    ELSE\n"
           "      t0 := clock_timestamp();\n"
           "      INSERT INTO tlat2 VALUES (r.*);\n"
           "      t1 := clock_timestamp();\n"
           "      INSERT INTO tlat1 VALUES (r.*);\n"
           "      t2 := clock_timestamp();\n"
           "      INSERT INTO lat_pair VALUES\n"
           "        (2, 1000 * extract(epoch FROM t1 - t0)),\n"
           "        (1, 1000 * extract(epoch FROM t2 - t1));\n"
           "    END IF;\n"
           "  END LOOP;\n"
           "END $$;\n")
    out = {}
    for which, c in ((1, c1), (2, c2)):
        out[c["key"]] = latency_percentiles(
            pg, "FROM lat_pair WHERE which = %d" % which)
    pg.run("DROP TABLE tlat1, tlat2, lat_pair;\n")
    out["n"] = nrows
    return out


def measure_contender(pg, c, table, cols, queries, a):
    """Build time, size, insert time and query figures of contender c."""
    r = dict(key=c["key"])
    if table not in c["tables"]:
        r["skipped"] = c.get("skip_reason",
                             "contrib/bloom has operator classes for int4 "
                             "and text only")
        log("%s: skipped (%s)" % (c["label"], r["skipped"]))
        return r
    ddl = index_ddl(c, table, cols, "bx_%s_%s" % (table, c["key"]))
    if ddl:
        def timed_builds(setup=""):
            """ms of each of the contender's builds, from no index."""
            builds = []
            for i in range(min(a.build_runs, c.get("build_runs", a.build_runs))):
                drop = "".join("DROP INDEX IF EXISTS %s;\n" % n
                               for n in index_names(pg, table))
                pg.run(drop + "CHECKPOINT;\n")
                t = pg.times("".join(d + ";\n" for d in ddl), setup=setup)
                assert len(t) == len(ddl)
                builds.append(sum(t))
            return builds

        if c.get("serial_build") and table == "tbloom":
            # Also with no parallel workers (contrib/bloom builds serially)
            serial = timed_builds("SET max_parallel_maintenance_workers = 0;")
            r["build_serial_s"] = median(serial) / 1000.0
            log("%s: serial build %.2f s (%s)"
                % (c["label"], r["build_serial_s"],
                   ", ".join("%.2f" % (b / 1000.0) for b in serial)))
        builds = timed_builds()
        r["build_s"] = median(builds) / 1000.0
        r["build_all_s"] = [b / 1000.0 for b in builds]
        names = index_names(pg, table)
        r["size_bytes"] = int(pg.value(
            "SELECT sum(pg_relation_size(i)) FROM unnest(ARRAY[%s]::regclass[]) i"
            % ", ".join("'%s'" % n for n in names)))
        pg.run("VACUUM ANALYZE %s;\n" % table +
               "".join("SELECT pg_prewarm('%s');\n" % n for n in names) +
               "SELECT pg_prewarm('%s');\n" % table)
        log("%s: build %.2f s (%s), size %.1f MB"
            % (c["label"], r["build_s"],
               ", ".join("%.2f" % b for b in r["build_all_s"]),
               r["size_bytes"] / 1048576.0))
    else:
        pg.run("SELECT pg_prewarm('%s');\n" % table)
        log("%s:" % c["label"])
    r["queries"] = measure_queries(pg, c, table, queries, a.runs)
    for n in index_names(pg, table):
        pg.run("DROP INDEX %s;\n" % n)
    ins, ins_all = measure_insert(pg, c, table, cols, a.insert_rows,
                                  a.insert_runs)
    r["insert_ms"] = ins
    r["insert_all_ms"] = ins_all
    log("  insert %d rows: %.1f ms (%s)"
        % (a.insert_rows, ins, ", ".join("%.1f" % x for x in ins_all)))
    if table == "tbloom":
        r["insert_latency"] = lat = measure_insert_latency(
            pg, c, table, cols, a.latency_rows)
        log("  %d single-row inserts: median %.3f ms, p99 %.3f, p99.9 %.3f, "
            "max %.1f; %d merge steps, longest %s ms (%s ms CPU)"
            % (lat["n"], lat["p50"], lat["p99"], lat["p999"], lat["max"],
               lat["merges"], fmt(lat["merge_max"], 3),
               fmt(lat["merge_cpu_max"], 3)))
    return r


# --- ad hoc filters ----------------------------------------------------------

def measure_filters(pg, a):
    """bloom_contains probes/s and bloom_agg build rate beside a hash
    semi-join doing the same filtering (tbloom.i1 against a key set)."""
    have = pg.value("SELECT count(*) FROM pg_proc WHERE proname IN "
                    "('bloom_agg', 'bloom_contains')")
    if int(have) < 2:
        reason = ("bloom_agg/bloom_contains are not in bloomidx--1.0.sql yet "
                  "(the bloomfilter type is still being written)")
        log("filters: skipped: " + reason)
        return dict(skipped=reason)
    nkeys = max(100, a.rows // 100)
    # Keys: nkeys distinct values, half of them present in tbloom.i1.
    pg.run("""
DROP TABLE IF EXISTS fkeys;
SELECT setseed(0.44);
CREATE TABLE fkeys AS
SELECT DISTINCT k FROM (
  SELECT i1 AS k FROM tbloom WHERE i2 < %d
  UNION ALL
  SELECT 1000000 + (random() * 1000000000)::int FROM generate_series(1, %d)
) s;
VACUUM ANALYZE fkeys;
SELECT pg_prewarm('fkeys');
SELECT pg_prewarm('tbloom');
""" % (int(1000000.0 * nkeys / 2 / a.rows) + 1, nkeys // 2))
    nkeys = int(pg.value("SELECT count(*) FROM fkeys"))
    runs = a.runs
    r = dict(nkeys=nkeys, rows=a.rows)
    # bloom_agg over the keys.
    t = pg.times("SELECT bloom_agg(k) FROM fkeys;\n" * (runs + 1))[1:]
    r["agg_ms"] = median(t)
    r["agg_rate"] = nkeys / (r["agg_ms"] / 1000.0)
    # The filter in a one-row table, then a probe of every tbloom row.
    pg.run("DROP TABLE IF EXISTS ff; "
           "CREATE TABLE ff AS SELECT bloom_agg(k) AS f FROM fkeys;\n")
    probe = ("SELECT count(*) FROM tbloom "
             "WHERE bloom_contains((SELECT f FROM ff), i1)")
    t = pg.times((probe + ";\n") * (runs + 1))[1:]
    r["probe_ms"] = median(t)
    # The same scan with a trivial per-row test, to isolate the probe cost.
    scan = "SELECT count(*) FROM tbloom WHERE i1 <> -1"
    t = pg.times((scan + ";\n") * (runs + 1))[1:]
    r["scan_ms"] = median(t)
    r["probe_rate"] = a.rows / (r["probe_ms"] / 1000.0)
    net = r["probe_ms"] - r["scan_ms"]
    r["probe_rate_net"] = a.rows / (net / 1000.0) if net > 0 else None
    r["bloom_matches"] = int(pg.value(probe))
    # Hash semi-join over the same keys.
    semi = ("SELECT count(*) FROM tbloom WHERE i1 IN (SELECT k FROM fkeys)")
    setting = "SET enable_mergejoin = off; SET enable_nestloop = off;\n"
    t = pg.times((semi + ";\n") * (runs + 1), setup=setting)[1:]
    r["semi_ms"] = median(t)
    r["semi_rate"] = a.rows / (r["semi_ms"] / 1000.0)
    out = pg.run(setting + "EXPLAIN (ANALYZE, FORMAT JSON) " + semi + ";\n")
    plan = json.loads(split_json(out)[0])
    hashes = [n for n in walk(plan[0]["Plan"]) if n["Node Type"] == "Hash"]
    r["semi_plan"] = " / ".join(
        n["Node Type"] + (" (%s)" % n["Join Type"] if "Join Type" in n and
                          n["Join Type"] != "Inner" else "")
        for n in walk(plan[0]["Plan"]))
    if hashes:
        r["hash_build_ms"] = hashes[0]["Actual Total Time"]
        r["hash_build_rate"] = nkeys / (r["hash_build_ms"] / 1000.0)
    r["exact_matches"] = int(pg.value(semi))
    log("filters: %d keys; bloom_agg %.1f ms (%.2f M values/s); probe %.1f ms "
        "(%.2f M rows/s, net %s); semi-join %.1f ms; matches %d (exact %d)"
        % (nkeys, r["agg_ms"], r["agg_rate"] / 1e6, r["probe_ms"],
           r["probe_rate"] / 1e6,
           fmt(r["probe_rate_net"] and r["probe_rate_net"] / 1e6),
           r["semi_ms"], r["bloom_matches"], r["exact_matches"]))
    return r


# The filter variants: how each is built, as a bloom_agg call over k.
FILTER_VARIANTS = [
    ("plain", "bloom_agg(k, %(n)d, 0.01)"),
    ("blocked", "bloom_agg(k, bloom_empty(%(n)d, 0.01, blocked => true))"),
    ("counting", "bloom_agg(k, bloom_empty(%(n)d, 0.01, counting => true))"),
    ("growing (from n/100, growth 2)", "bloom_agg(k, %(n100)d, 0.01, 2)"),
]


def growing_size_bound(mult, growth, p):
    """The least size, against one filter sized up front, of a growing
    filter after mult times its first capacity c, its layers c * growth^i,
    whose layers' rates sum to at most p (as the compound rate's bound
    needs): the rates proportional to the layers' capacities (src/README).
    Bits counted as n ln(1/rate) / ln(2)^2."""
    caps = []
    while sum(caps) < mult:
        caps.append(float(growth) ** len(caps))
    room = sum(caps)
    nats = sum(c * math.log(room / (c * p)) for c in caps)
    return nats / (mult * math.log(1.0 / p))


def variants_missing(pg):
    """Why the filter variants cannot be measured (bloomidx < 1.1), or None."""
    have = pg.value("SELECT count(*) FROM pg_proc WHERE proname = "
                    "'bloom_agg_template_transfn'")
    if int(have) < 1:
        return "the filter variants are not installed (bloomidx < 1.1)"
    return None


def measure_filter_variants(pg, a):
    """Per filter variant at a 1% target over n keys: build rate, probe
    rate, measured false-positive rate over n absent keys and size; and the
    growth of a growing filter (RedisBloom's EXPANSION): layers and size
    against a filter sized up front, after 100x its first capacity."""
    reason = variants_missing(pg)
    if reason:
        log("filter variants: skipped: " + reason)
        return dict(skipped=reason)
    n = max(10000, a.rows // 10)
    runs = a.runs
    pg.run("DROP TABLE IF EXISTS fvkeys, fvprobe, fvf;\n"
           "CREATE TABLE fvkeys AS SELECT i AS k FROM generate_series(1, %d) i;\n"
           "CREATE TABLE fvprobe AS SELECT i AS k FROM generate_series(%d, %d) i;\n"
           "VACUUM ANALYZE fvkeys; VACUUM ANALYZE fvprobe;\n"
           "CREATE TABLE fvf (name text, f bloomfilter);\n"
           % (n, n + 1, 2 * n))
    out = []
    for name, expr in FILTER_VARIANTS:
        e = expr % dict(n=n, n100=max(1, n // 100))
        t = pg.times(("SELECT %s FROM fvkeys;\n" % e) * (runs + 1),
                     setup="SET max_parallel_workers_per_gather = 0;")[1:]
        r = dict(name=name, build_ms=median(t))
        r["build_rate"] = n / (r["build_ms"] / 1000.0)
        pg.run("INSERT INTO fvf SELECT '%s', %s FROM fvkeys;" % (name, e))
        probe = ("SELECT count(*) FROM fvprobe "
                 "WHERE bloom_contains((SELECT f FROM fvf WHERE name = '%s'), k)"
                 % name)
        t = pg.times((probe + ";\n") * (runs + 1),
                     setup="SET max_parallel_workers_per_gather = 0;")[1:]
        r["probe_ms"] = median(t)
        r["probe_rate"] = n / (r["probe_ms"] / 1000.0)
        r["fpr"] = int(pg.value(probe)) / float(n)
        r["size_bytes"] = int(pg.value(
            "SELECT size_bytes FROM fvf, bloom_info(f) WHERE name = '%s'"
            % name))
        r["layers"] = int(pg.value(
            "SELECT layers FROM fvf, bloom_info(f) WHERE name = '%s'" % name))
        out.append(r)
        log("filter variant %s: build %.2f M values/s, probe %.2f M/s, "
            "fpr %.4f, %d bytes, %d layers"
            % (name, r["build_rate"] / 1e6, r["probe_rate"] / 1e6, r["fpr"],
               r["size_bytes"], r["layers"]))
    g = dict(n=n, first_capacity=max(1, n // 100))
    g["plain_bytes"] = int(pg.value(
        "SELECT size_bytes FROM bloom_info(bloom_empty(%d, 0.01))" % n))
    grow = [r for r in out if r["name"].startswith("growing")][0]
    g["growing_bytes"] = grow["size_bytes"]
    g["size_ratio"] = g["growing_bytes"] / float(g["plain_bytes"])
    g["layers"] = grow["layers"]
    g["fpr"] = grow["fpr"]
    g["size_ratio_bound"] = growing_size_bound(
        n / float(g["first_capacity"]), 2, 0.01)
    log("growing filter after 100x its first capacity: %d layers, %.2fx the "
        "size of a filter sized up front (no layered filter with these "
        "layers goes below %.2fx), fpr %.4f"
        % (g["layers"], g["size_ratio"], g["size_ratio_bound"], g["fpr"]))
    pg.run("DROP TABLE fvkeys, fvprobe, fvf;")
    return dict(n=n, variants=out, growth=g)


# A blocked filter against a plain one of the same size, both larger than
# the last-level cache in the full mode: (filter MB, probes) per mode.
BLOCKED_PROBE_SIZES = {"full": (128, 10000000), "quick": (32, 1000000),
                       "smoke": (1, 100000)}


def measure_blocked_probes(pg, a):
    """bloom_contains probes of a blocked filter and of a plain filter of
    the same bits holding the same values (the plain filter with the 7 hash
    functions plain sizing gives a 1% target), stored out of line and probed
    from a scalar subquery, the same SQL for both: values that were added
    (hits: every bit tested) and values that were not (misses).  Also the
    same scan with a trivial test and a probe of one value (the filter's
    detoasting), to split the time into executor, detoasting and probes.
    Then the same probes through the array form, bloom_contains(filter,
    int[]), which probes in prefetched batches without the executor's cost
    per row: the arrays stored beforehand, timed with a read of the array
    alone."""
    reason = variants_missing(pg)
    if reason:
        log("blocked probes: skipped: " + reason)
        return dict(skipped=reason)
    mb, nprobe = BLOCKED_PROBE_SIZES.get(a.mode, BLOCKED_PROBE_SIZES["full"])
    bits = int(pg.value("SELECT nbits FROM bloom_info(bloom_empty(1000000, "
                        "0.01, blocked => true))"))
    n = int(mb * 1024 * 1024 * 8 * 1000000.0 / bits)
    nprobe = min(nprobe, n)
    # The plain filter's size as a literal: a template computed by a
    # subquery is an argument the planner cannot fold, so bloom_empty_raw
    # would allocate and zero the whole filter again for every row.
    nbits = int(pg.value("SELECT nbits FROM bloom_info(bloom_empty(%d, "
                         "0.01, blocked => true))" % n))
    pg.run("""
SET max_parallel_workers_per_gather = 0;
DROP TABLE IF EXISTS fbp;
CREATE TABLE fbp (name text, f bloomfilter);
ALTER TABLE fbp ALTER COLUMN f SET STORAGE EXTERNAL;
INSERT INTO fbp SELECT 'blocked',
  bloom_agg(g, bloom_empty(%(n)d, 0.01, blocked => true))
  FROM generate_series(1, %(n)d) g;
INSERT INTO fbp SELECT 'plain', bloom_agg(g, bloom_empty_raw(%(nbits)d, 7))
  FROM generate_series(1, %(n)d) g;
DROP TABLE IF EXISTS fbpa;
CREATE TABLE fbpa (kind text, a int[]);
ALTER TABLE fbpa ALTER COLUMN a SET STORAGE EXTERNAL;
INSERT INTO fbpa SELECT 'hit', array_agg(g ORDER BY g)
  FROM generate_series(1, %(p)d) g;
INSERT INTO fbpa SELECT 'miss', array_agg(g ORDER BY g)
  FROM generate_series(%(n)d + 1, %(n)d + %(p)d) g;
""" % dict(n=n, p=nprobe, nbits=nbits))
    r = dict(mb=mb, n=n, probes=nprobe)
    if pg.value("SELECT count(DISTINCT nbits) FROM fbp, bloom_info(f)") != "1":
        raise RuntimeError("blocked probes: the plain and blocked filters "
                           "differ in size")
    for name in ("plain", "blocked"):
        r[name + "_bytes"] = int(pg.value(
            "SELECT size_bytes FROM fbp, bloom_info(f) WHERE name = '%s'"
            % name))
    runs = 1 if a.mode == "smoke" else min(a.runs, 3)
    setup = "SET max_parallel_workers_per_gather = 0;"

    def q(name, lo):
        return ("SELECT count(*) FROM generate_series(%d, %d) g WHERE "
                "bloom_contains((SELECT f FROM fbp WHERE name = '%s'), g);\n"
                % (lo, lo + nprobe - 1, name))
    base = ("SELECT count(*) FROM generate_series(1, %d) g WHERE g <> -1;\n"
            % nprobe)
    one = ("SELECT count(*) FROM generate_series(1, 1) g WHERE "
           "bloom_contains((SELECT f FROM fbp WHERE name = '%s'), g);\n")
    # Interleaved, so that both see the same machine: one script per round.
    def qa(name, kind):
        return ("SELECT cardinality(bloom_contains((SELECT f FROM fbp WHERE "
                "name = '%s'), a)) FROM fbpa WHERE kind = '%s';\n"
                % (name, kind))

    def qa_matches(name, kind):
        return ("SELECT count(*) FROM fbpa, unnest(bloom_contains((SELECT f "
                "FROM fbp WHERE name = '%s'), a)) x WHERE kind = '%s' AND x"
                % (name, kind))
    base_a = "SELECT cardinality(a) FROM fbpa WHERE kind = '%s';\n"
    keys = [(kind, name) for kind in ("hit", "miss")
            for name in ("plain", "blocked")]
    t = dict((k, []) for k in keys)
    ta = dict((k, []) for k in keys)
    t_base, t_one = [], dict(plain=[], blocked=[])
    t_base_a = dict(hit=[], miss=[])
    for i in range(runs + 1):
        script = base + one % "plain" + one % "blocked"
        for kind, name in keys:
            script += q(name, 1 if kind == "hit" else n + 1)
        script += base_a % "hit" + base_a % "miss"
        for kind, name in keys:
            script += qa(name, kind)
        ts = pg.times(script, setup=setup)
        if i == 0:
            continue        # warm-up
        t_base.append(ts[0])
        t_one["plain"].append(ts[1])
        t_one["blocked"].append(ts[2])
        for j, k in enumerate(keys):
            t[k].append(ts[3 + j])
        t_base_a["hit"].append(ts[3 + len(keys)])
        t_base_a["miss"].append(ts[4 + len(keys)])
        for j, k in enumerate(keys):
            ta[k].append(ts[5 + len(keys) + j])
    r["base_ms"] = median(t_base)
    for name in ("plain", "blocked"):
        r[name + "_detoast_ms"] = median(t_one[name])
    for kind in ("hit", "miss"):
        for name in ("plain", "blocked"):
            r["%s_%s_ms" % (kind, name)] = median(t[(kind, name)])
            r["%s_%s_matches" % (kind, name)] = int(pg.value(
                q(name, 1 if kind == "hit" else n + 1).strip().rstrip(";")))
        r[kind + "_ratio"] = r[kind + "_plain_ms"] / r[kind + "_blocked_ms"]
        net = dict((name, r["%s_%s_ms" % (kind, name)] - r["base_ms"] -
                    r[name + "_detoast_ms"]) for name in ("plain", "blocked"))
        r[kind + "_net_ratio"] = (net["plain"] / net["blocked"]
                                  if net["blocked"] > 0 else None)
        log("blocked probes, %d MB filters, %d probes (%s): plain %.0f ms, "
            "blocked %.0f ms, ratio %.2f (net of scan %.0f ms and detoasting "
            "%.0f/%.0f ms: %s); matches %d/%d"
            % (mb, nprobe, kind + "es" if kind == "miss" else kind + "s",
               r[kind + "_plain_ms"], r[kind + "_blocked_ms"],
               r[kind + "_ratio"], r["base_ms"], r["plain_detoast_ms"],
               r["blocked_detoast_ms"], fmt(r[kind + "_net_ratio"]),
               r[kind + "_plain_matches"], r[kind + "_blocked_matches"]))
    # the array form
    for kind in ("hit", "miss"):
        r["array_%s_base_ms" % kind] = median(t_base_a[kind])
        for name in ("plain", "blocked"):
            r["array_%s_%s_ms" % (kind, name)] = median(ta[(kind, name)])
            r["array_%s_%s_matches" % (kind, name)] = int(pg.value(
                qa_matches(name, kind)))
        r["array_%s_ratio" % kind] = (r["array_%s_plain_ms" % kind] /
                                      r["array_%s_blocked_ms" % kind])
        net = dict((name, r["array_%s_%s_ms" % (kind, name)] -
                    r["array_%s_base_ms" % kind] - r[name + "_detoast_ms"])
                   for name in ("plain", "blocked"))
        r["array_%s_net_ratio" % kind] = (net["plain"] / net["blocked"]
                                          if net["blocked"] > 0 else None)
        log("blocked probes, array form, %d MB filters, %d probes (%s): "
            "plain %.0f ms, blocked %.0f ms, ratio %.2f (net of reading the "
            "array %.0f ms and detoasting: %s); matches %d/%d"
            % (mb, nprobe, kind + "es" if kind == "miss" else kind + "s",
               r["array_%s_plain_ms" % kind], r["array_%s_blocked_ms" % kind],
               r["array_%s_ratio" % kind], r["array_%s_base_ms" % kind],
               fmt(r["array_%s_net_ratio" % kind]),
               r["array_%s_plain_matches" % kind],
               r["array_%s_blocked_matches" % kind]))
    pg.run("DROP TABLE fbp, fbpa;")
    return r


# --- the machine -----------------------------------------------------------------

def machine_info(pg, a):
    m = {}
    m["cores"] = os.cpu_count()
    m["memory_gb"] = memory_gb()
    m["cpu"] = cpu_model()
    m["pg_version"] = pg.value("SHOW server_version")
    m["pg_version_full"] = pg.value("SELECT version()")
    m["date"] = datetime.datetime.now(datetime.timezone.utc).strftime(
        "%Y-%m-%d %H:%M UTC")
    m["commit"] = a.source
    m["settings"] = a.settings.split()
    m["cflags"] = a.cflags
    return m


# --- measure ---------------------------------------------------------------------

def cmd_measure(a):
    pg = Pg(a.psql)
    if a.mode == "smoke":
        a.build_runs, a.insert_runs = 1, 1
    else:
        a.build_runs = min(a.runs, 3)
        a.insert_runs = min(a.runs, 3)
    a.insert_rows = max(100, min(1000000, a.rows // 10))
    # Enough single-row inserts to fill a sliced index's pending list once
    a.latency_rows = max(100, min(70000, a.rows // 10))
    t_start = time.time()
    loads = [load_avg()]
    pg.run("CREATE EXTENSION bloomidx; CREATE EXTENSION bloom; "
           "CREATE EXTENSION pg_prewarm; CREATE EXTENSION btree_gin;\n")
    raw = dict(mode=a.mode, rows=a.rows, runs=a.runs,
               build_runs=a.build_runs, insert_runs=a.insert_runs,
               insert_rows=a.insert_rows, machine=machine_info(pg, a),
               tables={})
    log("machine: %(cores)s cores, %(memory_gb)s GB, PostgreSQL "
        "%(pg_version)s, %(cpu)s" % raw["machine"])
    make_tables(pg, a.rows)
    for table, cols in (("tbloom", TBLOOM_COLS), ("tmixed", MIXED_COLS)):
        log("table %s (%d rows, %s)" % (table, a.rows, pg.value(
            "SELECT pg_size_pretty(pg_relation_size('%s'))" % table)))
        vals = present_values(pg, table, cols, a.rows)
        queries = []
        for qcols in QUERY_COLS[table]:
            for kind in ("present", "absent"):
                v = dict(vals)
                if kind == "absent":
                    # One absent value makes the conjunction match nothing;
                    # absent values in every column that can take one.
                    for c in qcols:
                        if c != "f":
                            v[c] = ABSENT[c]
                queries.append(dict(name="%dcol" % len(qcols), kind=kind,
                                    cols=qcols, where=where(qcols, v)))
        for q in queries:
            q["name"] = "%s_%s" % (q["name"], q["kind"])
        queries += in_queries(table, vals)
        tr = dict(rows=a.rows, table_bytes=int(pg.value(
            "SELECT pg_relation_size('%s')" % table)),
            queries=[dict(name=q["name"], where=q["where"]) for q in queries],
            contenders={})
        for c in CONTENDERS:
            tr["contenders"][c["key"]] = measure_contender(
                pg, c, table, cols, queries, a)
            loads.append(load_avg())
        keys = dict((c["key"], c) for c in CONTENDERS)
        if table == "tbloom" and "bloomidx" in keys and "bloomidx_row" in keys:
            tr["latency_pair"] = lp = measure_insert_latency_pair(
                pg, keys["bloomidx"], keys["bloomidx_row"], table, cols,
                a.latency_rows)
            log("%d single-row inserts in alternation: p99.9 %.3f ms "
                "(defaults) and %.3f ms (layout=row), median %.3f and %.3f"
                % (lp["n"], lp["bloomidx"]["p999"], lp["bloomidx_row"]["p999"],
                   lp["bloomidx"]["p50"], lp["bloomidx_row"]["p50"]))
        raw["tables"][table] = tr
    raw["filters"] = measure_filters(pg, a)
    raw["filter_variants"] = measure_filter_variants(pg, a)
    raw["blocked_probes"] = measure_blocked_probes(pg, a)
    loads.append(load_avg())
    raw["elapsed_s"] = time.time() - t_start
    raw["load_avg"] = loads
    with open(a.raw, "w") as fh:
        json.dump(raw, fh, indent=1)
    log("measured in %.0f s" % raw["elapsed_s"])


# --- report ----------------------------------------------------------------------

def contenders_in(cons):
    """The contenders a run measured, in the report's order."""
    return [c for c in CONTENDERS if c["key"] in cons]


def fmt(x, digits=None):
    """A figure for a table: '-' when missing, few significant digits."""
    if x is None:
        return "-"
    if isinstance(x, str):
        return x
    if isinstance(x, int) or (float(x).is_integer() and abs(x) >= 100):
        return "{:,}".format(int(x))
    if digits is not None:
        return "%.*f" % (digits, x)
    return common.fmt(x)


def ratio(x, base):
    if x is None or base is None or base == 0:
        return None
    return x / base


def fmt_ratio(r):
    if r is None:
        return "-"
    return ("%.2f×" if r >= 0.1 else "%.2g×") % r


def below_noise(overhead):
    """An insert overhead at or below zero: the insert with the index took
    no longer than without, within the run's noise (shown as ≈0)."""
    return overhead is not None and overhead <= 0


def per_row_us(cr, base_ms, nrows):
    if cr.get("insert_ms") is None or base_ms is None:
        return None
    return (cr["insert_ms"] - base_ms) * 1000.0 / nrows


def fp_rate(qr, rows):
    """One-column false-positive rate of a query: candidates that are not
    matches, over the rows that do not match."""
    if qr.get("candidates") is None or qr.get("matches") is None:
        return None
    return (qr["candidates"] - qr["matches"]) / float(rows - qr["matches"])


# The bloomidx contenders whose ratios the summary gives, by layout:
# (defaults, length=80 with 2 bits a column).
LAYOUTS = [("sliced", "bloomidx", "bloomidx_80x2"),
           ("row", "bloomidx_row", "bloomidx_row_80x2")]


def key_ratios(raw, key="bloomidx", key80="bloomidx_80x2"):
    """bloomidx in one layout against contrib/bloom with defaults, tbloom,
    same run: a list of dicts (text, figure: the ratio, extra: a note)."""
    tb = raw["tables"]["tbloom"]["contenders"]
    bx, b80, bl = tb[key], tb[key80], tb["bloom"]
    rows = raw["rows"]
    base_ins = tb["seqscan"].get("insert_ms")
    out = []

    def add(text, figure, extra=""):
        out.append(dict(text=text, figure=figure, extra=extra))

    add("index build time", ratio(bx.get("build_s"), bl.get("build_s")))
    if bx.get("build_serial_s") is not None:
        add("index build time, serial (contrib/bloom builds serially)",
            ratio(bx.get("build_serial_s"), bl.get("build_s")))
    fps = [fp_rate(bx["queries"][q], rows)
           for q in ("1col_present", "1col_absent")]
    fps = [f for f in fps if f is not None]
    fp = max(fps) if fps else None
    add("index size", ratio(bx.get("size_bytes"), bl.get("size_bytes")),
        "one-column false positives %s"
        % ("-" if fp is None else "%.2f%%" % (fp * 100)))
    worst = None
    for q in bl.get("queries", {}):
        if q.startswith("in10"):
            continue
        rr = ratio(b80["queries"][q].get("index_ms"),
                   bl["queries"][q].get("index_ms"))
        if rr is not None and (worst is None or rr > worst[0]):
            worst = (rr, q)
    add("bitmap index scan time at length=80, 2 bits/col, worst of the six "
        "queries", worst and worst[0],
        worst and "worst: %s" % worst[1] or "")
    for ncol in ("2col", "1col"):
        ws = None
        for kind in ("present", "absent"):
            q = "%s_%s" % (ncol, kind)
            rr = ratio(bx["queries"][q].get("latency_ms"),
                       bl["queries"][q].get("latency_ms"))
            if rr is not None and (ws is None or rr > ws[0]):
                ws = (rr, q)
        add("end-to-end %s-column query, worse of present/absent"
            % ncol[0], ws and ws[0], ws and "worst: %s" % ws[1] or "")
    ws = None
    for kind in ("present", "absent"):
        q = "in10_%s" % kind
        if q in bx["queries"] and q in bl["queries"]:
            rr = ratio(bx["queries"][q].get("latency_ms"),
                       bl["queries"][q].get("latency_ms"))
            if rr is not None and (ws is None or rr > ws[0]):
                ws = (rr, q)
    if ws is not None:
        add("end-to-end 10-value IN and 1-column query, worse of "
            "present/absent", ws[0], "worst: %s" % ws[1])
    add("insert overhead per row",
        ratio(per_row_us(bx, base_ins, raw["insert_rows"]),
              per_row_us(bl, base_ins, raw["insert_rows"])))
    return out


def layout_ratios(raw):
    """The sliced layout against the row layout at the same signature length
    and bits (defaults, and length=80 with 2 bits a column), same run: a
    list of dicts (text, figure, extra), or [] when the run has no sliced
    contenders."""
    tb = raw["tables"]["tbloom"]["contenders"]
    pairs = [(r, s) for r, s in (("bloomidx_row", "bloomidx"),
                                 ("bloomidx_row_80x2", "bloomidx_80x2"))
             if r in tb and s in tb]
    if not pairs:
        return []
    base_ins = tb["seqscan"].get("insert_ms")
    out = []

    def add(text, figure, extra=""):
        out.append(dict(text=text, figure=figure, extra=extra))

    for ncol in ("2col", "1col"):
        worst = None
        for r, s in pairs:
            for kind in ("present", "absent"):
                q = "%s_%s" % (ncol, kind)
                rr = ratio(tb[s]["queries"][q].get("index_ms"),
                           tb[r]["queries"][q].get("index_ms"))
                if rr is not None and (worst is None or rr > worst[0]):
                    worst = (rr, "%s, %s" % (s, q))
        add("%s-column bitmap index scan" % ncol[0],
            worst and worst[0], worst and "worst: %s" % worst[1] or "")
    for what, key in (("build time", "build_s"),
                      ("index size", "size_bytes")):
        rs = [ratio(tb[s].get(key), tb[r].get(key)) for r, s in pairs]
        rs = [x for x in rs if x is not None]
        add(what, max(rs) if rs else None)
    rs = [ratio(per_row_us(tb[s], base_ins, raw["insert_rows"]),
                per_row_us(tb[r], base_ins, raw["insert_rows"]))
          for r, s in pairs]
    rs = [x for x in rs if x is not None]
    add("insert overhead per row", max(rs) if rs else None)
    lp = raw["tables"]["tbloom"].get("latency_pair")
    if lp:
        add("single-row insert p99.9, defaults, the two inserted into in "
            "alternation", ratio(lp["bloomidx"]["p999"],
                                 lp["bloomidx_row"]["p999"]),
            "%s against %s ms; medians %s and %s ms"
            % (fmt(lp["bloomidx"]["p999"], 3), fmt(lp["bloomidx_row"]["p999"], 3),
               fmt(lp["bloomidx"]["p50"], 3), fmt(lp["bloomidx_row"]["p50"], 3)))
    return out


def net_probe_phrase(bp, prefix, base_ms, what):
    """'net of WHAT the probes are Xx (hits) and Yx (misses) faster', or,
    when the probes take less than a tenth of a run beside the read and the
    detoasting subtracted (their run-to-run variation is larger than what
    would be left), why no net figure is given."""
    ratios = []
    for kind in ("hit", "miss"):
        net = {}
        for name in ("plain", "blocked"):
            total = bp["%s%s_%s_ms" % (prefix, kind, name)]
            net[name] = total - base_ms(kind) - bp[name + "_detoast_ms"]
            if net[name] < 0.1 * total:
                return ("the probes take too small a share of the time beside "
                        "reading and detoasting for a net figure")
        ratios.append(net["plain"] / net["blocked"])
    return ("net of %s the probes are %.2fx (hits) and %.2fx (misses) faster"
            % (what, ratios[0], ratios[1]))


def plan_choice_lines(path):
    """The summary lines of bench/plan_choice.sh's output."""
    if not path or not os.path.exists(path):
        return ["bench/plan_choice.sh did not run."]
    with open(path) as fh:
        lines = [l.rstrip("\n") for l in fh]
    summ = [l for l in lines if l.lower().startswith("summary")]
    if summ:
        return summ
    if lines and lines[0].startswith("skipped"):
        return lines[:1]
    return lines[-10:]


def cmd_report(a):
    with open(a.raw) as fh:
        raw = json.load(fh)
    m = raw["machine"]
    rows = raw["rows"]
    md, csvrows = [], []
    md.append("# bloomidx benchmark results")
    md.append("")
    md.append("Generated by `bench/run.sh` (mode `%s`): %s rows, median of "
              "%d runs after a warm-up, data and indexes in shared buffers "
              "(pg_prewarm). Build times are the median of %d builds (one "
              "for GIN), insert times of %d inserts of %s rows."
              % (raw["mode"], fmt(rows), raw["runs"], raw["build_runs"],
                 raw["insert_runs"], fmt(raw["insert_rows"])))
    md.append("")
    md.append("- Machine: %s cores (%s), %s GB memory"
              % (m["cores"], m["cpu"] or "unknown CPU", m["memory_gb"]))
    md.append("- PostgreSQL %s; bloomidx (%s) built with `%s`; contrib/bloom "
              "as packaged by Debian" % (m["pg_version"], m["commit"],
                                         m["cflags"]))
    md.append("- Date: %s; the measurements took %.0f minutes"
              % (m["date"], raw["elapsed_s"] / 60.0))
    md.append("- Cluster settings: %s"
              % ", ".join("`%s`" % s for s in m["settings"]))
    la = raw.get("load_avg", [])
    if la:
        busy = max(la) > 1.5
        md.append("- Load average (1 min) during the run: %.2f to %.2f%s"
                  % (min(la), max(la),
                     ": other work ran concurrently, so absolute times are "
                     "noisy; the ratios come from the same run" if busy else
                     " (the benchmark itself accounts for about 1)"))
    if os.environ.get("BENCH_NOTE"):
        md.append("- Note: " + os.environ["BENCH_NOTE"])
    md.append("")
    md.append("Ratios (×) are to contrib/bloom with defaults on the same "
              "query in the same run; contrib/bloom has operator classes for "
              "int4 and text only, so the mixed-type table has no ratios.")
    md.append("")

    krs = [(layout, key_ratios(raw, k, k80)) for layout, k, k80 in LAYOUTS
           if k in raw["tables"]["tbloom"]["contenders"]]
    md.append("## Summary")
    md.append("")
    md.append(summary(raw, krs))
    for layout, kr in krs:
        for t in kr:
            csvrows.append(["summary", layout, t["text"], "", "",
                            t["figure"], t["extra"]])
    lr = layout_ratios(raw)
    if lr:
        md.append("")
        md.append("### The sliced layout against the row layout")
        md.append("")
        md.append("Same run, each layout with the same options (defaults, "
                  "and length=80 with 2 bits a column); the worse of the "
                  "two option sets.")
        md.append("")
        md.append("| figure | sliced / row |")
        md.append("|---|---|")
        for t in lr:
            md.append("| %s%s | %s |"
                      % (t["text"], " (%s)" % t["extra"] if t["extra"] else "",
                         "-" if t["figure"] is None else "%.2f×" % t["figure"]))
            csvrows.append(["summary", "sliced/row", t["text"], "", "",
                            t["figure"], t["extra"]])
        md.append("")

    for table, tr in raw["tables"].items():
        cons = tr["contenders"]
        base = cons.get(BASE, {})
        base_ins = cons["seqscan"].get("insert_ms")
        title = {"tbloom": "tbloom: six `(random() * 1000000)::int` columns "
                 "(contrib/bloom's example)",
                 "tmixed": "tmixed: text, uuid, bigint, date, numeric, "
                 "bool"}[table]
        md.append("## %s, %s rows (%.0f MB)"
                  % (title, fmt(rows), tr["table_bytes"] / 1048576.0))
        md.append("")
        md.append("Queries (present values from one existing row; absent "
                  "values outside the columns' domains):")
        md.append("")
        for q in tr["queries"]:
            md.append("- `%s`: `%s`" % (q["name"], q["where"]))
        md.append("")
        md.append("### Build, size, inserts")
        md.append("")
        md.append("| contender | build s | × | size MB | × | insert "
                  "overhead µs/row | × |")
        md.append("|---|---|---|---|---|---|---|")
        base_pr = per_row_us(base, base_ins, raw["insert_rows"]) \
            if base else None
        for c in contenders_in(cons):
            cr = cons[c["key"]]
            if cr.get("skipped"):
                md.append("| %s | n/a | | n/a | | n/a | |" % c["label"])
                continue
            size = cr.get("size_bytes")
            pr = per_row_us(cr, base_ins, raw["insert_rows"]) \
                if c["key"] != "seqscan" else None
            vals = [(cr.get("build_s"), base.get("build_s"), "build_s"),
                    (size and size / 1048576.0,
                     base.get("size_bytes") and
                     base["size_bytes"] / 1048576.0, "size_mb"),
                    (pr, base_pr, "insert_us_per_row")]
            cells = []
            for v, b, name in vals:
                if name == "insert_us_per_row" and below_noise(v):
                    cells += ["≈0", "≈0×"]
                else:
                    cells += [fmt(v), fmt_ratio(ratio(v, b))]
                csvrows.append([table, c["key"], name, "", v, ratio(v, b),
                                ""])
            md.append("| %s | %s |" % (c["label"], " | ".join(cells)))
        md.append("")
        md.append("Insert overhead: time to insert %s rows into a table "
                  "with the index minus the same insert with no index "
                  "(%.0f ms), per row; ≈0 where the insert with the index "
                  "took no longer, within this run's noise."
                  % (fmt(raw["insert_rows"]), base_ins or 0))
        md.append("")
        lats = [(c, cons[c["key"]].get("insert_latency"))
                for c in contenders_in(cons)]
        lats = [(c, l) for c, l in lats if l]
        if lats:
            md.append("Single-row insert latency: %s `INSERT` statements of "
                      "one row each into an empty copy of the table, in one "
                      "PL/pgSQL loop, each timed with `clock_timestamp()`. A "
                      "sliced index merges its pending rows into the slices "
                      "in small steps once they can fill a stripe (about "
                      "65,000 rows), each step inside the insert that starts "
                      "a pending page (the steps that allocate a new "
                      "stripe's pages, a few at a time, count as steps): "
                      "merge steps counts them, longest step is the most "
                      "merge work one insert paid, elapsed and CPU time "
                      "(from the DEBUG1 line each step logs; a busy machine "
                      "stretches the elapsed time, not the CPU time)."
                      % fmt(lats[0][1]["n"]))
            md.append("")
            md.append("| contender | median ms | p99 ms | p99.9 ms | max ms "
                      "| merge steps | longest step ms | longest step CPU ms |")
            md.append("|---|---|---|---|---|---|---|---|")
            for c, l in lats:
                md.append("| %s | %s | %s | %s | %s | %s | %s | %s |"
                          % (c["label"], fmt(l["p50"], 3), fmt(l["p99"], 3),
                             fmt(l["p999"], 3), fmt(l["max"]),
                             l.get("merges", ""), fmt(l.get("merge_max"), 3),
                             fmt(l.get("merge_cpu_max"), 3)))
                for k in ("p50", "p99", "p999", "max", "merge_max",
                          "merge_cpu_max"):
                    csvrows.append([table, c["key"], "insert_latency_" + k,
                                    "", l.get(k), "", ""])
            md.append("")
        md.append("### Queries")
        md.append("")
        md.append("Latency: psql `\\timing` of the query. Index scan: the "
                  "Bitmap Index Scan node's actual total time (sum over "
                  "nodes under a BitmapAnd), from `EXPLAIN (ANALYZE, FORMAT "
                  "JSON)`. Candidates: that node's actual rows. Heap blocks: "
                  "exact + lossy.")
        md.append("")
        for q in tr["queries"]:
            qn = q["name"]
            md.append("#### `%s`" % qn)
            md.append("")
            md.append("| contender | latency ms | × | index scan ms | × | "
                      "candidates | × | removed by recheck | heap blocks "
                      "| rows | plan |")
            md.append("|---|---|---|---|---|---|---|---|---|---|---|")
            bq = base.get("queries", {}).get(qn, {}) if base else {}
            for c in contenders_in(cons):
                cr = cons[c["key"]]
                if cr.get("skipped"):
                    md.append("| %s | n/a | | | | | | | | | |" % c["label"])
                    continue
                qr = cr["queries"][qn]
                cells = []
                for k in ("latency_ms", "index_ms", "candidates"):
                    rr = ratio(qr.get(k), bq.get(k))
                    cells += [fmt(qr.get(k)), fmt_ratio(rr)]
                for k, _ in QUERY_METRICS:
                    csvrows.append([table, c["key"], k, qn, qr.get(k),
                                    ratio(qr.get(k), bq.get(k)), ""])
                cells += [fmt(qr.get("recheck_removed")),
                          fmt(qr.get("heap_blocks")), fmt(qr.get("matches")),
                          "`%s`%s" % (qr.get("plan", ""),
                                      " (%s)" % qr["note"]
                                      if qr.get("note") else "")]
                md.append("| %s | %s |" % (c["label"], " | ".join(cells)))
            md.append("")

    f = raw.get("filters", {})
    md.append("## Ad hoc filters: bloom_agg and bloom_contains")
    md.append("")
    if f.get("skipped"):
        md.append("Skipped: %s." % f["skipped"])
        csvrows.append(["filters", "", "skipped", "", "", "", f["skipped"]])
    else:
        md.append("Filtering the %s rows of tbloom by `i1` against %s keys "
                  "(about half present): a filter built by "
                  "`bloom_agg(k)` and probed with `bloom_contains(f, i1)`, "
                  "beside `i1 IN (SELECT k FROM fkeys)` as a hash semi-join "
                  "(`%s`)." % (fmt(f["rows"]), fmt(f["nkeys"]),
                               f.get("semi_plan", "")))
        md.append("")
        md.append("| figure | bloom filter | hash semi-join | × |")
        md.append("|---|---|---|---|")
        rows_f = [
            ("build: values/s (bloom_agg; Hash node)", f.get("agg_rate"),
             f.get("hash_build_rate")),
            ("build ms", f.get("agg_ms"), f.get("hash_build_ms")),
            ("filter all rows: ms", f.get("probe_ms"), f.get("semi_ms")),
            ("filter all rows: rows/s", f.get("probe_rate"),
             f.get("semi_rate")),
            ("bloom_contains probes/s net of the scan (scan alone: %s ms)"
             % fmt(f.get("scan_ms")), f.get("probe_rate_net"), None),
            ("rows passed", f.get("bloom_matches"), f.get("exact_matches")),
        ]
        for name, x, y in rows_f:
            md.append("| %s | %s | %s | %s |"
                      % (name, fmt(x), fmt(y), fmt_ratio(ratio(x, y))))
            csvrows.append(["filters", "", name, "", x, ratio(x, y), ""])
        md.append("")
        md.append("× is bloom filter / hash semi-join.")
    md.append("")
    fv = raw.get("filter_variants", {})
    md.append("## Filter variants")
    md.append("")
    if not fv or fv.get("skipped"):
        md.append("Skipped: %s." % fv.get("skipped", "not measured"))
    else:
        md.append("Each variant at a 1%% target over %s keys, probed with %s "
                  "keys not added (one backend, no parallel workers)."
                  % (fmt(fv["n"]), fmt(fv["n"])))
        md.append("")
        md.append("| variant | build values/s | probes/s | measured fpr "
                  "| bytes | layers |")
        md.append("|---|---|---|---|---|---|")
        for r in fv["variants"]:
            md.append("| %s | %s | %s | %.4f | %s | %d |"
                      % (r["name"], fmt(r["build_rate"]), fmt(r["probe_rate"]),
                         r["fpr"], fmt(r["size_bytes"]), r["layers"]))
            csvrows.append(["filter_variants", "", r["name"] + " build/s", "",
                            r["build_rate"], "", ""])
            csvrows.append(["filter_variants", "", r["name"] + " probes/s", "",
                            r["probe_rate"], "", ""])
            csvrows.append(["filter_variants", "", r["name"] + " fpr", "",
                            r["fpr"], "", ""])
        g = fv["growth"]
        md.append("")
        md.append("Growth: a growing filter first sized for %s values, after "
                  "%s values (100x): %d layers, %.2fx the bytes of a filter "
                  "sized up front for them, measured rate %.4f (target 0.01). "
                  "No layered filter with these layers and rates summing to "
                  "at most the target goes below %sx (src/README)."
                  % (fmt(g["first_capacity"]), fmt(g["n"]), g["layers"],
                     g["size_ratio"], g["fpr"],
                     fmt(g.get("size_ratio_bound"), 3)))
    bp = raw.get("blocked_probes")
    if bp and "skipped" not in bp:
        md.append("")
        md.append("Blocked against plain, %d MB filters (%s values, the "
                  "plain one with the same bits), %s bloom_contains probes "
                  "from a scalar subquery over generate_series, same run: "
                  "hits %s ms plain, %s ms blocked (%.2fx); misses %s ms "
                  "plain, %s ms blocked (%.2fx).  Of that, the scan alone "
                  "takes %s ms and detoasting the filter %s ms; %s."
                  % (bp["mb"], fmt(bp["n"]), fmt(bp["probes"]),
                     fmt(bp["hit_plain_ms"]), fmt(bp["hit_blocked_ms"]),
                     bp["hit_ratio"], fmt(bp["miss_plain_ms"]),
                     fmt(bp["miss_blocked_ms"]), bp["miss_ratio"],
                     fmt(bp["base_ms"]), fmt(bp["blocked_detoast_ms"]),
                     net_probe_phrase(bp, "", lambda kind: bp["base_ms"],
                                      "both")))
        if "array_hit_ratio" in bp:
            md.append("")
            md.append("The same probes through the array form, "
                      "bloom_contains(filter, int[]) on a stored array of "
                      "%s values (batches of 16 probes, their lines "
                      "prefetched first), same run: hits %s ms plain, %s ms "
                      "blocked (%.2fx); misses %s ms plain, %s ms blocked "
                      "(%.2fx).  Reading the array alone takes %s ms; %s."
                      % (fmt(bp["probes"]), fmt(bp["array_hit_plain_ms"]),
                         fmt(bp["array_hit_blocked_ms"]),
                         bp["array_hit_ratio"],
                         fmt(bp["array_miss_plain_ms"]),
                         fmt(bp["array_miss_blocked_ms"]),
                         bp["array_miss_ratio"],
                         fmt(bp["array_hit_base_ms"]),
                         net_probe_phrase(
                             bp, "array_",
                             lambda kind: bp["array_%s_base_ms" % kind],
                             "that and detoasting")))
        for kind in ("hit", "miss"):
            csvrows.append(["blocked_probes", "", kind + " plain/blocked", "",
                            bp[kind + "_ratio"], "", ""])
            if "array_%s_ratio" % kind in bp:
                csvrows.append(["blocked_probes", "",
                                kind + " plain/blocked, array form", "",
                                bp["array_%s_ratio" % kind], "", ""])
    md.append("")
    md.append("## Plan choice (bench/plan_choice.sh)")
    md.append("")
    for l in plan_choice_lines(a.plan_choice):
        md.append("    " + l)
    md.append("")

    problems = check_answers(raw)
    if problems:
        md.append("## Wrong answers")
        md.append("")
        md += ["- " + p for p in problems]
        md.append("")
    os.makedirs(a.out, exist_ok=True)
    with open(os.path.join(a.out, "results.md"), "w") as fh:
        fh.write("\n".join(md))
    with open(os.path.join(a.out, "results.csv"), "w", newline="") as fh:
        w = csv.writer(fh)
        w.writerow(["table", "contender", "metric", "query", "value",
                    "ratio_to_contrib_bloom", "note"])
        for r in csvrows:
            w.writerow(["" if x is None else
                        ("%.6g" % x if isinstance(x, float) else x)
                        for x in r])
    write_chart(raw, a)
    if problems:
        for p in problems:
            print("error: " + p, file=sys.stderr)
        sys.exit(1)


def check_answers(raw):
    """Every contender must return the seq scan's number of rows."""
    problems = []
    for table, tr in raw["tables"].items():
        cons = tr["contenders"]
        for q in tr["queries"]:
            want = cons["seqscan"]["queries"][q["name"]].get("matches")
            for key, cr in cons.items():
                if cr.get("skipped"):
                    continue
                got = cr["queries"][q["name"]].get("matches")
                if got != want:
                    problems.append("%s %s: %s returned %s rows, the seq "
                                    "scan %s" % (table, q["name"], key, got,
                                                 want))
    bp = raw.get("blocked_probes")
    if bp and "skipped" not in bp:
        # every probed value that was added must be found (no false negatives)
        for name in ("plain", "blocked"):
            if bp["hit_%s_matches" % name] != bp["probes"]:
                problems.append("blocked probes: the %s filter found %d of "
                                "the %d values added"
                                % (name, bp["hit_%s_matches" % name],
                                   bp["probes"]))
            if "array_hit_%s_matches" % name not in bp:
                continue
            if bp["array_hit_%s_matches" % name] != bp["probes"]:
                problems.append("blocked probes, array form: the %s filter "
                                "found %d of the %d values added"
                                % (name, bp["array_hit_%s_matches" % name],
                                   bp["probes"]))
            # the array form answers as bloom_contains does for each value
            if (bp["array_miss_%s_matches" % name] !=
                    bp["miss_%s_matches" % name]):
                problems.append("blocked probes: the %s filter's array form "
                                "found %d of the values not added, one probe "
                                "per row %d"
                                % (name, bp["array_miss_%s_matches" % name],
                                   bp["miss_%s_matches" % name]))
    return problems


def write_chart(raw, a):
    """chart.dat for gnuplot, then chart.png."""
    tr = raw["tables"]["tbloom"]
    cons = tr["contenders"]
    short = {"bloomidx": "bloomidx", "bloomidx_80x2": "bloomidx\\n80/2",
             "bloomidx_row": "bloomidx\\nrow",
             "bloomidx_row_80x2": "bloomidx\\nrow 80/2",
             "bloom": "bloom", "bloom_tuned": "bloom\\n64/7",
             "gin": "GIN\\nbtree_gin", "brin_bloom": "BRIN\\nbloom",
             "btree6": "btree\\n6-col", "btree1x6": "btree\\n6×1-col",
             "seqscan": "seq scan"}
    base_ins = cons["seqscan"].get("insert_ms")
    dat = os.path.join(a.out, "chart.dat")
    with open(dat, "w") as fh:
        fh.write("# label build_s size_mb insert_us lat1 lat2 lat3 "
                 "idx1 idx2 idx3 lat1a lat2a lat3a\n")
        for c in contenders_in(cons):
            cr = cons[c["key"]]
            q = cr["queries"]

            def g(x):
                return "?" if x is None else "%.6g" % x
            size = cr.get("size_bytes")
            pr = per_row_us(cr, base_ins, raw["insert_rows"]) \
                if c["key"] != "seqscan" else None
            vals = [cr.get("build_s"), size and size / 1048576.0, pr]
            vals += [q["%s_present" % n].get("latency_ms") for n in NCOLS]
            vals += [q["%s_present" % n].get("index_ms") for n in NCOLS]
            vals += [q["%s_absent" % n].get("latency_ms") for n in NCOLS]
            # order: build size ins lat1..3 (present) idx1..3 lat1a..3a
            fh.write('"%s" %s\n' % (short[c["key"]],
                                    " ".join(g(v) for v in vals)))
    title = "bloomidx benchmark: tbloom, %s rows, PostgreSQL %s, %s" % (
        fmt(raw["rows"]), raw["machine"]["pg_version"],
        raw["machine"]["date"])
    png = os.path.join(a.out, "chart.png")
    p = subprocess.run(["gnuplot", "-e", "datafile='%s'; outfile='%s'; "
                        "charttitle='%s'; ncontenders=%d"
                        % (dat, png, title, len(contenders_in(cons))),
                        a.chart_script], text=True, stdout=subprocess.PIPE,
                       stderr=subprocess.PIPE)
    if p.returncode != 0 or not os.path.exists(png) or \
            os.path.getsize(png) == 0:
        raise RuntimeError("gnuplot failed: %s" % p.stderr)
    if p.stderr.strip():
        print(p.stderr.strip(), file=sys.stderr)


def summary(raw, krs):
    """The summary table and the key ratios to contrib/bloom, by layout."""
    tr = raw["tables"]["tbloom"]
    cons = tr["contenders"]
    base = cons[BASE]
    base_ins = cons["seqscan"].get("insert_ms")
    m = raw["machine"]
    lines = []
    lines.append("tbloom (contrib/bloom's example: six random int columns), "
                 "%s rows; %s cores, %s GB, PostgreSQL %s, %s. Latencies "
                 "are medians of %d warm runs; × is the ratio to "
                 "contrib/bloom with defaults in the same run."
                 % (fmt(raw["rows"]), m["cores"], m["memory_gb"],
                    m["pg_version"], m["date"], raw["runs"]))
    lines.append("")
    lines.append("| contender | build s | size MB | insert µs/row | 1-col "
                 "query ms | 2-col query ms | 3-col query ms | 1-col false "
                 "positives |")
    lines.append("|---|---|---|---|---|---|---|---|")
    for c in contenders_in(cons):
        cr = cons[c["key"]]
        q = cr["queries"]
        bq = base["queries"]
        size = cr.get("size_bytes")
        pr = per_row_us(cr, base_ins, raw["insert_rows"]) \
            if c["key"] != "seqscan" else None
        bpr = per_row_us(base, base_ins, raw["insert_rows"])

        def cell(v, b, overhead=False):
            if v is None:
                return "-"
            if overhead and below_noise(v):
                return "≈0"
            r = ratio(v, b)
            return "%s (%s)" % (fmt(v), fmt_ratio(r)) if r is not None \
                else fmt(v)
        cells = [cell(cr.get("build_s"), base.get("build_s")),
                 cell(size and size / 1048576.0,
                      base["size_bytes"] / 1048576.0),
                 cell(pr, bpr, overhead=True)]
        for n in ("1col", "2col", "3col"):
            k = "%s_present" % n
            cells.append(cell(q[k]["latency_ms"], bq[k]["latency_ms"]))
        fps = [fp_rate(q[k], raw["rows"])
               for k in ("1col_present", "1col_absent")]
        fps = [f for f in fps if f is not None]
        cells.append("%.2f%%" % (100 * sum(fps) / len(fps)) if fps else "-")
        lines.append("| %s | %s |" % (c["label"], " | ".join(cells)))
    lines.append("")
    if not krs:
        return "\n".join(lines) + "\n"
    lines.append("bloomidx with defaults (and, for the index scan, at "
                 "length=80 with 2 bits a column) against contrib/bloom with "
                 "defaults, tbloom, for each layout:")
    lines.append("")
    head = "| figure |"
    rule = "|---|"
    for layout, _ in krs:
        head += " %s layout |" % layout
        rule += "---|"
    lines += [head, rule]
    for i, t0 in enumerate(krs[0][1]):
        row = "| %s |" % t0["text"]
        for _, kr in krs:
            t = kr[i]
            row += " %s%s |" % (
                fmt_ratio(t["figure"]),
                " (%s)" % t["extra"] if t["extra"] else "")
        lines.append(row)
    return "\n".join(lines) + "\n"


# --- main ------------------------------------------------------------------------

def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    sub = ap.add_subparsers(dest="cmd", required=True)
    m = sub.add_parser("measure")
    m.add_argument("--mode", default="full")
    m.add_argument("--rows", type=int, required=True)
    m.add_argument("--runs", type=int, default=5)
    m.add_argument("--psql", required=True)
    m.add_argument("--raw", required=True)
    m.add_argument("--settings", default="")
    m.add_argument("--cflags", default="")
    m.add_argument("--repo", default=".")
    m.add_argument("--source", default="")
    m.add_argument("--server-log", default="")
    r = sub.add_parser("report")
    r.add_argument("--raw", required=True)
    r.add_argument("--plan-choice", default="")
    r.add_argument("--out", required=True)
    r.add_argument("--chart-script", required=True)
    a = ap.parse_args()
    if a.cmd == "measure":
        cmd_measure(a)
    else:
        cmd_report(a)


if __name__ == "__main__":
    main()
