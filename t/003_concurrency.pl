
# Copyright and license: see the project's LICENSE.

# Concurrent writers, readers, VACUUM and bloomidx_check on one table, in
# each layout.
# pgbench runs 8 clients for a fixed number of transactions each, mixing
# inserts, updates (HOT and not), deletes, VACUUM, bloomidx_check with
# heapallindexed (which holds only AccessShareLock, so it runs among the
# writers and must not report false corruption), and reads that compare,
# within one REPEATABLE READ snapshot, an indexed query's rows with the seq
# scan's and fail the client if they differ.  No client may fail;
# afterwards the index answers equal the seq scan's and the index holds
# exactly one tuple per live row.

use strict;
use warnings;

use FindBin;
use lib $FindBin::RealBin;

use PostgreSQL::Test::Cluster;
use PostgreSQL::Test::Utils;
use Test::More;
use BloomidxTest;

my $clients = 8;
my $transactions = 1000;    # per client
my $total = $clients * $transactions;

my $node = PostgreSQL::Test::Cluster->new('concurrency');
$node->init;
$node->append_conf('postgresql.conf', qq{
max_connections = 30
autovacuum = off
});
$node->start;

# About the highest id the inserts reach (5 rows in 10 of 33 transactions)
my $maxid = 20000 + int($total * 1.5);

foreach my $t ([ 'cc', 'row' ], [ 'cs', 'sliced' ])
{
	my ($table, $layout) = @$t;

	$node->safe_psql('postgres',
		bx_schema_sql($table, layout => $layout) . bx_fill_sql($table, 1, 20000)
		  . "CREATE SEQUENCE ${table}_seq START 20001;");

	# The scripts name table cc: rename it, and the files, per layout
	my %scripts = (
		'bloomidx_insert@10' => bx_insert_sql('cc',
			"(SELECT nextval('cc_seq') AS g FROM generate_series(1, 5)) s"),
		'bloomidx_update@4' => qq{
\\set id random(1, $maxid)
UPDATE cc SET i = (i + 1) % 50, t = 'b' || ((id + 1) % 23) WHERE id = :id;
		},
		'bloomidx_update_hot@2' => qq{
\\set id random(1, $maxid)
UPDATE cc SET note = 'hot ' || :id WHERE id = :id;
		},
		'bloomidx_delete@4' => qq{
\\set id random(1, $maxid)
DELETE FROM cc WHERE id = :id;
		},
		'bloomidx_read@8' => q{
\set a random(0, 49)
BEGIN ISOLATION LEVEL REPEATABLE READ;
SET LOCAL enable_seqscan = off;
SET LOCAL enable_indexscan = off;
SELECT count(*) AS n1, coalesce(sum(id), 0) AS s1 FROM cc WHERE i = :a AND t = 'b' || (:a % 23) \gset
SELECT count(*) AS m1, coalesce(sum(id), 0) AS t1 FROM cc WHERE u = md5((:a * 2)::text)::uuid \gset
SET LOCAL enable_seqscan = on;
SET LOCAL enable_bitmapscan = off;
SELECT count(*) AS n2, coalesce(sum(id), 0) AS s2 FROM cc WHERE i = :a AND t = 'b' || (:a % 23) \gset
SELECT count(*) AS m2, coalesce(sum(id), 0) AS t2 FROM cc WHERE u = md5((:a * 2)::text)::uuid \gset
COMMIT;
\if :n1 != :n2 or :s1 != :s2 or :m1 != :m2 or :t1 != :t2
SELECT 'index scan and seq scan disagree'::int;
\endif
		},
		'bloomidx_vacuum@1' => q{
VACUUM cc;
		},
		'bloomidx_check@1' => q{
SELECT bloomidx_check('cc_bx', true), bloomidx_check('cc_tn_bx', true);
		},
	);
	my %files;
	foreach my $name (keys %scripts)
	{
		(my $file = $name) =~ s/^bloomidx_/bloomidx_${layout}_/;
		($files{$file} = $scripts{$name}) =~ s/\bcc(?=\b|_)/$table/g;
	}

	$node->pgbench(
		"-n -c $clients -j 2 -t $transactions --random-seed=42",
		0,
		[qr{processed: $total/$total}],
		[qr{^(pgbench: setting random seed to 42\s*)?$}],
		"$layout layout: concurrent inserts, updates, deletes, checked reads, VACUUM and bloomidx_check",
		\%files);

	# The readers above would have failed on a difference; check once more,
	# with the plans, and the whole index
	bx_check_answers($node, $table, "$layout layout, after the concurrent load");
	is( $node->safe_psql(
			'postgres',
			"SELECT bloomidx_check('${table}_bx', true), bloomidx_check('${table}_tn_bx', true); SELECT 'checked'"
		),
		"|\nchecked",
		"$layout layout: bloomidx_check passes after the concurrent load");

	# Once VACUUM has removed the dead rows, one index tuple per live row
	# (INDEX_CLEANUP ON: with few dead rows VACUUM would skip the indexes;
	# autovacuum is off, as an ANALYZE's snapshot could keep dead rows).
	$node->safe_psql('postgres', "VACUUM (INDEX_CLEANUP ON) $table");
	my ($rows, $tuples) = split /\|/, $node->safe_psql('postgres',
		"SELECT (SELECT count(*) FROM $table), live_tuples FROM bloomidx_stats('${table}_bx')");
	cmp_ok($rows, '>', 20000, "$layout layout: the load added rows");
	is($tuples, $rows, "$layout layout: after VACUUM the index holds one tuple per live row");
}

$node->stop;

done_testing();
