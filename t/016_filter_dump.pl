
# Copyright and license: see the project's LICENSE.

# Bloom filters of every variant survive pg_dump and pg_restore, whatever
# was renamed before the dump.  A table of plain, growing, counting,
# blocked, keyed and folded filters, filters of composite types (stored by
# name) and of enums (hashed by label), is dumped after every type and
# schema those filters use was renamed or moved: a composite type renamed,
# one moved to another schema, a schema renamed, enums renamed and moved.
# The dump, in the custom format restored by pg_restore into a fresh
# database of another cluster, in plain SQL restored by psql, and the table
# copied in binary, gives back every row, with the bytes the output wrote
# (the types' current names) but the element type's OID, which is local;
# and the restored filters answer as the originals did.  A filter of an
# enum built in the other database, whose labels have other OIDs, has the
# same bits.  A filter bound to the database that built it (a filter of an
# enum as bloomidx 1.0 built it) stops the dump with an error.  The forms
# of bloom_agg made by bloom_agg_add_type are dumped, and DROP EXTENSION
# drops them.

use strict;
use warnings;

use FindBin;
use lib $FindBin::RealBin;

use PostgreSQL::Test::Cluster;
use PostgreSQL::Test::Utils;
use Test::More;
use BloomidxTest;

my $node = PostgreSQL::Test::Cluster->new('dump');
$node->init;
$node->start;
my $other = PostgreSQL::Test::Cluster->new('restore');
$other->init;
$other->start;

my $key = bx_filter_key();
my $variants = bx_filter_variants_sql(1);

$node->safe_psql('postgres', 'CREATE DATABASE src');
$node->safe_psql('src', qq{
CREATE EXTENSION bloomidx;
CREATE SCHEMA s1;
CREATE SCHEMA s3;
CREATE TYPE s1.pt AS (x int, y int);
CREATE TYPE s1.pair AS (a int, b text);
CREATE TYPE s3.cell AS (t text);
CREATE TYPE s1.mood AS ENUM ('sad', 'ok', 'happy', 'ecstatic');
CREATE TYPE color AS ENUM ('red', 'green', 'blue');
CREATE TABLE f (name text PRIMARY KEY, kind text, f bloomfilter);
INSERT INTO f VALUES
$variants,
	('composite renamed', 'pt', (SELECT bloom_agg((i, i * 2)::s1.pt, 1000, 0.01) FROM generate_series(1, 500) i)),
	('composite renamed, growing', 'pt', (SELECT bloom_agg((i, i * 2)::s1.pt, 50, 0.01, 2) FROM generate_series(1, 500) i)),
	('composite moved', 'pair', (SELECT bloom_agg((i, 'v')::s1.pair) FROM generate_series(1, 500) i)),
	('composite moved, keyed', 'pair keyed', (SELECT bloom_agg((i, 'v')::s1.pair, bloom_empty(1000, 0.01, key => $key), $key) FROM generate_series(1, 500) i)),
	('composite in renamed schema', 'cell', (SELECT bloom_agg(ROW(i::text)::s3.cell, 1000, 0.01) FROM generate_series(1, 500) i)),
	('enum renamed', 'mood', (SELECT bloom_agg(m) FROM unnest(enum_range(NULL::s1.mood)) m WHERE m <> 'ecstatic')),
	('enum renamed, sized', 'mood', (SELECT bloom_agg(m, 100, 0.001) FROM unnest(enum_range(NULL::s1.mood)) m WHERE m <> 'ecstatic')),
	('enum renamed, counting', 'mood', (SELECT bloom_agg(m, bloom_empty(100, 0.001, counting => true)) FROM unnest(enum_range(NULL::s1.mood)) m WHERE m <> 'ecstatic')),
	('enum renamed, arrays', 'mood[]', (SELECT bloom_agg(ARRAY[m, m], 100, 0.001) FROM unnest(enum_range(NULL::s1.mood)) m WHERE m <> 'ecstatic')),
	('enum moved', 'color', (SELECT bloom_agg(c, 100, 0.001) FROM unnest(enum_range(NULL::color)) c WHERE c <> 'blue')),
	('empty growing', 'int', bloom_empty(10, 0.1, growth => 3)),
	('empty', 'int', bloom_empty(10));
});
my $nrows = $node->safe_psql('src', 'SELECT count(*) FROM f');

