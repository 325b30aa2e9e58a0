
# Copyright and license: see the project's LICENSE.

# bloomidx on Citus: a coordinator and two workers, Citus and bloomidx
# installed on each (scripts/citus.sh builds Citus into the private
# PostgreSQL; the citus suite of scripts/test-major.sh runs this file).
# What README.md's "Scaling out" says of Citus, each checked:
#   - CREATE EXTENSION bloomidx and CREATE INDEX ... USING bloomidx, of both
#     layouts and of the set operator classes with their options, reach
#     every worker and every shard;
#   - each kind of query (=, OR, IN, IS NULL, LIKE, ILIKE, @>, &&, jsonb @>)
#     runs as a Bitmap Index Scan on the bloomidx index of every shard, and
#     answers as the same rows in a plain table on the coordinator;
#   - the forms of bloom_agg that combine run on the shards
#     (worker_partial_agg), alone and under GROUP BY, with the bytes of the
#     same aggregate over the plain table, for values of typed forms of 1.1
#     (integer, bigint, text), of 1.3 (float8, jsonb, integer[]) and of an
#     enum whose forms bloom_agg_add_type made on every node;
#     bloom_agg(value) and bloom_union_agg give the plain table's bytes too;
#   - a reference table's index is used;
#   - after DELETE and VACUUM, and after a shard move, the answers hold and
#     bloomidx_check (heapallindexed) passes on every placement.

use strict;
use warnings;

use PostgreSQL::Test::Cluster;
use PostgreSQL::Test::Utils;
use Test::More;

my $nrows = 20000;
my $nshards = 4;
my @index_names = qw(t_row t_sl t_trgm t_arr t_js);

# --- three nodes ---------------------------------------------------------------

my %nodes;
for my $name (qw(coord w1 w2))
{
	my $node = PostgreSQL::Test::Cluster->new($name);
	$node->init;
	my $host = $node->host;
	$node->append_conf(
		'postgresql.conf', qq{
shared_preload_libraries = 'citus'
wal_level = logical
max_wal_senders = 10
max_replication_slots = 10
jit = off
fsync = off
max_worker_processes = 32
citus.node_conninfo = 'sslmode=disable'
citus.local_hostname = '$host'
});
	$node->start;
	$node->safe_psql('postgres', 'CREATE EXTENSION citus');
	$nodes{$name} = $node;
}
my ($coord, $w1, $w2) = @nodes{qw(coord w1 w2)};
my $host = $coord->host;

$coord->safe_psql(
	'postgres', qq{
SELECT citus_set_coordinator_host('$host', ${\$coord->port});
SELECT 1 FROM citus_add_node('$host', ${\$w1->port});
SELECT 1 FROM citus_add_node('$host', ${\$w2->port});
});
is($coord->safe_psql('postgres', 'SELECT count(*) FROM citus_get_active_worker_nodes()'),
	'2', 'the coordinator has two active workers');

# psql on the coordinator.
sub cq { return $coord->safe_psql('postgres', $_[0]); }

# --- the extension and the tables ---------------------------------------------

cq('CREATE EXTENSION bloomidx');
my $version = cq(
	"SELECT default_version FROM pg_available_extensions WHERE name = 'bloomidx'");
for my $w ($w1, $w2)
{
	is( $w->safe_psql('postgres',
			"SELECT extversion FROM pg_extension WHERE extname = 'bloomidx'"),
		$version,
		"CREATE EXTENSION bloomidx reached worker " . $w->name);
}

# The same rows in t, distributed over 4 shards, and in p, a plain table on
# the coordinator.
my $columns = q{id bigint PRIMARY KEY, a int, b text, c int[], d jsonb,
	e float8, g mood};
# fill_sql WHERE: the rows i of 1..$nrows where WHERE holds.
sub fill_sql
{
	my ($where) = @_;
	return qq{
SELECT i, i % 1000,
	CASE WHEN i % 50 = 7 THEN NULL ELSE 'w' || (i % 3000) || 'x' || (i * 7 % 101) END,
	ARRAY[i % 200, 1000 + i % 77],
	jsonb_build_object('k', i % 500, 'tag', 't' || (i % 13)),
	(i % 700) / 4.0,
	(ARRAY['sad', 'ok', 'happy', 'ecstatic'])[1 + i % 4]::mood
FROM generate_series(1, $nrows) i WHERE $where};
}
my $fill = fill_sql('true');
cq(qq{
CREATE TYPE mood AS ENUM ('sad', 'ok', 'happy', 'ecstatic');
SET citus.shard_count = $nshards;
CREATE TABLE t ($columns);
SELECT create_distributed_table('t', 'id');
CREATE TABLE p ($columns);
INSERT INTO t $fill;
INSERT INTO p $fill;
});
is(cq("SELECT count(*) FROM citus_shards WHERE table_name = 't'::regclass"),
	$nshards, "t has $nshards shards");

