
# Copyright (c) 2026, bloomidx contributors

# The element counts of columns of sets in the metapage (page.h, after the
# layouts' area): an index built before they were recorded, made here by
# cutting them off a new index's metapage (pd_lower moved back over them,
# their bytes zeroed, as such an index's page is), keeps working as
# before: the same shape, the same estimates (its query_elements read from
# its options), the same answers; bloomidx_check finds nothing corrupt and
# compares the data with the default it was sized for; REINDEX records
# the counts.  Counts on a metapage that does not cover them, or on a
# column that is no column of sets, are corruption.

use strict;
use warnings;

use PostgreSQL::Test::Cluster;
use PostgreSQL::Test::Utils;
use Test::More;

use FindBin;
use lib $FindBin::RealBin;
use BloomidxTest;

my $node = PostgreSQL::Test::Cluster->new('set_elements_legacy');
$node->init(no_data_checksums => 1);
$node->start;

$node->safe_psql('postgres', q{
CREATE EXTENSION bloomidx;
CREATE TABLE lg (id int, a int, p text);
INSERT INTO lg SELECT i, i % 10,
	format('usr/share/doc/package%s/examples/directory%s/subdirectory/file%s.txt', i % 211, i % 17, i)
FROM generate_series(1, 4000) i;
CREATE INDEX lg_bx ON lg USING bloomidx (a, p text_trgm_ops (query_elements = 5));
});

my $blcksz = $node->safe_psql('postgres', 'SHOW block_size');
my $shape_sql = "SELECT signature_bits, bits_per_column FROM bloomidx_stats('lg_bx')";
my $estimate_sql = "SELECT round(false_positive_rate::numeric, 10) FROM bloomidx_estimate('lg_bx', '{p}')";
my $answers_sql = q{
SET enable_seqscan = off;
SELECT count(*), sum(id) FROM lg WHERE p LIKE '%package17/%';
SELECT count(*), sum(id) FROM lg WHERE a = 3 AND p LIKE '%file123.%';
RESET enable_seqscan;
SET enable_bitmapscan = off;
SELECT count(*), sum(id) FROM lg WHERE p LIKE '%package17/%';
SELECT count(*), sum(id) FROM lg WHERE a = 3 AND p LIKE '%file123.%';
};
my $shape = $node->safe_psql('postgres', $shape_sql);
my $estimate = $node->safe_psql('postgres', $estimate_sql);
my @answers = split /\n/, $node->safe_psql('postgres', $answers_sql);
is_deeply([ @answers[ 0, 1 ] ], [ @answers[ 2, 3 ] ],
	'the index answers as a sequential scan');
my ($stderr, $ret);
$node->psql('postgres', "SELECT bloomidx_check('lg_bx', true)", stderr => \$stderr);
is($stderr, '', 'bloomidx_check says nothing of the measured index');

my $file = $node->data_dir . '/'
  . $node->safe_psql('postgres', "SELECT pg_relation_filepath('lg_bx')");
$node->stop;
my $pristine = slurp_file($file);

# The counts: 32 uint32 elements, 32 uint16 query elements, the measured
# columns and the load factor (a float4), the 200 bytes before the summary groups'
# range, which starts 5,528 bytes into the metapage's contents (after the
# 24-byte page header; src/core/page.h) and is the last the metapage
# covers (zero here: no stripe, no group)
my $counts_size = 4 * 32 + 2 * 32 + 4 + 4;
my $pd_lower = unpack('S', substr($pristine, 12, 2));
my $base = 24 + 5528 - $counts_size;
is(substr($pristine, $base + $counts_size, $pd_lower - $base - $counts_size),
	"\0" x ($pd_lower - $base - $counts_size), 'the summary groups\' range is zero');
isnt(substr($pristine, $base, $counts_size), "\0" x $counts_size,
	'the new index records its counts');
my $legacy = bx_patched($pristine, $blcksz, 0, 12, pack('S', $base));
$legacy = bx_patched($legacy, $blcksz, 0, $base, "\0" x $counts_size);

# The index of before: same shape, estimates and answers
bx_write_image($file, $legacy);
$node->start;
is($node->safe_psql('postgres', $shape_sql), $shape, 'legacy index: same shape');
# The same estimate, but for the load factor the new index records (how
# much more the paths' spread of lengths loads its signatures than their
# mean fill says), which the legacy one reads as 1: a few percent here,
# where a query_elements taken wrongly would move it by orders of magnitude
my $legacy_estimate = $node->safe_psql('postgres', $estimate_sql);
cmp_ok(abs($legacy_estimate - $estimate), '<=', 0.05 * $estimate,
	'legacy index: the same estimate within 5% (query_elements from its options)');
