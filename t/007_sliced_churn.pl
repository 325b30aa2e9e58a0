
# Copyright and license: see the project's LICENSE.

# Stripes reclaimed by VACUUM under concurrent bitmap scans, in the sliced
# layout.
#
# VACUUM empties every full stripe (65,280 rows) that is at least half
# dead: it moves the stripe's live rows back to pending pages, takes the
# stripe out of its stripe list and frees its pages at once, to the free
# space map, so that the merge that follows reuses them.  A bitmap scan
# that listed the stripe before that may then find one of its pages freed
# or reused: every page of a stripe carries the stripe's number, and the
# scan starts over (DEBUG1 "a stripe was emptied during a scan, starting
# over"), or raises XX002 if the stripe is still listed (see src/layout/sliced/sliced.c).
# A bitmap scan is one call, so this path cannot be reached step by step;
# this test gives it many chances and checks that every answer is exact.
#
# The table holds ids 1 .. $rows (several full stripes), and columns whose
# values are arithmetic on the id, so that every query the readers run has
# a known answer:
#	a = id % 1000			350 rows per value
#	b = id % 7				a = k AND b = m: 50 rows (CRT, $rows = 50 * 7000)
#	c = (id - 1) / 1000		a = k AND c = j: 1 row
# Churn: each cycle deletes a window of $window contiguous ids (1.5
# stripes' worth, rotating over the table) and inserts the same rows again
# (same ids and values, new TIDs) in ONE statement, so that every MVCC
# snapshot sees the same logical content; then a separate VACUUM reclaims
# the stripes the window made at least half dead.  The rows of a window
# reach the slices in id order, so a window of more than a stripe's worth
# of rows that were numbered together kills at least half of a stripe.
#
# Readers: pgbench clients, for $duration seconds, run bitmap scans
# (enable_seqscan and enable_indexscan off) and fail their transaction on
# any count or sum that differs from the known answer (a row a scan
# missed makes a count too low; the heap recheck drops false positives);
# the churn cycles run until the readers are done.  An error aborts its
# client (pgbench 15 counts only serialization failures and deadlocks as
# failed transactions), so pgbench must exit with status 0, with nothing
# on stderr, no failed transaction and some transactions processed.
#
# Afterwards the table holds each id once, bloomidx_check (heapallindexed)
# passes, the index answers equal the seq scan's, and after one more VACUUM
# the index holds one entry per row.  The readers' sessions alone log at
# DEBUG1, so the scan restarts are counted from the server log; that
# count, and the stripes reclaimed (from bloomidx_stats: the stripe
# numbers used, ceil(next_row / 65,280), less the stripes still listed),
# are reported as notes, not asserted: they depend on timing (a reader's
# snapshot or buffer pin can also keep VACUUM from removing some dead rows
# until the next cycle, and the stripe from being reclaimed until then).

use strict;
use warnings;

use IPC::Run;
use POSIX qw(ceil);
use PostgreSQL::Test::Cluster;
use PostgreSQL::Test::Utils;
use Test::More;

my $rows = 350_000;      # ids 1 .. $rows: 5 full stripes and part of one
my $window = 98_000;     # ids deleted and inserted again per churn cycle
my $readers = 6;         # pgbench clients
my $duration = 25;       # seconds the readers run
my $min_cycles = 2;      # churn cycles even if the readers end first
my $max_cycles = 200;    # a bound, should the readers never end

my $node = PostgreSQL::Test::Cluster->new('sliced_churn');
$node->init;
# A serial build numbers the rows in heap order (= id order)
$node->append_conf('postgresql.conf', qq{
autovacuum = off
max_parallel_maintenance_workers = 0
});
$node->start;

my $blcksz = $node->safe_psql('postgres', 'SHOW block_size');
# BLOOMIDX_STRIPE_ROWS (src/core/page.h): 64 rows per word of a page's contents
my $stripe_rows = int(($blcksz - 24 - 8) / 8) * 64;

$node->safe_psql('postgres', qq{
CREATE EXTENSION bloomidx;
CREATE TABLE ch (id int NOT NULL, a int, b int, c int);
INSERT INTO ch SELECT g, g % 1000, g % 7, (g - 1) / 1000
	FROM generate_series(1, $rows) g;
CREATE INDEX ch_bx ON ch USING bloomidx (a, b, c) WITH (layout = sliced);
CREATE FUNCTION churn_wrong(what text) RETURNS int LANGUAGE plpgsql AS \$\$
BEGIN
	RAISE EXCEPTION 'wrong answer through the index: %', what;
END;
\$\$;
});

