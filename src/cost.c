/*-------------------------------------------------------------------------
 *
 * cost.c
 *	  Planner cost model of a bloomidx scan, aware of false positives.
 *
 * A bloomidx scan reads every index page in order, tests every signature
 * and hands the heap TIDs of the candidates to a bitmap heap scan, which
 * rechecks them.  The candidates are the rows that match plus the false
 * positives, and the selectivity given to the planner counts both, so that
 * the bitmap heap scan above is charged for every row it will fetch and
 * throw away:
 *
 *		selectivity = s + p * fp
 *
 * where s is the selectivity of the clauses the index tests (the planner's
 * usual machinery), p the fraction of the table's rows in the index (1
 * unless the index is partial), and fp the fraction of the index's rows
 * that pass the signature test without matching.
 *
 * fp is worked out from the bits the query actually tests:
 *
 * - A query value sets its k bits through the same probe sequence as the
 *	 index, so the number of distinct bits q it tests can be below k: probes
 *	 collide, and the double hashing of signature.h sometimes revisits the
 *	 same few positions.  With constants the planner hashes the values and
 *	 knows their bits; with parameters (generic plans, joins, sub-selects)
 *	 it uses the distribution of q measured by running the probe code over
 *	 pseudo-random values.  The few values that test one to three bits are
 *	 what makes the average rate about twice fill^k at the default shape.
 *
 * - The bits of a row come from its values.  A column's frequent values
 *	 (the most common values of its statistics, and NULL) set the same bits
 *	 in many rows: a query value whose bits fall among those of "true" in a
 *	 boolean column of the index passes half the table.  So a row's bits are
 *	 modelled as the bits of the frequent values it may hold, each with its
 *	 frequency, plus T random bit settings for its other columns, T scaled
 *	 so that the model reproduces the fill (fraction of bits set) measured
 *	 in the metapage.  The chance that q given bits are all among T random
 *	 ones is E[C(K, q) / C(m, q)] over the number K of bits they set, which
 *	 is below fill^q for short signatures (the bits of one row exclude each
 *	 other).
 *
 * - A row that matches some clauses but not all passes those for sure (and
 *	 holds their values' bits).  For a column with few distinct values this
 *	 is most of the false positives, so the rows are split by which clauses
 *	 of noticeable selectivity they match, columns independent, as the
 *	 planner assumes.
 *
 * - "col = ANY (array)" passes when the bits of any one element are set:
 *	 1 - prod(1 - P(element's bits | the other clauses' bits)).  IS NULL
 *	 tests the bits of the column's null hash.  IS NOT NULL tests nothing:
 *	 the index lets every row through for it.
 *
 * Known limitation: one value's bits lie on an arithmetic progression (the
 * double hashing of signature.h), and two values with nearly the same pair
 * of hashes share most bits.  That adds about (columns / m^2) to the rate
 * of a query value whatever its number of bits, which the model leaves
 * out: it underestimates values that test many bits in short signatures.
 *
 * The scan costs every index page at seq_page_cost (the index is read in
 * order with a bulk-read strategy), each signature test a fraction of
 * cpu_operator_cost per 64-bit word tested (a load, an AND and a compare),
 * and each candidate cpu_index_tuple_cost for its entry in the bitmap plus
 * BLOOM_FETCH_COST for its fetch by TID: the bitmap heap scan prices a
 * fetched tuple like a tuple of a sequential scan, but with the data in
 * memory it takes two to three times as long (measured at 1M rows: 100 to
 * 160 ns against 45 to 55 ns), and false positives make bloomidx scans
 * fetch many.
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include <math.h>

#include "access/htup_details.h"
#include "access/relation.h"
#include "catalog/pg_statistic.h"
#include "catalog/pg_type.h"
#include "funcapi.h"
#include "miscadmin.h"
#include "nodes/nodeFuncs.h"
#include "optimizer/cost.h"
#include "optimizer/optimizer.h"
#include "port/pg_bitutils.h"
#include "storage/bufmgr.h"
#include "utils/acl.h"
#include "utils/array.h"
#include "utils/builtins.h"
#include "utils/lsyscache.h"
#include "utils/rel.h"
#include "utils/selfuncs.h"
#include "utils/syscache.h"

#include "bloomidx.h"
#include "page.h"
#include "signature.h"

PG_FUNCTION_INFO_V1(bloomidx_estimate);

/*
 * Testing one 64-bit word of a signature is a load, an AND and a compare,
 * much cheaper than calling an operator: measured at 1 to 1.5 ns, about a
 * tenth of the time a sequential scan spends per cpu_operator_cost.
 */
#define BLOOM_WORD_TEST_COST	(0.1 * cpu_operator_cost)

/*
 * What a tuple fetched by TID costs beyond what the bitmap heap scan
 * charges for it (cpu_tuple_cost and its quals, like a sequential tuple):
 * with the data in memory a fetch takes 2 to 3 times a sequential tuple
 * (cpu_tuple_cost + quals + a share of its page, about 0.019 at the default
 * settings), measured on 1M to 10M rows.
 */
#define BLOOM_FETCH_COST		(3 * cpu_tuple_cost)

/*
 * Distinct-bit distributions of the probe sequence: pseudo-random values
 * run through it (at most BLOOM_PROBE_WORK probes), kept for a few shapes.
 */
#define BLOOM_PROBE_SAMPLES		65536
#define BLOOM_PROBE_WORK		(1 << 22)
#define BLOOM_PROBE_CACHE_SIZE	16

/* Elements of a constant array hashed; longer arrays are sampled evenly */
#define BLOOM_COST_MAX_ELEMENTS	256

/*
 * Clauses whose selectivity is at least this are split into the rows that
 * match them and the rows that do not (at most BLOOM_COST_MAX_SPLIT of
 * them, the least selective first); below it, a matching row is too rare
 * to change the count of false positives.
 */
#define BLOOM_COST_SPLIT_MIN_SEL	1e-4
#define BLOOM_COST_MAX_SPLIT		6

/*
 * A column's values (or NULL) held by at least this fraction of the rows
 * have their bits modelled exactly, up to BLOOM_COST_MAX_FREQUENT per
 * column; the combinations a row can hold are kept while at least
 * BLOOM_COST_MIN_STATE_PROB likely, up to BLOOM_COST_MAX_STATES (the rest
 * count as rows holding other values).
 */
#define BLOOM_COST_FREQUENT_MIN		0.01
#define BLOOM_COST_MAX_FREQUENT		16
#define BLOOM_COST_MIN_STATE_PROB	1e-6
#define BLOOM_COST_MAX_STATES		256

/* Occupancy model only for signatures at most this long; else fill^q */
#define BLOOM_COST_OCCUPANCY_MAX_BITS	1024
#define BLOOM_COST_OCCUPANCY_MAX_WORK	(1 << 22)
#define BLOOM_COST_OCCUPANCY_CACHE		32

