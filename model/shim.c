/*-------------------------------------------------------------------------
 *
 * shim.c
 *	  What src/fpmodel.c needs of the server, for its tests outside it:
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

static int
ShimPopcount64(uint64 word)
{
	return __builtin_popcountll(word);
}

#ifdef TRY_POPCNT_FAST
int			(*pg_popcount64) (uint64 word) = ShimPopcount64;
#else
int
pg_popcount64(uint64 word)
{
	return ShimPopcount64(word);
}
#endif