# Stripe numbers used (the last maybe partial) less the stripes listed
sub stripe_stats
{
	my ($stripes, $pending, $first, $next) = split /\|/,
	  $node->safe_psql('postgres',
		"SELECT stripes, pending_pages, first_row, next_row FROM bloomidx_stats('ch_bx')"
	  );
	return {
		stripes => $stripes,
		pending => $pending,
		first_row => $first,
		next_row => $next,
		reclaimed => ceil($next / $stripe_rows) - $stripes
	};
}

my $stats = stripe_stats();
cmp_ok($stats->{stripes}, '>=', 5, 'the index has several stripes');
is($stats->{reclaimed}, 0, 'no stripe is reclaimed after the build');
note "after the build: $stats->{stripes} stripes, $stats->{pending} pending pages, "
  . "rows $stats->{first_row} .. $stats->{next_row}";

# The readers' plans use the index
my $reader_settings = 'SET enable_seqscan = off; SET enable_indexscan = off;';
like(
	$node->safe_psql('postgres',
		"$reader_settings EXPLAIN (COSTS OFF) SELECT count(*) FROM ch "
		  . "WHERE a = ANY (ARRAY[1, 2, 3]) AND b = 4"),
	qr/Bitmap Index Scan on ch_bx/,
	'the readers run bitmap scans of the sliced index');

# --- readers ------------------------------------------------------------

# Four queries per transaction, each checked against its known answer
my $dir = PostgreSQL::Test::Utils::tempdir;
my $script = "$dir/reader.sql";
append_to_file($script, q{
\set k random(0, 999)
\set m random(0, 6)
\set j random(0, 349)
\set k2 (:k + 250) % 1000
\set k3 (:k + 500) % 1000
\set k4 (:k + 750) % 1000
\set want_sum 350 * :k + 61075000 + case when :k = 0 then 350000 else 0 end
SELECT count(*) AS n1, coalesce(sum(id), 0) AS s1 FROM ch WHERE a = :k \gset
\if :n1 != 350 or :s1 != :want_sum
SELECT churn_wrong('a = :k: :n1 rows of sum :s1, expected 350 rows of sum :want_sum');
\endif
SELECT count(*) AS n2 FROM ch WHERE a = :k AND b = :m \gset
\if :n2 != 50
SELECT churn_wrong('a = :k AND b = :m: :n2 rows, expected 50');
\endif
SELECT count(*) AS n3 FROM ch WHERE a = ANY (ARRAY[:k, :k2, :k3, :k4]) AND b = :m \gset
\if :n3 != 200
SELECT churn_wrong('a = ANY (:k, :k2, :k3, :k4) AND b = :m: :n3 rows, expected 200');
\endif
SELECT count(*) AS n4 FROM ch WHERE a = :k AND c = :j \gset
\if :n4 != 1
SELECT churn_wrong('a = :k AND c = :j: :n4 rows, expected 1');
\endif
});

my $scans_before = $node->safe_psql('postgres',
	"SELECT idx_scan FROM pg_stat_user_indexes WHERE indexrelid = 'ch_bx'::regclass");
my $log_offset = -s $node->logfile;

# The readers' sessions alone log at DEBUG1 (for the restarts), and not
# their statements (log_statement = all otherwise)
my ($out, $err) = ("$dir/pgbench.out", "$dir/pgbench.err");
my $pgbench;
{
	local $ENV{PGOPTIONS} = '-c enable_seqscan=off -c enable_indexscan=off '
	  . '-c log_min_messages=debug1 -c log_statement=none';
	$pgbench = IPC::Run::start(
		[
			'pgbench', '-n', '-c', $readers, '-j', '2', '-T', $duration,
			'--random-seed', '7', '-f', $script,
			'-h', $node->host, '-p', $node->port, 'postgres'
		],
		'>', $out, '2>', $err,
		IPC::Run::timeout($duration + $PostgreSQL::Test::Utils::timeout_default));
}

# --- churn, while the readers run ---------------------------------------

my $cycles = 0;
do
{
	my $lo = ($cycles * $window) % $rows;
	$node->safe_psql('postgres', qq{
WITH d AS (DELETE FROM ch WHERE ((id - 1 - $lo) % $rows + $rows) % $rows < $window
	RETURNING id, a, b, c)
INSERT INTO ch SELECT * FROM d ORDER BY id;
VACUUM ch;
});
	$cycles++;
	$stats = stripe_stats();
	note "churn cycle $cycles (ids from " . ($lo + 1) . "): "
	  . "$stats->{stripes} stripes, $stats->{pending} pending pages, "
	  . "rows $stats->{first_row} .. $stats->{next_row}, "
	  . "$stats->{reclaimed} stripes reclaimed so far";
} while ($cycles < $min_cycles
	|| ($pgbench->pumpable && $cycles < $max_cycles));

