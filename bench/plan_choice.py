#!/usr/bin/python3
"""bench/plan_choice.py: the plan-choice grid (run it through
bench/plan_choice.sh, which sets up the connection).

For every index under test (bloomidx with four option sets, contrib/bloom
with its defaults) and every query of a grid over tbloom and tmixed, it
times the bitmap plan on that index and the sequential scan, each forced
with enable_* settings (median of --runs, warm cache), records the plan the
planner picks unforced, and counts how often the pick was the faster plan or
within 10% of it.  The same for the operator classes of sets
(text_trgm_ops, array_elem_ops, jsonb_path_ops) beside an equality column:
two indexes on tsets (paths, tag arrays, jsonb documents), one a layout, and
LIKE/ILIKE, prefix, = , @>, && and jsonb @> queries and their combinations
(the "sets" queries).

Connection: psql with PGHOST, PGPORT, PGUSER, PGDATABASE from the
environment.  Standard library only.  Output: DIR/plan_choice.csv and
summary lines on stdout, the first one

  summary: planner picked the faster plan (or within 10%): bloomidx X/Y (Z%), contrib/bloom X/Y (Z%)
"""

import argparse
import csv
import json
import os
import statistics
import subprocess
import sys
import time

from bench import MIXED_COLS, TABLE_SQL, TBLOOM_COLS

TOLERANCE = 1.10            # "within 10%"


def cols_opts(bits, ncols):
    return ", ".join("col%d = %d" % (i + 1, bits) for i in range(ncols))


# Indexes under test: name, access method, options, columns per table.
CONFIGS = [
    dict(key="bloomidx_default", am="bloomidx", opts="",
         cols={"tbloom": TBLOOM_COLS, "tmixed": MIXED_COLS}),
    dict(key="bloomidx_80x2", am="bloomidx",
         opts="length = 80, " + cols_opts(2, 6),
         cols={"tbloom": TBLOOM_COLS, "tmixed": MIXED_COLS}),
    dict(key="bloomidx_fpr0.05", am="bloomidx",
         opts="false_positive_rate = 0.05",
         cols={"tbloom": TBLOOM_COLS, "tmixed": MIXED_COLS}),
    dict(key="bloomidx_fpr0.001", am="bloomidx",
         opts="false_positive_rate = 0.001",
         cols={"tbloom": TBLOOM_COLS, "tmixed": MIXED_COLS}),
    # contrib/bloom has int4 and text operator classes only: on tmixed it
    # indexes t, and runs the queries on t alone.
    dict(key="bloom_default", am="bloom", opts="",
         cols={"tbloom": TBLOOM_COLS, "tmixed": ["t"]}),
]

