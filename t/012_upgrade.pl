
# Copyright and license: see the project's LICENSE.

# Upgrade from 1.0: a database with bloomidx 1.0, indexes of both layouts
# and a table of stored bloomfilters, is updated with ALTER EXTENSION
# bloomidx UPDATE.  Afterwards (a) the extension holds the same objects,
# with the same signatures, results, properties and comments, as a fresh
# install of the default version in another database, and (b) the old
# indexes answer as a seq scan does, and the stored filters answer as they
# did before the update.  The comparison is over whatever both scripts
# create, so it holds as objects are added to the 1.1 scripts.

use strict;
use warnings;

use FindBin;
use lib $FindBin::RealBin;

use PostgreSQL::Test::Cluster;
use PostgreSQL::Test::Utils;
use Test::More;
use BloomidxTest;

my $node = PostgreSQL::Test::Cluster->new('upgrade');
$node->init;
$node->start;

my $default_version = $node->safe_psql('postgres',
	"SELECT default_version FROM pg_available_extensions WHERE name = 'bloomidx'");
is($default_version, '1.3', 'the default version is 1.3');

# The 1.0 database
$node->safe_psql('postgres', 'CREATE DATABASE old');
$node->safe_psql('old', "CREATE EXTENSION bloomidx VERSION '1.0'");
is($node->safe_psql('old', "SELECT extversion FROM pg_extension WHERE extname = 'bloomidx'"),
	'1.0', 'version 1.0 installed');

for my $layout ('row', 'sliced')
{
	my $table = "up_$layout";
	$node->safe_psql('old', bx_schema_sql($table, layout => $layout));
	$node->safe_psql('old', bx_fill_sql($table, 1, 6000));
}

# Indexes made by 1.0 without a layout, when the row layout was the
# default: the row layout in the metapage, no layout in the reloptions
$node->safe_psql('old', bx_schema_sql('up_old', layout => 'row'));
$node->safe_psql('old', bx_fill_sql('up_old', 1, 6000));
$node->safe_psql('old',
	'ALTER INDEX up_old_bx RESET (layout); ALTER INDEX up_old_tn_bx RESET (layout)');

# Stored filters: one per i % 10 over the values of t, and what they
# answer for members and for other values
$node->safe_psql(
	'old', q{
CREATE TABLE up_filters AS
	SELECT i % 10 AS k, bloom_agg(t) AS f, array_agg(DISTINCT t) AS members
	FROM up_row WHERE t IS NOT NULL GROUP BY 1;
CREATE VIEW up_filter_answers AS
	SELECT k,
		   bool_and(bloom_contains(f, m)) AS all_members,
		   string_agg(CASE WHEN bloom_contains(f, 'x' || g) THEN g::text END, ',' ORDER BY g) AS others
	FROM up_filters, unnest(members) m, generate_series(1, 2000) g
	GROUP BY k;
});
my $filters_before = $node->safe_psql('old', 'SELECT * FROM up_filter_answers ORDER BY k');
is($node->safe_psql('old', 'SELECT count(*) FILTER (WHERE all_members) FROM up_filter_answers'),
	'10', '1.0: every filter contains all its members');

# The 1.0 SQL definition of bloomidx_stats works with the new library
my $stats_before = $node->safe_psql('old',
	"SELECT live_tuples, signature_bits, layout FROM bloomidx_stats('up_sliced_bx')");
# (the library is the new one: its sliced default shape, 104 bits for these
# columns at a 0.035% target)
is($stats_before, '6000|104|sliced', '1.0 bloomidx_stats works with the new library');

bx_check_answers($node, "up_$_", "1.0, $_ layout", 'old') for ('row', 'sliced');

# The update
$node->safe_psql('old', 'ALTER EXTENSION bloomidx UPDATE');
is($node->safe_psql('old', "SELECT extversion FROM pg_extension WHERE extname = 'bloomidx'"),
	$default_version, 'ALTER EXTENSION bloomidx UPDATE reaches the default version');

# A fresh install
$node->safe_psql('postgres', 'CREATE DATABASE fresh');
$node->safe_psql('fresh', 'CREATE EXTENSION bloomidx');

# (a) The same objects: their descriptions, and for functions and
# aggregates their arguments, results, properties, privileges and
# comments, for types their properties, for operator classes and families
# their members; each ordered by name, since the two scripts create objects
# in different orders
my %catalogs = (
	'objects' => q{
SELECT pg_describe_object(d.classid, d.objid, d.objsubid)
FROM pg_depend d JOIN pg_extension e ON d.refobjid = e.oid
WHERE e.extname = 'bloomidx' AND d.refclassid = 'pg_extension'::regclass
  AND d.deptype = 'e'
ORDER BY 1},
	'functions' => q{
SELECT p.oid::regprocedure, pg_get_function_arguments(p.oid),
	   pg_get_function_result(p.oid), p.prokind, p.provolatile, p.proisstrict,
	   p.proparallel, p.prosecdef, p.procost, p.prorows, p.proacl,
	   obj_description(p.oid, 'pg_proc'), a.aggtransfn, a.aggfinalfn,
	   a.aggcombinefn, a.aggserialfn, a.aggdeserialfn, a.aggtranstype::regtype
FROM pg_proc p JOIN pg_depend d ON d.objid = p.oid AND d.classid = 'pg_proc'::regclass
	JOIN pg_extension e ON d.refobjid = e.oid
	LEFT JOIN pg_aggregate a ON a.aggfnoid = p.oid
WHERE e.extname = 'bloomidx' AND d.deptype = 'e'
ORDER BY p.oid::regprocedure::text},
	'types' => q{
SELECT t.oid::regtype, t.typlen, t.typbyval, t.typalign, t.typstorage,
	   t.typinput, t.typoutput, t.typreceive, t.typsend, t.typanalyze,
	   obj_description(t.oid, 'pg_type')
FROM pg_type t JOIN pg_depend d ON d.objid = t.oid AND d.classid = 'pg_type'::regclass
	JOIN pg_extension e ON d.refobjid = e.oid
WHERE e.extname = 'bloomidx' AND d.deptype = 'e'
ORDER BY t.oid::regtype::text},
	'operator class members' => q{
SELECT pg_describe_object(d.classid, d.objid, d.objsubid),
	   pg_describe_object(d.refclassid, d.refobjid, 0)
FROM pg_depend d
WHERE d.refclassid = 'pg_opfamily'::regclass AND d.refobjid IN
	(SELECT f.oid FROM pg_opfamily f JOIN pg_am am ON am.oid = f.opfmethod
	 WHERE am.amname = 'bloomidx')
ORDER BY 1, 2},
	'access method' => q{
SELECT amname, amhandler, amtype, obj_description(oid, 'pg_am')
FROM pg_am WHERE amname = 'bloomidx'});

