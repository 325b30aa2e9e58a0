#!/usr/bin/env python3
"""Cold-cache and concurrency benchmark of bloomidx (bench/run.sh --cold,
--concurrency).

    cold.py cold --psql P --pgctl C --datadir D --logfile L --rows N ...
    cold.py concurrency --psql P --pgbench B --rows N --seconds S ...

Both run on the cluster bench/run.sh started (PGHOST, PGPORT, PGUSER and
PGDATABASE in the environment), on tbloom (bench/bench.py's table of six
random int columns, made here if missing), one contender's index at a time.

cold: for each contender and query, the server is restarted (its shared
buffers emptied) and the table's and index's files evicted from the OS page
cache (bench/evict.py), then the query runs once under EXPLAIN (ANALYZE,
BUFFERS): its time and the pages it read and found. --runs such cold runs,
median; then the same query warm (median of 5). With --lib-before and
--lib-after (two builds of bloomidx), each cold run is made with both, the
library swapped while the server is down, so the two builds are compared on
the same cluster, data and index.

concurrency: pgbench custom scripts, each transaction one equality query of
1 or 2 columns on values of a random existing row (a side table of 10,000
rows of tbloom, looked up with \\gset), with 1, 2, 4 and 8 clients for
--seconds each: transactions per second; then the same with 2 more clients
inserting random rows into tbloom meanwhile. Sequential scans are disabled
so that every contender answers with its index.

Prints a Markdown report, and writes it with --out.
"""

import argparse
import json
import os
import shutil
import subprocess
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import common  # noqa: E402
import evict  # noqa: E402
from common import log, median, tps  # noqa: E402

COLS = common.TBLOOM_COLS
TABLE_SQL = common.TBLOOM_SQL

# name, label, CREATE INDEX (%s: index name), extension
CONTENDERS = {
    "bloomidx": ("bloomidx (sliced, defaults)",
                 "CREATE INDEX %s ON tbloom USING bloomidx (i1, i2, i3, i4, i5, i6)",
                 "bloomidx"),
    "bloomidx_row": ("bloomidx (layout=row)",
                     "CREATE INDEX %s ON tbloom USING bloomidx (i1, i2, i3, i4, i5, i6) "
                     "WITH (layout = 'row')", "bloomidx"),
    "bloom": ("contrib/bloom (defaults)",
              "CREATE INDEX %s ON tbloom USING bloom (i1, i2, i3, i4, i5, i6)",
              "bloom"),
    "gin": ("GIN (btree_gin)",
            "CREATE INDEX %s ON tbloom USING gin (i1, i2, i3, i4, i5, i6)",
            "btree_gin"),
    "brin": ("BRIN bloom (pages_per_range=4, 700 values/range)",
             "CREATE INDEX %s ON tbloom USING brin (" +
             ", ".join("%s int4_bloom_ops(n_distinct_per_range = 700)" % c
                       for c in COLS).replace("%", "%%") +
             ") WITH (pages_per_range = 4)", None),
}
BASE = "bloom"


class Pg:
    def __init__(self, psql):
        self.psql = psql

    def run(self, script, options=None):
        env = dict(os.environ)
        if options:
            env["PGOPTIONS"] = options
        p = subprocess.run([self.psql, "-X", "-q", "-A", "-t", "-v",
                            "ON_ERROR_STOP=1"], input=script, text=True,
                           stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                           env=env)
        if p.returncode != 0:
            raise RuntimeError("psql failed: %s\n--- script ---\n%s"
                               % (p.stderr.strip(), script[:2000]))
        return p.stdout

    def value(self, sql):
        return self.run(sql + ";\n").strip()

    def wait_ready(self):
        for _ in range(600):
            try:
                self.value("SELECT 1")
                return
            except RuntimeError:
                time.sleep(0.1)
        raise RuntimeError("the server did not come back")


def ensure_table(pg, rows):
    if pg.value("SELECT to_regclass('tbloom') IS NOT NULL") != "t":
        t0 = time.time()
        pg.run(TABLE_SQL % rows)
        log("tbloom made (%d rows) in %.1f s" % (rows, time.time() - t0))
    pg.run("CREATE EXTENSION IF NOT EXISTS bloomidx;\n"
           "CREATE EXTENSION IF NOT EXISTS bloom;\n"
           "CREATE EXTENSION IF NOT EXISTS btree_gin;\n")


