
# Copyright and license: see the project's LICENSE.

# Crash recovery of bloomidx indexes.  pgbench clients insert, update and
# delete rows of two logged tables (row and sliced layouts) and an unlogged
# one, and VACUUM them; the server is stopped in immediate mode in the
# middle of the load (after a checkpoint, so that recovery replays both
# full-page images and later records).  After each restart the logged tables' index answers equal
# the seq scan's and bloomidx_check (heapallindexed) passes; the unlogged
# table and its index are empty, sound and usable.
#
# Two rounds by default; five with BX_FULL=1 (scripts/test.sh --full);
# BX_CRASH_ROUNDS sets the number.

use strict;
use warnings;

use FindBin;
use lib $FindBin::RealBin;

use IPC::Run;
use PostgreSQL::Test::Cluster;
use PostgreSQL::Test::Utils;
use Test::More;
use BloomidxTest;

my $rounds = $ENV{BX_CRASH_ROUNDS} // ($ENV{BX_FULL} ? 5 : 2);
my $rows_per_round = 8000;

my $node = PostgreSQL::Test::Cluster->new('crash');
$node->init;
# Few buffers: index pages are evicted and written while the load runs
$node->append_conf('postgresql.conf', qq{
shared_buffers = 1MB
max_connections = 20
max_prepared_transactions = 2
});
$node->start;

# Logged tables in both layouts, an unlogged one
$node->safe_psql('postgres',
	bx_schema_sql('ct') . bx_fill_sql('ct', 1, 10000)
	  . bx_schema_sql('cs', layout => 'sliced') . bx_fill_sql('cs', 1, 10000)
	  . bx_schema_sql('cu', unlogged => 1) . bx_fill_sql('cu', 1, 10000)
	  . 'CREATE SEQUENCE ct_seq START 10001; CREATE SEQUENCE cs_seq START 10001;'
	  . 'CREATE SEQUENCE cu_seq START 10001;');

# The load: bx_insert_sql, ids from a sequence
my $dir = PostgreSQL::Test::Utils::tempdir;
my %scripts;
foreach my $t ('ct', 'cs', 'cu')
{
	$scripts{"insert_$t"} = bx_insert_sql($t,
		"(SELECT nextval('${t}_seq') AS g FROM generate_series(1, 5)) s");
	$scripts{"update_$t"} = qq{
\\set id random(1, 10000 + $rounds * $rows_per_round)
UPDATE $t SET t = 'b' || (id % 7), note = 'updated' WHERE id = :id;
};
	$scripts{"delete_$t"} = qq{
\\set id random(1, 10000 + $rounds * $rows_per_round)
DELETE FROM $t WHERE id = :id;
};
}
$scripts{vacuum} = "VACUUM ct, cs, cu;\n";
my %weights = (
	insert_ct => 10, update_ct => 4, delete_ct => 4,
	insert_cs => 10, update_cs => 4, delete_cs => 4,
	insert_cu => 5, update_cu => 2, delete_cu => 2,
	vacuum => 1);
my @script_args;
foreach my $name (sort keys %scripts)
{
	append_to_file("$dir/$name.sql", $scripts{$name});
	push @script_args, '-f', "$dir/$name.sql\@$weights{$name}";
}

for my $round (1 .. $rounds)
{
	my $before = $node->safe_psql('postgres', "SELECT last_value FROM ct_seq");

	# A time limit pgbench never reaches: the crash ends it
	my ($out, $err) = ('', '');
	my $pgbench = IPC::Run::start(
		[
			'pgbench', '-n', '-c', '4', '-j', '2', '-T', '300',
			'--random-seed', $round, @script_args,
			'-h', $node->host, '-p', $node->port, 'postgres'
		],
		'>', \$out, '2>', \$err,
		IPC::Run::timeout($PostgreSQL::Test::Utils::timeout_default));

	# Load, checkpoint, more load, crash
	my $half = $before + $rows_per_round / 2;
	my $full = $before + $rows_per_round;
	$node->poll_query_until('postgres',
		"SELECT last_value >= $half FROM ct_seq")
	  or die "the load did not progress";
	$node->safe_psql('postgres', 'CHECKPOINT');
	$node->poll_query_until('postgres',
		"SELECT last_value >= $full FROM ct_seq")
	  or die "the load did not progress";
	$node->stop('immediate');

	# pgbench fails once its connections are gone
	eval { $pgbench->finish; };
	$pgbench->kill_kill if $@;
	isnt($pgbench->result, 0, "round $round: the load was cut short by the crash");

	$node->start;

	foreach my $t ([ 'ct', 'row' ], [ 'cs', 'sliced' ])
	{
		my ($table, $layout) = @$t;
		bx_check_answers($node, $table, "round $round, $layout layout, after recovery");
		is( $node->safe_psql(
				'postgres',
				"SELECT bloomidx_check('${table}_bx', true), bloomidx_check('${table}_tn_bx', true); SELECT 'checked'"
			),
			"|\nchecked",
			"round $round, $layout layout: bloomidx_check passes after recovery");
	}

	# The unlogged table came back empty, its index too, and both work
	is( $node->safe_psql(
			'postgres',
			"SELECT (SELECT count(*) FROM cu), data_pages, live_tuples FROM bloomidx_stats('cu_bx')"
		),
		"0|0|0",
		"round $round: the unlogged table and its index are empty");
	is( $node->safe_psql(
			'postgres',
			"SELECT bloomidx_check('cu_bx', true), bloomidx_check('cu_tn_bx', true); SELECT 'checked'"
		),
		"|\nchecked",
		"round $round: bloomidx_check passes on the unlogged table's indexes");
	$node->safe_psql('postgres', bx_fill_sql('cu', 1, 2000));
	bx_check_answers($node, 'cu', "round $round, unlogged table refilled");
	$node->safe_psql('postgres', "SELECT setval('cu_seq', 2001, false)");
}

# A prepared transaction's inserts (gathered by their statement and written
# before it ends): a crash, COMMIT PREPARED, and the index has them
my $prepared = bx_insert_sql('cs',
	"(SELECT nextval('cs_seq') AS g FROM generate_series(1, 1000)) s");
$node->safe_psql('postgres',
	"BEGIN;\n$prepared\nPREPARE TRANSACTION 'bx_prepared';");
$node->stop('immediate');
$node->start;
$node->safe_psql('postgres', "COMMIT PREPARED 'bx_prepared'");
bx_check_answers($node, 'cs', 'a prepared transaction committed after a crash');
is( $node->safe_psql(
		'postgres',
		"SELECT bloomidx_check('cs_bx', true), bloomidx_check('cs_tn_bx', true); SELECT 'checked'"
	),
	"|\nchecked",
	'a prepared transaction committed after a crash: bloomidx_check passes');

$node->stop;

done_testing();
