#!/usr/bin/python3
"""bench/sets.py: the "substrings, arrays and jsonb" benchmark of bloomidx.

bench/sets.sh sets up a throwaway cluster and calls this twice:

  sets.py measure --rows N --runs N --psql PSQL --data DIR --work DIR --raw raw.json
      Loads Debian's Contents paths (contents) and Packages stanzas
      (packages) from the TSV files of bench/sets_data.sh, picks the query
      patterns and elements from the data, and measures every contender;
      writes all raw figures to raw.json.  Any contender whose query returns
      another count than the sequential scan's makes it fail (after raw.json
      is written).
  sets.py report --raw raw.json --out DIR
      Writes DIR/results.md and DIR/results.csv.

Standard library only; the talking to psql and the number formatting are
bench/bench.py's.
"""

import argparse
import csv
import json
import os
import random
import re
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from bench import (Pg, median, log, fmt, ratio, fmt_ratio, walk,  # noqa: E402
                   split_json, machine_info, load_avg)

# --- contenders -------------------------------------------------------------------

# Each target: a table, the contenders on it (key, label, index DDL with %s
# for the table, the bloomidx operator class it needs), the queries' kind.
# "base" is the contender the ratios are to; the sequential scan runs first
# (its counts are the reference, its COPY the no-index insert time).
TARGETS = [
    dict(key="path", table="contents", base="gin", title="contents.path: LIKE '%x%' (substrings)",
         contenders=[
             dict(key="seqscan", label="no index (seq scan)", ddl=[]),
             dict(key="gin", label="GIN (path gin_trgm_ops)",
                  ddl=["CREATE INDEX ON contents USING gin (path gin_trgm_ops)"],
                  keep=True),
             dict(key="gin_btree", label="GIN (path gin_trgm_ops) + B-tree (section)",
                  ddl=["CREATE INDEX ON contents USING gin (path gin_trgm_ops)",
                       "CREATE INDEX ON contents USING btree (section)"],
                  only_section=True, reuse="gin"),
             dict(key="gist", label="GiST (path gist_trgm_ops)",
                  ddl=["CREATE INDEX ON contents USING gist (path gist_trgm_ops)"],
                  slow=True),
             dict(key="bloomidx", label="bloomidx (path text_trgm_ops)",
                  ddl=["CREATE INDEX ON contents USING bloomidx (path text_trgm_ops)"],
                  opclass="text_trgm_ops"),
             # Sized as the README says: elements = about avg(length(path))
             # (%d filled in from the data).
             dict(key="bloomidx_sized", label="bloomidx (path text_trgm_ops (elements = %d))",
                  ddl=["CREATE INDEX ON contents USING bloomidx "
                       "(path text_trgm_ops (elements = %d))"],
                  opclass="text_trgm_ops", sized=True),
             dict(key="bloomidx3", label="bloomidx (package, section, path text_trgm_ops)",
                  ddl=["CREATE INDEX ON contents USING bloomidx "
                       "(package, section, path text_trgm_ops)"],
                  opclass="text_trgm_ops"),
         ]),
    dict(key="depends", table="packages", base="gin", title="packages.depends: text[] @> and &&",
         contenders=[
             dict(key="seqscan", label="no index (seq scan)", ddl=[]),
             dict(key="gin", label="GIN (depends array_ops)",
                  ddl=["CREATE INDEX ON packages USING gin (depends)"]),
             dict(key="bloomidx", label="bloomidx (depends array_elem_ops)",
                  ddl=["CREATE INDEX ON packages USING bloomidx (depends array_elem_ops)"],
                  opclass="array_elem_ops"),
         ]),
    dict(key="tags", table="packages", base="gin", title="packages.tags: text[] @> and &&",
         contenders=[
             dict(key="seqscan", label="no index (seq scan)", ddl=[]),
             dict(key="gin", label="GIN (tags array_ops)",
                  ddl=["CREATE INDEX ON packages USING gin (tags)"]),
             dict(key="bloomidx", label="bloomidx (tags array_elem_ops)",
                  ddl=["CREATE INDEX ON packages USING bloomidx (tags array_elem_ops)"],
                  opclass="array_elem_ops"),
         ]),
    dict(key="stanza", table="packages", base="gin", title="packages.stanza: jsonb @>",
         contenders=[
             dict(key="seqscan", label="no index (seq scan)", ddl=[]),
             dict(key="gin", label="GIN (stanza jsonb_path_ops)",
                  ddl=["CREATE INDEX ON packages USING gin (stanza jsonb_path_ops)"]),
             dict(key="bloomidx", label="bloomidx (stanza jsonb_path_ops)",
                  ddl=["CREATE INDEX ON packages USING bloomidx (stanza jsonb_path_ops)"],
                  opclass="jsonb_path_ops"),
         ]),
]

# Selectivity buckets, as fractions of the table's rows: (name, low, high).
BUCKETS = [("≤0.01%", 0.0, 0.0001), ("≤0.1%", 0.0001, 0.001),
           ("~1%", 0.003, 0.03), ("~10%", 0.03, 0.3)]
LENGTHS = (3, 5, 8, 12)
SEED = 20261203
MUTATE_CHARS = "qzxj9Q#"

TABLE_DDL = {
    "contents": "CREATE TABLE %s (path text, section text, package text)",
    "packages": "CREATE TABLE %s (package text, section text, depends text[], "
                "tags text[], stanza jsonb)",
}


def lit(s):
    """A SQL string literal (standard_conforming_strings is on)."""
    return "'" + s.replace("'", "''") + "'"


def like_arg(s):
    """'%s%' for LIKE, with s's wildcards and backslashes escaped."""
    return "%" + re.sub(r"([\\%_])", r"\\\1", s) + "%"


def bucket_of(frac):
    for name, lo, hi in BUCKETS:
        if lo < frac <= hi or (lo == 0.0 and 0 < frac <= hi):
            return name
    return None


# --- data -------------------------------------------------------------------------

