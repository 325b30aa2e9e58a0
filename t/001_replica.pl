
# Copyright and license: see the project's LICENSE.

# Replication of bloomidx indexes (generic WAL), in both layouts: a primary
# and a streaming standby.  After the build and after every step of rounds
# of INSERT, DELETE, UPDATE (HOT and not) and VACUUM, the queries return
# through the index the rows a seq scan returns, the standby's index
# answers equal the primary's, both nodes' indexes have the same pages and
# tuples (bloomidx_stats), and bloomidx_check passes on both nodes.
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
# The steps VACUUM themselves: an autovacuum between the standby's catch-up
# and the reading of the primary's stats would make them differ
$primary->append_conf('postgresql.conf', 'autovacuum = off');
$primary->start;
$primary->backup('backup');

my $standby = PostgreSQL::Test::Cluster->new('standby');
$standby->init_from_backup($primary, 'backup', has_streaming => 1);
$standby->start;

# One table per layout, each with its two indexes
my @tables = ([ 'rt', 'row' ], [ 'rs', 'sliced' ]);

# Everything the standby must match: index answers, stats, checks
sub check_replay
{
	my ($label) = @_;

	$primary->wait_for_catchup($standby, 'replay', $primary->lsn('insert'));

	foreach my $t (@tables)
	{
		my ($table, $layout) = @$t;
		my @on_primary =
		  bx_check_answers($primary, $table, "$label, $layout layout, primary");
		my @on_standby = bx_answers($standby, $table);
		bx_compare_nodes("$label, $layout layout, standby", \@on_primary,
			\@on_standby);

		my $stats = qq{
SELECT s.* FROM unnest('{${table}_bx, ${table}_tn_bx}'::regclass[]) i, bloomidx_stats(i) s;
};
		is($standby->safe_psql('postgres', $stats),
			$primary->safe_psql('postgres', $stats),
			"$label, $layout layout: same bloomidx_stats on both nodes");

		my $check = qq{
SELECT bloomidx_check('${table}_bx', true), bloomidx_check('${table}_tn_bx', true);
SELECT 'checked';
};
		is($primary->safe_psql('postgres', $check),
			"|\nchecked",
			"$label, $layout layout: bloomidx_check passes on the primary");
		is($standby->safe_psql('postgres', $check),
			"|\nchecked",
			"$label, $layout layout: bloomidx_check passes on the standby");
	}
	return;
}

# Run the same SQL, with %T standing for the table's name, on each table
sub on_each_table
{
	my ($sql) = @_;
	foreach my $t (@tables)
	{
		(my $s = $sql) =~ s/%T/$t->[0]/g;
		$primary->safe_psql('postgres', $s);
	}
	return;
}

foreach my $t (@tables)
{
	$primary->safe_psql('postgres',
		bx_schema_sql($t->[0], layout => $t->[1]) . bx_fill_sql($t->[0], 1, 20000));
}
check_replay('after build and insert');

# The indexes built on a full table replicate too (log_newpage_range)
on_each_table('REINDEX TABLE %T;');
check_replay('after REINDEX');

my $next = 20001;
for my $round (1 .. 5)
{
	foreach my $t (@tables)
	{
		$primary->safe_psql('postgres',
			bx_fill_sql($t->[0], $next, $next + 2999)
			  . "DELETE FROM $t->[0] WHERE id % 7 = $round;");
	}
	$next += 3000;
	check_replay("round $round, insert and delete");

	# t is indexed: not HOT; note is not: HOT
	on_each_table(qq{
UPDATE %T SET t = 'b' || ((id + $round) % 23) WHERE id % 11 = $round;
UPDATE %T SET note = 'round $round' WHERE id % 5 = 0;
});
	check_replay("round $round, update");

	# Every other round, delete a whole range: emptied pages are deleted,
	# then recycled by the next round's inserts
	on_each_table("DELETE FROM %T WHERE id BETWEEN $round * 3000 AND $round * 3000 + 2500;")
	  if $round % 2 == 1;
	on_each_table('VACUUM %T;');
	check_replay("round $round, vacuum");
}

$standby->stop;
$primary->stop;

done_testing();
