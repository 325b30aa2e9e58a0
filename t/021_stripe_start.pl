
# Copyright and license: see the project's LICENSE.

# The merge steps of a sliced index's inserts start new stripes in steps:
# the steps that allocate a new stripe's pages (a few at a time) merge no
# rows, and the step that writes the first rows into it finds them all.
# Single-row inserts fill several stripes; the DEBUG1 line of every step
# shows what it did.  Then a crash in the middle of a stripe's allocation:
# after recovery, on the primary and on a streaming standby, the index's
# answers equal the seq scan's and bloomidx_check (heapallindexed) passes,
# and inserts fill the half-allocated stripe.

use strict;
use warnings;

use FindBin;
use lib $FindBin::RealBin;

use PostgreSQL::Test::Cluster;
use PostgreSQL::Test::Utils;
use Test::More;
use BloomidxTest;

my $stripe_rows = 65280;

my $primary = PostgreSQL::Test::Cluster->new('primary');
$primary->init(allows_streaming => 1);
$primary->start;
$primary->backup('bkp');
my $standby = PostgreSQL::Test::Cluster->new('standby');
$standby->init_from_backup($primary, 'bkp', has_streaming => 1);
$standby->start;

$primary->safe_psql('postgres', bx_schema_sql('st', layout => 'sliced'));

# Insert rows $from .. $to with DEBUG1 on; returns the merge steps' lines,
# each [what, count, stripe or pending pages]
sub insert_steps
{
	my ($from, $to) = @_;
	my ($stdout, $stderr);
	$primary->psql('postgres',
		"SET client_min_messages = debug1;\n" . bx_fill_sql('st', $from, $to),
		stdout => \$stdout, stderr => \$stderr, on_error_die => 1);
	my @steps;
	foreach my $line (split /\n/, $stderr)
	{
		next unless $line =~ /bloomidx index "st_bx": (.*) in [0-9.]+ ms/;
		my $what = $1;
		if ($what =~ /^allocated (\d+) pages of stripe (\d+)$/)
		{
			push @steps, [ 'allocated', $1, $2 ];
		}
		elsif ($what =~ /^merged (\d+) rows from (\d+) pending pages$/)
		{
			push @steps, [ 'merged', $1, $2 ];
		}
		else
		{
			push @steps, [ $what, 0, 0 ];
		}
	}
	return @steps;
}

sub stats
{
	my $out = $primary->safe_psql('postgres',
		"SELECT stripes, next_row, signature_bits, tuples_per_page FROM bloomidx_stats('st_bx')"
	);
	return split /\|/, $out;
}

sub check_index
{
	my ($label) = @_;
	bx_check_answers($primary, 'st', "$label, primary");
	is( $primary->psql(
			'postgres',
			"SELECT bloomidx_check('st_bx', heapallindexed => true);
			 SELECT bloomidx_check('st_tn_bx', heapallindexed => true)"),
		0,
		"$label: bloomidx_check passes on the primary");
	$primary->wait_for_catchup($standby);
	bx_check_answers($standby, 'st', "$label, standby");
	is( $standby->psql(
			'postgres',
			"SELECT bloomidx_check('st_bx', heapallindexed => true);
			 SELECT bloomidx_check('st_tn_bx', heapallindexed => true)"),
		0,
		"$label: bloomidx_check passes on the standby");
}

# Three stripes and a half, one row an insert
my $rows = int(3.5 * $stripe_rows);
my @steps = insert_steps(1, $rows);
my ($stripes, $next_row, $sig_bits, $per_page) = stats();
cmp_ok($stripes, '>=', 3, "inserts filled $stripes stripes");

# Every step either allocates at most a budget of pages, or merges at most
# two pending pages' rows (from three pages, when it takes the rest of a
# page a step took in part): pages of rows without keys, 8160 bytes of
# (signature, TID) slots, which hold more than pages with keys (format 4)
my $budget = $sig_bits > 128 ? int(($sig_bits + 7) / 8) : 16;
my $step_rows = 2 * int(8160 / (int(($sig_bits + 7) / 8) + 6));
my @unknown = grep { $_->[0] ne 'allocated' && $_->[0] ne 'merged' } @steps;
is(scalar(@unknown), 0, 'every merge step allocates or merges');
my @alloc = grep { $_->[0] eq 'allocated' } @steps;
my @merged = grep { $_->[0] eq 'merged' } @steps;
is((grep { $_->[1] > $budget || $_->[1] < 1 } @alloc),
	0, "every allocation step allocates 1 to $budget pages");
is((grep { $_->[1] > $step_rows } @merged),
	0, "every merging step takes at most two pending pages' rows");

# Each stripe was allocated in several steps before its first rows: a
# stripe page and a slice page per bit, at least
my %per_stripe;
$per_stripe{ $_->[2] } += $_->[1] foreach @alloc;
for my $s (0 .. $stripes - 1)
{
	cmp_ok($per_stripe{$s} // 0, '>=', $sig_bits + 1,
		"stripe $s: its pages were allocated by earlier steps");
}
my $order_ok = 1;
my $rows_merged = 0;
foreach my $st (@steps)
{
	if ($st->[0] eq 'allocated')
	{
		$order_ok = 0 if $st->[2] != int($rows_merged / $stripe_rows);
	}
	else
	{
		$rows_merged += $st->[1];
	}
}
ok($order_ok, 'allocation steps allocate the stripe the next rows go to');
is($rows_merged, $next_row, 'the merging steps merged the rows the index counts');

check_index('stripes filled by inserts');

# A crash in the middle of a stripe's allocation: insert a pending page's
# worth of rows at a time until a step allocated pages, and crash there
my $id = $rows;
my $crashed = 0;
for my $round (1 .. 400)
{
	my @s = insert_steps($id + 1, $id + $per_page);
	$id += $per_page;
	if (@s && $s[-1][0] eq 'allocated')
	{
		$crashed = $s[-1][2];
		last;
	}
}
ok($crashed > 0, "a step allocated pages of stripe $crashed");
$primary->stop('immediate');
$primary->start;

check_index('after a crash in the middle of an allocation');

# The rest of the stripe's pages, and its rows, after the crash
my $before = (stats())[0];
@steps = insert_steps($id + 1, $id + $stripe_rows);
$id += $stripe_rows;
($stripes) = stats();
cmp_ok($stripes, '>', $before, 'inserts filled the stripe allocated across the crash');
check_index('after the stripe allocated across the crash');

# VACUUM frees the pages of a stripe being allocated, the next steps
# allocate them again
for my $round (1 .. 400)
{
	my @s = insert_steps($id + 1, $id + $per_page);
	$id += $per_page;
	last if @s && $s[-1][0] eq 'allocated';
}
$primary->safe_psql('postgres', 'VACUUM st');
@steps = insert_steps($id + 1, $id + $stripe_rows);
$id += $stripe_rows;
check_index('after a VACUUM in the middle of an allocation');

done_testing();