# The table of sets, seeded, as SQL with %d for the row count (as TABLE_SQL
# of bench.py): sec, an int of 200 values; path, a file path of 2 to 7
# components ("usr/share/...", "home/u<N>/...", "var/...", "etc/...",
# "opt/...") of words from a vocabulary of 5,000 made of 2-character
# syllables, Zipf-like (the word of rank r about 1/r as frequent), a file
# name and an extension; tags, text[] of 1 to 5 tags "tag<r>" (Zipf-like
# over 1,000) and one "n<N>" of 100,000; doc, a jsonb document of five
# scalars (kind of 50 Zipf-like, lang of 7 skewed, user.id of 100,000,
# draft, rev).  About 25 characters (26 trigrams) a path, 4 elements a tag
# array.  No parallel workers, so that the seeded random() gives every
# cluster the same rows.
_ZIPF_WORD = "v.w[floor(exp(random() * ln(5001)))::int]"
_ZIPF_TAG = "'tag' || floor(exp(random() * ln(1001)))::int"
TSETS_SQL = """
SET max_parallel_workers_per_gather = 0;
SELECT setseed(0.44);
CREATE TABLE tsets AS
WITH v AS MATERIALIZED (
  SELECT array_agg(w ORDER BY n) AS w FROM (
    SELECT n, CASE WHEN n >= 400 THEN s[1 + mod(n / 400, 20)] ELSE '' END
           || CASE WHEN n >= 20 THEN s[1 + mod(n / 20, 20)] ELSE '' END
           || s[1 + mod(n, 20)] AS w
    FROM generate_series(1, 5000) n,
         (SELECT '{ka,lo,mi,ne,ru,sa,ti,ve,xo,zu,ba,de,fi,go,hu,ja,pe,qi,wy,yo}'::text[] AS s) syl) x)
SELECT g.id, g.sec,
  array_to_string(
    CASE WHEN g.top < 0.5 THEN ARRAY['usr', (ARRAY['share', 'share', 'lib', 'bin'])[1 + floor(g.r1 * 4)::int]]
         WHEN g.top < 0.7 THEN ARRAY['home', 'u' || floor(g.r1 * 20000)::int]
         WHEN g.top < 0.85 THEN ARRAY['var', (ARRAY['log', 'cache', 'lib'])[1 + floor(g.r1 * 3)::int]]
         WHEN g.top < 0.95 THEN ARRAY['etc']
         ELSE ARRAY['opt', @W@] END
    || (ARRAY[@W@, @W@, @W@])[1:floor(g.r2 * 4)::int]
    || (@W@ || CASE WHEN g.r3 < 0.3 THEN '-' || @W@ ELSE '' END || '.'
        || (ARRAY['txt', 'c', 'h', 'gz', 'html', 'py', 'json', 'md'])[1 + floor(g.r4 * 8)::int]),
    '/') AS path,
  (ARRAY[@T@, @T@, @T@, @T@, @T@])[1:g.ntags]
    || ('n' || floor(g.r5 * 100000)::int) AS tags,
  jsonb_build_object(
    'kind', 'k' || floor(exp(g.r6 * ln(51)))::int,
    'lang', (ARRAY['en', 'en', 'en', 'en', 'en', 'de', 'de', 'fr', 'es', 'ja'])[1 + floor(g.r7 * 10)::int],
    'user', jsonb_build_object('id', floor(g.r8 * 100000)::int),
    'draft', g.r9 < 0.1,
    'rev', floor(g.r10 * 20)::int) AS doc
FROM (SELECT i AS id, floor(random() * 200)::int AS sec, random() AS top,
             random() AS r1, random() AS r2, random() AS r3, random() AS r4,
             random() AS r5, random() AS r6, random() AS r7, random() AS r8,
             random() AS r9, random() AS r10, 1 + floor(random() * 5)::int AS ntags
      FROM generate_series(1, %d) i) g, v;
VACUUM (FREEZE, ANALYZE) tsets;
RESET max_parallel_workers_per_gather;
""".replace("@W@", _ZIPF_WORD).replace("@T@", _ZIPF_TAG)

ALL_TABLE_SQL = dict(TABLE_SQL, tsets=TSETS_SQL)

# The indexes of sets: the equality column and the three operator classes
# of sets at their defaults (elements 32, 8 and 16, about what the rows
# hold), in each layout.  They run the tsets queries only.
SETS_COLS = ["sec", "path text_trgm_ops", "tags array_elem_ops",
             "doc jsonb_path_ops"]
CONFIGS += [
    dict(key="bloomidx_sets", am="bloomidx", opts="",
         cols={"tsets": SETS_COLS}),
    dict(key="bloomidx_sets_row", am="bloomidx", opts="layout = 'row'",
         cols={"tsets": SETS_COLS}),
]
TABLES = ["tbloom", "tmixed", "tsets"]

FORCE_INDEX = ("SET enable_seqscan = off; SET enable_indexscan = off; "
               "SET enable_indexonlyscan = off; SET enable_bitmapscan = on;")
FORCE_SEQ = ("SET enable_seqscan = on; SET enable_indexscan = off; "
             "SET enable_indexonlyscan = off; SET enable_bitmapscan = off;")
UNFORCED = ("RESET enable_seqscan; RESET enable_indexscan; "
            "RESET enable_indexonlyscan; RESET enable_bitmapscan;")
# Same for every plan: no parallel workers (the benchmark's cluster runs
# without them too), no JIT.
SESSION = ("SET max_parallel_workers_per_gather = 0; SET jit = off; "
           "SET client_min_messages = warning;")


def log(msg):
    print(msg, flush=True)


class Pg:
    """psql runner (one connection per call)."""

    def __init__(self, psql):
        self.psql = psql

    def run(self, sql, timeout=None):
        p = subprocess.run([self.psql, "-X", "-q", "-A", "-t",
                            "-v", "ON_ERROR_STOP=1"],
                           input=sql, capture_output=True, text=True,
                           timeout=timeout)
        if p.returncode != 0:
            raise RuntimeError("psql failed: %s\n--- SQL:\n%s"
                               % (p.stderr.strip(), sql[:2000]))
        return p.stdout

    def value(self, sql):
        return self.run(sql).strip()


