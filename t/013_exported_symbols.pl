# Copyright and license: see the project's LICENSE.

# The installed bloomidx.so exports only what PostgreSQL looks up by name
# (src/compat.h): the C functions of the installed extension scripts
# with their pg_finfo_ records, _PG_init, Pg_magic_func, and the entry
# points of parallel workers (CreateParallelContext in src/).  A helper
# such as BloomNewBuffer, which contrib/bloom's bloom.so exports too, must
# not be exported: PostgreSQL loads modules with RTLD_GLOBAL.

use strict;
use warnings;

use FindBin;
use lib $FindBin::RealBin;

use PostgreSQL::Test::Utils;
use Test::More;

my $root = "$FindBin::RealBin/..";

my ($pkglibdir) = run_command([ 'pg_config', '--pkglibdir' ]);
my ($sharedir) = run_command([ 'pg_config', '--sharedir' ]);
chomp($pkglibdir, $sharedir);
my $library = "$pkglibdir/bloomidx.so";
ok(-f $library, "bloomidx.so is installed in pg_config --pkglibdir");

# What the extension scripts make SQL call: every function whose body is
# AS 'MODULE_PATHNAME' [, 'symbol'] (or the library's path)
my %expected = map { $_ => 'module' } qw(_PG_init Pg_magic_func);
my @scripts = glob("$sharedir/extension/bloomidx--*.sql");
ok(@scripts >= 2, "the extension scripts are installed (" . scalar(@scripts) . ")");
my $nfunctions = 0;
foreach my $script (@scripts)
{
	my $sql = slurp_file($script);
	$sql =~ s/--[^\n]*//g;
	while ($sql =~ /CREATE\s+(?:OR\s+REPLACE\s+)?FUNCTION\s+(?:\w+\.)?(\w+)\s*\((.*?)\bLANGUAGE\s+(\w+)/gsi)
	{
		my ($name, $rest, $language) = ($1, $2, $3);
		next unless lc($language) eq 'c';
		$rest =~ /\bAS\s+'(?:MODULE_PATHNAME|\$libdir\/bloomidx)'\s*(?:,\s*'(\w+)')?/i
		  or die "C function $name in $script: no AS 'MODULE_PATHNAME'";
		my $symbol = $1 // $name;
		$expected{$symbol} = 'SQL';
		$expected{"pg_finfo_$symbol"} = 'SQL';
		$nfunctions++;
	}
}
ok($nfunctions >= 20, "C functions found in the extension scripts ($nfunctions)");

# Entry points that parallel workers look up by name
foreach my $file (glob("$root/*.c"), glob("$root/src/*.c"), glob("$root/src/*/*.c"),
	glob("$root/src/*/*/*.c"))
{
	my $source = slurp_file($file);
	while ($source =~ /CreateParallelContext\(\s*"bloomidx"\s*,\s*"(\w+)"/g)
	{
		$expected{$1} = 'parallel';
	}
}
ok(grep({ $expected{$_} eq 'parallel' } keys %expected),
	'a parallel worker entry point is found in the sources');

my ($nm) = run_command([ 'nm', '-D', '--defined-only', $library ]);
my %exported;
foreach my $line (split /\n/, $nm)
{
	my ($value, $type, $name) = split ' ', $line;
	next unless defined $name;
	$exported{$name} = 1;
}

my @missing = sort grep { !$exported{$_} } keys %expected;
my @extra = sort grep { !exists $expected{$_} } keys %exported;
is(join(' ', @missing), '', 'every symbol PostgreSQL looks up is exported');
is(join(' ', @extra), '', 'no other symbol is exported');
ok(!$exported{BloomNewBuffer}, 'BloomNewBuffer (also in contrib/bloom) is not exported');
note('exported: ' . scalar(keys %exported) . ' symbols');

done_testing();