my $index_sql = q{
CREATE INDEX %1$s_row ON %1$s USING bloomidx (a, b) WITH (layout = 'row');
CREATE INDEX %1$s_sl ON %1$s USING bloomidx (e, g);
CREATE INDEX %1$s_trgm ON %1$s USING bloomidx (b text_trgm_ops (elements = 64, query_elements = 2));
CREATE INDEX %1$s_arr ON %1$s USING bloomidx (c array_elem_ops (elements = 4));
CREATE INDEX %1$s_js ON %1$s USING bloomidx (d jsonb_path_ops);
ANALYZE %1$s;
};
cq(sprintf($index_sql, 't'));
cq(sprintf($index_sql, 'p'));

# shards_on NODE: the number of t's shards placed on NODE.
sub shards_on
{
	my ($node) = @_;
	return cq(
		"SELECT count(*) FROM citus_shards WHERE table_name = 't'::regclass AND nodeport = "
		  . $node->port);
}

# shard_indexes NODE (Citus hides the shards from pg_class unless told): "name|indexdef|reloptions" of the bloomidx indexes of
# t's shards on NODE, one a line.
sub shard_indexes
{
	my ($node) = @_;
	return $node->safe_psql(
		'postgres', q{
SET citus.override_table_visibility = off;
SELECT c.relname, pg_get_indexdef(c.oid), coalesce(array_to_string(c.reloptions, ','), '')
FROM pg_class c JOIN pg_am am ON am.oid = c.relam
WHERE am.amname = 'bloomidx' AND c.relname ~ '^t_(row|sl|trgm|arr|js)_[0-9]+$'
ORDER BY 1});
}

my $total = 0;
for my $w ($w1, $w2)
{
	my @idx = split /\n/, shard_indexes($w);
	my $n = shards_on($w);
	$total += $n;
	is(scalar(@idx), 5 * $n,
		"worker " . $w->name . ": 5 bloomidx indexes on each of its $n shards");
	is( scalar(grep { /^t_row_\d+\|.*USING bloomidx \(a, b\) WITH \(layout='?row'?\)\|layout=row$/ } @idx),
		$n, "worker " . $w->name . ": the row layout reached every shard")
	  or diag(join("\n", @idx));
	is( scalar(grep { /^t_sl_\d+\|.*USING bloomidx \(e, g\)\|$/ } @idx),
		$n, "worker " . $w->name . ": the sliced index reached every shard");
	is( scalar(
			grep {
				/^t_trgm_\d+\|.*\(b text_trgm_ops \(elements='64', query_elements='2'\)\)/
			} @idx),
		$n,
		"worker " . $w->name . ": text_trgm_ops and its options reached every shard");
	is( scalar(grep { /^t_arr_\d+\|.*\(c array_elem_ops \(elements='4'\)\)/ } @idx),
		$n,
		"worker " . $w->name . ": array_elem_ops and its options reached every shard");
	is(scalar(grep { /^t_js_\d+\|.*\(d jsonb_path_ops\)/ } @idx),
		$n, "worker " . $w->name . ": jsonb_path_ops reached every shard");
}
is($total, $nshards, 'the workers hold every shard');

# --- queries: a bitmap index scan on every shard, the plain table's rows ------

my @queries = (
	[ '=',       "a = 7",                        't_row' ],
	[ 'OR',      "a = 7 OR a = 123",             't_row' ],
	[ 'IN',      "a IN (7, 8, 999)",             't_row' ],
	[ 'IS NULL', "b IS NULL",                    't_row' ],
	[ '= (sliced)', "e = 17.25",                 't_sl' ],
	[ '= (enum)', "g = 'happy' AND e = 3.5",        't_sl' ],
	[ 'LIKE',    "b LIKE '%w124x%'",             't_trgm' ],
	[ 'ILIKE',   "b ILIKE '%W2345X1%'",          't_trgm' ],
	[ '@>',      "c @> ARRAY[17]",               't_arr' ],
	[ '&&',      "c && ARRAY[17, 1050]",         't_arr' ],
	[ 'jsonb @>', q{d @> '{"k": 42}'},           't_js' ],);