/*
 * Distribution of the number of bits K set by some number of random bit
 * settings, with the probabilities P(q given bits all set) derived from it.
 */
typedef struct BloomOccupancy
{
	double		throws;			/* random bit settings */
	double	   *p;				/* P(K = j), j = 0..m, or NULL: use fill^q */
	double	   *cover;			/* cover[q] once computed, else -1 */
} BloomOccupancy;

/*
 * How the signatures of rows look: m bits, a row's random bits coming from
 * throwsPerBit random settings per bit its columns set.
 */
typedef struct BloomRowModel
{
	int			sigBits;		/* m */
	int			sigWords;
	double		fill;			/* measured fraction of bits set */
	double		throwsPerBit;	/* random settings reproducing the fill */
	int			nocc;
	BloomOccupancy occ[BLOOM_COST_OCCUPANCY_CACHE];
} BloomRowModel;

/*
 * The frequent values of one index column: their bits and how many rows
 * hold them.
 */
typedef struct BloomFrequentValues
{
	int			nvalues;
	uint64	   *masks;			/* nvalues * sigWords words */
	double	   *freqs;
} BloomFrequentValues;

/*
 * One index clause, as the cost model sees it.
 */
typedef struct BloomCostClause
{
	int			col;			/* index column (0-based) */
	double		selectivity;	/* of this clause alone */
	bool		isArray;		/* "= ANY": any one of the values */
	int			nknown;			/* values hashed at plan time ... */
	uint64	   *masks;			/* ... their bits, nknown * sigWords words */
	double		knownWeight;	/* elements each known mask stands for */
	double		nunknown;		/* values not known at plan time */
} BloomCostClause;

/*
 * A query: its clauses, the frequent values of the index's columns, and
 * whether it can match anything at all.
 */
typedef struct BloomCostQuery
{
	int			nclauses;
	BloomCostClause *clauses;
	BloomFrequentValues *frequent;	/* per index column, or NULL */
	bool		noMatch;		/* "col = NULL", "= ANY ('{NULL}')": no row */
	double		valuesHashed;	/* values hashed when the scan starts */
} BloomCostQuery;

/*
 * What the model predicts for a query.
 */
typedef struct BloomCostResult
{
	double		falsePositives; /* fraction of index rows passing without
								 * matching every clause */
	double		falsePositiveRate;	/* among rows matching no clause */
	double		wordsTested;	/* 64-bit words tested per signature */
} BloomCostResult;

/*
 * A combination of frequent values a row may hold: the bits they set, the
 * bits of the row's other columns (set at random), its probability.
 */
typedef struct BloomRowState
{
	uint64	   *bits;			/* sigWords words */
	int			randomBits;		/* bits per column of the other columns */
	double		prob;
} BloomRowState;

/*
 * Fraction of signature bits set: measured (metapage statistics) when the
 * index has rows, else what a full index of this shape is expected to have.
 */
double
BloomIndexFill(Relation index, const BloomShape *shape)
{
	Buffer		buffer;
	BloomMetaPage meta;
	uint64		tuples;
	uint64		bitsSet;
	double		totalBits = 0;
	int			i;

	buffer = ReadBuffer(index, BLOOMIDX_METAPAGE_BLKNO);
	LockBuffer(buffer, BUFFER_LOCK_SHARE);
	meta = BloomPageGetMeta(BufferGetPage(buffer));
	tuples = meta->statTuples;
	bitsSet = meta->statBitsSet;
	UnlockReleaseBuffer(buffer);

	if (tuples > 0)
		return (double) bitsSet / ((double) tuples * shape->sigBits);

	for (i = 0; i < shape->nColumns; i++)
		totalBits += shape->bitsPerColumn[i];
	return BloomExpectedFill(shape->sigBits, 1, totalBits);
}

/*
 * Set up the row model of an index of this shape and measured fill: the
 * number of random settings of one bit that, over all the index's columns,
 * gives that fill (throws = log(1 - fill) / log(1 - 1/m)).
 */
static void
BloomRowModelInit(BloomRowModel *model, const BloomShape *shape, double fill)
{
	int			m = shape->sigBits;
	int			totalBits = 0;
	int			i;

	for (i = 0; i < shape->nColumns; i++)
		totalBits += shape->bitsPerColumn[i];
	model->sigBits = m;
	model->sigWords = shape->sigWords;
	model->fill = Min(Max(fill, 1e-9), 1.0 - 1e-9);
	model->throwsPerBit = log1p(-model->fill) / log1p(-1.0 / m) / Max(totalBits, 1);
	model->nocc = 0;
	memset(model->occ, 0, sizeof(model->occ));
}

/*
 * The occupancy distribution after throws random bit settings, computed
 * once per model.  throws is fractional: the distributions after
 * floor(throws) and floor(throws) + 1 are interpolated.  For long
 * signatures K / m hardly varies, and fill^q is used instead (p = NULL).
 */
static BloomOccupancy *
BloomGetOccupancy(BloomRowModel *model, double throws)
{
	int			m = model->sigBits;
	BloomOccupancy *occ;
	int			whole;
	double		frac;
	double	   *p;
	double	   *next;
	int			t;
	int			j;

	for (j = 0; j < model->nocc; j++)
		if (fabs(model->occ[j].throws - throws) < 1e-9)
			return &model->occ[j];
	if (model->nocc == BLOOM_COST_OCCUPANCY_CACHE)
		model->nocc = 0;		/* reuse the entries; rare */

	occ = &model->occ[model->nocc++];
	occ->throws = throws;
	if (occ->p != NULL)
		pfree(occ->p);
	occ->p = NULL;
	if (occ->cover == NULL)
		occ->cover = palloc(sizeof(double) * (m + 1));
	for (j = 0; j <= m; j++)
		occ->cover[j] = -1;
	if (m > BLOOM_COST_OCCUPANCY_MAX_BITS ||
		throws * m > BLOOM_COST_OCCUPANCY_MAX_WORK)
		return occ;

	whole = (int) floor(throws);
	frac = throws - whole;
	p = palloc0(sizeof(double) * (m + 1));
	next = palloc0(sizeof(double) * (m + 1));
	p[0] = 1;
	for (t = 0; t <= whole; t++)
	{
		/* One more throw lands on a set bit with probability j / m */
		next[0] = 0;
		for (j = 1; j <= m; j++)
			next[j] = p[j] * j / m + p[j - 1] * (m - j + 1) / m;
		if (t == whole)
		{
			/* next is after whole + 1 throws: blend with whole throws */
			for (j = 0; j <= m; j++)
				p[j] = p[j] * (1 - frac) + next[j] * frac;
			break;
		}
		memcpy(p, next, sizeof(double) * (m + 1));
	}
	pfree(next);
	occ->p = p;
	return occ;
}

