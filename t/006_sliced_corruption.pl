
# Copyright and license: see the project's LICENSE.

# Corruption of the sliced layout's pages.  With the server stopped, a
# slice, TID-map, stripe or stripe-list page of a sliced index is damaged;
# after a restart bloomidx_check (with heapallindexed, which reads the
# slices back) and index scans must raise ERRCODE_INDEX_CORRUPTED (XX002)
# naming the block, without crashing the server, and the pristine file put
# back is sound again.
#
# Pages are told apart by the flags of their special space (the last four
# uint16 of a page: ntuples, maxtuples, flags, page_id): slice 0x04, TID
# map 0x08, stripe 0x10, stripe list 0x40.  On those pages ntuples (low
# half) and maxtuples (high half) hold the page's tag: the number of its
# stripe (of its place in the metapage's list, for a stripe-list page).
# A TID-map page starts, after the 24-byte page header, with uint16
# firstRow, uint16 nrows, uint8 blockBits, uint8 offsetBits, and packs
# nrows TIDs of blockBits + offsetBits bits each.
#
# The index holds 5,000 rows, fewer than a stripe, which a build leaves in
# pending pages; bloomidx_merge() moves them into one stripe (number 0) and
# one stripe-list page, and 10 more rows then wait on a pending page.  The
# rows are numbered in heap order, so the row of id 7, which the index
# scan's query matches, is row 6: the first TID map holds it, and every
# slice whose bit 6 is set is one that query reads.

use strict;
use warnings;

use PostgreSQL::Test::Cluster;
use PostgreSQL::Test::Utils;
use Test::More;

use FindBin;
use lib $FindBin::RealBin;
use BloomidxTest;

my $node = PostgreSQL::Test::Cluster->new('sliced_corruption');
# Data checksums off, as initdb makes a cluster up to PostgreSQL 17 (18 and
# later turn them on): bloomidx's own checks meet the damage
# (t/019_corruption_checksums.pl: with checksums on, core reports it first)
$node->init(no_data_checksums => 1);
$node->start;

$node->safe_psql('postgres', q{
CREATE EXTENSION bloomidx;
CREATE TABLE cs (id int, a int, b text);
INSERT INTO cs SELECT g, g % 100, 'b' || (g % 37) FROM generate_series(1, 5000) g;
CREATE INDEX cs_bx ON cs USING bloomidx (a, b) WITH (layout = sliced);
SELECT bloomidx_merge('cs_bx');
INSERT INTO cs SELECT g, g % 100, 'b' || (g % 37) FROM generate_series(5001, 5010) g;
});
is($node->safe_psql('postgres', "SELECT pending_pages FROM bloomidx_stats('cs_bx')"),
	'1', 'the last rows wait on a pending page');
is($node->safe_psql('postgres', "SELECT bloomidx_check('cs_bx', true)"),
	'', 'bloomidx_check passes on the sound index');

my $blcksz = $node->safe_psql('postgres', 'SHOW block_size');
my $file = $node->data_dir . '/'
  . $node->safe_psql('postgres', "SELECT pg_relation_filepath('cs_bx')");
$node->stop;
my $pristine = slurp_file($file);

# The first block whose flags are $flag
sub first_page_flagged
{
	my ($flag) = @_;
	for my $blkno (1 .. length($pristine) / $blcksz - 1)
	{
		my $flags = unpack('S', substr($pristine, ($blkno + 1) * $blcksz - 4, 2));
		return $blkno if $flags == $flag;
	}
	return undef;
}
my %block = (slice => first_page_flagged(0x04), tidmap => first_page_flagged(0x08),
	stripe => first_page_flagged(0x10), 'stripe-list' => first_page_flagged(0x40));