for my $what (sort keys %catalogs)
{
	my $updated = $node->safe_psql('old', $catalogs{$what});
	my $installed = $node->safe_psql('fresh', $catalogs{$what});
	ok($installed ne '', "fresh install: $what listed");
	is($updated, $installed, "updated 1.0 and fresh install: the same $what");
}

# (b) The old indexes and filters answer as before
bx_check_answers($node, "up_$_", "after the update, $_ layout", 'old') for ('row', 'sliced');
is($node->safe_psql('old', 'SELECT * FROM up_filter_answers ORDER BY k'),
	$filters_before, 'after the update, the stored filters answer as before');

for my $layout ('row', 'sliced')
{
	$node->safe_psql('old', "ANALYZE up_$layout");
	is( $node->safe_psql('old',
			"SELECT live_tuples, layout, target_false_positive_rate FROM bloomidx_stats('up_${layout}_bx', exact => false)"),
		"6000|$layout|" . ($layout eq 'sliced' ? '0.00035' : '0.01'),
		"after the update, bloomidx_stats' cheap form on the $layout layout");
	$node->safe_psql('old', "SELECT bloomidx_check('up_${layout}_bx', true)");
	pass("after the update, bloomidx_check passes on the $layout layout");
}

# 1.3's columns of bloomidx_stats on the summaries: a sliced index of
# fewer rows than a stripe has none summarized yet; the row layout none
is($node->safe_psql('old',
		"SELECT s.layout, summary_bits_per_key, summary_pages, summarized_stripes, summary_fpr IS NULL
		 FROM pg_class c, bloomidx_stats(c.oid) s
		 WHERE c.relname IN ('up_row_bx', 'up_sliced_bx') ORDER BY c.relname"),
	"row||||t\nsliced|8|0|0|t",
	'after the update, bloomidx_stats reports the stripe summaries');

# The 1.0 indexes made without a layout keep the row layout frozen in
# their metapage: bloomidx_check does not see options asking for another
# one, inserts and VACUUM keep it; REINDEX builds them with today's default
# (the sliced layout).
my $old_layouts = q{
SELECT string_agg(s.layout, ',' ORDER BY c.relname)
FROM pg_class c, bloomidx_stats(c.oid) s WHERE c.relname IN ('up_old_bx', 'up_old_tn_bx')};
is($node->safe_psql('old', $old_layouts), 'row,row',
	'after the update, 1.0 indexes made without a layout have the row layout');
my ($ret, $stdout, $stderr) = $node->psql('old',
	"SELECT bloomidx_check('up_old_bx', true), bloomidx_check('up_old_tn_bx', true)");
is($ret, 0, 'after the update, bloomidx_check passes on 1.0 indexes made without a layout');
is($stderr, '', 'bloomidx_check finds their options match their frozen shape');
bx_check_answers($node, 'up_old', 'after the update, 1.0 indexes made without a layout', 'old');
$node->safe_psql('old', bx_fill_sql('up_old', 6001, 7000));
$node->safe_psql('old', 'DELETE FROM up_old WHERE id % 7 = 0; VACUUM up_old');
is($node->safe_psql('old', $old_layouts), 'row,row',
	'inserts and VACUUM keep their row layout');
bx_check_answers($node, 'up_old', 'inserts and VACUUM on 1.0 indexes made without a layout', 'old');
$node->safe_psql('old', 'REINDEX TABLE up_old');
is($node->safe_psql('old', $old_layouts), 'sliced,sliced',
	'REINDEX builds them with the default layout');
bx_check_answers($node, 'up_old', 'after REINDEX of 1.0 indexes made without a layout', 'old');

# ... and go on working: inserts, VACUUM, REINDEX
for my $layout ('row', 'sliced')
{
	my $table = "up_$layout";
	$node->safe_psql('old', bx_fill_sql($table, 6001, 7000));
	$node->safe_psql('old', "DELETE FROM $table WHERE id % 7 = 0; VACUUM $table");
	bx_check_answers($node, $table, "after the update, inserts and VACUUM, $layout layout", 'old');
	$node->safe_psql('old', "REINDEX TABLE $table");
	bx_check_answers($node, $table, "after the update and REINDEX, $layout layout", 'old');
}

$node->stop;
done_testing();
