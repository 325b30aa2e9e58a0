# Copyright and license: see the project's LICENSE.

# The operator classes of sets (text_trgm_ops, array_elem_ops,
# jsonb_path_ops) keep bloomidx's guarantees, in both layouts: a streaming
# standby answers as the primary after a build, inserts, deletes, merges
# and VACUUM; a crash in the middle of inserts recovers to an index that
# bloomidx_check(heapallindexed) passes and that answers as a seq scan; a
# parallel build holds the signatures of a serial one; pg_dump and
# pg_restore carry the indexes, their operator class options included.

use strict;
use warnings;

use FindBin;
use lib $FindBin::RealBin;

use IPC::Run;
use PostgreSQL::Test::Cluster;
use PostgreSQL::Test::Utils;
use Test::More;

my $primary = PostgreSQL::Test::Cluster->new('primary');
$primary->init(allows_streaming => 1);
$primary->append_conf('postgresql.conf', "autovacuum = off\nmax_parallel_maintenance_workers = 2");
$primary->start;
$primary->backup('backup');

my $standby = PostgreSQL::Test::Cluster->new('standby');
$standby->init_from_backup($primary, 'backup', has_streaming => 1);
$standby->start;

my @conditions = (
	q{s LIKE '%libssl%'}, q{s ILIKE '%LIBSSL.so%'}, q{s LIKE 'usr/share/%' AND sec = 3},
	q{s LIKE '%é日本%'}, q{s = 'usr/lib/libssl-42.so'}, q{s LIKE '%xyzzy%'},
	q{tags @> '{t3}'}, q{tags @> '{t3,u1}'}, q{tags && '{t3,t9}'}, q{tags && '{}'},
	q{tags @> '{NULL}'}, q{doc @> '{"k": 4}'}, q{doc @> '{"o": {"p": [2]}}'},
	q{doc @> '{"k": 4, "b": true}'}, q{doc @> '{}'});

# Count and checksum of the ids a condition selects, through the index
# (forced) or by a seq scan
my $setup = q{
CREATE EXTENSION bloomidx;
CREATE FUNCTION sx(cond text, by_index boolean) RETURNS text LANGUAGE plpgsql AS $$
DECLARE r text;
BEGIN
	EXECUTE format('SET LOCAL enable_seqscan = %s', NOT by_index);
	EXECUTE format('SET LOCAL enable_bitmapscan = %s', by_index);
	SET LOCAL enable_indexscan = off;
	EXECUTE 'SELECT count(*) || '':'' || coalesce(sum(hashint4(id)::int8), 0) FROM sx_t WHERE ' || cond INTO r;
	RETURN r;
END $$;
CREATE FUNCTION sx_rows(n int, first int) RETURNS TABLE (id int, sec int, s text, tags text[], doc jsonb)
LANGUAGE sql AS $$
	SELECT i, i % 7,
		CASE WHEN i % 50 = 0 THEN NULL
			 ELSE (ARRAY['usr/lib/libssl-', 'usr/share/doc/', 'é日本/', 'opt/LibSSL.so.'])[1 + i % 4] || i || '.so'
		END,
		CASE WHEN i % 40 = 0 THEN NULL ELSE ARRAY['t' || i % 10, 'u' || i % 3, NULL] END,
		CASE WHEN i % 30 = 0 THEN NULL
			 ELSE jsonb_build_object('k', i % 9, 'b', i % 2 = 0, 'o', jsonb_build_object('p', jsonb_build_array(i % 5)))
		END
	FROM generate_series(first, first + n - 1) i
$$;
CREATE TABLE sx_t (id int, sec int, s text, tags text[], doc jsonb);
INSERT INTO sx_t SELECT * FROM sx_rows(20000, 1);
};
$primary->safe_psql('postgres', $setup);

sub answers
{
	my ($node, $by_index) = @_;
	my $sql = join("\n",
		map { "SELECT sx(\$c\$$_\$c\$, " . ($by_index ? 'true' : 'false') . ");" } @conditions);
	return [ split /\n/, $node->safe_psql('postgres', $sql) ];
}

