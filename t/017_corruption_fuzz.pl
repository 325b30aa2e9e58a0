
# Copyright and license: see the project's LICENSE.

# Corruption fuzzer: for each layout, random corruptions of an index's
# pages, each followed by every kind of statement that reads or writes the
# index, under a statement_timeout.  It fails on a crashed backend, on a
# statement outliving its timeout by more than a second (an uninterruptible
# wait), and on a wrong answer (an index scan's rows differing from a
# sequential scan's) that bloomidx_check(heapallindexed) does not report.
# Errors are expected: the statements may fail, cleanly.
#
# A round builds one small table with one index per corruption (every
# third with columns of sets as well: text_trgm_ops, array_elem_ops and
# jsonb_path_ops),
# stops the server, corrupts every index file at once (a different
# corruption each),
# starts the server and runs the statements on each table.  Corruptions
# are seeded and so reproducible; each is printed (note) before it is
# tried.  They are field-aware (metapage fields, page headers and counts,
# stripe, slice, TID-map and stripe-list fields, and the stripe summaries
# of format 4: summary pages' tags, flags and block words, the stripe
# page's summary header (flags, block counts, summary page links), the
# metapage's summary range, the summary groups' pages and slots, and
# pending slots' keys; set to values on the
# edges of their range or naming other blocks, the metapage or the page
# itself) or random bytes anywhere.  The kind keyless clears the flag
# BLOOMIDX_KEYLESS of a pending page of rows VACUUM moved back from a
# stripe it emptied: their zero key bytes then pass for keys, which
# bloomidx_check with heapallindexed must report, and a merge would put
# into a summary in place of the rows' values.  A summary page's blocks that lose
# bits tell a scan "no" for a stripe that has the value: a wrong answer
# that bloomidx_check with heapallindexed must report (XX002); the kind
# summary clears a word of them that has bits set, the kind group a word
# of a summary group's page.  One in five is a targeted edit (targeted_edit)
# that scans once read past: after one, an index scan must report the
# damage, not answer wrong.
#
# The first corruptions of a layout go through every kind of corruption
# (%kinds: each targeted edit, random bytes, page header fields, and the
# fields of each kind of page the layout has) in turn, on a page of that
# kind; the rest are drawn at random.  The default run makes each kind
# once (6 corruptions of the row layout, 17 of the sliced); BX_FULL=1
# (scripts/test.sh --full) makes 100 per layout, mostly random, and
# `make corruption-fuzz` 500.  The test fails if a kind was never made in a
# run of at least as many corruptions as kinds.
#
# Environment:
#   BX_FUZZ_CORRUPTIONS  corruptions per layout (default: as many as the
#                        layout has kinds; 100 with BX_FULL=1)
#   BX_FUZZ_SEED         seed of the first round (default 1)
#   BX_FUZZ_LAYOUTS      the layouts to corrupt, in order (default "row
#                        sliced")
#   BX_ASAN              set by scripts/asan-check.sh (make
#                        corruption-fuzz-asan), whose servers run with the
#                        ASan runtime: check that they do
#
# A sanitizer report in the server's log (the sanitizer build aborts the
# backend on the first) fails the test too.

use strict;
use warnings;

use PostgreSQL::Test::Cluster;
use PostgreSQL::Test::Utils;
use Test::More;
use Time::HiRes qw(time);

# The kinds of corruption each layout's indexes can get (see corrupt)
my %kinds = (
	row => [qw(targeted:sigBits targeted:flags bytes header meta data)],
	sliced => [
		qw(targeted:sigBits targeted:flags targeted:blockBits targeted:nrows
		  bytes header meta data slice tidmap stripe stripelist
		  summary stripesummary metasummary key keyless group groupslot)
	]);
# Kinds only an index merged into a stripe has
my %needs_stripe = map { $_ => 1 }
  qw(targeted:blockBits targeted:nrows slice tidmap stripe stripelist summary stripesummary);
# Kinds made on the index of a table of several full stripes (below)
my %needs_big = map { $_ => 1 } qw(summary stripesummary metasummary keyless group groupslot);
# Kinds made on an index whose VACUUM emptied a stripe, moving its live
# rows back to pending pages flagged BLOOMIDX_KEYLESS (below)
my %needs_keyless = map { $_ => 1 } qw(keyless);
my $seed = $ENV{BX_FUZZ_SEED} // 1;
my @layouts = split ' ', $ENV{BX_FUZZ_LAYOUTS} // 'row sliced';
my $per_round = 25;
my $timeout_s = 3;
# A statement's time (psql's \timing: from sending it to its result, not
# counting the connection, which a loaded machine or the sanitizer build can
# make take seconds) may exceed its timeout by a second
my $max_s = $timeout_s + 1;

