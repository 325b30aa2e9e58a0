
# Copyright and license: see the project's LICENSE.

# Corruption with data checksums on (initdb's default from PostgreSQL 18
# on).  The corruption tests (t/005, t/006, t/017) run with checksums off,
# where bloomidx's own checks meet the damage; here a page of every kind of
# both layouts is damaged the same way, and core's checksum verification
# reports it first, as XX001 naming the block, to bloomidx_check and to a
# scan that reads the page, without a crash.  A page zeroed whole passes
# the checksum (a new page has none) and reads as an empty page, which
# bloomidx_check's heap pass reports (XX002).  The pristine file put back is
# sound again.

use strict;
use warnings;

use PostgreSQL::Test::Cluster;
use PostgreSQL::Test::Utils;
use Test::More;

use FindBin;
use lib $FindBin::RealBin;
use BloomidxTest;

my $node = PostgreSQL::Test::Cluster->new('corruption_checksums');
$node->init(extra => ['--data-checksums']);
$node->start;
is($node->safe_psql('postgres', 'SHOW data_checksums'), 'on', 'data checksums are on');

# A row index of several data pages; a sliced index with one stripe (rows
# merged from the pending pages) and 10 rows left on a pending page
$node->safe_psql('postgres', q{
CREATE EXTENSION bloomidx;
CREATE TABLE ct (id int, a int, b text);
INSERT INTO ct SELECT g, g % 100, 'b' || (g % 37) FROM generate_series(1, 5000) g;
CREATE INDEX ct_row_bx ON ct USING bloomidx (a, b) WITH (layout = 'row');
CREATE INDEX ct_sliced_bx ON ct USING bloomidx (a, b) WITH (layout = sliced);
SELECT bloomidx_merge('ct_sliced_bx');
INSERT INTO ct SELECT g, g % 100, 'b' || (g % 37) FROM generate_series(5001, 5010) g;
CHECKPOINT;
});
for my $index ('ct_row_bx', 'ct_sliced_bx')
{
	is($node->safe_psql('postgres', "SELECT bloomidx_check('$index', true)"),
		'', "bloomidx_check passes on the sound $index");
}

my $blcksz = $node->safe_psql('postgres', 'SHOW block_size');
my %file;
$file{$_} = $node->data_dir . '/'
  . $node->safe_psql('postgres', "SELECT pg_relation_filepath('$_')")
  for ('ct_row_bx', 'ct_sliced_bx');
$node->stop;
my %pristine = map { $_ => slurp_file($file{$_}) } keys %file;

# The first block of $index whose special space has flags $flag and
# bloomidx's page id (the last two of the special space's four uint16)
sub first_page_flagged
{
	my ($index, $flag) = @_;
	my $image = $pristine{$index};
	for my $blkno (1 .. length($image) / $blcksz - 1)
	{
		my ($flags, $page_id) =
		  unpack('SS', substr($image, ($blkno + 1) * $blcksz - 4, 4));
		return $blkno if $flags == $flag && $page_id == 0xFF8B;
	}
	return undef;
}

# Page kinds: block number of each, in which index (the sliced layout's
# pending pages are row-format pages, flags 0)
my @pages = (
	[ 'row metapage', 'ct_row_bx', 0 ],
	[ 'row data page', 'ct_row_bx', 1 ],
	[ 'sliced metapage', 'ct_sliced_bx', 0 ],
	[ 'sliced pending page', 'ct_sliced_bx', first_page_flagged('ct_sliced_bx', 0) ],
	[ 'slice', 'ct_sliced_bx', first_page_flagged('ct_sliced_bx', 0x04) ],
	[ 'TID map', 'ct_sliced_bx', first_page_flagged('ct_sliced_bx', 0x08) ],
	[ 'stripe page', 'ct_sliced_bx', first_page_flagged('ct_sliced_bx', 0x10) ],
	[ 'stripe list', 'ct_sliced_bx', first_page_flagged('ct_sliced_bx', 0x40) ]);

# The other index is dropped for each case, so the scan uses this one
for my $page (@pages)
{
	my ($kind, $index, $blkno) = @$page;
	ok(defined $blkno, "found a $kind");
	next unless defined $blkno;
	my $other = $index eq 'ct_row_bx' ? 'ct_sliced_bx' : 'ct_row_bx';
	my $at = qr/XX001: invalid page in block $blkno of relation/;
	my $log_offset = -s $node->logfile;

	# One byte of the page's contents changed, the checksum left as it was
	my $image = $pristine{$index};
	my $pos = $blkno * $blcksz + 100;
	substr($image, $pos, 1, chr(ord(substr($image, $pos, 1)) ^ 0x5a));
	bx_corruption_case(
		node => $node, file => $file{$index}, index => $index,
		name => "checksums on, $kind of $index",
		image => $image, heapallindexed => 'true', expected => $at,
		scan => "BEGIN; DROP INDEX $other; SELECT count(*) FROM ct WHERE a = 7 AND b = 'b7'; ROLLBACK;",
		scan_expected => $at);
	ok($node->log_contains(qr/page verification failed, calculated checksum/, $log_offset),
		"checksums on, $kind of $index: core verified the checksum");
}

# A zeroed page has no checksum to fail: it reads as a new, empty page, as
# with checksums off (t/005), and bloomidx_check's heap pass finds the rows
# it held missing
{
	my $image = $pristine{ct_row_bx};
	substr($image, $blcksz, $blcksz, "\0" x $blcksz);
	bx_corruption_case(
		node => $node, file => $file{ct_row_bx}, index => 'ct_row_bx',
		name => 'checksums on, a zeroed row data page',
		image => $image, heapallindexed => 'true',
		expected => qr/XX002: index "ct_row_bx" lacks the signature of row/,
		scan => "BEGIN; DROP INDEX ct_sliced_bx; SELECT count(*) FROM ct WHERE a = 7 AND b = 'b7'; ROLLBACK;");
}

# The pristine files back: sound again
for my $index (sort keys %file)
{
	open(my $fh, '>', $file{$index}) or die "cannot write $file{$index}: $!";
	binmode $fh;
	print $fh $pristine{$index};
	close $fh;
}
$node->start;
for my $index (sort keys %file)
{
	is($node->safe_psql('postgres', "SELECT bloomidx_check('$index', true)"),
		'', "the pristine $index passes bloomidx_check again");
}
is($node->safe_psql('postgres', "SET enable_seqscan = off; SELECT count(*) FROM ct WHERE a = 7 AND b = 'b7'"),
	$node->safe_psql('postgres', "SET enable_bitmapscan = off; SELECT count(*) FROM ct WHERE a = 7 AND b = 'b7'"),
	'and answers as a seq scan');
$node->stop;

done_testing();
