# Copyright and license: see the project's LICENSE.

# Which scans keep the pages they read in shared buffers.  As a sequential
# scan of a table does, a bitmap scan of a bloomidx index reads through a
# small bulk-read ring only if it reads more than a quarter of
# shared_buffers; a smaller one leaves its pages in shared buffers, so that
# the same query run again reads nothing.  The row layout reads the whole
# index; the sliced layout reads its pending pages and, per stripe, the
# slices of the query's bits, so a sliced index larger than the ring's
# threshold is still read into shared buffers when a query reads few of
# its slices.  Each case starts from a restarted server (nothing cached).

use strict;
use warnings;

use FindBin;
use lib $FindBin::RealBin;

use PostgreSQL::Test::Cluster;
use PostgreSQL::Test::Utils;
use Test::More;

my $node = PostgreSQL::Test::Cluster->new('main');
$node->init;
# 16 MB: a quarter is 512 pages
$node->append_conf('postgresql.conf',
	"shared_buffers = 16MB\nautovacuum = off\nmax_parallel_workers_per_gather = 0\n");
$node->start;

$node->safe_psql(
	'postgres', q{
CREATE EXTENSION bloomidx;
CREATE TABLE big (a int, b int, c int, d int);
INSERT INTO big SELECT g, g % 1009, g % 7919, g % 101 FROM generate_series(1, 600000) g;
CREATE TABLE small (a int, b int, c int, d int);
INSERT INTO small SELECT g, g % 1009, g % 7919, g % 101 FROM generate_series(1, 60000) g;
CREATE INDEX big_sliced ON big USING bloomidx (a, b, c, d);
CREATE INDEX big_row ON big USING bloomidx (a, b, c, d) WITH (layout = 'row');
CREATE INDEX small_row ON small USING bloomidx (a, b, c, d) WITH (layout = 'row');
ANALYZE big, small;
});

# Pages of each index, against the ring's threshold of 512
my %pages = map { $_ => $node->safe_psql('postgres',
		"SELECT pg_relation_size('$_') / 8192") } qw(big_sliced big_row small_row);
cmp_ok($pages{big_sliced}, '>', 512, 'the sliced index is over a quarter of shared_buffers');
cmp_ok($pages{big_row}, '>', 512, 'the big row index is over a quarter of shared_buffers');
cmp_ok($pages{small_row}, '<', 512, 'the small row index is under a quarter of shared_buffers');

# Run a query twice in one session through index idx (the other index of
# the table dropped in a rolled-back transaction): the pages its bitmap
# index scan read (not found in shared buffers) each time, and the rows
# it found against a seq scan's
sub scan_twice
{
	my ($idx, $table, $other, $cond) = @_;
	my $explain = "EXPLAIN (ANALYZE, BUFFERS, COSTS OFF, TIMING OFF, SUMMARY OFF) "
	  . "SELECT count(*) FROM $table WHERE $cond;";
	my $out = $node->safe_psql(
		'postgres', qq{
SET enable_seqscan = off;
BEGIN;
@{[ $other ? "DROP INDEX $other;" : '' ]}
$explain
$explain
SELECT 'via index: ' || count(*) FROM $table WHERE $cond;
ROLLBACK;
SET enable_seqscan = on;
SET enable_bitmapscan = off;
SELECT 'via seq scan: ' || count(*) FROM $table WHERE $cond;
});
	my @reads;
	my @lines = split /\n/, $out;
	for my $i (0 .. $#lines)
	{
		next unless $lines[$i] =~ /Bitmap Index Scan on $idx\b/;
		my $read = 0;
		for my $j ($i + 1 .. $#lines)
		{
			last if $lines[$j] =~ /->/;
			if ($lines[$j] =~ /Buffers: shared(.*)/)
			{
				$read = $1 =~ /read=(\d+)/ ? $1 : 0;
				last;
			}
		}
		push @reads, $read;
	}
	is(scalar @reads, 2, "$idx: the plan scans it, twice") or diag $out;
	my ($via_index) = $out =~ /via index: (\d+)/;
	my ($via_seqscan) = $out =~ /via seq scan: (\d+)/;
	is($via_index, $via_seqscan, "$idx: $cond finds what a seq scan finds");
	return @reads;
}

my @r;

$node->restart;
@r = scan_twice('big_sliced', 'big', 'big_row', 'a = 4242 AND b = 205');
cmp_ok($r[0], '>', 0, 'sliced: the first scan reads its slices');
cmp_ok($r[0], '<', 512, 'sliced: fewer than a quarter of shared_buffers');
is($r[1], 0, 'sliced: run again, it finds them all in shared buffers');

# Read ahead from the file: one column, and an = ANY's alternatives
$node->restart;
@r = scan_twice('big_sliced', 'big', 'big_row', 'b = 205');
cmp_ok($r[0], '>', 0, 'sliced, one column: the first scan reads its slices');
$node->restart;
@r = scan_twice('big_sliced', 'big', 'big_row', 'c = ANY (ARRAY[7, 205, 7000]) AND d = 7');
cmp_ok($r[0], '>', 0, 'sliced, = ANY: the first scan reads its slices');

$node->restart;
@r = scan_twice('big_row', 'big', 'big_sliced', 'a = 4242 AND b = 205');
cmp_ok($r[0], '>=', $pages{big_row} - 2, 'big row index: the first scan reads every page');
cmp_ok($r[1], '>', $pages{big_row} / 2,
	'big row index: run again, it reads them again (through the ring)');

$node->restart;
@r = scan_twice('small_row', 'small', undef, 'a = 4242 AND b = 205');
cmp_ok($r[0], '>=', $pages{small_row} - 2, 'small row index: the first scan reads every page');
is($r[1], 0, 'small row index: run again, it finds them all in shared buffers');

# VACUUM and bloomidx_check, each from the file: the index stays whole
$node->safe_psql('postgres', 'DELETE FROM big WHERE a % 3 = 0 OR a < 300000');
$node->restart;
$node->safe_psql('postgres', 'VACUUM big');
$node->restart;
is($node->safe_psql('postgres', "SELECT bloomidx_check('big_sliced', true); SELECT 'checked'"),
	"\nchecked", 'bloomidx_check from the file passes after VACUUM from the file');
$node->restart;
@r = scan_twice('big_sliced', 'big', 'big_row', 'b = 205');
$node->restart;
@r = scan_twice('big_sliced', 'big', 'big_row', 'a = 400000 AND b = 436');

$node->stop;
done_testing();