my $node = PostgreSQL::Test::Cluster->new('corruption_fuzz');
# Data checksums off, as initdb makes a cluster up to PostgreSQL 17 (18 and
# later turn them on): bloomidx's own checks meet the damage
# (t/019_corruption_checksums.pl: with checksums on, core reports it first)
$node->init(no_data_checksums => 1);
$node->append_conf('postgresql.conf', q{
autovacuum = off
restart_after_crash = on
});
$node->start;
$node->safe_psql('postgres', 'CREATE EXTENSION bloomidx');
if ($ENV{BX_ASAN})
{
	like($node->safe_psql('postgres', "SELECT pg_read_file('/proc/self/maps')"),
		qr/libasan/, 'the server runs with the ASan runtime');
	like($node->safe_psql('postgres',
			"LOAD 'bloomidx'; SELECT pg_read_file('/proc/self/maps')"),
		qr/bloomidx\.so/, 'the server loads bloomidx.so');
}
my $blcksz = $node->safe_psql('postgres', 'SHOW block_size');

# Offsets in a page, and in the contents of each kind of page (src/core/page.h)
my $contents = 24;
my @header = ([ 'pd_lower', 12, 'S' ], [ 'pd_upper', 14, 'S' ],
	[ 'pd_special', 16, 'S' ], [ 'ntuples', $blcksz - 8, 'S' ],
	[ 'maxtuples', $blcksz - 6, 'S' ], [ 'flags', $blcksz - 4, 'S' ],
	[ 'page_id', $blcksz - 2, 'S' ]);
# The sliced layout's summary range of the metapage (format 4,
# BloomSlicedSummaryMetaData), past the layouts' area of format 1
my @metasummary = ([ 'summary.bitsPerKey', 5256, 'S' ],
	[ 'summary.flags', 5258, 'S' ], [ 'summary.completeBelow', 5260, 'L' ],
	[ 'summary.blocks[0]', 5264, 'S' ], [ 'summary.blocks[1]', 5266, 'S' ]);
# The first slot of the summary groups (sliced.h), past every other field
my @groupslot = ([ 'group.groupPlus1', 5528, 'L' ], [ 'group.first', 5532, 'L' ],
	[ 'group.perStripe', 5536, 'S' ], [ 'group.npages', 5538, 'S' ],
	[ 'group.sealed', 5544, 'Q' ]);
my @meta = ([ 'magic', 0, 'L' ], [ 'version', 4, 'S' ], [ 'layout', 6, 'S' ],
	[ 'tuplesPerPage', 10, 'S' ], [ 'nColumns', 12, 'S' ],
	[ 'sigBits', 14, 'S' ], [ 'bitsPerColumn[0]', 16, 'S' ],
	[ 'bitsPerColumn[1]', 18, 'S' ], [ 'bitsPerColumn[2]', 20, 'S' ],
	[ 'statTuples', 88, 'Q' ], [ 'statBitsSet', 96, 'Q' ],
	[ 'nFree', 104, 'S' ], [ 'freeStart', 106, 'S' ],
	[ 'freePages[0]', 108, 'L' ], [ 'freePages[1]', 112, 'L' ],
	[ 'mergedRows', 2160, 'Q' ], [ 'firstStripe', 2168, 'L' ],
	[ 'nStripes', 2172, 'L' ], [ 'nPending', 2176, 'S' ],
	[ 'stripeLists[0]', 2180, 'L' ], [ 'stripeLists[1]', 2184, 'L' ],
	[ 'pendingPages[0]', 4228, 'L' ], [ 'pendingPages[1]', 4232, 'L' ],
	@metasummary);
my @stripe = ([ 'nlive', 0, 'L' ], [ 'nTidPages', 4, 'S' ], [ 'flags', 6, 'S' ],
	[ 'tidPages[0]', 8, 'L' ], [ 'tidPages[1]', 12, 'L' ],
	[ 'tidFirstRow[0]', 208, 'S' ], [ 'tidFirstRow[1]', 210, 'S' ],
	[ 'slices[0]', 308, 'L' ], [ 'slices[1]', 312, 'L' ],
	[ 'slices[7]', 336, 'L' ], [ 'slices[40]', 468, 'L' ]);
my @tidmap = ([ 'firstRow', 0, 'S' ], [ 'nrows', 2, 'S' ],
	[ 'blockBits', 4, 'C' ], [ 'offsetBits', 5, 'C' ],
	[ 'baseBlock', 8, 'L' ], [ 'packed[0]', 12, 'L' ]);
my @stripelist = ([ 'entry[0]', 0, 'L' ], [ 'entry[1]', 4, 'L' ]);
my @data = ([ 'signature[0]', 0, 'L' ], [ 'signature[1]', 8, 'L' ]);

