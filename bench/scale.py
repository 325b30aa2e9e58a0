#!/usr/bin/env python3
"""The scale benchmark of bloomidx (bench/scale.sh).

    scale.py measure --rows N --raw raw.json --psql P --pgctl C --pgbench B
                     --datadir D --logfile L ...
    scale.py report --raw raw-N.json... --out DIR

measure runs on the cluster bench/scale.sh started (PGHOST, PGPORT, PGUSER
and PGDATABASE in the environment).  It makes two tables of --rows rows,
seeded: tbloom, contrib/bloom's example (six random int columns), and
tcorr, a correlated table: a tenant and a day column in insertion order
(the rows sorted by day, then tenant) and four random int columns.  For
each table it builds one contender's index at a time (bloomidx with
defaults; bloomidx with summaries = off when the built bloomidx has that
option; contrib/bloom with defaults; GIN over btree_gin; BRIN bloom) and,
before dropping it, measures:

  - build time and size;
  - every query warm in a pooled session (median of --runs after a warm-up),
    and the pages its EXPLAIN (ANALYZE, BUFFERS) touched (shared hit + read,
    the whole plan and the index scan alone), candidates and recheck;
  - every query as the first of a fresh connection (median of --runs
    connections), the data still in shared buffers;
  - the --cold-queries cold: server stopped, the table's and index's files
    evicted from the OS page cache (bench/evict.py), server started; the
    query once under EXPLAIN (ANALYZE, BUFFERS) (median of --cold-runs);
  - on tbloom, throughput (pgbench, one transaction a query on the values of
    a random existing row) of the 1- and 2-column queries with --clients
    clients, then the same with 2 clients inserting meanwhile;
  - the time to insert --insert-rows rows (rolled back), less the same with
    no index.

Every index plan's count must equal the sequential scan's, or the run fails
(after the raw figures are written).  report writes results.md (with the
ratios to contrib/bloom in the same run, per size, and the query times
across sizes), results.csv and raw-N.json's copies.
"""

import argparse
import csv
import datetime
import json
import os
import re
import sys
import time
import types

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import cold  # noqa: E402
import common  # noqa: E402
import evict  # noqa: E402
from common import (log, median, fmt, memory_gb, cpu_model,  # noqa: E402
                    load_avg, tps)

# --- what is measured ----------------------------------------------------------

NDAYS = 365
NTENANTS = 1000

TABLES = {
    "tbloom": dict(
        cols=common.TBLOOM_COLS,
        sql=common.TBLOOM_SQL,
        # name, columns
        queries=[("1col", ["i2"]), ("2col", ["i2", "i5"]),
                 ("3col", ["i1", "i3", "i6"]), ("1col_absent", ["i2"])],
        title="tbloom: six `(random() * 1000000)::int` columns "
              "(contrib/bloom's example)"),
    # Rows in (day, tenant) order: the table a multi-tenant service appends
    # to day after day, each day's rows grouped by tenant.
    "tcorr": dict(
        cols=["tenant", "day", "r1", "r2", "r3", "r4"],
        sql="""
SELECT setseed(0.44);
CREATE TABLE tcorr AS
SELECT
  ((((i - 1) * %(ndays)d) %%%% %%(rows)d) * %(ntenants)d / %%(rows)d)::int AS tenant,
  (20000 + (i - 1) * %(ndays)d / %%(rows)d)::int AS day,
%(random)s
FROM generate_series(1::bigint, %%(rows)d) i;
VACUUM (FREEZE, ANALYZE) tcorr;
""" % dict(ndays=NDAYS, ntenants=NTENANTS,
           random=",\n".join("  (random() * 1000000)::int AS r%d" % i
                             for i in range(1, 5))),
        queries=[("tenant", ["tenant"]), ("day", ["day"]),
                 ("tenant_day", ["tenant", "day"]), ("random", ["r1"])],
        title="tcorr: tenant (%d) and day (%d) in insertion order, four "
              "random int columns" % (NTENANTS, NDAYS)),
}
ABSENT = {"i2": "-2"}

