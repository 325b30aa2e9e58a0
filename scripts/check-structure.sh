#!/usr/bin/env bash
#
# scripts/check-structure.sh: check the layering rules of the source tree
# (src/README, "Source tree and layers"), failing with a list of every
# breach.  The folders are the layers:
#
#   bloomidx.c, bloomidx.h   the handler and the access method's header
#   src/am/                  the access method's callbacks (the shells)
#   src/core/                state, signatures, pages, the layout table
#   src/layout/NAME/         one layout each
#   src/opclass/             operator classes and their element interface
#   src/filter/              the bloomfilter type
#   src/filter/variant/      its variants, one file each
#
# and the rules:
#
#   1. nothing outside src/layout/NAME/ names layout NAME: its constants
#      (BLOOMIDX_LAYOUT_ROW, BLOOMIDX_SLICED_*, ...), its headers, its
#      fields of the metapage (BloomRowMeta, BloomSlicedMetaData, ...), or a
#      symbol one of its files defines, and nothing outside src/layout/ but
#      page.h names the metapage's layouts' area (layoutArea); the one exception is the layout
#      table (src/core/layout.c), which lists each layout's routine table
#      (a dispatch, not a call: it counts as no call below either), and,
#      for the constants, the on-disk declarations listed in
#      %layout_constant_hosts below (and the entries of %layout_leaks);
#   2. nothing outside src/filter/variant/ names a filter variant: its flags
#      (BLOOM_VARIANT_*) or a symbol one of its files defines; the
#      exceptions are the variant table (filter_variant.[ch]), which lists
#      each variant's routine table (a dispatch, counted as no call), and
#      the byte format (filter_format.[ch], whose decoder runs, and is
#      fuzzed, outside the server);
#   3. nothing in src/core/ includes a header of src/am/, src/layout/ or
#      src/filter/, or calls a function they define;
#   4. no two files call each other, directly or around a longer cycle (a
#      file calls another if its object refers to a symbol the other
#      defines);
#   5. the layouts call no function of the shells (bloomidx.c, src/am/);
#   6. the Makefile names an object for every .c file of src/ and for
#      nothing else, so that a stray file is not linked and a new one is
#      not forgotten.
#
#   bash scripts/check-structure.sh [PG_CONFIG]
#
# Compiles every file of src/ with PG_CONFIG's headers (default: pg_config
# on PATH, else PostgreSQL 15's) in one compiler run into a temp dir, reads
# every object's symbols with one nm, and checks the rules in one perl
# process; nothing is written into the tree.  Exit status 0 if every rule
# holds, 1 otherwise.  BX_STRUCTURE_SRC names another tree to check (the
# TAP test t/025_structure.pl checks a broken copy with it).
set -euo pipefail

