
# Copyright and license: see the project's LICENSE.

# Corruption of a stripe summary (format 4, summaries = on).  A summary
# that lost bits may tell a scan "no row of this stripe has the value" for
# a value a row of the stripe has; no page check can see that, so
# bloomidx_check with heapallindexed tests each row of the table against
# the summary of its stripe and raises XX002 naming the row.  Summary
# pages are told apart by their flag 0x80 in the special space (src/core/page.h);
# their contents, after the 24-byte page header, are the summary's blocks.
# The table holds 70,000 rows: the build writes one full stripe (65,280
# rows, its summary sealed in its group's region) and a partial one of the
# rest; 100 rows inserted after it wait in a pending page.  A second index,
# built on the empty table, gets its stripes from merges, which keep their
# summaries in pages of their own.

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
CREATE TABLE zm (k int, v int);
CREATE INDEX zs_m ON zm USING bloomidx (k, v);
INSERT INTO zm SELECT g, g % 10 FROM generate_series(1, 70000) g;
SELECT bloomidx_merge('zs_m');
});
is($node->safe_psql('postgres', "SELECT version || ' ' || stripes || ' ' || pending_pages FROM bloomidx_stats('zs_bx')"),
	'4 2 1', 'a format-4 index with two stripes and a pending page');
is($node->safe_psql('postgres', "SELECT bloomidx_check('zs_bx', true)"),
	'', 'bloomidx_check passes on the sound index');

is($node->safe_psql('postgres', "SELECT bloomidx_check('zs_m', true)"),
	'', 'bloomidx_check passes on the index merges filled');

my $blcksz = $node->safe_psql('postgres', 'SHOW block_size');
my $file = $node->data_dir . '/'
  . $node->safe_psql('postgres', "SELECT pg_relation_filepath('zs_bx')");
my $mfile = $node->data_dir . '/'
  . $node->safe_psql('postgres', "SELECT pg_relation_filepath('zs_m')");
$node->stop;
my $pristine = slurp_file($file);
my $mpristine = slurp_file($mfile);

# The pages of an index file with a flag (summary or group pages)
sub pages_flagged
{
	my ($image, $flag) = @_;
	my @pages;
	for my $blkno (0 .. length($image) / $blcksz - 1)
	{
		my ($flags, $page_id) = unpack('S S', substr($image, ($blkno + 1) * $blcksz - 4, 4));
		push @pages, $blkno if $page_id == 0xFF8B && $flags == $flag;
	}
	return @pages;
}
my @group = pages_flagged($pristine, 0x200);
my @summary = pages_flagged($mpristine, 0x80);
ok(@group >= 2, 'the built index has a summary group region (' . scalar(@group) . ' pages)');
# A page's tag, the stripe it belongs to: 4 bytes 8 bytes before its end
is(scalar(grep { unpack('L', substr($pristine, ($_ + 1) * $blcksz - 8, 4)) != 1 }
		  pages_flagged($pristine, 0x80)),
	0, 'its sealed stripe has no summary page of its own, only the partial stripe 1 has');
ok(@summary >= 2, 'the stripe merges filled has summary pages (' . scalar(@summary) . ')');

# Query answers against a seq scan's, or the error
my $probe = q{SELECT count(*) FROM zs WHERE k IN (7, 65000, 69999) OR v = 11};
sub probe
{
	my ($rc, $out, $err) = $node->psql('postgres',
		"SET enable_seqscan = off;\n\\set VERBOSITY verbose\n$probe;");
	return $rc == 0 ? $out : $err;
}