cmp_ok($legacy_estimate, '<=', $estimate,
	'legacy index: no load factor, no higher estimate');
is_deeply([ split /\n/, $node->safe_psql('postgres', $answers_sql) ], \@answers,
	'legacy index: same answers');
$node->safe_psql('postgres',
	"INSERT INTO lg VALUES (0, 3, 'usr/share/doc/package17/examples/new/file123.txt')");
is($node->safe_psql('postgres',
	"SET enable_seqscan = off; SELECT count(*) FROM lg WHERE a = 3 AND p LIKE '%package17/examples/new%'"),
	'1', 'legacy index: a new row is found');

# bloomidx_check: sound, but sized for the default 32 elements, not the
# paths' 71: a NOTICE that says to REINDEX
($ret, undef, $stderr) = $node->psql('postgres', "SELECT bloomidx_check('lg_bx', true)");
is($ret, 0, 'legacy index: bloomidx_check passes');
like($stderr, qr/NOTICE:  column 2 of index "lg_bx" has 70\.\d elements per value, but the index was sized for 32/,
	'legacy index: bloomidx_check compares the data with the default');
like($stderr, qr/HINT:  REINDEX the index/, 'legacy index: the hint says to REINDEX');

# REINDEX measures and records again
$node->safe_psql('postgres', 'REINDEX INDEX lg_bx');
is($node->safe_psql('postgres', $shape_sql), $shape, 'reindexed: the measured shape');
$node->psql('postgres', "SELECT bloomidx_check('lg_bx', true)", stderr => \$stderr);
is($stderr, '', 'reindexed: bloomidx_check says nothing');
$file = $node->data_dir . '/'
  . $node->safe_psql('postgres', "SELECT pg_relation_filepath('lg_bx')");
$node->stop;
$pristine = slurp_file($file);
is(unpack('S', substr($pristine, 12, 2)), $pd_lower, 'reindexed: pd_lower covers the counts');

# Corruption: counts past a pd_lower that ends before them, counts on the
# equality column, one count without the other, a measured column that is
# no column of sets
my @cases = (
	[ 'counts past pd_lower', bx_patched($legacy, $blcksz, 0, $base + 4, pack('L', 71)),
	  qr/Column 2 records 71 elements and 0 query elements, but the metapage's pd_lower ends before them/ ],
	[ 'counts on an equality column', bx_patched($pristine, $blcksz, 0, $base, pack('L', 5)),
	  qr/Column 1 records 5 elements and 0 query elements, but it is not a column of sets/ ],
	[ 'elements without query elements',
	  bx_patched($pristine, $blcksz, 0, $base + 4 * 32 + 2, pack('S', 0)),
	  qr/Column 2 records 71 elements and 0 query elements, not both 0 or between 1 and/ ],
	[ 'a measured equality column',
	  bx_patched($pristine, $blcksz, 0, $base + 6 * 32, pack('L', 3)),
	  qr/Measured columns 0x00000003 are not within the columns of sets 0x00000002\./ ],
	[ 'a load factor below 1',
	  bx_patched($pristine, $blcksz, 0, $base + 6 * 32 + 4, pack('f', 0.5)),
	  qr/Load factor 0\.5 is not 0, or between 1 and 1000 with a measured column \(measured columns 0x00000002\)\./ ],
	[ 'a load factor without a measured column',
	  bx_patched(bx_patched($pristine, $blcksz, 0, $base + 6 * 32, pack('L', 0)),
		$blcksz, 0, $base + 6 * 32 + 4, pack('f', 2)),
	  qr/Load factor 2 is not 0, or between 1 and 1000 with a measured column \(measured columns 0x00000000\)\./ ]);
foreach my $case (@cases)
{
	my ($name, $image, $expected) = @$case;
	bx_write_image($file, $image);
	$node->start;
	($ret, undef, $stderr) = $node->psql('postgres', "SELECT bloomidx_check('lg_bx')");
	isnt($ret, 0, "$name: bloomidx_check fails");
	like($stderr, qr/ERROR:  index "lg_bx" (is corrupted|contains corrupted page)/i, "$name: corruption reported")
	  or diag($stderr);
	like($stderr, $expected, "$name: the problem named") or diag($stderr);
	$node->stop;
}

bx_write_image($file, $pristine);
$node->start;
is($node->safe_psql('postgres', "SELECT bloomidx_check('lg_bx', true)"), '',
	'the sound index passes again');
$node->stop;

done_testing();