/*
 * Probability that q given bits are all set by throws random bit settings.
 */
static double
BloomCoverProbability(BloomRowModel *model, BloomOccupancy *occ, int q)
{
	int			m = model->sigBits;
	double		result = 0;
	int			j;

	if (q <= 0)
		return 1.0;
	if (q > m)
		q = m;
	if (occ->cover[q] >= 0)
		return occ->cover[q];

	if (occ->p == NULL)
		result = pow(-expm1(occ->throws * log1p(-1.0 / m)), q);
	else
	{
		/* E[C(K, q) / C(m, q)]: the q bits are among the K set */
		double		lognorm = lgamma(m + 1.0) - lgamma(m - q + 1.0);

		for (j = q; j <= m; j++)
		{
			if (occ->p[j] <= 0)
				continue;
			result += occ->p[j] *
				exp(lgamma(j + 1.0) - lgamma(j - q + 1.0) - lognorm);
		}
	}
	occ->cover[q] = Min(result, 1.0);
	return occ->cover[q];
}

/*
 * Bits set in a mask of words, or in the union of two masks, leaving out
 * the bits of a third (any of b and minus may be NULL).
 */
static int
BloomMaskBits(const uint64 *a, const uint64 *b, const uint64 *minus, int nwords)
{
	int			bits = 0;
	int			w;

	for (w = 0; w < nwords; w++)
	{
		uint64		x = b ? (a[w] | b[w]) : a[w];

		if (minus)
			x &= ~minus[w];
		bits += pg_popcount64(x);
	}
	return bits;
}

/*
 * Pseudo-random hashes standing for values not known at plan time; fixed,
 * so that estimates are reproducible.
 */
static inline uint64
BloomSampleHash(int s)
{
	return BloomMix64((uint64) s * UINT64CONST(0x9e3779b97f4a7c15) +
					  UINT64CONST(0x2545f4914f6cdd1d));
}

/*
 * Distribution of the number of distinct bits d that the k probes of one
 * value set in m bits: P(d), d = 0..min(k, m).  Measured once per backend
 * and shape by running the probe code of signature.h over pseudo-random
 * hashes, so that it follows the hashing scheme exactly.
 */
static const double *
BloomProbeDistinct(int m, int k)
{
	static struct
	{
		int			m;
		int			k;
		double	   *p;
	}			cache[BLOOM_PROBE_CACHE_SIZE];
	static int	next = 0;
	int			dmax = Min(k, m);
	int			nsamples;
	uint64	   *mask;
	double	   *p;
	int			nwords = (m + 63) / 64;
	int			i;

	for (i = 0; i < BLOOM_PROBE_CACHE_SIZE; i++)
		if (cache[i].p != NULL && cache[i].m == m && cache[i].k == k)
			return cache[i].p;

	nsamples = Min(BLOOM_PROBE_SAMPLES, Max(4096, BLOOM_PROBE_WORK / k));
	p = MemoryContextAllocZero(TopMemoryContext, sizeof(double) * (dmax + 1));
	mask = palloc(sizeof(uint64) * nwords);
	for (i = 0; i < nsamples; i++)
	{
		memset(mask, 0, sizeof(uint64) * nwords);
		BloomSetMaskBits(mask, m, BloomSampleHash(i), 0, k);
		p[Min(BloomMaskBits(mask, NULL, NULL, nwords), dmax)] += 1.0 / nsamples;
	}
	pfree(mask);

	if (cache[next].p != NULL)
		pfree(cache[next].p);
	cache[next].m = m;
	cache[next].k = k;
	cache[next].p = p;
	next = (next + 1) % BLOOM_PROBE_CACHE_SIZE;
	return p;
}

/*
 * Hypergeometric probability of x successes when drawing n of N items of
 * which K are successes.
 */
static double
BloomHypergeometric(int x, int N, int K, int n)
{
	if (x < 0 || x > n || x > K || n - x > N - K)
		return 0;
	return exp(lgamma(K + 1.0) - lgamma(x + 1.0) - lgamma(K - x + 1.0) +
			   lgamma(N - K + 1.0) - lgamma(n - x + 1.0) - lgamma(N - K - n + x + 1.0) -
			   lgamma(N + 1.0) + lgamma(n + 1.0) + lgamma(N - n + 1.0));
}

/*
 * Is mask (sigWords words) one of the known values of clause?
 */
static bool
BloomClauseHasMask(const BloomCostClause *clause, const uint64 *mask, int nwords)
{
	int			e;

	for (e = 0; e < clause->nknown; e++)
		if (memcmp(clause->masks + (Size) e * nwords, mask,
				   sizeof(uint64) * nwords) == 0)
			return true;
	return false;
}

/*
 * The combinations of frequent values a row may hold, with their bits and
 * probabilities, for rows that match the clauses in matched and none of
 * the others.  A column a matched equality constrains holds that value; a
 * column a non-matched clause constrains holds any frequent value but the
 * clause's.  Columns without frequent values add random bits.  Returns the
 * number of states.
 */
static int
BloomRowStates(const BloomShape *shape, const BloomCostQuery *query,
			   uint32 matched, BloomRowState *states)
{
	int			nwords = shape->sigWords;
	int			nstates = 1;
	int			col;

	states[0].bits = palloc0(sizeof(uint64) * nwords);
	states[0].randomBits = 0;
	states[0].prob = 1;

	for (col = 0; col < shape->nColumns; col++)
	{
		int			k = shape->bitsPerColumn[col];
		const BloomFrequentValues *fv = query->frequent ? &query->frequent[col] : NULL;
		const uint64 *fixed = NULL;
		double		excluded = 0;
		double		other;
		double		freqs[BLOOM_COST_MAX_FREQUENT];
		int			c;
		int			j;
		int			s;
		int			n;

		/* What the clauses on this column say about its value */
		for (j = 0; fv != NULL && j < fv->nvalues; j++)
			freqs[j] = fv->freqs[j];
		for (c = 0; c < query->nclauses; c++)
		{
			const BloomCostClause *clause = &query->clauses[c];

			if (clause->col != col)
				continue;
			if ((matched & ((uint32) 1 << c)) && clause->nknown == 1)
				fixed = clause->masks;
			for (j = 0; fv != NULL && j < fv->nvalues; j++)
			{
				if (!(matched & ((uint32) 1 << c)) &&
					BloomClauseHasMask(clause, fv->masks + (Size) j * nwords, nwords))
				{
					excluded += freqs[j];	/* the row does not hold it */
					freqs[j] = 0;
				}
			}
		}

		if (fixed != NULL)
		{
			for (s = 0; s < nstates; s++)
			{
				int			w;

				for (w = 0; w < nwords; w++)
					states[s].bits[w] |= fixed[w];
			}
			continue;
		}
		if (fv == NULL || fv->nvalues == 0)
		{
			for (s = 0; s < nstates; s++)
				states[s].randomBits += k;
			continue;
		}

		/* The other values' shares among the rows that can hold them */
		other = 1 - excluded;
		for (j = 0; j < fv->nvalues; j++)
			other -= freqs[j];
		for (j = 0; j < fv->nvalues; j++)
			freqs[j] /= Max(1 - excluded, 1e-9);
		other = Max(other, 0) / Max(1 - excluded, 1e-9);

		/*
		 * Branch every state on the column's frequent values; a branch too
		 * unlikely, or beyond the number of states kept, stays with the
		 * parent as a row holding some value at random.
		 */
		n = nstates;
		for (s = 0; s < n; s++)
		{
			BloomRowState base = states[s];
			double		random = other;

			for (j = 0; j < fv->nvalues; j++)
			{
				BloomRowState *to;
				int			w;

				if (freqs[j] <= 0)
					continue;
				if (base.prob * freqs[j] < BLOOM_COST_MIN_STATE_PROB ||
					nstates >= BLOOM_COST_MAX_STATES)
				{
					random += freqs[j];
					continue;
				}
				to = &states[nstates++];
				to->bits = palloc(sizeof(uint64) * nwords);
				for (w = 0; w < nwords; w++)
					to->bits[w] = base.bits[w] | fv->masks[(Size) j * nwords + w];
				to->randomBits = base.randomBits;
				to->prob = base.prob * freqs[j];
			}
			states[s].randomBits += k;
			states[s].prob *= random;
		}
	}
	return nstates;
}

