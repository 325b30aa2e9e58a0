
# Copyright and license: see the project's LICENSE.

# Bloom filters of every variant survive pg_dump and pg_restore: a table of
# plain, growing, counting, blocked, keyed and folded filters, filters of a
# composite type (stored by name) and of an enum (with a home database),
# is dumped and restored into another database; every row comes back with
# the same bytes (but the element type's OID, which is local), and the
# restored filters answer as the originals did.

use strict;
use warnings;

use PostgreSQL::Test::Cluster;
use PostgreSQL::Test::Utils;
use Test::More;

my $node = PostgreSQL::Test::Cluster->new('dump');
$node->init;
$node->start;

$node->safe_psql('postgres', 'CREATE DATABASE src');
$node->safe_psql('postgres', 'CREATE DATABASE dst');
$node->safe_psql('src', q{
CREATE EXTENSION bloomidx;
CREATE TYPE pair AS (a int, b text);
CREATE TYPE mood AS ENUM ('sad', 'ok', 'happy');
CREATE TABLE f (name text PRIMARY KEY, f bloomfilter);
INSERT INTO f VALUES
	('plain', (SELECT bloom_agg(i, 1000, 0.01) FROM generate_series(1, 500) i)),
	('sized for distinct', (SELECT bloom_agg(i) FROM generate_series(1, 500) i)),
	('growing', (SELECT bloom_agg(i, 50, 0.01, 2) FROM generate_series(1, 500) i)),
	('counting', (SELECT bloom_agg(i, bloom_empty(1000, 0.01, counting => true)) FROM generate_series(1, 500) i)),
	('blocked', (SELECT bloom_agg(i, bloom_empty(1000, 0.01, blocked => true)) FROM generate_series(1, 500) i)),
	('keyed', (SELECT bloom_agg(i, bloom_empty(1000, 0.01, key => '\x000102030405060708090a0b0c0d0e0f'::bytea),
								'\x000102030405060708090a0b0c0d0e0f'::bytea) FROM generate_series(1, 500) i)),
	('folded', bloom_fold((SELECT bloom_agg(i, bloom_empty_raw(65536, 7)) FROM generate_series(1, 500) i), 4)),
	('composite', (SELECT bloom_agg((i, 'v')::pair, 1000, 0.01) FROM generate_series(1, 500) i)),
	('enum', (SELECT bloom_agg(m) FROM unnest(enum_range(NULL::mood)) m)),
	('empty growing', bloom_empty(10, 0.1, growth => 3));
});

my $dump = $node->basedir . '/f.dump';
$node->command_ok([ 'pg_dump', '-Fc', '-d', $node->connstr('src'), '-f', $dump ],
	'pg_dump of the filters');
$node->command_ok([ 'pg_restore', '-d', $node->connstr('dst'), $dump ],
	'pg_restore of the filters');

# bytes without the element type's OID (offset 8, local to each database)
my $bytes = q{SELECT name, md5(substr(f::bytea, 1, 8) || substr(f::bytea, 13)) FROM f ORDER BY name};
is($node->safe_psql('dst', $bytes), $node->safe_psql('src', $bytes),
	'every filter restored with the same bytes');
is($node->safe_psql('dst', 'SELECT count(*) FROM f'), '10', 'all rows restored');

my $answers = q{
SELECT name, (SELECT count(*) FROM generate_series(1, 2000) i WHERE
	CASE name WHEN 'keyed' THEN bloom_contains(f, i, '\x000102030405060708090a0b0c0d0e0f'::bytea)
			  WHEN 'composite' THEN bloom_contains(f, (i, 'v')::pair)
			  ELSE bloom_contains(f, i) END)
FROM f WHERE name NOT IN ('enum') ORDER BY name};
is($node->safe_psql('dst', $answers), $node->safe_psql('src', $answers),
	'restored filters answer as the originals');

# the enum filter records its home database: it reads, but is refused here
my ($ret, $out, $err) = $node->psql('dst',
	q{SELECT bloom_contains(f, 'ok'::mood) FROM f WHERE name = 'enum'});
like($err, qr/outside the database that built it/,
	'a filter of an enum is refused outside its home database');
is($node->safe_psql('dst', q{SELECT (bloom_info(f)).element_type FROM f WHERE name = 'enum'}),
	'mood', 'and still reads there');

$node->stop;
done_testing();