# The whole script is one compound command, which bash reads before running
# it: editing this file during a run does not change the run.
{

REPO=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
ROOT=${BX_STRUCTURE_SRC:-$REPO}
PG_CONFIG=${1:-$(command -v pg_config || echo /usr/lib/postgresql/15/bin/pg_config)}
[[ -x $PG_CONFIG ]] || { echo "error: no pg_config at $PG_CONFIG" >&2; exit 1; }
[[ -d $ROOT/src ]] || { echo "error: no src/ in $ROOT" >&2; exit 1; }
ROOT=$(cd "$ROOT" && pwd)

tmp=$(mktemp -d "${TMPDIR:-/tmp}/bloomidx-structure.XXXXXX")
trap 'rm -rf "$tmp"' EXIT

cd "$ROOT"
find src -name '*.[ch]' | sort >"$tmp/sources"
grep '\.c$' "$tmp/sources" >"$tmp/cfiles" || true
[[ -f bloomidx.c ]] && echo bloomidx.c >>"$tmp/cfiles"

# One compiler run (two at once) for every file; the file names are unique,
# so the objects go side by side.  -fno-inline keeps the calls between
# files that an optimizing build could fold away.  A file that does not
# compile on its own is named by the check below.
inc=$("$PG_CONFIG" --includedir-server)
(cd "$tmp" && sed "s|^|$ROOT/|" cfiles | tr '\n' '\0' |
    xargs -0 -n 16 -P 2 gcc -c -O0 -w -I"$ROOT" -I"$ROOT/src" -I"$ROOT/src/core" \
        -I"$ROOT/src/filter" -I"$inc" -I"$("$PG_CONFIG" --includedir)" 2>"$tmp/cc.err") || true
compgen -G "$tmp/*.o" >/dev/null && (cd "$tmp" && nm -A -g ./*.o) >"$tmp/symbols" 2>/dev/null || : >"$tmp/symbols"

BX_ROOT=$ROOT BX_TMP=$tmp perl -w - <<'PERL'
use strict;

my $root = $ENV{BX_ROOT};
my $tmp = $ENV{BX_TMP};
my @problems;
sub breach { push @problems, "structure: @_" }

sub slurp { local (@ARGV, $/) = @_; return <> // '' }

# Every file, by name (names are unique in the tree) and by folder
my @sources = split /\n/, slurp("$tmp/sources");
push @sources, grep { -f "$root/$_" } qw(bloomidx.c bloomidx.h);
my %path;       # name => path
my %folder;     # name => folder ('' for the repository's root)
foreach my $p (@sources)
{
	my ($dir, $name) = $p =~ m{^(?:(.*)/)?([^/]+)$};
	$path{$name} = $p;
	$folder{$name} = $dir // '';
}

# Which layout, variant or layer a file belongs to
sub layout_of { my ($f) = @_; return $folder{$f} =~ m{^src/layout/([^/]+)$} ? $1 : undef }
sub in_variants { return $folder{ $_[0] } eq 'src/filter/variant' }
sub in_core { return $folder{ $_[0] } eq 'src/core' }
sub is_shell { return $folder{ $_[0] } eq 'src/am' || $_[0] =~ /^bloomidx\.[ch]$/ }

# Each layout's constants
my %layout_constants = (
	row => qr/\bBLOOMIDX_(?:LAYOUT_ROW|ROW_[A-Z_]+)\b/,
	sliced => qr/\bBLOOMIDX_(?:LAYOUT_SLICED|SLICED_[A-Z_]+|SLICE|TIDMAP[A-Z_]*|STRIPE[A-Z_]*|SUMMARY[A-Z_]*|MAX_STRIPE[A-Z_]*|PENDING_[A-Z_]+|FROZEN)\b/,
	test => qr/\bBLOOMIDX_(?:LAYOUT_TEST|TEST_LAYOUT_[A-Z_]+)\b/,
);
# Each layout's metapage fields: its struct and accessor (row.h,
# sliced.h), never named outside its folder, not even by page.h
my %layout_meta = (
	row => qr/\b(?:BloomRowMeta|BloomRowMetaData)\b/,
	sliced => qr/\b(?:BloomSlicedMeta|BloomSlicedMetaData)\b/,
);
# Files outside a layout that may name its constants: the declarations of
# every on-disk struct.
my %layout_constant_hosts = map { $_ => 1 } qw(page.h);
# Layout constants named by another layout, to be moved behind the layout
# table: "file constant" (none is wanted)
my %layout_leaks = map { $_ => 1 } ();
# Rules 1 to 3 on the text: constants, flags, includes
foreach my $name (sort keys %path)
{
	my $layout = layout_of($name) // '';
	my $n = 0;
	foreach my $line (split /\n/, slurp("$root/$path{$name}"))
	{
		$n++;
		foreach my $l (sort keys %layout_constants)
		{
			next if $l eq $layout || $layout_constant_hosts{$name};
			breach("$name:$n: names layout $l outside src/layout/$l/: $1")
			  if $line =~ /($layout_constants{$l})/ && !$layout_leaks{"$name $1"};
		}
		foreach my $l (sort keys %layout_meta)
		{
			next if $l eq $layout;
			breach("$name:$n: names the metapage fields of layout $l outside src/layout/$l/: $1")
			  if $line =~ /($layout_meta{$l})/;
		}
		# The layouts' area of the metapage: page.h declares it, the
		# layouts read it
		breach("$name:$n: reads the layouts' area of the metapage outside src/layout/")
		  if $line =~ /\blayoutArea\b/ && $layout eq '' && $name ne 'page.h';
		if ($line =~ /\b(BLOOM_VARIANT_[A-Z_]+)/ && !in_variants($name)
			&& $name !~ /^filter_(?:variant|format)\.[ch]$/)
		{
			breach("$name:$n: names a filter variant outside src/filter/variant/: $1");
		}
		next unless $line =~ /^\s*#\s*include\s+"([^"]+)"/;
		my $header = (split m{/}, $1)[-1];
		next unless exists $folder{$header};
		my $hl = layout_of($header);
		if (defined $hl && $hl ne $layout)
		{
			breach("$name:$n: includes $header, private to src/layout/$hl/");
		}
		elsif (in_core($name) && $folder{$header} =~ m{^src/(am|layout|filter)\b})
		{
			breach("$name:$n: src/core/ includes $header of src/$1/");
		}
	}
}

# Who calls whom, from the objects' symbols
my @cfiles = map { (split m{/})[-1] } split /\n/, slurp("$tmp/cfiles");
my (%defines, %is_data, %uses, %has_object);
foreach my $line (split /\n/, slurp("$tmp/symbols"))
{
	my ($object, $rest) = $line =~ m{^\./([^:]+)\.o:\s*(.*)$} or next;
	$has_object{$object} = 1;
	my @f = split ' ', $rest;
	if (@f == 2 && $f[0] eq 'U') { $uses{$object}{ $f[1] } = 1 }
	elsif (@f == 3 && $f[1] =~ /^[TDRBCVW]$/)
	{
		$defines{ $f[2] } = $object;
		$is_data{ $f[2] } = $f[1] =~ /^[DRBC]$/;
	}
}
my $cc_err = slurp("$tmp/cc.err");
foreach my $c (sort @cfiles)
{
	(my $base = $c) =~ s/\.c$//;
	next if $has_object{$base};
	print STDERR $cc_err;
	breach("$c: does not compile on its own");
}

my %calls;    # from => to => first symbol
foreach my $from (sort keys %uses)
{
	foreach my $sym (sort keys %{ $uses{$from} })
	{
		my $to = $defines{$sym};
		next unless defined $to && $to ne $from;
		# The layout table lists each layout's routine table: a dispatch
		# through function pointers, not a call into the layout's files
		next if $from eq 'layout' && $is_data{$sym} && defined layout_of("$to.c");
		# So does the variant table each variant's
		next if $from eq 'filter_variant' && $is_data{$sym} && in_variants("$to.c");
		$calls{$from}{$to} //= $sym;
	}
}

foreach my $from (sort keys %calls)
{
	my $f = "$from.c";
	foreach my $to (sort keys %{ $calls{$from} })
	{
		my $t = "$to.c";
		my $sym = $calls{$from}{$to};
		my $tl = layout_of($t);
		# Rule 1: a layout's symbols, outside it (but the layout table)
		if (defined $tl && ($folder{$f} ne $folder{$t}))
		{
			breach("$f calls $sym of $t: names layout $tl outside src/layout/$tl/");
		}
		# Rule 2: a variant's symbols, outside the variants (but the table)
		if (in_variants($t) && !in_variants($f) && $f ne 'filter_variant.c')
		{
			foreach my $s (sort keys %{ $uses{$from} })
			{
				next unless ($defines{$s} // '') eq $to;
				breach("$f calls $s of $t: names a filter variant outside src/filter/variant/");
			}
		}
		# Rule 3: core calls no layer above it (but the layout table)
		if (in_core($f) && $folder{$t} =~ m{^src/(am|layout|filter)\b})
		{
			breach("$f calls $sym of $t: src/core/ depends on src/$1/");
		}
		# Rule 5: layouts call no shell
		breach("$f calls $sym of $t: a layout depends on a shell")
		  if defined layout_of($f) && is_shell($t);
		# Rule 4: two files calling each other
		breach("$f and $t call each other ($sym and $calls{$to}{$from})")
		  if $from lt $to && exists $calls{$to}{$from};
	}
}

# Rule 4: longer cycles, by depth-first search (a back edge closes a loop)
my (%state, @stack, %reported);
sub visit
{
	my ($v) = @_;
	$state{$v} = 1;
	push @stack, $v;
	foreach my $w (sort keys %{ $calls{$v} // {} })
	{
		if (($state{$w} // 0) == 1)
		{
			my @loop = @stack[ (grep { $stack[$_] eq $w } 0 .. $#stack)[0] .. $#stack ];
			next if @loop < 3;    # a pair is named above
			my $key = join ' ', sort @loop;
			breach("files call each other around a cycle: " . join(' -> ', map { "$_.c" } @loop, $w))
			  unless $reported{$key}++;
		}
		visit($w) unless $state{$w};
	}
	pop @stack;
	$state{$v} = 2;
}
visit($_) foreach grep { !$state{$_} } sort keys %calls;

# Rule 6: the Makefile's objects
if (-f "$root/Makefile")
{
	my %objs;
	my $makefile = slurp("$root/Makefile");
	$objs{"$1.c"} = 1 while $makefile =~ m{\b(src/[\w/]+)\.o\b}g;
	my %files = map { $path{$_} => 1 } grep { $path{$_} =~ m{^src/} } @cfiles;
	breach("Makefile: OBJS does not name $_") foreach grep { !$objs{$_} } sort keys %files;
	breach("Makefile: OBJS names ${\ substr($_, 0, -2)}.o, which has no source")
	  foreach grep { !$files{$_} } sort keys %objs;
}

if (@problems)
{
	print "$_\n" foreach @problems;
	printf "structure: %d problem(s)\n", scalar @problems;
	exit 1;
}
my $ncalls = 0;
$ncalls += keys %{ $calls{$_} } foreach keys %calls;
printf "structure: ok (%d files, %d calls between files)\n", scalar @cfiles, $ncalls;
exit 0;
PERL
exit $?
}