# check_queries WHEN: each query's plan and answer (see above).
sub check_queries
{
	my ($when) = @_;
	for my $q (@queries)
	{
		my ($kind, $where, $index) = @$q;

		# The workers plan without sequential scans: SET LOCAL reaches them
		# with citus.propagate_set_commands = local.
		my $plan = cq(
			qq{SET citus.propagate_set_commands = 'local';
SET citus.explain_all_tasks = on;
BEGIN;
SET LOCAL enable_seqscan = off;
EXPLAIN (COSTS OFF) SELECT id FROM t WHERE $where;
COMMIT;});
		my %shards;
		$shards{$1} = 1 while $plan =~ /Bitmap Index Scan on \Q$index\E_(\d+)/g;
		like($plan, qr/Task Count: $nshards\b/, "$when: $kind runs on $nshards shards");
		is(scalar(keys %shards), $nshards,
			"$when: $kind is a Bitmap Index Scan on $index of every shard")
		  or diag($plan);

		my $sql = "SELECT count(*) || ':' || coalesce(md5(string_agg(id::text, ',' ORDER BY id)), '') FROM";
		my $got = cq("$sql t WHERE $where");
		my $want = cq("$sql p WHERE $where");
		isnt($want, '0:', "$when: $kind: the plain table has rows");
		is($got, $want, "$when: $kind: the rows of the plain table");
	}
}

check_queries('after load');

# A reference table: a copy on every node, its index used there too.
cq(q{
CREATE TABLE r (id int, v int);
SELECT create_reference_table('r');
INSERT INTO r SELECT i, i % 500 FROM generate_series(1, 5000) i;
CREATE INDEX r_bx ON r USING bloomidx (v);
ANALYZE r;
});
like(
	cq(q{SET enable_seqscan = off;
EXPLAIN (COSTS OFF) SELECT * FROM r WHERE v = 7}),
	qr/Bitmap Index Scan on r_bx_\d+/,
	'reference table: a Bitmap Index Scan on its bloomidx index');
is(cq('SELECT count(*) FROM r WHERE v = 7'), '10', 'reference table: its rows');

# --- aggregates: on the shards, the plain table's bytes -----------------------

# The typed forms of an enum made after the extension: on the coordinator
# and on every worker.
is(cq("SELECT bloom_agg_add_type('mood')"), '3', 'bloom_agg_add_type(mood) on the coordinator');
cq("SELECT run_command_on_workers(\$\$SELECT bloom_agg_add_type('mood')\$\$)");
for my $w ($w1, $w2)
{
	is( $w->safe_psql('postgres',
			"SELECT count(*) FROM pg_proc WHERE proname = 'bloom_agg' AND proargtypes[0] = 'mood'::regtype"),
		'3',
		'the forms of mood on ' . $w->name);
}

my $key = q{'\x000102030405060708090a0b0c0d0e0f'::bytea};
my @aggregates = (
	[ 'sized (integer)', 'bloom_agg(a, 5000, 0.01)' ],
	[ 'sized (text)', 'bloom_agg(b, 5000, 0.01)' ],
	[ 'sized (float8)', 'bloom_agg(e, 5000, 0.01)' ],
	[ 'sized (jsonb)', 'bloom_agg(d, 5000, 0.01)' ],
	[ 'sized (integer[])', 'bloom_agg(c, 5000, 0.01)' ],
	[ 'sized (enum)', 'bloom_agg(g, 5000, 0.01)' ],
	[ 'template (text)', 'bloom_agg(b, bloom_empty(5000, 0.01))' ],
	[ 'template (jsonb)', 'bloom_agg(d, bloom_empty(5000, 0.01))' ],
	[ 'template (bigint, blocked)', 'bloom_agg(id, bloom_empty(30000, 0.01, blocked => true))' ],
	[ 'keyed template (text)',
		"bloom_agg(b, bloom_empty(5000, 0.01, key => $key), $key)" ],
	[ 'keyed template (enum)',
		"bloom_agg(g, bloom_empty(5000, 0.01, key => $key), $key)" ],
	[ 'keyed template (integer[])',
		"bloom_agg(c, bloom_empty(5000, 0.01, key => $key), $key)" ],);

