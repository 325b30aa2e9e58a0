
# Copyright and license: see the project's LICENSE.

=pod

=head1 NAME

BloomidxTest - shared helpers of bloomidx's TAP tests (t/NNN_*.pl)

=head1 SYNOPSIS

  use FindBin;
  use lib $FindBin::RealBin;
  use BloomidxTest;

  $node->safe_psql('postgres', bx_schema_sql('t'));
  $node->safe_psql('postgres', bx_fill_sql('t', 1, 5000));
  my $answers = bx_check_answers($node, 't', 'after load');

=head1 DESCRIPTION

A test table of several column types (int, text, uuid, numeric, bigint,
date, with NULLs) whose values are arithmetic on the row id, two bloomidx
indexes over it (named *_bx), and the check every test makes: each query of
a fixed list returns the same rows through a bloomidx bitmap scan
(enable_seqscan off) as through a sequential scan (enable_indexscan and
enable_bitmapscan off), and the plan really used a bloomidx index.

=cut

package BloomidxTest;

use strict;
use warnings;

use Exporter 'import';
use PostgreSQL::Test::Utils;
use Test::More;

our @EXPORT = qw(bx_schema_sql bx_insert_sql bx_fill_sql bx_conditions bx_answers
  bx_answers_sql bx_parse_answers
  bx_check_answers bx_compare_nodes bx_disagreement bx_patched bx_write_image bx_corruption_case
  bx_filter_key bx_filter_variants_sql);

# The conditions every check runs, on table columns i, t, u, n, b, d
my @conditions = (
	"i = 3",
	"t = 'b5'",
	"u = md5('7')::uuid",
	"n = 1.5",
	"b = 123",
	"d = date '2024-01-05'",
	"i = 3 AND t = 'b3'",
	"i = 4 AND u = md5('54')::uuid AND n = 1.75",
	"i = ANY ('{1, 2, 49}')",
	"t IS NULL",
	"n IS NULL AND i = 4",
	"t = 'b7' AND n = 3.75",
	"b = ANY ('{5, 505, 999}') AND d = date '2024-01-06'",
	"i = 1000",
);

=pod

=over

=item bx_schema_sql($table [, unlogged => 1] [, layout => 'sliced'])

SQL creating the extension (if needed), table $table (unlogged if asked),
its primary key, its two bloomidx indexes ${table}_bx (all six columns,
default options) and ${table}_tn_bx (t and n, contrib/bloom-style length
and colN), both in the given layout (default: row), and the function
bx_result(query, use_index) the checks call.

=cut

