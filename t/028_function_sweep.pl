
# Copyright and license: see the project's LICENSE.

# Every SQL-callable function of bloomidx with extreme arguments, as a role
# with no privilege beyond SELECT on a table (and a schema of its own),
# under statement_timeout = 1s: each statement returns, fails with a
# proper SQLSTATE, or is cancelled (57014).  Never XX000, never a crashed
# backend, never a statement that outlives its timeout by more than the
# psql call's own limit (a hang).  Statements whose loops run long by
# design (aggregates over 10^8 rows, probes of 10^7-element arrays, texts
# of 100 MB) must be the ones cancelled.  Functions that take internal
# arguments (support and aggregate state functions) cannot be called from
# SQL; they run here through the operators, indexes and aggregates that
# call them.  sql/function_bounds.sql shows the values and messages.

use strict;
use warnings;

use FindBin;
use lib $FindBin::RealBin;

use PostgreSQL::Test::Cluster;
use PostgreSQL::Test::Utils;
use Test::More;

my $node = PostgreSQL::Test::Cluster->new('sweep');
$node->init;
$node->append_conf('postgresql.conf', "autovacuum = off\n");
$node->start;

$node->safe_psql('postgres', q{
CREATE EXTENSION bloomidx;
CREATE ROLE sweeper LOGIN;
CREATE TABLE sw (a int, s text, arr int[]);
INSERT INTO sw SELECT i, 'word' || i, ARRAY[i, i + 1] FROM generate_series(1, 5000) i;
CREATE INDEX sw_idx ON sw USING bloomidx (a, s text_trgm_ops, arr);
CREATE INDEX sw_long ON sw USING bloomidx (s text_trgm_ops) WITH (layout = 'row', length = 4096);
ANALYZE sw;
GRANT SELECT ON sw TO sweeper;
CREATE SCHEMA AUTHORIZATION sweeper;
SET ROLE sweeper;
CREATE TABLE sweeper.mine (a int, s text, arr int[], j jsonb);
INSERT INTO sweeper.mine SELECT i, 'word' || i, ARRAY[i], jsonb_build_object('k', i) FROM generate_series(1, 1000) i;
CREATE INDEX mine_row ON sweeper.mine USING bloomidx (a, s text_trgm_ops, arr, j) WITH (layout = 'row');
CREATE INDEX mine_sliced ON sweeper.mine USING bloomidx (s text_trgm_ops, arr, j) WITH (layout = 'sliced');
});

my $key = q{decode(repeat('ab', 16), 'hex')};
my $big = 'bloom_empty_raw(2147483648, 7)';    # 256 MB, the largest

