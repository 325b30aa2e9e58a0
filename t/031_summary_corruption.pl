
# Copyright and license: see the project's LICENSE.

# Corruption of a stripe summary (format 4, summaries = on).  A summary
# that lost bits may tell a scan "no row of this stripe has the value" for
# a value a row of the stripe has; no page check can see that, so
# bloomidx_check with heapallindexed tests each row of the table against
# the summary of its stripe and raises XX002 naming the row.  Summary
# pages are told apart by their flag 0x80 in the special space (src/core/page.h);
# their contents, after the 24-byte page header, are the summary's blocks.
# The table holds 70,000 rows: the build writes one full stripe (65,280
# rows, with its summary) and a partial one of the rest; 100 rows
# inserted after it wait in a pending page.

use strict;
use warnings;

use PostgreSQL::Test::Cluster;
use PostgreSQL::Test::Utils;
use Test::More;

use FindBin;
use lib $FindBin::RealBin;
use BloomidxTest;

my $node = PostgreSQL::Test::Cluster->new('summary_corruption');
$node->init(no_data_checksums => 1);
$node->start;

$node->safe_psql('postgres', q{
CREATE EXTENSION bloomidx;
CREATE TABLE zs (k int, v int);
INSERT INTO zs SELECT g, g % 10 FROM generate_series(1, 70000) g;
CREATE INDEX zs_bx ON zs USING bloomidx (k, v);
INSERT INTO zs SELECT g, g % 10 FROM generate_series(70001, 70100) g;
});
is($node->safe_psql('postgres', "SELECT version || ' ' || stripes || ' ' || pending_pages FROM bloomidx_stats('zs_bx')"),
	'4 2 1', 'a format-4 index with two stripes and a pending page');
is($node->safe_psql('postgres', "SELECT bloomidx_check('zs_bx', true)"),
	'', 'bloomidx_check passes on the sound index');

my $blcksz = $node->safe_psql('postgres', 'SHOW block_size');
my $file = $node->data_dir . '/'
  . $node->safe_psql('postgres', "SELECT pg_relation_filepath('zs_bx')");
$node->stop;
my $pristine = slurp_file($file);

# The summary pages of the index
my @summary;
for my $blkno (0 .. length($pristine) / $blcksz - 1)
{
	my ($flags, $page_id) = unpack('S S', substr($pristine, ($blkno + 1) * $blcksz - 4, 4));
	push @summary, $blkno if $page_id == 0xFF8B && $flags == 0x80;
}
ok(@summary >= 2, 'the stripe has summary pages (' . scalar(@summary) . ')');

# Every summary page's blocks cleared: each row's value is missing
my $image = $pristine;
for my $blkno (@summary)
{
	substr($image, $blkno * $blcksz + 24, $blcksz - 32) = "\0" x ($blcksz - 32);
}
bx_write_image($file, $image);
$node->start;
my ($rc, $out, $err) = $node->psql('postgres',
	"\\set VERBOSITY verbose\nSELECT bloomidx_check('zs_bx', true);");
like($err, qr/XX002: index "zs_bx" lacks the value of column 1 of row \(\d+,\d+\) of table "zs" in the summary of its stripe/,
	'bloomidx_check with heapallindexed reports a summary missing a row\'s value');
is($node->safe_psql('postgres', "SELECT bloomidx_check('zs_bx', false)"),
	'', 'the pages alone look sound');
$node->stop;

# A pending row's key (format 4: a key per column after each signature,
# which a merge adds to the summary of the stripe it writes the row to).
# The first pending page (flags 0: not a page of a stripe, not keyless);
# its slots hold the signature (sigBits in the metapage at offset 24 + 14)
# and a 4-byte key for each of the two columns.
my ($sig_bits) = unpack('S', substr($pristine, 24 + 14, 2));
my $slot_bytes = int(($sig_bits + 7) / 8) + 8;
my ($pending) = grep {
	my ($ntuples, undef, $flags, $page_id) =
	  unpack('S S S S', substr($pristine, ($_ + 1) * $blcksz - 8, 8));
	$_ > 0 && $page_id == 0xFF8B && $flags == 0 && $ntuples > 0
} 0 .. length($pristine) / $blcksz - 1;
ok(defined $pending, 'the index has a pending page with keys');
# Its first row's TID, the last 6 bytes before the special space
# (ItemPointerData: block number high and low halves, offset)
my ($bi_hi, $bi_lo, $offset) = unpack('S S S', substr($pristine, ($pending + 1) * $blcksz - 8 - 6, 6));
my $tid = sprintf('(%u,%u)', $bi_hi * 65536 + $bi_lo, $offset);

# The key of column 1 of its first row changed: the signature is right, and
# so is every page; only the heapallindexed check sees it
$image = $pristine;
my $key_at = $pending * $blcksz + 24 + int(($sig_bits + 7) / 8);
substr($image, $key_at, 4) = pack('L', unpack('L', substr($image, $key_at, 4)) ^ 0x5A5A5A5A);
bx_write_image($file, $image);
$node->start;
($rc, $out, $err) = $node->psql('postgres',
	"\\set VERBOSITY verbose\nSELECT bloomidx_check('zs_bx', true);");
like($err, qr/XX002: index "zs_bx" has a wrong key for column 1 of row \Q$tid\E of table "zs"/,
	'bloomidx_check with heapallindexed reports a pending row\'s wrong key');
like($err, qr/DETAIL:  Pending page $pending holds key/, 'the report names the pending page');
is($node->safe_psql('postgres', "SELECT bloomidx_check('zs_bx', false)"),
	'', 'the pages alone look sound');
$node->stop;

# Every key of the page zero, as on a page of rows without keys, but
# without its flag (BLOOMIDX_KEYLESS, 0x100): reported before a merge
# would put the zeros into a summary and lose the rows' values
$image = $pristine;
my ($ntuples) = unpack('S', substr($pristine, ($pending + 1) * $blcksz - 8, 2));
for my $i (0 .. $ntuples - 1)
{
	substr($image, $pending * $blcksz + 24 + $i * $slot_bytes + $slot_bytes - 8, 8) = "\0" x 8;
}
bx_write_image($file, $image);
$node->start;
($rc, $out, $err) = $node->psql('postgres',
	"\\set VERBOSITY verbose\nSELECT bloomidx_check('zs_bx', true);");
like($err, qr/XX002: index "zs_bx" has a wrong key for column \d of row \(\d+,\d+\) of table "zs"/,
	'bloomidx_check reports a pending page\'s zero keys without its keyless flag');
# Merged, the zeros are in the summary of the stripe the rows went to
$node->safe_psql('postgres', "SELECT bloomidx_merge('zs_bx')");
($rc, $out, $err) = $node->psql('postgres',
	"\\set VERBOSITY verbose\nSELECT bloomidx_check('zs_bx', true);");
like($err, qr/XX002: index "zs_bx" lacks the value of column \d of row \(\d+,\d+\) of table "zs" in the summary of its stripe/,
	'merged, they leave the rows\' values out of the summary');
$node->stop;

# The pristine file is sound again, and its scans answer as a seq scan
bx_write_image($file, $pristine);
$node->start;
is($node->safe_psql('postgres', "SELECT bloomidx_check('zs_bx', true)"),
	'', 'bloomidx_check passes on the pristine file');
is($node->safe_psql('postgres', q{
SET enable_seqscan = off;
SELECT count(*) FROM zs WHERE k IN (7, 65000, 69999) OR v = 11}),
	'3', 'the index finds rows through the summary');
$node->stop;

done_testing();
