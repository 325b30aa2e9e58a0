
# Copyright and license: see the project's LICENSE.

# pg_upgrade from PostgreSQL 15 to this major, with --copy and with --link:
# a database with bloomidx indexes of both layouts (stripes, pending rows,
# the types whose hash functions PostgreSQL 18 replaced) and bloomfilter
# columns of every variant is upgraded without REINDEX.  Afterwards every
# indexed query answers as a sequential scan did before, bloomidx_check
# with heapallindexed passes, the operator classes keep the functions the
# indexes were built with and pass the validator, the filters have the same
# bytes and answers, and the indexes take new rows, VACUUM and merges.
#
# Run by scripts/test.sh (the upgrade suite) in the chroot of each major it
# upgrades to (17 and the newest): BX_OLD_INSTALL is the old PostgreSQL 15
# with bloomidx installed (scripts/old-install.sh), BX_OLD_LIBS the
# libraries its programs need there.

use strict;
use warnings;

use FindBin;
use lib "$FindBin::RealBin/../t";

use Cwd;
use PostgreSQL::Test::Cluster;
use PostgreSQL::Test::Utils;
use Test::More;
use BloomidxTest;

my $oldinstall = $ENV{BX_OLD_INSTALL};
die "BX_OLD_INSTALL (the old PostgreSQL with bloomidx) is not set"
  unless defined $oldinstall && -x "$oldinstall/bin/postgres";
$ENV{LD_LIBRARY_PATH} = $ENV{BX_OLD_LIBS} if $ENV{BX_OLD_LIBS};

my $old = PostgreSQL::Test::Cluster->new('old', install_path => $oldinstall);
$old->init;
$old->append_conf('postgresql.conf', 'jit = off');
$old->start;
like($old->safe_psql('postgres', 'SHOW server_version_num'), qr/^15/,
	'the old cluster runs PostgreSQL 15');

$old->safe_psql('postgres', 'CREATE DATABASE bx');

# Both layouts: more rows than two stripes of the sliced layout, merged,
# then rows left in its pending pages; dead rows VACUUM has not seen
for my $layout ('row', 'sliced')
{
	my $table = "up_$layout";
	$old->safe_psql('bx', bx_schema_sql($table, layout => $layout));
	$old->safe_psql('bx', bx_fill_sql($table, 1, 140000));
	$old->safe_psql('bx', "SELECT bloomidx_merge('${table}_bx')")
	  if $layout eq 'sliced';
	$old->safe_psql('bx', bx_fill_sql($table, 140001, 141500));
	$old->safe_psql('bx', "DELETE FROM $table WHERE id % 97 = 0");
}

# The types whose hash operator classes have functions of their own from
# PostgreSQL 18 on: the indexes keep the functions of 15
# (a bare boolean column, "fl = true", uses an index of bloomidx from 16 on
# only: = ANY is indexable on 15 too)
my @type_conditions = (
	"fl = ANY ('{true}')", "by = decode(md5('7'), 'hex')", "ci = '7'::cid", "da = date '2024-01-08'",
	"tz = '2024-01-01 07:00+00'::timestamptz", "xi = '7'::xid", "x8 = '7'::xid8",
	"fl = ANY ('{false}') AND da = date '2024-01-09'");
$old->safe_psql('bx', q{
CREATE TABLE ty (id int PRIMARY KEY, fl bool, by bytea, ci cid, da date, tz timestamptz, xi xid, x8 xid8);
INSERT INTO ty SELECT i, i % 3 = 0, decode(md5((i % 40)::text), 'hex'), (i % 50)::text::cid,
	date '2024-01-01' + i % 60, '2024-01-01 00:00+00'::timestamptz + (i % 60) * interval '1 hour',
	(i % 50)::text::xid, (i % 50)::text::xid8
FROM generate_series(1, 20000) i;
CREATE INDEX ty_row_bx ON ty USING bloomidx (fl, by, ci, da, tz, xi, x8) WITH (layout = 'row');
CREATE INDEX ty_sliced_bx ON ty USING bloomidx (fl, by, ci, da, tz, xi, x8) WITH (layout = sliced);
});

# Columns of sets (1.2): substrings, array elements, jsonb paths
my @set_conditions = (
	q{s LIKE '%lib4%'}, q{s ILIKE '%LIB4%.so%'}, q{a @> '{3}'}, q{a && '{3,7}'},
	q{j @> '{"k": 4}'}, q{j @> '{"o": {"p": [1]}}'});
$old->safe_psql('bx', q{
CREATE TABLE se (id int PRIMARY KEY, s text, a int[], j jsonb);
INSERT INTO se SELECT i, 'usr/lib/lib' || i % 300 || '.so', ARRAY[i % 10, i % 13],
	jsonb_build_object('k', i % 9, 'o', jsonb_build_object('p', jsonb_build_array(i % 4)))
FROM generate_series(1, 20000) i;
CREATE INDEX se_row_bx ON se USING bloomidx (s text_trgm_ops, a array_elem_ops, j jsonb_path_ops)
	WITH (layout = 'row');
CREATE INDEX se_sliced_bx ON se USING bloomidx (s text_trgm_ops (elements = 12), a array_elem_ops,
	j jsonb_path_ops);
});