# A slice page that the index scan reads: one with bit 6 (the row of id 7)
# set in its first byte of contents
for my $blkno (1 .. length($pristine) / $blcksz - 1)
{
	next unless unpack('S', substr($pristine, ($blkno + 1) * $blcksz - 4, 2)) == 0x04;
	if (ord(substr($pristine, $blkno * $blcksz + 24, 1)) & (1 << 6))
	{
		$block{'scanned slice'} = $blkno;
		last;
	}
}
# The pending page, the metapage's pendingPages[0]
$block{pending} = unpack('L', substr($pristine, 24 + 4228, 4));
ok(defined $block{$_}, "found a $_ page") for sort keys %block;

# Overwrite bytes of block $blkno at $offset in a copy of the pristine file
sub patched
{
	my ($blkno, $offset, $bytes) = @_;
	return bx_patched($pristine, $blcksz, $blkno, $offset, $bytes);
}

# Install $image as the index file; bloomidx_check with heapallindexed must
# report $expected (a regex), or pass for '', and an index scan must report
# $scan_expected if given, else any XX002 (unless $expected is '')
sub check_case
{
	my ($name, $image, $expected, $scan_expected, @statements) = @_;
	$scan_expected //= $expected eq '' ? undef : qr/XX002/;
	bx_corruption_case(
		node => $node, file => $file, index => 'cs_bx', name => $name,
		image => $image, heapallindexed => 'true', expected => $expected,
		scan => "SELECT count(*) FROM cs WHERE a = 7 AND b = 'b7';",
		scan_expected => $scan_expected, statements => \@statements);
	return;
}

my $at = sub { qr/XX002: index "cs_bx" (?:is corrupted at|contains corrupted page at) block $_[0]\b/ };

# The error naming block $blkno, with a detail matching $detail
my $at_with = sub {
	my ($blkno, $detail) = @_;
	my $at_block = $at->($blkno);
	return qr/$at_block.*\n.*DETAIL:  $detail/;
};

# The error of a page a list of the sliced layout names that is not the
# page it should be
my $unexpected = sub {
	my ($blkno, $what) = @_;
	return $at_with->($blkno, qr/A $what was expected\./);
};

# The TID map's header, and the most entries of its width a page holds
# (the packed array ends 8 bytes short of the special space)
my ($tid_first_row, $tid_nrows, $tid_block_bits, $tid_offset_bits) =
  unpack('S S C C', substr($pristine, $block{tidmap} * $blcksz + 24, 6));
my $tid_width = $tid_block_bits + $tid_offset_bits;
my $tid_capacity = int(($blcksz - 24 - 8 - 12 - 8) * 8 / $tid_width);
note("TID map at block $block{tidmap}: $tid_nrows rows from row $tid_first_row,"
	  . " $tid_width bits each, room for $tid_capacity");

# bloomidx_check's error for a TID map that claims $nrows rows
my $tid_rows = sub {
	my ($nrows) = @_;
	return $at_with->($block{tidmap},
		qr/TID map holds $nrows rows from row $tid_first_row in $tid_width bits each\./);
};

check_case('zeroed slice page', patched($block{slice}, 0, "\0" x $blcksz), $at->($block{slice}));
check_case('slice page flagged as a TID map', patched($block{slice}, $blcksz - 4, pack('S', 0x08)),
	$at->($block{slice}));
check_case('zeroed TID-map page', patched($block{tidmap}, 0, "\0" x $blcksz), $at->($block{tidmap}));
check_case('zeroed stripe page', patched($block{stripe}, 0, "\0" x $blcksz), $at->($block{stripe}));

# The format's pages with tags and packed TIDs
check_case('zeroed stripe-list page', patched($block{'stripe-list'}, 0, "\0" x $blcksz),
	$unexpected->($block{'stripe-list'}, 'stripe-list page'),
	$unexpected->($block{'stripe-list'}, 'stripe-list page'));
check_case('TID map claiming 65535 rows', patched($block{tidmap}, 26, pack('S', 65535)),
	$tid_rows->(65535), $unexpected->($block{tidmap}, 'TID-map page'));
check_case('TID map claiming one row more than its page holds',
	patched($block{tidmap}, 26, pack('S', $tid_capacity + 1)),
	$tid_rows->($tid_capacity + 1), $unexpected->($block{tidmap}, 'TID-map page'));
