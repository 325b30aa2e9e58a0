
# Copyright and license: see the project's LICENSE.

# bloomidx on a table sharded with postgres_fdw (t/010_fdw_sharding.pl).
#
# Three nodes: a coordinator holding a table partitioned by hash of id whose
# two partitions are postgres_fdw foreign tables, one on each of two shard
# nodes; each shard's table has a bloomidx index.  We check that
#   - a multi-column equality on the coordinator is pushed down to both
#     shards (the Remote SQL carries the whole WHERE clause), and each shard
#     answers it with its bloomidx index: the remote query plans as a bitmap
#     scan of that index, and the index's idx_scan counter rises on both
#     shards when the coordinator runs the query;
#   - the coordinator's rows equal the rows a sequential scan finds on the
#     shards;
#   - the ad hoc filter works across nodes: bloom_agg runs on each shard
#     (pushed down as an aggregate, or stored in a shard table and read
#     through a foreign table), the filters cross postgres_fdw in their text
#     form (hex), bloom_union_agg on the coordinator merges them, and the
#     result has the same bytes, and the same answers for a probe set, as
#     the filter built on the coordinator from all the rows; its measured
#     false-positive rate is the expected one.

use strict;
use warnings;

use PostgreSQL::Test::Cluster;
use PostgreSQL::Test::Utils;
use Test::More;
use Time::HiRes qw(usleep);

# The test table, on the coordinator and on each shard.
my $columns = 'id bigint NOT NULL, customer int, product int, store text, status text';

# Rows loaded through the coordinator, which routes each to its shard.
my $nrows = 40000;

# Filter sizing given to bloom_agg: filters built on different nodes can be
# combined only if they have the same shape, so every node is given the same
# capacity and false-positive rate rather than letting each size its own.
my $capacity = 50000;
my $fpr      = 0.01;

# Multi-column equalities to push down; each must find some rows.
my @queries = (
	"customer = 42 AND product = 3",
	"customer = 100 AND store = 'store-7' AND product = 9",
	"product = 5 AND store = 'store-2' AND status = 's1'",
	"customer = ANY (ARRAY[1, 2, 3]) AND product = 4",
	"customer = 17 AND status IS NULL");

# Start the nodes, small since three run at once.
my %node;
foreach my $name ('coordinator', 'shard1', 'shard2')
{
	$node{$name} = PostgreSQL::Test::Cluster->new($name);
	$node{$name}->init;
	$node{$name}->append_conf('postgresql.conf',
		"shared_buffers = 16MB\nmax_connections = 20\n");
	$node{$name}->start;
	$node{$name}->safe_psql('postgres', 'CREATE EXTENSION bloomidx');
}
my $coord = $node{coordinator};
my @shards = ('shard1', 'shard2');

# Each shard: the table, and its bloomidx index.  shard1 gets the index
# before the load (rows go in through aminsert), shard2 after (ambuild).
my $create_index =
  'CREATE INDEX orders_bloom ON orders USING bloomidx (customer, product, store, status)';
foreach my $s (@shards)
{
	$node{$s}->safe_psql('postgres', "CREATE TABLE orders ($columns)");
}
$node{shard1}->safe_psql('postgres', $create_index);

