
# Copyright and license: see the project's LICENSE.

# bloomidx_check on corrupted indexes.  With the server stopped, bytes of a
# page of an index file are overwritten; after a restart bloomidx_check
# must raise ERRCODE_INDEX_CORRUPTED (XX002) naming the block (or, for
# damage only the heap pass can see, the heap row), an index scan must
# fail or answer without crashing the server, and after the file is put
# back the index is sound again.
#
# The test knows only what is fixed about the page format: the page
# header, the special space at the end of every page (ntuples, maxtuples,
# flags, page_id: four uint16), the metapage's magic number and version at
# the start of its contents.  Heap TIDs on a data page are found by
# searching for the first rows' TIDs, in either order.

use strict;
use warnings;

use PostgreSQL::Test::Cluster;
use PostgreSQL::Test::Utils;
use Test::More;

use FindBin;
use lib $FindBin::RealBin;
use BloomidxTest;

my $node = PostgreSQL::Test::Cluster->new('corruption');
# Data checksums off, as initdb makes a cluster up to PostgreSQL 17 (18 and
# later turn them on): bloomidx's own checks meet the damage
# (t/019_corruption_checksums.pl: with checksums on, core reports it first)
$node->init(no_data_checksums => 1);
$node->start;

$node->safe_psql('postgres', q{
CREATE EXTENSION bloomidx;
CREATE TABLE ct (id int, a int, b text);
INSERT INTO ct SELECT g, g % 100, 'b' || (g % 37) FROM generate_series(1, 5000) g;
CREATE INDEX ct_bx ON ct USING bloomidx (a, b) WITH (layout = 'row');
});

my $blcksz = $node->safe_psql('postgres', 'SHOW block_size');
my $heap_blocks = $node->safe_psql('postgres',
	"SELECT pg_relation_size('ct') / $blcksz");
my ($maxtuples, $data_pages) = split /\|/, $node->safe_psql('postgres',
	"SELECT tuples_per_page, data_pages FROM bloomidx_stats('ct_bx')");
cmp_ok($data_pages, '>=', 3, 'the index has at least 3 data pages');
is($node->safe_psql('postgres', "SELECT bloomidx_check('ct_bx', true)"),
	'', 'bloomidx_check passes on the sound index');

my $file = $node->data_dir . '/'
  . $node->safe_psql('postgres', "SELECT pg_relation_filepath('ct_bx')");
$node->stop;
my $pristine = slurp_file($file);

# Offsets in a page
my $contents = 24;                   # MAXALIGN(SizeOfPageHeaderData)
my $pd_special = 16;                 # uint16 in the page header
my $ntuples = $blcksz - 8;           # the special space, last on the page
my $flags = $blcksz - 4;
my $page_id = $blcksz - 2;

# Offset of TID (0, 1) on data page 1: the index was built in heap order,
# so the page holds the TIDs (0,1), (0,2), (0,3) next to each other.
sub tid { return pack('SSS', $_[0] >> 16, $_[0] & 0xffff, $_[1]); }
my $page1 = substr($pristine, $blcksz, $blcksz);
my $tid01;
my $at = index($page1, tid(0, 1) . tid(0, 2) . tid(0, 3));
if ($at >= 0)
{
	$tid01 = $at;
}
else
{
	$at = index($page1, tid(0, 3) . tid(0, 2) . tid(0, 1));
	$tid01 = $at + 12 if $at >= 0;
}
ok(defined $tid01, 'found the TIDs of the first heap rows on data page 1');

# Overwrite bytes of block $blkno at $offset with $bytes in a copy of the
# pristine file
sub patched
{
	my ($image, $blkno, $offset, $bytes) = @_;
	return bx_patched($image, $blcksz, $blkno, $offset, $bytes);
}

# Install $image as the index file and check what bloomidx_check (with
# heapallindexed if asked) says; the pristine file is put back by the last
# case.
sub check_case
{
	my ($name, $image, $heapallindexed, $expected, %more) = @_;
	bx_corruption_case(
		node => $node, file => $file, index => 'ct_bx', name => $name,
		image => $image, heapallindexed => $heapallindexed,
		expected => $expected,
		scan => $more{scan} // "SELECT count(*) FROM ct WHERE a = 7 AND b = 'b7';",
		scan_expected => $more{scan_expected},
		statements => $more{statements});
	return;
}

my $corrupted = sub { qr/XX002: index "ct_bx" is corrupted at block $_[0]\b/ };

check_case('metapage magic', patched($pristine, 0, $contents, pack('L', 0xdeadbeef)),
	'false', $corrupted->(0));
check_case('metapage format version', patched($pristine, 0, $contents + 4, pack('S', 99)),
	'false', qr/0A000: bloomidx index "ct_bx" has a format this build cannot read/);
check_case('page id of a data page', patched($pristine, 2, $page_id, pack('S', 0x1234)),
	'false', $corrupted->(2));
check_case('metapage flag on a data page', patched($pristine, 2, $flags, pack('S', 1)),
	'false', $corrupted->(2));
check_case('unknown page flags', patched($pristine, 2, $flags, pack('S', 0x10)),
	'false', $corrupted->(2));
check_case('deleted page with tuples', patched($pristine, 1, $flags, pack('S', 2)),
	'false', $corrupted->(1));
check_case('more tuples than slots', patched($pristine, 1, $ntuples, pack('S', $maxtuples + 1)),
	'false', $corrupted->(1));
check_case('more slots than the signature length allows',
	patched($pristine, 1, $ntuples + 2, pack('S', $maxtuples + 1)),
	'false', $corrupted->(1));