BRIN_COL = "%s int4_bloom_ops(n_distinct_per_range = 700)"
# key, label, access method, WITH options, column format
CONTENDERS = [
    ("bloomidx", "bloomidx (defaults)", "bloomidx", "", "%s"),
    ("bloomidx_nosum", "bloomidx (summaries = off)", "bloomidx",
     "summaries = off", "%s"),
    ("bloom", "contrib/bloom (defaults)", "bloom", "", "%s"),
    ("gin", "GIN (btree_gin)", "gin", "", "%s"),
    ("brin", "BRIN bloom (pages_per_range=4, 700 values/range)", "brin",
     "pages_per_range = 4", BRIN_COL),
]
BASE = "bloom"
LABEL = dict((c[0], c[1]) for c in CONTENDERS)


class Pg(cold.Pg):
    def times(self, script, options=None):
        """Run script with \\timing on and its output dropped; return the ms
        of every statement and what the script printed before."""
        out = self.run(script, options)
        return [float(m) for m in re.findall(r"^Time: ([0-9.]+) ms", out, re.M)]


def table_sql(table, rows):
    """The SQL that makes table with rows rows."""
    if table == "tcorr":
        return TABLES[table]["sql"] % dict(rows=rows)
    return TABLES[table]["sql"] % rows


def ddl(c, table, cols, name):
    key, _, am, opts, colfmt = c
    return "CREATE INDEX %s ON %s USING %s (%s)%s" % (
        name, table, am, ", ".join(colfmt % col for col in cols),
        " WITH (%s)" % opts if opts else "")


def plan_options(c):
    """PGOPTIONS that make the planner use contender c's index."""
    if c is None:
        return ("-c enable_indexscan=off -c enable_bitmapscan=off "
                "-c enable_indexonlyscan=off")
    if c[2] in ("bloom", "bloomidx"):
        return "-c enable_seqscan=off -c enable_indexscan=off"
    return "-c enable_seqscan=off"


def has_summaries_option(pg):
    """Whether the built bloomidx takes the index option summaries."""
    try:
        pg.run("CREATE TEMP TABLE probe_summaries (a int);\n"
               "CREATE INDEX ON probe_summaries USING bloomidx (a) "
               "WITH (summaries = off);\n")
        return True, ""
    except RuntimeError as e:
        m = re.search(r"ERROR:\s+(.*)", str(e))
        return False, ("this bloomidx has no summaries option (%s)"
                       % (m.group(1).strip() if m else str(e).split("\n")[0]))


def query_sql(table, cols, values):
    """The count of the rows where cols equal values.  count(last column)
    and not count(*): a bitmap heap scan may skip the heap for an exact
    index (GIN) when no column is needed, never for a lossy one."""
    last = TABLES[table]["cols"][-1]
    return "SELECT count(%s) FROM %s WHERE %s" % (
        last, table, " AND ".join("%s = %s" % (c, values[c]) for c in cols))