def split_json(out):
    """Split psql output of several EXPLAIN (FORMAT JSON) into documents."""
    dec = json.JSONDecoder()
    docs, pos = [], 0
    while True:
        while pos < len(out) and out[pos].isspace():
            pos += 1
        if pos >= len(out):
            return docs
        doc, pos = dec.raw_decode(out, pos)
        docs.append(doc)


def walk(node):
    yield node
    for child in node.get("Plans", []):
        yield from walk(child)


def plan_kind(doc, index):
    """'index' if the plan scans the index under test, 'seq' for a seq scan."""
    nodes = list(walk(doc[0]["Plan"]))
    if any(n.get("Index Name") == index for n in nodes):
        return "index"
    if any(n["Node Type"] == "Seq Scan" for n in nodes):
        return "seq"
    return "other"


def bitmap_index_node(doc):
    for n in walk(doc[0]["Plan"]):
        if n["Node Type"] == "Bitmap Index Scan":
            return n
    return None


# --- data ---------------------------------------------------------------------

def ensure_tables(pg, rows, remake, tables=("tbloom", "tmixed")):
    """Reuse the tables (tbloom, tmixed, tsets) when they hold rows rows,
    else make them (a table of another size is dropped only with --remake).
    A reused table without statistics is analyzed: the planner would pick on
    its default selectivities."""
    for t in tables:
        n = -1
        if pg.value("SELECT to_regclass('%s') IS NOT NULL" % t) == "t":
            n = int(pg.value("SELECT count(*) FROM %s" % t))
        if n == rows:
            if pg.value("SELECT count(*) FROM pg_statistic "
                        "WHERE starelid = '%s'::regclass" % t) == "0":
                pg.run("ANALYZE %s;\n" % t)
                log("reusing table %s (%d rows), analyzed: it had no "
                    "statistics" % (t, rows))
            else:
                log("reusing table %s (%d rows)" % (t, rows))
            continue
        if n >= 0 and not remake:
            raise RuntimeError("table %s has %d rows, not %d: pass --remake "
                               "to drop and remake it" % (t, n, rows))
        t0 = time.time()
        pg.run("DROP TABLE IF EXISTS %s;\n" % t + ALL_TABLE_SQL[t] % rows)
        log("made table %s (%d rows) in %.0f s" % (t, rows, time.time() - t0))


def sample_rows(pg, table, cols, fractions):
    """Column values (as SQL literals) of rows at fixed places in the table."""
    pages = int(pg.value("SELECT relpages FROM pg_class WHERE relname = '%s'"
                         % table))
    out = []
    for f in fractions:
        blk = int(pages * f)
        line = pg.value("SELECT %s FROM %s WHERE ctid = '(%d,1)'"
                        % (", ".join("quote_literal(%s)" % c for c in cols),
                           table, blk))
        out.append(dict(zip(cols, line.split("|"))))
    return out


def lit(values, col, table):
    v = values[col]
    if table == "tbloom":
        return v.strip("'")
    cast = {"t": "", "u": "::uuid", "b": "::bigint", "d": "::date",
            "n": "::numeric", "f": "::boolean"}[col]
    return v + cast


def array(vals, col, table):
    cast = {"tbloom": "int[]"}.get(table) or {
        "t": "text[]", "u": "uuid[]", "b": "bigint[]", "d": "date[]",
        "n": "numeric[]", "f": "boolean[]"}[col]
    return "ARRAY[%s]::%s" % (", ".join(vals), cast)