# agg_bytes TABLE AGG GROUPED: md5 of the aggregate's bytes, alone or one
# line per group.
sub agg_sql
{
	my ($table, $agg, $grouped) = @_;
	return $grouped
	  ? "SELECT id % 3, md5(($agg)::bytea) FROM $table GROUP BY 1 ORDER BY 1"
	  : "SELECT md5(($agg)::bytea) FROM $table";
}

for my $a (@aggregates)
{
	my ($name, $agg) = @$a;
	for my $grouped (0, 1)
	{
		my $label = $name . ($grouped ? ', GROUP BY' : '');
		my $plan = cq("EXPLAIN (VERBOSE, COSTS OFF) " . agg_sql('t', $agg, $grouped));
		like($plan, qr/worker_partial_agg\(/,
			"bloom_agg $label runs on the shards (worker_partial_agg)");
		my $want = cq(agg_sql('p', $agg, $grouped));
		like($want, qr/[0-9a-f]{32}/, "bloom_agg $label: the plain table gives bytes");
		is(cq(agg_sql('t', $agg, $grouped)), $want, "bloom_agg $label: the plain table's bytes");
	}
}

# bloom_agg(value) keeps an internal state: computed on the coordinator.
is( cq(agg_sql('t', 'bloom_agg(b)', 1)),
	cq(agg_sql('p', 'bloom_agg(b)', 1)),
	"bloom_agg(value), GROUP BY: the plain table's bytes");
cq(q{
CREATE TABLE tf (id int, f bloomfilter);
SELECT create_distributed_table('tf', 'id');
INSERT INTO tf SELECT id % 40, bloom_agg(b, 5000, 0.01) FROM p GROUP BY 1;
CREATE TABLE pf AS SELECT * FROM tf;
});
is( cq('SELECT md5(bloom_union_agg(f)::bytea) FROM tf'),
	cq('SELECT md5(bloom_union_agg(f)::bytea) FROM pf'),
	"bloom_union_agg: the plain table's bytes");
is( cq('SELECT md5(bloom_union_agg(f)::bytea) FROM tf'),
	cq('SELECT md5(bloom_agg(b, 5000, 0.01)::bytea) FROM p'),
	"bloom_union_agg: the bytes of bloom_agg over all the rows");

# --- VACUUM, bloomidx_check on every placement, a shard move ------------------

# check_placements WHEN: bloomidx_check with heapallindexed on every bloomidx
# index of t's shards, on each worker.
sub check_placements
{
	my ($when) = @_;
	for my $w ($w1, $w2)
	{
		my $n = shards_on($w);
		is( $w->safe_psql(
				'postgres', q{
SET citus.override_table_visibility = off;
SELECT count(*) FROM (
	SELECT bloomidx_check(c.oid, true)
	FROM pg_class c JOIN pg_am am ON am.oid = c.relam
	WHERE am.amname = 'bloomidx' AND c.relname ~ '^t_(row|sl|trgm|arr|js)_[0-9]+$') s}),
			5 * $n,
			"$when: bloomidx_check passes on the 5 indexes of each of the $n shards on "
			  . $w->name);
	}
}

check_placements('after load');

cq('DELETE FROM t WHERE id % 10 = 0 OR a = 123');
cq('DELETE FROM p WHERE id % 10 = 0 OR a = 123');
cq('VACUUM t');
cq('VACUUM p');
check_queries('after DELETE and VACUUM');
check_placements('after DELETE and VACUUM');

# Move one of w1's shards to w2 (logical replication: the primary key is the
# replica identity), then write to every shard.
my $shard = cq(
	"SELECT min(shardid) FROM citus_shards WHERE table_name = 't'::regclass AND nodeport = "
	  . $w1->port);
ok($shard =~ /^\d+$/, 'w1 holds a shard of t');
my $before = shards_on($w2);
cq( "SELECT citus_move_shard_placement($shard, '$host', "
	  . $w1->port
	  . ", '$host', "
	  . $w2->port . ")");
is( cq("SELECT nodeport FROM citus_shards WHERE shardid = $shard"),
	$w2->port, "shard $shard moved to w2");
is(shards_on($w2), $before + 1, 'w2 holds one shard more');
# The source placement is dropped later, by a cleanup: now.
cq('CALL citus_cleanup_orphaned_resources()');
cq('INSERT INTO t ' . fill_sql('i % 10 = 0'));
cq('INSERT INTO p ' . fill_sql('i % 10 = 0'));
check_queries('after a shard move and inserts');
check_placements('after a shard move and inserts');

$_->stop for ($coord, $w1, $w2);
done_testing();