/*
 * Probability that a row in a given state passes the clauses of set (a bit
 * per clause): the bits of every equality, and of at least one element of
 * every array, are set in its signature.
 *
 * The bits of known values are exact; those of unknown values are drawn
 * from the probe distribution.  The h bits the state's frequent values set
 * are set for sure; the others are set by the state's random bits.  dist[u]
 * is the distribution of u, the number of bits the equalities need from
 * the random ones: q0 known, the rest anywhere but on bits already counted
 * or set for sure.  For each u, an array
 * passes unless all its elements miss, element e missing unless its own
 * bits are set too.
 */
static double
BloomStatePassProbability(const BloomShape *shape, BloomRowModel *model,
						  const BloomCostQuery *query, uint32 set,
						  const BloomRowState *state, uint64 *base,
						  double *dist, double *next)
{
	int			m = shape->sigBits;
	int			nwords = shape->sigWords;
	BloomOccupancy *occ;
	int			q0;
	int			h;
	int			hi;
	double		result = 0;
	int			u;
	int			c;

	occ = BloomGetOccupancy(model, model->throwsPerBit * state->randomBits);

	/* The bits of the known equalities */
	memset(base, 0, sizeof(uint64) * nwords);
	for (c = 0; c < query->nclauses; c++)
	{
		const BloomCostClause *clause = &query->clauses[c];
		int			w;

		if ((set & ((uint32) 1 << c)) && clause->nknown == 1)
			for (w = 0; w < nwords; w++)
				base[w] |= clause->masks[w];
	}
	q0 = BloomMaskBits(base, NULL, state->bits, nwords);
	h = BloomMaskBits(state->bits, NULL, NULL, nwords);

	/* Add the unknown equalities' bits, each overlapping the others' */
	memset(dist, 0, sizeof(double) * (m + 1));
	dist[q0] = 1;
	hi = q0;
	for (c = 0; c < query->nclauses; c++)
	{
		const BloomCostClause *clause = &query->clauses[c];
		int			k = shape->bitsPerColumn[clause->col];
		const double *pd;
		int			dmax = Min(k, m);
		int			d;
		int			x;

		if (!(set & ((uint32) 1 << c)) || clause->isArray || clause->nunknown <= 0)
			continue;
		pd = BloomProbeDistinct(m, k);
		memset(next, 0, sizeof(double) * (m + 1));
		for (u = q0; u <= hi; u++)
		{
			if (dist[u] <= 0)
				continue;
			for (d = 1; d <= dmax; d++)
			{
				if (pd[d] <= 0)
					continue;
				for (x = 0; x <= d && u + x <= m; x++)
					next[u + x] += dist[u] * pd[d] *
						BloomHypergeometric(x, m, Max(m - u - h, 0), d);
			}
		}
		memcpy(dist, next, sizeof(double) * (m + 1));
		hi = Min(m, hi + dmax);
	}

	for (u = q0; u <= hi; u++)
	{
		double		pBase;
		double		pass;

		if (dist[u] <= 0)
			continue;
		pBase = BloomCoverProbability(model, occ, u);
		pass = pBase;

		for (c = 0; c < query->nclauses && pass > 0; c++)
		{
			const BloomCostClause *clause = &query->clauses[c];
			double		logMiss = 0;

			if (!(set & ((uint32) 1 << c)) || !clause->isArray ||
				clause->nknown == 1)
				continue;

			if (clause->nunknown > 0)
			{
				/* An unknown element: d bits, x of them new */
				int			k = shape->bitsPerColumn[clause->col];
				const double *pd = BloomProbeDistinct(m, k);
				double		r = 0;
				int			d;
				int			x;

				for (d = 1; d <= Min(k, m); d++)
					for (x = 0; x <= d && pd[d] > 0; x++)
						r += pd[d] * BloomHypergeometric(x, m, Max(m - u - h, 0), d) *
							BloomCoverProbability(model, occ, u + x);
				r = Min(r / pBase, 1.0);
				logMiss = r >= 1.0 ? -INFINITY : clause->nunknown * log1p(-r);
			}
			else
			{
				/* A known element: rest bits beyond the base and the state */
				int			e;

				for (e = 0; e < clause->nknown; e++)
				{
					const uint64 *mask = clause->masks + (Size) e * nwords;
					int			rest;
					double		r = 0;
					int			y;

					rest = BloomMaskBits(base, mask, state->bits, nwords) - q0;
					/* y of the rest among the u - q0 unknown values' bits */
					if (u == q0)
						r = BloomCoverProbability(model, occ, u + rest);
					else
						for (y = 0; y <= rest; y++)
							r += BloomHypergeometric(y, m - q0, u - q0, rest) *
								BloomCoverProbability(model, occ, u + rest - y);
					r = Min(r / pBase, 1.0);
					if (r >= 1.0)
					{
						logMiss = -INFINITY;	/* this element adds no bit */
						break;
					}
					logMiss += clause->knownWeight * log1p(-r);
				}
			}
			pass *= -expm1(logMiss);
		}
		result += dist[u] * pass;
	}
	return result;
}

/*
 * Probability that a row matching the clauses in matched, and none of the
 * others, passes the others: averaged over the frequent values it may hold.
 */