def tbloom_queries(pg):
    """The tbloom grid: 1-4 equality columns present/absent, = ANY lists."""
    rows = sample_rows(pg, "tbloom", TBLOOM_COLS,
                       [0.13, 0.29, 0.37, 0.52, 0.61, 0.77, 0.89, 0.95])
    absent = iter(str(1000001 + 7919 * j) for j in range(1000))
    qs = []

    def add(name, where, ncols, nvalues, present):
        qs.append(dict(name=name, table="tbloom", where=where, ncols=ncols,
                       nvalues=nvalues, present=present, cols=None))

    colsets = {1: [["i2"], ["i4"], ["i6"]],
               2: [["i1", "i3"], ["i2", "i5"]],
               3: [["i1", "i3", "i6"], ["i2", "i4", "i5"]],
               4: [["i1", "i2", "i3", "i4"], ["i3", "i4", "i5", "i6"]]}
    r = 0
    for n, sets in colsets.items():
        for i, cs in enumerate(sets):
            row = rows[r % len(rows)]
            r += 1
            add("eq%d_present_%d" % (n, i),
                " AND ".join("%s = %s" % (c, lit(row, c, "tbloom")) for c in cs),
                n, 1, "yes")
            add("eq%d_absent_%d" % (n, i),
                " AND ".join("%s = %s" % (c, next(absent)) for c in cs),
                n, 1, "no")
    # Two columns: one value present, the other absent
    row = rows[5]
    add("eq2_half_0", "i1 = %s AND i6 = %s" % (lit(row, "i1", "tbloom"),
                                               next(absent)), 2, 1, "half")
    # = ANY on one column: half the elements present
    pool = [lit(rw, c, "tbloom") for rw in rows for c in TBLOOM_COLS]
    for n in (1, 2, 5, 10, 20, 50):
        vals = [pool[j % len(pool)] if j % 2 == 0 else next(absent)
                for j in range(n)]
        add("any%d_i3" % n, "i3 = ANY (%s)" % array(vals, "i3", "tbloom"),
            1, n, "half")
    for n in (5, 20):
        vals = [next(absent) for _ in range(n)]
        add("any%d_absent_i5" % n, "i5 = ANY (%s)" % array(vals, "i5", "tbloom"),
            1, n, "no")
    # = ANY with an equality on another column
    for n in (5, 20, 50):
        row = rows[n % len(rows)]
        vals = [lit(row, "i2", "tbloom")] + [next(absent) for _ in range(n - 1)]
        add("any%d_i2_eq_i4" % n, "i2 = ANY (%s) AND i4 = %s"
            % (array(vals, "i2", "tbloom"), lit(row, "i4", "tbloom")),
            2, n, "yes")
    return qs


def tmixed_queries(pg):
    """The tmixed grid: every type, a boolean and a 10,000-value date."""
    rows = sample_rows(pg, "tmixed", MIXED_COLS,
                       [0.11, 0.23, 0.41, 0.58, 0.67, 0.83, 0.97])
    qs = []

    def add(name, conds, ncols, nvalues, present):
        cols = [c for c, _ in conds]
        qs.append(dict(name=name, table="tmixed",
                       where=" AND ".join(w for _, w in conds),
                       ncols=ncols, nvalues=nvalues, present=present,
                       cols=cols))

    def eq(row, c):
        return (c, "%s = %s" % (c, lit(row, c, "tmixed")))

    r0, r1, r2, r3, r4, r5, r6 = rows
    add("u_present", [eq(r0, "u")], 1, 1, "yes")
    add("u_absent", [("u", "u = '00000000-0000-4000-8000-000000000001'::uuid")],
        1, 1, "no")
    add("t_present", [eq(r1, "t")], 1, 1, "yes")
    add("t_absent", [("t", "t = 'item-none-1'")], 1, 1, "no")
    add("b_present", [eq(r2, "b")], 1, 1, "yes")
    add("d_present", [eq(r3, "d")], 1, 1, "yes")
    add("n_present", [eq(r4, "n")], 1, 1, "yes")
    add("f_u_present", [eq(r5, "f"), eq(r5, "u")], 2, 1, "yes")
    add("f_b_absent", [("f", "f = false"), ("b", "b = -1::bigint")], 2, 1, "no")
    add("t_d_present", [eq(r6, "t"), eq(r6, "d")], 2, 1, "yes")
    add("b_n_f_present", [eq(r0, "b"), eq(r0, "n"), eq(r0, "f")], 3, 1, "yes")
    dates = [lit(r, "d", "tmixed") for r in rows] + \
        ["'1990-01-%02d'::date" % j for j in range(1, 4)]
    add("d_any10", [("d", "d = ANY (%s)" % array(dates, "d", "tmixed"))],
        1, 10, "yes")
    texts = [lit(r, "t", "tmixed") for r in rows] + \
        ["'item-none-%d'" % j for j in range(13)]
    add("t_any20", [("t", "t = ANY (%s)" % array(texts, "t", "tmixed"))],
        1, 20, "half")
    uuids = [lit(r, "u", "tmixed") for r in rows] + \
        ["'00000000-0000-4000-8000-%012d'::uuid" % j for j in range(43)]
    add("u_any50", [("u", "u = ANY (%s)" % array(uuids, "u", "tmixed"))],
        1, 50, "half")
    return qs


