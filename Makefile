# bloomidx: a bloom-signature index access method for PostgreSQL

EXTENSION = bloomidx
MODULE_big = bloomidx
# Every object, named: a stray .c under src/ is not linked, and
# scripts/check-structure.sh fails if one is left out.
OBJS = bloomidx.o \
	src/core/datapage.o src/core/deltawal.o src/core/fpmodel.o \
	src/core/layout.o src/core/page.o \
	src/core/pagecheck.o src/core/signature.o src/core/state.o \
	src/layout/row/row.o src/layout/row/row_build.o src/layout/row/row_check.o \
	src/layout/row/row_insert.o src/layout/row/row_scan.o \
	src/layout/row/row_vacuum.o \
	src/layout/sliced/sliced.o src/layout/sliced/sliced_batch.o \
	src/layout/sliced/sliced_build.o src/layout/sliced/sliced_check.o \
	src/layout/sliced/sliced_format.o src/layout/sliced/sliced_inspect.o \
	src/layout/sliced/sliced_merge.o \
	src/layout/sliced/sliced_pending.o src/layout/sliced/sliced_scan.o \
	src/layout/sliced/sliced_stripe.o src/layout/sliced/sliced_summary.o \
	src/layout/sliced/sliced_util.o \
	src/layout/sliced/sliced_vacuum.o \
	src/am/am_build.o src/am/am_sample.o src/am/am_insert.o src/am/am_scan.o \
	src/am/am_vacuum.o \
	src/am/cost.o src/am/inspect.o src/am/options.o \
	src/opclass/elements.o src/opclass/opclass_array.o \
	src/opclass/opclass_jsonb.o src/opclass/opclass_trgm.o src/opclass/validate.o \
	src/filter/filter_agg.o src/filter/filter_agg_combine.o \
	src/filter/filter_compare.o src/filter/filter_core.o \
	src/filter/filter_detoast.o src/filter/filter_format.o \
	src/filter/filter_hash.o src/filter/filter_io.o src/filter/filter_ops.o \
	src/filter/filter_probe.o src/filter/filter_variant.o \
	src/filter/variant/filter_blocked.o src/filter/variant/filter_counting.o \
	src/filter/variant/filter_growing.o src/filter/variant/filter_keyed.o \
	src/filter/variant/filter_plain.o
# A test build's throwaway third layout (src/layout/test/testlayout.c)
ifneq (,$(findstring -DBLOOMIDX_TEST_LAYOUT,$(PG_CFLAGS) $(PG_CPPFLAGS)))
OBJS += src/layout/test/testlayout.o
endif
DATA = bloomidx--1.0.sql bloomidx--1.1.sql bloomidx--1.0--1.1.sql bloomidx--1.1--1.2.sql \
	bloomidx--1.2--1.3.sql
PGFILEDESC = "bloomidx - bloom signature index access method"

# The folders whose headers are shared (src/README, "Source tree"); a
# layout's own header (src/layout/*/) is found only beside its files.
PG_CPPFLAGS = -I$(srcdir) -I$(srcdir)/src -I$(srcdir)/src/core -I$(srcdir)/src/filter

REGRESS = $(patsubst sql/%.sql,%,$(sort $(wildcard sql/*.sql)))
ISOLATION = $(patsubst specs/%.spec,%,$(sort $(wildcard specs/*.spec)))
TAP_TESTS = 1

EXTRA_CLEAN = results output_iso tmp_check log src/layout/test/testlayout.o src/layout/test/testlayout.bc

PG_CONFIG ?= pg_config
PGXS := $(shell $(PG_CONFIG) --pgxs)
include $(PGXS)

# Export only what PostgreSQL looks up by name (src/compat.h), as
# PostgreSQL 16 does for every extension.  After PGXS, and with override,
# so that it holds with PG_CFLAGS or CFLAGS given on the command line.
ifeq ($(GCC),yes)
override CFLAGS += -fvisibility=hidden
endif

# `make installcheck` as root: initdb and the server refuse root, so the
# TAP tests (which make their own clusters) run as the OS user TAP_USER
# (default postgres), which is given tmp_check (scripts/prove-as.sh).  The
# source tree must be readable to it.
ifeq ($(shell id -u),0)
TAP_USER ?= postgres
PROVE := $(abspath $(srcdir))/scripts/prove-as.sh $(TAP_USER) '$(CURDIR)/tmp_check' $(PROVE)
endif

# The benchmark (bench/run.sh): its own private build (-O2, BENCH_CFLAGS) and
# throwaway cluster; results in bench/results/.  `make bench BENCH_ARGS=--quick`
.PHONY: bench
bench:
	bash $(srcdir)/bench/run.sh $(BENCH_ARGS)

# --- Sanitizer build (README: Contributing) ----------------------------------
# `make asan-check`: build bloomidx with -fsanitize=address,undefined in a
# private copy of PostgreSQL (never the one PG_CONFIG names) and run the
# regression and isolation suites on a throwaway cluster whose server has
# the ASan runtime preloaded; fails on any sanitizer report.  TESTS="a b"
# picks tests.  See scripts/asan-check.sh.
.PHONY: asan-check
asan-check:
	bash $(srcdir)/scripts/asan-check.sh

# --- PGXN distribution ---------------------------------------------------------
# `make dist`: check META.json (scripts/check-meta.sh), then archive the
# committed tree (HEAD) as bloomidx-<version>.zip, the archive PGXN takes.
DISTVERSION = $(shell sed -n 's/^ *"version": *"\([^"]*\)".*/\1/p' $(srcdir)/META.json | head -1)
.PHONY: dist
dist:
	bash $(srcdir)/scripts/check-meta.sh
	git -C $(srcdir) archive --format zip --prefix=bloomidx-$(DISTVERSION)/ -o $(abspath bloomidx-$(DISTVERSION).zip) HEAD

# `make corruption-fuzz`: the corruption fuzzer (t/017_corruption_fuzz.pl) at
# its full count, 500 corruptions per layout (about an hour on 2 cores); the
# test suite makes each kind of corruption once per layout, 100 per layout
# with --full.  BX_FUZZ_CORRUPTIONS and BX_FUZZ_SEED override.
.PHONY: corruption-fuzz
corruption-fuzz:
	BX_FUZZ_CORRUPTIONS=$${BX_FUZZ_CORRUPTIONS:-500} SUITE_TIMEOUT=$${SUITE_TIMEOUT:-7200} \
	  TESTS=017_corruption_fuzz bash $(srcdir)/scripts/test.sh

# `make corruption-fuzz-asan`: the corruption fuzzer under the sanitizer
# build (scripts/asan-check.sh: every server of the test with the ASan
# runtime; fails on any sanitizer report), 100 corruptions per layout.
.PHONY: corruption-fuzz-asan
corruption-fuzz-asan:
	BX_FUZZ_CORRUPTIONS=$${BX_FUZZ_CORRUPTIONS:-100} SUITE_TIMEOUT=$${SUITE_TIMEOUT:-7200} \
	  TESTS=t/017_corruption_fuzz bash $(srcdir)/scripts/asan-check.sh