sub set_answer
{
	my ($node, $cond, $use_index) = @_;
	return $node->safe_psql('bx',
		"SELECT bx_result(\$q\$SELECT id FROM se WHERE $cond\$q\$, "
		  . ($use_index ? 'true' : 'false') . ')');
}

# Filters of every variant (bx_filter_variants_sql, as t/016_filter_dump.pl)
my $filter_key = bx_filter_key();
$old->safe_psql('bx', qq{
CREATE TYPE pair AS (a int, b text);
CREATE TABLE f (name text PRIMARY KEY, f bloomfilter);
INSERT INTO f VALUES
} . bx_filter_variants_sql() . q{,
	('text', (SELECT bloom_agg('v' || i) FROM generate_series(1, 500) i)),
	('composite', (SELECT bloom_agg((i, 'v')::pair, 1000, 0.01) FROM generate_series(1, 500) i)),
	('empty growing', bloom_empty(10, 0.1, growth => 3));
});

my $filter_bytes = 'SELECT name, md5(f::bytea) FROM f ORDER BY name';
my $filter_answers = q{
SELECT name, (SELECT count(*) FROM generate_series(1, 2000) i WHERE
	CASE name WHEN 'keyed' THEN bloom_contains(f, i, } . $filter_key . q{)
			  WHEN 'composite' THEN bloom_contains(f, (i, 'v')::pair)
			  WHEN 'text' THEN bloom_contains(f, 'v' || i)
			  ELSE bloom_contains(f, i) END)
FROM f ORDER BY name};
my $support_functions = q{
SELECT opc.opcname, amp.amproc::regproc
FROM pg_opclass opc JOIN pg_am am ON am.oid = opc.opcmethod AND am.amname = 'bloomidx'
	JOIN pg_amproc amp ON amp.amprocfamily = opc.opcfamily
		AND amp.amproclefttype = opc.opcintype AND amp.amprocrighttype = opc.opcintype
ORDER BY 1, amp.amprocnum};
my @indexes = qw(up_row_bx up_row_tn_bx up_sliced_bx up_sliced_tn_bx ty_row_bx ty_sliced_bx
  se_row_bx se_sliced_bx);

# What the old cluster answers: by seq scan for the checks, through the
# indexes as a sanity check of the old cluster itself
my %before;
for my $table ('up_row', 'up_sliced')
{
	my @answers = bx_check_answers($old, $table, "PostgreSQL 15, $table", 'bx');
	$before{$table} = [ map { $_->[2] } @answers ];
}
$before{ty} = [ map { type_answer($old, $_, 0) } @type_conditions ];
is_deeply([ map { type_answer($old, $_, 1) } @type_conditions ], $before{ty},
	'PostgreSQL 15: the type indexes answer as a seq scan');
$before{se} = [ map { set_answer($old, $_, 0) } @set_conditions ];
is_deeply([ map { set_answer($old, $_, 1) } @set_conditions ], $before{se},
	'PostgreSQL 15: the indexes of sets answer as a seq scan');
$before{bytes} = $old->safe_psql('bx', $filter_bytes);
$before{filters} = $old->safe_psql('bx', $filter_answers);
$before{functions} = $old->safe_psql('bx', $support_functions);
like($before{functions}, qr/^bool_ops\|hashcharextended$/m,
	'PostgreSQL 15: bool_ops hashes with hashcharextended');
$old->stop;

# PostgreSQL 15.20 (and 17.12) record an option pg_attver on every column
# of every table, which 18.6 and 19rc1 do not know: their pg_upgrade fails
# on any table ("unrecognized parameter "pg_attver""), whatever the table
# holds.  Against such a major the option is taken out of the old catalog
# first, as an administrator would, so that the test measures what bloomidx
# does; a major that knows the option gets the catalog as it is.
my $probe = PostgreSQL::Test::Cluster->new('probe');
$probe->init(no_data_checksums => 1);
$probe->start;
my ($knows_attver) = $probe->psql('postgres',
	'CREATE TABLE attver_probe (a int); ALTER TABLE attver_probe ALTER COLUMN a SET (pg_attver = 1)');
$knows_attver = $knows_attver == 0;
$probe->stop;
$old->start;
my $old_attver = $old->safe_psql('bx',
	q{SELECT count(*) FROM pg_attribute WHERE attoptions::text LIKE '%pg_attver=%'});
if ($old_attver > 0 && !$knows_attver)
{
	diag "the new major does not know pg_attver: removing it from the old catalog";
	for my $db ('template1', 'postgres', 'bx')
	{
		$old->safe_psql($db, q{
			UPDATE pg_catalog.pg_attribute
			SET attoptions = NULLIF(ARRAY(SELECT o FROM unnest(attoptions) o
										  WHERE o NOT LIKE 'pg_attver=%'), '{}')
			WHERE attoptions::text LIKE '%pg_attver=%'});
	}
}
$old->stop;