static double
BloomPassProbability(const BloomShape *shape, BloomRowModel *model,
					 const BloomCostQuery *query, uint32 all, uint32 matched,
					 BloomRowState *states, uint64 *base, double *dist,
					 double *next)
{
	int			nstates;
	double		result = 0;
	int			s;

	nstates = BloomRowStates(shape, query, matched, states);
	for (s = 0; s < nstates; s++)
	{
		if (states[s].prob > 0)
			result += states[s].prob *
				BloomStatePassProbability(shape, model, query, all & ~matched,
										  &states[s], base, dist, next);
		pfree(states[s].bits);
	}
	return result;
}

/*
 * Work out the false positives of a query (see the file header), splitting
 * the rows by which of the clauses of noticeable selectivity they match.
 */
static void
BloomEstimateQuery(const BloomShape *shape, BloomRowModel *model,
				   const BloomCostQuery *query, BloomCostResult *result)
{
	int			n = query->nclauses;
	int			m = shape->sigBits;
	int			nwords = shape->sigWords;
	int			split[BLOOM_COST_MAX_SPLIT];
	int			nsplit = 0;
	uint32		all = 0;
	BloomRowState *states;
	uint64	   *base;
	double	   *dist;
	double	   *next;
	double		words = 0;
	int			subset;
	int			c;

	memset(result, 0, sizeof(*result));
	result->wordsTested = 1;
	if (query->noMatch)
		return;

	/* The clauses worth splitting on: the least selective ones */
	for (c = 0; c < n; c++)
	{
		const BloomCostClause *clause = &query->clauses[c];

		all |= (uint32) 1 << c;
		if (clause->selectivity < BLOOM_COST_SPLIT_MIN_SEL)
			continue;
		if (nsplit < BLOOM_COST_MAX_SPLIT)
			split[nsplit++] = c;
		else
		{
			int			i,
						lo = 0;

			for (i = 1; i < nsplit; i++)
				if (query->clauses[split[i]].selectivity <
					query->clauses[split[lo]].selectivity)
					lo = i;
			if (clause->selectivity > query->clauses[split[lo]].selectivity)
				split[lo] = c;
		}
	}

	states = palloc(sizeof(BloomRowState) * BLOOM_COST_MAX_STATES);
	base = palloc(sizeof(uint64) * nwords);
	dist = palloc(sizeof(double) * (m + 1));
	next = palloc(sizeof(double) * (m + 1));

	/* Rows matching the clauses in subset, and none of the others */
	for (subset = 0; subset < (1 << nsplit); subset++)
	{
		uint32		matched = 0;
		double		weight = 1;
		double		pass;
		int			i;

		for (i = 0; i < nsplit; i++)
		{
			double		sel = query->clauses[split[i]].selectivity;

			if (subset & (1 << i))
			{
				matched |= (uint32) 1 << split[i];
				weight *= sel;
			}
			else
				weight *= 1 - sel;
		}
		if (matched == all)
			continue;			/* true matches: counted by the caller */
		CHECK_FOR_INTERRUPTS();
		pass = BloomPassProbability(shape, model, query, all, matched,
									states, base, dist, next);
		if (subset == 0)
			result->falsePositiveRate = pass;
		result->falsePositives += weight * pass;
	}

	/*
	 * Words tested per signature: those of the equalities' mask (or about
	 * one per equality when unknown), and for each array element its first
	 * word and half of the others (most elements miss on the first word
	 * they test).
	 */
	memset(base, 0, sizeof(uint64) * nwords);
	for (c = 0; c < n; c++)
	{
		const BloomCostClause *clause = &query->clauses[c];
		int			w;

		if (clause->isArray && clause->nknown != 1)
			words += (clause->nunknown > 0 ? clause->nunknown :
					  clause->nknown * clause->knownWeight) *
				(1 + (nwords - 1) / 2.0);
		else if (clause->nknown == 1)
			for (w = 0; w < nwords; w++)
				base[w] |= clause->masks[w];
		else
			words += 1;
	}
	for (c = 0; c < nwords; c++)
		if (base[c] != 0)
			words += 1;
	result->wordsTested = Max(words, 1);

	pfree(states);
	pfree(base);
	pfree(dist);
	pfree(next);
}

/*
 * Hash function for the values of a clause with operator opno on column
 * col: the column's own, or the family's for the operator's right-hand
 * type; NULL if the family has none.
 */
static FmgrInfo *
BloomCostHashFunction(Relation index, BloomState state, int col, Oid opno,
					  FmgrInfo *flinfo)
{
	int			strategy;
	Oid			lefttype;
	Oid			righttype;

	get_op_opfamily_properties(opno, index->rd_opfamily[col], false,
							   &strategy, &lefttype, &righttype);
	return BloomKeyHashFunction(index, state, col, righttype, flinfo, true);
}

/*
 * The mask of one value's bits in column col.
 */
static void
BloomCostValueMask(BloomState state, int col, FmgrInfo *hashFn, Datum value,
				   uint64 *mask)
{
	const BloomShape *shape = &state->shape;
	uint64		hash = BloomHashDatum(hashFn, state->collations[col], value);

	memset(mask, 0, sizeof(uint64) * shape->sigWords);
	BloomSetMaskBits(mask, shape->sigBits, hash, col, shape->bitsPerColumn[col]);
}

/*
 * Where the statistics of index column col live: the table's column, or
 * for an expression the index's own (ANALYZE keeps them there).
 */
static void
BloomColumnStatsKey(Relation index, int col, Oid *relid, AttrNumber *attnum)
{
	*relid = index->rd_index->indrelid;
	*attnum = index->rd_index->indkey.values[col];
	if (*attnum == 0)
	{
		*relid = RelationGetRelid(index);
		*attnum = col + 1;
	}
}

/*
 * The frequent values of index column col, and NULL if frequent, from the
 * column's statistics (none without statistics).
 */
