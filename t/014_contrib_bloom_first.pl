# Copyright and license: see the project's LICENSE.

# One backend loads contrib/bloom's bloom.so first (it builds and inserts
# into a bloom index), then bloomidx.so: in that same session bloomidx
# indexes of both layouts are built, inserted into, emptied in part,
# vacuumed (freeing pages), refilled (reusing them) and checked, and they
# answer what a seq scan answers.  Both libraries define BloomNewBuffer;
# PostgreSQL loads them with RTLD_GLOBAL, so if bloomidx.so exported its
# helpers, its calls could bind to contrib/bloom's function, which reads
# another page format (see src/compat.h).

use strict;
use warnings;

use FindBin;
use lib $FindBin::RealBin;

use PostgreSQL::Test::Cluster;
use PostgreSQL::Test::Utils;
use Test::More;
use BloomidxTest;

my $node = PostgreSQL::Test::Cluster->new('main');
$node->init;
$node->start;

foreach my $layout ('row', 'sliced')
{
	my $table = $layout eq 'row' ? 'cr' : 'cs';
	$node->safe_psql('postgres', 'CREATE DATABASE ' . $table . 'db');

	# contrib/bloom first: its build and its insert path load bloom.so
	my $script = q{
CREATE EXTENSION bloom;
CREATE TABLE cb (a int, b int);
INSERT INTO cb SELECT g, g % 7 FROM generate_series(1, 3000) g;
CREATE INDEX cb_bloom ON cb USING bloom (a, b);
INSERT INTO cb SELECT g, g % 7 FROM generate_series(3001, 6000) g;
SET enable_seqscan = off;
SELECT 'contrib/bloom: ' || count(*) FROM cb WHERE a = 4321 AND b = 2;
RESET enable_seqscan;
SELECT 'libraries: ' ||
	(pg_read_file('/proc/self/maps') ~ '/bloom\.so') || ' ' ||
	(pg_read_file('/proc/self/maps') ~ '/bloomidx\.so');
};

	# then bloomidx, in the same session
	$script .= bx_schema_sql($table, layout => $layout);
	$script .= bx_fill_sql($table, 1, 6000);
	$script .= qq{
SELECT 'libraries: ' ||
	(pg_read_file('/proc/self/maps') ~ '/bloom\\.so') || ' ' ||
	(pg_read_file('/proc/self/maps') ~ '/bloomidx\\.so');
DELETE FROM $table WHERE id BETWEEN 1001 AND 5000;
VACUUM $table;
};
	$script .= bx_fill_sql($table, 6001, 10000);
	$script .= qq{
DELETE FROM $table WHERE id % 3 = 0;
VACUUM $table;
};
	$script .= bx_fill_sql($table, 10001, 12000);
	$script .= qq{
SELECT bloomidx_check('${table}_bx', true), bloomidx_check('${table}_tn_bx', true);
SELECT 'checked';
SELECT 'rows: ' || count(*) FROM $table;
};
	$script .= bx_answers_sql($table);

	my $out = $node->safe_psql($table . 'db', $script);

	like($out, qr/^contrib\/bloom: 1$/m,
		"$layout layout: the contrib/bloom index answers first");
	like($out, qr/^libraries: true false$/m,
		"$layout layout: the backend had loaded bloom.so, not yet bloomidx.so");
	like($out, qr/^libraries: true true$/m,
		"$layout layout: then the same backend loaded bloomidx.so");
	like($out, qr/^checked$/m,
		"$layout layout: bloomidx_check passes on both indexes after VACUUM and reuse");
	like($out, qr/^rows: 6000$/m, "$layout layout: the table holds the rows left");
	foreach my $a (bx_parse_answers($out))
	{
		is($a->[1], $a->[2], "$layout layout: index = seq scan for $a->[0]");
	}
}

# Nothing crashed on the way
ok(!$node->log_contains(qr/terminated by signal|server process .* was terminated/),
	'no backend crashed');

$node->stop;

done_testing();