def make_queries(pg, table, rows):
    cols = TABLES[table]["cols"]
    out = pg.value("SELECT %s FROM %s OFFSET %d LIMIT 1"
                   % (" || ',' || ".join(cols), table, rows // 2)).split(",")
    present = dict(zip(cols, out))
    qs = []
    for name, qcols in TABLES[table]["queries"]:
        vals = dict(present)
        if name.endswith("_absent"):
            vals.update(ABSENT)
        qs.append(dict(name=name, cols=qcols, sql=query_sql(table, qcols, vals)))
    return qs


# --- one contender ---------------------------------------------------------------

def warm_and_fresh(pg, c, q, a, want):
    """Pooled-session and fresh-connection figures of query q."""
    opts = plan_options(c)
    # One session: the count (checked), EXPLAIN's pages, then the timed runs
    script = (q["sql"] + ";\n" +
              "EXPLAIN (ANALYZE, BUFFERS, FORMAT JSON) %s;\n" % q["sql"] +
              "\\o /dev/null\n\\timing on\n" +
              (q["sql"] + ";\n") * (a.runs + 1))
    raw = pg.run(script, opts)
    out, j = raw.split("\n", 1)
    if out.strip() != want:
        raise AnswerError("%s, %s: the index plan counts %s rows, the "
                          "sequential scan %s" % (c[0], q["name"], out, want))
    j = j[:j.index("Time:")] if "Time:" in j else j
    ms = [float(m) for m in re.findall(r"^Time: ([0-9.]+) ms", raw, re.M)][1:]
    e = explain_from(j)
    r = dict(warm_ms=median(ms), warm_all=ms, pages=e["read"] + e["hit"],
             pages_read=e["read"], index_pages=e["index_read"] + e["index_hit"],
             index_ms=e["index_ms"], candidates=e["candidates"],
             recheck_removed=e["recheck_removed"], plan=e["plan"],
             count=int(want))
    if c is not None and ("(%s)" % q["index"]) not in e["plan"]:
        r["note"] = "index not used: %s" % e["plan"]
    # Fresh connections: each one's first statement
    fresh = []
    for _ in range(a.runs):
        t = pg.times("\\o /dev/null\n\\timing on\n%s;\n" % q["sql"], opts)
        fresh.append(t[0])
    r["fresh_ms"] = median(fresh)
    r["fresh_all"] = fresh
    return r


def explain_from(text):
    """The figures of the one EXPLAIN (FORMAT JSON) document in text."""
    plan = json.loads(text)[0]
    top = plan["Plan"]
    f = dict(read=top.get("Shared Read Blocks", 0),
             hit=top.get("Shared Hit Blocks", 0),
             index_ms=0.0, index_read=0, index_hit=0, candidates=None,
             recheck_removed=None, plan=[])
    nodes = [top]
    while nodes:
        n = nodes.pop()
        nodes.extend(n.get("Plans", []))
        t = n["Node Type"]
        if t == "Bitmap Index Scan":
            f["index_ms"] += n["Actual Total Time"]
            f["index_read"] += n.get("Shared Read Blocks", 0)
            f["index_hit"] += n.get("Shared Hit Blocks", 0)
            # rounded: 18 and later print fractional rows
            f["candidates"] = int(round(n["Actual Rows"]))
            f["plan"].append("%s(%s)" % (t, n.get("Index Name")))
        elif t == "Bitmap Heap Scan":
            f["recheck_removed"] = n.get("Rows Removed by Index Recheck", 0)
        elif t in ("Seq Scan", "Index Scan", "Index Only Scan"):
            f["plan"].append("%s(%s)" % (t, n.get("Index Name", "")))
    f["plan"] = " / ".join(f["plan"])
    return f


class AnswerError(RuntimeError):
    pass


def cold_query(pg, server, a, relpaths, sql, opts):
    """sql once on a restarted server with the relations evicted."""
    server.stop()
    evict.evict(a.datadir, relpaths)
    server.start()
    pg.wait_ready()
    out = pg.run("EXPLAIN (ANALYZE, BUFFERS, FORMAT JSON) %s;\n" % sql, opts)
    plan = json.loads(out)[0]
    e = explain_from(out)
    return dict(ms=plan["Execution Time"], read=e["read"], hit=e["hit"],
                index_ms=e["index_ms"], index_read=e["index_read"])


def conc_scripts(d, nvals):
    scripts = {
        "1col": "\\set k random(1, %d)\n" % nvals +
                "SELECT i1 FROM conc_vals WHERE k = :k \\gset\n"
                "SELECT count(i6) FROM tbloom WHERE i1 = :i1;\n",
        "2col": "\\set k random(1, %d)\n" % nvals +
                "SELECT i1, i2 FROM conc_vals WHERE k = :k \\gset\n"
                "SELECT count(i6) FROM tbloom WHERE i1 = :i1 AND i2 = :i2;\n",
        # i6 = -1 marks the rows to delete afterwards (outside i6's domain)
        "insert": "".join("\\set v%d random(0, 1000000)\n" % i
                          for i in range(1, 6)) +
                  "INSERT INTO tbloom VALUES (:v1, :v2, :v3, :v4, :v5, -1);\n",
    }
    os.makedirs(d, exist_ok=True)
    paths = common.write_scripts(d, scripts, "scale_")
    os.chmod(d, 0o755)
    return paths


def throughput(pg, c, a):
    """Queries a second of the 1- and 2-column queries on tbloom."""
    scripts = conc_scripts(a.workdir, min(10000, a.rows))
    opts = plan_options(c)
    res = []
    for inserting in ((2,) if a.conc_inserting_only else (0, 2)):
        for q in a.conc_queries.split(","):
            for n in [int(x) for x in a.clients.split(",")]:
                ins = (common.pgbench(a.pgbench, scripts["insert"], inserting,
                                      a.seconds, "-c synchronous_commit=off")
                       if inserting else None)
                t = tps(common.pgbench(a.pgbench, scripts[q], n, a.seconds,
                                       opts))
                it = tps(ins) if ins else None
                res.append(dict(query=q, clients=n, inserting=inserting,
                                tps=t, insert_tps=it))
                log("    %s, %d client%s%s: %.1f queries/s%s"
                    % (q, n, "s" if n > 1 else "",
                       " (+%d inserting)" % inserting if inserting else "",
                       t, ", %.0f inserts/s" % it if it else ""))
        if inserting:
            pg.run("DELETE FROM tbloom WHERE i6 = -1;\nVACUUM tbloom;\n")
    return res


def insert_ms(pg, table, n):
    """ms to insert n of table's rows into it, in a transaction rolled
    back (median of 3), then VACUUM."""
    script = ("\\timing on\n" +
              ("BEGIN;\nINSERT INTO %s SELECT * FROM %s LIMIT %d;\n"
               "ROLLBACK;\n" % (table, table, n)) * 3)
    t = pg.times(script)
    # BEGIN, INSERT, ROLLBACK: every second of three
    ms = t[1::3]
    pg.run("VACUUM %s;\n" % table)
    return median(ms), ms


def measure_contender(pg, server, c, table, qs, wants, a, base_relpath):
    key = c[0]
    cols = TABLES[table]["cols"]
    name = "sx_%s_%s" % (table, key)
    r = dict(key=key, label=c[1])
    pg.run("CHECKPOINT;\n")
    t0 = time.time()
    ms = pg.times("\\timing on\n%s;\n" % ddl(c, table, cols, name))
    r["build_s"] = ms[0] / 1000.0
    r["size_bytes"] = int(pg.value("SELECT pg_relation_size('%s')" % name))
    pg.run("VACUUM ANALYZE %s;\nCHECKPOINT;\n"
           "SELECT pg_prewarm('%s');\nSELECT pg_prewarm('%s');\n"
           % (table, table, name))
    log("%s: build %.2f s, %.1f MB" % (c[1], r["build_s"],
                                        r["size_bytes"] / 1048576.0))
    r["queries"] = {}
    for q in qs:
        q = dict(q, index=name)
        qr = warm_and_fresh(pg, c, q, a, wants[q["name"]])
        r["queries"][q["name"]] = qr
        log("  %-12s warm %8.3f ms, %d pages (index %d), fresh connection "
            "%8.3f ms, %s candidates%s"
            % (q["name"], qr["warm_ms"], qr["pages"], qr["index_pages"],
               qr["fresh_ms"], qr["candidates"],
               "; " + qr["note"] if "note" in qr else ""))
    relpaths = [base_relpath,
                pg.value("SELECT pg_relation_filepath('%s')" % name)]
    opts = plan_options(c)
    for q in qs:
        if q["name"] not in a.cold_queries.split(",") or \
                key not in a.cold_contenders.split(","):
            continue
        runs = [cold_query(pg, server, a, relpaths, q["sql"], opts)
                for _ in range(a.cold_runs)]
        cr = dict((k, median([x[k] for x in runs]))
                  for k in ("ms", "read", "hit", "index_ms", "index_read"))
        cr["all_ms"] = [x["ms"] for x in runs]
        r["queries"][q["name"]]["cold"] = cr
        log("  %-12s cold %8.1f ms, %d pages read, %d hit (index scan %.1f "
            "ms, %d read)" % (q["name"], cr["ms"], cr["read"], cr["hit"],
                              cr["index_ms"], cr["index_read"]))
    if a.cold_queries:
        pg.run("SELECT pg_prewarm('%s');\nSELECT pg_prewarm('%s');\n"
               % (table, name))
    if table == "tbloom" and key in a.conc_contenders.split(",") \
            and a.seconds > 0:
        r["throughput"] = throughput(pg, c, a)
    if a.insert_rows > 0:
        r["insert_ms"], r["insert_all_ms"] = insert_ms(pg, table, a.insert_rows)
        log("  insert %d rows: %.1f ms" % (a.insert_rows, r["insert_ms"]))
    pg.run("DROP INDEX %s;\n" % name)
    r["elapsed_s"] = time.time() - t0
    return r


# --- measure ---------------------------------------------------------------------

def cmd_measure(a):
    pg = Pg(a.psql)
    server = cold.Server(a)
    t_start = time.time()
    pg.run("CREATE EXTENSION bloomidx; CREATE EXTENSION bloom; "
           "CREATE EXTENSION pg_prewarm; CREATE EXTENSION btree_gin;\n")
    raw = dict(rows=a.rows, runs=a.runs, cold_runs=a.cold_runs,
               seconds=a.seconds, clients=a.clients,
               insert_rows=a.insert_rows, settings=a.settings.split(),
               source=a.source, cflags=a.cflags, tables={},
               pg_version=pg.value("SHOW server_version"),
               date=datetime.datetime.now(datetime.timezone.utc).strftime(
                   "%Y-%m-%d %H:%M UTC"),
               cores=os.cpu_count(), memory_gb=memory_gb(),
               cpu=cpu_model(), loads=[load_avg()])
    has, why = has_summaries_option(pg)
    raw["summaries_option"] = has
    if not has:
        raw["summaries_skip"] = why
        log("bloomidx (summaries = off): skipped, %s" % why)
    problems = []
    for table in a.tables.split(","):
        t0 = time.time()
        pg.run(table_sql(table, a.rows) + "CHECKPOINT;\n")
        tr = dict(make_s=time.time() - t0, contenders={},
                  table_bytes=int(pg.value("SELECT pg_relation_size('%s')"
                                           % table)))
        log("table %s: %d rows, %.0f MB, made in %.0f s"
            % (table, a.rows, tr["table_bytes"] / 1048576.0, tr["make_s"]))
        qs = make_queries(pg, table, a.rows)
        tr["queries"] = [dict(name=q["name"], sql=q["sql"]) for q in qs]
        # The sequential scan: the answers, and its warm time
        pg.run("SELECT pg_prewarm('%s');\n" % table)
        wants, seq = {}, {}
        for q in qs:
            out = pg.run(q["sql"] + ";\n\\o /dev/null\n\\timing on\n" +
                         (q["sql"] + ";\n") * min(a.runs, 3),
                         plan_options(None))
            wants[q["name"]] = out.split("\n", 1)[0].strip()
            t = [float(m) for m in
                 re.findall(r"^Time: ([0-9.]+) ms", out, re.M)]
            seq[q["name"]] = dict(warm_ms=median(t), count=int(wants[q["name"]]))
            log("  seq scan %-12s %8.1f ms, %s rows"
                % (q["name"], median(t), wants[q["name"]]))
        tr["seqscan"] = seq
        if a.insert_rows > 0:
            tr["insert_noindex_ms"], _ = insert_ms(pg, table, a.insert_rows)
        relpath = pg.value("SELECT pg_relation_filepath('%s')" % table)
        if table == "tbloom":
            # Values of random existing rows, for the throughput scripts
            pg.run("SELECT setseed(0.5);\n"
                   "CREATE TABLE conc_vals AS SELECT row_number() OVER () AS k,"
                   " i1, i2 FROM (SELECT i1, i2 FROM tbloom ORDER BY random() "
                   "LIMIT %d) s;\n"
                   "CREATE UNIQUE INDEX ON conc_vals (k);\nANALYZE conc_vals;\n"
                   % min(10000, a.rows))
        for c in CONTENDERS:
            if c[0] not in a.contenders.split(","):
                continue
            if c[0] == "bloomidx_nosum" and not has:
                tr["contenders"][c[0]] = dict(key=c[0], label=c[1],
                                              skipped=why)
                continue
            try:
                tr["contenders"][c[0]] = measure_contender(
                    pg, server, c, table, qs, wants, a, relpath)
            except AnswerError as e:
                problems.append(str(e))
                log("error: " + str(e))
                for n in pg.run("SELECT indexrelid::regclass FROM pg_index "
                                "WHERE indrelid = '%s'::regclass;\n"
                                % table).split():
                    pg.run("DROP INDEX %s;\n" % n)
            raw["loads"].append(load_avg())
        tr["elapsed_s"] = time.time() - t0
        raw["tables"][table] = tr
        pg.run("DROP TABLE IF EXISTS conc_vals;\nDROP TABLE %s;\nCHECKPOINT;\n"
               % table)
    raw["elapsed_s"] = time.time() - t_start
    raw["problems"] = problems
    with open(a.raw, "w") as f:
        json.dump(raw, f, indent=1)
    log("measured in %.0f s" % raw["elapsed_s"])
    if problems:
        for p in problems:
            print("error: " + p, file=sys.stderr)
        sys.exit(1)


# --- report ----------------------------------------------------------------------

def cell(x, b, csvrow=None):
    """A figure with its ratio to b: '1.23 (0.045×)'."""
    if x is None:
        return "-"
    if b:
        return "%s (%.2g×)" % (fmt(x), x / b)
    return fmt(x)


def rows_label(n):
    if n % 1000000 == 0:
        return "%dM" % (n // 1000000)
    if n % 1000 == 0:
        return "%dK" % (n // 1000)
    return str(n)


def insert_us(cr, tr, n):
    if cr.get("insert_ms") is None or tr.get("insert_noindex_ms") is None:
        return None
    return max(0.0, cr["insert_ms"] - tr["insert_noindex_ms"]) * 1000.0 / n


def report_size(raw, csvw):
    n = raw["rows"]
    md = ["## %s rows" % "{:,}".format(n), ""]
    md.append("PostgreSQL %s, %s; %d cores (%s), %s GB; load average %.2f to "
              "%.2f; measured in %.0f minutes."
              % (raw["pg_version"], raw["date"], raw["cores"], raw["cpu"],
                 raw["memory_gb"], min(raw["loads"]), max(raw["loads"]),
                 raw["elapsed_s"] / 60.0))
    md.append("")
    for table, tr in raw["tables"].items():
        cons = tr["contenders"]
        base = cons.get(BASE, {})
        md.append("### %s, %s rows (%.0f MB)"
                  % (TABLES[table]["title"], "{:,}".format(n),
                     tr["table_bytes"] / 1048576.0))
        md.append("")
        md.append("Queries: " + "; ".join(
            "%s `%s` (%s rows)" % (q["name"], q["sql"],
                                   "{:,}".format(tr["seqscan"][q["name"]]["count"]))
            for q in tr["queries"]))
        md.append("")
        md.append("| contender | build s | size MB | insert µs/row |")
        md.append("|---|---|---|---|")
        bins = insert_us(base, tr, raw["insert_rows"]) if base else None
        for key, cr in cons.items():
            if cr.get("skipped"):
                md.append("| %s | skipped: %s | | |" % (cr["label"], cr["skipped"]))
                continue
            ins = insert_us(cr, tr, raw["insert_rows"])
            md.append("| %s | %s | %s | %s |" % (
                cr["label"], cell(cr["build_s"], base.get("build_s")),
                cell(cr["size_bytes"] / 1048576.0,
                     base.get("size_bytes", 0) / 1048576.0),
                cell(ins, bins)))
            for metric, v in (("build_s", cr["build_s"]),
                              ("size_mb", cr["size_bytes"] / 1048576.0),
                              ("insert_us_row", ins)):
                b = {"build_s": base.get("build_s"),
                     "size_mb": base.get("size_bytes", 0) / 1048576.0,
                     "insert_us_row": bins}[metric]
                csvw.writerow([n, table, key, "", metric, v,
                               v / b if v is not None and b else ""])
        md.append("")
        md.append("| contender | query | warm ms (pooled session) | pages "
                  "touched (index's) | fresh connection's first query ms | "
                  "cold ms | cold pages read (index's) | candidates | "
                  "removed by recheck |")
        md.append("|---|---|---|---|---|---|---|---|---|")
        for q in tr["queries"]:
            qn = q["name"]
            bq = base.get("queries", {}).get(qn, {})
            for key, cr in cons.items():
                if cr.get("skipped"):
                    md.append("| %s | %s | skipped | | | | | | |"
                              % (cr["label"], qn))
                    continue
                r = cr["queries"][qn]
                c = r.get("cold")
                bc = bq.get("cold") or {}
                md.append("| %s | %s | %s | %s (%s) | %s | %s | %s | %s | %s |"
                          % (cr["label"], qn,
                             cell(r["warm_ms"], bq.get("warm_ms")) +
                             (" (%s)" % r["note"] if r.get("note") else ""),
                             "{:,}".format(r["pages"]),
                             "{:,}".format(r["index_pages"]),
                             cell(r["fresh_ms"], bq.get("fresh_ms")),
                             cell(c["ms"], bc.get("ms")) if c else "-",
                             "%s (%s)" % ("{:,}".format(int(c["read"])),
                                          "{:,}".format(int(c["index_read"])))
                             if c else "-",
                             "-" if r["candidates"] is None
                             else "{:,}".format(r["candidates"]),
                             "-" if r["recheck_removed"] is None
                             else "{:,}".format(r["recheck_removed"])))
                for metric, v, b in (
                        ("warm_ms", r["warm_ms"], bq.get("warm_ms")),
                        ("pages", r["pages"], bq.get("pages")),
                        ("fresh_ms", r["fresh_ms"], bq.get("fresh_ms")),
                        ("cold_ms", c and c["ms"], bc.get("ms")),
                        ("cold_pages_read", c and c["read"], bc.get("read"))):
                    if v is not None:
                        csvw.writerow([n, table, key, qn, metric, v,
                                       v / b if b else ""])
            md.append("| no index (seq scan) | %s | %s | | | | | | |"
                      % (qn, cell(tr["seqscan"][qn]["warm_ms"],
                                  bq.get("warm_ms"))))
        md.append("")
        thr = [(cr, cr["throughput"]) for cr in cons.values()
               if cr.get("throughput")]
        if thr:
            md += throughput_table(raw, table, cons, thr, csvw)
    return md


def throughput_table(raw, table, cons, thr, csvw):
    n = raw["rows"]
    clients = [int(c) for c in raw["clients"].split(",")]
    md = ["Throughput on %s: queries a second (pgbench, %d s a cell, values "
          "of a random existing row), ratio to contrib/bloom's in the same "
          "run; \"+2 ins\": with 2 more clients inserting rows meanwhile "
          "(their inserts a second in brackets)." % (table, raw["seconds"]),
          "", "| contender | query | " + " | ".join(
              "%d client%s" % (c, "s" if c > 1 else "") for c in clients) +
          " |", "|---|---|" + "---|" * len(clients)]
    base = dict(((r["query"], r["clients"], r["inserting"]), r)
                for r in cons.get(BASE, {}).get("throughput", []))
    for cr, rs in thr:
        by = dict(((r["query"], r["clients"], r["inserting"]), r) for r in rs)
        for ins in (0, 2):
            for q in ("1col", "2col"):
                cells = []
                for c in clients:
                    r = by.get((q, c, ins))
                    if r is None:
                        cells.append("")
                        continue
                    b = base.get((q, c, ins))
                    s = cell(r["tps"], b and b["tps"])
                    if ins:
                        s += " [%.0f]" % r["insert_tps"]
                    cells.append(s)
                    csvw.writerow([n, table, cr["key"],
                                   "%s_%dclients%s" % (q, c, "_2ins" if ins else ""),
                                   "qps", r["tps"],
                                   r["tps"] / b["tps"] if b and b["tps"] else ""])
                if any(cells):
                    md.append("| %s | %s%s | %s |"
                              % (cr["label"], q, " +2 ins" if ins else "",
                                 " | ".join(cells)))
    md.append("")
    return md


def across_sizes(raws):
    """The warm and cold query times of every contender at every size."""
    md = ["## Across sizes", "",
          "Warm (pooled session) and cold query times, ms, and the ratio to "
          "contrib/bloom's at the same size in the same run.", ""]
    sizes = [r["rows"] for r in raws]
    for table in TABLES:
        if not any(table in r["tables"] for r in raws):
            continue
        md.append("| %s | query | %s |" % (table, " | ".join(
            "%s warm | %s cold" % (rows_label(s), rows_label(s)) for s in sizes)))
        md.append("|---|---|" + "---|---|" * len(sizes))
        tr0 = next(r["tables"][table] for r in raws if table in r["tables"])
        for key, label in LABEL.items():
            for q in tr0["queries"]:
                cells = []
                for raw in raws:
                    tr = raw["tables"].get(table, {})
                    cr = tr.get("contenders", {}).get(key)
                    b = tr.get("contenders", {}).get(BASE)
                    if not cr or cr.get("skipped"):
                        cells += ["-", "-"]
                        continue
                    r = cr["queries"][q["name"]]
                    bq = b["queries"][q["name"]] if b else {}
                    cells.append(cell(r["warm_ms"], bq.get("warm_ms")))
                    c, bc = r.get("cold"), bq.get("cold") or {}
                    cells.append(cell(c["ms"], bc.get("ms")) if c else "-")
                if any(x != "-" for x in cells):
                    md.append("| %s | %s | %s |" % (label, q["name"],
                                                    " | ".join(cells)))
        md.append("")
    return md


def cmd_report(a):
    raws = []
    for path in a.raw:
        with open(path) as f:
            raws.append(json.load(f))
    raws.sort(key=lambda r: r["rows"])
    r0 = raws[0]
    # Sizes measured in separate runs may have built other commits
    sources = []
    for r in raws:
        if r["source"] not in sources:
            sources.append(r["source"])
    source = r0["source"] if len(sources) == 1 else "; ".join(
        "%s at %s rows" % (src, ", ".join("{:,}".format(r["rows"])
                                          for r in raws if r["source"] == src))
        for src in sources)
    md = ["# bloomidx scale benchmark", "",
          "Generated by `bench/scale.sh`: %s rows; PostgreSQL %s; bloomidx "
          "(%s) built with `%s`; warm figures the median of %d runs after a "
          "warm-up, fresh connections' first queries the median of %d "
          "connections, cold the median of %d restarts. Ratios (×) are to "
          "contrib/bloom with defaults on the same query at the same size "
          "in the same run." % (
              ", ".join("{:,}".format(r["rows"]) for r in raws),
              r0["pg_version"], source, r0["cflags"], r0["runs"],
              r0["runs"], r0["cold_runs"]), "",
          "- Cluster settings: %s" % ", ".join("`%s`" % s
                                               for s in r0["settings"]),
          "- Index option `summaries`: %s" % (
              "present, so bloomidx is also measured with `summaries = off`"
              if r0["summaries_option"] else
              "not in this build (%s): the `summaries = off` rows are "
              "skipped" % r0.get("summaries_skip", "")), ""]
    if os.environ.get("BENCH_NOTE"):
        md += ["- Note: " + os.environ["BENCH_NOTE"], ""]
    md += across_sizes(raws)
    os.makedirs(a.out, exist_ok=True)
    with open(os.path.join(a.out, "results.csv"), "w", newline="") as f:
        csvw = csv.writer(f)
        csvw.writerow(["rows", "table", "contender", "query", "metric",
                       "value", "ratio_to_bloom"])
        for raw in raws:
            md += report_size(raw, csvw)
    problems = [p for r in raws for p in r.get("problems", [])]
    if problems:
        md += ["## Errors", ""] + ["- " + p for p in problems] + [""]
    with open(os.path.join(a.out, "results.md"), "w") as f:
        f.write("\n".join(md))
    print("\n".join(md))
    if problems:
        sys.exit(1)


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    sub = ap.add_subparsers(dest="cmd", required=True)
    m = sub.add_parser("measure")
    m.add_argument("--rows", type=int, required=True)
    m.add_argument("--runs", type=int, default=5)
    m.add_argument("--cold-runs", type=int, default=3)
    m.add_argument("--cold-queries", default="1col,2col,tenant,day,tenant_day,random",
                   help="the queries run cold ('' for none)")
    m.add_argument("--tables", default="tbloom,tcorr")
    m.add_argument("--contenders",
                   default="bloomidx,bloomidx_nosum,bloom,gin,brin")
    m.add_argument("--cold-contenders",
                   default="bloomidx,bloomidx_nosum,bloom,gin,brin")
    m.add_argument("--conc-contenders", default="bloomidx,bloomidx_nosum,bloom,gin")
    m.add_argument("--conc-queries", default="1col,2col")
    m.add_argument("--conc-inserting-only", action="store_true",
                   help="only the throughput with clients inserting (smoke)")
    m.add_argument("--seconds", type=int, default=10,
                   help="seconds a throughput cell (0: no throughput)")
    m.add_argument("--clients", default="1,2,4,8")
    m.add_argument("--insert-rows", type=int, default=None)
    m.add_argument("--psql", required=True)
    m.add_argument("--pgctl", required=True)
    m.add_argument("--pgbench", required=True)
    m.add_argument("--datadir", required=True)
    m.add_argument("--logfile", required=True)
    m.add_argument("--pg-user", default="postgres")
    m.add_argument("--workdir", required=True)
    m.add_argument("--raw", required=True)
    m.add_argument("--settings", default="")
    m.add_argument("--source", default="")
    m.add_argument("--cflags", default="")
    r = sub.add_parser("report")
    r.add_argument("--raw", nargs="+", required=True)
    r.add_argument("--out", required=True)
    a = ap.parse_args()
    if a.cmd == "measure":
        if a.insert_rows is None:
            a.insert_rows = max(100, min(1000000, a.rows // 100))
        cmd_measure(a)
    else:
        cmd_report(a)


if __name__ == "__main__":
    main()
