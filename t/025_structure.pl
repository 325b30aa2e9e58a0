# Copyright and license: see the project's LICENSE.

# scripts/check-structure.sh holds the layering rules of src/ (src/README,
# "Layers"): it passes on the tree, and on a copy broken in each of the
# ways it checks, it names every breach.

use strict;
use warnings;

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
copy("$root/$_", "$copy/$_") or die "copy $_: $!" foreach ('Makefile', 'bloomidx.h');
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

append_to('inspect.c', "\n/* BLOOMIDX_STRIPE_ROWS */\n");
append_to('filter_probe.c', "\n/* BLOOM_VARIANT_COUNTING */\n");
include_in('cost.c', '../layout/sliced/sliced.h');
append_to('layout.c',
	"\nvoid BloomStructureProbe(void);\nvoid\nBloomStructureProbe(void)\n{\n\tBloomInitOptions();\n}\n");
append_to('row_insert.c',
	"\nvoid BloomStructureProbe2(void);\nvoid\nBloomStructureProbe2(void)\n{\n\t(void) BloomIndexFill(NULL, NULL);\n}\n");

append_to('stray.c',
	"#include \"postgres.h\"\n\nint BloomStray(void);\n\nint\nBloomStray(void)\n{\n\treturn 1;\n}\n");

my $result = run_log([ 'env', "BX_STRUCTURE_SRC=$copy", 'bash', $script, $pg_config ],
	'>', \$out, '2>', \$err);
ok(!$result, 'the broken copy fails the check');
like($out, qr/^structure: inspect\.c:\d+: layout constant outside its layout's files: BLOOMIDX_STRIPE_ROWS$/m,
	'a layout constant in a shell is named');
like($out, qr/^structure: cost\.c:\d+: includes sliced\.h, private to its layout$/m,
	"a layout's private header in another file is named");
like($out, qr/^structure: layout\.c and options\.c call each other \(BloomInitOptions and Bloom\w*Layout\w*\)$/m,
	'two files that call each other are named');
like($out, qr/^structure: src\/ files call each other around a cycle: /m,
	'the cycle is reported');
like($out, qr/^structure: row_insert\.c calls BloomIndexFill of cost\.c: a layout depends on a shell$/m,
	'a layout that calls a shell is named');
like($out, qr/^structure: Makefile: OBJS does not name src\/stray\.c$/m,
	'a source file the Makefile does not link is named');
like($out, qr/^structure: filter_probe\.c:\d+: filter variant flag outside the variant files: BLOOM_VARIANT_COUNTING$/m,
	'a filter variant flag outside the variant files is named');
like($out, qr/^structure: 7 problem\(s\)$/m, 'nothing else is reported')
  or diag($out);

done_testing();