my %max = (C => 0xff, S => 0xffff, L => 0xffffffff, Q => 0xffffffff);

# A value for a field of format $fmt now holding $old, on page $blkno of
# an index of $nblocks blocks
sub fuzz_value
{
	my ($fmt, $old, $blkno, $nblocks) = @_;
	my @choices = (0, 1, $max{$fmt}, $max{$fmt} - 1, $old + 1, $old - 1,
		int(rand($nblocks)), $blkno, $nblocks, int(rand($max{$fmt} + 1)),
		$old * 2, 60000, 4096, 1024);
	my $v = $choices[ int(rand(@choices)) ];
	$v = 0 if $v < 0;
	return $v > $max{$fmt} ? $max{$fmt} : $v;
}

# The field edits that scans once read past, answering with too few rows
# and no error (src/README, Verification): a data page flagged as a page of
# one of the sliced layout's kinds, the metapage's signature length lowered
# by one, a TID map with no block bits, or one row more.  Returns
# [block, offset in the page, format, new value, description, kind of
# edit] of one of them, a kind of edit picked first ($want, or at random),
# or undef if $image has none.
sub targeted_edit
{
	my ($image, $want) = @_;
	my $nblocks = length($image) / $blcksz;
	my $sig_bits = unpack('S', substr($image, $contents + 14, 2));
	my %edits = (sigBits => [ [ 0, $contents + 14, 'S', $sig_bits - 1,
				"sigBits $sig_bits -> " . ($sig_bits - 1), 'sigBits' ] ]);
	for my $blkno (1 .. $nblocks - 1)
	{
		my $page = $blkno * $blcksz;
		my ($flags, $page_id) = unpack('S S', substr($image, $page + $blcksz - 4, 4));
		next unless $page_id == 0xFF8B;
		if ($flags == 0)
		{
			my $kind = (0x04, 0x08, 0x10, 0x40, 0x80)[ int(rand(5)) ];
			push @{ $edits{flags} }, [ $blkno, $blcksz - 4, 'S', $kind,
				sprintf('data page flags 0x0000 -> 0x%04x', $kind), 'flags' ];
		}
		elsif ($flags == 0x08)
		{
			my ($nrows, $block_bits) = unpack('S C', substr($image, $page + $contents + 2, 3));
			push @{ $edits{blockBits} }, [ $blkno, $contents + 4, 'C', 0,
				"TID map blockBits $block_bits -> 0", 'blockBits' ] if $block_bits > 0;
			push @{ $edits{nrows} }, [ $blkno, $contents + 2, 'S', $nrows + 1,
				"TID map nrows $nrows -> " . ($nrows + 1), 'nrows' ];
		}
	}
	my @kinds = sort keys %edits;
	my $edits = $edits{ $want // $kinds[ int(rand(@kinds)) ] };
	return undef unless $edits;
	return $edits->[ int(rand(@$edits)) ];
}

# The kind of page $blkno of $image is, as the corruptions name them
sub page_kind
{
	my ($image, $blkno) = @_;
	return 'meta' if $blkno == 0;
	my $flags = unpack('S', substr($image, $blkno * $blcksz + $blcksz - 4, 2));
	return $flags & 0x80 ? 'summary'
	  : $flags & 0x200 ? 'group'
	  : $flags & 0x10 ? 'stripe'
	  : $flags & 0x08 ? 'tidmap'
	  : $flags & 0x40 ? 'stripelist'
	  : $flags & 0x04 ? 'slice'
	  : 'data';
}

# The fields of page $blkno of $image that a corruption of the fields of
# its kind picks from: [name, offset in the page, format]
sub page_fields
{
	my ($image, $blkno) = @_;
	my $page = $blkno * $blcksz;
	my $kind = page_kind($image, $blkno);
	my @fields;
	if ($kind eq 'meta') { @fields = map { [ @$_, $contents ] } @meta; }
	elsif ($kind eq 'stripe')
	{
		@fields = map { [ @$_, $contents ] } (@stripe, stripe_summary_fields($image, $blkno));
	}
	elsif ($kind eq 'summary' || $kind eq 'group')
	{
		# Its tag and flags, or a word of its blocks with bits set
		my $w = summary_word($image, $blkno);
		@fields = ([ 'tag.low (ntuples)', $blcksz - 8, 'S', 0 ],
			[ 'tag.high (maxtuples)', $blcksz - 6, 'S', 0 ],
			[ 'flags', $blcksz - 4, 'S', 0 ], [ "block word $w", 4 * $w, 'L', $contents ]);
	}
	elsif ($kind eq 'tidmap') { @fields = map { [ @$_, $contents ] } @tidmap; }
	elsif ($kind eq 'stripelist') { @fields = map { [ @$_, $contents ] } @stripelist; }
	elsif ($kind eq 'slice') { @fields = map { [ @$_, 0 ] } @header; }
	else
	{
		# A data page: a signature, or the TID of one of its slots
		my $ntuples = unpack('S', substr($image, $page + $blcksz - 8, 2));
		my $slot = int(rand($ntuples || 1));
		@fields = ((map { [ @$_, $contents ] } @data), pending_key_fields($image, $blkno),
			[ "tid[$slot].block", $blcksz - 8 - 6 * ($slot + 1), 'L', 0 ],
			[ "tid[$slot].offset", $blcksz - 8 - 6 * ($slot + 1) + 4, 'S', 0 ]);
	}
	my ($name, $off, $fmt, $base) = @{ $fields[ int(rand(@fields)) ] };
	return ($name, $off + $base, $fmt);
}

# A word of the blocks of summary page $blkno of $image with bits set (any
# word of the used part if none has)
sub summary_word
{
	my ($image, $blkno) = @_;
	my $page = $blkno * $blcksz;
	my $lower = unpack('S', substr($image, $page + 12, 2));
	my $nwords = int(($lower - $contents) / 4);
	$nwords = 1 if $nwords < 1 || $nwords > ($blcksz - $contents - 8) / 4;
	my @set = grep { unpack('L', substr($image, $page + $contents + 4 * $_, 4)) } 0 .. $nwords - 1;
	return @set ? $set[ int(rand(@set)) ] : int(rand($nwords));
}

# The fields of the summary header of stripe page $blkno of $image (format
# 4, BloomStripeSummaryData past the slices' links): [name, offset in the
# contents, format]
sub stripe_summary_fields
{
	my ($image, $blkno) = @_;
	my $sig_bits = unpack('S', substr($image, $contents + 14, 2));
	my $sum = 308 + 4 * $sig_bits;
	my ($ncolumns, $npages) = unpack('S S', substr($image, $blkno * $blcksz + $contents + $sum, 4));
	my @fields = ([ 'summary.nColumns', $sum, 'S' ], [ 'summary.nPages', $sum + 2, 'S' ]);
	return @fields if $ncolumns == 0 || $ncolumns > 32;
	my $c = int(rand($ncolumns));
	my $pages = $sum + ((4 + 2 * $ncolumns + 3) & ~3);
	push @fields, [ "summary.blocks[$c]", $sum + 4 + 2 * $c, 'S' ];
	push @fields, [ 'summary.pages[0]', $pages, 'L' ],
	  [ 'summary.pages[' . ($npages - 1) . ']', $pages + 4 * ($npages - 1), 'L' ]
	  if $npages > 0 && $npages <= 128;
	return @fields;
}

# The fields of the keys of a slot in use of pending page $blkno of $image
# (format 4: a 32-bit key per column not of sets after each signature),
# [name, offset in the page, format, 0]; none on a page without keys
sub pending_key_fields
{
	my ($image, $blkno) = @_;
	my ($version, $layout) = unpack('S S', substr($image, $contents + 4, 4));
	my ($ncolumns, $sig_bits) = unpack('S S', substr($image, $contents + 12, 4));
	my $page = $blkno * $blcksz;
	my ($ntuples, undef, $flags) = unpack('S S S', substr($image, $page + $blcksz - 8, 6));
	return () if $version < 4 || $layout != 2 || $flags != 0 || $ntuples == 0;
	my $nkeys = grep { !(unpack('S', substr($image, $contents + 16 + 2 * $_, 2)) & 0x8000) }
	  0 .. $ncolumns - 1;
	return () if $nkeys == 0;
	my $sig_bytes = int(($sig_bits + 7) / 8);
	my $slot = int(rand($ntuples));
	my $c = int(rand($nkeys));
	return ([ "slot[$slot].key[$c]",
			$contents + $slot * ($sig_bytes + 4 * $nkeys) + $sig_bytes + 4 * $c, 'L', 0 ]);
}

# Set field $name ($fmt at $off) of page $blkno of $image to a fuzzed
# value; returns the new image and what was done
sub fuzz_field
{
	my ($image, $blkno, $name, $off, $fmt) = @_;
	my $nblocks = length($image) / $blcksz;
	my $page = $blkno * $blcksz;
	my $flags = unpack('S', substr($image, $page + $blcksz - 4, 2));
	my $size = length(pack($fmt, 0));
	my $old = unpack($fmt, substr($image, $page + $off, $size));
	my $new = fuzz_value($fmt, $old, $blkno, $nblocks);
	substr($image, $page + $off, $size, pack($fmt, $new));
	return ($image, sprintf("block %u (flags 0x%04x): %s %s -> %s",
			$blkno, $flags, $name, $old, $new));
}

# Corrupt a copy of $image (an index file) with a corruption of kind
# $kind (one of %kinds): on a page of that kind, for the fields of a kind
# of page.  Returns the corrupted image and what was done, or nothing if
# $image has no page for that kind.
sub corrupt_kind
{
	my ($image, $kind) = @_;
	my $nblocks = length($image) / $blcksz;
	if ($kind =~ /^targeted:(.*)/)
	{
		my $edit = targeted_edit($image, $1) or return;
		my ($blkno, $off, $fmt, $new, $desc) = @$edit;
		substr($image, $blkno * $blcksz + $off, length(pack($fmt, 0)), pack($fmt, $new));
		return ($image, sprintf("block %u: targeted: %s", $blkno, $desc));
	}
	my $blkno = int(rand($nblocks));
	if ($kind eq 'bytes')
	{
		my $n = 1 + int(rand(8));
		my $off = int(rand($blcksz - $n));
		my $bytes = join('', map { chr(int(rand(256))) } 1 .. $n);
		substr($image, $blkno * $blcksz + $off, $n, $bytes);
		return ($image, sprintf("block %u: %d random bytes at %d", $blkno, $n, $off));
	}
	if ($kind eq 'header')
	{
		my ($name, $off, $fmt) = @{ $header[ int(rand(@header)) ] };
		return fuzz_field($image, $blkno, $name, $off, $fmt);
	}
	if ($kind eq 'metasummary')
	{
		my ($name, $off, $fmt) = @{ $metasummary[ int(rand(@metasummary)) ] };
		return fuzz_field($image, 0, $name, $off + $contents, $fmt);
	}
	if ($kind eq 'groupslot')
	{
		my ($name, $off, $fmt) = @{ $groupslot[ int(rand(@groupslot)) ] };
		return fuzz_field($image, 0, $name, $off + $contents, $fmt);
	}
	if ($kind eq 'summary' || $kind eq 'group')
	{
		# A word of a summary's blocks cleared: "no" for stripes that have
		# the values whose bits it held (a wrong answer bloomidx_check must
		# report); the other fields of summary pages are drawn at random
		my @blocks = grep { page_kind($image, $_) eq $kind } 1 .. $nblocks - 1;
		return unless @blocks;
		my $b = $blocks[ int(rand(@blocks)) ];
		my $w = summary_word($image, $b);
		my $off = $b * $blcksz + $contents + 4 * $w;
		my $old = unpack('L', substr($image, $off, 4));
		substr($image, $off, 4, pack('L', 0));
		return ($image, sprintf("block %u (flags 0x%04x): block word %u %u -> 0", $b,
				$kind eq 'group' ? 0x200 : 0x80, $w, $old));
	}
	if ($kind eq 'keyless')
	{
		my @blocks = grep {
			my ($ntuples, undef, $flags) =
			  unpack('S S S', substr($image, ($_ + 1) * $blcksz - 8, 6));
			$flags == 0x100 && $ntuples > 0
		} 1 .. $nblocks - 1;
		return unless @blocks;
		my $b = $blocks[ int(rand(@blocks)) ];
		substr($image, ($b + 1) * $blcksz - 4, 2, pack('S', 0));
		return ($image, sprintf("block %u (flags 0x0100): flags 256 -> 0 (keyless rows' zero keys pass for keys)", $b));
	}
	if ($kind eq 'stripesummary' || $kind eq 'key')
	{
		my @blocks = grep { page_kind($image, $_) eq ($kind eq 'key' ? 'data' : 'stripe') }
		  1 .. $nblocks - 1;
		my @choices = map {
			my $b = $_;
			map { [ $b, @$_ ] } $kind eq 'key' ? pending_key_fields($image, $b)
			  : map { [ @$_[0, 1], $_->[2], $contents ] } stripe_summary_fields($image, $b)
		} @blocks;
		return unless @choices;
		my ($b, $name, $off, $fmt, $base) = @{ $choices[ int(rand(@choices)) ] };
		return fuzz_field($image, $b, $name, $off + $base, $fmt);
	}
	my @blocks = grep { page_kind($image, $_) eq $kind } 0 .. $nblocks - 1;
	return unless @blocks;
	$blkno = $blocks[ int(rand(@blocks)) ];
	return fuzz_field($image, $blkno, page_fields($image, $blkno));
}

# Corrupt a copy of $image (an index file) at random; returns it, what was
# done, and its kind (as in %kinds)
sub corrupt
{
	my ($image) = @_;
	my $nblocks = length($image) / $blcksz;

	if (rand() < 0.2)
	{
		my ($blkno, $off, $fmt, $new, $desc, $edit) = @{ targeted_edit($image) };
		substr($image, $blkno * $blcksz + $off, length(pack($fmt, 0)), pack($fmt, $new));
		return ($image, sprintf("block %u: targeted: %s", $blkno, $desc), "targeted:$edit");
	}

	my $kind = rand();
	my $blkno = $kind < 0.3 ? 0 : 1 + int(rand($nblocks - 1));
	$blkno = 0 if $nblocks == 1;
	my $page = $blkno * $blcksz;

	if (rand() < 0.2)
	{
		# Random bytes anywhere on the page
		my $n = 1 + int(rand(8));
		my $off = int(rand($blcksz - $n));
		my $bytes = join('', map { chr(int(rand(256))) } 1 .. $n);
		substr($image, $page + $off, $n, $bytes);
		return ($image, sprintf("block %u: %d random bytes at %d", $blkno, $n, $off), 'bytes');
	}

	if (rand() < 0.25)
	{
		my ($name, $off, $fmt) = @{ $header[ int(rand(@header)) ] };
		return (fuzz_field($image, $blkno, $name, $off, $fmt), 'header');
	}
	return (fuzz_field($image, $blkno, page_fields($image, $blkno)), page_kind($image, $blkno));
}

# Run $sql on its own; returns (seconds of its longest statement, stdout,
# stderr).  Without any statement's time (psql did not get that far), the
# time of the whole psql run.
sub run
{
	my ($sql) = @_;
	my $timed_out = 0;
	my $t0 = time();
	my ($ret, $stdout, $stderr) = $node->psql('postgres',
		"SET statement_timeout = '${timeout_s}s';\n\\set VERBOSITY verbose\n\\timing on\n$sql",
		timeout => 60, timed_out => \$timed_out);
	my $elapsed = time() - $t0;
	$stdout //= '';
	my @times = $stdout =~ /^Time: ([0-9.]+) ms/mg;
	$stdout =~ s/^(?:Time: |Timing is on\.)[^\n]*\n?//mg;
	$stdout =~ s/\n+\z//;
	if (@times)
	{
		$elapsed = 0;
		$_ / 1000 > $elapsed and $elapsed = $_ / 1000 for @times;
	}
	$elapsed = 999 if $timed_out;
	return ($elapsed, $stdout, $stderr // '');
}

my %sqlstates;
my ($wrong_reported, $wrong_unreported, $slow, $crashes, $unchecked) = (0, 0, 0, 0, 0);
my ($targeted, $targeted_silent) = (0, 0);

# The ids matching a query through the index, or by a sequential scan
sub answer
{
	my ($table, $cond, $via_index, $label, $what) = @_;
	my $settings = $via_index
	  ? 'SET enable_seqscan = off; SET enable_indexscan = off;'
	  : 'SET enable_bitmapscan = off; SET enable_indexscan = off;';
	my ($elapsed, $out, $err) = run("$settings\n"
		  . "SELECT coalesce(string_agg(id::text, ',' ORDER BY id), '') FROM $table WHERE $cond;");
	statement_done("$what: $label", $elapsed, $err);
	return $err =~ /ERROR/ ? undef : $out;
}

# Account for one statement: its SQLSTATE, and its time
sub statement_done
{
	my ($what, $elapsed, $err) = @_;
	if ($err =~ /ERROR:  ([0-9A-Z]{5}): ([^\n]*)/)
	{
		my ($state, $msg) = ($1, $2);
		$sqlstates{$state}++;
		note("$what: $state: $msg") if $state eq 'XX000';
		# A block number read from the index and not checked against the
		# length of the index or table: 58P01 ("could not open file ...
		# (target block N)") or XX001 "could not read block N ... read only
		# 0 of 8192 bytes" from the storage manager rather than XX002
		if ($state eq '58P01' || $msg =~ /^could not read block \d+ in file/)
		{
			$unchecked++;
			fail("$what: $state, not a report of the corrupted block: $msg");
		}
	}
	if ($elapsed > $max_s)
	{
		$slow++;
		fail("$what: took $elapsed s under a ${timeout_s}s statement_timeout");
	}
	return;
}

# Do the answers of table $table match, or does bloomidx_check report the
# index?  Counts a wrong answer, reported or not.  After a targeted edit
# ($targeted), an index scan must not answer wrong at all: it reports the
# damage.
sub check_answers
{
	my ($table, $index, $what, $targeted) = @_;
	my $wrong = 0;
	for my $cond ("a = 7 AND b = 'b7'", "a = ANY ('{3, 5, 7, 11}')", "b = 'b1'",
		"s LIKE '%x12.so%'", "t @> '{3, 5}'", q{j @> '{"k": 3, "o": {"p": 1}}'})
	{
		my $seq = answer($table, $cond, 0, "seq scan on $cond", $what);
		my $idx = answer($table, $cond, 1, "index scan on $cond", $what);
		$wrong = 1 if defined $seq && defined $idx && $seq ne $idx;
		if ($targeted && defined $seq && defined $idx && $seq ne $idx)
		{
			$targeted_silent++;
			fail("$what: index scan on $cond answers wrong without an error");
		}
	}
	my ($elapsed, $out, $err) = run("SELECT bloomidx_check('$index', true);");
	statement_done("$what: bloomidx_check", $elapsed, $err);
	if ($wrong)
	{
		if ($err =~ /ERROR:  (XX001|XX002|0A000)/) { $wrong_reported++; }
		else
		{
			$wrong_unreported++;
			fail("$what: wrong answer that bloomidx_check does not report");
		}
	}
	return;
}

my $round = 0;
my (%made, @counts, @never);
for my $layout (@layouts)
{
	my $ncorruptions = $ENV{BX_FUZZ_CORRUPTIONS}
	  // ($ENV{BX_FULL} ? 100 : scalar @{ $kinds{$layout} });
	push @counts, "$ncorruptions $layout";
	push @never, map { "$layout $_" } @{ $kinds{$layout} }
	  if $ncorruptions >= @{ $kinds{$layout} };
	# The kind each corruption must be, in turn, then undef: at random
	my @plan = @{ $kinds{$layout} };
	my $done = 0;
	while ($done < $ncorruptions)
	{
		my $n = $ncorruptions - $done < $per_round ? $ncorruptions - $done : $per_round;
		my $round_seed = $seed + $round++;
		srand($round_seed);
		note("layout $layout, round seed $round_seed: $n corruptions");
		my @forced = map { shift @plan } 1 .. $n;

		# One table and index per corruption; the sliced layout with rows on
		# pending pages too, and every second index with its first rows
		# merged into a stripe (slices, a TID map, a stripe page and a
		# stripe-list page); every third index has columns of sets too
		# (text_trgm_ops, array_elem_ops, jsonb_path_ops: format version 2).
		# An index of the sliced layout corrupted in its summaries (and every
		# fifth one drawn at random) is big: CREATE INDEX writes two full
		# stripes of 65,280 rows with their summaries sealed in their
		# group's region (and the metapage's summary range the sizes it
		# measured, its first group slot the region), then 3,000 inserted
		# rows merge into a third stripe whose summary, in pages of its
		# own, takes those sizes; for a corruption of rows without keys,
		# VACUUM then empties the first stripe, 40,000 of its rows deleted,
		# and its live rows go back to pending pages flagged
		# BLOOMIDX_KEYLESS (where a merge stopped short leaves them)
		my $setup = '';
		my $rows = "g, g % 100, 'b' || (g % 37), 'usr/x' || (g % 50) || '.so', ARRAY[g % 10, g % 7],"
		  . " jsonb_build_object('k', g % 9, 'o', jsonb_build_object('p', g % 4))";
		for my $i (1 .. $n)
		{
			my $columns = $i % 3 == 0
			  ? 'a, b, s text_trgm_ops, t array_elem_ops, j jsonb_path_ops' : 'a, b';
			my $big = $layout eq 'sliced'
			  && (defined $forced[ $i - 1 ] ? $needs_big{ $forced[ $i - 1 ] } : $i % 5 == 2);
			$setup .= "DROP TABLE IF EXISTS fz$i;\n"
			  . "CREATE TABLE fz$i (id int, a int, b text, s text, t int[], j jsonb);\n"
			  . "INSERT INTO fz$i SELECT $rows FROM generate_series(1, "
			  . ($big ? 2 * 65280 : 3000) . ") g;\n"
			  . "CREATE INDEX fz${i}_bx ON fz$i USING bloomidx ($columns) WITH (layout = '$layout');\n"
			  . ($big ? "INSERT INTO fz$i SELECT $rows FROM generate_series(1, 3000) g;\n" : '')
			  . ($layout eq 'sliced' && ($big || $i % 2 == 0 || $needs_stripe{ $forced[ $i - 1 ] // '' })
				? "SELECT bloomidx_merge('fz${i}_bx');\n" : '')
			  . ($needs_keyless{ $forced[ $i - 1 ] // '' }
				? "DELETE FROM fz$i WHERE id <= 40000;\n"
				: "INSERT INTO fz$i SELECT $rows FROM generate_series(3001, 3100) g;\n");
		}
		$node->safe_psql('postgres', $setup);
		# VACUUM merges the rows it moves back at once: a merge stopped
		# after its first WAL record (as a crash would stop it) leaves
		# them in their pending pages
		for my $i (grep { $needs_keyless{ $forced[ $_ - 1 ] // '' } } 1 .. $n)
		{
			my ($ret, $out, $err) = $node->psql('postgres',
				"SET bloomidx.debug_merge_stop_after = 1; VACUUM fz$i;");
			die "VACUUM fz$i: the merge was not stopped: $err"
			  unless $err =~ /stopped after 1 WAL records/;
			$node->safe_psql('postgres',
				"INSERT INTO fz$i SELECT $rows FROM generate_series(3001, 3100) g;");
		}
		$node->safe_psql('postgres', 'CHECKPOINT;');
		my @files = map {
			$node->data_dir . '/'
			  . $node->safe_psql('postgres', "SELECT pg_relation_filepath('fz${_}_bx')")
		} 1 .. $n;
		$node->stop;

		my (@what, @targeted);
		for my $i (1 .. $n)
		{
			my $image = slurp_file($files[ $i - 1 ]);
			my $kind = $forced[ $i - 1 ];
			my ($corrupted, $desc);
			if (defined $kind)
			{
				($corrupted, $desc) = corrupt_kind($image, $kind);
				defined $corrupted
				  or die "index fz${i}_bx ($layout) has no page for a corruption of kind $kind";
			}
			else
			{
				($corrupted, $desc, $kind) = corrupt($image);
			}
			$made{"$layout $kind"}++;
			my $is_targeted = $kind =~ /^targeted:/ ? 1 : 0;
			push @targeted, $is_targeted;
			$targeted += $is_targeted;
			open(my $fh, '>', $files[ $i - 1 ]) or die "cannot write $files[$i - 1]: $!";
			binmode $fh;
			print $fh $corrupted;
			close $fh;
			push @what, "$layout #" . ($done + $i) . " (seed $round_seed): $desc";
		}

		my $log_offset = -s $node->logfile;
		$node->start;
		for my $i (1 .. $n)
		{
			my $what = $what[ $i - 1 ];
			note($what);
			my ($t, $e);
			check_answers("fz$i", "fz${i}_bx", $what, $targeted[ $i - 1 ]);
			for my $sql ("INSERT INTO fz$i SELECT g, g % 100, 'b' || (g % 37) FROM generate_series(5001, 5300) g;",
				"DELETE FROM fz$i WHERE id % 10 = 3;\nVACUUM fz$i;",
				"SELECT bloomidx_merge('fz${i}_bx');",
				"SELECT * FROM bloomidx_stats('fz${i}_bx');")
			{
				($t, undef, $e) = run($sql);
				statement_done("$what: $sql", $t, $e);
			}
			check_answers("fz$i", "fz${i}_bx", "$what, after changes");
			if ($node->log_contains(qr/terminated by signal|server process .* was terminated/,
					$log_offset))
			{
				$crashes++;
				fail("$what: a backend crashed");
				$log_offset = -s $node->logfile;
				# Wait for the restart after the crash
				$node->poll_query_until('postgres', 'SELECT 1', '1');
			}
		}
		$done += $n;
	}
}

my $states = join(', ', map { "$_: $sqlstates{$_}" } sort keys %sqlstates);
my $made = join(', ', map { "$_: $made{$_}" } sort keys %made);
diag("corruption fuzz: @counts corruptions (seed $seed), by kind: $made;"
	  . " crashes $crashes, statements past the timeout $slow,"
	  . " reads past the end of a file (58P01) $unchecked, wrong answers"
	  . " reported by bloomidx_check $wrong_reported, unreported $wrong_unreported;"
	  . " targeted edits $targeted, wrong answers of a scan after one $targeted_silent;"
	  . " errors by SQLSTATE: $states");
# (when there were at least as many corruptions as kinds)
is(join(', ', grep { !$made{$_} } @never), '', 'every kind of corruption was made');
is($crashes, 0, 'no backend crashed');
is($slow, 0, 'no statement outlived its timeout by more than a second');
is($wrong_unreported, 0, 'every wrong answer is reported by bloomidx_check');
is($targeted_silent, 0, 'no index scan answers wrong after a targeted edit');
my @reports = grep { /ERROR: AddressSanitizer|runtime error:|SUMMARY: \w+Sanitizer/ }
  split /\n/, slurp_file($node->logfile);
diag("sanitizer report: $_") for @reports[ 0 .. ($#reports < 20 ? $#reports : 19) ];
is(scalar(@reports), 0, 'no sanitizer report in the server log');
is($unchecked, 0, 'no block number read from the index is read past the end of a file');

$node->stop;
done_testing();