$pgbench->finish;
my $pgbench_out = slurp_file($out);
my $pgbench_err = slurp_file($err);
is($pgbench->full_result(0), 0, 'pgbench readers exit with status 0')
  or diag "pgbench stdout:\n$pgbench_out\npgbench stderr:\n$pgbench_err";
like($pgbench_err, qr/^(pgbench: setting random seed to 7\s*)?$/,
	'no reader reported an error');
like($pgbench_out, qr/^number of failed transactions: 0 /m,
	'no reader transaction failed');
my ($processed) =
  $pgbench_out =~ /^number of transactions actually processed: (\d+)/m;
cmp_ok($processed // 0, '>', 0, 'the readers ran transactions');

my $scans = $node->safe_psql('postgres',
	"SELECT idx_scan FROM pg_stat_user_indexes WHERE indexrelid = 'ch_bx'::regclass")
  - $scans_before;
my $log = slurp_file($node->logfile, $log_offset);
my $restarts = () = $log =~ /a stripe was emptied during a scan, starting over/g;
ok($log !~ /XX002|index "ch_bx" contains corrupted page/,
	'no scan reported corruption');
note "$cycles churn cycles of $window rows, $stats->{reclaimed} stripes reclaimed; "
  . "readers: " . ($processed // 0) . " transactions, $scans scans of ch_bx, "
  . "$restarts scan restarts logged (a stripe emptied under a scan)";

# --- afterwards -----------------------------------------------------------

is( $node->safe_psql('postgres',
		'SELECT count(*), count(DISTINCT id), sum(id), min(id), max(id) FROM ch'),
	"$rows|$rows|" . ($rows * ($rows + 1) / 2) . "|1|$rows",
	'the table holds every id once after the churn');

is($node->safe_psql('postgres', "SELECT bloomidx_check('ch_bx', true); SELECT 'checked'"),
	"\nchecked", 'bloomidx_check passes after the churn');

# Every value of a through the index (a bitmap scan per value)
my $per_value = q{
SELECT count(*) FROM generate_series(0, 999) k
WHERE (SELECT count(*) FROM ch WHERE a = k) <> 350};
like($node->safe_psql('postgres', "$reader_settings EXPLAIN (COSTS OFF) $per_value"),
	qr/Bitmap Index Scan on ch_bx/, 'every value of a: the plan scans the index');
is($node->safe_psql('postgres', "$reader_settings $per_value"),
	'0', 'every value of a returns its 350 rows through the index');

# Index answers equal the seq scan's, ids compared
foreach my $cond (
	'a = 0', 'a = 517', 'a = 517 AND b = 3', 'a = ANY (ARRAY[1, 251, 501, 751]) AND b = 6',
	'a = 999 AND c = 349', 'b = 2 AND c = 17', 'c = ANY (ARRAY[0, 100, 349])')
{
	my $q = "SELECT count(*) || ' rows ' || md5(string_agg(id::text, ',' ORDER BY id)) FROM ch WHERE $cond";
	my $plan = $node->safe_psql('postgres', "$reader_settings EXPLAIN (COSTS OFF) $q");
	like($plan, qr/Bitmap Index Scan on ch_bx/, "$cond: the plan scans the index");
	is( $node->safe_psql('postgres', "$reader_settings $q"),
		$node->safe_psql('postgres',
			"SET enable_bitmapscan = off; SET enable_indexscan = off; $q"),
		"$cond: index = seq scan after the churn");
}

# Once VACUUM has removed the last cycle's dead rows (INDEX_CLEANUP ON: it
# would skip the index with few dead rows), one index entry per row
$node->safe_psql('postgres', 'VACUUM (INDEX_CLEANUP ON) ch');
is($node->safe_psql('postgres', "SELECT live_tuples FROM bloomidx_stats('ch_bx')"),
	$rows, 'after VACUUM the index holds one entry per row');
is($node->safe_psql('postgres', "SELECT bloomidx_check('ch_bx', true); SELECT 'checked'"),
	"\nchecked", 'bloomidx_check passes after the last VACUUM');

$node->stop;

done_testing();
