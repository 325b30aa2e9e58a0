# Copyright and license: see the project's LICENSE.

# scripts/check-structure.sh holds the layering rules of src/ (src/README,
# "Source tree"): it passes on the tree, and on a copy broken in each of
# the ways it checks, it names every breach and nothing else.

use strict;
use warnings;
use feature 'state';

use File::Copy;
use File::Path qw(make_path);
use FindBin;
use lib $FindBin::RealBin;

use PostgreSQL::Test::Utils;
use Test::More;

my $root = "$FindBin::RealBin/..";
my $script = "$root/scripts/check-structure.sh";
my ($pg_config) = run_command([ 'sh', '-c', 'command -v pg_config' ]);
chomp($pg_config);

# The tree itself
my ($out, $err) = run_command([ 'bash', $script, $pg_config ]);
like($out, qr/^structure: ok \(\d+ files, \d+ calls between files\)$/m,
	'the tree keeps every rule')
  or diag("$out\n$err");

# A copy with one breach of each rule
my $copy = PostgreSQL::Test::Utils::tempdir();
my %path;    # file name => its path in the copy
foreach my $file (split /\n/, slurp_file_list())
{
	my ($dir) = $file =~ m{^(.*)/[^/]+$};
	make_path("$copy/$dir");
	copy("$root/$file", "$copy/$file") or die "copy $file: $!";
	$path{ (split m{/}, $file)[-1] } = "$copy/$file";
}
copy("$root/$_", "$copy/$_") or die "copy $_: $!" foreach ('Makefile', 'bloomidx.c', 'bloomidx.h');
$path{'bloomidx.h'} = "$copy/bloomidx.h";

sub slurp_file_list
{
	my ($list) = run_command([ 'sh', '-c', "cd '$root' && find src -name '*.[ch]'" ]);
	return $list;
}

sub path_of
{
	my ($file) = @_;
	return $path{$file} // "$copy/src/$file";
}

sub append_to
{
	my ($file, $text) = @_;
	open(my $fh, '>>', path_of($file)) or die "open $file: $!";
	print $fh $text;
	close($fh);
}