def tsets_queries(pg):
    """The tsets grid (the "sets" queries): LIKE and ILIKE patterns of 1 to
    12 characters, some with no trigram (the index tests nothing), prefixes,
    = on the path, array @> of 1 to 3 elements and && of several, jsonb @>
    of one and two paths, and these beside an equality on sec.  Matches at
    200,000 rows from 0 (absent) and 0.001% to 75%; the words, tags and
    kinds are Zipf-like, so the shares hold at any size, but the elements
    of 20,000 (home/u<N>) or 100,000 values (n<N>, user.id) match about
    rows/20,000 or rows/100,000 rows.  nvalues is the elements the query
    gives: pattern characters (not counting %), array elements or jsonb
    scalars."""
    path = sample_rows(pg, "tsets", ["path"], [0.37])[0]["path"]
    qs = []

    def add(name, conds, present="yes", nvalues=None):
        if nvalues is None:
            nvalues = sum(len(v.replace("%", "")) if op in ("like", "ilike")
                          else v for op, _, v in conds)
        qs.append(dict(name=name, table="tsets",
                       where=" AND ".join(w for _, w, _ in conds),
                       ncols=len({w.split()[0] for _, w, _ in conds}),
                       nvalues=nvalues, present=present, cols=None,
                       check_rows=True))

    def like(pat, op="LIKE"):
        return (op.lower(), "path %s '%s'" % (op, pat), pat)

    def arr(op, elems):
        return ("arr", "tags %s '{%s}'" % (op, ",".join(elems)), len(elems))

    def doc(js, n):
        return ("doc", "doc @> '%s'" % js, n)

    sec = ("eq", "sec = 17", 1)
    # LIKE and ILIKE: no trigram (1 or 2 characters, or two separated by _)
    add("like_a", [like("%a%")])
    add("like_lo", [like("%lo%")])
    add("like_zu", [like("%zu%")])
    add("ilike_lo", [like("%LO%", "ILIKE")])
    add("like_mi_ka", [like("%mi_ka%")], "no")
    # one trigram and more
    add("like_kal", [like("%kal%")])
    add("like_py_suffix", [like("%.py")])
    add("like_neka", [like("%neka%")])
    add("like_slash_lo", [like("%/lo%")])
    add("like_lone", [like("%lone%")])
    add("like_ru_dir", [like("%/ru/%")])
    add("like_lo_ext", [like("%-lo.%")])
    add("like_xyzzy", [like("%xyzzy%")], "no")
    add("like_vegode", [like("%vegode%")])
    add("like_mizuja", [like("%mizuja%")])
    add("like_sa_mi", [like("%sa/mi/%")])
    add("like_rulo_neka", [like("%rulo/neka%")])
    add("like_12", [like("%ne/loneru/zu%")])
    add("ilike_kalo", [like("%KALO%", "ILIKE")])
    add("ilike_share_ne", [like("%SHARE/NE%", "ILIKE")])
    # prefixes
    add("prefix_usr", [like("usr/%")])
    add("prefix_usr_share", [like("usr/share/%")])
    add("prefix_etc", [like("etc/%")])
    add("prefix_share_lo", [like("usr/share/lo/%")])
    add("prefix_var_log_mi", [like("var/log/mi%")])
    add("prefix_home_user", [like("home/u4217/%")])
    add("iprefix_usr_bin", [like("USR/BIN/%", "ILIKE")])
    # = on the path (text_trgm_ops answers it by the value's trigrams)
    add("path_eq", [("eq", "path = %s" % path, 1)])
    add("path_eq_absent", [("eq", "path = 'usr/share/none/xyzzy.txt'", 1)],
        "no")
    # arrays: @> of 1, 2, 3 elements, && of several
    add("tags_c1_top", [arr("@>", ["tag1"])])
    add("tags_c1_mid", [arr("@>", ["tag30"])])
    add("tags_c1_rare", [arr("@>", ["tag900"])])
    add("tags_c1_id", [arr("@>", ["n4217"])])
    add("tags_c1_absent", [arr("@>", ["nope"])], "no")
    add("tags_c2_top", [arr("@>", ["tag1", "tag2"])])
    add("tags_c2_mid", [arr("@>", ["tag3", "tag50"])])
    add("tags_c3_top", [arr("@>", ["tag1", "tag2", "tag3"])])
    add("tags_c3_rare", [arr("@>", ["tag2", "tag7", "tag100"])])
    add("tags_ov3_top", [arr("&&", ["tag1", "tag2", "tag3"])])
    add("tags_ov5_rare", [arr("&&", ["tag%d" % j for j in
                                     (200, 300, 400, 500, 600)])])
    add("tags_ov8_ids", [arr("&&", ["n%d" % j for j in range(1, 9)])])
    # jsonb @>: one path, two paths
    add("doc_lang", [doc('{"lang": "en"}', 1)])
    add("doc_kind_top", [doc('{"kind": "k1"}', 1)])
    add("doc_kind_mid", [doc('{"kind": "k30"}', 1)])
    add("doc_user", [doc('{"user": {"id": 4217}}', 1)])
    add("doc2_kind_lang", [doc('{"kind": "k2", "lang": "de"}', 2)])
    add("doc2_draft_lang", [doc('{"draft": true, "lang": "ja"}', 2)])
    add("doc2_user_draft", [doc('{"user": {"id": 777}, "draft": false}', 2)])
    # with the equality column
    add("sec_only", [sec])
    add("sec_like_neka", [sec, like("%neka%")])
    add("sec_like_lo", [sec, like("%lo%")])
    add("sec_tags_top", [sec, arr("@>", ["tag1"])])
    add("sec_doc_lang", [sec, doc('{"lang": "en"}', 1)])
    add("sec_path_tags_doc", [sec, like("usr/%"), arr("@>", ["tag2"]),
                              doc('{"kind": "k1"}', 1)])
    add("like_tags_ov", [like("%share%"), arr("&&", ["tag1", "tag2"])])
    return qs