# The answer of a condition on ty: through ty_row_bx or ty_sliced_bx
# (forced, and checked to be a bitmap scan on a bloomidx index) or by a
# seq scan; "N rows md5"
sub type_answer
{
	my ($node, $cond, $use_index) = @_;
	return $node->safe_psql('bx',
		"SELECT bx_result(\$q\$SELECT id FROM ty WHERE $cond\$q\$, "
		  . ($use_index ? 'true' : 'false') . ')');
}

my $n = 0;
for my $mode ('--copy', '--link')
{
	$n++;
	my $new = PostgreSQL::Test::Cluster->new("new$n");
	# The old cluster was made without data checksums, as PostgreSQL 15's
	# initdb makes them; 18's initdb turns them on unless told not to
	$new->init(no_data_checksums => 1);
	$new->append_conf('postgresql.conf', 'jit = off');

	my $cwd = getcwd();
	chdir $new->basedir or die "cannot chdir to " . $new->basedir;
	command_ok(
		[
			'pg_upgrade', '--no-sync',
			'--old-datadir' => $old->data_dir,
			'--new-datadir' => $new->data_dir,
			'--old-bindir' => $old->config_data('--bindir'),
			'--new-bindir' => $new->config_data('--bindir'),
			'--socketdir' => $new->host,
			'--old-port' => $old->port,
			'--new-port' => $new->port,
			$mode,
		],
		"pg_upgrade $mode from PostgreSQL 15");
	chdir $cwd;

	$new->start;
	my $label = "after pg_upgrade $mode";
	isnt($new->safe_psql('bx', 'SHOW server_version_num'), '',
		"$label: the new cluster runs");
	is($new->safe_psql('bx', "SELECT extversion FROM pg_extension WHERE extname = 'bloomidx'"),
		'1.3', "$label: bloomidx 1.3");

	for my $table ('up_row', 'up_sliced')
	{
		my @answers = bx_answers($new, $table, 'bx');
		for my $k (0 .. $#answers)
		{
			is($answers[$k][1], $before{$table}[$k],
				"$label, $table: index = seq scan before the upgrade for $answers[$k][0]");
			is($answers[$k][2], $before{$table}[$k],
				"$label, $table: seq scan = seq scan before the upgrade for $answers[$k][0]");
		}
	}
	is_deeply([ map { type_answer($new, $_, 1) } @type_conditions ], $before{ty},
		"$label: the type indexes answer as a seq scan did before");
	is_deeply([ map { set_answer($new, $_, 1) } @set_conditions ], $before{se},
		"$label: the indexes of sets answer as a seq scan did before");
	for my $index (@indexes)
	{
		is($new->safe_psql('bx', "SELECT bloomidx_check('$index', heapallindexed => true)"),
			'', "$label: bloomidx_check($index, heapallindexed) passes");
	}
	is($new->safe_psql('bx', $support_functions), $before{functions},
		"$label: the operator classes keep the functions the indexes were built with");
	is($new->safe_psql('bx', q{
		SELECT count(*) FROM pg_opclass opc JOIN pg_am am ON am.oid = opc.opcmethod
		WHERE am.amname = 'bloomidx' AND NOT amvalidate(opc.oid)}),
		'0', "$label: every operator class passes the validator");
	is($new->safe_psql('bx', $filter_bytes), $before{bytes},
		"$label: the filters have the same bytes");
	is($new->safe_psql('bx', $filter_answers), $before{filters},
		"$label: the filters answer as before");

	# The upgraded indexes take new rows, VACUUM and merges
	for my $table ('up_row', 'up_sliced')
	{
		$new->safe_psql('bx', bx_fill_sql($table, 150001, 220000));
		$new->safe_psql('bx', "DELETE FROM $table WHERE id % 89 = 0; VACUUM $table");
		$new->safe_psql('bx', "SELECT bloomidx_merge('${table}_bx')")
		  if $table eq 'up_sliced';
		bx_check_answers($new, $table, "$label, $table after inserts, VACUUM and a merge", 'bx');
		is($new->safe_psql('bx', "SELECT bloomidx_check('${table}_bx', heapallindexed => true)"),
			'', "$label, $table: bloomidx_check passes after inserts, VACUUM and a merge");
	}
	$new->safe_psql('bx',
		q{INSERT INTO ty SELECT i, i % 3 = 0, decode(md5((i % 40)::text), 'hex'), (i % 50)::text::cid,
			date '2024-01-01' + i % 60, '2024-01-01 00:00+00'::timestamptz + (i % 60) * interval '1 hour',
			(i % 50)::text::xid, (i % 50)::text::xid8
		  FROM generate_series(20001, 30000) i});
	is_deeply(
		[ map { type_answer($new, $_, 1) } @type_conditions ],
		[ map { type_answer($new, $_, 0) } @type_conditions ],
		"$label: the type indexes answer as a seq scan after inserts");
	$new->stop;
}

done_testing();