# Index = seq scan on the primary, the standby's index = the primary's,
# and bloomidx_check passes on both
sub check_all
{
	my ($label, $index) = @_;
	local $Test::Builder::Level = $Test::Builder::Level + 1;

	$primary->wait_for_catchup($standby, 'replay', $primary->lsn('insert'));
	my $by_index = answers($primary, 1);
	my $by_seq = answers($primary, 0);
	my $on_standby = answers($standby, 1);
	for my $k (0 .. $#conditions)
	{
		is($by_index->[$k], $by_seq->[$k], "$label: index = seq scan for $conditions[$k]");
		is($on_standby->[$k], $by_index->[$k], "$label: standby = primary for $conditions[$k]");
	}
	for my $node ($primary, $standby)
	{
		my ($ret, $out, $err) = $node->psql('postgres',
			"SELECT bloomidx_check('$index', heapallindexed => true)");
		is($ret, 0, "$label: bloomidx_check(heapallindexed) passes on " . $node->name)
		  or diag($err);
	}
}

for my $layout ('row', 'sliced')
{
	my $index = "sx_$layout";
	$primary->safe_psql('postgres', qq{
CREATE INDEX $index ON sx_t USING bloomidx (sec, s text_trgm_ops (elements = 24),
	tags array_elem_ops, doc jsonb_path_ops) WITH (layout = '$layout');
});
	check_all("$layout, after the build", $index);

	$primary->safe_psql('postgres', qq{
INSERT INTO sx_t SELECT * FROM sx_rows(3000, 20001);
DELETE FROM sx_t WHERE id % 11 = 0;
UPDATE sx_t SET tags = tags || 'v1'::text, s = upper(s) WHERE id % 13 = 0;
});
	check_all("$layout, after inserts, deletes and updates", $index);

	$primary->safe_psql('postgres', "SELECT bloomidx_merge('$index')") if $layout eq 'sliced';
	$primary->safe_psql('postgres', 'VACUUM sx_t');
	check_all("$layout, after merges and VACUUM", $index);

	# A parallel build holds the same signatures as the serial one
	$primary->safe_psql('postgres', qq{
SET max_parallel_maintenance_workers = 2;
SET min_parallel_table_scan_size = 0;
SET maintenance_work_mem = '64MB';
ALTER TABLE sx_t SET (parallel_workers = 2);
REINDEX INDEX $index;
ALTER TABLE sx_t RESET (parallel_workers);
});
	check_all("$layout, after a parallel REINDEX", $index);

	# A crash between inserts
	$primary->safe_psql('postgres', 'CHECKPOINT');
	$primary->safe_psql('postgres', 'INSERT INTO sx_t SELECT * FROM sx_rows(2000, 30001)');
	my ($out, $err) = ('', '');
	my $h = IPC::Run::start(
		[ 'psql', '-X', '-d', $primary->connstr('postgres'), '-c',
		  'BEGIN; INSERT INTO sx_t SELECT * FROM sx_rows(2000, 40001); SELECT pg_sleep(600);' ],
		'>', \$out, '2>', \$err);
	$primary->poll_query_until('postgres',
		q{SELECT count(*) = 1 FROM pg_stat_activity WHERE query LIKE 'BEGIN; INSERT INTO sx_t%' AND wait_event = 'PgSleep'})
	  or die 'the open transaction did not start';
	$primary->stop('immediate');
	$h->finish;
	$primary->start;
	check_all("$layout, after a crash", $index);

	$primary->safe_psql('postgres', "DROP INDEX $index");
}

# pg_dump and pg_restore carry an index of sets with its options
$primary->safe_psql('postgres', q{
CREATE INDEX sx_dump ON sx_t USING bloomidx (sec, s text_trgm_ops (elements = 24, query_elements = 2),
	tags array_elem_ops (elements = 3), doc jsonb_path_ops);
});
my $dump = $primary->basedir . '/sx.dump';
$primary->command_ok([ 'pg_dump', '-Fc', '-f', $dump, '-d', $primary->connstr('postgres') ],
	'pg_dump of a table with an index of sets');
$primary->safe_psql('postgres', 'CREATE DATABASE restored');
$primary->command_ok(
	[ 'pg_restore', '-d', $primary->connstr('restored'), $dump ],
	'pg_restore into a fresh database');
my $def = q{SELECT pg_get_indexdef('sx_dump'::regclass)};
is($primary->safe_psql('restored', $def), $primary->safe_psql('postgres', $def),
	'the restored index has the same definition, options included');
my $stats = q{SELECT signature_bits, bits_per_column, layout FROM bloomidx_stats('sx_dump')};
is($primary->safe_psql('restored', $stats), $primary->safe_psql('postgres', $stats),
	'the restored index has the same shape');
my $q = join("\n", map { "SELECT sx(\$c\$$_\$c\$, true);" } @conditions);
is($primary->safe_psql('restored', $q), $primary->safe_psql('postgres', $q),
	'the restored index answers the same');

$standby->stop;
$primary->stop;
done_testing();
