
# Copyright and license: see the project's LICENSE.

# Corruption of the sliced layout's pages.  With the server stopped, a
# slice, TID-map or stripe page of a sliced index is damaged; after a
# restart bloomidx_check (with heapallindexed, which reads the slices back)
# and index scans must raise ERRCODE_INDEX_CORRUPTED (XX002) naming the
# block, without crashing the server, and the pristine file put back is
# sound again.
#
# Pages are told apart by the flags of their special space (the last four
# uint16 of a page: ntuples, maxtuples, flags, page_id): slice 0x04, TID
# map 0x08, stripe 0x10.

use strict;
use warnings;

use PostgreSQL::Test::Cluster;
use PostgreSQL::Test::Utils;
use Test::More;

use FindBin;
use lib $FindBin::RealBin;
use BloomidxTest;

my $node = PostgreSQL::Test::Cluster->new('sliced_corruption');
$node->init;
$node->start;

$node->safe_psql('postgres', q{
CREATE EXTENSION bloomidx;
CREATE TABLE cs (id int, a int, b text);
INSERT INTO cs SELECT g, g % 100, 'b' || (g % 37) FROM generate_series(1, 5000) g;
CREATE INDEX cs_bx ON cs USING bloomidx (a, b) WITH (layout = sliced);
});
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
	stripe => first_page_flagged(0x10));
ok(defined $block{$_}, "found a $_ page") for sort keys %block;

# Overwrite bytes of block $blkno at $offset in a copy of the pristine file
sub patched
{
	my ($blkno, $offset, $bytes) = @_;
	return bx_patched($pristine, $blcksz, $blkno, $offset, $bytes);
}

# Install $image as the index file; bloomidx_check with heapallindexed and
# an index scan must both report $expected (a regex), or pass for ''
sub check_case
{
	my ($name, $image, $expected) = @_;
	bx_corruption_case(
		node => $node, file => $file, index => 'cs_bx', name => $name,
		image => $image, heapallindexed => 'true', expected => $expected,
		scan => "SELECT count(*) FROM cs WHERE a = 7 AND b = 'b7';",
		scan_expected => $expected eq '' ? undef : qr/XX002/);
	return;
}

my $at = sub { qr/XX002: index "cs_bx" (?:is corrupted at|contains corrupted page at) block $_[0]\b/ };

check_case('zeroed slice page', patched($block{slice}, 0, "\0" x $blcksz), $at->($block{slice}));
check_case('slice page flagged as a TID map', patched($block{slice}, $blcksz - 4, pack('S', 0x08)),
	$at->($block{slice}));
check_case('zeroed TID-map page', patched($block{tidmap}, 0, "\0" x $blcksz), $at->($block{tidmap}));
check_case('zeroed stripe page', patched($block{stripe}, 0, "\0" x $blcksz), $at->($block{stripe}));
check_case('pristine file put back', $pristine, '');

done_testing();
