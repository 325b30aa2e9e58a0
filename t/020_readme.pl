
# Copyright and license: see the project's LICENSE.

# The README's SQL examples run as written (t/020_readme.pl).
#
# Every ```sql fenced block of README.md is run, in order, in one database of
# a throwaway cluster, as a reader pasting them into psql would: a block
# that fails fails the test, naming the line of its fence.  A plain ```
# block that directly follows an sql block (blank lines between at most) is
# that block's output as psql prints it: each of its non-blank lines must
# appear, in order and with runs of blanks taken as one, in the output of
# running the block with psql's default aligned format.
#
# A block that cannot run on one node (postgres_fdw across servers, Citus)
# has an HTML comment on the line before its fence:
#     <!-- not run: needs Citus -->
# It is skipped and counted; the test prints how many blocks ran and how
# many it skipped, and fails if fewer than $min_run ran, so that a README
# whose fences changed shape cannot pass by running nothing.

use strict;
use warnings;

use FindBin;
use PostgreSQL::Test::Cluster;
use PostgreSQL::Test::Utils;
use Test::More;

# Fewer SQL blocks than this run means the parser lost them (raise it when
# adding examples).
my $min_run = 10;

# TAP tests run with the source tree as cwd, but find the README from the
# test's own directory in any case.
my $readme = "$FindBin::RealBin/../README.md";
open(my $fh, '<', $readme) or die "cannot open $readme: $!";
my @lines = <$fh>;
close($fh);

# Parse the fenced blocks: { line, lang, text, skip } in order.
my @blocks;
for (my $i = 0; $i < @lines; $i++)
{
	next unless $lines[$i] =~ /^```(\w*)\s*$/;
	my $lang = $1;
	my $start = $i + 1;    # 1-based line number of the fence
	my $skip;
	$skip = $1
	  if $i > 0 && $lines[ $i - 1 ] =~ /^<!--\s*not run:\s*(.*?)\s*-->\s*$/;
	my $text = '';
	for ($i++; $i < @lines && $lines[$i] !~ /^```\s*$/; $i++)
	{
		$text .= $lines[$i];
	}
	die "README.md:$start: unclosed code fence\n" if $i >= @lines;
	push @blocks,
	  {
		line => $start,
		lang => $lang,
		text => $text,
		skip => $skip,
		end => $i + 1
	  };
}

# A plain block right after an sql block is its expected output.
for my $n (1 .. $#blocks)
{
	my ($prev, $cur) = ($blocks[ $n - 1 ], $blocks[$n]);
	next unless $prev->{lang} eq 'sql' && $cur->{lang} eq '';
	my $between = join('', @lines[ $prev->{end} .. $cur->{line} - 2 ]);
	$prev->{expected} = $cur if $between =~ /^\s*$/;
}

my $node = PostgreSQL::Test::Cluster->new('readme');
$node->init;
$node->start;
$node->safe_psql('postgres', 'CREATE DATABASE readme');

# Collapse blanks so that column widths do not matter; EXPLAIN ANALYZE's
# row counts as PostgreSQL 15 to 17 print them (18 and later print two
# decimals, "rows=20.00").
sub normalize
{
	my ($s) = @_;
	$s =~ s/\s+/ /g;
	$s =~ s/^ | $//g;
	$s =~ s/\brows=(\d+)\.00\b/rows=$1/g;
	return $s;
}

my ($nrun, $nskipped, $nchecked) = (0, 0, 0);
for my $blk (grep { $_->{lang} eq 'sql' } @blocks)
{
	if (defined $blk->{skip})
	{
		note "README.md:$blk->{line}: not run ($blk->{skip})";
		$nskipped++;
		next;
	}
	my ($out, $err) = ('', '');
	my $ret = $node->psql(
		'readme', $blk->{text},
		stdout => \$out,
		stderr => \$err,
		extra_params => [ '-P', 'format=aligned', '-P', 'tuples_only=off' ]);
	$nrun++;
	is($ret, 0, "README.md:$blk->{line}: sql block runs")
	  or diag("block:\n$blk->{text}\nstderr:\n$err");

	next unless $blk->{expected};
	$nchecked++;
	my @want = grep { $_ ne '' }
	  map { normalize($_) } split /\n/, $blk->{expected}{text};
	# Messages (NOTICE, WARNING) come after the block's rows.
	my @got = map { s/^psql:[^:]*:\d+: //r } map { normalize($_) }
	  split /\n/, "$out\n$err";
	my ($g, $missing) = (0, undef);
	for my $w (@want)
	{
		$g++ while $g < @got && $got[$g] ne $w;
		if ($g >= @got)
		{
			$missing = $w;
			last;
		}
		$g++;
	}
	ok(!defined $missing,
		"README.md:$blk->{expected}{line}: output of the block at line $blk->{line}")
	  or diag("line not found (in order): $missing\npsql printed:\n$out");
}

note "README.md: $nrun sql blocks run, $nskipped skipped, "
  . "$nchecked outputs checked";
diag("README.md: $nrun sql blocks run, $nskipped skipped, "
	  . "$nchecked outputs checked");
cmp_ok($nrun, '>=', $min_run, "at least $min_run README sql blocks ran");

$node->stop;
done_testing();