static void
BloomGetFrequentValues(Relation index, BloomState state, int col,
					   BloomFrequentValues *fv)
{
	const BloomShape *shape = &state->shape;
	int			nwords = shape->sigWords;
	Oid			relid;
	AttrNumber	attnum;
	HeapTuple	statsTuple;
	AttStatsSlot sslot;
	int			j;

	memset(fv, 0, sizeof(*fv));
	BloomColumnStatsKey(index, col, &relid, &attnum);
	statsTuple = SearchSysCache3(STATRELATTINH, ObjectIdGetDatum(relid),
								 Int16GetDatum(attnum), BoolGetDatum(false));
	if (!HeapTupleIsValid(statsTuple))
		return;

	fv->masks = palloc0(sizeof(uint64) * nwords * BLOOM_COST_MAX_FREQUENT);
	fv->freqs = palloc0(sizeof(double) * BLOOM_COST_MAX_FREQUENT);

	if (((Form_pg_statistic) GETSTRUCT(statsTuple))->stanullfrac >= BLOOM_COST_FREQUENT_MIN)
	{
		BloomSetMaskBits(fv->masks, shape->sigBits, BLOOM_NULL_HASH, col,
						 shape->bitsPerColumn[col]);
		fv->freqs[0] = ((Form_pg_statistic) GETSTRUCT(statsTuple))->stanullfrac;
		fv->nvalues = 1;
	}

	/* Most common values come most common first */
	if (get_attstatsslot(&sslot, statsTuple, STATISTIC_KIND_MCV, InvalidOid,
						 ATTSTATSSLOT_VALUES | ATTSTATSSLOT_NUMBERS))
	{
		for (j = 0; j < sslot.nvalues && j < sslot.nnumbers &&
			 fv->nvalues < BLOOM_COST_MAX_FREQUENT; j++)
		{
			if (sslot.numbers[j] < BLOOM_COST_FREQUENT_MIN)
				break;
			BloomCostValueMask(state, col, &state->hashFn[col], sslot.values[j],
							   fv->masks + (Size) fv->nvalues * nwords);
			fv->freqs[fv->nvalues++] = sslot.numbers[j];
		}
		free_attstatsslot(&sslot);
	}
	ReleaseSysCache(statsTuple);
}

/*
 * Describe one index qual for the model: its value(s), hashed when they are
 * known at plan time.  Returns false for a qual the index does not test
 * (IS NOT NULL).
 */
static bool
BloomCostDescribeQual(PlannerInfo *root, Relation index, BloomState state,
					  int col, Expr *qual, BloomCostQuery *query,
					  BloomCostClause *clause)
{
	const BloomShape *shape = &state->shape;
	int			nwords = shape->sigWords;
	FmgrInfo	flinfo;
	FmgrInfo   *hashFn;
	Node	   *value;

	memset(clause, 0, sizeof(*clause));
	clause->col = col;

	if (IsA(qual, NullTest))
	{
		if (((NullTest *) qual)->nulltesttype == IS_NOT_NULL)
			return false;
		clause->nknown = 1;
		clause->masks = palloc0(sizeof(uint64) * nwords);
		BloomSetMaskBits(clause->masks, shape->sigBits, BLOOM_NULL_HASH, col,
						 shape->bitsPerColumn[col]);
		return true;
	}

	if (IsA(qual, OpExpr))
	{
		OpExpr	   *op = (OpExpr *) qual;

		value = estimate_expression_value(root, (Node *) lsecond(op->args));
		hashFn = BloomCostHashFunction(index, state, col, op->opno, &flinfo);
		if (IsA(value, Const) && ((Const *) value)->constisnull)
			query->noMatch = true;	/* "col = NULL" matches nothing */
		else if (IsA(value, Const) && hashFn != NULL)
		{
			clause->nknown = 1;
			clause->masks = palloc(sizeof(uint64) * nwords);
			BloomCostValueMask(state, col, hashFn, ((Const *) value)->constvalue,
							   clause->masks);
		}
		else
			clause->nunknown = 1;
		query->valuesHashed += 1;
		return true;
	}

	if (IsA(qual, ScalarArrayOpExpr))
	{
		ScalarArrayOpExpr *saop = (ScalarArrayOpExpr *) qual;
		Node	   *arrayexpr = (Node *) lsecond(saop->args);

		clause->isArray = true;
		value = estimate_expression_value(root, arrayexpr);
		hashFn = BloomCostHashFunction(index, state, col, saop->opno, &flinfo);
		if (IsA(value, Const) && ((Const *) value)->constisnull)
			query->noMatch = true;
		else if (IsA(value, Const) && hashFn != NULL)
		{
			ArrayType  *array = DatumGetArrayTypeP(((Const *) value)->constvalue);
			int16		elmlen;
			bool		elmbyval;
			char		elmalign;
			Datum	   *elems;
			bool	   *nulls;
			int			nelems;
			int			nonnull = 0;
			int			step;
			int			i;

			get_typlenbyvalalign(ARR_ELEMTYPE(array), &elmlen, &elmbyval, &elmalign);
			deconstruct_array(array, ARR_ELEMTYPE(array), elmlen, elmbyval,
							  elmalign, &elems, &nulls, &nelems);
			for (i = 0; i < nelems; i++)
				if (!nulls[i])
					elems[nonnull++] = elems[i];
			if (nonnull == 0)
			{
				query->noMatch = true;	/* NULL elements equal nothing */
				return true;
			}

			/* Hash all elements, or an even sample of a long array */
			step = (nonnull + BLOOM_COST_MAX_ELEMENTS - 1) / BLOOM_COST_MAX_ELEMENTS;
			clause->masks = palloc(sizeof(uint64) * nwords *
								   ((nonnull + step - 1) / step));
			for (i = 0; i < nonnull; i += step)
			{
				CHECK_FOR_INTERRUPTS();
				BloomCostValueMask(state, col, hashFn, elems[i],
								   clause->masks + (Size) clause->nknown * nwords);
				clause->nknown++;
			}
			clause->knownWeight = (double) nonnull / clause->nknown;
			query->valuesHashed += nonnull;
		}
		else
		{
			clause->nunknown = Max(estimate_array_length(arrayexpr), 1);
			query->valuesHashed += clause->nunknown;
		}
		return true;
	}

	elog(ERROR, "unsupported bloomidx index qual type: %d", (int) nodeTag(qual));
	return false;				/* keep compiler quiet */
}

/*
 * Slices a sliced-layout scan reads per stripe for the query: the bits of
 * each value it tests (k for a value unknown at plan time), every element
 * of an "= ANY" counted (each is ANDed on its own).
 */
static double
BloomQuerySlices(const BloomShape *shape, const BloomCostQuery *query)
{
	double		slices = 0;
	int			i,
				j,
				w;

	for (i = 0; i < query->nclauses; i++)
	{
		const BloomCostClause *clause = &query->clauses[i];
		double		bits = 0;

		for (j = 0; j < clause->nknown; j++)
			for (w = 0; w < shape->sigWords; w++)
				bits += pg_popcount64(clause->masks[(Size) j * shape->sigWords + w]);
		if (clause->isArray && clause->nknown > 0)
			bits *= clause->knownWeight;
		bits += clause->nunknown * shape->bitsPerColumn[clause->col];
		slices += bits;
	}
	return slices;
}

/*
 * Estimate the cost of a bloomidx bitmap scan (amcostestimate).
 */
