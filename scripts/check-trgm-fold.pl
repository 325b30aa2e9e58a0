#!/usr/bin/perl
#
# scripts/check-trgm-fold.pl: check the fold of text_trgm_ops
# (src/opclass/trgm_fold_table.h) and, against a running server, that
# lower() never changes a string's fold, the property ILIKE through
# text_trgm_ops rests on (src/README, "The trigrams' fold").
#
#   perl scripts/check-trgm-fold.pl [COLLATION ...]
#   perl scripts/check-trgm-fold.pl --table-only
#
# First, without a server, it checks that the table's ASCII array (the fast
# path of opclass_trgm.c) gives every ASCII character the fold its runs
# give it; --table-only stops there.  Then it connects with psql and the
# usual PG* variables to a UTF8 database.  For every code point up to
# U+2FFFF and U+E0000 .. U+E01EF, alone and in contexts that move lower()
# (a cased letter before or after: final sigma; a combining dot above or
# grave after: Turkish and Lithuanian i), it asks the server for lower(s)
# under each collation (default: the ICU ones the server has of und, tr,
# az, lt, el, nl, and C.UTF-8 if there is one), and reports every s whose
# fold and its lowered form's differ.  Exit status 0 if there is none.
use strict;
use warnings;
use FindBin;
use utf8;
use Encode qw(encode_utf8);

my $table = "$FindBin::Bin/../src/opclass/trgm_fold_table.h";
open my $fh, '<', $table or die "$table: $!";
my @runs;
my @ascii;
while (<$fh>)
{
	if (/^static const int16 bloom_trgm_fold_ascii\[128\]/)
	{
		while (<$fh>)
		{
			last if /^\};/;
			push @ascii, map { /^0x/ ? hex($_) : $_ } /(-1|0x[0-9A-F]+)/g;
		}
		next;
	}
	next unless /^\t\{0x([0-9A-F]+), 0x([0-9A-F]+), (-?\w+), (\d), (\d+)\},/;
	my ($first, $last, $value, $kind, $stride) = ($1, $2, $3, $4, $5);
	$value = hex($value) if $value =~ /^0x/;
	push @runs, [ hex($first), hex($last), $value, $kind, $stride ];
}
close $fh;
die "no runs in $table\n" unless @runs;

sub fold_cp
{
	my $c = shift;
	my ($lo, $hi) = (0, $#runs);
	while ($lo <= $hi)
	{
		my $mid = int(($lo + $hi) / 2);
		my ($first, $last, $value, $kind, $stride) = @{ $runs[$mid] };
		if ($c < $first) { $hi = $mid - 1; }
		elsif ($c > $last) { $lo = $mid + 1; }
		elsif ($kind == 2) { return undef; }
		elsif ($kind == 0) { return $value; }
		elsif (($c - $first) % $stride == 0) { return $c + $value; }
		else { return $c; }
	}
	return $c;
}

sub fold_str
{
	return join ',', grep { defined } map { fold_cp($_) } @_;
}

# The ASCII fast path against the runs
die "$table: bloom_trgm_fold_ascii has " . scalar(@ascii) . " entries, not 128\n"
  unless @ascii == 128;
my $ascii_bad = 0;
for my $c (0 .. 127)
{
	my $want = fold_cp($c) // -1;
	next if $ascii[$c] == $want;
	printf "ASCII 0x%02X: the array folds to %d, the runs to %d\n", $c,
	  $ascii[$c], $want;
	$ascii_bad++;
}
print "128 ASCII characters checked, $ascii_bad with a fold other than the runs'\n";
exit($ascii_bad ? 1 : 0) if $ascii_bad || (@ARGV && $ARGV[0] eq '--table-only');

my @psql = ('psql', '-X', '-q', '-A', '-t', '-v', 'ON_ERROR_STOP=1');
my @colls = @ARGV;
if (!@colls)
{
	my $list = `$psql[0] -X -q -A -t -c "SELECT collname FROM pg_collation WHERE collname IN ('und-x-icu', 'tr-x-icu', 'az-x-icu', 'lt-x-icu', 'el-x-icu', 'nl-x-icu', 'C.utf8', 'C.UTF-8', 'pg_c_utf8', 'pg_unicode_fast', 'tr_TR.utf8') ORDER BY 1"`;
	die "psql failed\n" if $?;
	@colls = split /\n/, $list;
}

# Contexts: s is prefix || chr(cp) || suffix
my @contexts = (
	[ '', '' ], [ 'ab', '' ], [ '', 'ab' ],
	[ 'ΑΒ', '' ], [ 'ΑΒ', '.Α' ], [ 'ΑΒ', 'Α' ], [ 'Σ', '' ],
	[ '', "\x{0307}" ], [ '', "\x{0300}" ], [ 'I', '' ], [ '', 'Σ' ],
);
my $bad = 0;
for my $coll (@colls)
{
	my $checked = 0;
	my $coll_bad = 0;
	for my $ctx (@contexts)
	{
		my ($pre, $suf) = map { my $s = $_; $s =~ s/'/''/g; $s } @$ctx;
		my $sql = <<"EOF";
SELECT array_to_string(ARRAY(SELECT ascii(x) FROM regexp_split_to_table(s, '') x), ','),
	   array_to_string(ARRAY(SELECT ascii(x) FROM regexp_split_to_table(l, '') x), ',')
FROM (SELECT s, lower(s COLLATE "$coll") AS l
	  FROM (SELECT '$pre' || chr(cp) || '$suf' AS s
			FROM (SELECT generate_series(1, 196607) AS cp
				  UNION ALL SELECT generate_series(917504, 917999)) g
			WHERE cp NOT BETWEEN 55296 AND 57343) v) w
WHERE l <> s;
EOF
		open my $p, "-|", @psql, "-c", encode_utf8($sql) or die "psql: $!";
		binmode $p, ':utf8';
		while (my $line = <$p>)
		{
			chomp $line;
			my ($s, $l) = split /\|/, $line;
			$checked++;
			my $fs = fold_str(split /,/, $s);
			my $fl = fold_str(split /,/, $l);
			next if $fs eq $fl;
			$bad++;
			$coll_bad++;
			printf "%s: lower(%s) = %s: folds %s and %s\n", $coll,
			  join(' ', map { sprintf 'U+%04X', $_ } split /,/, $s),
			  join(' ', map { sprintf 'U+%04X', $_ } split /,/, $l), $fs, $fl
			  if $coll_bad <= 50;
		}
		close $p or die "psql failed on collation $coll\n";
	}
	print "$coll: $checked lowered strings checked, $coll_bad folds changed\n";
}
print "$bad strings whose fold lower() changes\n";
exit($bad ? 1 : 0);