# The special space is where page checks start: the buffer manager
# refuses a page whose header is out of bounds (data corrupted, XX001)
check_case('special space pointer past the page',
	patched($pristine, 2, $pd_special, pack('S', $blcksz + 8)),
	'false', qr/XX001: invalid page in block 2 of relation/);

SKIP:
{
	skip 'TIDs of the first heap rows not found on data page 1', 17
	  unless defined $tid01;

	check_case('heap TID with offset 0', patched($pristine, 1, $tid01, tid(0, 0)),
		'false', $corrupted->(1));
	# An index scan reports it too: before the check, the bitmap heap scan
	# skipped a block just past the end, and failed on one past the first
	# 1 GB segment (58P01, "could not open file", when prefetching it)
	for my $past ($heap_blocks + 5, 0x7ffffff0)
	{
		my $past_end = qr/XX002: index "ct_bx" is corrupted at block 1\b.*\n.*heap block $past, but table "ct" has $heap_blocks blocks/;
		check_case("heap TID at block $past, past the end of the table",
			patched($pristine, 1, $tid01, tid($past, 1)),
			'false', $past_end,
			scan => "SELECT count(*) FROM ct WHERE a = 1 AND b = 'b1';",
			scan_expected => $past_end);
	}

	# A TID pointing to another existing row passes the page checks; only
	# the heap pass notices that row (0,1) lost its signature
	my $repointed = patched($pristine, 1, $tid01, tid(0, 2));
	check_case('heap TID pointing to another row, structure only', $repointed,
		'false', '');
	check_case('heap TID pointing to another row, with heapallindexed', $repointed,
		'true', qr/XX002: index "ct_bx" lacks the signature of row \(0,1\) of table "ct"/);
}

# A zeroed page is a new, empty page as far as the format goes: its rows
# are missing, which the heap pass sees
my $zeroed = patched($pristine, 2, 0, "\0" x $blcksz);
check_case('zeroed data page, structure only', $zeroed, 'false', '');
check_case('zeroed data page, with heapallindexed', $zeroed, 'true',
	qr/XX002: index "ct_bx" lacks the signature of row \(\d+,\d+\) of table "ct"/);

# Truncated to its metapage: the free list names pages that are gone
check_case('index truncated to its metapage',
	substr($pristine, 0, $blcksz), 'false',
	qr/XX002: index "ct_bx" is corrupted at block 0\b.*\n.*Free list entry/);

# Metapage fields every reader and writer checks (offsets in the
# metapage's contents: see BloomMetaPageData in src/core/page.h, and
# BloomRowMetaData in src/layout/row/row.h for the free list)
my %meta = (layout => 6, bitsPerColumn => 16, nFree => 104, freeStart => 106,
	freePages => 108);
# (rolled back, so that the table keeps the rows of the pristine index)
my $insert = q{BEGIN; INSERT INTO ct VALUES (5001, 7, 'b7'); ROLLBACK;};
my $vacuum = q{DELETE FROM ct WHERE id = 2; VACUUM ct;};

# A free list naming the metapage: an insert would lock the metapage it
# holds, and wait forever
check_case('free list naming the metapage',
	patched($pristine, 0, $contents + $meta{nFree}, pack('S S L', 1, 0, 0)),
	'false', $corrupted->(0),
	statements => [ [ $insert, $corrupted->(0) ] ]);
check_case('metapage pd_lower not covering its contents',
	patched($pristine, 0, 12, pack('S', 24)),
	'false', $corrupted->(0), scan_expected => $corrupted->(0),
	statements => [ [ $insert, $corrupted->(0) ] ]);
check_case('no bits for column 1',
	patched($pristine, 0, $contents + $meta{bitsPerColumn}, pack('S', 0)),
	'false', $corrupted->(0), scan_expected => $corrupted->(0),
	statements => [ [ $insert, $corrupted->(0) ], [ $vacuum, $corrupted->(0) ] ]);

# A data page whose pd_lower is too small but in order: generic WAL would
# log, and keep, only the signatures below it
my $pd_lower1 = unpack('S', substr($pristine, $blcksz + 12, 2));
check_case('data page pd_lower below its signatures',
	patched($pristine, 1, 12, pack('S', $pd_lower1 - 8)),
	'false', $corrupted->(1),
	statements => [ [ $vacuum, $corrupted->(1) ] ]);

SKIP:
{
	skip 'TIDs of the first heap rows not found on data page 1', 5
	  unless defined $tid01;

	# A scan meets it: XX002 naming the block, not the bitmap's XX000
	check_case('heap TID with an offset past any heap page',
		patched($pristine, 1, $tid01, tid(0, 2000)),
		'false', $corrupted->(1),
		scan => "SELECT count(*) FROM ct WHERE a = 1 AND b = 'b1';",
		scan_expected => $corrupted->(1));
}

# A row index relabelled sliced: its data pages are on no pending list, so
# no row is reachable; the heap pass sees them all missing
check_case('row index relabelled sliced',
	patched($pristine, 0, $contents + $meta{layout}, pack('S', 2)),
	'true', qr/XX002: index "ct_bx" lacks the signature of row/);

# A data page flagged as a page of a sliced index's kind: a row index has
# none, so scans, inserts and VACUUM report it rather than skip its rows
my $stripe_kind = qr/XX002: index "ct_bx" is corrupted at block 2\b.*\n.*DETAIL:  Page flags 0x0010 are of a kind of page the row layout does not have\./;
check_case('data page flagged as a stripe page',
	patched($pristine, 2, $flags, pack('S', 0x10)),
	'false', $stripe_kind, scan_expected => $stripe_kind,
	statements => [ [ $vacuum, $stripe_kind ] ]);

# Put back, the index is sound
check_case('pristine file put back', $pristine, 'true', '');

done_testing();
