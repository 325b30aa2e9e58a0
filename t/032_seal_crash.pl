
# Copyright and license: see the project's LICENSE.

# Crashes in the middle of VACUUM sealing the stripes merges filled into
# their summary group's region.  Each round creates an index on an empty
# table, loads two full stripes and some rows more through merges, then
# runs a VACUUM that bloomidx.debug_merge_stop_after stops after the k-th
# WAL record of the seal (k = 1, 2, ... : the region's pages, its slot, the
# blocks copied, the record that seals a stripe, the next stripe's), and
# stops the server with an immediate shutdown.  After recovery
# bloomidx_check with heapallindexed passes, queries answer as a seq scan
# does, and a later VACUUM seals the stripes: a query for an absent value
# then touches fewer index pages than before any VACUUM, and the region's
# pages are the index's only group pages (those a crash left unlisted are
# freed).

use strict;
use warnings;

use FindBin;
use lib $FindBin::RealBin;

use PostgreSQL::Test::Cluster;
use PostgreSQL::Test::Utils;
use Test::More;
use BloomidxTest;

my $rounds = $ENV{BX_SEAL_CRASHES} // ($ENV{BX_FULL} ? 24 : 12);

my $node = PostgreSQL::Test::Cluster->new('primary');
$node->init;
$node->append_conf('postgresql.conf', 'autovacuum = off');
$node->start;
$node->safe_psql('postgres', q{
CREATE EXTENSION bloomidx;
CREATE EXTENSION pageinspect;
CREATE TABLE sc_rows AS
SELECT g AS id, g % 1000 AS a, (g * 7) % 777 AS b, (g::bigint * 7919 % 1000003)::int AS c
FROM generate_series(1, 140000) g;
});

# Pages of an index flagged as a summary group's (0x0200, src/core/page.h)
sub group_pages
{
	my ($idx) = @_;
	return $node->safe_psql('postgres', qq{
		SELECT count(*) FROM generate_series(1, pg_relation_size('$idx') /
			current_setting('block_size')::int - 1) b,
		LATERAL (SELECT get_raw_page('$idx', b::int) AS p) x
		WHERE (get_byte(p, current_setting('block_size')::int - 4) |
			   (get_byte(p, current_setting('block_size')::int - 3) << 8)) = 512});
}

# Index pages a bitmap scan of table t hits for a condition
sub hits
{
	my ($t, $cond) = @_;
	my $plan = $node->safe_psql('postgres', qq{
		SET enable_seqscan = off; SET enable_indexscan = off;
		EXPLAIN (ANALYZE, BUFFERS, FORMAT JSON) SELECT count(*) FROM $t WHERE $cond});
	return $plan =~ /"Node Type": "Bitmap Index Scan".*?"Shared Hit Blocks": (\d+)/s
	  ? $1 : -1;
}

my @conditions = ('a = 7', 'b = 13 AND a = 5', 'a = ANY (ARRAY[1, 2, 999, 5000])',
	'a = 5000', 'b IS NULL');

sub answers_agree
{
	my ($t) = @_;
	return bx_disagreement($node, $t, \@conditions, $t);
}

# VACUUM table t stopped after k WAL records, then an immediate stop and a
# restart: whether the stop came at k, and '' if bloomidx_check (with
# heapallindexed) passes and the answers are a seq scan's, else what failed
sub crash_vacuum
{
	my ($t, $k) = @_;
	my ($ret, $out, $err) = $node->psql('postgres',
		"SET bloomidx.debug_merge_stop_after = $k; VACUUM $t");
	my $stopped_here = $err =~ /stopped after $k WAL records/ ? 1 : 0;
	$node->stop('immediate');
	$node->start;

	my ($cret, $cout, $cerr) = $node->psql('postgres',
		"SELECT bloomidx_check('${t}_bx', heapallindexed => true)");
	return ($stopped_here,
		$cret != 0 ? "after the crash: $cerr" : answers_agree($t));
}

my ($stopped, $failures) = (0, 0);
for my $k (1 .. $rounds)
{
	my $t = "sc_$k";
	$node->safe_psql('postgres', qq{
		CREATE TABLE $t (id int, a int, b int, c int) WITH (autovacuum_enabled = off);
		CREATE INDEX ${t}_bx ON $t USING bloomidx (a, b, c) WITH (layout = sliced);
		INSERT INTO $t SELECT * FROM sc_rows;
		SELECT bloomidx_merge('${t}_bx');
	});
	my $before = hits($t, 'a = 5000');

	my ($stopped_here, $problem) = crash_vacuum($t, $k);
	$stopped += $stopped_here;
	if ($problem eq '')
	{
		$node->safe_psql('postgres', "VACUUM $t");
		my ($cret, $cout, $cerr) = $node->psql('postgres',
			"SELECT bloomidx_check('${t}_bx', heapallindexed => true)");
		my $after = hits($t, 'a = 5000');
		$problem =
		    $cret != 0 ? "after the next VACUUM: $cerr"
		  : answers_agree($t) ne '' ? answers_agree($t)
		  : $after < 0 || $after >= $before
		  ? "the next VACUUM did not seal: $after index pages hit, $before before"
		  : '';
	}
	if ($problem ne '')
	{
		$failures++;
		diag("stopped after $k records: $problem");
		last;
	}
	# The region is the only group pages left (a crash's unlisted ones freed)
	my $gp = group_pages("${t}_bx");
	$node->safe_psql('postgres', "VACUUM $t");
	my $gp2 = group_pages("${t}_bx");
	if ($gp == 0 || $gp != $gp2)
	{
		$failures++;
		diag("stopped after $k records: $gp group pages, then $gp2");
		last;
	}
	$node->safe_psql('postgres', "DROP TABLE $t");
}
is($failures, 0,
	"bloomidx_check(heapallindexed) passes and a later VACUUM seals after each of $rounds crashes in a seal");