# The coordinator: postgres_fdw, one server per shard.
#  - extensions 'bloomidx' lets postgres_fdw ship bloomidx's functions and
#    operators (here, bloom_agg) to the shards; the extension must be
#    installed, in the same schema, on every node.
#  - postgres_fdw reads remote rows through a cursor, which the shard plans
#    for the first 10% of the rows (cursor_tuple_fraction = 0.1).  A bitmap
#    scan of a bloomidx index reads the whole index before it returns a
#    row, so with that setting the shard prefers a sequential scan; the
#    options setting plans the shard's cursors for all their rows.
$coord->safe_psql('postgres', 'CREATE EXTENSION postgres_fdw');
foreach my $s (@shards)
{
	my $host = $node{$s}->host;
	my $port = $node{$s}->port;
	$coord->safe_psql(
		'postgres', qq{
		CREATE SERVER $s FOREIGN DATA WRAPPER postgres_fdw
			OPTIONS (host '$host', port '$port', dbname 'postgres',
					 extensions 'bloomidx', batch_size '1000',
					 options '-c cursor_tuple_fraction=1');
		CREATE USER MAPPING FOR CURRENT_USER SERVER $s;
	});
}
$coord->safe_psql(
	'postgres', qq{
	CREATE TABLE orders ($columns) PARTITION BY HASH (id);
	CREATE FOREIGN TABLE orders_s1 PARTITION OF orders
		FOR VALUES WITH (MODULUS 2, REMAINDER 0)
		SERVER shard1 OPTIONS (table_name 'orders');
	CREATE FOREIGN TABLE orders_s2 PARTITION OF orders
		FOR VALUES WITH (MODULUS 2, REMAINDER 1)
		SERVER shard2 OPTIONS (table_name 'orders');
	INSERT INTO orders
	SELECT i, i % 211, i % 13, 'store-' || i % 17,
		   CASE WHEN i % 11 = 0 THEN NULL ELSE 's' || i % 5 END
	FROM generate_series(1, $nrows) i;
});

$node{shard2}->safe_psql('postgres', $create_index);
foreach my $s (@shards)
{
	$node{$s}->safe_psql('postgres', 'ANALYZE orders');
}

# The coordinator routed every row to one shard, and each shard got a share.
my $s1rows = $node{shard1}->safe_psql('postgres', 'SELECT count(*) FROM orders');
my $s2rows = $node{shard2}->safe_psql('postgres', 'SELECT count(*) FROM orders');
ok($s1rows > 0 && $s2rows > 0, "rows on both shards ($s1rows + $s2rows)");
is($s1rows + $s2rows, $nrows, 'every row is on one shard');
is($coord->safe_psql('postgres', 'SELECT count(*) FROM orders'),
	$nrows, 'the coordinator sees every row');

# idx_scan of a shard's bloomidx index.
sub idx_scan
{
	my ($s) = @_;
	return $node{$s}->safe_psql('postgres',
		"SELECT idx_scan FROM pg_stat_user_indexes WHERE indexrelname = 'orders_bloom'"
	);
}

# Wait (up to 10 s) for idx_scan of a shard's bloomidx index to exceed
# $before, and return its last value.
sub wait_for_idx_scan
{
	my ($s, $before) = @_;
	my $value;
	for (my $i = 0; $i < 100; $i++)
	{
		$value = idx_scan($s);
		last if $value > $before;
		usleep(100_000);
	}
	return $value;
}

# The rows a sequential scan finds for a condition on both shards, in id
# order.
sub seqscan_rows
{
	my ($cond) = @_;
	my @rows;
	foreach my $s (@shards)
	{
		my $out = $node{$s}->safe_psql(
			'postgres', qq{
			SET enable_bitmapscan = off;
			SET enable_indexscan = off;
			SET enable_seqscan = on;
			SELECT * FROM orders WHERE $cond;
		});
		push @rows, split(/\n/, $out);
	}
	return join("\n", sort { (split /\|/, $a)[0] <=> (split /\|/, $b)[0] } @rows);
}