sub include_in
{
	my ($file, $header) = @_;
	my $source = slurp_file(path_of($file));
	$source =~ s/^(#include "bloomidx.h"\n)/$1#include "$header"\n/m
	  or die "no #include \"bloomidx.h\" in $file";
	open(my $fh, '>', path_of($file)) or die "open $file: $!";
	print $fh $source;
	close($fh);
}

sub add_function
{
	my ($file, $body) = @_;
	state $n = 0;
	$n++;
	append_to($file,
		"\nvoid BloomStructureProbe$n(void);\nvoid\nBloomStructureProbe$n(void)\n{\n$body}\n");
}

# Rule 1: a layout named outside its folder, by a constant, a header or a call
append_to('inspect.c', "\n/* BLOOMIDX_STRIPE_ROWS */\n");
append_to('sliced_util.c', "\n/* BLOOMIDX_LAYOUT_ROW */\n");
include_in('cost.c', '../layout/sliced/sliced.h');
add_function('am_scan.c', "\textern void BloomRowSharedSize(void);\n\tBloomRowSharedSize();\n");
# ... and by its fields of the metapage, or the layouts' area itself
append_to('pagecheck.c', "\n/* BloomRowMeta(meta)->nFree */\n");
append_to('row_check.c', "\n/* BloomSlicedMetaData */\n");
append_to('state.c', "\n/* meta->layoutArea */\n");
# Rule 2: a filter variant named outside its folder, by a flag or a call
append_to('filter_probe.c', "\n/* BLOOM_VARIANT_COUNTING */\n");
add_function('filter_io.c', "\textern void BloomBlockedVariant(void);\n\tBloomBlockedVariant();\n");
add_function('filter_ops.c', "\textern void bloom_remove(void);\n\tbloom_remove();\n");
# ... and the variant table's dispatch covers only the routine tables: a
# call from the table into a variant's file is one (and closes a pair)
add_function('filter_variant.c', "\t(void) BloomPlainBitsPerValue(0.5, NULL, NULL);\n");
# Rule 3: the core on a layer above it, by an include and by a call
include_in('state.c', 'filter.h');
add_function('layout.c', "\tBloomInitOptions();\n");    # and options.c calls layout.c
# Rule 4: a longer cycle page.c -> signature.c -> fpmodel.c -> page.c
add_function('page.c', "\t(void) BloomCountBits(NULL, 0);\n");
add_function('signature.c', "\textern void BloomGetOccupancy(void);\n\tBloomGetOccupancy();\n");
add_function('fpmodel.c', "\textern void BloomFreePage(void);\n\tBloomFreePage();\n");
# Rule 5: a layout on a shell
add_function('row_insert.c', "\t(void) BloomIndexFill(NULL, NULL);\n");
# Rule 6: a file the Makefile does not link, an object without a source
open(my $stray, '>', "$copy/src/core/stray.c") or die "open stray.c: $!";
print $stray "#include \"postgres.h\"\n\nint BloomStray(void);\n\nint\nBloomStray(void)\n{\n\treturn 1;\n}\n";
close($stray);
open(my $mk, '>>', "$copy/Makefile") or die "open Makefile: $!";
print $mk "OBJS += src/core/gone.o\n";
close($mk);

my $result = run_log([ 'env', "BX_STRUCTURE_SRC=$copy", 'bash', $script, $pg_config ],
	'>', \$out, '2>', \$err);
ok(!$result, 'the broken copy fails the check');
my @expected = (
	[ qr/inspect\.c:\d+: names layout sliced outside src\/layout\/sliced\/: BLOOMIDX_STRIPE_ROWS/,
	  'a layout constant in a shell' ],
	[ qr/sliced_util\.c:\d+: names layout row outside src\/layout\/row\/: BLOOMIDX_LAYOUT_ROW/,
	  "a layout constant in another layout" ],
	[ qr/cost\.c:\d+: includes sliced\.h, private to src\/layout\/sliced\//,
	  "a layout's header in another folder" ],
	[ qr/pagecheck\.c:\d+: names the metapage fields of layout row outside src\/layout\/row\/: BloomRowMeta/,
	  "a layout's metapage fields in the core" ],
	[ qr/row_check\.c:\d+: names the metapage fields of layout sliced outside src\/layout\/sliced\/: BloomSlicedMetaData/,
	  "a layout's metapage fields in another layout" ],
	[ qr/state\.c:\d+: reads the layouts' area of the metapage outside src\/layout\//,
	  "the layouts' area of the metapage outside the layouts" ],
	[ qr/am_scan\.c calls BloomRowSharedSize of row_build\.c: names layout row outside src\/layout\/row\//,
	  "a call into a layout from outside" ],
	[ qr/filter_probe\.c:\d+: names a filter variant outside src\/filter\/variant\/: BLOOM_VARIANT_COUNTING/,
	  'a filter variant flag outside the variants' ],
	[ qr/filter_io\.c calls BloomBlockedVariant of filter_blocked\.c: names a filter variant outside src\/filter\/variant\//,
	  'a filter variant reached around the variant table' ],
	[ qr/filter_ops\.c calls bloom_remove of filter_counting\.c: names a filter variant outside src\/filter\/variant\//,
	  "a variant's own SQL function called by a shared file" ],
	[ qr/filter_plain\.c and filter_variant\.c call each other \(\w+ and BloomPlainBitsPerValue\)/,
	  'the variant table calling into a variant' ],
	[ qr/state\.c:\d+: src\/core\/ includes filter\.h of src\/filter\//,
	  'the core including a header of a layer above it' ],
	[ qr/layout\.c calls BloomInitOptions of options\.c: src\/core\/ depends on src\/am\//,
	  'the core calling a layer above it' ],
	[ qr/layout\.c and options\.c call each other \(BloomInitOptions and Bloom\w*Layout\w*\)/,
	  'two files that call each other' ],
	[ qr/files call each other around a cycle: (?=.*page\.c)(?=.*signature\.c)(?=.*fpmodel\.c).*/,
	  'a longer cycle' ],
	[ qr/row_insert\.c calls BloomIndexFill of cost\.c: a layout depends on a shell/,
	  'a layout that calls a shell' ],
	[ qr/Makefile: OBJS does not name src\/core\/stray\.c/,
	  'a source file the Makefile does not link' ],
	[ qr/Makefile: OBJS names src\/core\/gone\.o, which has no source/,
	  'an object the Makefile names without a source' ],
);
foreach my $e (@expected)
{
	like($out, qr/^structure: $e->[0]$/m, "$e->[1] is named");
}
my $n = @expected;
like($out, qr/^structure: $n problem\(s\)$/m, 'nothing else is reported')
  or diag($out);

done_testing();
