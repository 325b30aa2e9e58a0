# bloomidx: a bloom-signature index access method for PostgreSQL

EXTENSION = bloomidx
MODULE_big = bloomidx
OBJS = bloomidx.o $(patsubst %.c,%.o,$(sort $(wildcard src/*.c)))
DATA = bloomidx--1.0.sql bloomidx--1.1.sql bloomidx--1.0--1.1.sql
PGFILEDESC = "bloomidx - bloom signature index access method"

PG_CPPFLAGS = -I$(srcdir)/src

REGRESS = $(patsubst sql/%.sql,%,$(sort $(wildcard sql/*.sql)))
ISOLATION = $(patsubst specs/%.spec,%,$(sort $(wildcard specs/*.spec)))
TAP_TESTS = 1

EXTRA_CLEAN = results output_iso tmp_check log

PG_CONFIG ?= pg_config
PGXS := $(shell $(PG_CONFIG) --pgxs)
include $(PGXS)

# Export only what PostgreSQL looks up by name (src/visibility.h), as
# PostgreSQL 16 does for every extension.  After PGXS, and with override,
# so that it holds with PG_CFLAGS or CFLAGS given on the command line.
ifeq ($(GCC),yes)
override CFLAGS += -fvisibility=hidden
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