# Every summary page's blocks cleared, or every group page's: each row's
# value is missing
for my $case (['zs_bx', 'zs', \@group, $pristine, $file],
			  ['zs_m', 'zm', \@summary, $mpristine, $mfile])
{
	my ($index, $table, $pages, $clean, $to) = @$case;
	my $image = $clean;
	for my $blkno (@$pages)
	{
		substr($image, $blkno * $blcksz + 24, $blcksz - 32) = "\0" x ($blcksz - 32);
	}
	bx_write_image($to, $image);
	$node->start;
	my ($rc, $out, $err) = $node->psql('postgres',
		"\\set VERBOSITY verbose\nSELECT bloomidx_check('$index', true);");
	like($err, qr/XX002: index "$index" lacks the value of column 1 of row \(\d+,\d+\) of table "$table" in the summary of its stripe/,
		"bloomidx_check with heapallindexed reports a summary missing a row's value ($index)");
	is($node->safe_psql('postgres', "SELECT bloomidx_check('$index', false)"),
		'', "the pages alone look sound ($index)");
	$node->stop;
	bx_write_image($to, $clean);
}

# A group page made a summary page: the pages' check names it, and a
# query that reads it fails with XX002
{
	my $image = $pristine;
	my $blkno = $group[0];
	substr($image, ($blkno + 1) * $blcksz - 4, 2) = pack('S', 0x80);
	bx_write_image($file, $image);
	$node->start;
	my ($rc, $out, $err) = $node->psql('postgres',
		"\\set VERBOSITY verbose\nSELECT bloomidx_check('zs_bx');");
	like($err, qr/XX002: .*block $blkno/s,
		'bloomidx_check reports a page of the region that is not a group page');
	like(probe(), qr/XX002|^3$/, 'a query fails with XX002 or answers right');
	like(($node->psql('postgres', "SET enable_seqscan = off; SELECT count(*) FROM zs WHERE k = 7"))[2],
		qr/index "zs_bx" contains corrupted page at block $blkno|^$/,
		'a query reading that page reports it');
	$node->stop;
}

# The metapage's slot of group 0 (after the 24-byte page header and the
# 5,528 bytes of the metapage's other fields): {group + 1, first page,
# blocks a stripe a page, pages, spare, sealed bits}
my $slot = 24 + 5528;
my ($gp1, $first, $per, $npages, $spare, $sealed) =
  unpack('L L S S L Q', substr($pristine, $slot, 24));
is("$gp1 $first $sealed", "1 $group[0] 1", 'slot 0 seals stripe 0 of group 0 at the region');
is($npages, scalar(@group), 'the slot counts the region\'s pages');

for my $case (
	[ 'blocks a stripe a page', pack('S', 3), 8, qr/XX002: .*block 0.*blocks a stripe a page/s ],
	[ 'region past the end', pack('L', 1000000), 4, qr/XX002: .*block 0/s ],
	[ 'region over the metapage', pack('L', 0), 4, qr/XX002: .*block 0/s ],
	[ 'seal bit of a stripe not listed', pack('Q', 5), 16, qr/XX002: .*block 0.*seals stripes/s ],
	[ 'no seal bit', pack('Q', 0), 16, qr/XX002: .*says it is sealed, but summary group 0 does not seal it/s ])
{
	my ($what, $bytes, $at, $expect) = @$case;
	my $image = $pristine;
	substr($image, $slot + $at, length($bytes)) = $bytes;
	bx_write_image($file, $image);
	$node->start;
	my ($rc, $out, $err) = $node->psql('postgres',
		"\\set VERBOSITY verbose\nSELECT bloomidx_check('zs_bx');");
	like($err, $expect, "bloomidx_check reports a slot's $what");
	like(probe(), qr/XX002|^3$/, "a query fails with XX002 or answers right ($what)");
	$node->stop;
}

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
my $image = $pristine;
my $key_at = $pending * $blcksz + 24 + int(($sig_bits + 7) / 8);
substr($image, $key_at, 4) = pack('L', unpack('L', substr($image, $key_at, 4)) ^ 0x5A5A5A5A);
bx_write_image($file, $image);
$node->start;
my ($rc, $out, $err) = $node->psql('postgres',
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
is($node->safe_psql('postgres', "SELECT bloomidx_check('zs_m', true)"),
	'', 'and on the pristine file of the index merges filled');
is($node->safe_psql('postgres', q{
SET enable_seqscan = off;
SELECT count(*) FROM zs WHERE k IN (7, 65000, 69999) OR v = 11}),
	'3', 'the index finds rows through the summary');
$node->stop;

done_testing();
