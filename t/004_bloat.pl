
# Copyright and license: see the project's LICENSE.

# Space reuse: DELETE half of the rows, VACUUM, insert as many rows again;
# the index grows by at most a few pages.  Three cycles each, for:
#	- a contiguous half: whole index pages empty out, are deleted and
#	  recycled through the free space map;
#	- every other row: every page keeps half its tuples and the freed
#	  slots are reused through the metapage's list of pages with room,
#	  on an index of fewer pages than that list holds and on one of more;
#	- two rows in three of the six-column table of the other tests.
# After every cycle the index answers equal the seq scan's and
# bloomidx_check passes.

use strict;
use warnings;

use FindBin;
use lib $FindBin::RealBin;

use PostgreSQL::Test::Cluster;
use PostgreSQL::Test::Utils;
use Test::More;
use BloomidxTest;

# Pages the index may grow by in a cycle
my $slack = 3;

my $node = PostgreSQL::Test::Cluster->new('bloat');
$node->init;
$node->append_conf('postgresql.conf', 'autovacuum = off');
$node->start;
$node->safe_psql('postgres', 'CREATE EXTENSION bloomidx');

# Pages of an index
sub index_pages
{
	my ($index) = @_;
	return $node->safe_psql('postgres',
		"SELECT pg_relation_size('$index') / current_setting('block_size')::int");
}

# Delete half of the rows of $table, VACUUM, insert as many new rows; the
# size of $index is checked against its size before.  $half is a condition
# on rn, the row's rank by id: whether it is one to delete.
sub cycles
{
	my ($label, $table, $index, $nrows, $half, $fill) = @_;
	my $next = $nrows + 1;
	my $before = index_pages($index);

	for my $cycle (1 .. 3)
	{
		my $deleted = $node->safe_psql('postgres',
			"WITH d AS (DELETE FROM $table WHERE id IN ("
			  . "SELECT id FROM (SELECT id, row_number() OVER (ORDER BY id) AS rn FROM $table) r"
			  . " WHERE $half) RETURNING 1) SELECT count(*) FROM d");
		$node->safe_psql('postgres', "VACUUM $table");
		$node->safe_psql('postgres', $fill->($next, $next + $deleted - 1));
		$next += $deleted;

		my $after = index_pages($index);
		cmp_ok($after, '<=', $before + $slack,
			"$label, cycle $cycle: $deleted rows deleted and reinserted, index grew from $before to $after pages"
		);
		is( $node->safe_psql('postgres',
				"SELECT count(*) = $nrows FROM $table"),
			't', "$label, cycle $cycle: the table has $nrows rows again");
		is( $node->safe_psql('postgres',
				"SELECT bloomidx_check('$index', true); SELECT 'checked'"),
			"\nchecked", "$label, cycle $cycle: bloomidx_check passes");
	}
	return;
}

# A one-column index of plain integers: 582 tuples a page
sub int_fill
{
	my ($table) = @_;
	return sub {
		my ($from, $to) = @_;
		return "INSERT INTO $table SELECT g, g % 1000 FROM generate_series($from, $to) g";
	};
}

foreach my $case (
	[ 'contiguous half, 400000 rows', 'bc', 400000, 'rn <= 200000' ],
	[ 'every other row, 100000 rows', 'ba', 100000, 'rn % 2 = 0' ],
	[ 'every other row, 400000 rows', 'bb', 400000, 'rn % 2 = 0' ])
{
	my ($label, $table, $nrows, $half) = @$case;
	$node->safe_psql('postgres', qq{
CREATE TABLE $table (id int, a int);
INSERT INTO $table SELECT g, g % 1000 FROM generate_series(1, $nrows) g;
CREATE INDEX ${table}_a_bx ON $table USING bloomidx (a);
});
	cycles($label, $table, "${table}_a_bx", $nrows, $half, int_fill($table));

	# The answers are still right
	is( $node->safe_psql('postgres', qq{
SET enable_seqscan = off;
SELECT count(*), sum(id) FROM $table WHERE a = 7;
RESET enable_seqscan;
SET enable_bitmapscan = off;
SELECT count(*), sum(id) FROM $table WHERE a = 7;
}) =~ /^(.*)\n\1$/ ? 'same' : 'different',
		'same', "$label: index = seq scan after the cycles");
	$node->safe_psql('postgres', "DROP TABLE $table");
}

# The six-column table of the other tests, with its two indexes
$node->safe_psql('postgres', bx_schema_sql('bt') . bx_fill_sql('bt', 1, 60000));
my $tn_before = index_pages('bt_tn_bx');
cycles('six columns, two rows in three', 'bt', 'bt_bx', 60000, 'rn % 3 <> 0',
	sub { my ($from, $to) = @_; return bx_fill_sql('bt', $from, $to); });
cmp_ok(index_pages('bt_tn_bx'), '<=', $tn_before + $slack,
	"six columns: the second index did not grow either (from $tn_before pages)");
bx_check_answers($node, 'bt', 'six columns, after the cycles');

$node->stop;

done_testing();
