
# Copyright and license: see the project's LICENSE.

# Logical replication of a table of bloomfilter columns with REPLICA
# IDENTITY FULL: the subscriber finds the rows that UPDATE and DELETE
# change by comparing every column, bloomfilter's = among them.  Without
# an equality the apply worker looped on "could not identify an equality
# operator for type bloomfilter" at the first UPDATE, blocking the whole
# subscription.  Filters of a composite type compare by the type, not its
# name: the subscriber's own type has another OID.

use strict;
use warnings;

use PostgreSQL::Test::Cluster;
use PostgreSQL::Test::Utils;
use Test::More;

my $schema = q{
CREATE EXTENSION bloomidx;
CREATE TYPE rep_pt AS (a int, b text);
CREATE TABLE rep (id int, tag text, f bloomfilter, g bloomfilter);
ALTER TABLE rep REPLICA IDENTITY FULL;
};

my $pub = PostgreSQL::Test::Cluster->new('publisher');
$pub->init(allows_streaming => 'logical');
$pub->start;
my $sub = PostgreSQL::Test::Cluster->new('subscriber');
$sub->init;
$sub->start;

$pub->safe_psql('postgres', $schema);
# The subscriber's composite type gets another OID than the publisher's
$sub->safe_psql('postgres', 'CREATE TYPE rep_unused AS (x int)');
$sub->safe_psql('postgres', $schema);

$pub->safe_psql('postgres', q{
INSERT INTO rep
SELECT k, 't' || k,
	   (SELECT bloom_agg(i * k, 1000, 0.01) FROM generate_series(1, 100) i),
	   (SELECT bloom_agg((i, 'v' || k)::rep_pt, 100, 0.01) FROM generate_series(1, 20) i)
FROM generate_series(1, 20) k;
CREATE PUBLICATION rep_pub FOR TABLE rep;
});
$sub->safe_psql('postgres',
	"CREATE SUBSCRIPTION rep_sub CONNECTION '" . $pub->connstr . ' dbname=postgres'
	  . "' PUBLICATION rep_pub");
$sub->wait_for_subscription_sync($pub, 'rep_sub');

# The rows, as each side sees them: filters by what they answer (their
# bytes carry each side's OID of rep_pt)
my $rows = q{
SELECT id, tag,
	   (SELECT count(*) FROM generate_series(1, 3000) i WHERE bloom_contains(f, i)),
	   (SELECT count(*) FROM generate_series(1, 30) i WHERE bloom_contains(g, (i, 'v' || id)::rep_pt))
FROM rep ORDER BY id};
is($sub->safe_psql('postgres', $rows), $pub->safe_psql('postgres', $rows),
	'the initial copy has every row');

# UPDATE and DELETE find their rows on the subscriber through the filters
$pub->safe_psql('postgres', q{
UPDATE rep SET f = bloom_add(f, 2999), tag = tag || '+' WHERE id % 3 = 0;
UPDATE rep SET g = bloom_add(g, (0, 'zero')::rep_pt) WHERE id = 6;
DELETE FROM rep WHERE id % 4 = 1;
});
$pub->wait_for_catchup('rep_sub');
is($sub->safe_psql('postgres', $rows), $pub->safe_psql('postgres', $rows),
	'UPDATE and DELETE of rows identified by their filters are applied');
is($sub->safe_psql('postgres', 'SELECT count(*) FROM rep'), '15',
	'the deleted rows are gone on the subscriber');
is($sub->safe_psql('postgres',
	"SELECT count(*) FROM rep WHERE tag LIKE '%+'"), '5',
	'the updated rows are updated on the subscriber');
ok(!$sub->log_contains(qr/could not identify an equality operator/),
	'the apply worker found an equality for bloomfilter');

$sub->stop;
$pub->stop;
done_testing();
