/*-------------------------------------------------------------------------
 *
 * am_sample.c
 *	  Measuring the elements per value of an index's columns of sets from
 *	  a sample of its table, and sizing the signature from how they spread,
 *	  for the build and bloomidx_check.
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

#include <math.h>

#include "access/genam.h"
#include "access/tableam.h"
#include "miscadmin.h"
#include "nodes/execnodes.h"
#include "utils/memutils.h"
#include "utils/rel.h"

#include "bloomidx.h"
#include "page.h"
#include "signature.h"

/*
 * The sample: ranges of blocks spread evenly over the table, read in an
 * order that keeps what has been read spread evenly (bit-reversed), until
 * BLOOM_SAMPLE_ROWS index rows or BLOOM_SAMPLE_BLOCKS blocks are read.  A
 * table of at most BLOOM_SAMPLE_BLOCKS blocks is read whole.
 */
#define BLOOM_SAMPLE_RANGES		32	/* a power of two */
#define BLOOM_SAMPLE_BLOCKS		256
#define BLOOM_SAMPLE_ROWS		10000
/* Rows whose elements are kept for the sizing (a whole small table's too) */
#define BLOOM_SAMPLE_MAX_COUNTS	100000

typedef struct BloomSampleState
{
	uint32		columns;		/* the columns measured */
	FmgrInfo	extractFn[BLOOMIDX_MAX_COLUMNS];
	Oid			collations[BLOOMIDX_MAX_COLUMNS];
	double		sum[BLOOMIDX_MAX_COLUMNS];
	BloomElementsSample *sample;
	int			maxCounts;		/* room in sample->counts[] */
	MemoryContext sampleCtx;	/* where sample->counts[] live */
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
	BloomElementsSample *sample = ss->sample;
	MemoryContext oldCtx;
	bool		keep = sample->nCounts < BLOOM_SAMPLE_MAX_COUNTS;
	int			i;

	/* Room for this row's counts */
	if (keep && sample->nCounts == ss->maxCounts)
	{
		int			room = Min(Max(ss->maxCounts * 2, 1024),
							   BLOOM_SAMPLE_MAX_COUNTS);

		for (i = 0; i < RelationGetNumberOfAttributes(index); i++)
			if (ss->columns & (1U << i))
				sample->counts[i] = sample->counts[i] == NULL ?
					MemoryContextAlloc(ss->sampleCtx, sizeof(uint32) * room) :
					repalloc(sample->counts[i], sizeof(uint32) * room);
		ss->maxCounts = room;
	}

	oldCtx = MemoryContextSwitchTo(ss->tmpCtx);
	for (i = 0; i < RelationGetNumberOfAttributes(index); i++)
	{
		double		n;

		if ((ss->columns & (1U << i)) == 0)
			continue;
		n = isnull[i] ? 0 : BloomCountElements(&ss->extractFn[i],
											   ss->collations[i], values[i]);
		if (keep)
			sample->counts[i][sample->nCounts] =
				(uint32) Min(n, BLOOMIDX_MAX_SET_ELEMENTS);
		if (isnull[i])
			continue;
		ss->sum[i] += n;
		sample->values[i]++;
	}
	if (keep)
		sample->nCounts++;
	sample->rows++;
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
	ss.sampleCtx = CurrentMemoryContext;
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

/*
 * Rows whose false-positive rate is the sample's mean: how far its
 * elements spread is what the mean alone does not say.  A signature sized
 * for the mean value fills past the target in the rows of large sets, and
 * those pass nearly every query: on Debian's Depends lists (4.4 elements on
 * average, one in a hundred over 28), a signature sized for 4 elements
 * lets 3.6% of the rows through, a hundred times the target.
 */

/* qsort's comparison of two loads */
static int
BloomCompareLoads(const void *a, const void *b)
{
	double		x = *(const double *) a;
	double		y = *(const double *) b;

	return x < y ? -1 : x > y ? 1 : 0;
}

/* The bits each sampled row sets in a signature of this shape, sorted */
static void
BloomSampleLoads(const BloomShape *shape, const BloomColumnElements *ce,
				 const BloomElementsSample *sample, double *loads)
{
	int			r;
	int			i;

	for (r = 0; r < sample->nCounts; r++)
		loads[r] = 0;
	for (i = 0; i < shape->nColumns; i++)
	{
		if (sample->counts[i] == NULL)
		{
			double		bits = shape->bitsPerColumn[i] * ce->elements[i];

			for (r = 0; r < sample->nCounts; r++)
				loads[r] += bits;
		}
		else
			for (r = 0; r < sample->nCounts; r++)
				loads[r] += (double) shape->bitsPerColumn[i] *
					sample->counts[i][r];
	}
	qsort(loads, sample->nCounts, sizeof(double), BloomCompareLoads);
}

/*
 * The mean over the sampled rows (loads, sorted) of the textbook
 * false-positive rate of a typical query of column col (fill to the
 * power of the bits it tests), and of their fill.  The model the estimates
 * use (BloomEqualityFpr) is evaluated once a shape, at the typical row:
 * the sample's rate is the model's there times the ratio of the textbook
 * rates, which is what the spread adds.
 */
static double
BloomSampleFpr(const BloomShape *shape, const double *loads, int n, int col,
			   double *meanFill)
{
	double		sum = 0;
	double		fillSum = 0;
	int			r = 0;

	while (r < n)
	{
		int			same = r;
		double		fill = BloomExpectedFill(shape->sigBits, 1, loads[r]);

		while (same < n && loads[same] == loads[r])
			same++;
		sum += (same - r) * BloomFalsePositiveRate(fill, shape->queryBits[col]);
		fillSum += (same - r) * fill;
		r = same;
	}
	if (meanFill)
		*meanFill = fillSum / n;
	return sum / n;
}

/*
 * The elements of the measured columns of base at scale times their means
 * (the means rounded at scale 1), in ce
 */
static void
BloomScaledElements(const BloomElementsSample *sample,
					const BloomColumnElements *base, double scale,
					BloomColumnElements *ce)
{
	int			i;

	*ce = *base;
	for (i = 0; i < BLOOMIDX_MAX_COLUMNS; i++)
		if (base->measuredColumns & (1U << i))
		{
			double		n = scale == 1.0 ? rint(sample->mean[i]) :
				ceil(sample->mean[i] * scale);

			ce->elements[i] = Min(Max(n, 1), BLOOMIDX_MAX_SET_ELEMENTS);
		}
}

/*
 * The elements at scale (BloomScaledElements) and the shape they give,
 * approximately (see BloomResolveSignature), for a trial; false if that
 * shape is another layout's than baseLayout (a signature the layout
 * cannot take).
 */
static bool
BloomTrialShape(Relation index, const BloomElementsSample *sample,
				const BloomColumnElements *base, int baseLayout,
				double scale, BloomColumnElements *ce, BloomShape *shape)
{
	BloomScaledElements(sample, base, scale, ce);
	BloomResolveSignature(index, BLOOMIDX_DEFAULT_LAYOUT, ce, true, shape);
	return shape->layout == baseLayout;
}

/*
 * Whether the sampled rows' mean false-positive rate, for a typical query
 * of each measured column, is within what shape was sized for: the
 * target rate, or the model's rate at the typical row (a shape whose
 * length or k is given)
 */
static bool
BloomSampleFits(const BloomShape *shape, const BloomColumnElements *ce,
				const BloomElementsSample *sample, double *loads)
{
	double		typical = BloomExpectedFill(shape->sigBits, 1, shape->rowBits);
	int			i;

	BloomSampleLoads(shape, ce, sample, loads);
	for (i = 0; i < shape->nColumns; i++)
	{
		double		model;
		double		textbook;
		double		mean;

		if ((ce->measuredColumns & (1U << i)) == 0)
			continue;
		model = BloomEqualityFpr(shape, typical, 1, &i);
		textbook = BloomFalsePositiveRate(typical, shape->queryBits[i]);
		mean = BloomSampleFpr(shape, loads, sample->nCounts, i, NULL);
		if (textbook <= 0 ? mean > 0 :
			model * mean / textbook > Max(shape->targetFpr, model))
			return false;
	}
	return true;
}

/*
 * Measure the columns of ce named in measure (bit i: column i) that the
 * sample found elements in (their bits of ce->measuredColumns set), and
 * size them for how the sampled rows' elements spread: the fewest
 * elements, at a common multiple of each column's mean, whose shape gives
 * the sampled rows a mean false-positive rate within the one it was sized
 * for, short of a signature too long for the layout the means give (there
 * the longest it takes).  Uniform sizes keep the means, rounded.
 *
 * *loadFactor is how much more the rows load the signature than the mean
 * row does, for the false-positive rate: the load, over the load of the
 * rows' mean fill, whose fill gives the sampled rows' mean (textbook) rate
 * (the largest over the measured columns; 1 or more).  The estimates take
 * the measured fill that far (BloomShapeEffectiveFill).
 */
void
BloomSizeMeasuredElements(Relation index, const BloomElementsSample *sample,
						  uint32 measure, BloomColumnElements *ce,
						  double *loadFactor)
{
	BloomColumnElements base;
	BloomColumnElements tried;
	BloomShape	shape;
	double	   *loads;
	double		lo = 1.0;
	double		hi;
	double		chosen;
	int			baseLayout;
	int			step;
	int			i;

	*loadFactor = 1.0;
	if (sample->nCounts == 0)
		return;
	for (i = 0; i < BLOOMIDX_MAX_COLUMNS; i++)
		if ((measure & (1U << i)) && sample->mean[i] > 0)
			ce->measuredColumns |= 1U << i;
	if (ce->measuredColumns == 0)
		return;
	base = *ce;
	loads = palloc(sizeof(double) * sample->nCounts);

	/*
	 * The smallest scale whose shape fits the sample, or leaves the layout:
	 * the means' own shape exactly, its options checked as the build checks
	 * them (uniform sizes keep it), larger ones approximately
	 */
	BloomScaledElements(sample, &base, 1.0, &tried);
	BloomResolveOptions(index, BLOOMIDX_DEFAULT_LAYOUT, &tried, &shape);
	baseLayout = shape.layout;
	chosen = 1.0;
	if (!BloomSampleFits(&shape, &tried, sample, loads))
	{
		bool		fits = false;

		for (hi = 2.0; hi <= 64.0; hi *= 2)
		{
			CHECK_FOR_INTERRUPTS();
			if (!BloomTrialShape(index, sample, &base, baseLayout, hi,
								 &tried, &shape) ||
				(fits = BloomSampleFits(&shape, &tried, sample, loads)))
				break;
			lo = hi;
		}
		if (hi > 64.0)
			chosen = lo;
		else
		{
			for (step = 0; step < 8; step++)
			{
				double		mid = (lo + hi) / 2;
				bool		allowed;

				CHECK_FOR_INTERRUPTS();
				allowed = BloomTrialShape(index, sample, &base, baseLayout,
										  mid, &tried, &shape);
				if (!allowed ||
					BloomSampleFits(&shape, &tried, sample, loads))
				{
					hi = mid;
					fits = allowed;
				}
				else
					lo = mid;
			}
			chosen = fits ? hi : lo;
		}

		/* The chosen scale's shape, exactly */
		BloomScaledElements(sample, &base, chosen, &tried);
		BloomResolveSignature(index, BLOOMIDX_DEFAULT_LAYOUT, &tried, false,
							  &shape);
	}
	*ce = tried;

	/*
	 * How much more than its mean fill the sample loads that shape: the
	 * fill whose textbook rate is the rows' mean rate, as a load, over the
	 * load of the mean fill
	 */
	BloomSampleLoads(&shape, ce, sample, loads);
	for (i = 0; i < shape.nColumns; i++)
	{
		double		meanFill;
		double		rate;
		double		fill;

		if ((ce->measuredColumns & (1U << i)) == 0 ||
			shape.queryBits[i] <= 0)
			continue;
		rate = BloomSampleFpr(&shape, loads, sample->nCounts, i, &meanFill);
		if (meanFill <= 0 || meanFill >= 1 || rate <= 0)
			continue;
		fill = Min(pow(rate, 1.0 / shape.queryBits[i]), 1 - 1e-9);
		*loadFactor = Max(*loadFactor, log1p(-fill) / log1p(-meanFill));
	}
	*loadFactor = Min(*loadFactor, BLOOMIDX_MAX_LOAD_FACTOR);
	pfree(loads);
}
