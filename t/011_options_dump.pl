
# Copyright and license: see the project's LICENSE.

# Every option set contrib/bloom accepts survives what rebuilds an index:
# for each set and each layout (given, or the default), one index is
# created with the set and one
# gets it through ALTER INDEX ... SET and REINDEX; then REINDEX, VACUUM FULL,
# TRUNCATE and a pg_dump restored into a fresh database.  After each step
# every index answers as a seq scan does, and the restored indexes have the
# options and the signature shape of the originals.  Every set contrib/bloom
# refuses is refused by ALTER INDEX ... SET too (SQLSTATE 22023), so that
# nothing a rebuild would refuse gets into the catalog, or into a dump.

use strict;
use warnings;

use FindBin;
use lib $FindBin::RealBin;

use PostgreSQL::Test::Cluster;
use PostgreSQL::Test::Utils;
use Test::More;
use BloomidxTest;

# The option sets of the regression test contrib_compat that contrib/bloom
# accepts, and bloomidx's own false_positive_rate
my @accepted = (
	'',
	'length = 80',
	'length = 80, col1 = 2, col2 = 2',
	'length = 7, col1 = 4',
	'length = 1',
	'length = 15',
	'length = 16',
	'length = 1000',
	'length = 2000',
	'length = 4096',
	'col1 = 3',
	'col2 = 4',
	'col1 = 4095',
	'col3 = 2',
	'col32 = 2',
	'length = 80, col1 = 80',
	'length = 64, col1 = 64',
	'length = 16, col1 = 16',
	'length = 16, col2 = 100',
	'length = 4096, col1 = 4095, col2 = 4095',
	'length = 32, col1 = 1, col2 = 1',
	'false_positive_rate = 0.000001',
	'false_positive_rate = 0.5');

# ... and those it refuses, with bloomidx's own that are out of range
my @refused = (
	'length = 4097',
	'length = 0',
	'length = -1',
	'col1 = 0',
	'col2 = 0',
	'col1 = 4096',
	'col33 = 2',
	"length = 'long'",
	'colour = 2',
	'false_positive_rate = 0',
	'false_positive_rate = 0.5000001',
	'false_positive_rate = 0.01, length = 80',
	'false_positive_rate = 0.01, col3 = 2',
	'layout = columnar');

# The layouts, and 'default': no layout given
my @layouts = ('row', 'sliced', 'default');

# The layout option for one of @layouts, if any
sub layout_opt
{
	my ($layout) = @_;
	return $layout eq 'default' ? '' : "layout = '$layout'";
}

# Conditions on the two indexed columns, i and t
my @conditions = (
	"i = 3",
	"t = 'b5'",
	"i = 3 AND t = 'b3'",
	"i = ANY ('{1, 2, 49}')",
	"t IS NULL",
	"i = 4 AND t IS NULL",
	"i = 1000");

my $node = PostgreSQL::Test::Cluster->new('options_dump');
$node->init;
$node->start;
$node->safe_psql('postgres', 'CREATE DATABASE src');

# bx_result() and a template table
$node->safe_psql('src', bx_schema_sql('od_base'));