# --- one query ------------------------------------------------------------------

def explain_time(doc):
    return doc[0]["Execution Time"]


def measure(pg, cfg, index, hide, q, runs):
    """Plans and timings of one query on one index (see the module doc)."""
    sql = "SELECT * FROM %s WHERE %s" % (q["table"], q["where"])
    pre = SESSION + "\nBEGIN;\n" + "".join("DROP INDEX %s;\n" % h for h in hide)
    ana = "EXPLAIN (ANALYZE, TIMING OFF, FORMAT JSON) " + sql + ";\n"
    # A backend's first touch of each shared buffer costs it a page fault:
    # the first plan run on a connection took 2 to 5 times as long as the
    # same plan run again (1M rows: a seq scan 278 ms, then 54 ms).  So
    # every connection first runs both plans once, untimed.
    warm = FORCE_SEQ + ana + FORCE_INDEX + ana
    script = (pre + UNFORCED + "\nEXPLAIN (FORMAT JSON) " + sql + ";\n" +
              FORCE_INDEX + "\nEXPLAIN (FORMAT JSON) " + sql + ";\n" +
              FORCE_SEQ + "\nEXPLAIN (FORMAT JSON) " + sql + ";\n" +
              warm + FORCE_SEQ + ana + FORCE_INDEX + ana + "ROLLBACK;\n")
    docs = split_json(pg.run(script))
    unforced, est_idx, est_seq, _, _, seq1, idx1 = docs
    res = dict(pick=plan_kind(unforced, index),
               idx_plan=plan_kind(est_idx, index),
               est_cost_idx=est_idx[0]["Plan"]["Total Cost"],
               est_cost_seq=est_seq[0]["Plan"]["Total Cost"])
    bis = bitmap_index_node(est_idx)
    res["est_candidates"] = bis["Plan Rows"] if bis else None
    bis = bitmap_index_node(idx1)
    res["candidates"] = bis["Actual Rows"] if bis else None
    res["matches"] = seq1[0]["Plan"]["Actual Rows"]
    # The sets queries check that the index plan returns the seq scan's
    # rows (what the smoke run checks of them).
    if q.get("check_rows") and idx1[0]["Plan"]["Actual Rows"] != res["matches"]:
        raise RuntimeError("%s on %s: the index plan returned %s rows, the "
                           "seq scan %s" % (q["name"], index,
                                            idx1[0]["Plan"]["Actual Rows"],
                                            res["matches"]))
    seq_ms, idx_ms = [explain_time(seq1)], [explain_time(idx1)]

    # The other runs, interleaved; a plan 5x slower than the other on its
    # first run (and over a second) is not run again: its rank is clear.
    more_idx = runs - 1
    more_seq = runs - 1
    if idx_ms[0] > 5 * seq_ms[0] and idx_ms[0] > 1000:
        more_idx = 0
    if seq_ms[0] > 5 * idx_ms[0] and seq_ms[0] > 1000:
        more_seq = 0
    if more_idx or more_seq:
        # Warm up with the plans still to be timed only.
        script = pre + (FORCE_SEQ + ana if more_seq else "") + \
            (FORCE_INDEX + ana if more_idx else "")
        for i in range(max(more_idx, more_seq)):
            if i < more_seq:
                script += FORCE_SEQ + ana
            if i < more_idx:
                script += FORCE_INDEX + ana
        script += "ROLLBACK;\n"
        docs = split_json(pg.run(script))
        docs = docs[(1 if more_seq else 0) + (1 if more_idx else 0):]
        for i in range(max(more_idx, more_seq)):
            if i < more_seq:
                seq_ms.append(explain_time(docs.pop(0)))
            if i < more_idx:
                idx_ms.append(explain_time(docs.pop(0)))
    res["idx_ms"] = statistics.median(idx_ms)
    res["seq_ms"] = statistics.median(seq_ms)
    res["idx_runs"] = len(idx_ms)
    res["seq_runs"] = len(seq_ms)
    best = min(res["idx_ms"], res["seq_ms"])
    picked = {"index": res["idx_ms"], "seq": res["seq_ms"]}.get(res["pick"])
    res["picked_ms"] = picked
    res["ok"] = picked is not None and picked <= TOLERANCE * best
    return res


