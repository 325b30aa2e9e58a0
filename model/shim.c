/*-------------------------------------------------------------------------
 *
 * shim.c
 *	  What src/core/fpmodel.c needs of the server, for its tests outside it:
 *	  palloc and friends on malloc, CHECK_FOR_INTERRUPTS's variables, and
 *	  pg_popcount64.
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include <signal.h>
#include <stdio.h>
#include <stdlib.h>

#include "miscadmin.h"
#include "port/pg_bitutils.h"
#include "utils/memutils.h"

#undef fprintf

/* The model's allocations are never freed in bulk here: no contexts */
MemoryContext TopMemoryContext = NULL;

volatile sig_atomic_t InterruptPending = false;

static void *
ShimAlloc(Size size, bool zero)
{
	void	   *p = zero ? calloc(1, size ? size : 1) : malloc(size ? size : 1);

	if (p == NULL)
	{
		fprintf(stderr, "model test: out of memory\n");
		abort();
	}
	return p;
}

void *
palloc(Size size)
{
	return ShimAlloc(size, false);
}

void *
palloc0(Size size)
{
	return ShimAlloc(size, true);
}

void
pfree(void *pointer)
{
	free(pointer);
}

void *
MemoryContextAllocZero(MemoryContext context, Size size)
{
	return ShimAlloc(size, true);
}

void
ProcessInterrupts(void)
{
}

/*
 * pg_popcount64 is a function pointer where the server picks the POPCNT
 * instruction at run time (TRY_POPCNT_FAST up to PostgreSQL 17,
 * TRY_POPCNT_X86_64 in 18), a function elsewhere, and an inline function
 * of pg_bitutils.h from 19 on.
 */
#if PG_VERSION_NUM < 190000
static int
ShimPopcount64(uint64 word)
{
	return __builtin_popcountll(word);
}

#if defined(TRY_POPCNT_FAST) || defined(TRY_POPCNT_X86_64)
int			(*pg_popcount64) (uint64 word) = ShimPopcount64;
#else
int
pg_popcount64(uint64 word)
{
	return ShimPopcount64(word);
}
#endif
#endif