def tsv_slices(src, nbase, nextra, nsingle, dest_prefix):
    """The first nbase lines of src are the table; the next nextra lines go
    to DEST_extra.tsv, the nsingle after to DEST_single.tsv, wrapping to
    the file's start (rows the table has already) when src runs out.
    Returns the table's row count and whether the insert rows wrapped."""
    with open(src, "rb") as fh:
        total = sum(1 for _ in fh)
    nbase = min(nbase, total) if nbase else total
    want = [(dest_prefix + "_extra.tsv", nextra), (dest_prefix + "_single.tsv", nsingle)]
    wrapped = nbase + nextra + nsingle > total
    outs = [open(f, "wb") for f, _ in want]
    pos = nbase          # the next line to hand out
    need = [n for _, n in want]
    which = 0
    while which < len(outs):
        with open(src, "rb") as fh:
            for i, line in enumerate(fh):
                if i < pos:
                    continue
                while which < len(outs) and need[which] == 0:
                    which += 1
                if which == len(outs):
                    break
                outs[which].write(line)
                need[which] -= 1
                pos = i + 1
        pos = 0
        while which < len(outs) and need[which] == 0:
            which += 1
    for o in outs:
        o.close()
    return nbase, total, wrapped


def load(pg, a, raw):
    """The tables, the extra rows of the bulk insert and the single-row
    insert rows."""
    os.makedirs(a.work, exist_ok=True)
    info = {}
    for table, src, limit in (("contents", "contents.tsv", a.rows),
                              ("packages", "packages.tsv", a.rows)):
        path = os.path.join(a.data, src)
        with open(path, "rb") as fh:
            total = sum(1 for _ in fh)
        nb = min(limit, total) if limit else total
        nextra = max(1, nb // 10)
        nsingle = a.latency_rows
        nb, total, wrapped = tsv_slices(path, nb, nextra, nsingle,
                                        os.path.join(a.work, table))
        t0 = time.time()
        pg.run("DROP TABLE IF EXISTS %s;\n" % table + TABLE_DDL[table] % table + ";\n"
               "COPY %s FROM PROGRAM 'head -n %d %s';\n" % (table, nb, path) +
               TABLE_DDL[table] % (table + "_single") + ";\n"
               "COPY %s_single FROM %s;\n" % (table, lit(os.path.join(a.work, table + "_single.tsv"))) +
               "VACUUM (FREEZE, ANALYZE) %s;\n" % table +
               "VACUUM ANALYZE %s_single;\n" % table)
        rows = int(pg.value("SELECT count(*) FROM %s" % table))
        info[table] = dict(rows=rows, file_rows=total, extra_rows=nextra,
                           single_rows=nsingle, insert_rows_wrapped=wrapped,
                           heap_bytes=int(pg.value("SELECT pg_relation_size('%s')" % table)),
                           load_s=time.time() - t0)
        log("%s: %d of %d rows loaded in %.1f s (%.0f MB); %d extra rows for the bulk "
            "insert, %d single-row inserts%s"
            % (table, rows, total, time.time() - t0, info[table]["heap_bytes"] / 1048576.0,
               nextra, nsingle, " (wrapping to rows already loaded)" if wrapped else ""))
    pg.run("CHECKPOINT;\n")
    raw["tables"] = info


# --- choosing the patterns -------------------------------------------------------

def choose_substrings(pg, a, rows):
    """Substrings of 3, 5, 8 and 12 characters of paths sampled at a fixed
    seed, bucketed by selectivity in a seeded sample of the table (with a
    pg_trgm GIN index of its own, dropped afterwards); the first candidate
    (in the seeded order) of each length and bucket is taken.  Absent
    strings: a present pattern with its middle character replaced, kept if a
    scan of the whole table finds it nowhere.  The true counts come from one
    sequential scan of the whole table."""
    nsample = min(rows, a.sample_rows)
    pct = min(100.0, 100.0 * nsample / rows)
    pg.run("DROP TABLE IF EXISTS csample;\n"
           "CREATE TABLE csample AS SELECT * FROM contents TABLESAMPLE BERNOULLI (%f) "
           "REPEATABLE (%d);\n" % (pct, SEED % 1000) +
           "CREATE INDEX csample_trgm ON csample USING gin (path gin_trgm_ops);\n"
           "VACUUM ANALYZE csample;\n")
    ns = int(pg.value("SELECT count(*) FROM csample"))
    # Candidate source paths: the sample's rows in a seeded hash order.
    out = pg.run("SELECT path || E'\\t' || section FROM csample "
                 "ORDER BY md5(path || '%d') LIMIT %d;\n" % (SEED, a.candidates * len(LENGTHS)))
    srcs = [l.split("\t") for l in out.split("\n") if l]
    rng = random.Random(SEED)
    cands = []
    for i, (path, section) in enumerate(srcs):
        L = LENGTHS[i % len(LENGTHS)]
        if len(path) < L:
            continue
        p = rng.randrange(0, len(path) - L + 1)
        s = path[p:p + L]
        if s.strip() != s or "\t" in s:
            continue
        cands.append(dict(s=s, L=L, section=section, src=path))
    # Sample counts, a batch at a time through the sample's GIN index.
    for k in range(0, len(cands), 50):
        batch = cands[k:k + 50]
        script = "SET enable_seqscan = off;\n" + "".join(
            "SELECT count(*) FROM csample WHERE path LIKE %s;\n" % lit(like_arg(c["s"]))
            for c in batch)
        vals = [int(v) for v in pg.run(script).split()]
        for c, v in zip(batch, vals):
            c["sample_frac"] = v / float(ns)
    chosen = []
    for L in LENGTHS:
        for bname, lo, hi in BUCKETS:
            for c in cands:
                if c["L"] == L and bucket_of(c["sample_frac"]) == bname and \
                        c["s"] not in [x["s"] for x in chosen]:
                    chosen.append(dict(c, kind="present", sample_bucket=bname))
                    break
    # Absent: mutations of the chosen ones, the least selective last.
    muts = []
    for L in LENGTHS:
        for c in [x for x in chosen if x["L"] == L]:
            mid = L // 2
            for ch in MUTATE_CHARS[:3]:
                if ch != c["s"][mid]:
                    muts.append(dict(s=c["s"][:mid] + ch + c["s"][mid + 1:], L=L,
                                     section=c["section"], src=c["src"],
                                     mutated_from=c["s"]))
    # One scan of the whole table counts the chosen patterns and the mutations.
    allp = chosen + muts
    exprs = ", ".join("count(*) FILTER (WHERE path LIKE %s)" % lit(like_arg(c["s"]))
                      for c in allp)
    counts = pg.value("SELECT array_to_string(ARRAY[%s], ' ') FROM contents" % exprs).split()
    for c, v in zip(allp, counts):
        c["rows"] = int(v)
    for L in LENGTHS:
        for m in muts:
            if m["L"] == L and m["rows"] == 0:
                chosen.append(dict(m, kind="absent", sample_bucket="absent"))
                break
    pg.run("DROP TABLE csample;\n")
    for c in chosen:
        c["bucket"] = bucket_of(c["rows"] / float(rows)) or (
            "absent" if c["rows"] == 0 else "other (%.2g%%)" % (100.0 * c["rows"] / rows))
    log("substrings: %d candidates from a %d-row sample; chosen: %s"
        % (len(cands), ns, "; ".join("%r %s %d" % (c["s"], c["bucket"], c["rows"])
                                     for c in chosen)))
    queries = []
    for c in chosen:
        tag = "%s L%d %s" % (c["kind"], c["L"], c["bucket"])
        queries.append(dict(name="like %r" % c["s"], pattern=c["s"], length=c["L"],
                            bucket=c["bucket"], kind=c["kind"], form="like", tag=tag,
                            where="path LIKE %s" % lit(like_arg(c["s"]))))
        queries.append(dict(name="section=%s, like %r" % (c["section"], c["s"]),
                            pattern=c["s"], length=c["L"], bucket=c["bucket"],
                            kind=c["kind"], form="section", section=c["section"], tag=tag,
                            where="section = %s AND path LIKE %s"
                            % (lit(c["section"]), lit(like_arg(c["s"])))))
        if c["bucket"] == "≤0.1%" and c["L"] in (5, 8):
            queries.append(dict(name="ilike %r" % c["s"].upper(), pattern=c["s"].upper(),
                                length=c["L"], bucket=c["bucket"], kind=c["kind"],
                                form="ilike", tag=tag,
                                where="path ILIKE %s" % lit(like_arg(c["s"].upper()))))
    return dict(sample_rows=ns, candidates=len(cands), chosen=chosen), queries


def choose_elements(pg, rows, target):
    """Elements (array targets) or key/value pairs (stanza) counted exactly
    over the whole table, bucketed by selectivity; in each bucket the first
    in a seeded hash order is taken.  Absent: a present one with its middle
    character replaced, kept if no row has it.  Also && of two selective
    elements and @> of two elements of one row."""
    col = target
    if target == "stanza":
        freq_sql = ("SELECT e.key || E'\\t' || e.value || E'\\t' || count(*) FROM packages, "
                    "jsonb_each_text(stanza) e GROUP BY e.key, e.value "
                    "ORDER BY md5(e.key || e.value || '%d')" % SEED)
    else:
        freq_sql = ("SELECT e || E'\\t' || count(*) FROM packages, unnest(%s) e "
                    "GROUP BY e ORDER BY md5(e || '%d')" % (col, SEED))
    out = pg.run(freq_sql + ";\n")
    freq = []
    for l in out.split("\n"):
        if not l:
            continue
        parts = l.split("\t")
        if target == "stanza":
            if len(parts) != 3:
                continue    # a value with a tab or newline: skip
            freq.append(((parts[0], parts[1]), int(parts[2])))
        else:
            freq.append((parts[0], int(parts[1])))
    known = set(e for e, _ in freq)

    def cond(e, op="@>"):
        if target == "stanza":
            return "stanza @> %s::jsonb" % lit(json.dumps({e[0]: e[1]}, ensure_ascii=False))
        return "%s %s ARRAY[%s]::text[]" % (col, op, ", ".join(lit(x) for x in e)
                                            if isinstance(e, tuple) and op == "&&" else lit(e))

    def show(e):
        return "%s=%s" % e if target == "stanza" else e

    queries = []
    picked = {}
    for bname, lo, hi in BUCKETS:
        for e, n in freq:
            if bucket_of(n / float(rows)) == bname:
                picked[bname] = (e, n)
                queries.append(dict(name="@> %s" % show(e)[:60], element=show(e), rows_expected=n,
                                    bucket=bname, kind="present", form="@>",
                                    where=cond(e)))
                break
    # Absent: mutate the most selective picked one (then the others).
    for bname, _, _ in BUCKETS:
        if bname not in picked:
            continue
        e = picked[bname][0]
        s = e[1] if target == "stanza" else e
        if not s:
            continue
        mid = len(s) // 2
        done = False
        for ch in MUTATE_CHARS:
            if ch == s[mid]:
                continue
            m = s[:mid] + ch + s[mid + 1:]
            me = (e[0], m) if target == "stanza" else m
            if me not in known:
                queries.append(dict(name="@> %s (absent)" % show(me)[:60], element=show(me),
                                    rows_expected=0, bucket="absent", kind="absent",
                                    form="@>", where=cond(me)))
                done = True
                break
        if done:
            break
    if target != "stanza":
        sel = [e for e, n in freq if 0 < n / float(rows) <= 0.001][:2]
        if len(sel) == 2:
            queries.append(dict(name="&& {%s}" % ", ".join(sel), element=",".join(sel),
                                bucket="two ≤0.1%", kind="present", form="&&",
                                where=cond(tuple(sel), "&&")))
    # @> of two elements of one row (seeded choice of a row with two or more).
    if target == "stanza":
        r = pg.value("SELECT (stanza->>'Section') || E'\\t' || (stanza->>'Maintainer') FROM packages "
                     "WHERE stanza ? 'Maintainer' ORDER BY md5(package || '%d') LIMIT 1" % SEED)
        sec, mnt = r.split("\t")
        queries.append(dict(name="@> Section=%s, Maintainer=%s" % (sec, mnt[:30]),
                            element="Section+Maintainer", bucket="pair", kind="present",
                            form="@> 2",
                            where="stanza @> %s::jsonb" % lit(json.dumps(
                                {"Section": sec, "Maintainer": mnt}, ensure_ascii=False))))
    else:
        r = pg.value("SELECT array_to_string(%s[1:2], E'\\t') FROM packages "
                     "WHERE cardinality(%s) >= 2 ORDER BY md5(package || '%d') LIMIT 1"
                     % (col, col, SEED))
        if r:
            two = r.split("\t")
            queries.append(dict(name="@> {%s}" % ", ".join(two), element=",".join(two),
                                bucket="pair", kind="present", form="@> 2",
                                where="%s @> ARRAY[%s]::text[]" % (col, ", ".join(lit(x) for x in two))))
    log("%s: %d distinct elements; chosen: %s" % (target, len(freq), "; ".join(
        "%s [%s]" % (q["name"], q["bucket"]) for q in queries)))
    return dict(distinct=len(freq)), queries


# --- measuring one contender -------------------------------------------------------

def index_names(pg, table):
    out = pg.run("SELECT indexrelid::regclass FROM pg_index "
                 "WHERE indrelid = '%s'::regclass ORDER BY 1;\n" % table)
    return [l for l in out.split("\n") if l]


def drop_indexes(pg, table):
    pg.run("".join("DROP INDEX %s;\n" % n for n in index_names(pg, table)) or "SELECT 1;\n")


def plan_settings(c):
    if not c["ddl"]:
        return ("SET enable_indexscan = off; SET enable_bitmapscan = off; "
                "SET enable_indexonlyscan = off;")
    return "SET enable_seqscan = off;"


def explain_figures(plan):
    top = plan[0]
    nodes = list(walk(top["Plan"]))
    f = dict(exec_ms=top["Execution Time"])
    bis = [n for n in nodes if n["Node Type"] == "Bitmap Index Scan"]
    bhs = [n for n in nodes if n["Node Type"] == "Bitmap Heap Scan"]
    if bis:
        f["index_ms"] = sum(n["Actual Total Time"] for n in bis)
        f["candidates"] = bis[-1]["Actual Rows"] if len(bis) == 1 else None
    if bhs:
        h = bhs[0]
        f["recheck_removed"] = h.get("Rows Removed by Index Recheck", 0)
        f["heap_rows"] = h["Actual Rows"]
        f["lossy_blocks"] = h.get("Lossy Heap Blocks", 0)
        f["heap_blocks"] = h.get("Exact Heap Blocks", 0) + h.get("Lossy Heap Blocks", 0)
        f["shared_hit"] = h.get("Shared Hit Blocks")
    shape = []
    for n in nodes:
        t = n["Node Type"]
        if t in ("Bitmap Index Scan", "Index Scan", "Index Only Scan"):
            shape.append("%s(%s)" % (t, n.get("Index Name", "?")))
        elif t in ("Seq Scan", "BitmapAnd", "BitmapOr"):
            shape.append(t)
    f["plan"] = " / ".join(shape)
    f["bitmap_index_scans"] = len(bis)
    return f


def timed_counts(pg, sql, n, setup):
    """Run sql (a count) n times with \\timing; (counts, ms)."""
    out = pg.run(setup + "\n\\timing on\n" + (sql + ";\n") * n)
    counts = [int(x) for x in re.findall(r"^(\d+)$", out, re.M)]
    ms = [float(x) for x in re.findall(r"^Time: ([0-9.]+) ms", out, re.M)]
    assert len(counts) == n and len(ms) == n, (out[:500], n)
    return counts, ms


def estimate(pg, index, col):
    """bloomidx_estimate(index, ARRAY[col]) if it answers for this column."""
    try:
        out = pg.run("SELECT false_positive_rate || ' ' || candidate_rows FROM "
                     "bloomidx_estimate('%s', ARRAY['%s']);\n" % (index, col)).strip()
        fpr, cand = out.split()
        return dict(fpr=float(fpr), candidate_rows=float(cand))
    except Exception as e:  # noqa: BLE001 - the reason goes into the report
        msg = str(e).split("\n")
        msg = [m for m in msg if m.startswith("ERROR") or "ERROR:" in m] or msg[:1]
        return dict(error=msg[0][:200])


def measure_contender(pg, a, t, c, queries, ref, raw_t):
    """Build, size, queries and inserts of contender c.  A contender that
    reuses another's index (GIN + B-tree after GIN, kept for it) builds
    only its own and counts the other's build time too."""
    table = t["table"]
    r = dict(key=c["key"], label=c["label"])
    prev = raw_t["contenders"].get(c.get("reuse") or "", {})
    reuse = bool(prev.get("indexes")) and set(prev["indexes"]) <= set(index_names(pg, table))
    # The sequential scan and GiST take seconds a query on the whole table:
    # fewer runs of theirs (--seq-runs).
    nruns = max(1, min(a.runs, a.seq_runs)) if (not c["ddl"] or c.get("slow")) else a.runs
    if not reuse:
        drop_indexes(pg, table)
    if c["ddl"]:
        builds = []
        for i in range(a.build_runs if table == "packages" else a.big_build_runs):
            if reuse:
                # Only the B-tree is built; GIN's build time is added.
                ddl = c["ddl"][len(prev["indexes"]):]
                pre = prev["build_s"]
                r["reused"] = prev["indexes"]
            else:
                drop_indexes(pg, table)
                ddl, pre = c["ddl"], 0.0
            pg.run("CHECKPOINT;\n")
            out = pg.run("\\timing on\n" + "".join(d + ";\n" for d in ddl))
            ms = [float(x) for x in re.findall(r"^Time: ([0-9.]+) ms", out, re.M)]
            builds.append(pre + sum(ms) / 1000.0)
            if reuse:
                break
        r["build_s"] = median(builds)
        r["build_all_s"] = builds
        names = index_names(pg, table)
        r["indexes"] = names
        r["size_bytes"] = int(pg.value(
            "SELECT sum(pg_relation_size(i)) FROM unnest(ARRAY[%s]::regclass[]) i"
            % ", ".join(lit(n) for n in names)))
        pg.run("VACUUM ANALYZE %s;\n" % table +
               "".join("SELECT pg_prewarm(%s);\n" % lit(n) for n in names))
        log("%s: build %.2f s (%s), size %.1f MB" % (
            c["label"], r["build_s"], ", ".join("%.2f" % b for b in builds),
            r["size_bytes"] / 1048576.0))
        if c.get("opclass"):
            col = {"text_trgm_ops": "path", "array_elem_ops": t["key"],
                   "jsonb_path_ops": "stanza"}[c["opclass"]]
            r["estimate"] = estimate(pg, names[0], col)
            log("  bloomidx_estimate: %s" % r["estimate"])
            if c["key"] == "bloomidx3":
                r["estimate_section_path"] = estimate(pg, names[0], "section', 'path")
                log("  bloomidx_estimate (section, path): %s" % r["estimate_section_path"])
    else:
        log("%s:" % c["label"])
    pg.run("SELECT pg_prewarm('%s');\n" % table)
    settings = plan_settings(c)
    r["queries"] = {}
    for q in queries:
        if c.get("only_section") and q.get("form") != "section":
            continue
        sql = "SELECT count(*) FROM %s WHERE %s" % (table, q["where"])
        out = pg.run(settings + "\nEXPLAIN (ANALYZE, BUFFERS, FORMAT JSON) " + sql + ";\n")
        fig = explain_figures(json.loads(split_json(out)[0]))
        # The EXPLAIN ANALYZE run above is the untimed warm-up.
        counts, ms = timed_counts(pg, sql, nruns, settings)
        qr = dict(fig, latency_ms=median(ms), latency_all=ms, count=counts[-1])
        if c["ddl"] and "Seq Scan" in qr["plan"]:
            qr["note"] = "index not used"
        if ref is not None and q["name"] in ref and ref[q["name"]] != qr["count"]:
            raw_t.setdefault("mismatches", []).append(
                "%s / %s / %s: %d rows, the sequential scan %d"
                % (t["key"], c["key"], q["name"], qr["count"], ref[q["name"]]))
            log("  MISMATCH: %s" % raw_t["mismatches"][-1])
        r["queries"][q["name"]] = qr
        log("  %-40s %9.2f ms  rows %-8d idx %s  removed %s  plan %s" % (
            q["name"][:40], qr["latency_ms"], qr["count"], fmt(qr.get("index_ms")),
            fmt(qr.get("recheck_removed")), qr["plan"]))
    if a.smoke:
        if not c.get("keep"):
            drop_indexes(pg, table)
        return r
    # Single-row inserts into the loaded table with the index, in one
    # transaction rolled back afterwards (GIN's pending list emptied first).
    gins = [n for n in index_names(pg, table)
            if pg.value("SELECT amname FROM pg_class c JOIN pg_am a ON a.oid = c.relam "
                        "WHERE c.oid = %s::regclass" % lit(n)) == "gin"]
    clean = "".join("SELECT gin_clean_pending_list(%s);\n" % lit(n) for n in gins)
    pg.run(clean + "CHECKPOINT;\n")
    out = pg.run("BEGIN;\n"
                 "CREATE TEMP TABLE lat_ms (ms float8) ON COMMIT DROP;\n"
                 "DO $$\nDECLARE r %s; t0 timestamptz;\nBEGIN\n"
                 "  FOR r IN SELECT * FROM %s_single LOOP\n"
                 "    t0 := clock_timestamp();\n"
                 "    INSERT INTO %s VALUES (r.*);\n"
                 "    INSERT INTO lat_ms VALUES (1000 * extract(epoch FROM clock_timestamp() - t0));\n"
                 "  END LOOP;\nEND $$;\n"
                 "SELECT concat_ws(' ', p[1], p[2], p[3], mx, n, over10) FROM (SELECT "
                 "percentile_cont(ARRAY[0.5, 0.99, 0.999]) WITHIN GROUP (ORDER BY ms) AS p, "
                 "max(ms) AS mx, count(*) AS n, count(*) FILTER (WHERE ms > 10) AS over10 "
                 "FROM lat_ms) s;\nROLLBACK;\n" % (table, table, table))
    p50, p99, p999, mx, n, over10 = out.split()
    # over10: the stalls (a GIN pending-list merge is one), which p99.9 of
    # 20,000 misses when there are fewer than 20
    r["insert_latency"] = dict(p50=float(p50), p99=float(p99), p999=float(p999),
                               max=float(mx), n=int(n), over10=int(over10))
    log("  %s single-row inserts: median %.3f ms, p99 %.3f, p99.9 %.3f, max %.1f"
        % (n, float(p50), float(p99), float(p999), float(mx)))
    # Bulk insert: COPY of the extra rows, rolled back, median of the runs.
    ms = []
    extra = lit(os.path.join(a.work, table + "_extra.tsv"))
    # One COPY of the extra rows with an index on the contents table when it
    # is large (a COPY into GIN there takes a minute or more).
    nins = a.insert_runs if raw["tables"][table]["rows"] <= 1000000 else 1
    r["copy_runs"] = nins
    for i in range(nins):
        pg.run(clean + "CHECKPOINT;\n")
        out = pg.run("BEGIN;\n\\timing on\nCOPY %s FROM %s;\n\\timing off\n"
                     "ROLLBACK;\n" % (table, extra))
        ms += [float(x) for x in re.findall(r"^Time: ([0-9.]+) ms", out, re.M)]
    r["copy_ms"] = median(ms)
    r["copy_all_ms"] = ms
    log("  COPY of %d rows: %.0f ms (%s)" % (raw["tables"][table]["extra_rows"], r["copy_ms"],
                                           ", ".join("%.0f" % x for x in ms)))
    # The rolled-back rows' dead tuples go (with their index entries when
    # the index is kept for the next contender).
    if not c.get("keep"):
        drop_indexes(pg, table)
    pg.run("VACUUM %s;\n" % table)
    return r


raw = {}


def cmd_measure(a):
    pg = Pg(a.psql)
    t_start = time.time()
    raw.update(mode=a.mode, rows_arg=a.rows, runs=a.runs, args=vars(a))
    raw["machine"] = machine_info(pg, a)
    loads = [load_avg()]
    pg.run("CREATE EXTENSION IF NOT EXISTS pg_trgm;\n"
           "CREATE EXTENSION IF NOT EXISTS pg_prewarm;\n"
           "CREATE EXTENSION IF NOT EXISTS bloomidx;\n")
    raw["bloomidx_version"] = pg.value("SELECT extversion FROM pg_extension WHERE extname = 'bloomidx'")
    raw["bloomidx_available"] = pg.value(
        "SELECT string_agg(version, ' ' ORDER BY version) FROM pg_available_extension_versions "
        "WHERE name = 'bloomidx'")
    have = set(pg.run("SELECT opcname FROM pg_opclass c JOIN pg_am a ON a.oid = c.opcmethod "
                      "WHERE a.amname = 'bloomidx';\n").split())
    raw["opclasses"] = {o: o in have for o in ("text_trgm_ops", "array_elem_ops", "jsonb_path_ops")}
    manifest = os.path.join(a.data, "MANIFEST")
    raw["manifest"] = open(manifest).read() if os.path.exists(manifest) else ""
    load(pg, a, raw)
    raw["targets"] = {}
    for t in TARGETS:
        if a.targets and t["key"] not in a.targets:
            continue
        rows = raw["tables"][t["table"]]["rows"]
        rt = raw["targets"][t["key"]] = dict(title=t["title"], table=t["table"], rows=rows,
                                             contenders={}, order=[])
        if t["key"] == "path":
            rt["choice"], queries = choose_substrings(pg, a, rows)
        else:
            rt["choice"], queries = choose_elements(pg, rows, t["key"])
        rt["queries"] = queries
        ref = None
        for c in t["contenders"]:
            if c.get("opclass") and not raw["opclasses"][c["opclass"]]:
                note = ("skipped: bloomidx %s has no operator class %s (it comes with 1.2)"
                        % (raw["bloomidx_version"], c["opclass"]))
                print("NOTE: %s: %s" % (c["label"], note), flush=True)
                rt["contenders"][c["key"]] = dict(key=c["key"], label=c["label"], skipped=note)
                rt["order"].append(c["key"])
                continue
            if a.contenders and c["key"] not in a.contenders and c["ddl"]:
                continue
            if c.get("sized"):
                n = int(round(float(pg.value("SELECT avg(length(path)) FROM contents"))))
                c = dict(c, label=c["label"] % n, ddl=[d % n for d in c["ddl"]], elements=n)
            r = measure_contender(pg, a, t, c, queries, ref, rt)
            rt["contenders"][c["key"]] = r
            rt["order"].append(c["key"])
            if ref is None:
                ref = dict((k, v["count"]) for k, v in r["queries"].items())
            loads.append(load_avg())
    raw["elapsed_s"] = time.time() - t_start
    raw["load_avg"] = loads
    with open(a.raw, "w") as fh:
        json.dump(raw, fh, indent=1)
    log("measured in %.0f s" % raw["elapsed_s"])
    bad = [m for rt in raw["targets"].values() for m in rt.get("mismatches", [])]
    if bad:
        print("error: results differ from the sequential scan's:\n  " + "\n  ".join(bad),
              file=sys.stderr)
        sys.exit(2)


# --- report -------------------------------------------------------------------------

def overhead_ms(rt, key):
    c, s = rt["contenders"].get(key, {}), rt["contenders"].get("seqscan", {})
    if c.get("copy_ms") is None or s.get("copy_ms") is None:
        return None
    return c["copy_ms"] - s["copy_ms"]


def target_checks(raw):
    """The issue's targets: (text, ratio or None, limit, met?)."""
    out = []

    def add(text, x, limit, le=True):
        if x is None:
            out.append((text, None, limit, None))
        else:
            out.append((text, x, limit, x <= limit if le else x < limit))

    def con(tk, ck):
        rt = raw["targets"].get(tk, {})
        c = rt.get("contenders", {}).get(ck)
        return None if c is None or c.get("skipped") else c

    def qworst(tk, ck, bk, pred):
        """Worst ratio of ck to bk's latency over the queries pred picks."""
        rt = raw["targets"].get(tk)
        c, b = con(tk, ck), con(tk, bk)
        if not rt or not c or not b:
            return None, None
        worst, wq = None, None
        for q in rt["queries"]:
            if not pred(q) or q["name"] not in c["queries"] or q["name"] not in b["queries"]:
                continue
            x = ratio(c["queries"][q["name"]]["latency_ms"], b["queries"][q["name"]]["latency_ms"])
            if x is not None and (worst is None or x > worst):
                worst, wq = x, q["name"]
        return worst, wq

    selective = lambda q: q["form"] in ("like", "ilike") and q["kind"] == "present" and \
        q["bucket"] in ("≤0.01%", "≤0.1%")  # noqa: E731
    sel5 = lambda q: selective(q) and q["length"] >= 5  # noqa: E731
    for ck in ("bloomidx", "bloomidx_sized", "bloomidx3"):
        cc = raw["targets"].get("path", {}).get("contenders", {}).get(ck)
        if cc is None:
            continue
        lab = cc["label"]
        b, g, gs = con("path", ck), con("path", "gin"), con("path", "gist")
        add("%s size vs GIN" % lab, b and g and ratio(b["size_bytes"], g["size_bytes"]), 0.3)
        add("%s build vs GIN" % lab, b and g and ratio(b["build_s"], g["build_s"]), 0.2)
        rt = raw["targets"].get("path", {})
        add("%s bulk insert overhead vs GIN" % lab,
            b and g and ratio(overhead_ms(rt, ck), overhead_ms(rt, "gin")), 0.3)
        add("%s single-row insert p99.9 vs GIN" % lab,
            b and g and b.get("insert_latency") and g.get("insert_latency") and
            ratio(b["insert_latency"]["p999"], g["insert_latency"]["p999"]), 0.5)
        w, wq = qworst("path", ck, "gin", sel5)
        add("%s selective LIKE (≤0.1%%, ≥5 chars) vs GIN, worst (%s)" % (lab, wq), w, 5.0)
        w, wq = qworst("path", ck, "gist", selective)
        add("%s faster than GiST on every selective pattern, worst (%s)" % (lab, wq), w, 1.0, le=False)
        w, wq = qworst("path", ck, "gist", sel5)
        add("%s faster than GiST on every selective pattern of ≥5 chars, worst (%s)" % (lab, wq),
            w, 1.0, le=False)
        add("%s size vs GiST" % lab, b and gs and ratio(b["size_bytes"], gs["size_bytes"]), 1.0)
        w, wq = qworst("path", ck, "seqscan", selective)
        add("%s selective patterns vs seq scan, worst (%s)" % (lab, wq), w, 0.05)
        w, wq = qworst("path", ck, "seqscan", sel5)
        add("%s selective patterns of ≥5 chars vs seq scan, worst (%s)" % (lab, wq), w, 0.05)
    w, wq = qworst("path", "bloomidx3", "gin_btree",
                   lambda q: q["form"] == "section" and q["kind"] == "present")
    add("bloomidx (package, section, path) on section = ... AND LIKE vs GIN + B-tree, worst (%s)"
        % wq, w, 1.0, le=False)
    w, wq = qworst("path", "bloomidx3", "gin_btree",
                   lambda q: q["form"] == "section" and q["kind"] == "present" and
                   q["length"] >= 5 and q["bucket"] in ("≤0.01%", "≤0.1%"))
    add("the same, patterns of ≥5 chars at ≤0.1%%, worst (%s)" % wq, w, 1.0, le=False)
    c3 = con("path", "bloomidx3")
    if c3:
        sq = [q for n, q in c3["queries"].items() if n.startswith("section=")]
        n1 = sum(1 for q in sq if q.get("bitmap_index_scans") == 1 and "BitmapAnd" not in q["plan"])
        out.append(("bloomidx (package, section, path): section = ... AND LIKE in one bitmap "
                    "index scan (%d of %d queries)" % (n1, len(sq)), None, 1.0, n1 == len(sq)))
    for tk in ("depends", "tags", "stanza"):
        b, g = con(tk, "bloomidx"), con(tk, "gin")
        add("%s: bloomidx size vs GIN" % tk, b and g and ratio(b["size_bytes"], g["size_bytes"]), 0.3)
        add("%s: bloomidx build vs GIN" % tk, b and g and ratio(b["build_s"], g["build_s"]), 0.2)
        w, wq = qworst(tk, "bloomidx", "gin", lambda q: q["form"] == "@>" and q["kind"] == "present"
                       and q["bucket"] in ("≤0.01%", "≤0.1%"))
        add("%s: bloomidx @> one element (≤0.1%%) vs GIN, worst (%s)" % (tk, wq), w, 5.0)
    return out


def cmd_report(a):
    with open(a.raw) as fh:
        raw = json.load(fh)
    m = raw["machine"]
    L = []
    L.append("# bloomidx benchmark: substrings, arrays and jsonb\n")
    L.append("Made by `bench/sets.sh` (mode %s, median of %d runs), %s, PostgreSQL %s, "
             "bloomidx %s (%s; versions available: %s), %d cores (%s), %.1f GB; "
             "load average %s during the run; measured in %.0f s.\n"
             % (raw["mode"], raw["runs"], m["date"], m["pg_version"], raw["bloomidx_version"],
                m["commit"], raw["bloomidx_available"], m["cores"], m["cpu"], m["memory_gb"],
                " to ".join("%.2f" % x for x in (min(raw["load_avg"]), max(raw["load_avg"]))),
                raw["elapsed_s"]))
    ops = ", ".join("%s %s" % (k, "present" if v else "absent") for k, v in raw["opclasses"].items())
    L.append("bloomidx operator classes: %s.\n" % ops)
    L.append("Cluster settings: `%s`.\n" % " ".join(m["settings"]))
    L.append("## Data\n")
    for tn, ti in raw["tables"].items():
        L.append("- `%s`: %s of the file's %s rows (%s MB heap); bulk insert: %s extra rows; "
                 "single-row inserts: %s%s." % (
                     tn, fmt(ti["rows"]), fmt(ti["file_rows"]), fmt(ti["heap_bytes"] / 1048576.0),
                     fmt(ti["extra_rows"]), fmt(ti["single_rows"]),
                     " (the insert rows wrap to rows the table already has)"
                     if ti["insert_rows_wrapped"] else ""))
    if raw.get("manifest"):
        L.append("\nDownloads (file, URL, when, sha256):\n")
        L.append("```\n" + raw["manifest"].strip() + "\n```\n")
    csv_rows = [["target", "contender", "figure", "query", "bucket", "value", "ratio_to_gin"]]
    L.append("\n## Targets\n")
    L.append("| target | ratio | limit | |\n|---|---|---|---|")
    for text, x, limit, ok in target_checks(raw):
        L.append("| %s | %s | %s | %s |" % (text, fmt_ratio(x), ("%g×" % limit) if x is not None
                                            or ok is None else "",
                                           "not measured" if ok is None else
                                           ("met" if ok else "**missed**")))
        csv_rows.append(["target", "", text, "", "", "" if x is None else "%.4g" % x,
                         "" if ok is None else ("met" if ok else "missed")])
    L.append("")
    for tk, rt in raw["targets"].items():
        base = rt["contenders"].get("gin", {})
        L.append("## %s\n" % rt["title"])
        L.append("%s rows. Ratios (×) are to GIN in the same run; the bulk insert overhead is "
                 "the COPY time of the extra rows with the index less the same COPY with none; "
                 "single-row inserts go into the loaded table.\n" % fmt(rt["rows"]))
        L.append("| contender | build s | size MB | bulk insert overhead s | insert p50 ms | "
                 "p99 ms | p99.9 ms | max ms | inserts > 10 ms |")
        L.append("|---|---|---|---|---|---|---|---|---|")
        bo = overhead_ms(rt, "gin")
        for ck in rt["order"]:
            c = rt["contenders"][ck]
            if c.get("skipped"):
                L.append("| %s | %s | | | | | | | |" % (c["label"], c["skipped"]))
                continue
            il = c.get("insert_latency") or {}
            bil = base.get("insert_latency") or {}
            ov = overhead_ms(rt, ck)

            def wr(x, b, scale=1.0):
                if x is None:
                    return "-"
                return "%s (%s)" % (fmt(x * scale), fmt_ratio(ratio(x, b)))
            L.append("| %s | %s | %s | %s | %s | %s | %s | %s | %s |" % (
                c["label"], wr(c.get("build_s"), base.get("build_s")),
                wr(c.get("size_bytes"), base.get("size_bytes"), 1 / 1048576.0),
                "-" if ck == "seqscan" else wr(ov, bo, 0.001),
                fmt(il.get("p50")), fmt(il.get("p99")),
                wr(il.get("p999"), bil.get("p999")), fmt(il.get("max")),
                fmt(il.get("over10"))))
            for fig, v in (("build_s", c.get("build_s")), ("size_bytes", c.get("size_bytes")),
                           ("bulk_insert_overhead_ms", ov), ("copy_ms", c.get("copy_ms")),
                           ("insert_p50_ms", il.get("p50")), ("insert_p99_ms", il.get("p99")),
                           ("insert_p999_ms", il.get("p999")), ("insert_max_ms", il.get("max"))):
                bv = {"build_s": base.get("build_s"), "size_bytes": base.get("size_bytes"),
                      "bulk_insert_overhead_ms": bo, "copy_ms": base.get("copy_ms"),
                      "insert_p50_ms": bil.get("p50"), "insert_p99_ms": bil.get("p99"),
                      "insert_p999_ms": bil.get("p999"), "insert_max_ms": bil.get("max")}[fig]
                csv_rows.append([tk, ck, fig, "", "", "" if v is None else "%.6g" % v,
                                 "" if ratio(v, bv) is None else "%.4g" % ratio(v, bv)])
        for ck in rt["order"]:
            c = rt["contenders"][ck]
            for what, e in (("", c.get("estimate")),
                            (" on (section, path)", c.get("estimate_section_path"))):
                if e:
                    L.append("\n`bloomidx_estimate` for %s%s: %s" % (
                        c["label"], what, "predicted false-positive rate %.4g (%s candidate rows)"
                        % (e["fpr"], fmt(e["candidate_rows"])) if "fpr" in e
                        else "not available (%s)" % e["error"]))
        L.append("\nQuery time, ms (× GIN), median of the runs, `SELECT count(*)` warm:\n")
        cols = [ck for ck in rt["order"] if not rt["contenders"][ck].get("skipped")]
        L.append("| query | bucket | rows | " + " | ".join(
            rt["contenders"][ck]["label"] for ck in cols) + " |")
        L.append("|---|---|---|" + "---|" * len(cols))
        for q in rt["queries"]:
            ref = rt["contenders"].get("seqscan", {}).get("queries", {}).get(q["name"], {})
            bq = base.get("queries", {}).get(q["name"], {})
            if not bq and q.get("form") == "section":
                bq = rt["contenders"].get("gin", {}).get("queries", {}).get(q["name"], {})
            cells = []
            for ck in cols:
                cq = rt["contenders"][ck].get("queries", {}).get(q["name"])
                if not cq:
                    cells.append("")
                    continue
                s = "%s (%s)" % (fmt(cq["latency_ms"]), fmt_ratio(ratio(cq["latency_ms"],
                                                                        bq.get("latency_ms"))))
                if ck.startswith("bloomidx") or ck == "gin_btree":
                    s += "; removed %s" % fmt(cq.get("recheck_removed"))
                    if ck == "gin_btree" or ck == "bloomidx3":
                        s += "; %s" % ("BitmapAnd" if "BitmapAnd" in cq["plan"] else
                                       "%d bitmap scan(s)" % cq.get("bitmap_index_scans", 0))
                if cq.get("note"):
                    s += " (%s)" % cq["note"]
                cells.append(s)
                csv_rows.append([tk, ck, "query_ms", q["name"], q["bucket"],
                                 "%.6g" % cq["latency_ms"],
                                 "" if ratio(cq["latency_ms"], bq.get("latency_ms")) is None else
                                 "%.4g" % ratio(cq["latency_ms"], bq.get("latency_ms"))])
                csv_rows.append([tk, ck, "rows", q["name"], q["bucket"], cq["count"], ""])
                if cq.get("recheck_removed") is not None:
                    csv_rows.append([tk, ck, "recheck_removed", q["name"], q["bucket"],
                                     cq["recheck_removed"], ""])
            L.append("| `%s` | %s | %s | %s |" % (q["name"].replace("|", "\\|"), q["bucket"],
                                                 fmt(ref.get("count")), " | ".join(cells)))
        plans = sorted(set((rt["contenders"][ck]["label"], cq["plan"]) for ck in cols
                           for cq in rt["contenders"][ck].get("queries", {}).values()))
        L.append("\nPlans: " + "; ".join("%s: `%s`" % p for p in plans) + "\n")
        if rt.get("mismatches"):
            L.append("**Counts that differ from the sequential scan's:** " +
                     "; ".join(rt["mismatches"]) + "\n")
    L.append("## How the patterns were chosen\n")
    ch = raw["targets"].get("path", {}).get("choice")
    if ch:
        L.append("- Substrings: %d candidates, a substring of 3, 5, 8 or 12 characters (in turn) "
                 "at a seeded random offset of each of the first paths of a seeded sample of "
                 "%s rows (`TABLESAMPLE BERNOULLI ... REPEATABLE`, ordered by md5(path || seed)); "
                 "their selectivity counted in the sample (through a GIN index of its own); "
                 "for each length and bucket (≤0.01%%, 0.01–0.1%%, 0.3–3%%, 3–30%%) the first "
                 "candidate in that order. Absent strings: the middle character of a chosen "
                 "pattern replaced by each of `%s` that differs, the first per length "
                 "that one scan of the whole table finds nowhere. The bucket shown is the one "
                 "of the count in the whole table; each combined query takes the section of "
                 "the path the pattern came from. %s"
                 % (ch["candidates"], fmt(ch["sample_rows"]), MUTATE_CHARS[:3],
                    "Cells (length, bucket in the sample) left empty had no candidate: " +
                    (", ".join("%d/%s" % (Lx, b) for Lx in LENGTHS for b, _, _ in BUCKETS
                               if not any(c["L"] == Lx and c.get("sample_bucket") == b
                                          for c in ch["chosen"])) or "none") +
                    "; lengths with no absent string (every mutation occurs somewhere): " +
                    (", ".join(str(Lx) for Lx in LENGTHS
                               if not any(c["L"] == Lx and c["kind"] == "absent"
                                          for c in ch["chosen"])) or "none") + "."))
    L.append("- Arrays and jsonb: every element (for the stanza, every key/value pair) "
             "counted exactly over the whole table; in each bucket the first in "
             "md5(element || seed) order; absent: the middle character of the most "
             "selective chosen one replaced, if no row has it; `&&` of the two first "
             "elements at ≤0.1%; `@>` of the first two elements of a seeded row "
             "(Section and Maintainer for the stanza).\n")
    with open(os.path.join(a.out, "results.md"), "w") as fh:
        fh.write("\n".join(L) + "\n")
    with open(os.path.join(a.out, "results.csv"), "w", newline="") as fh:
        csv.writer(fh).writerows(csv_rows)
    print("\n".join(L))


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    sub = ap.add_subparsers(dest="cmd", required=True)
    m = sub.add_parser("measure")
    m.add_argument("--mode", default="full")
    m.add_argument("--rows", type=int, default=0, help="contents rows (0: all)")
    m.add_argument("--runs", type=int, default=5)
    m.add_argument("--seq-runs", type=int, default=3, help="runs of the seq-scan queries")
    m.add_argument("--build-runs", type=int, default=3, help="builds on packages")
    m.add_argument("--big-build-runs", type=int, default=1, help="builds on contents")
    m.add_argument("--insert-runs", type=int, default=3)
    m.add_argument("--latency-rows", type=int, default=20000)
    m.add_argument("--sample-rows", type=int, default=200000)
    m.add_argument("--candidates", type=int, default=150, help="substring candidates per length")
    m.add_argument("--targets", nargs="*", default=[])
    m.add_argument("--contenders", nargs="*", default=[])
    m.add_argument("--smoke", action="store_true")
    m.add_argument("--psql", required=True)
    m.add_argument("--data", required=True)
    m.add_argument("--work", required=True)
    m.add_argument("--raw", required=True)
    m.add_argument("--settings", default="")
    m.add_argument("--cflags", default="")
    m.add_argument("--source", default="")
    r = sub.add_parser("report")
    r.add_argument("--raw", required=True)
    r.add_argument("--out", required=True)
    a = ap.parse_args()
    if a.cmd == "measure":
        cmd_measure(a)
    else:
        cmd_report(a)


if __name__ == "__main__":
    main()
