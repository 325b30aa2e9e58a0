
# Copyright and license: see the project's LICENSE.

# What pg_stat_progress_create_index shows of a bloomidx build, in both
# layouts: the sub-phase's name, tuples_total from the table's estimated
# size, tuples_done.  The build is held at a known row: an operator class
# whose hash function waits for an advisory lock on one value.

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
		"$layout layout: the index built answers as a seq scan");
	is($node->safe_psql('postgres', "SELECT layout FROM bloomidx_stats('pr_bx')"),
		$layout, "$layout layout built");
	$node->safe_psql('postgres', 'DROP INDEX pr_bx');
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