check_case('slice page tagged with another stripe',
	patched($block{'scanned slice'}, $blcksz - 8, pack('S S', 1, 0)),
	$unexpected->($block{'scanned slice'}, 'slice page'),
	$unexpected->($block{'scanned slice'}, 'slice page'));

# Fields of the metapage (offsets in its contents, see BloomMetaPageData
# in src/core/page.h and BloomSlicedMetaData in src/layout/sliced/sliced.h)
# and of a stripe page (BloomStripeData)
my %meta = (tuplesPerPage => 10, sigBits => 14, mergedRows => 2160,
	firstStripe => 2168, nStripes => 2172, nPending => 2176, stripeLists => 2180);
my %stripe = (nTidPages => 4, tidPages => 8, tidFirstRow => 208, slices => 308);
my $contents = 24;
my $meta_at = sub {
	my ($field, $bytes) = @_;
	return patched(0, $contents + $meta{$field}, $bytes);
};
my $stripe_at = sub {
	my ($field, $bytes) = @_;
	return patched($block{stripe}, $contents + $stripe{$field}, $bytes);
};
# (rolled back, so that the table keeps the rows of the pristine index).
# An ERROR, not a FATAL: a FATAL XX002 once came from a stack overwrite
# that had cleared PortalRun's saved exception stack.
my $insert = [ q{BEGIN; INSERT INTO cs VALUES (5001, 7, 'b7'); ROLLBACK;}, qr/ERROR:  XX002/ ];
my $merge = [
	q{BEGIN; INSERT INTO cs VALUES (5001, 7, 'b7'); SELECT bloomidx_merge('cs_bx'); ROLLBACK;},
	qr/ERROR:  XX002/ ];
my $stats = [ q{SELECT bloomidx_stats('cs_bx');}, qr/ERROR:  XX002/ ];
my $vacuum = [ q{DELETE FROM cs WHERE id = 7; VACUUM cs;}, qr/ERROR:  XX002/ ];

# Crashes once: counts read from the index and trusted
my $first_tid_map = unpack('L', substr($pristine,
		$block{stripe} * $blcksz + $contents + $stripe{tidPages}, 4));
check_case('stripe page listing its TID map twice',
	bx_patched($stripe_at->(nTidPages => pack('S', 2)), $blcksz, $block{stripe},
		$contents + $stripe{tidPages} + 4, pack('L', $first_tid_map)),
	$at->($block{stripe}), undef, $stats, $merge);
check_case('sliced metapage with 4096-bit signatures',
	bx_patched($meta_at->(sigBits => pack('S', 4096)), $blcksz, 0,
		$contents + $meta{tuplesPerPage}, pack('S', 15)),
	$at->(0), $at->(0), $stats, $insert);
check_case('first TID map starting past the merge point',
	$stripe_at->(tidFirstRow => pack('S', 60000)),
	$at->($block{stripe}), undef, $merge, $vacuum);
check_case('65535 pending pages', $meta_at->(nPending => pack('S', 65535)),
	$at->(0), $at->(0), $insert, $stats);

# Hung once: a block number naming a page the backend holds
check_case('slice link of a stripe page pointing to itself',
	$stripe_at->(slices => pack('L', $block{stripe})),
	$at->($block{stripe}), undef, $merge, $vacuum);
check_case('stripe-list entry naming the metapage',
	$meta_at->(stripeLists => pack('L', 0)),
	$at->(0), $at->(0), $merge, $insert);
check_case('unused stripe-list entry naming the metapage',
	$meta_at->(stripeLists => pack('L L', $block{'stripe-list'}, 0)),
	$at->(0), $at->(0), $merge);
