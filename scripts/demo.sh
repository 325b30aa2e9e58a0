#!/usr/bin/env bash
#
# scripts/demo.sh: build bloomidx, install it, and show it at work on a
# throwaway cluster.
#
# Steps:
#   1. scripts/deps.sh (installs missing Debian packages when root).
#   2. Build a copy of the source tree in a temp work dir, then install:
#        as root   into the system PostgreSQL 15 (`make install`), so the
#                  extension stays available afterwards;
#        otherwise into a private relocated copy of PostgreSQL 15 in the
#                  work dir (see scripts/lib.sh), nothing system-wide.
#   3. A throwaway cluster in the work dir (as the postgres OS user when
#      root), listening only on a Unix socket there.
#   4. CREATE EXTENSION bloomidx and bloom (contrib, for comparison), a
#      200k-row `orders` table of deterministic data, one bloomidx index on
#      six columns, sizes, and EXPLAIN (ANALYZE, BUFFERS) of two queries.
#   5. Stop the cluster and remove the work dir (trap; KEEP=1 keeps it).
#
# Environment: KEEP=1 keeps the work dir; DEMO_ROWS (default 200000).
set -euo pipefail

REPO=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
# shellcheck source=scripts/lib.sh
source "$REPO/scripts/lib.sh"

DEMO_ROWS=${DEMO_ROWS:-200000}
[[ $DEMO_ROWS =~ ^[0-9]+$ ]] || bx_die "DEMO_ROWS must be a number"

# Libpq settings of the caller must not redirect our psql.
while read -r v; do unset "$v"; done < <(compgen -e | grep -E '^PG[A-Z]+$' || true)

bash "$REPO/scripts/deps.sh"

bx_make_workdir bloomidx-demo
bx_install_traps
bx_log "work dir: $BX_WORK"

SRC=$BX_WORK/src
bx_copy_source "$REPO" "$SRC"

if bx_is_root; then
    # Root: build and install into the system PostgreSQL.
    BX_PG_BINDIR=$BX_SYS_BINDIR
    BX_PG_CONFIG=$BX_SYS_PG_CONFIG
    bx_log "build and install into the system PostgreSQL ($("$BX_PG_CONFIG" --pkglibdir))"
    make -C "$SRC" --no-print-directory -j"$(nproc)" PG_CONFIG="$BX_PG_CONFIG"
    make -C "$SRC" --no-print-directory install PG_CONFIG="$BX_PG_CONFIG"
else
    # Not root: a private relocated PostgreSQL in the work dir.
    bx_log "not root: build and install into a private PostgreSQL in $BX_WORK/pg"
    bx_pg_private_install "$BX_WORK/pg"
    make -C "$SRC" --no-print-directory -j"$(nproc)" PG_CONFIG="$BX_PG_CONFIG"
    make -C "$SRC" --no-print-directory install PG_CONFIG="$BX_PG_CONFIG"
fi

SOCK=$BX_WORK/sock
PORT=$(bx_pick_port)
bx_log "throwaway cluster on socket $SOCK, port $PORT"
bx_cluster_init "$BX_WORK/cluster/data" "$BX_PG_BINDIR"
bx_cluster_start "$BX_WORK/cluster/data" "$BX_PG_BINDIR" "$SOCK" "$PORT" \
    "$BX_WORK/cluster/server.log" fsync=off

bx_log "demo"
bx_as_pg "$BX_PG_BINDIR/psql" -X -q -v ON_ERROR_STOP=1 -v rows="$DEMO_ROWS" \
    -h "$SOCK" -p "$PORT" -d postgres <<'SQL'
\pset footer off
CREATE EXTENSION bloomidx;
CREATE EXTENSION bloom;

\echo
\echo '--- orders: deterministic data (no random()) ---'
CREATE TABLE orders (
    customer_id int,
    region      text,
    sku         text,
    status      text,
    created_on  date,
    coupon      text
);
-- 20,000 customers (10 orders each, spread over the table), 5 regions in
-- runs of 100 rows, 100 SKUs, 5 statuses, one year of dates, and a coupon
-- code (from md5) on every 20th order.
INSERT INTO orders
SELECT 1 + (i * 7919) % 20000,
       (ARRAY['EU', 'NA', 'APAC', 'LATAM', 'MEA'])[1 + (i / 100) % 5],
       'X-' || (i % 100),
       (ARRAY['placed', 'paid', 'shipped', 'delivered', 'returned'])[1 + (i / 7) % 5],
       DATE '2024-01-01' + (i % 366),
       CASE WHEN i % 20 = 0 THEN upper(substr(md5(i::text), 1, 8)) END
FROM generate_series(1, :rows) AS i;
SELECT * FROM orders ORDER BY customer_id, created_on LIMIT 5;

\echo
\echo '--- one bloomidx index covers all six columns ---'
\timing on
CREATE INDEX orders_bloomidx ON orders
    USING bloomidx (customer_id, region, sku, status, created_on, coupon);
\timing off
ANALYZE orders;
SELECT count(*) AS rows,
       pg_size_pretty(pg_relation_size('orders')) AS table_size,
       pg_size_pretty(pg_relation_size('orders_bloomidx')) AS index_size,
       round(100.0 * pg_relation_size('orders_bloomidx')
             / pg_relation_size('orders'), 1) AS "index % of table"
FROM orders;

-- uses_index(q, idx): does the planner's plan for query q use index idx?
CREATE FUNCTION pg_temp.uses_index(q text, idx text) RETURNS boolean
LANGUAGE plpgsql AS $$
DECLARE
    line text;
BEGIN
    FOR line IN EXECUTE 'EXPLAIN ' || q LOOP
        IF line LIKE '%' || idx || '%' THEN
            RETURN true;
        END IF;
    END LOOP;
    RETURN false;
END
$$;

-- Each query: the planner's plan, the number of matching rows and, if the
-- planner preferred another plan, the plan that uses orders_bloomidx.
\echo
\echo '--- equality on any subset of the indexed columns ---'
\set q 'SELECT * FROM orders WHERE region = ''EU'' AND sku = ''X-17'''
\echo :q
EXPLAIN (ANALYZE, BUFFERS) :q;
SELECT count(*) AS matching_rows FROM (:q) AS s;
SELECT pg_temp.uses_index(:'q', 'orders_bloomidx') AS uses_index \gset
\if :uses_index
\else
\echo '(the planner did not use orders_bloomidx; with enable_seqscan = off:)'
SET enable_seqscan = off;
EXPLAIN (ANALYZE, BUFFERS) :q;
RESET enable_seqscan;
\endif

\echo
\echo '--- an IN list ---'
\set q 'SELECT * FROM orders WHERE customer_id IN (42, 4711, 17017) AND status = ''returned'''
\echo :q
EXPLAIN (ANALYZE, BUFFERS) :q;
SELECT count(*) AS matching_rows FROM (:q) AS s;
SELECT pg_temp.uses_index(:'q', 'orders_bloomidx') AS uses_index \gset
\if :uses_index
\else
\echo '(the planner did not use orders_bloomidx; with enable_seqscan = off:)'
SET enable_seqscan = off;
EXPLAIN (ANALYZE, BUFFERS) :q;
RESET enable_seqscan;
\endif
SQL

bx_log "demo done; stopping the cluster"
