
# Copyright and license: see the project's LICENSE.

# Crashes in the middle of merges of a sliced index.  Each round adds
# pending rows and deletes some of them, starts a merge that
# bloomidx.debug_merge_stop_after stops between two of its WAL records
# (at a different record each round), stops the server with an immediate
# shutdown, so that recovery replays what the merge wrote, and then lets
# VACUUM (which compacts the pending pages, so that other rows take the
# same row numbers) and a full merge write those rows again.  After every
# round bloomidx_check with heapallindexed must pass: every row has exactly
# the bits of its own signature, none left by the merge the crash cut
# short.  Queries answer as a sequential scan does, and the standby, which
# replayed everything, agrees and passes bloomidx_check too.
#
# A round stops its merge after the k-th WAL record, k = 1 + (round * 7)
# % 12: every 12 rounds try each of the first 12 records once.  The default
# run has 24 rounds (each stop twice, after different deletions), BX_FULL=1
# (scripts/test.sh --full) 100; BX_MERGE_CRASHES sets the number.

use strict;
use warnings;

use FindBin;
use lib $FindBin::RealBin;

use PostgreSQL::Test::Cluster;
use PostgreSQL::Test::Utils;
use Test::More;
use BloomidxTest;

my $rounds = $ENV{BX_MERGE_CRASHES} // ($ENV{BX_FULL} ? 100 : 24);

my $primary = PostgreSQL::Test::Cluster->new('primary');
$primary->init(allows_streaming => 1);
$primary->append_conf('postgresql.conf', 'autovacuum = off');
$primary->start;
$primary->safe_psql('postgres', q{
CREATE EXTENSION bloomidx;
CREATE TABLE mc (id int, a int, b int, c int) WITH (autovacuum_enabled = off);
INSERT INTO mc SELECT g, g % 1000, g % 777, g % 331 FROM generate_series(1, 70000) g;
CREATE INDEX mc_bx ON mc USING bloomidx (a, b, c) WITH (layout = sliced);
});
is($primary->safe_psql('postgres',
	"SELECT bits_per_column FROM bloomidx_stats('mc_bx')"), '{9,9,9}',
	'three columns of 9 bits');

# A slot, its WAL reserved at once (and so on disk, for the crashes), keeps
# the WAL the standby has not received through the restarts
$primary->safe_psql('postgres', "SELECT pg_create_physical_replication_slot('mc_standby', true)");
$primary->backup('bkp');
my $standby = PostgreSQL::Test::Cluster->new('standby');
$standby->init_from_backup($primary, 'bkp', has_streaming => 1);
$standby->append_conf('postgresql.conf', "primary_slot_name = 'mc_standby'");
$standby->start;

# Conditions whose answers through the index must equal a seq scan's
my @conditions = ('a = 7', 'b = 13 AND c = 5', 'a = ANY (ARRAY[1, 2, 999])', 'c = 300');

sub answers_agree
{
	my ($node, $label) = @_;
	return bx_disagreement($node, 'mc', \@conditions, $label);
}

my $next_id = 70001;
my ($stopped, $failures) = (0, 0);
for my $round (1 .. $rounds)
{
	# Pending rows, some of them deleted: VACUUM after the crash compacts
	# their pages, so the rows merged again differ from those the crash
	# cut short
	my $last = $next_id + 1499;
	$primary->safe_psql('postgres', qq{
		INSERT INTO mc SELECT g, (g * 7) % 1000, (g * 11) % 777, (g * 13) % 331
		FROM generate_series($next_id, $last) g;
		DELETE FROM mc WHERE id BETWEEN $next_id AND $last AND id % 5 = $round % 5;
	});
	$next_id = $last + 1;

	# A merge stopped after the k-th of its WAL records, then a crash
	my $k = 1 + ($round * 7) % 12;
	my ($ret, $out, $err) = $primary->psql('postgres',
		"SET bloomidx.debug_merge_stop_after = $k; SELECT bloomidx_merge('mc_bx')");
	$stopped++ if $err =~ /stopped after $k WAL records/;
	$primary->stop('immediate');
	$primary->start;

	# The rows merged again, after VACUUM compacted their pending pages
	$primary->safe_psql('postgres', "VACUUM mc; SELECT bloomidx_merge('mc_bx')");

	my ($cret, $cout, $cerr) = $primary->psql('postgres',
		"SELECT bloomidx_check('mc_bx', heapallindexed => true)");
	if ($cret != 0)
	{
		$failures++;
		diag("round $round (stopped after $k records): $cerr");
		last;
	}
	if ($round % 10 == 0 || $round == $rounds)
	{
		my $disagree = answers_agree($primary, "round $round, primary");
		if ($disagree ne '')
		{
			$failures++;
			diag($disagree);
			last;
		}
	}
}
is($failures, 0, "bloomidx_check(heapallindexed) passes after each of $rounds crashes in merges");
cmp_ok($stopped, '>=', $rounds * 0.9,
	'bloomidx.debug_merge_stop_after stopped the merges as asked');
is(answers_agree($primary, 'primary'), '', 'the primary answers as a seq scan');

# The standby replayed every merge, cut short or not
$primary->wait_for_catchup($standby);
is($standby->safe_psql('postgres', "SELECT bloomidx_check('mc_bx', heapallindexed => true)"),
	'', 'bloomidx_check(heapallindexed) passes on the standby');
is(answers_agree($standby, 'standby'), '', 'the standby answers as a seq scan');
is($standby->safe_psql('postgres', 'SELECT count(*) FROM mc'),
	$primary->safe_psql('postgres', 'SELECT count(*) FROM mc'),
	'the standby has every row');

# Without the setting nothing stops
# (a query on the table loads the library, which defines the setting)
is($primary->safe_psql('postgres',
	'SELECT count(*) >= 0 FROM mc WHERE a = 1; SHOW bloomidx.debug_merge_stop_after'),
	"t\n0", 'merges are not stopped by default');
my ($ret, $out, $err) = $primary->psql('postgres',
	"SELECT count(*) FROM mc WHERE a = 1; CREATE ROLE mc_user; SET ROLE mc_user; "
	  . "SET bloomidx.debug_merge_stop_after = 1");
like($err, qr/permission denied to set parameter "bloomidx.debug_merge_stop_after"/,
	'only a superuser sets bloomidx.debug_merge_stop_after');

$standby->stop;
$primary->stop;
done_testing();