# Entries past the next list are read by nothing before VACUUM shifts them
# down (and the metapage is checked again): bloomidx_check reports them,
# queries and inserts go on
my $no_error = qr/\A(?!.*ERROR)/s;
check_case('spare stripe-list entry naming the metapage',
	$meta_at->(stripeLists => pack('L L L', $block{'stripe-list'}, 0xFFFFFFFF, 0)),
	$at_with->(0, qr/Stripe-list entry 2 is block 0\./), $no_error,
	[ q{BEGIN; INSERT INTO cs VALUES (5001, 7, 'b7'); ROLLBACK;}, '' ]);
check_case('spare stripe-list entry past the end',
	$meta_at->(stripeLists => pack('L L L', $block{'stripe-list'}, 0xFFFFFFFF, 1000000)),
	$at_with->(0, qr/Stripe-list entry 2 is block 1000000\./), $no_error,
	[ q{BEGIN; INSERT INTO cs VALUES (5001, 7, 'b7'); ROLLBACK;}, '' ]);

# Read past the end of the file once (58P01 or XX001 from the storage
# manager, naming no page of the index): a block number read from a
# stripe-list page and not checked against the index's length
my $nblocks = length($pristine) / $blcksz;
for my $listed ($nblocks, 0x7ffffff0)
{
	check_case("stripe-list entry naming block $listed, past the end",
		patched($block{'stripe-list'}, $contents, pack('L', $listed)),
		$at_with->($block{'stripe-list'}, qr/Stripe 0 is listed at block $listed\b/),
		$at_with->($block{'stripe-list'}, qr/Stripe 0 is listed at block $listed\b/),
		$stats, $merge, $vacuum);
}

# Rows that vanished from answers: out of range, or unreachable from the
# metapage, which the heap pass reports
check_case('first stripe past the last', $meta_at->(firstStripe => pack('L', 2)),
	$at->(0), $at->(0), $insert);
check_case('first stripe moved past the only stripe',
	$meta_at->(firstStripe => pack('L', 1)),
	qr/XX002: index "cs_bx" lacks the signature of row/, qr/^(?![\s\S]*XX000)/);
check_case('merged rows lowered', $meta_at->(mergedRows => pack('Q', 100)),
	qr/XX002: index "cs_bx" lacks the signature of row/, qr/^(?![\s\S]*XX000)/);
check_case('pending page dropped from the list', $meta_at->(nPending => pack('S', 0)),
	qr/XX002: index "cs_bx" lacks the signature of row/, qr/^(?![\s\S]*XX000)/);
check_case('merged rows past the stripes', $meta_at->(mergedRows => pack('Q', 70000)),
	$at->(0), $at->(0), $insert);

# Damage that scans read past, returning too few rows, until they checked
# it: each reported, naming the block, by scans and by bloomidx_check
check_case('pending page flagged as a stripe page',
	patched($block{pending}, $blcksz - 4, pack('S', 0x10)),
	$unexpected->($block{pending}, 'pending page'),
	$unexpected->($block{pending}, 'pending page'), $stats);
