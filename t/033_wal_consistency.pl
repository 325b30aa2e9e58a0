
# Copyright and license: see the project's LICENSE.

# Every WAL record bloomidx writes replays to the very page the primary
# wrote: the primary runs with wal_consistency_checking = 'generic', so
# each generic record (GenericXLogFinish's and the byte ranges deltawal.c
# logs for merges and pending rows) carries the page images its changes
# must give, and the standby's replay compares the pages it produced with
# them, stopping with "inconsistent page found" on any difference.  The
# table is large enough for the sliced layout's stripes, stripe summaries,
# summary groups, merges of pending rows into a partial stripe, VACUUM's
# sealing and a group region's growth.  After each step the standby must
# still be replaying, and its answers, bloomidx_stats and bloomidx_check
# must be the primary's.

use strict;
use warnings;

use FindBin;
use lib $FindBin::RealBin;

use PostgreSQL::Test::Cluster;
use PostgreSQL::Test::Utils;
use Test::More;

my $primary = PostgreSQL::Test::Cluster->new('primary');
$primary->init(allows_streaming => 1);
$primary->append_conf('postgresql.conf', qq{
autovacuum = off
wal_consistency_checking = 'generic'
max_parallel_maintenance_workers = 0
});
$primary->start;
$primary->safe_psql('postgres', 'CREATE EXTENSION bloomidx;');
$primary->backup('backup');

my $standby = PostgreSQL::Test::Cluster->new('standby');
$standby->init_from_backup($primary, 'backup', has_streaming => 1);
$standby->start;

# a: 1,000 values, b: many; one full stripe and 1,000 rows, so that the
# build sizes group 0's region for two stripes and the table outgrows it
sub rows_sql
{
	my ($from, $to) = @_;
	return qq{INSERT INTO w SELECT i, i % 1000, (i::bigint * 7919 % 1000003)::int
FROM generate_series($from, $to) i;};
}

my @queries = (
	'a = 7', 'a = 1000', 'b = 7919', 'b = 1000002',
	'a = 5 AND b = 39595', 'a = ANY (ARRAY[3, 1001, 1002])');

# The answers of every query through the index, one line each
sub answers
{
	my ($node) = @_;
	my $sql = "SET enable_seqscan = off; SET enable_indexscan = off;\n";
	$sql .= "SELECT count(*), sum(id) FROM w WHERE $_;\n" foreach @queries;
	return $node->safe_psql('postgres', $sql);
}

sub check_replay
{
	my ($label) = @_;

	$primary->wait_for_catchup($standby, 'replay', $primary->lsn('insert'));
	ok($standby->safe_psql('postgres', 'SELECT pg_is_in_recovery()') eq 't',
		"$label: the standby replays every record, consistent pages");

	my $seq = $primary->safe_psql('postgres',
		"SET enable_bitmapscan = off; SET enable_indexscan = off;\n"
		  . join('', map { "SELECT count(*), sum(id) FROM w WHERE $_;\n" } @queries));
	is(answers($primary), $seq, "$label: the primary's index answers a seq scan's");
	is(answers($standby), $seq, "$label: the standby's index answers a seq scan's");

	my $stats = 'SELECT * FROM bloomidx_stats(\'w_bx\')';
	is($standby->safe_psql('postgres', $stats),
		$primary->safe_psql('postgres', $stats),
		"$label: same bloomidx_stats on both nodes");
	my $check = "SELECT bloomidx_check('w_bx', true); SELECT 'checked';";
	is($standby->safe_psql('postgres', $check), "\nchecked",
		"$label: bloomidx_check passes on the standby");
	return;
}

$primary->safe_psql('postgres', qq{
CREATE TABLE w (id int, a int, b int) WITH (autovacuum_enabled = off);
@{[ rows_sql(1, 66280) ]}
VACUUM ANALYZE w;
CREATE INDEX w_bx ON w USING bloomidx (a, b);
});
check_replay('build');

# Rows added a statement at a time are merged into the partial stripe and
# then new stripes, a step at a time, each logged from the bytes it changes
$primary->safe_psql('postgres', rows_sql($_ * 10000 + 66281, $_ * 10000 + 76280))
  foreach 0 .. 6;
check_replay('bulk inserts merged');

# Single-row inserts add rows to pending pages
$primary->safe_psql('postgres', rows_sql($_, $_) . "\n")
  foreach 136281 .. 136580;
check_replay('single-row inserts');

$primary->safe_psql('postgres', rows_sql(136581, 200000));
$primary->safe_psql('postgres', "SELECT bloomidx_merge('w_bx');");
check_replay('pending rows merged');

# VACUUM seals the full stripes merges filled, growing group 0's region
$primary->safe_psql('postgres', 'VACUUM w;');
check_replay('VACUUM seals and grows a region');

# Deletes, then VACUUM: rows removed from stripes, stale summary bits kept
$primary->safe_psql('postgres', 'DELETE FROM w WHERE id % 3 = 0 OR id > 190000; VACUUM w;');
check_replay('delete and VACUUM');

# REINDEX: a new build, logged with whole pages
$primary->safe_psql('postgres', 'REINDEX INDEX w_bx;');
check_replay('REINDEX');

$standby->stop;
$primary->stop;

done_testing();
