
# Copyright and license: see the project's LICENSE.

# Replication of bloomidx indexes (generic WAL): a primary and a streaming
# standby.  After the build and after every step of rounds of INSERT,
# DELETE, UPDATE (HOT and not) and VACUUM, the queries return through the
# index the rows a seq scan returns, the standby's index answers equal the
# primary's, both nodes' indexes have the same pages and tuples
# (bloomidx_stats), and bloomidx_check passes on both nodes.
# Modelled on contrib/bloom's t/001_wal.pl.

use strict;
use warnings;

use FindBin;
use lib $FindBin::RealBin;

use PostgreSQL::Test::Cluster;
use PostgreSQL::Test::Utils;
use Test::More;
use BloomidxTest;

my $primary = PostgreSQL::Test::Cluster->new('primary');
$primary->init(allows_streaming => 1);
$primary->start;
$primary->backup('backup');

my $standby = PostgreSQL::Test::Cluster->new('standby');
$standby->init_from_backup($primary, 'backup', has_streaming => 1);
$standby->start;

# Everything the standby must match: index answers, stats, checks
sub check_replay
{
	my ($label) = @_;

	$primary->wait_for_catchup($standby, 'replay', $primary->lsn('insert'));

	my @on_primary = bx_check_answers($primary, 'rt', "$label, primary");
	my @on_standby = bx_answers($standby, 'rt');
	bx_compare_nodes("$label, standby", \@on_primary, \@on_standby);

	my $stats = q{
SELECT s.* FROM unnest('{rt_bx, rt_tn_bx}'::regclass[]) i, bloomidx_stats(i) s;
};
	is($standby->safe_psql('postgres', $stats),
		$primary->safe_psql('postgres', $stats),
		"$label: same bloomidx_stats on both nodes");

	my $check = q{
SELECT bloomidx_check('rt_bx', true), bloomidx_check('rt_tn_bx', true);
SELECT 'checked';
};
	is($primary->safe_psql('postgres', $check),
		"|\nchecked", "$label: bloomidx_check passes on the primary");
	is($standby->safe_psql('postgres', $check),
		"|\nchecked", "$label: bloomidx_check passes on the standby");
	return;
}

$primary->safe_psql('postgres', bx_schema_sql('rt'));
$primary->safe_psql('postgres', bx_fill_sql('rt', 1, 20000));
check_replay('after build and insert');

# The indexes built on a full table replicate too (log_newpage_range)
$primary->safe_psql('postgres', 'REINDEX TABLE rt;');
check_replay('after REINDEX');

my $next = 20001;
for my $round (1 .. 5)
{
	$primary->safe_psql('postgres',
		bx_fill_sql('rt', $next, $next + 2999)
		  . "DELETE FROM rt WHERE id % 7 = $round;");
	$next += 3000;
	check_replay("round $round, insert and delete");

	# t is indexed: not HOT; note is not: HOT
	$primary->safe_psql('postgres', qq{
UPDATE rt SET t = 'b' || ((id + $round) % 23) WHERE id % 11 = $round;
UPDATE rt SET note = 'round $round' WHERE id % 5 = 0;
});
	check_replay("round $round, update");

	# Every other round, delete a whole range: emptied pages are deleted,
	# then recycled by the next round's inserts
	$primary->safe_psql('postgres',
		"DELETE FROM rt WHERE id BETWEEN $round * 3000 AND $round * 3000 + 2500;")
	  if $round % 2 == 1;
	$primary->safe_psql('postgres', 'VACUUM rt;');
	check_replay("round $round, vacuum");
}

$standby->stop;
$primary->stop;

done_testing();