# [statement, 'cancel' if it must be cancelled]; any other outcome but
# XX000, a crash or a hang passes
my @cases = (
	# input and output, casts
	[q{SELECT ''::bloomfilter}],
	[q{SELECT ('\x' || repeat('00', 50000000))::bloomfilter}],
	[q{SELECT length(repeat('x', 100000000)::bloomfilter::bytea)}],
	[qq{SELECT length($big\::text)}],
	[q{SELECT bloomfilter(''::bytea)}],
	[qq{SELECT length(bloomfilter(bloomfilter_send($big))::bytea)}],
	# constructors
	[q{SELECT bloom_empty_raw(0, 1)}],
	[q{SELECT bloom_empty_raw(-9223372036854775808, -2147483648)}],
	[q{SELECT bloom_empty_raw(9223372036854775807, 2147483647)}],
	[q{SELECT length(bloom_empty_raw(2147483648, 64)::bytea)}],
	[q{SELECT bloom_empty(-1, 'NaN', -2147483648, true, true)}],
	[q{SELECT bloom_empty(9223372036854775807, 'Infinity', 2147483647)}],
	[q{SELECT bloom_empty(1000, 5e-324)}],
	[q{SELECT bloom_empty(1, 1e-300, 16)}],
	[q{SELECT bloom_empty(2147483647, 0.01, 0, true)}],
	[q{SELECT bloom_empty(1000, 1e-300, 0, false, true)}],
	[qq{SELECT bloom_empty(1000, 0.01, ''::bytea)}],
	[q{SELECT bloom_empty(1000, 0.01, decode(repeat('ab', 100000000), 'hex'))}],
	# adding, probing, removing
	[q{SELECT bloom_add(bloom_empty_raw(64, 64), repeat('x', 100000000))}],
	[q{SELECT bloom_add(bloom_empty(1000), array_fill(1, ARRAY[10000000]))}],
	[q{SELECT bloom_add(bloom_empty(1000), ROW(1, repeat('x', 100000000)))}],
	[qq{SELECT bloom_add(bloom_empty(1000, 0.01, $key), 1, decode(repeat('ab', 100000000), 'hex'))}],
	[q{SELECT bloom_contains(bloom_empty(1000), repeat('x', 100000000))}],
	[q{SELECT cardinality(bloom_contains(bloom_empty_raw(64, 64), array_fill(1, ARRAY[10000000])))}],
	[q{SELECT cardinality(bloom_contains(bloom_empty(1000), array_fill(1, ARRAY[3000, 3000])))}],
	[q{SELECT bloom_contains_any(bloom_empty(1000), array_fill(1, ARRAY[10000000]))}],
	[q{SELECT bloom_contains_all(bloom_add(bloom_empty(1000), 1), array_fill(1, ARRAY[10000000]))}],
	[q{SELECT bloom_contains_any(bloom_empty(1000), array_fill(repeat('x', 10000), ARRAY[100000]))}],
	[qq{SELECT cardinality(bloom_contains(bloom_empty(1000, 0.01, $key), array_fill(1, ARRAY[10000000]), $key))}],
	[qq{SELECT bloom_contains_any(bloom_empty(1000, 0.01, $key), array_fill(1, ARRAY[10000000]), $key)}],
	[qq{SELECT bloom_contains_all(bloom_add(bloom_empty(1000, 0.01, $key), 1, $key), array_fill(1, ARRAY[10000000]), $key)}],
	[q{SELECT bloom_contains_all(bloom_empty(100000, 0.01, 4), array_fill(1, ARRAY[10000000]))}],
	[q{SELECT bloom_contains_all(bloom_empty(100000, 0.01, 0, false, true), array_fill(1, ARRAY[10000000]))}],
	[q{SELECT bloom_contains_all(bloom_empty(100000, 0.01, 0, true), array_fill(1, ARRAY[10000000]))}],
	[q{SELECT bloom_remove(bloom_empty(1000, 0.01, 0, true), repeat('x', 100000000))}],
	[q{SELECT bloom_remove(bloom_empty(1000, 0.01, 0, true), array_fill(1, ARRAY[10000000]))}],
	# whole-filter operations on the largest filter
	[qq{SELECT length(bloom_union($big, $big)::bytea)}],
	[qq{SELECT length(bloom_intersect($big, $big)::bytea)}],
	[qq{SELECT bloom_cardinality($big)}],
	[qq{SELECT (bloom_info($big)).nbits}],
	[qq{SELECT $big = $big, $big < $big}],
	[qq{SELECT bloomfilter_cmp($big, $big)}],
	[qq{SELECT bloomfilter_hash($big), bloomfilter_hash_extended($big, -9223372036854775808)}],
	[qq{SELECT length(bloom_fold($big, 2)::bytea)}],
	[q{SELECT bloom_fold(bloom_empty_raw(1024, 3), -2147483648)}],
	[q{SELECT bloom_fold(bloom_empty_raw(1024, 3), 2147483647)}],
	[q{SELECT length(bloom_plain(bloom_empty(50000000, 0.01, 0, true))::bytea)}],
	# aggregates (their state functions, combine, serial functions)
	[q{SELECT bloom_agg(i) IS NULL FROM generate_series(1, 100000000) i}, 'cancel'],
	[q{SELECT bloom_agg(i, 1000, 0.01) IS NULL FROM generate_series(1, 100000000) i}, 'cancel'],
	[q{SELECT bloom_agg(i, 1, 1e-300, 16) IS NULL FROM generate_series(1, 100000000) i}, 'cancel'],
	[q{SELECT bloom_agg(i, bloom_empty_raw(64, 64)) IS NULL FROM generate_series(1, 100000000) i}, 'cancel'],
	[qq{SELECT bloom_agg(i, bloom_empty(1000, 0.01, $key), $key) IS NULL FROM generate_series(1, 100000000) i}, 'cancel'],
	[q{SELECT bloom_agg(i::text || repeat('y', 1000)) IS NULL FROM generate_series(1, 10000000) i}, 'cancel'],
	[q{SELECT count(*) FROM (SELECT bloom_agg(i) FROM generate_series(1, 30000000) i GROUP BY i % 100000) s}, 'cancel'],
	[q{SELECT bloom_union_agg(f) IS NULL FROM (SELECT bloom_empty(1000) f FROM generate_series(1, 100000000)) s}, 'cancel'],
	[qq{SELECT bloom_union_agg(f) IS NULL FROM (SELECT $big f FROM generate_series(1, 20)) s}],
	[q{SELECT bloom_agg(i, -1, 'NaN') FROM generate_series(1, 3) i}],
	[q{SELECT bloom_agg(i, 1000, 0.01, -2147483648) FROM generate_series(1, 3) i}],
	[q{SELECT bloom_agg(i, NULL::bloomfilter) FROM generate_series(1, 3) i}],
	[q{SELECT bloom_agg(repeat('x', 100000000))}],
	# the index's functions
	[q{SELECT * FROM bloomidx_estimate('sw_idx', '{s}', 2147483647)}],
	[q{SELECT * FROM bloomidx_estimate('sw_idx', '{s,arr}', 715827883)}],
	[q{SELECT * FROM bloomidx_estimate('sw_long', '{s}', 2147483647)}],
	[q{SELECT * FROM bloomidx_estimate('sw_idx', '{s}', -2147483648)}],
	[q{SELECT * FROM bloomidx_estimate('sw_idx', array_fill('zz'::text, ARRAY[10000000]))}],
	[q{SELECT * FROM bloomidx_estimate('sw_idx', ARRAY[repeat('x', 100000000)])}],
	[q{SELECT * FROM bloomidx_estimate(0, '{a}')}],
	[q{SELECT * FROM bloomidx_stats(0)}],
	[q{SELECT bloomidx_check(4294967295)}],
	[q{SELECT bloomidx_merge(0)}],
	[q{SELECT bloomidx_merge('sw_idx')}],
	# the operator classes' support functions, through the role's indexes
	[q{INSERT INTO mine (s) VALUES (repeat('x', 100000000))}],
	[q{INSERT INTO mine (s) SELECT string_agg(chr(32 + (i * 7919) % 90), '') FROM generate_series(1, 10000000) i}],
	[q{INSERT INTO mine (arr) SELECT array_agg(i) FROM generate_series(1, 10000000) i}],
	[q{INSERT INTO mine (j) SELECT jsonb_object_agg(i::text, i) FROM generate_series(1, 2000000) i}],
	[q{SELECT count(*) FROM mine WHERE s LIKE '%' || repeat('ab', 50000000) || '%'}],
	[q{SELECT count(*) FROM mine WHERE s ILIKE (SELECT string_agg(chr(32 + (i * 7919) % 90), '') FROM generate_series(1, 10000000) i)}],
	[q{SELECT count(*) FROM mine WHERE s = repeat('x', 100000000)}],
	[q{SELECT count(*) FROM mine WHERE arr @> (SELECT array_agg(i) FROM generate_series(1, 10000000) i)}],
	[q{SELECT count(*) FROM mine WHERE arr && (SELECT array_agg(i) FROM generate_series(1, 10000000) i)}],
	[q{SELECT count(*) FROM mine WHERE j @> (SELECT jsonb_agg(i) FROM generate_series(1, 3000000) i)}],
	[q{SELECT count(*) FROM mine WHERE a = ANY (ARRAY(SELECT generate_series(1, 10000000)))}],
);