foreach my $cond (@queries)
{
	my $query = "SELECT * FROM orders WHERE $cond";

	# The coordinator pushes the whole condition down to both shards.
	my $plan = $coord->safe_psql('postgres', "EXPLAIN (VERBOSE, COSTS OFF) $query");
	my @remote = ($plan =~ /Remote SQL: (.*)$/mg);
	is(scalar(@remote), 2, "$cond: one foreign scan per shard");
	my %cols = map { $_ => 1 } ($cond =~ /\b(customer|product|store|status)\b/g);
	my @pushed = grep {
		my ($where) = /\bWHERE (.*)$/;
		defined $where && !grep { $where !~ /\b$_\b/ } keys %cols
	} @remote;
	is(scalar(@pushed), 2,
		"$cond: every column of the condition is in both shards' remote WHERE");

	# Each shard plans the remote SQL, as the cursor postgres_fdw declares,
	# as a scan of its bloomidx index.
	foreach my $i (0 .. $#shards)
	{
		my $s = $shards[$i];
		my $remote_plan = $node{$s}->safe_psql(
			'postgres', qq{
			BEGIN;
			SET LOCAL cursor_tuple_fraction = 1;
			EXPLAIN (COSTS OFF) DECLARE c1 CURSOR FOR $remote[$i];
			COMMIT;
		});
		like(
			$remote_plan,
			qr/Bitmap Index Scan on orders_bloom/,
			"$cond: $s plans the remote SQL with its bloomidx index");
	}

	# Run the query on the coordinator; each shard's idx_scan rises.  The
	# coordinator's session ends after the query, which closes its
	# connections to the shards; the shard backends report their statistics
	# as they exit, so wait for that.
	my %before = map { $_ => idx_scan($_) } @shards;
	my $got = $coord->safe_psql('postgres', "$query ORDER BY id");
	foreach my $s (@shards)
	{
		my $after = wait_for_idx_scan($s, $before{$s});
		cmp_ok($after, '>', $before{$s},
			"$cond: $s answered with its bloomidx index (idx_scan $before{$s} -> $after)");
	}

	# The rows equal a sequential scan's on the shards, and there are some.
	my $want = seqscan_rows($cond);
	isnt($want, '', "$cond: a sequential scan finds rows");
	is($got, $want, "$cond: the coordinator's rows equal a sequential scan's");
}

# A condition on the partition key prunes to one shard.
my $plan = $coord->safe_psql('postgres',
	"EXPLAIN (VERBOSE, COSTS OFF) SELECT * FROM orders WHERE id = 4242 AND customer = 4242 % 211"
);
my @remote = ($plan =~ /Remote SQL: (.*)$/mg);
is(scalar(@remote), 1, 'a condition on id prunes to one shard');

# --- the ad hoc filter across nodes -----------------------------------------

# The filters: of id (40000 distinct values in a filter sized for 50000, so
# well filled), of customer (int, 211 values) and of store (text, 17).
my $aggs = join(
	",\n\t\t   ",
	map { "bloom_agg($_->[0], $capacity, $fpr) AS $_->[1]" }
	  (['id', 'ids'], ['customer', 'customers'], ['store', 'stores']));
my @filters = ('ids', 'customers', 'stores');

# One filter of each from every row, built on the coordinator.
$coord->safe_psql('postgres', "CREATE TABLE whole AS SELECT $aggs FROM orders");

# 1. bloom_agg pushed down to the shards as an aggregate over each foreign
#    partition: only the filters cross the network, and bloom_union_agg
#    merges them on the coordinator.
my $pushed_query = qq{
	SELECT bloom_union_agg(ids) AS ids, bloom_union_agg(customers) AS customers,
		   bloom_union_agg(stores) AS stores
	FROM (SELECT $aggs FROM orders_s1
		  UNION ALL
		  SELECT $aggs FROM orders_s2) per_shard};
my $p = $coord->safe_psql('postgres', "EXPLAIN (VERBOSE, COSTS OFF) $pushed_query");
my @agg_remote = ($p =~ /Remote SQL: (SELECT public\.bloom_agg\(id, .*)$/mg);
is(scalar(@agg_remote), 2, 'bloom_agg runs on both shards');
unlike($p, qr/Remote SQL: SELECT id, customer/,
	'no rows are fetched to build the per-shard filters');
$coord->safe_psql('postgres', "CREATE TABLE pushed AS $pushed_query");

# 2. Filters stored in a table on each shard, read through foreign tables.
foreach my $s (@shards)
{
	$node{$s}->safe_psql('postgres',
		"CREATE TABLE order_filters AS SELECT $aggs FROM orders");
	$coord->safe_psql(
		'postgres', qq{
		CREATE FOREIGN TABLE order_filters_$s
			(ids bloomfilter, customers bloomfilter, stores bloomfilter)
			SERVER $s OPTIONS (table_name 'order_filters');
	});

	# A filter reads the same on the coordinator as on its shard.  (Copy it
	# to a local table first: postgres_fdw would otherwise ship the md5 to
	# the shard.)
	my $md5s = join(" || ' ' || ", map { "md5($_\::bytea)" } @filters);
	my $there =
	  $node{$s}->safe_psql('postgres', "SELECT $md5s FROM order_filters");
	my $here = $coord->safe_psql(
		'postgres', qq{
		CREATE TEMP TABLE copied AS SELECT * FROM order_filters_$s;
		SELECT $md5s FROM copied;
	});
	is($here, $there, "$s\'s stored filters arrive unchanged");
}
$coord->safe_psql(
	'postgres', q{
	CREATE TABLE stored AS
	SELECT bloom_union_agg(ids) AS ids, bloom_union_agg(customers) AS customers,
		   bloom_union_agg(stores) AS stores
	FROM (SELECT * FROM order_filters_shard1
		  UNION ALL
		  SELECT * FROM order_filters_shard2) per_shard;
});

# The merged filters equal the filters built on all rows: the same bytes;
# the same answers for probe sets of values present and absent; no false
# negatives.
foreach my $merged ('pushed', 'stored')
{
	is( $coord->safe_psql(
			'postgres',
			'SELECT '
			  . join(', ', map { "m.$_\::bytea = w.$_\::bytea" } @filters)
			  . " FROM $merged m, whole w"),
		't|t|t',
		"$merged: the merged filters have the bytes of the filters on all rows");

	is( $coord->safe_psql(
			'postgres', qq{
			SELECT count(*),
				   count(*) FILTER (WHERE bloom_contains(m.ids, v::bigint)
									IS DISTINCT FROM bloom_contains(w.ids, v::bigint)),
				   count(*) FILTER (WHERE bloom_contains(m.customers, v)
									IS DISTINCT FROM bloom_contains(w.customers, v)),
				   count(*) FILTER (WHERE bloom_contains(m.stores, 'store-' || v)
									IS DISTINCT FROM bloom_contains(w.stores, 'store-' || v))
			FROM $merged m, whole w, generate_series(-1000, 79000) v}),
		'80001|0|0|0',
		"$merged: the merged filters answer 80001 probes each as the filters on all rows");

	is( $coord->safe_psql(
			'postgres', qq{
			SELECT bool_and(bloom_contains(m.ids, o.id)),
				   bool_and(bloom_contains(m.customers, o.customer)),
				   bool_and(bloom_contains(m.stores, o.store))
			FROM $merged m, orders o}),
		't|t|t',
		"$merged: every value of every row is in the merged filters");
}

# The id filter is well filled but still a filter: of 100000 absent ids,
# the share that passes is within 0.5x to 1.5x of the rate bloom_info
# expects from the bits set.
my $fp = $coord->safe_psql(
	'postgres', qq{
	SELECT count(*) FILTER (WHERE bloom_contains(ids, v::bigint))
	FROM pushed, generate_series($nrows + 1, $nrows + 100000) v});
my $expected = $coord->safe_psql('postgres',
	'SELECT round((bloom_info(ids)).expected_false_positive_rate * 100000) FROM pushed');
ok($fp >= 0.5 * $expected && $fp <= 1.5 * $expected,
	"absent ids pass the merged filter at the expected rate ($fp of 100000, expected $expected)");

foreach my $name ('coordinator', 'shard1', 'shard2')
{
	$node{$name}->stop;
}

done_testing();