# Rename every type and schema the filters use
$node->safe_psql('src', q{
ALTER TYPE s1.pt RENAME TO point;
ALTER TYPE s1.mood RENAME TO feeling;
CREATE SCHEMA s2;
ALTER TYPE s1.pair SET SCHEMA s2;
ALTER TYPE color SET SCHEMA s2;
ALTER SCHEMA s1 RENAME TO s9;
ALTER SCHEMA s3 RENAME TO s4;
});

# "schema.type" as a filter's bytes name its type
my $names = q{convert_from(substr(b, 59, get_byte(b, 56)), 'UTF8') || '.' ||
	convert_from(substr(b, 59 + get_byte(b, 56), get_byte(b, 57)), 'UTF8')};
is( $node->safe_psql(
		'src', qq{
SELECT string_agg(n, ' ' ORDER BY n COLLATE "C")
FROM (SELECT DISTINCT $names AS n FROM (SELECT f::bytea AS b FROM f WHERE get_byte(f::bytea, 56) > 0) s) s}),
	'public.color s1._mood s1.mood s1.pair s1.pt s3.cell',
	'the stored bytes keep the names the types had');
is( $node->safe_psql(
		'src', qq{
SELECT string_agg(n, ' ' ORDER BY n COLLATE "C")
FROM (SELECT DISTINCT $names AS n FROM (SELECT decode(substr(f::text, 3), 'hex') AS b FROM f WHERE get_byte(f::bytea, 56) > 0) s) s}),
	's2.color s2.pair s4.cell s9._feeling s9.feeling s9.point',
	'the output names the types as they are now');

# What each filter answers, over a range of values of its type
my $answers = qq{
SELECT name, CASE kind
	WHEN 'int' THEN (SELECT count(*) FROM generate_series(1, 2000) i WHERE bloom_contains(f, i))::text
	WHEN 'int keyed' THEN (SELECT count(*) FROM generate_series(1, 2000) i WHERE bloom_contains(f, i, $key))::text
	WHEN 'pt' THEN (SELECT count(*) FROM generate_series(1, 2000) i WHERE bloom_contains(f, (i, i * 2)::s9.point))::text
	WHEN 'pair' THEN (SELECT count(*) FROM generate_series(1, 2000) i WHERE bloom_contains(f, (i, 'v')::s2.pair))::text
	WHEN 'pair keyed' THEN (SELECT count(*) FROM generate_series(1, 2000) i WHERE bloom_contains(f, (i, 'v')::s2.pair, $key))::text
	WHEN 'cell' THEN (SELECT count(*) FROM generate_series(1, 2000) i WHERE bloom_contains(f, ROW(i::text)::s4.cell))::text
	WHEN 'mood' THEN (SELECT string_agg(m::text, ',' ORDER BY m) FROM unnest(enum_range(NULL::s9.feeling)) m WHERE bloom_contains(f, m))
	WHEN 'mood[]' THEN (SELECT string_agg(m::text, ',' ORDER BY m) FROM unnest(enum_range(NULL::s9.feeling)) m WHERE (bloom_contains(f, ARRAY[m, m]))[1])
	WHEN 'color' THEN (SELECT string_agg(c::text, ',' ORDER BY c) FROM unnest(enum_range(NULL::s2.color)) c WHERE bloom_contains(f, c))
	END
FROM f ORDER BY name};
my $answers_before = $node->safe_psql('src', $answers);
like($answers_before, qr/^enum renamed\|sad,ok,happy$/m,
	'before the dump, a filter of an enum holds its labels');
like($answers_before, qr/^enum moved\|red,green$/m,
	'and so does one of a moved enum');
is( $node->safe_psql(
		'src', q{
SELECT count(*) FROM f, generate_series(1, 500) i
WHERE name = 'composite renamed' AND NOT bloom_contains(f, (i, i * 2)::s9.point)}),
	'0', 'and one of a renamed composite its values');

# The bytes the output writes, but the element type's OID (offset 8, local
# to each database); and the bytes a restored table stores
my $output_bytes = q{
SELECT name, md5(substr(b, 1, 8) || substr(b, 13))
FROM (SELECT name, decode(substr(f::text, 3), 'hex') AS b FROM f) s ORDER BY name};
my $stored_bytes = q{
SELECT name, md5(substr(f::bytea, 1, 8) || substr(f::bytea, 13)) FROM f ORDER BY name};
my $bytes_before = $node->safe_psql('src', $output_bytes);