my $sig_bits = unpack('S', substr($pristine, $contents + $meta{sigBits}, 2));
note("signatures of $sig_bits bits");
my $shorter = $meta_at->(sigBits => pack('S', $sig_bits - 1));
check_case('signature length lowered by one', $shorter,
	$at_with->($block{pending},
		qr/A signature has bits set past the @{[$sig_bits - 1]} bits of the index's signatures\./),
	$at_with->($block{pending},
		qr/A signature has bits set past the @{[$sig_bits - 1]} bits of the index's signatures\./),
	$stats);
# Without the pending page, the stripe page tells: it links a slice for
# every bit of the signatures it was written for
my $stripe_says = $at_with->($block{stripe},
	qr/The stripe page has a slice link for bit @{[$sig_bits - 1]}, past the signature's @{[$sig_bits - 1]} bits\./);
check_case('signature length lowered by one, no pending page',
	bx_patched(bx_patched($shorter, $blcksz, 0, $contents + $meta{nPending}, pack('S', 0)),
		$blcksz, $block{pending}, 0, "\0" x $blcksz),
	$stripe_says, $stripe_says, $stats);
# Hung once: a merge locked the page of two bits' slices twice
my $slice0 = unpack('L', substr($pristine,
		$block{stripe} * $blcksz + $contents + $stripe{slices}, 4));
my $twice = $at_with->($block{stripe}, qr/The stripe page links block $slice0 twice\./);
check_case('stripe page linking one slice page for two bits',
	$stripe_at->(slices => pack('L L', $slice0, $slice0)),
	$twice, $twice, $merge, $vacuum);
my $tid_pd_lower = unpack('S', substr($pristine, $block{tidmap} * $blcksz + 12, 2));
check_case('TID map with no block bits', patched($block{tidmap}, 28, pack('C', 0)),
	$at_with->($block{tidmap},
		qr/The TID map's $tid_nrows entries of $tid_offset_bits bits do not end where its used part, to pd_lower $tid_pd_lower, does\./),
	$unexpected->($block{tidmap}, 'TID-map page'), $vacuum);

check_case('pristine file put back', $pristine, '');

# A TID map with one row more than its page packs, over the first row of
# the next map, in a stripe of 12,000 rows whose second TID map is not full
# (its next row needed wider entries): rows 5009 to 9890 at 13 bits
$node->start;
$node->safe_psql('postgres', q{
CREATE TABLE cs2 (id int, a int, b text);
INSERT INTO cs2 SELECT g, g % 100, 'b' || (g % 37) || repeat('x', 12) FROM generate_series(1, 12000) g;
CREATE INDEX cs2_bx ON cs2 USING bloomidx (a, b) WITH (layout = sliced);
SELECT bloomidx_merge('cs2_bx');
});
my $file2 = $node->data_dir . '/'
  . $node->safe_psql('postgres', "SELECT pg_relation_filepath('cs2_bx')");
$node->stop;
my $pristine2 = slurp_file($file2);
my @maps;
for my $blkno (1 .. length($pristine2) / $blcksz - 1)
{
	next unless unpack('S', substr($pristine2, ($blkno + 1) * $blcksz - 4, 2)) == 0x08;
	my ($first, $nrows, $bbits, $obits) =
	  unpack('S S C C', substr($pristine2, $blkno * $blcksz + 24, 6));
	push @maps, [ $blkno, $first, $nrows, $bbits + $obits ];
}
is(scalar(@maps), 3, 'the stripe of 12,000 rows has three TID maps');
my ($map_blkno, $map_first, $map_nrows, $map_width) = @{ $maps[1] };
my $next_first = $maps[2][1];
is($map_first + $map_nrows, $next_first, 'the second TID map ends where the third starts');
cmp_ok(($map_nrows + 1) * $map_width, '<=', ($blcksz - 24 - 8 - 12 - 8) * 8,
	'the second TID map has room for one more row');
# nrows one more, and pd_lower where the entries then end, as a page
# packed so would have it
my $overlapping = bx_patched(
	bx_patched($pristine2, $blcksz, $map_blkno, 26, pack('S', $map_nrows + 1)),
	$blcksz, $map_blkno, 12,
	pack('S', 24 + 12 + int((($map_nrows + 1) * $map_width + 7) / 8) + 8));
my $overlap = qr/XX002: index "cs2_bx" is corrupted at block $map_blkno\b.*\n.*DETAIL:  The TID map holds rows $map_first to $next_first, past row $next_first where the next TID map starts\./;
# The query's rows, every hundredth from row 6, are in every map
bx_corruption_case(
	node => $node, file => $file2, index => 'cs2_bx',
	name => 'TID map overlapping the next one', image => $overlapping,
	heapallindexed => 'true', expected => $overlap,
	scan => 'SELECT count(*) FROM cs2 WHERE a = 7;',
	scan_expected => $overlap);
bx_corruption_case(
	node => $node, file => $file2, index => 'cs2_bx',
	name => 'second table, pristine file put back', image => $pristine2,
	heapallindexed => 'true', expected => '',
	scan => 'SELECT count(*) FROM cs2 WHERE a = 7;');

done_testing();
