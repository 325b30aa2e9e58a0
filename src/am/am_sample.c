/*-------------------------------------------------------------------------
 *
 * am_sample.c
 *	  Measuring the elements per value of an index's columns of sets from
 *	  a sample of its table, for the build's sizing and bloomidx_check.
 *
 * The sample is read as the build reads the table (the table access
 * method's index build scan, over a few block ranges), so that the values
 * are the index's own: its expressions computed, its predicate applied.
 * pg_statistic would not serve: a table loaded just before CREATE INDEX has
 * no statistics, the statistics of a text column say nothing of its
 * trigrams, and those of an index expression exist only once the index
 * exists and has been analyzed.
 *
 * Copyright (c) 2026, bloomidx contributors
 *
 * IDENTIFICATION
 *	  src/am/am_sample.c
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include "access/genam.h"
#include "access/tableam.h"
#include "miscadmin.h"
#include "nodes/execnodes.h"
#include "utils/memutils.h"
#include "utils/rel.h"

#include "bloomidx.h"

/*
 * The sample: ranges of blocks spread evenly over the table, read in an
 * order that keeps what has been read spread evenly (bit-reversed), until
 * BLOOM_SAMPLE_ROWS index rows or BLOOM_SAMPLE_BLOCKS blocks are read.  A
 * table of at most BLOOM_SAMPLE_BLOCKS blocks is read whole.
 */
#define BLOOM_SAMPLE_RANGES		32	/* a power of two */
#define BLOOM_SAMPLE_BLOCKS		256
#define BLOOM_SAMPLE_ROWS		10000

typedef struct BloomSampleState
{
	uint32		columns;		/* the columns measured */
	FmgrInfo	extractFn[BLOOMIDX_MAX_COLUMNS];
	Oid			collations[BLOOMIDX_MAX_COLUMNS];
	double		sum[BLOOMIDX_MAX_COLUMNS];
	BloomElementsSample *sample;
	MemoryContext tmpCtx;
} BloomSampleState;

/*
 * Count the elements of one index row's values in the columns measured.
 */
static void
BloomSampleCallback(Relation index, ItemPointer tid, Datum *values,
					bool *isnull, bool tupleIsAlive, void *arg)
{
	BloomSampleState *ss = (BloomSampleState *) arg;
	MemoryContext oldCtx = MemoryContextSwitchTo(ss->tmpCtx);
	int			i;

	for (i = 0; i < RelationGetNumberOfAttributes(index); i++)
	{
		if ((ss->columns & (1U << i)) == 0 || isnull[i])
			continue;
		ss->sum[i] += BloomCountElements(&ss->extractFn[i], ss->collations[i],
										 values[i]);
		ss->sample->values[i]++;
	}
	ss->sample->rows++;
	MemoryContextSwitchTo(oldCtx);
	MemoryContextReset(ss->tmpCtx);
}

/* Reverse the low bits bits of x */
static uint32
BloomReverseBits(uint32 x, int bits)
{
	uint32		r = 0;
	int			i;

	for (i = 0; i < bits; i++)
		r |= ((x >> i) & 1) << (bits - 1 - i);
	return r;
}

/*
 * Measure the mean elements per non-NULL value of the index's columns of
 * sets named in columns (bit i: column i), from a sample of the table, as
 * the build and indexInfo compute the values (see the file header).  A
 * column with no value sampled, or only empty sets, gets a mean of 0.
 */
void
BloomMeasureElements(Relation heap, Relation index, IndexInfo *indexInfo,
					 uint32 columns, BloomElementsSample *sample)
{
	BloomSampleState ss;
	BlockNumber nblocks = RelationGetNumberOfBlocks(heap);
	int			rangeBits = 0;
	int			nranges;
	BlockNumber span;
	int			r;
	int			i;

	memset(sample, 0, sizeof(BloomElementsSample));
	if (columns == 0 || nblocks == 0)
		return;

	memset(&ss, 0, sizeof(ss));
	ss.columns = columns;
	ss.sample = sample;
	for (i = 0; i < RelationGetNumberOfAttributes(index); i++)
		if (columns & (1U << i))
		{
			fmgr_info_copy(&ss.extractFn[i],
						   index_getprocinfo(index, i + 1, BLOOMIDX_EXTRACT_PROC),
						   CurrentMemoryContext);
			ss.collations[i] = index->rd_indcollation[i];
		}
	ss.tmpCtx = AllocSetContextCreate(CurrentMemoryContext,
									  "bloomidx sample temporary context",
									  ALLOCSET_DEFAULT_SIZES);

	if (nblocks <= BLOOM_SAMPLE_BLOCKS)
	{
		nranges = 1;
		span = nblocks;
	}
	else
	{
		while ((1 << rangeBits) < BLOOM_SAMPLE_RANGES)
			rangeBits++;
		nranges = BLOOM_SAMPLE_RANGES;
		span = BLOOM_SAMPLE_BLOCKS / BLOOM_SAMPLE_RANGES;
	}

	for (r = 0; r < nranges && sample->rows < BLOOM_SAMPLE_ROWS; r++)
	{
		uint32		seg = BloomReverseBits((uint32) r, rangeBits);
		BlockNumber start = (BlockNumber) ((uint64) seg * nblocks / nranges);

		CHECK_FOR_INTERRUPTS();
		table_index_build_range_scan(heap, index, indexInfo, false, false,
									 false, start, Min(span, nblocks - start),
									 BloomSampleCallback, &ss, NULL);
		sample->blocks += Min(span, nblocks - start);
	}

	for (i = 0; i < RelationGetNumberOfAttributes(index); i++)
		if (sample->values[i] > 0)
			sample->mean[i] = ss.sum[i] / sample->values[i];
	MemoryContextDelete(ss.tmpCtx);
}