# Check a restored database: every row, the bytes, the answers, and that
# its filters of enums can be extended and combined there
sub check_restored
{
	my ($n, $db, $how) = @_;

	is($n->safe_psql($db, 'SELECT count(*) FROM f'), $nrows, "$how: every row restored");
	is($n->safe_psql($db, $stored_bytes), $bytes_before,
		"$how: every filter restored with the bytes the output wrote");
	is($n->safe_psql($db, $answers), $answers_before,
		"$how: the restored filters answer as the originals");
	is( $n->safe_psql(
			$db, q{
SELECT bloom_contains(bloom_add(f, 'ecstatic'::s9.feeling), 'ecstatic'::s9.feeling),
	   bloom_contains(f | f, 'ok'::s9.feeling),
	   bloom_contains(bloom_remove(c, 'ok'::s9.feeling), 'ok'::s9.feeling),
	   bloom_contains(bloom_union_agg(f) OVER (), 'sad'::s9.feeling)
FROM (SELECT f FROM f WHERE name = 'enum renamed, sized') a,
	 (SELECT f AS c FROM f WHERE name = 'enum renamed, counting') b}),
		't|t|f|t',
		"$how: a filter of an enum is extended, combined and reduced there");
	return;
}

# Custom format, restored into a fresh database of another cluster
my $dump = $node->basedir . '/f.dump';
$node->command_ok([ 'pg_dump', '-Fc', '-d', $node->connstr('src'), '-f', $dump ],
	'pg_dump -Fc after the renames');
$other->safe_psql('postgres', 'CREATE DATABASE dst');
$other->command_ok(
	[ 'pg_restore', '--exit-on-error', '-d', $other->connstr('dst'), $dump ],
	'pg_restore into a fresh database of another cluster');
check_restored($other, 'dst', 'custom format');

# Plain SQL, restored by psql into a fresh database
my $plain = $node->basedir . '/f.sql';
$node->command_ok([ 'pg_dump', '-Fp', '-d', $node->connstr('src'), '-f', $plain ],
	'pg_dump -Fp after the renames');
$node->safe_psql('postgres', 'CREATE DATABASE dst_plain');
$node->command_ok(
	[ 'psql', '-X', '-q', '-v', 'ON_ERROR_STOP=1', '-d', $node->connstr('dst_plain'), '-f', $plain ],
	'the plain dump restores with psql');
check_restored($node, 'dst_plain', 'plain format');

# COPY in binary, into the schema of the dump
my $bin = $node->basedir . '/f.bin';
$node->safe_psql('src', "COPY f TO '$bin' (FORMAT binary)");
$other->safe_psql('postgres', 'CREATE DATABASE dst_bin');
$other->command_ok(
	[ 'pg_restore', '--exit-on-error', '--schema-only', '-d', $other->connstr('dst_bin'), $dump ],
	'the schema of the dump restores');
$other->safe_psql('dst_bin', "COPY f FROM '" . $bin . "' (FORMAT binary)");
check_restored($other, 'dst_bin', 'binary COPY');

# The labels have other OIDs there, and a filter of them built there has
# the bits of one built here
my $label_oids = q{
SELECT string_agg(oid::text, ',' ORDER BY enumsortorder) FROM pg_enum
WHERE enumtypid = 's9.feeling'::regtype};
isnt($other->safe_psql('dst', $label_oids), $node->safe_psql('src', $label_oids),
	'the restored enum has other label OIDs');
my $fresh = q{
SELECT md5(substr(f::bytea, 1, 8) || substr(f::bytea, 13))
FROM (SELECT bloom_agg(m, 100, 0.001) AS f FROM unnest(enum_range(NULL::s9.feeling)) m) s};
is($other->safe_psql('dst', $fresh), $node->safe_psql('src', $fresh),
	'a filter of the enum built in either database has the same bits');