# Tables od_<set>_<layout>_c (index created with the set) and _a (index
# created without options, then given the set by ALTER INDEX ... SET)
my @tables;
my $setup = '';
for my $k (0 .. $#accepted)
{
	for my $layout (@layouts)
	{
		my $with = join(', ', grep { $_ ne '' } ($accepted[$k], layout_opt($layout)));
		for my $how ('c', 'a')
		{
			my $table = "od_${k}_${layout}_$how";
			push @tables, $table;
			$setup .= "CREATE TABLE $table (LIKE od_base);\n";
			$setup .= bx_fill_sql($table, 1, 2000);
			if ($how eq 'c')
			{
				$setup .= "CREATE INDEX ${table}_bx ON $table USING bloomidx (i, t)"
				  . ($with eq '' ? '' : " WITH ($with)") . ";\n";
			}
			else
			{
				$setup .= "CREATE INDEX ${table}_bx ON $table USING bloomidx (i, t)"
				  . ($layout eq 'default' ? '' : " WITH (" . layout_opt($layout) . ")") . ";\n";
				$setup .= "ALTER INDEX ${table}_bx SET ($with);\n" if $with ne '';
				$setup .= "REINDEX INDEX ${table}_bx;\n";
			}
		}
	}
}
$node->safe_psql('src', "SET client_min_messages = warning;\n$setup");

# The indexes of @tables whose answers differ from a seq scan's (or whose
# plan did not use the index), one line each; and the number of checks
sub mismatches
{
	my ($dbname) = @_;
	my $tables = join(',', map { "'$_'" } @tables);
	my $conds = join(',', map { "\$c\$$_\$c\$" } @conditions);
	my $out = $node->safe_psql(
		$dbname, qq{
SELECT count(*) FILTER (WHERE a IS DISTINCT FROM b) || ' of ' || count(*) || E'\\n' ||
	coalesce(string_agg(tbl || ' ' || cond || ': ' || a || ' / ' || b, E'\\n')
		FILTER (WHERE a IS DISTINCT FROM b), '')
FROM (SELECT tbl, cond,
			 bx_result(format('SELECT id FROM %I WHERE %s', tbl, cond), true) AS a,
			 bx_result(format('SELECT id FROM %I WHERE %s', tbl, cond), false) AS b
	  FROM unnest(ARRAY[$tables]) tbl, unnest(ARRAY[$conds]) cond) s;
});
	$out =~ s/\s+$//;
	return $out;
}

sub check_all
{
	my ($dbname, $label) = @_;
	my $n = scalar(@tables) * scalar(@conditions);
	is(mismatches($dbname), "0 of $n",
		"$label: all " . scalar(@tables) . " indexes answer as a seq scan does");
	return;
}

# Signature shape and options of every index, one line each
sub shapes
{
	my ($dbname) = @_;
	return $node->safe_psql(
		$dbname, q{
SELECT c.relname, c.reloptions, s.signature_bits, s.bits_per_column, s.layout
FROM pg_class c, bloomidx_stats(c.oid) s
WHERE c.relname ~ '^od_\d+_.*_bx$'
ORDER BY c.relname;
});
}

check_all('src', 'after CREATE INDEX and ALTER INDEX ... SET');

# An index given its options by ALTER INDEX ... SET is built as one
# created with them
my %shape;
for my $line (split /\n/, shapes('src'))
{
	my ($name, $reloptions, @rest) = split /\|/, $line;
	$shape{$name} = join('|', @rest);
}
my $same = 0;
for my $k (0 .. $#accepted)
{
	for my $layout (@layouts)
	{
		$same++
		  if $shape{"od_${k}_${layout}_c_bx"} eq $shape{"od_${k}_${layout}_a_bx"};
	}
}
is($same, scalar(@accepted) * scalar(@layouts),
	'ALTER INDEX ... SET and REINDEX build the shape CREATE INDEX builds');

# The sliced layout with a signature longer than it takes is built as row,
# whether it was given or is the default
is($shape{"od_8_sliced_c_bx"}, '2000|{16,16}|row',
	'length = 2000 with layout = sliced builds the row layout');
is($shape{"od_8_default_c_bx"}, '2000|{16,16}|row',
	'length = 2000 without a layout builds the row layout');
is($shape{"od_0_default_c_bx"}, $shape{"od_0_sliced_c_bx"},
	'without options, the default is the sliced layout');
is($shape{"od_3_sliced_c_bx"}, '16|{4,2}|sliced',
	'length = 7, col1 = 4 is rounded up to 16 bits');

my $before = shapes('src');

$node->safe_psql('src',
	"SET client_min_messages = warning;\n" . join('', map { "REINDEX TABLE $_;\n" } @tables));
check_all('src', 'after REINDEX');

$node->safe_psql('src',
	"SET client_min_messages = warning;\n" . join('', map { "VACUUM FULL $_;\n" } @tables));
check_all('src', 'after VACUUM FULL');

$node->safe_psql('src',
	"SET client_min_messages = warning;\n"
	  . join('', map { "TRUNCATE $_;\n" . bx_fill_sql($_, 1, 2000) } @tables));
check_all('src', 'after TRUNCATE and a new load');

is(shapes('src'), $before, 'the rebuilds keep every shape and option');

# Dump, and restore into a fresh database: no error
my $dump = $node->basedir . '/src.sql';
$node->command_ok([ 'pg_dump', '--no-sync', '-f', $dump, '-d', $node->connstr('src') ],
	'pg_dump of every accepted option set');
$node->safe_psql('postgres', 'CREATE DATABASE dst');
$node->command_ok(
	[
		'psql', '-X', '-q', '-v', 'ON_ERROR_STOP=1', '-c', 'SET client_min_messages = warning',
		'-f', $dump, '-d', $node->connstr('dst')
	],
	'the dump restores into a fresh database without error');
check_all('dst', 'after restore');
is(shapes('dst'), $before, 'restored indexes have the options and shapes of the originals');

# ALTER INDEX ... SET refuses every set that CREATE INDEX refuses, with
# SQLSTATE 22023, and leaves the options as they were
my $refused_ok = 0;
my @wrong;
for my $layout (@layouts)
{
	for my $set (@refused)
	{
		my $table = "od_0_${layout}_c";
		my ($ret, $stdout, $stderr) = $node->psql('src',
			"\\set VERBOSITY verbose\nALTER INDEX ${table}_bx SET ($set);");
		my $with = $set =~ /layout/ || $layout eq 'default' ? $set : "$set, " . layout_opt($layout);
		my ($ret2, $stdout2, $stderr2) = $node->psql('src',
			"\\set VERBOSITY verbose\nCREATE INDEX od_refused ON $table USING bloomidx (i, t) WITH ($with);");
		if ($ret != 0 && $stderr =~ /ERROR:  22023:/
			&& $ret2 != 0 && $stderr2 =~ /ERROR:  22023:/)
		{
			$refused_ok++;
		}
		else
		{
			push @wrong, "$layout: $set: $stderr / $stderr2";
		}
	}
}
is($refused_ok, scalar(@refused) * scalar(@layouts),
	'ALTER INDEX ... SET and CREATE INDEX refuse the same sets with 22023')
  or diag(join("\n", @wrong));
is(shapes('src'), $before, 'refused ALTER INDEX ... SET changed no option');

$node->stop;
done_testing();
