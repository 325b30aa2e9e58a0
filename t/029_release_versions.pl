# Copyright and license: see the project's LICENSE.

# scripts/check-meta.sh keeps the release's numbers together: it passes on
# the tree, and on a copy where one of META.json, CHANGELOG.md,
# bloomidx.control, debian/changelog or the Makefile's DATA has drifted, it
# fails and names what drifted.  `make dist` runs it before archiving.

use strict;
use warnings;

use File::Copy;
use File::Path qw(make_path);
use FindBin;
use IPC::Run;

use PostgreSQL::Test::Utils;
use Test::More;

my $root = "$FindBin::RealBin/..";

my ($jq) = run_command([ 'sh', '-c', 'command -v jq || true' ]);
plan skip_all => 'scripts/check-meta.sh needs jq' if $jq !~ /\S/;

# check_meta DIR: run DIR's copy of the script; (true if it passed, output).
sub check_meta
{
	my ($dir) = @_;
	my ($out, $err) = ('', '');
	my $ok = IPC::Run::run([ 'bash', "$dir/scripts/check-meta.sh" ], '>', \$out, '2>', \$err);
	return ($ok, "$out$err");
}

my ($ok, $out) = check_meta($root);
ok($ok, 'the tree passes') or diag($out);
like($out, qr/valid PGXN META\.json for bloomidx \d+\.\d+\.\d+ .*agree/,
	'it says which files agree');

# The files check-meta.sh reads, copied to a fresh folder.
my @files = ('META.json', 'CHANGELOG.md', 'bloomidx.control', 'Makefile',
	'scripts/check-meta.sh', map { s{^.*/}{}r } glob("$root/bloomidx--*.sql"));
push @files, 'debian/changelog' if -f "$root/debian/changelog";

sub fresh_copy
{
	my $dir = PostgreSQL::Test::Utils::tempdir();
	make_path("$dir/scripts", "$dir/debian");
	copy("$root/$_", "$dir/$_") or die "copy $_: $!" foreach @files;
	return $dir;
}

($ok, $out) = check_meta(fresh_copy());
ok($ok, 'a copy of the files passes') or diag($out);

# Each drift: a name, the file, what to replace, the replacement, and what
# the script must say.
my @drifts = (
	[
		'META.json version', 'META.json',
		qr/^   "version": "[^"]*"/m, '   "version": "9.9.0"',
		qr/version 9\.9\.0 is not bloomidx\.control's default_version/
	],
	[
		'provides version', 'META.json',
		qr/^         "version": "[^"]*"/m, '         "version": "9.9.0"',
		qr/provides\.bloomidx\.version is not the release's version/
	],
	[
		'bloomidx.control default_version', 'bloomidx.control',
		qr/^default_version = '.*'$/m, "default_version = '9.9'",
		qr/is not bloomidx\.control's default_version 9\.9/
	],
	[
		'CHANGELOG.md newest release', 'CHANGELOG.md',
		qr/^## \d+\.\d+\.\d+/m, '## 9.9.0',
		qr/is not CHANGELOG\.md's newest release 9\.9\.0/
	],
	[
		'provided file', 'META.json',
		qr/"file": "bloomidx--[^"]*\.sql"/, '"file": "bloomidx--1.0.sql"',
		qr/is not the newest full install script/
	],
	[
		'DATA', 'Makefile',
		qr/ bloomidx--1\.0\.sql/, '',
		qr/the Makefile's DATA does not install bloomidx--1\.0\.sql/
	]);
push @drifts,
  [
	'debian/changelog version', 'debian/changelog',
	qr/^bloomidx \([^)]*\)/, 'bloomidx (9.9.0-1)',
	qr/is not debian\/changelog's upstream version 9\.9\.0/
  ]
  if -f "$root/debian/changelog";

foreach my $d (@drifts)
{
	my ($name, $file, $from, $to, $message) = @$d;
	my $dir = fresh_copy();
	my $text = slurp_file("$dir/$file");
	$text =~ s/$from/$to/ or die "no match for $from in $file";
	open(my $fh, '>', "$dir/$file") or die "open $file: $!";
	print $fh $text;
	close($fh);
	($ok, $out) = check_meta($dir);
	ok(!$ok, "$name drifted: fails");
	like($out, $message, "$name drifted: says so") or diag($out);
}

done_testing();
