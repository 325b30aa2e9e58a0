
# Copyright and license: see the project's LICENSE.

# What pg_stat_progress_create_index shows of a bloomidx build, in both
# layouts: the sub-phase's name, tuples_total from the table's estimated
# size, tuples_done, serial and parallel (every participant's rows).  The
# build is held at a known row: an operator class whose hash function waits
# for an advisory lock on one value.

use strict;
use warnings;

use FindBin;
use lib $FindBin::RealBin;

use PostgreSQL::Test::Cluster;
use PostgreSQL::Test::Utils;
use Test::More;
use BloomidxTest;

my $node = PostgreSQL::Test::Cluster->new('progress');
$node->init;
$node->start;

# Value -1, in row 50000 of 100000, waits for advisory lock 4242
$node->safe_psql(
	'postgres', q{
CREATE EXTENSION bloomidx;
CREATE FUNCTION held_hash(v int4, seed int8) RETURNS int8
LANGUAGE plpgsql IMMUTABLE AS $$
BEGIN
	IF v = -1 THEN
		PERFORM pg_advisory_xact_lock_shared(4242);
	END IF;
	RETURN hashint4extended(v, seed);
END;
$$;
CREATE OPERATOR CLASS int4_held_ops FOR TYPE int4 USING bloomidx AS
	OPERATOR	1	=(int4, int4),
	FUNCTION	1	held_hash(int4, int8);
CREATE TABLE pr (a int4, b text);
INSERT INTO pr
	SELECT CASE WHEN g = 50000 THEN -1 ELSE g % 1000 END, 'x' || (g % 77)
	FROM generate_series(1, 100000) g;
VACUUM ANALYZE pr;
});

# The index pr_bx, built by CREATE INDEX ($how): it answers as a seq scan
# and has the layout asked for; then it is dropped.
sub check_built_and_drop
{
	my ($layout, $how) = @_;

	is( $node->safe_psql(
			'postgres', q{
SET enable_seqscan = off;
SELECT count(*) FROM pr WHERE a = 7 AND b = 'x7';
}),
		$node->safe_psql(
			'postgres', q{
SET enable_bitmapscan = off;
SELECT count(*) FROM pr WHERE a = 7 AND b = 'x7';
}),
		"$layout layout: the index $how answers as a seq scan");
	is($node->safe_psql('postgres', "SELECT layout FROM bloomidx_stats('pr_bx')"),
		$layout, "$layout layout $how");
	$node->safe_psql('postgres', 'DROP INDEX pr_bx');
	return;
}

for my $layout ('row', 'sliced')
{
	my $holder = $node->background_psql('postgres');
	$holder->query_safe('SELECT pg_advisory_lock(4242)');

	my $builder = $node->background_psql('postgres');
	$builder->query_until(
		qr/building/, qq{
SET max_parallel_maintenance_workers = 0;
\\echo building
CREATE INDEX pr_bx ON pr USING bloomidx (a int4_held_ops, b) WITH (layout = '$layout');
});
	$node->poll_query_until('postgres',
		"SELECT count(*) = 1 FROM pg_locks WHERE locktype = 'advisory' AND NOT granted")
	  or die "the build did not reach the held row";

	# 49999 rows are in; tuples_done moves every 1024 rows
	is( $node->safe_psql(
			'postgres', q{
SELECT command, phase, tuples_total, tuples_done
FROM pg_stat_progress_create_index WHERE relid = 'pr'::regclass}),
		'CREATE INDEX|building index: scanning table|100000|49152',
		"$layout layout: sub-phase, tuples_total and tuples_done while the table is scanned");

	$holder->query_safe('SELECT pg_advisory_unlock(4242)');
	$builder->query_safe('SELECT 1');    # after CREATE INDEX has finished
	$builder->quit;
	$holder->quit;

	check_built_and_drop($layout, 'built');
}

# Once built, tuples_done counts every row, serially (the last batch of
# fewer than 1024 rows too) and in parallel (every participant's rows):
# CREATE INDEX CONCURRENTLY, serial or with two workers, held at the row
# of -1 (in whichever participant reads it) until another session holds a
# writer's lock on the table, then waits for that writer after the build,
# where pg_stat_progress_create_index still shows the build's tuples_done:
# all of the table's rows.
$node->safe_psql('postgres', 'ALTER TABLE pr SET (parallel_workers = 2)');
for my $workers (0, 2)
{
for my $layout ('row', 'sliced')
{
	my $how = $workers ? 'a parallel build' : 'a serial build';
	my $holder = $node->background_psql('postgres');
	$holder->query_safe('SELECT pg_advisory_lock(4242)');

	my $log_offset = -s $node->logfile;
	my $builder = $node->background_psql('postgres');
	my $builder_pid = $builder->query_safe('SELECT pg_backend_pid()');
	$builder->query_until(
		qr/building/, qq{
SET max_parallel_maintenance_workers = $workers;
SET log_min_messages = debug2;
\\echo building
CREATE INDEX CONCURRENTLY pr_bx ON pr USING bloomidx (a int4_held_ops, b) WITH (layout = '$layout');
});
	$node->poll_query_until('postgres',
		"SELECT count(*) = 1 FROM pg_locks WHERE locktype = 'advisory' AND NOT granted")
	  or die "the build did not reach the held row";

	my $writer = $node->background_psql('postgres');
	$writer->query_safe('BEGIN');
	$writer->query_safe('LOCK TABLE pr IN ROW EXCLUSIVE MODE');
	$holder->query_safe('SELECT pg_advisory_unlock(4242)');

	$node->poll_query_until('postgres',
		"SELECT phase = 'waiting for writers before validation' FROM pg_stat_progress_create_index WHERE pid = $builder_pid")
	  or die "the build did not reach the wait for writers";
	is( $node->safe_psql(
			'postgres', qq{
SELECT tuples_total, tuples_done
FROM pg_stat_progress_create_index WHERE pid = $builder_pid}),
		'100000|100000',
		"$layout layout: $how's tuples_done counts every row");
	ok( $node->log_contains(
			qr/parallel workers launched: 2/, $log_offset),
		"$layout layout: the build had two workers") if $workers;

	$writer->query_safe('COMMIT');
	$builder->query_safe('SELECT 1');    # after CREATE INDEX has finished
	$builder->query_safe('RESET log_min_messages');
	$builder->quit;
	$writer->quit;
	$holder->quit;

	check_built_and_drop($layout, $workers ? 'built in parallel' : 'built serially, concurrently');
}
}

# The names of the sub-phases
is( $node->safe_psql(
		'postgres', q{
SELECT string_agg(n || '=' || coalesce(pg_indexam_progress_phasename(
		(SELECT oid FROM pg_am WHERE amname = 'bloomidx'), n), '-'), ', ' ORDER BY n)
FROM generate_series(1, 5) n}),
	'1=initializing, 2=scanning table, 3=combining parallel results, 4=WAL-logging index, 5=-',
	'sub-phase names');

$node->stop;
done_testing();