# A filter of an enum as bloomidx 1.0 built it: the OIDs of its labels
# hashed (hash scheme 1), this database its home.  It works here, and
# stops a dump with a clear error until it is built again.
$node->safe_psql('postgres', 'CREATE DATABASE legacy');
$node->safe_psql('legacy', q{
CREATE EXTENSION bloomidx;
CREATE TYPE mood AS ENUM ('sad', 'ok', 'happy');
CREATE FUNCTION le(n bigint, len int) RETURNS bytea
LANGUAGE sql AS $$
	SELECT decode(string_agg(lpad(to_hex((n >> (8 * i)) & 255), 2, '0'), '' ORDER BY i), 'hex')
	FROM generate_series(0, len - 1) i
$$;
CREATE TABLE f (name text, f bloomfilter);
INSERT INTO f
SELECT 'legacy', (substr(o::bytea, 1, 8) || le('mood'::regtype::oid::bigint, 4) || substr(o::bytea, 13, 28) ||
		le((SELECT system_identifier FROM pg_control_system()), 8) ||
		le((SELECT oid::bigint FROM pg_database WHERE datname = current_database()), 4) ||
		le('mood'::regtype::oid::bigint, 4) || '\x0604'::bytea || convert_to('publicmood', 'UTF8') ||
		substr(o::bytea, 59))::bloomfilter
FROM (SELECT bloom_agg(oid, 100, 0.001) AS o FROM pg_enum WHERE enumtypid = 'mood'::regtype) s;
});
is( $node->safe_psql(
		'legacy',
		q{SELECT string_agg(m::text, ',' ORDER BY m) FROM f, unnest(enum_range(NULL::mood)) m WHERE bloom_contains(f, m)}),
	'sad,ok,happy',
	'a filter of label OIDs works in its home database');
my ($ret, $out, $err) = $node->psql('legacy', 'SELECT f FROM f');
like($err, qr/cannot output a bloom filter of type mood that is bound to the database that built it/,
	'its output is refused');
my $legacy_dump = $node->basedir . '/legacy.dump';
$node->command_fails_like(
	[ 'pg_dump', '-Fc', '-d', $node->connstr('legacy'), '-f', $legacy_dump ],
	qr/cannot output a bloom filter of type (public\.)?mood that is bound to the database that built it/,
	'pg_dump of it fails, with the error of the output');
$node->safe_psql('legacy', q{
UPDATE f SET f = (SELECT bloom_agg(m, 100, 0.001) FROM unnest(enum_range(NULL::mood)) m)});
$node->command_ok([ 'pg_dump', '-Fc', '-d', $node->connstr('legacy'), '-f', $legacy_dump ],
	'built again, it dumps');

# The forms of bloom_agg that bloom_agg_add_type makes for a type are not
# members of the extension: pg_dump dumps them and the restore makes them
# again, after the type.  They depend on the extension: DROP EXTENSION
# drops them without CASCADE, and keeps the type.
$node->safe_psql('postgres', 'CREATE DATABASE forms');
$node->safe_psql('forms', q{
CREATE EXTENSION bloomidx;
CREATE TYPE fmood AS ENUM ('low', 'high');
SELECT bloom_agg_add_type('fmood');
CREATE TABLE fm (m fmood);
INSERT INTO fm VALUES ('low'), ('high');
});
my $forms = q{SELECT count(*) FROM pg_proc WHERE 'fmood'::regtype = ANY (proargtypes)};
is($node->safe_psql('forms', $forms), '6',
	'bloom_agg_add_type makes three aggregates and their transition functions');
my $forms_dump = $node->basedir . '/forms.dump';
$node->command_ok([ 'pg_dump', '-Fc', '-d', $node->connstr('forms'), '-f', $forms_dump ],
	'pg_dump of a database with the forms of a type');
$other->safe_psql('postgres', 'CREATE DATABASE forms');
$other->command_ok(
	[ 'pg_restore', '--exit-on-error', '-d', $other->connstr('forms'), $forms_dump ],
	'pg_restore of it');
is($other->safe_psql('forms', $forms), '6', 'the restore makes the forms again');
is( $other->safe_psql(
		'forms', q{SELECT bloom_contains(bloom_agg(m, 100, 0.01), 'high'::fmood) FROM fm}),
	't', 'the restored sized form builds a filter');
note 'restored forms depending on the extension: ' . $other->safe_psql('forms', q{
SELECT string_agg(objid::regprocedure::text, ', ' ORDER BY objid) FROM pg_depend
WHERE refclassid = 'pg_extension'::regclass AND deptype = 'x'});
my ($rc, $out, $err) = $node->psql('forms', 'DROP EXTENSION bloomidx');
is($err, '', 'DROP EXTENSION without CASCADE');
is($node->safe_psql('forms', $forms), '0', 'drops the forms');
is($node->safe_psql('forms', 'SELECT count(*) FROM fm'), '2', 'and keeps the type and its table');

$node->stop;
$other->stop;
done_testing();