my $log_offset = -s $node->logfile;
for my $case (@cases)
{
	my ($sql, $must) = @$case;
	my ($ret, $stdout, $stderr, $timed_out);
	$ret = $node->psql(
		'postgres',
		"\\set VERBOSITY verbose\n"
		  . "SET ROLE sweeper; SET search_path = sweeper, public;\n"
		  . "SET enable_seqscan = off; SET statement_timeout = '1s';\n$sql",
		stdout => \$stdout,
		stderr => \$stderr,
		timeout => 180,
		timed_out => \$timed_out);
	my ($state) = $stderr =~ /ERROR:  ([0-9A-Z]{5}):/;
	$state //= $ret == 0 ? 'ok' : "psql exit $ret";
	note("$state: $sql");
	ok(!$timed_out, "ends: $sql");
	isnt($state, 'XX000', "no internal error: $sql") or diag($stderr);
	unlike($stderr, qr/server closed the connection|terminating connection/,
		"no crash: $sql");
	is($state, '57014', "cancelled: $sql") if defined $must;
}

ok(!$node->log_contains(qr/terminated by signal|server process .* was terminated/, $log_offset),
	'no backend crashed');
is($node->safe_psql('postgres', 'SELECT 1'), '1', 'the server is up');

$node->stop;
done_testing();