void
bloomidx_costestimate(PlannerInfo *root, IndexPath *path, double loop_count,
					  Cost *indexStartupCost, Cost *indexTotalCost,
					  Selectivity *indexSelectivity, double *indexCorrelation,
					  double *indexPages)
{
	IndexOptInfo *index = path->indexinfo;
	Relation	indexRel;
	BloomState	state;
	BloomRowModel model;
	BloomCostQuery query;
	BloomCostResult est;
	List	   *allQuals = NIL;
	List	   *testedQuals = NIL;
	int			maxClauses;
	double		inIndex;
	double		s;
	double		selectivity;
	double		pagesFetched;
	double		wordsTested;
	BloomSlicedSizesData sliced = {0};
	ListCell   *lc;
	int			col;

	indexRel = index_open(index->indexoid, NoLock);
	state = BloomGetState(indexRel);
	BloomRowModelInit(&model, &state->shape, BloomIndexFill(indexRel, &state->shape));

	memset(&query, 0, sizeof(query));
	maxClauses = 0;
	foreach(lc, path->indexclauses)
		maxClauses += list_length(lfirst_node(IndexClause, lc)->indexquals);
	query.clauses = palloc0(sizeof(BloomCostClause) * Max(Min(maxClauses, 32), 1));
	foreach(lc, path->indexclauses)
	{
		IndexClause *iclause = lfirst_node(IndexClause, lc);
		ListCell   *lc2;

		foreach(lc2, iclause->indexquals)
		{
			RestrictInfo *rinfo = lfirst_node(RestrictInfo, lc2);
			BloomCostClause *clause;

			allQuals = lappend(allQuals, rinfo);
			if (query.nclauses >= 32)
				continue;		/* beyond what a clause set holds: ignored */
			clause = &query.clauses[query.nclauses];
			if (!BloomCostDescribeQual(root, indexRel, state, iclause->indexcol,
									   rinfo->clause, &query, clause))
				continue;
			clause->selectivity = clause_selectivity(root, (Node *) rinfo,
													 index->rel->relid,
													 JOIN_INNER, NULL);
			testedQuals = lappend(testedQuals, rinfo);
			query.nclauses++;
		}
	}

	query.frequent = palloc0(sizeof(BloomFrequentValues) * state->shape.nColumns);
	for (col = 0; col < state->shape.nColumns && !query.noMatch; col++)
		BloomGetFrequentValues(indexRel, state, col, &query.frequent[col]);
	if (state->shape.layout == BLOOMIDX_LAYOUT_SLICED)
		BloomSlicedSizes(indexRel, &sliced);
	index_close(indexRel, NoLock);

	BloomEstimateQuery(&state->shape, &model, &query, &est);

	/*
	 * Candidates: the rows matching the quals the index tests (not IS NOT
	 * NULL), plus the false positives among the index's rows.
	 */
	s = clauselist_selectivity(root, add_predicate_to_index_quals(index, testedQuals),
							   index->rel->relid, JOIN_INNER, NULL);
	inIndex = index->rel->tuples > 0 ? index->tuples / index->rel->tuples : 1.0;
	CLAMP_PROBABILITY(inIndex);
	selectivity = query.noMatch ? 0.0 : s + inIndex * est.falsePositives;
	CLAMP_PROBABILITY(selectivity);

	/*
	 * Every page is read in order, and re-read on each loop of a nested
	 * loop except for what stays cached; every signature is tested; every
	 * candidate goes into the bitmap and is fetched.
	 */
	if (state->shape.layout == BLOOMIDX_LAYOUT_SLICED)
	{
		/*
		 * The sliced layout reads, per stripe, its stripe page and the
		 * slices of the query's bits (ANDing a page of words for each), the
		 * TID-map pages holding candidates, and the pending pages, whose
		 * signatures are tested as in the row layout.
		 */
		double		slices = Min(BloomQuerySlices(&state->shape, &query),
								 (double) state->shape.sigBits * (1 + query.nclauses));
		double		tidPages;
		double		candidates = selectivity * index->rel->tuples;
		double		pendingRows = sliced.pendingPages * state->tuplesPerPage;

		/* TID maps are compressed: what the other pages leave of the index */
		tidPages = index->pages - sliced.stripes * (1 + state->shape.sigBits) -
			sliced.pendingPages;
		tidPages = Max(tidPages, sliced.stripes);
		tidPages = Min(tidPages, sliced.stripes * BLOOMIDX_STRIPE_TIDPAGES);

		pagesFetched = sliced.stripes * (1 + slices) + sliced.pendingPages +
			(tidPages > 0 ? tidPages * -expm1(-candidates / tidPages) : 0);
		pagesFetched = Min(pagesFetched, index->pages);
		wordsTested = sliced.stripes * slices * BLOOMIDX_STRIPE_WORDS +
			est.wordsTested * pendingRows;
	}
	else
	{
		if (loop_count > 1)
			pagesFetched = index_pages_fetched(index->pages * loop_count,
											   index->pages, index->rel->pages,
											   root) / loop_count;
		else
			pagesFetched = index->pages;
		wordsTested = est.wordsTested * index->tuples;
	}

	*indexStartupCost = index_other_operands_eval_cost(root, allQuals) +
		query.valuesHashed * cpu_operator_cost;
	*indexTotalCost = *indexStartupCost;
	if (!query.noMatch)
		*indexTotalCost += seq_page_cost * pagesFetched +
			BLOOM_WORD_TEST_COST * wordsTested +
			(cpu_index_tuple_cost + BLOOM_FETCH_COST) * selectivity * index->rel->tuples;
	*indexSelectivity = selectivity;
	*indexCorrelation = 0;
	*indexPages = index->pages;
}

/*
 * The textbook false-positive rate of an equality on one column of an
 * index of this shape and fill: fill^k for one value, 1 - (1 - fill^k)^n
 * for any of n values.  It takes every value to set k distinct bits at
 * random; BloomEqualityFpr is what the planner expects.
 */
double
BloomClauseFpr(const BloomShape *shape, double fill, int col, double nvalues)
{
	double		one = BloomFalsePositiveRate(fill, shape->bitsPerColumn[col]);

	if (nvalues <= 1)
		return one;
	return -expm1(nvalues * log1p(-Min(one, 0.999999)));
}

/*
 * False-positive rate the planner expects of an equality on each of ncols
 * columns (cols[], 0-based) of an index of this shape and fill, for values
 * not known in advance.
 */
double
BloomEqualityFpr(const BloomShape *shape, double fill, int ncols, const int *cols)
{
	BloomRowModel model;
	BloomCostQuery query;
	BloomCostResult est;
	int			i;

	memset(&query, 0, sizeof(query));
	query.nclauses = Min(ncols, 32);
	query.clauses = palloc0(sizeof(BloomCostClause) * Max(query.nclauses, 1));
	for (i = 0; i < query.nclauses; i++)
	{
		query.clauses[i].col = cols[i];
		query.clauses[i].nunknown = 1;
	}
	BloomRowModelInit(&model, shape, fill);
	BloomEstimateQuery(shape, &model, &query, &est);
	return est.falsePositiveRate;
}

/*
 * Selectivity of an equality on a typical value of index column col (the
 * planner's estimate for a value it does not know: the non-null rows over
 * the number of distinct values), from the statistics of the table column
 * or index expression.  Returns -1 without statistics.
 */