sub bx_schema_sql
{
	my ($table, %opts) = @_;
	my $kind = $opts{unlogged} ? 'UNLOGGED TABLE' : 'TABLE';
	my $layout = $opts{layout} // 'row';

	return qq{
CREATE EXTENSION IF NOT EXISTS bloomidx;
CREATE $kind $table (
	id bigint PRIMARY KEY,
	i int, t text, u uuid, n numeric, b bigint, d date,
	note text);
CREATE INDEX ${table}_bx ON $table USING bloomidx (i, t, u, n, b, d)
	WITH (layout = '$layout');
CREATE INDEX ${table}_tn_bx ON $table USING bloomidx (t, n)
	WITH (layout = '$layout', length = 80, col1 = 3, col2 = 3);
CREATE OR REPLACE FUNCTION bx_result(q text, use_index boolean) RETURNS text
LANGUAGE plpgsql AS \$fn\$
DECLARE
	line text;
	plan text := '';
	result text;
BEGIN
	PERFORM set_config('enable_seqscan', CASE WHEN use_index THEN 'off' ELSE 'on' END, true);
	PERFORM set_config('enable_bitmapscan', CASE WHEN use_index THEN 'on' ELSE 'off' END, true);
	PERFORM set_config('enable_indexscan', CASE WHEN use_index THEN 'on' ELSE 'off' END, true);
	FOR line IN EXECUTE 'EXPLAIN (COSTS OFF) ' || q LOOP
		plan := plan || line || ' ';
	END LOOP;
	IF use_index AND plan !~ 'Bitmap Index Scan on \\w+_bx ' THEN
		RETURN 'no bloomidx scan: ' || plan;
	ELSIF NOT use_index AND plan !~ 'Seq Scan' THEN
		RETURN 'no seq scan: ' || plan;
	END IF;
	EXECUTE 'SELECT count(*) || '' rows '' || coalesce(md5(string_agg(id::text, '','' ORDER BY id)), '''') FROM ('
		|| q || ') s' INTO result;
	RETURN result;
END;
\$fn\$;
};
}

=pod

=item bx_insert_sql($table, $ids)

SQL inserting one row for each id g that $ids, a FROM item, yields: every
value is arithmetic on the id, with NULLs in t and n.

=cut

sub bx_insert_sql
{
	my ($table, $ids) = @_;

	return qq{
INSERT INTO $table (id, i, t, u, n, b, d)
SELECT g, g % 50,
	CASE WHEN g % 17 = 0 THEN NULL ELSE 'b' || (g % 23) END,
	md5((g % 100)::text)::uuid,
	CASE WHEN g % 13 = 0 THEN NULL ELSE (g % 40) / 8.0 END,
	g % 1000,
	date '2024-01-01' + (g % 60)::int
FROM $ids;
};
}

=pod

=item bx_fill_sql($table, $from, $to)

SQL inserting rows $from .. $to (bx_insert_sql).

=cut

sub bx_fill_sql
{
	my ($table, $from, $to) = @_;

	return bx_insert_sql($table, "generate_series($from, $to) g");
}

=pod

=item bx_conditions()

The list of WHERE conditions the checks run.

=item bx_answers($node, $table [, $dbname])

Runs every condition on $table both ways, in one psql session; returns a
list of [condition, answer through the index, answer by seq scan].  An
answer is "N rows <md5 of the sorted ids>", or a note that the plan did
not use the expected scan.

=item bx_answers_sql($table)

The SQL that bx_answers runs: one output line per condition.  To take the
answers within a longer session, end its script with this SQL and give the
last lines of its output to bx_parse_answers.

=item bx_parse_answers($output)

The answers (as bx_answers returns them) in the last lines of $output.

=cut

sub bx_conditions { return @conditions; }

sub bx_answers_sql
{
	my ($table) = @_;

	my @selects;
	foreach my $cond (@conditions)
	{
		my $q = "SELECT id FROM $table WHERE $cond";
		push @selects,
		  "SELECT bx_result(\$q\$$q\$q\$, true) || '|' || bx_result(\$q\$$q\$q\$, false);";
	}
	return join("\n", @selects) . "\n";
}

sub bx_answers
{
	my ($node, $table, $dbname) = @_;
	$dbname //= 'postgres';

	my $out = $node->safe_psql($dbname, bx_answers_sql($table));
	my @lines = split /\n/, $out;
	die "expected " . scalar(@conditions) . " answers, got " . scalar(@lines)
	  unless @lines == @conditions;
	return bx_parse_answers($out);
}

sub bx_parse_answers
{
	my ($out) = @_;
	my @lines = split /\n/, $out;
	die "expected at least " . scalar(@conditions) . " answers, got " . scalar(@lines)
	  unless @lines >= @conditions;
	@lines = @lines[ $#lines - $#conditions .. $#lines ];

	my @answers;
	for my $k (0 .. $#conditions)
	{
		my ($by_index, $by_seqscan) = split /\|/, $lines[$k], 2;
		push @answers, [ $conditions[$k], $by_index, $by_seqscan ];
	}
	return @answers;
}

=pod

=item bx_check_answers($node, $table, $label [, $dbname])

One test per condition: the answer through the index equals the seq
scan's.  Returns the answers (see bx_answers).

=cut

sub bx_check_answers
{
	my ($node, $table, $label, $dbname) = @_;
	local $Test::Builder::Level = $Test::Builder::Level + 1;

	my @answers = bx_answers($node, $table, $dbname);
	foreach my $a (@answers)
	{
		is($a->[1], $a->[2], "$label: index = seq scan for $a->[0]");
	}
	return @answers;
}

=pod

=item bx_compare_nodes($label, \@answers1, \@answers2)

One test per condition: two nodes' answers (from bx_answers) agree.

=back

=cut

sub bx_compare_nodes
{
	my ($label, $answers1, $answers2) = @_;
	local $Test::Builder::Level = $Test::Builder::Level + 1;

	for my $k (0 .. $#$answers1)
	{
		is($answers2->[$k][1], $answers1->[$k][1],
			"$label: same answer on both nodes for $answers1->[$k][0]");
	}
	return;
}

# '' if each condition of @$conds on $table of $node gives through a
# bitmap scan the count and sum of ids a seq scan gives; else what differs
# (for the crash tests, which go on after a difference to count them)
sub bx_disagreement
{
	my ($node, $table, $conds, $label) = @_;
	for my $cond (@$conds)
	{
		my $q = "SELECT count(*), coalesce(sum(id), 0) FROM $table WHERE $cond";
		my $by_index = $node->safe_psql('postgres',
			"SET enable_seqscan = off; SET enable_indexscan = off; $q");
		my $by_seqscan = $node->safe_psql('postgres',
			"SET enable_bitmapscan = off; SET enable_indexscan = off; $q");
		return "$label: $cond gives $by_index through the index, $by_seqscan by a seq scan"
		  if $by_index ne $by_seqscan;
	}
	return '';
}

# A copy of index file image $image with block $blkno's bytes at $offset
# overwritten by $bytes, for pages of $blcksz bytes
sub bx_patched
{
	my ($image, $blcksz, $blkno, $offset, $bytes) = @_;
	substr($image, $blkno * $blcksz + $offset, length($bytes), $bytes);
	return $image;
}

# Write $image as the whole of file $file (an index file of a stopped node)
sub bx_write_image
{
	my ($file, $image) = @_;
	open(my $fh, '>', $file) or die "cannot write $file: $!";
	binmode $fh;
	print $fh $image;
	close $fh;
	return;
}

# One corruption case of a stopped $node: write $image as $index's $file,
# start, run bloomidx_check (with heapallindexed if asked) and compare its
# error with $expected (a regex, or '' for none), run $scan (an index
# scan), which must fail with $scan_expected when that regex is given, run
# the statements of $statements (see below), check that the server is up
# and no backend crashed, and stop.
sub bx_corruption_case
{
	my (%c) = @_;
	my $node = $c{node};

	bx_write_image($c{file}, $c{image});

	my $log_offset = -s $node->logfile;
	$node->start;

	my ($ret, $stdout, $stderr) = $node->psql('postgres',
		"\\set VERBOSITY verbose\nSELECT bloomidx_check('$c{index}', $c{heapallindexed});");
	if ($c{expected} eq '')
	{
		is($ret, 0, "$c{name}: bloomidx_check passes");
	}
	else
	{
		like($stderr, $c{expected}, "$c{name}: bloomidx_check reports it");
	}

	# An index scan errors out or answers: it does not crash the server
	($ret, $stdout, $stderr) = $node->psql('postgres',
		"\\set VERBOSITY verbose\nSET enable_seqscan = off; $c{scan}");
	like($stderr, $c{scan_expected}, "$c{name}: an index scan reports it")
	  if defined $c{scan_expected};
	is($node->safe_psql('postgres', 'SELECT 1'), '1',
		"$c{name}: the server is up after an index scan");

	# More statements, each [SQL, expected error regex or '' for none],
	# under a statement_timeout: an error, not a hang
	for my $st (@{ $c{statements} // [] })
	{
		my ($sql, $re) = @$st;
		($ret, $stdout, $stderr) = $node->psql('postgres',
			"\\set VERBOSITY verbose\nSET statement_timeout = '20s';\n$sql",
			timeout => 60);
		if ($re eq '')
		{
			is($ret, 0, "$c{name}: $sql succeeds") or diag($stderr);
		}
		else
		{
			like($stderr, $re, "$c{name}: $sql reports it");
		}
		unlike($stderr, qr/57014/, "$c{name}: $sql does not hang");
	}
	ok(!$node->log_contains(qr/terminated by signal|server process .* was terminated/, $log_offset),
		"$c{name}: no backend crashed");

	$node->stop;
	return;
}

=pod

=over

=item bx_filter_key()

The SipHash key of the keyed filters of bx_filter_variants_sql, as SQL.

=item bx_filter_variants_sql(@kinds)

The filters of every variant over the integers 1 to 500, for the tests
that carry filters across a dump or an upgrade (t/016_filter_dump.pl,
upgrade/001_pg_upgrade.pl): a list of VALUES rows, each ('name',
[ 'kind', ] filter), with a kind column if @kinds is given ('int' for the
plain ones, 'int keyed' for the keyed one).

=back

=cut

my $filter_key = q{'\x000102030405060708090a0b0c0d0e0f'::bytea};

sub bx_filter_key { return $filter_key; }

sub bx_filter_variants_sql
{
	my ($with_kind) = @_;
	my @variants = (
		[ 'plain', 'int', 'SELECT bloom_agg(i, 1000, 0.01) FROM generate_series(1, 500) i' ],
		[ 'sized for distinct', 'int', 'SELECT bloom_agg(i) FROM generate_series(1, 500) i' ],
		[ 'growing', 'int', 'SELECT bloom_agg(i, 50, 0.01, 2) FROM generate_series(1, 500) i' ],
		[ 'counting', 'int',
		  'SELECT bloom_agg(i, bloom_empty(1000, 0.01, counting => true)) FROM generate_series(1, 500) i' ],
		[ 'blocked', 'int',
		  'SELECT bloom_agg(i, bloom_empty(1000, 0.01, blocked => true)) FROM generate_series(1, 500) i' ],
		[ 'keyed', 'int keyed',
		  "SELECT bloom_agg(i, bloom_empty(1000, 0.01, key => $filter_key), $filter_key) FROM generate_series(1, 500) i" ],
		[ 'folded', 'int',
		  'SELECT bloom_fold((SELECT bloom_agg(i, bloom_empty_raw(65536, 7)) FROM generate_series(1, 500) i), 4)' ]);
	return join(",\n",
		map { "\t('$_->[0]', " . ($with_kind ? "'$_->[1]', " : '') . "($_->[2]))" } @variants);
}

1;
