/*-------------------------------------------------------------------------
 *
 * fpmodel.c
 *	  The false-positive model of bloomidx's cost estimates.
 *
 * For a query on an index of a given shape and fill, the model predicts
 * the fraction of the index's rows that pass the signature test without
 * matching every clause (cost.c turns it into the scan's selectivity and
 * cost).  It uses no server state beyond palloc and CHECK_FOR_INTERRUPTS,
 * so that model/run.sh can build and test it outside the server.
 *
 * It is worked out from the bits the query actually tests:
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
 * Copyright (c) 2026, bloomidx contributors
 *
 * IDENTIFICATION
 *	  src/core/fpmodel.c
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include <math.h>

#include "miscadmin.h"
#include "port/pg_bitutils.h"
#include "utils/memutils.h"

#include "fpmodel.h"
#include "signature.h"

/*
 * Distinct-bit distributions of the probe sequence: pseudo-random values
 * run through it (at most BLOOM_PROBE_WORK probes, at least
 * BLOOM_PROBE_MIN_SAMPLES values), kept for a few shapes.
 */
#define BLOOM_PROBE_SAMPLES		65536
#define BLOOM_PROBE_MIN_SAMPLES	4096
#define BLOOM_PROBE_WORK		(1 << 22)
#define BLOOM_PROBE_CACHE_SIZE	64

/*
 * Clauses whose selectivity is at least this are split into the rows that
 * match them and the rows that do not (at most BLOOM_COST_MAX_SPLIT of
 * them, the least selective first); below it, a matching row is too rare
 * to change the count of false positives.
 */
#define BLOOM_COST_SPLIT_MIN_SEL	1e-4
#define BLOOM_COST_MAX_SPLIT		6

/*
 * The combinations of frequent values a row can hold are kept while at
 * least BLOOM_COST_MIN_STATE_PROB likely, up to BLOOM_COST_MAX_STATES (the
 * rest count as rows holding other values).
 */
#define BLOOM_COST_MIN_STATE_PROB	1e-6
#define BLOOM_COST_MAX_STATES		256

/* Occupancy model only for signatures at most this long; else fill^q */
#define BLOOM_COST_OCCUPANCY_MAX_BITS	1024
#define BLOOM_COST_OCCUPANCY_MAX_WORK	(1 << 22)

/* The fill is kept this far from 0 and 1, where the model degenerates */
#define BLOOM_MODEL_FILL_EPSILON	1e-9

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
 * Set up the signature model of an index of this shape and measured fill: the
 * number of random settings of one bit that, over all the index's columns,
 * gives that fill (throws = log(1 - fill) / log(1 - 1/m)).
 */
void
BloomSignatureModelInit(BloomSignatureModel *model, const BloomModelShape *shape,
						double fill)
{
	int			m = shape->sigBits;
	int			totalBits = 0;
	int			i;

	for (i = 0; i < shape->nColumns; i++)
		totalBits += shape->bitsPerColumn[i];
	model->sigBits = m;
	model->sigWords = shape->sigWords;
	model->fill = Min(Max(fill, BLOOM_MODEL_FILL_EPSILON),
					  1.0 - BLOOM_MODEL_FILL_EPSILON);
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
BloomOccupancy *
BloomGetOccupancy(BloomSignatureModel *model, double throws)
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
	if (model->nocc == BLOOM_MODEL_OCCUPANCY_CACHE)
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
double
BloomCoverProbability(BloomSignatureModel *model, BloomOccupancy *occ, int q)
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
const double *
BloomProbeDistinct(int m, int k)
{
	static struct
	{
		int			m;
		int			k;
		double	   *p;
	}			cache[BLOOM_PROBE_CACHE_SIZE];
	static int	next = 0;
	int			dmax = Max(Min(k, m), 0);
	int			nsamples;
	uint64	   *mask;
	double	   *p;
	double	   *kept;
	int			nwords = (m + 63) / 64;
	int			i;

	for (i = 0; i < BLOOM_PROBE_CACHE_SIZE; i++)
		if (cache[i].p != NULL && cache[i].m == m && cache[i].k == k)
			return cache[i].p;

	nsamples = Min(BLOOM_PROBE_SAMPLES, Max(BLOOM_PROBE_MIN_SAMPLES, BLOOM_PROBE_WORK / Max(k, 1)));
	p = palloc0(sizeof(double) * (dmax + 1));
	mask = palloc(sizeof(uint64) * nwords);
	for (i = 0; i < nsamples; i++)
	{
		BloomProbe	probe;
		int			d = 0;
		int			j;

		CHECK_FOR_INTERRUPTS();
		memset(mask, 0, sizeof(uint64) * nwords);
		BloomProbeInit(&probe, BloomSampleHash(i), 0, m);

		/*
		 * The probes of BloomSetMaskBits, counting the bits they set; once
		 * all m are set the rest change nothing, so a value of millions of
		 * probes costs what filling the signature does (about m ln m).
		 */
		for (j = 0; j < k && d < m; j++)
		{
			uint64		pos = BloomProbeNext(&probe);
			uint64		bit = UINT64CONST(1) << (pos & 63);

			if ((mask[pos >> 6] & bit) == 0)
			{
				mask[pos >> 6] |= bit;
				d++;
			}
		}
		p[Min(d, dmax)] += 1.0 / nsamples;
	}
	pfree(mask);

	/* Kept for the backend's life once complete (not if cancelled above) */
	kept = MemoryContextAllocZero(TopMemoryContext, sizeof(double) * (dmax + 1));
	memcpy(kept, p, sizeof(double) * (dmax + 1));
	pfree(p);

	if (cache[next].p != NULL)
		pfree(cache[next].p);
	cache[next].m = m;
	cache[next].k = k;
	cache[next].p = kept;
	next = (next + 1) % BLOOM_PROBE_CACHE_SIZE;
	return kept;
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
BloomRowStates(const BloomModelShape *shape, const BloomCostQuery *query,
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
		double		freqs[BLOOM_MODEL_MAX_FREQUENT];
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
BloomStatePassProbability(const BloomModelShape *shape, BloomSignatureModel *model,
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
BloomPassProbability(const BloomModelShape *shape, BloomSignatureModel *model,
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
void
BloomEstimateQuery(const BloomModelShape *shape, BloomSignatureModel *model,
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
 * Slices a sliced-layout scan reads per stripe for the query: the bits of
 * each value it tests (k for a value unknown at plan time), every element
 * of an "= ANY" counted (each is ANDed on its own).
 */
double
BloomQuerySlices(const BloomModelShape *shape, const BloomCostQuery *query)
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
 * False-positive rate the model expects of an equality on each of ncols
 * columns (cols[], 0-based) of an index of this shape and fill, for values
 * not known in advance and columns without frequent values.
 */
double
BloomModelEqualityFpr(const BloomModelShape *shape, double fill, int ncols,
					  const int *cols)
{
	BloomSignatureModel model;
	BloomCostQuery query;
	BloomCostResult est;
	int			i;

	memset(&query, 0, sizeof(query));
	query.nclauses = Min(ncols, BLOOM_MODEL_MAX_CLAUSES);
	query.clauses = palloc0(sizeof(BloomCostClause) * Max(query.nclauses, 1));
	for (i = 0; i < query.nclauses; i++)
	{
		query.clauses[i].col = cols[i];
		query.clauses[i].nunknown = 1;
	}
	BloomSignatureModelInit(&model, shape, fill);
	BloomEstimateQuery(shape, &model, &query, &est);
	pfree(query.clauses);
	return est.falsePositiveRate;
}