def queries(pg, rows):
    """The 1-column and 2-column equality queries on one existing row."""
    vals = pg.value("SELECT i1 || ',' || i2 FROM tbloom OFFSET %d LIMIT 1"
                    % (rows // 2)).split(",")
    return [("1col", "SELECT count(*) FROM tbloom WHERE i1 = %s" % vals[0]),
            ("2col", "SELECT count(*) FROM tbloom WHERE i1 = %s AND i2 = %s"
             % (vals[0], vals[1]))]


def drop_indexes(pg):
    for name in pg.run("SELECT indexrelid::regclass FROM pg_index "
                       "WHERE indrelid = 'tbloom'::regclass;\n").split():
        pg.run("DROP INDEX %s;\n" % name)


def check_answer(pg, name, qname, sql):
    """Stop unless the index plan (run first, on empty caches) returns the
    sequential scan's count."""
    got = pg.run("SET enable_seqscan = off;\n%s;\n" % sql).strip()
    want = pg.run("SET enable_indexscan = off; SET enable_bitmapscan = off;\n"
                  "%s;\n" % sql).strip()
    if got != want:
        raise RuntimeError("%s, %s: the index plan counts %s rows, the "
                           "sequential scan %s" % (name, qname, got, want))


IO_CONCURRENCY = None


def explain(pg, sql):
    """Time, result and the pages of a query: (ms, shared read, shared hit)."""
    out = pg.run(("SET effective_io_concurrency = %d;\n" % IO_CONCURRENCY
                  if IO_CONCURRENCY is not None else "") +
                 "SET enable_seqscan = off;\n"
                 "EXPLAIN (ANALYZE, BUFFERS, FORMAT JSON) %s;\n" % sql)
    plan = json.loads(out)[0]
    top = plan["Plan"]
    scan = [0.0, 0, 0]
    nodes = [top]
    while nodes:
        node = nodes.pop()
        nodes.extend(node.get("Plans", []))
        if node["Node Type"] == "Bitmap Index Scan":
            scan[0] += node["Actual Total Time"]
            scan[1] += node.get("Shared Read Blocks", 0)
            scan[2] += node.get("Shared Hit Blocks", 0)
    return (plan["Execution Time"], top.get("Shared Read Blocks", 0),
            top.get("Shared Hit Blocks", 0), scan[0], scan[1], scan[2])


# --- cold --------------------------------------------------------------------

class Server:
    def __init__(self, a):
        self.a = a

    def _pgctl(self, *args):
        cmd = [self.a.pgctl, "-D", self.a.datadir, "-w", "-t", "120"] + list(args)
        if os.geteuid() == 0:
            cmd = ["runuser", "-u", self.a.pg_user, "--"] + cmd
        subprocess.run(cmd, check=True, stdout=subprocess.DEVNULL, cwd="/")

    def stop(self):
        self._pgctl("-m", "fast", "stop")

    def start(self):
        self._pgctl("-l", self.a.logfile, "start")


def cold_once(pg, server, a, relpaths, sql, lib=None):
    """Restart with empty caches (and lib as bloomidx's library); run sql."""
    server.stop()
    if lib is not None:
        shutil.copyfile(lib, a.lib_path)
    evict.evict(a.datadir, relpaths)
    server.start()
    pg.wait_ready()
    return explain(pg, sql)


def cmd_cold(a):
    global IO_CONCURRENCY
    IO_CONCURRENCY = a.io_concurrency
    pg = Pg(a.psql)
    server = Server(a)
    ensure_table(pg, a.rows)
    qs = [q for q in queries(pg, a.rows) if q[0] in a.queries.split(",")]
    libs = [("", None)]
    if a.lib_before and a.lib_after:
        libs = [(" before", a.lib_before), (" after", a.lib_after)]
    results = []
    for name in a.contenders.split(","):
        label, ddl, _ = CONTENDERS[name]
        drop_indexes(pg)
        t0 = time.time()
        pg.run(ddl % ("cold_" + name) + ";\nCHECKPOINT;\n")
        log("%s built in %.1f s" % (name, time.time() - t0))
        size = int(pg.value("SELECT pg_relation_size('cold_%s')" % name))
        relpaths = [pg.value("SELECT pg_relation_filepath('tbloom')"),
                    pg.value("SELECT pg_relation_filepath('cold_%s')" % name)]
        mine = CONTENDERS[name][2] == "bloomidx"
        for qname, sql in qs:
            cold_once(pg, server, a, relpaths, "SELECT 1")
            check_answer(pg, name, qname, sql)
            for suffix, lib in (libs if mine else [("", None)]):
                cold = [cold_once(pg, server, a, relpaths, sql, lib)
                        for _ in range(a.runs)]
                warm = [explain(pg, sql) for _ in range(6)][1:]
                r = dict(contender=name + suffix.replace(" ", "_"),
                         label=label + suffix, query=qname, size=size,
                         cold_ms=median([c[0] for c in cold]),
                         cold_read=median([c[1] for c in cold]),
                         cold_hit=median([c[2] for c in cold]),
                         cold_index_ms=median([c[3] for c in cold]),
                         cold_index_read=median([c[4] for c in cold]),
                         cold_index_hit=median([c[5] for c in cold]),
                         warm_ms=median([w[0] for w in warm]),
                         warm_pages=median([w[1] + w[2] for w in warm]))
                results.append(r)
                log("%s %s: cold %.1f ms (%d read, %d hit; index scan %.1f ms, "
                    "%d read, %d hit), warm %.3f ms"
                    % (r["label"], qname, r["cold_ms"], r["cold_read"],
                       r["cold_hit"], r["cold_index_ms"], r["cold_index_read"],
                       r["cold_index_hit"], r["warm_ms"]))
        if libs[0][1] is not None and mine:
            shutil.copyfile(a.lib_after, a.lib_path)
            server.stop()
            server.start()
            pg.wait_ready()
        drop_indexes(pg)
    report = cold_report(results, a)
    print(report)
    if a.out:
        with open(a.out, "w") as f:
            f.write(report)
        with open(a.out.replace(".md", "") + ".json", "w") as f:
            json.dump(results, f, indent=1)


def cold_report(results, a):
    base = {r["query"]: r for r in results if r["contender"] == BASE}
    lines = ["### Cold and warm queries, %d rows" % a.rows, "",
             "Query time under EXPLAIN ANALYZE, cold (server restarted, the "
             "table's and index's files evicted from the OS cache; median of "
             "%d) and warm (median of 5)%s; ratios to contrib/bloom's in the "
             "same run. Pages: cold, read/found in shared buffers (the whole "
             "plan, heap included); warm, touched."
             % (a.runs, ", effective_io_concurrency = %d" % a.io_concurrency
                if a.io_concurrency is not None else ""), "",
             "| contender | query | size MB | cold ms | cold pages read/hit | "
             "cold index scan ms | its pages read/hit | warm ms | warm pages |",
             "|---|---|---|---|---|---|---|---|---|"]
    for r in results:
        b = base.get(r["query"])

        def ratio(k):
            if b is None or not b[k]:
                return ""
            return " (%.3g×)" % (r[k] / b[k])
        lines.append("| %s | %s | %.1f | %.1f%s | %d/%d | %.1f%s | %d/%d | "
                     "%.3f%s | %d |"
                     % (r["label"], r["query"], r["size"] / 1048576.0,
                        r["cold_ms"], ratio("cold_ms"), r["cold_read"],
                        r["cold_hit"], r["cold_index_ms"], ratio("cold_index_ms"),
                        r["cold_index_read"], r["cold_index_hit"],
                        r["warm_ms"], ratio("warm_ms"), r["warm_pages"]))
    return "\n".join(lines) + "\n"


# --- concurrency --------------------------------------------------------------

def write_scripts(d, rows):
    scripts = {
        "1col": "\\set k random(1, 10000)\n"
                "SELECT i1 FROM conc_vals WHERE k = :k \\gset\n"
                "SELECT count(*) FROM tbloom WHERE i1 = :i1;\n",
        "2col": "\\set k random(1, 10000)\n"
                "SELECT i1, i2 FROM conc_vals WHERE k = :k \\gset\n"
                "SELECT count(*) FROM tbloom WHERE i1 = :i1 AND i2 = :i2;\n",
        "insert": "".join("\\set v%d random(0, 1000000)\n" % i
                          for i in range(1, 7)) +
                  "INSERT INTO tbloom VALUES (:v1, :v2, :v3, :v4, :v5, :v6);\n",
    }
    return common.write_scripts(d, scripts, "conc_")


def pgbench(a, script, clients, seconds):
    return common.pgbench(a.pgbench, script, clients, seconds,
                          "-c enable_seqscan=off")


def cmd_concurrency(a):
    pg = Pg(a.psql)
    ensure_table(pg, a.rows)
    pg.run("DROP TABLE IF EXISTS conc_vals;\n"
           "SELECT setseed(0.5);\n"
           "CREATE TABLE conc_vals AS SELECT row_number() OVER () AS k, i1, i2 "
           "FROM (SELECT i1, i2 FROM tbloom ORDER BY random() LIMIT 10000) s;\n"
           "CREATE UNIQUE INDEX ON conc_vals (k);\nANALYZE conc_vals;\n")
    os.makedirs(a.workdir, exist_ok=True)
    scripts = write_scripts(a.workdir, a.rows)
    clients = [int(c) for c in a.clients.split(",")]
    results = []
    for name in a.contenders.split(","):
        label, ddl, _ = CONTENDERS[name]
        drop_indexes(pg)
        pg.run(ddl % ("conc_" + name) + ";\nVACUUM ANALYZE tbloom;\n")
        for inserting in ((0,) if a.no_insert else (0, 2)):
            for q in a.queries.split(","):
                for c in clients:
                    ins = (pgbench(a, scripts["insert"], inserting, a.seconds)
                           if inserting else None)
                    t = tps(pgbench(a, scripts[q], c, a.seconds))
                    itps = tps(ins) if ins else None
                    results.append(dict(contender=name, label=label, query=q,
                                        clients=c, inserting=inserting,
                                        tps=t, insert_tps=itps))
                    log("%s %s %d clients%s: %.1f tps%s"
                        % (name, q, c,
                           " (+%d inserting)" % inserting if inserting else "",
                           t, ", inserts %.1f/s" % itps if itps else ""))
        drop_indexes(pg)
    pg.run("DROP TABLE conc_vals;\n")
    report = conc_report(results, a)
    print(report)
    if a.out:
        with open(a.out, "w") as f:
            f.write(report)
        with open(a.out.replace(".md", "") + ".json", "w") as f:
            json.dump(results, f, indent=1)


def conc_report(results, a):
    clients = [int(c) for c in a.clients.split(",")]
    lines = ["### Throughput, %d rows" % a.rows, "",
             "Queries a second (pgbench, %d s a cell, random present values), "
             "ratio to contrib/bloom's in the same run; \"+2 ins\": with 2 "
             "more clients inserting rows meanwhile (their inserts a second "
             "in brackets)." % a.seconds, "",
             "| contender | query | " + " | ".join(
                 "%d client%s" % (c, "s" if c > 1 else "") for c in clients) +
             " |", "|---|---|" + "---|" * len(clients)]
    key = {(r["contender"], r["query"], r["clients"], r["inserting"]): r
           for r in results}
    for name in a.contenders.split(","):
        for ins in ((0,) if a.no_insert else (0, 2)):
            for q in a.queries.split(","):
                cells = []
                for c in clients:
                    r = key.get((name, q, c, ins))
                    b = key.get((BASE, q, c, ins))
                    if r is None:
                        cells.append("")
                        continue
                    cell = "%.0f" % r["tps"]
                    if b and b["tps"]:
                        cell += " (%.3g×)" % (r["tps"] / b["tps"])
                    if ins:
                        cell += " [%.0f]" % r["insert_tps"]
                    cells.append(cell)
                lines.append("| %s | %s%s | %s |"
                             % (CONTENDERS[name][0], q,
                                " +2 ins" if ins else "", " | ".join(cells)))
    return "\n".join(lines) + "\n"


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    sub = ap.add_subparsers(dest="cmd", required=True)
    c = sub.add_parser("cold")
    c.add_argument("--psql", required=True)
    c.add_argument("--pgctl", required=True)
    c.add_argument("--datadir", required=True)
    c.add_argument("--logfile", required=True)
    c.add_argument("--pg-user", default="postgres")
    c.add_argument("--rows", type=int, required=True)
    c.add_argument("--runs", type=int, default=3)
    c.add_argument("--contenders", default="bloomidx,bloomidx_row,bloom,gin,brin")
    c.add_argument("--lib-path", default="")
    c.add_argument("--lib-before", default="")
    c.add_argument("--lib-after", default="")
    c.add_argument("--queries", default="1col,2col")
    c.add_argument("--io-concurrency", type=int, default=None,
                   help="effective_io_concurrency of the queries")
    c.add_argument("--out", default="")
    k = sub.add_parser("concurrency")
    k.add_argument("--psql", required=True)
    k.add_argument("--pgbench", required=True)
    k.add_argument("--rows", type=int, required=True)
    k.add_argument("--seconds", type=int, default=10)
    k.add_argument("--clients", default="1,2,4,8")
    k.add_argument("--contenders", default="bloomidx,bloom,gin")
    k.add_argument("--queries", default="1col,2col")
    k.add_argument("--no-insert", action="store_true",
                   help="leave out the runs with clients inserting")
    k.add_argument("--workdir", required=True)
    k.add_argument("--out", default="")
    a = ap.parse_args()
    if a.cmd == "cold":
        cmd_cold(a)
    else:
        cmd_concurrency(a)


if __name__ == "__main__":
    main()