# --- main -----------------------------------------------------------------------

def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--rows", type=int, default=10000000)
    ap.add_argument("--runs", type=int, default=3)
    ap.add_argument("--out", required=True, help="directory for plan_choice.csv")
    ap.add_argument("--psql", default="psql")
    ap.add_argument("--only", help="comma-separated config keys to run")
    ap.add_argument("--queries", help="comma-separated query names to run")
    ap.add_argument("--time-limit", type=float, default=0,
                    help="seconds after which no new query is started "
                    "(0: none); the summary then covers what ran")
    ap.add_argument("--remake", action="store_true",
                    help="drop and remake tbloom/tmixed of another size")
    a = ap.parse_args()

    pg = Pg(a.psql)
    os.makedirs(a.out, exist_ok=True)
    t_start = time.time()
    pg.run("CREATE EXTENSION IF NOT EXISTS bloomidx;\n"
           "CREATE EXTENSION IF NOT EXISTS bloom;\n"
           "CREATE EXTENSION IF NOT EXISTS pg_prewarm;\n")
    settings = pg.value(
        "SELECT string_agg(name || '=' || current_setting(name), ' ' "
        "ORDER BY name) FROM pg_settings WHERE name IN ('shared_buffers', "
        "'work_mem', 'random_page_cost', 'seq_page_cost', "
        "'effective_cache_size', 'cpu_tuple_cost', 'cpu_operator_cost', "
        "'cpu_index_tuple_cost')")
    log("server: %s" % pg.value("SHOW server_version"))
    log("settings: %s max_parallel_workers_per_gather=0 jit=off (session)"
        % settings)
    configs = CONFIGS
    if a.only:
        keep = set(a.only.split(","))
        configs = [c for c in CONFIGS if c["key"] in keep]
    tables = [t for t in TABLES if any(t in c["cols"] for c in configs)]
    ensure_tables(pg, a.rows, a.remake, tables)
    makers = dict(tbloom=tbloom_queries, tmixed=tmixed_queries,
                  tsets=tsets_queries)
    queries = [q for t in tables for q in makers[t](pg)]
    if a.queries:
        keep = set(a.queries.split(","))
        queries = [q for q in queries if q["name"] in keep]

    fields = ["am", "config", "options", "table", "query", "ncols", "nvalues",
              "present", "matches", "est_candidates", "candidates",
              "est_cost_idx", "est_cost_seq", "idx_plan", "pick", "idx_ms",
              "seq_ms", "idx_runs", "seq_runs", "faster", "ok", "where"]
    csv_path = os.path.join(a.out, "plan_choice.csv")
    results = []
    stopped = False
    with open(csv_path, "w", newline="") as fh:
        w = csv.DictWriter(fh, fieldnames=fields)
        w.writeheader()
        for cfg in configs:
            for table in TABLES:
                if table not in cfg["cols"]:
                    continue
                cols = cfg["cols"][table]
                tq = [q for q in queries if q["table"] == table and
                      (q["cols"] is None or set(q["cols"]) <= set(cols))]
                if not tq:
                    continue
                index = "pc_%s_%s" % (cfg["key"].replace(".", "_"), table)
                with_ = " WITH (%s)" % cfg["opts"] if cfg["opts"] else ""
                t0 = time.time()
                pg.run("DROP INDEX IF EXISTS %s;\nCREATE INDEX %s ON %s USING "
                       "%s (%s)%s;\n" % (index, index, table, cfg["am"],
                                         ", ".join(cols), with_))
                build_s = time.time() - t0
                hide = [h for h in pg.run(
                    "SELECT indexrelid::regclass FROM pg_index WHERE indrelid "
                    "= '%s'::regclass AND indexrelid <> '%s'::regclass"
                    % (table, index)).split("\n") if h]
                pg.run("SELECT pg_prewarm('%s'), pg_prewarm('%s');" % (table, index))
                log("%s on %s: built in %.1f s, %s pages%s" % (
                    cfg["key"], table, build_s,
                    pg.value("SELECT relpages FROM pg_class WHERE relname = '%s'"
                             % index),
                    ", hiding %s" % ", ".join(hide) if hide else ""))
                for q in tq:
                    if a.time_limit and time.time() - t_start > a.time_limit:
                        stopped = True
                        break
                    r = measure(pg, cfg, index, hide, q, a.runs)
                    r.update(am=cfg["am"], config=cfg["key"],
                             options=cfg["opts"], table=table, query=q["name"],
                             ncols=q["ncols"], nvalues=q["nvalues"],
                             present=q["present"], where=q["where"],
                             faster="index" if r["idx_ms"] < r["seq_ms"] else "seq")
                    results.append(r)
                    w.writerow({k: ("%.3f" % r[k] if isinstance(r[k], float)
                                    else r[k]) for k in fields})
                    fh.flush()
                    log("  %-18s pick %-5s %s  idx %9.2f ms  seq %9.2f ms  "
                        "cand est %-9s act %-9s" % (
                            q["name"], r["pick"], "ok " if r["ok"] else "BAD",
                            r["idx_ms"], r["seq_ms"],
                            "%.0f" % r["est_candidates"]
                            if r["est_candidates"] is not None else "-",
                            r["candidates"] if r["candidates"] is not None else "-"))
                pg.run("DROP INDEX %s;" % index)
                if stopped:
                    break
            if stopped:
                log("time limit of %.0f s reached: the grid is incomplete"
                    % a.time_limit)
                break

    def share(rs):
        n = len(rs)
        k = sum(1 for r in rs if r["ok"])
        return "%d/%d (%.0f%%)" % (k, n, 100.0 * k / n) if n else "0/0"

    bx = [r for r in results if r["am"] == "bloomidx"]
    bl = [r for r in results if r["am"] == "bloom"]
    log("")
    log("summary: planner picked the faster plan (or within 10%%): "
        "bloomidx %s, contrib/bloom %s%s" % (share(bx), share(bl),
                                            " (incomplete grid)" if stopped else ""))
    for cfg in configs:
        rs = [r for r in results if r["config"] == cfg["key"]]
        if rs:
            log("summary:   %-18s %s" % (cfg["key"], share(rs)))
    def ratios(rs):
        return [r["candidates"] / r["est_candidates"] for r in rs
                if r["candidates"] and r["est_candidates"] and
                r["candidates"] >= 100]

    eq = ratios([r for r in bx if r["table"] != "tsets"])
    if len(eq) >= 2:
        log("summary: bloomidx candidate rows, actual/estimated, median over "
            "%d queries with >= 100 candidates: %.2f (quartiles %.2f, %.2f)"
            % (len(eq), statistics.median(eq),
               *statistics.quantiles(eq, n=4)[0::2]))
    # The sets queries (tsets) again on their own lines.
    sx = [r for r in bx if r["table"] == "tsets"]
    if sx:
        nidx = sum(1 for r in sx if r["idx_plan"] != "index")
        log("summary: sets: planner picked the faster plan (or within 10%%): "
            "bloomidx %s%s" % (share(sx), " (incomplete grid)" if stopped
                               else ""))
        log("summary: sets: picked plans took %.2fx the time of the faster "
            "ones (sum over %d queries); forced index plans that were no "
            "index plan: %d"
            % (sum(r["picked_ms"] or 0 for r in sx) /
               sum(min(r["idx_ms"], r["seq_ms"]) for r in sx), len(sx), nidx))
        rs = ratios(sx)
        if len(rs) >= 2:
            log("summary: sets: candidate rows, actual/estimated, median over "
                "%d queries with >= 100 candidates: %.2f (quartiles %.2f, "
                "%.2f)" % (len(rs), statistics.median(rs),
                           *statistics.quantiles(rs, n=4)[0::2]))
    bad = [r for r in results if not r["ok"]]
    for r in bad:
        log("  missed: %s %s %s: picked %s, index %.1f ms, seq %.1f ms"
            % (r["config"], r["table"], r["query"], r["pick"], r["idx_ms"],
               r["seq_ms"]))
    log("plan_choice: %d queries in %.0f s, CSV %s"
        % (len(results), time.time() - t_start, csv_path))


if __name__ == "__main__":
    try:
        main()
    except (RuntimeError, subprocess.TimeoutExpired) as e:
        print("error: %s" % e, file=sys.stderr)
        sys.exit(1)