cmp_ok($stopped, '>=', $rounds - 1,
	'bloomidx.debug_merge_stop_after stopped the seals as asked');

# A region's growth.  The index is built on a full stripe and some rows
# more (group 0's region then holds two positions), the table grows to
# three full stripes by merges, and VACUUM seals stripe 1 in the region,
# then grows it for stripe 2: the new region's pages, the record that
# switches the slot, then the old region's pages and stripe 2's own
# summary pages freed.  Each round stops that VACUUM after its k-th WAL
# record, k = 1, 2, ... until one runs to its end.  After recovery,
# bloomidx_check with heapallindexed passes and queries answer as a seq
# scan does; a later VACUUM grows the region: a query for an absent value
# then hits as many index pages as after a VACUUM no crash stopped, and
# the index has as many group pages, and keeps them through one more
# VACUUM (the new region's only: the pages a crash left unlisted, before
# or after the switch, are freed).
sub grow_table
{
	my ($t) = @_;
	$node->safe_psql('postgres', qq{
		CREATE TABLE $t (id int, a int, b int, c int) WITH (autovacuum_enabled = off);
		INSERT INTO $t SELECT id, a, b, c % 5003 FROM sc_rows WHERE id <= 66280;
		VACUUM ANALYZE $t;
		CREATE INDEX ${t}_bx ON $t USING bloomidx (a, b, c) WITH (layout = sliced);
		INSERT INTO $t SELECT id, a, b, c % 5003 FROM sc_rows WHERE id > 66280;
		INSERT INTO $t SELECT id + 140000, a, b, c % 5003 FROM sc_rows WHERE id <= 60000;
		SELECT bloomidx_merge('${t}_bx');
	});
}

grow_table('gr_ref');
$node->safe_psql('postgres', 'VACUUM gr_ref');
my $ref_hits = hits('gr_ref', 'a = 5000');
my $ref_pages = group_pages('gr_ref_bx');
$node->safe_psql('postgres', q{
	CREATE TABLE gr_fresh AS SELECT * FROM gr_ref;
	VACUUM ANALYZE gr_fresh;
	CREATE INDEX gr_fresh_bx ON gr_fresh USING bloomidx (a, b, c) WITH (layout = sliced);
});
is($ref_hits, hits('gr_fresh', 'a = 5000'),
	'a VACUUM that grows the region seals the full stripes as a build does');
my ($grown, $grow_failures, $grow_rounds) = (0, 0, 0);
for my $k (1 .. 40)
{
	my $t = "gr_$k";
	grow_table($t);
	my ($stopped_here, $problem) = crash_vacuum($t, $k);
	$grow_rounds++;
	if ($problem eq '')
	{
		# The table's rows as the first VACUUM counted them, which the
		# crash may have lost (they size the new region)
		$node->safe_psql('postgres', "ANALYZE $t");
		$node->safe_psql('postgres', "VACUUM $t");
		my ($cret, $cout, $cerr) = $node->psql('postgres',
			"SELECT bloomidx_check('${t}_bx', heapallindexed => true)");
		my $after = hits($t, 'a = 5000');
		my $gp = group_pages("${t}_bx");
		$node->safe_psql('postgres', "VACUUM $t");
		my $gp2 = group_pages("${t}_bx");
		$problem =
		    $cret != 0 ? "after the next VACUUM: $cerr"
		  : answers_agree($t) ne '' ? answers_agree($t)
		  : $after != $ref_hits
		  ? "the next VACUUM did not grow the region: $after index pages hit, $ref_hits without a crash"
		  : $gp != $ref_pages || $gp2 != $gp
		  ? "$gp group pages, then $gp2; $ref_pages without a crash"
		  : '';
	}
	if ($problem ne '')
	{
		$grow_failures++;
		diag("growth stopped after $k records: $problem");
		last;
	}
	$node->safe_psql('postgres', "DROP TABLE $t");
	if (!$stopped_here)
	{
		$grown = 1;
		last;
	}
}
is($grow_failures, 0,
	"bloomidx_check(heapallindexed) passes and a later VACUUM grows the region after each of $grow_rounds crashes in a growth");
ok($grown && $grow_rounds >= 3,
	"the growth's VACUUM ran to its end after $grow_rounds rounds");

$node->stop;
done_testing();