static double
BloomTypicalSelectivity(Relation index, int col, double heapTuples)
{
	Oid			relid;
	AttrNumber	attnum;
	HeapTuple	statsTuple;
	Form_pg_statistic stats;
	double		ndistinct;
	double		result = -1;

	BloomColumnStatsKey(index, col, &relid, &attnum);
	statsTuple = SearchSysCache3(STATRELATTINH, ObjectIdGetDatum(relid),
								 Int16GetDatum(attnum), BoolGetDatum(false));
	if (!HeapTupleIsValid(statsTuple))
		return -1;
	stats = (Form_pg_statistic) GETSTRUCT(statsTuple);
	ndistinct = stats->stadistinct;
	if (ndistinct < 0)
		ndistinct = -ndistinct * heapTuples;
	if (ndistinct >= 1)
		result = (1.0 - stats->stanullfrac) / ndistinct;
	ReleaseSysCache(statsTuple);
	return result;
}

/*
 * May the current user see the statistics of the index's table (the
 * planner's own rule: SELECT on the table or on all the columns)?
 */
static bool
BloomCanSeeStatistics(Relation index, const int *cols, int ncols)
{
	Oid			relid = index->rd_index->indrelid;
	int			i;

	if (pg_class_aclcheck(relid, GetUserId(), ACL_SELECT) == ACLCHECK_OK)
		return true;
	for (i = 0; i < ncols; i++)
	{
		AttrNumber	attnum = index->rd_index->indkey.values[cols[i]];

		if (attnum == 0 ||
			pg_attribute_aclcheck(relid, attnum, GetUserId(), ACL_SELECT) != ACLCHECK_OK)
			return false;
	}
	return true;
}

/*
 * bloomidx_estimate(index regclass, columns text[]): what the cost model
 * expects of an equality on a typical value of each of the given columns:
 * the false-positive rate (of a row matching none of them), the rows the
 * index lets through without matching, the rows that match (from the
 * table's statistics; NULL without them), the candidates (both), with the
 * fill it assumes and the pages a scan reads.  The values are unknown, as
 * in a generic plan; the frequent values of the columns are known.
 */
Datum
bloomidx_estimate(PG_FUNCTION_ARGS)
{
	Oid			indexoid = PG_GETARG_OID(0);
	ArrayType  *columns = PG_GETARG_ARRAYTYPE_P(1);
	Relation	index;
	Relation	heap;
	BloomState	state;
	BloomRowModel model;
	BloomCostQuery query;
	BloomCostResult est;
	TupleDesc	tupdesc;
	Datum	   *names;
	bool	   *nulls;
	int			nnames;
	int		   *cols;
	double		reltuples;
	double		heapTuples;
	double		fill;
	double		trueFraction = 1.0;
	bool		haveStats;
	Datum		values[6];
	bool		isnull[6] = {false, false, false, false, false, false};
	int			i;

	if (get_call_result_type(fcinfo, NULL, &tupdesc) != TYPEFUNC_COMPOSITE)
		elog(ERROR, "return type must be a row type");

	index = relation_open(indexoid, AccessShareLock);
	BloomCheckIndexRelation(index);
	state = BloomGetState(index);

	deconstruct_array(columns, TEXTOID, -1, false, TYPALIGN_INT,
					  &names, &nulls, &nnames);
	if (nnames == 0)
		ereport(ERROR,
				(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
				 errmsg("columns must name at least one column of the index")));
	cols = palloc(sizeof(int) * nnames);
	for (i = 0; i < nnames; i++)
	{
		char	   *name;
		int			col;
		int			j;

		if (nulls[i])
			ereport(ERROR,
					(errcode(ERRCODE_NULL_VALUE_NOT_ALLOWED),
					 errmsg("column names must not be null")));
		name = TextDatumGetCString(names[i]);
		for (col = 0; col < state->shape.nColumns; col++)
		{
			if (strcmp(NameStr(TupleDescAttr(RelationGetDescr(index), col)->attname),
					   name) == 0)
				break;
		}
		if (col >= state->shape.nColumns)
			ereport(ERROR,
					(errcode(ERRCODE_UNDEFINED_COLUMN),
					 errmsg("index \"%s\" has no column \"%s\"",
							RelationGetRelationName(index), name),
					 errhint("Use the index's column names, as \\d shows them.")));
		for (j = 0; j < i; j++)
			if (cols[j] == col)
				ereport(ERROR,
						(errcode(ERRCODE_DUPLICATE_COLUMN),
						 errmsg("column \"%s\" is listed more than once", name)));
		cols[i] = col;
	}

	reltuples = Max(index->rd_rel->reltuples, 0);
	heap = relation_open(index->rd_index->indrelid, AccessShareLock);
	heapTuples = heap->rd_rel->reltuples >= 0 ? heap->rd_rel->reltuples : reltuples;
	relation_close(heap, AccessShareLock);

	/* One equality on an unknown, typical value per column */
	haveStats = BloomCanSeeStatistics(index, cols, nnames);
	memset(&query, 0, sizeof(query));
	if (haveStats)
	{
		query.frequent = palloc0(sizeof(BloomFrequentValues) * state->shape.nColumns);
		for (i = 0; i < state->shape.nColumns; i++)
			BloomGetFrequentValues(index, state, i, &query.frequent[i]);
	}
	query.nclauses = Min(nnames, 32);
	query.clauses = palloc0(sizeof(BloomCostClause) * query.nclauses);
	for (i = 0; i < query.nclauses; i++)
	{
		double		sel = haveStats ?
			BloomTypicalSelectivity(index, cols[i], heapTuples) : -1;

		if (sel < 0)
			haveStats = false;
		query.clauses[i].col = cols[i];
		query.clauses[i].nunknown = 1;
		query.clauses[i].selectivity = Max(sel, 0);
		trueFraction *= Max(sel, 0);
	}

	fill = BloomIndexFill(index, &state->shape);
	BloomRowModelInit(&model, &state->shape, fill);
	BloomEstimateQuery(&state->shape, &model, &query, &est);

	values[0] = Float8GetDatum(est.falsePositiveRate);
	values[1] = Float8GetDatum(est.falsePositives * reltuples);
	if (haveStats)
	{
		values[2] = Float8GetDatum(trueFraction * reltuples);
		values[3] = Float8GetDatum((trueFraction + est.falsePositives) * reltuples);
	}
	else
		isnull[2] = isnull[3] = true;
	values[4] = Float8GetDatum(fill);
	values[5] = Int64GetDatum(RelationGetNumberOfBlocks(index));
	relation_close(index, AccessShareLock);

	PG_RETURN_DATUM(HeapTupleGetDatum(heap_form_tuple(tupdesc, values, isnull)));
}
