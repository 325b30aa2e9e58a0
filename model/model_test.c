/*-------------------------------------------------------------------------
 *
 * model_test.c
 *	  Tests of the false-positive model (src/core/fpmodel.c), built and run
 *	  outside the server.
 *
 * The model's premise is that a row's signature holds the bits of its
 * frequent values plus T bit positions drawn uniformly at random, T set by
 * the measured fill.  Under that premise the probabilities it computes are
 * checked against exact combinatorics: the occupancy of T throws by
 * enumerating all m^T outcomes for small m and T, the chance that given
 * bits are covered by inclusion-exclusion, and whole queries (equalities,
 * AND, frequent values, IS NULL, the split of rows by matched clauses) by
 * summing over the values a row may hold.  "= ANY" is approximated (its
 * elements taken as independent) and is checked against the exact union
 * within a stated tolerance.  Then the model is compared with signatures
 * made by the real probe code of signature.h (Monte Carlo, fixed seed),
 * and invariants are checked over a grid of shapes: rates in [0, 1],
 * monotone in the fill, in k, in the clauses and in the elements of an
 * array.
 *
 * Prints one line per check, "ok N - ..." or "not ok N - ...", and last
 * "model: N checks, N passed, N failed"; exits non-zero if a check failed.
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "fpmodel.h"
#include "signature.h"

/* use the C library's printf family, not libpgport's, which is not linked */
#undef printf
#undef fprintf
#undef vprintf
#undef snprintf

static int	nchecks;
static int	nfailed;

/*
 * Record one check; print its outcome and, when it failed, why.
 */
static bool
Check(bool ok, const char *detail, const char *fmt,...)
{
	va_list		args;

	nchecks++;
	printf("%s %d - ", ok ? "ok" : "not ok", nchecks);
	va_start(args, fmt);
	vprintf(fmt, args);
	va_end(args);
	printf("\n");
	if (!ok)
	{
		nfailed++;
		if (detail != NULL && detail[0] != '\0')
			printf("#   %s\n", detail);
	}
	return ok;
}

/* Worst absolute and relative differences seen by Close() since reset */
static char why[512];

/*
 * Is got within abs_tol or rel_tol (relative) of want?  Keeps the first
 * disagreement in why.
 */
static bool
Close(double got, double want, double abs_tol, double rel_tol, const char *what)
{
	double		diff = fabs(got - want);

	if (isnan(got) || diff > abs_tol + rel_tol * fabs(want))
	{
		if (why[0] == '\0')
			snprintf(why, sizeof(why), "%s: got %.17g, want %.17g", what, got, want);
		return false;
	}
	return true;
}

/* ---- exact combinatorics, independent of the model's code ---- */

/*
 * Probability that T uniform throws into m bits cover q given bits, by
 * inclusion-exclusion: sum over i of (-1)^i C(q, i) (1 - i/m)^T.
 */
static double
ExactCover(int m, double T, int q)
{
	long double sum = 0;
	long double binom = 1;
	int			i;

	for (i = 0; i <= q; i++)
	{
		long double term = binom * powl(1.0L - (long double) i / m, T);

		sum += (i % 2) ? -term : term;
		binom = binom * (q - i) / (i + 1);
	}
	return (double) sum;
}

/*
 * Enumerate all m^T outcomes of T throws into m bits (m <= 64): histogram
 * of the number of bits set, hist[0..m], and for each q the fraction of
 * outcomes covering bits 0..q-1, cover[0..m].
 */
static void
EnumerateThrows(int m, int T, double *hist, double *cover)
{
	int			pos[16];
	long long	total = 0;
	long long  *covered = calloc(m + 1, sizeof(long long));
	long long  *count = calloc(m + 1, sizeof(long long));
	int			i;

	memset(pos, 0, sizeof(pos));
	for (;;)
	{
		uint64		bits = 0;
		int			q;

		for (i = 0; i < T; i++)
			bits |= UINT64CONST(1) << pos[i];
		count[__builtin_popcountll(bits)]++;
		/* bits 0..q-1 all set: q up to the first unset bit */
		for (q = 0; q <= m; q++)
		{
			covered[q]++;
			if (q == m || !(bits & (UINT64CONST(1) << q)))
				break;
		}
		total++;
		for (i = 0; i < T; i++)
		{
			if (++pos[i] < m)
				break;
			pos[i] = 0;
		}
		if (i == T)
			break;
	}
	for (i = 0; i <= m; i++)
	{
		hist[i] = (double) count[i] / total;
		cover[i] = (double) covered[i] / total;
	}
	free(covered);
	free(count);
}

/*
 * Probability that k independent uniform probes into m bits hit exactly d
 * distinct bits: C(m, d) d! S(k, d) / m^k, by a recurrence on probes.
 */
static void
UniformDistinct(int m, int k, double *p)
{
	int			t,
				d;

	memset(p, 0, sizeof(double) * (k + 1));
	p[0] = 1;
	for (t = 0; t < k; t++)
		for (d = Min(t + 1, m); d >= 0; d--)
			p[d] = p[d] * d / m + (d > 0 ? p[d - 1] * (m - d + 1) / m : 0);
}

/* ---- helpers to describe shapes and queries ---- */

/* A deterministic 64-bit generator (splitmix64) */
static uint64 rng_state;

static uint64
Rand64(void)
{
	rng_state += UINT64CONST(0x9e3779b97f4a7c15);
	return BloomMix64(rng_state);
}

static int
MaskBits(const uint64 *mask, int nwords)
{
	int			n = 0;
	int			w;

	for (w = 0; w < nwords; w++)
		n += __builtin_popcountll(mask[w]);
	return n;
}

/* Bits of the union of masks a and b (or of a alone if b is NULL), minus c */
static int
UnionBits(const uint64 *a, const uint64 *b, const uint64 *minus, int nwords)
{
	int			n = 0;
	int			w;

	for (w = 0; w < nwords; w++)
	{
		uint64		x = a[w] | (b ? b[w] : 0);

		if (minus)
			x &= ~minus[w];
		n += __builtin_popcountll(x);
	}
	return n;
}

/* A mask with the given bit positions set (a list ending with -1) */
static uint64 *
MaskOf(int nwords, const int *positions)
{
	uint64	   *mask = calloc(nwords, sizeof(uint64));
	int			i;

	for (i = 0; positions[i] >= 0; i++)
		mask[positions[i] >> 6] |= UINT64CONST(1) << (positions[i] & 63);
	return mask;
}

/* The mask of a value's bits in column col, by the index's probe code */
static uint64 *
ValueMask(const BloomModelShape *shape, int col, uint64 hash)
{
	uint64	   *mask = calloc(shape->sigWords, sizeof(uint64));

	BloomSetMaskBits(mask, shape->sigBits, hash, col, shape->bitsPerColumn[col]);
	return mask;
}

static BloomModelShape
Shape(int m, int ncols, const int *k)
{
	BloomModelShape shape;

	shape.sigBits = m;
	shape.sigWords = (m + 63) / 64;
	shape.nColumns = ncols;
	shape.bitsPerColumn = k;
	return shape;
}

/* The fill at which the model's rows hold exactly T random throws */
static double
FillForThrows(int m, double T)
{
	return -expm1(T * log1p(-1.0 / m));
}

static int
TotalBits(const BloomModelShape *shape)
{
	int			t = 0;
	int			i;

	for (i = 0; i < shape->nColumns; i++)
		t += shape->bitsPerColumn[i];
	return t;
}

/* An equality on col with a known value */
static BloomCostClause
Known(int col, uint64 *mask, double selectivity)
{
	BloomCostClause c;

	memset(&c, 0, sizeof(c));
	c.col = col;
	c.nknown = 1;
	c.masks = mask;
	c.selectivity = selectivity;
	return c;
}

/* An equality on col with a value unknown at plan time */
static BloomCostClause
Unknown(int col, double selectivity)
{
	BloomCostClause c;

	memset(&c, 0, sizeof(c));
	c.col = col;
	c.nunknown = 1;
	c.selectivity = selectivity;
	return c;
}

/* "col = ANY" of n known values (masks: n masks of nwords words) */
static BloomCostClause
AnyKnown(int col, uint64 *masks, int n, double selectivity)
{
	BloomCostClause c;

	memset(&c, 0, sizeof(c));
	c.col = col;
	c.isArray = true;
	c.nknown = n;
	c.masks = masks;
	c.knownWeight = 1;
	c.selectivity = selectivity;
	return c;
}

/* "col = ANY" of n values unknown at plan time */
static BloomCostClause
AnyUnknown(int col, double n)
{
	BloomCostClause c;

	memset(&c, 0, sizeof(c));
	c.col = col;
	c.isArray = true;
	c.nunknown = n;
	return c;
}

/* Run the model on a query at a fill */
static BloomCostResult
Estimate(const BloomModelShape *shape, double fill, BloomCostClause *clauses,
		 int nclauses, BloomFrequentValues *frequent)
{
	BloomSignatureModel model;
	BloomCostQuery query;
	BloomCostResult result;

	memset(&query, 0, sizeof(query));
	query.nclauses = nclauses;
	query.clauses = clauses;
	query.frequent = frequent;
	BloomSignatureModelInit(&model, shape, fill);
	BloomEstimateQuery(shape, &model, &query, &result);
	return result;
}

/* Concatenate masks into one array of n masks */
static uint64 *
Masks(int nwords, int n, uint64 **list)
{
	uint64	   *all = calloc((size_t) n * nwords, sizeof(uint64));
	int			i;

	for (i = 0; i < n; i++)
		memcpy(all + (size_t) i * nwords, list[i], sizeof(uint64) * nwords);
	return all;
}

/* ---- the checks ---- */

/*
 * The occupancy distribution and the cover probabilities of T throws, for
 * small shapes, equal the enumeration of all m^T outcomes.
 */
static void
TestOccupancy(void)
{
	static const struct
	{
		int			m;
		int			T;
	}			cases[] = {{16, 1}, {16, 4}, {16, 6}, {20, 5}, {32, 4}, {64, 3}};
	int			i;

	for (i = 0; i < lengthof(cases); i++)
	{
		int			m = cases[i].m;
		int			T = cases[i].T;
		int			k[1] = {T};
		BloomModelShape shape = Shape(m, 1, k);
		BloomSignatureModel model;
		BloomOccupancy *occ;
		double	   *hist = calloc(m + 1, sizeof(double));
		double	   *cover = calloc(m + 1, sizeof(double));
		bool		ok = true;
		bool		ie = true;
		int			j;

		EnumerateThrows(m, T, hist, cover);
		BloomSignatureModelInit(&model, &shape, FillForThrows(m, T));
		occ = BloomGetOccupancy(&model, T);

		why[0] = '\0';
		for (j = 0; j <= m; j++)
			ok &= Close(occ->p[j], hist[j], 1e-12, 0, "P(K = j)");
		Check(ok, why, "occupancy of %d throws into %d bits = enumeration of %d^%d outcomes",
			  T, m, m, T);

		why[0] = '\0';
		ok = true;
		for (j = 0; j <= Min(m, 12); j++)
			ok &= Close(BloomCoverProbability(&model, occ, j), cover[j], 1e-12, 0,
						"cover(q)");
		Check(ok, why, "P(q bits covered by %d throws into %d bits) = enumeration, q = 0..%d",
			  T, m, Min(m, 12));

		why[0] = '\0';
		for (j = 0; j <= Min(m, 12); j++)
			ie &= Close(ExactCover(m, T, j), cover[j], 1e-12, 0, "inclusion-exclusion");
		Check(ie, why, "inclusion-exclusion = enumeration (%d throws, %d bits): the reference below",
			  T, m);
		free(hist);
		free(cover);
	}
}

/*
 * Fractional throws interpolate between floor(T) and floor(T) + 1 throws;
 * beyond 1024 bits (BLOOM_COST_OCCUPANCY_MAX_BITS) the model uses fill^q,
 * close to the exact cover for long signatures.
 */
static void
TestOccupancyLimits(void)
{
	int			k[1] = {1};
	BloomModelShape shape = Shape(64, 1, k);
	BloomSignatureModel model;
	BloomOccupancy *o4;
	BloomOccupancy *o5;
	BloomOccupancy *of;
	bool		ok = true;
	int			j;

	BloomSignatureModelInit(&model, &shape, 0.3);
	o4 = BloomGetOccupancy(&model, 4);
	o5 = BloomGetOccupancy(&model, 5);
	of = BloomGetOccupancy(&model, 4.25);
	why[0] = '\0';
	for (j = 0; j <= 64; j++)
		ok &= Close(of->p[j], 0.75 * o4->p[j] + 0.25 * o5->p[j], 1e-15, 0, "blend");
	Check(ok, why, "4.25 throws: 3/4 of the distribution of 4 throws, 1/4 of 5");

	{
		int			m = 2048;
		BloomModelShape big = Shape(m, 1, k);
		double		T = log(0.5) / log1p(-1.0 / m);	/* fill 0.5 */
		BloomOccupancy *occ;

		BloomSignatureModelInit(&model, &big, 0.5);
		occ = BloomGetOccupancy(&model, T);
		ok = occ->p == NULL;
		why[0] = '\0';
		for (j = 1; j <= 8; j++)
		{
			double		got = BloomCoverProbability(&model, occ, j);
			double		want = ExactCover(m, T, j);

			ok &= got >= want && Close(got, want, 0, 0.01, "fill^q");
		}
		Check(ok, why, "2048 bits at fill 0.5: fill^q at most 1%% above the exact cover, q = 1..8");
	}
}

/*
 * Known values, no frequent values: a row holds T = sum of k random
 * throws, and an equality (or an AND) passes when its bits are covered.
 */
static void
TestKnownEqualities(void)
{
	static const int ks[3] = {2, 3, 2};
	BloomModelShape shape = Shape(16, 3, ks);
	int			T = TotalBits(&shape);
	double		fill = FillForThrows(16, T);
	static const int pa[] = {1, 5, -1};
	static const int pb[] = {5, 9, 12, -1};
	static const int pc[] = {0, 1, 2, 3, 4, 5, 6, -1};
	uint64	   *a = MaskOf(1, pa);
	uint64	   *b = MaskOf(1, pb);
	uint64	   *c = MaskOf(1, pc);
	BloomCostClause cl[2];
	BloomCostResult r;
	bool		ok;

	cl[0] = Known(0, a, 0);
	r = Estimate(&shape, fill, cl, 1, NULL);
	why[0] = '\0';
	ok = Close(r.falsePositiveRate, ExactCover(16, T, 2), 1e-12, 0, "rate");
	ok &= Close(r.falsePositives, ExactCover(16, T, 2), 1e-12, 0, "false positives");
	Check(ok, why, "equality testing 2 bits of 16, rows of %d random bits: exact", T);

	cl[0] = Known(2, c, 0);
	r = Estimate(&shape, fill, cl, 1, NULL);
	why[0] = '\0';
	Check(Close(r.falsePositiveRate, ExactCover(16, T, 7), 1e-12, 0, "rate"), why,
		  "equality testing 7 bits of 16: exact");

	cl[0] = Known(0, a, 0);
	cl[1] = Known(1, b, 0);
	r = Estimate(&shape, fill, cl, 2, NULL);
	why[0] = '\0';
	Check(Close(r.falsePositiveRate, ExactCover(16, T, UnionBits(a, b, NULL, 1)),
				1e-12, 0, "rate"), why,
		  "AND of two equalities sharing a bit: cover of their %d bits, exact",
		  UnionBits(a, b, NULL, 1));

	/* With 128 bits (two words) and a real value's mask */
	{
		static const int k2[2] = {4, 3};
		BloomModelShape s2 = Shape(128, 2, k2);
		int			T2 = 20;
		uint64	   *v = ValueMask(&s2, 0, UINT64CONST(12345));

		cl[0] = Known(0, v, 0);
		r = Estimate(&s2, FillForThrows(128, T2), cl, 1, NULL);
		why[0] = '\0';
		Check(Close(r.falsePositiveRate, ExactCover(128, T2, MaskBits(v, 2)), 1e-12, 0,
					"rate"), why,
			  "128-bit signature, fill of %d throws, a value's %d bits: exact",
			  T2, MaskBits(v, 2));
	}
}

/*
 * Frequent values: a row holds one of a column's frequent values with its
 * frequency (and that value's bits), or another value (random bits).  The
 * exact false positives sum over the combinations a row can hold.
 */
static void
TestFrequentValues(void)
{
	static const int ks[3] = {3, 2, 2};
	BloomModelShape shape = Shape(32, 3, ks);
	int			T = TotalBits(&shape);
	double		fill = FillForThrows(32, T);
	static const int pv1[] = {0, 4, 9, -1};
	static const int pv2[] = {4, 9, 20, -1};
	static const int pw1[] = {9, 30, -1};
	static const int pw2[] = {1, 2, -1};
	uint64	   *v1 = MaskOf(1, pv1);
	uint64	   *v2 = MaskOf(1, pv2);
	uint64	   *w1 = MaskOf(1, pw1);
	uint64	   *w2 = MaskOf(1, pw2);
	uint64	   *list0[2] = {v1, v2};
	uint64	   *list1[2] = {w1, w2};
	double		f0[2] = {0.5, 0.3};
	double		f1[2] = {0.4, 0.2};
	BloomFrequentValues fv[3];
	BloomCostClause cl[2];
	BloomCostResult r;
	double		want;
	double		rate;

	memset(fv, 0, sizeof(fv));
	fv[0].nvalues = 2;
	fv[0].masks = Masks(1, 2, list0);
	fv[0].freqs = f0;

	/*
	 * col0 = v1 (selectivity 0.5).  Rows not holding v1 hold v2 (0.3 of
	 * all rows) with its bits and 4 random ones, or another value: 7
	 * random bits.
	 */
	cl[0] = Known(0, v1, 0.5);
	r = Estimate(&shape, fill, cl, 1, fv);
	rate = (0.3 * ExactCover(32, 4, UnionBits(v1, NULL, v2, 1)) +
			0.2 * ExactCover(32, 7, 3)) / 0.5;
	want = 0.5 * rate;
	why[0] = '\0';
	Check(Close(r.falsePositives, want, 1e-12, 0, "false positives") &&
		  Close(r.falsePositiveRate, rate, 1e-12, 0, "rate"), why,
		  "equality on a frequent value, rows holding another frequent value: exact");

	/*
	 * col0 = v1 AND col1 = w1, both columns with frequent values: the rows
	 * are split by which clauses they match.  Sum over the 3 x 3 values a
	 * row may hold, but (v1, w1), of P(holding them) P(passing).
	 */
	fv[1].nvalues = 2;
	fv[1].masks = Masks(1, 2, list1);
	fv[1].freqs = f1;
	cl[0] = Known(0, v1, 0.5);
	cl[1] = Known(1, w1, 0.4);
	r = Estimate(&shape, fill, cl, 2, fv);
	{
		uint64		need = v1[0] | w1[0];
		uint64	   *vals0[3] = {v1, v2, NULL};
		uint64	   *vals1[3] = {w1, w2, NULL};
		double		p0[3] = {0.5, 0.3, 0.2};
		double		p1[3] = {0.4, 0.2, 0.4};
		int			i,
					j;

		want = 0;
		for (i = 0; i < 3; i++)
			for (j = 0; j < 3; j++)
			{
				uint64		fixed = (vals0[i] ? vals0[i][0] : 0) |
					(vals1[j] ? vals1[j][0] : 0);
				int			randomBits = 2 + (vals0[i] ? 0 : 3) + (vals1[j] ? 0 : 2);

				if (i == 0 && j == 0)
					continue;	/* true matches */
				want += p0[i] * p1[j] *
					ExactCover(32, randomBits, __builtin_popcountll(need & ~fixed));
			}
		why[0] = '\0';
		Check(Close(r.falsePositives, want, 1e-12, 0, "false positives"), why,
			  "AND on two columns with frequent values, rows split by the clauses they match: exact");
	}

	/*
	 * IS NULL on col0, whose NULLs (0.25 of the rows) are a frequent value
	 * with the null hash's bits, next to v1 (0.5): the other rows hold v1
	 * (its bits, 4 random ones) or another value (7 random bits).
	 */
	{
		uint64	   *nullmask = ValueMask(&shape, 0, BLOOM_NULL_HASH);
		uint64	   *list[2] = {nullmask, v1};
		double		f[2] = {0.25, 0.5};
		BloomFrequentValues fn[3];
		int			q = MaskBits(nullmask, 1);

		memset(fn, 0, sizeof(fn));
		fn[0].nvalues = 2;
		fn[0].masks = Masks(1, 2, list);
		fn[0].freqs = f;
		cl[0] = Known(0, nullmask, 0.25);
		r = Estimate(&shape, fill, cl, 1, fn);
		want = 0.5 * ExactCover(32, 4, UnionBits(nullmask, NULL, v1, 1)) +
			0.25 * ExactCover(32, 7, q);
		why[0] = '\0';
		Check(Close(r.falsePositives, want, 1e-12, 0, "false positives"), why,
			  "IS NULL with frequent NULLs: the non-null rows' cover of the null hash's %d bits, exact",
			  q);
	}
}

/*
 * Values unknown at plan time: the rate averages the cover over the
 * distribution of the distinct bits a value tests, which is measured on
 * the probe code and close to that of independent uniform probes.
 */
static void
TestUnknownValues(void)
{
	static const struct
	{
		int			m;
		int			k;
	}			cases[] = {{16, 2}, {64, 3}, {64, 8}, {100, 5}, {1024, 7}};
	int			i;

	for (i = 0; i < lengthof(cases); i++)
	{
		int			m = cases[i].m;
		int			k[2] = {cases[i].k, cases[i].k};
		BloomModelShape shape = Shape(m, 2, k);
		const double *pd = BloomProbeDistinct(m, k[0]);
		double		uniform[64];
		double		T = 2.0 * k[0];
		double		fill = FillForThrows(m, T);
		double		want = 0;
		double		sum = 0;
		double		worst = 0;
		bool		ok = true;
		BloomCostClause cl[1];
		BloomCostResult r;
		int			d;

		UniformDistinct(m, k[0], uniform);
		why[0] = '\0';
		for (d = 0; d <= k[0]; d++)
		{
			/* 65536 samples: 5 standard deviations of the sampling error */
			double		sigma = sqrt(uniform[d] * (1 - uniform[d]) / 65536);

			sum += pd[d];
			ok &= Close(pd[d], uniform[d], 5 * sigma + 1e-4, 0, "P(d distinct bits)");
			worst = Max(worst, fabs(pd[d] - uniform[d]));
			want += pd[d] * ExactCover(m, T, d);
		}
		Check(ok && fabs(sum - 1) < 1e-9, why,
			  "%d probes into %d bits: distinct bits as for independent probes (worst |diff| %.2g)",
			  k[0], m, worst);

		cl[0] = Unknown(0, 0);
		r = Estimate(&shape, fill, cl, 1, NULL);
		why[0] = '\0';
		Check(Close(r.falsePositiveRate, want, 1e-12, 1e-9, "rate"), why,
			  "unknown value, %d bits, k = %d: sum of P(d) x exact cover(d)", m, k[0]);
	}
}

/*
 * Values of very many probes (a query of millions of elements): every bit
 * of the longest signature is set, P(d = m) = 1, the same distribution
 * whatever the number of probes past that, and the model's estimate is
 * that of a query testing every bit.
 */
static void
TestSaturatedProbes(void)
{
	int			m = 4096;
	const double *pd = BloomProbeDistinct(m, 1 << 24);
	const double *pd2 = BloomProbeDistinct(m, 1 << 30);
	const double *pd3 = BloomProbeDistinct(m, 400000);
	int			k[1] = {1 << 30};
	BloomModelShape shape = Shape(m, 1, k);
	BloomCostClause cl[1];
	BloomCostResult r;

	Check(pd[m] == 1 && pd2[m] == 1 && pd3[m] == 1, "",
		  "%d, %d and %d probes into %d bits: every bit set",
		  1 << 24, 1 << 30, 400000, m);

	cl[0] = Unknown(0, 0);
	r = Estimate(&shape, 0.999, cl, 1, NULL);
	why[0] = '\0';
	/* Over 1024 bits the model takes a row's bits as independent: fill^q */
	Check(Close(r.falsePositiveRate, pow(0.999, m), 1e-12, 1e-6, "rate"),
		  why, "unknown value of 2^30 probes into %d bits at fill 0.999: fill^%d", m, m);
}

/*
 * "= ANY": with one element it is the equality; with several the model
 * takes the elements' covers as independent, between the largest element's
 * cover and their sum, and here within 15% of the exact union
 * (inclusion-exclusion over the elements).
 */
static void
TestAny(void)
{
	static const int ks[2] = {3, 3};
	BloomModelShape shape = Shape(64, 2, ks);
	int			T = 24;
	double		fill = FillForThrows(64, T);
	static const int pe[4][4] = {{1, 2, 3, -1}, {10, 20, 30, -1}, {3, 40, 50, -1}, {60, 61, -1}};
	uint64	   *e[4];
	int			n;
	BloomCostClause cl[2];
	BloomCostResult eq;
	BloomCostResult any;
	int			i;

	for (i = 0; i < 4; i++)
		e[i] = MaskOf(1, pe[i]);

	cl[0] = Known(0, e[0], 0);
	eq = Estimate(&shape, fill, cl, 1, NULL);
	cl[0] = AnyKnown(0, Masks(1, 1, e), 1, 0);
	any = Estimate(&shape, fill, cl, 1, NULL);
	Check(eq.falsePositiveRate == any.falsePositiveRate &&
		  eq.falsePositives == any.falsePositives, "",
		  "= ANY of one value = the equality on it");

	for (n = 2; n <= 4; n++)
	{
		double		exact = 0;
		double		largest = 0;
		double		sum = 0;
		int			s;
		char		detail[200];

		for (s = 1; s < (1 << n); s++)
		{
			uint64		u = 0;
			int			bits = 0;

			for (i = 0; i < n; i++)
				if (s & (1 << i))
				{
					u |= e[i][0];
					bits++;
				}
			exact += (bits % 2 ? 1 : -1) * ExactCover(64, T, __builtin_popcountll(u));
		}
		for (i = 0; i < n; i++)
		{
			double		c = ExactCover(64, T, MaskBits(e[i], 1));

			largest = Max(largest, c);
			sum += c;
		}
		cl[0] = AnyKnown(0, Masks(1, n, e), n, 0);
		any = Estimate(&shape, fill, cl, 1, NULL);
		snprintf(detail, sizeof(detail), "model %.6g, exact %.6g, bounds [%.6g, %.6g]",
				 any.falsePositiveRate, exact, largest, sum);
		Check(any.falsePositiveRate >= largest - 1e-12 &&
			  any.falsePositiveRate <= sum + 1e-12 &&
			  fabs(any.falsePositiveRate - exact) <= 0.15 * exact, detail,
			  "= ANY of %d values: within 15%% of the exact union (%s)", n, detail);
	}

	/* An array AND an equality on another column */
	{
		static const int pq[] = {2, 7, 40, -1};
		uint64	   *q = MaskOf(1, pq);
		double		exact = 0;
		int			s;

		cl[0] = Known(1, q, 0);
		cl[1] = AnyKnown(0, Masks(1, 2, e), 2, 0);
		any = Estimate(&shape, fill, cl, 2, NULL);
		for (s = 1; s < 4; s++)
		{
			uint64		u = q[0];

			if (s & 1)
				u |= e[0][0];
			if (s & 2)
				u |= e[1][0];
			exact += (s == 3 ? -1 : 1) * ExactCover(64, T, __builtin_popcountll(u));
		}
		why[0] = '\0';
		Check(Close(any.falsePositiveRate, exact, 0, 0.15, "rate"), why,
			  "equality AND = ANY of 2 values: within 15%% of exact (%.6g vs %.6g)",
			  any.falsePositiveRate, exact);
	}
}

/*
 * Queries that match nothing, and the slices a sliced scan reads.
 */
static void
TestNoMatchAndSlices(void)
{
	static const int ks[2] = {5, 4};
	BloomModelShape shape = Shape(128, 2, ks);
	BloomSignatureModel model;
	BloomCostQuery query;
	BloomCostResult r;
	BloomCostClause cl[3];
	uint64	   *a = ValueMask(&shape, 0, 42);
	uint64	   *b = ValueMask(&shape, 1, 43);
	uint64	   *ab[2];

	memset(&query, 0, sizeof(query));
	cl[0] = Known(0, a, 0.1);
	query.clauses = cl;
	query.nclauses = 1;
	query.noMatch = true;
	BloomSignatureModelInit(&model, &shape, 0.4);
	BloomEstimateQuery(&shape, &model, &query, &r);
	Check(r.falsePositives == 0 && r.falsePositiveRate == 0 && r.wordsTested == 1, "",
		  "a query that matches nothing (\"col = NULL\"): no false positives");

	ab[0] = a;
	ab[1] = b;
	cl[0] = Known(0, a, 0);
	cl[1] = AnyKnown(1, Masks(2, 2, ab), 2, 0);
	cl[1].knownWeight = 3;		/* each hashed element stands for 3 */
	cl[2] = AnyUnknown(0, 4);
	query.nclauses = 3;
	query.noMatch = false;
	Check(BloomQuerySlices(&shape, &query) ==
		  MaskBits(a, 2) + 3.0 * (MaskBits(a, 2) + MaskBits(b, 2)) + 4.0 * 5, "",
		  "slices of a sliced scan: the bits of each value tested, elements counted");
}

/*
 * The model against signatures made by the real probe code: rows of ncols
 * random values, queries of values none of them holds.
 */
static void
TestMonteCarlo(void)
{
	static const struct
	{
		int			m;
		int			ncols;
		int			k;
	}			cases[] = {{40, 4, 3}, {64, 4, 2}, {96, 6, 2}, {128, 8, 3}, {256, 16, 3}, {512, 24, 4}};
	int			i;

	for (i = 0; i < lengthof(cases); i++)
	{
		int			m = cases[i].m;
		int			ks[32];
		BloomModelShape shape;
		int			nrows = 20000;
		int			nqueries = 400;
		int			nwords = (m + 63) / 64;
		uint64	   *rows = calloc((size_t) nrows * nwords, sizeof(uint64));
		uint64		bitsSet = 0;
		long long	passed = 0;
		double		observed;
		double		predicted;
		double		sigma;
		int			col0 = 0;
		int			r,
					c,
					w;

		for (c = 0; c < cases[i].ncols; c++)
			ks[c] = cases[i].k;
		shape = Shape(m, cases[i].ncols, ks);
		rng_state = 1000 + i;
		for (r = 0; r < nrows; r++)
		{
			for (c = 0; c < shape.nColumns; c++)
				BloomSetMaskBits(rows + (size_t) r * nwords, m, Rand64(), c, ks[c]);
			bitsSet += MaskBits(rows + (size_t) r * nwords, nwords);
		}
		for (r = 0; r < nqueries; r++)
		{
			uint64	   *q = ValueMask(&shape, 0, Rand64());
			int			row;

			for (row = 0; row < nrows; row++)
			{
				const uint64 *sig = rows + (size_t) row * nwords;

				for (w = 0; w < nwords; w++)
					if ((sig[w] & q[w]) != q[w])
						break;
				passed += (w == nwords);
			}
			free(q);
		}
		observed = (double) passed / ((double) nrows * nqueries);
		predicted = BloomModelEqualityFpr(&shape, (double) bitsSet / ((double) nrows * m),
										  1, &col0);
		/* sampling error of the queries: each sees one rate of its own */
		sigma = sqrt(observed / nrows / nqueries + 1e-12);
		Check(fabs(predicted - observed) <= 0.08 * observed + 4 * sigma, "",
			  "%d bits, %d columns, k = %d, real probes: predicted %.5f, observed %.5f (within 8%% + 4 sigma)",
			  m, shape.nColumns, cases[i].k, predicted, observed);
		free(rows);
	}
}

/*
 * Invariants over a grid of shapes and fills: rates in [0, 1]; more fill,
 * more false positives; more bits per value at the same fill, fewer; more
 * equalities, fewer; more array elements, more.
 */
static void
TestInvariants(void)
{
	static const int lengths[] = {16, 40, 64, 100, 256, 1024, 2048, 4096};
	static const double fills[] = {0.001, 0.05, 0.2, 0.35, 0.5, 0.7, 0.9, 0.999};
	int			li,
				fi,
				k;
	bool		inRange = true;
	bool		fillMonotone = true;
	bool		kMonotone = true;
	bool		andMonotone = true;
	bool		anyMonotone = true;
	bool		extremes = true;
	char		detail[256] = "";

	for (li = 0; li < lengthof(lengths); li++)
	{
		int			m = lengths[li];

		for (k = 1; k <= 8; k++)
		{
			int			ks[4] = {k, k, k, k};
			BloomModelShape shape = Shape(m, 4, ks);
			double		prevFill = -1;
			double		prevAny = -1;

			for (fi = 0; fi < lengthof(fills); fi++)
			{
				BloomCostClause cl[4];
				BloomCostResult one;
				BloomCostResult two;
				BloomCostResult any;
				BloomCostResult eq;
				BloomCostResult nextk;
				int			cols[4] = {0, 1, 2, 3};
				int			ks1[4] = {k + 1, k + 1, k + 1, k + 1};
				BloomModelShape shape1 = Shape(m, 4, ks1);

				cl[0] = Unknown(0, 0);
				one = Estimate(&shape, fills[fi], cl, 1, NULL);
				cl[1] = Unknown(1, 0);
				two = Estimate(&shape, fills[fi], cl, 2, NULL);
				cl[0] = AnyUnknown(0, 5);
				any = Estimate(&shape, fills[fi], cl, 1, NULL);
				cl[0] = Unknown(0, 0);
				eq = Estimate(&shape, fills[fi], cl, 1, NULL);
				cl[0] = Unknown(0, 0);
				nextk = Estimate(&shape1, fills[fi], cl, 1, NULL);

				if (!(one.falsePositiveRate >= 0 && one.falsePositiveRate <= 1 &&
					  two.falsePositiveRate >= 0 && two.falsePositiveRate <= 1 &&
					  any.falsePositiveRate >= 0 && any.falsePositiveRate <= 1 &&
					  one.falsePositives >= 0 && one.falsePositives <= 1 &&
					  one.wordsTested >= 1))
				{
					inRange = false;
					snprintf(detail, sizeof(detail), "m %d k %d fill %g", m, k, fills[fi]);
				}
				if (one.falsePositiveRate < prevFill - 1e-12)
					fillMonotone = false;
				prevFill = one.falsePositiveRate;
				if (nextk.falsePositiveRate > one.falsePositiveRate + 1e-12)
				{
					kMonotone = false;
					snprintf(detail, sizeof(detail), "k: m %d k %d fill %g: %g > %g", m, k,
							 fills[fi], nextk.falsePositiveRate, one.falsePositiveRate);
				}
				if (two.falsePositiveRate > one.falsePositiveRate + 1e-12)
					andMonotone = false;
				if (any.falsePositiveRate < eq.falsePositiveRate - 1e-12 ||
					any.falsePositiveRate < prevAny - 1e-12)
					anyMonotone = false;
				prevAny = any.falsePositiveRate;
				if (fi == 0 && one.falsePositiveRate > 0.01)
					extremes = false;
				if (fi == lengthof(fills) - 1 && one.falsePositiveRate < 0.99 * pow(0.999, k))
					extremes = false;
				(void) cols;
			}
		}
	}
	Check(inRange, detail, "rates in [0, 1] over 8 lengths x k = 1..8 x 8 fills");
	Check(fillMonotone, "", "the rate grows with the fill");
	Check(kMonotone, detail, "at the same fill, more bits per value give a lower rate");
	Check(andMonotone, "", "an AND of two equalities passes fewer rows than one");
	Check(anyMonotone, "", "= ANY of 5 values passes more rows than one value, more with more fill");
	Check(extremes, "", "fill 0.001: rate below 1%%; fill 0.999: rate near fill^k");

	/* More array elements, more false positives; and the clause limit */
	{
		int			ks[2] = {4, 4};
		BloomModelShape shape = Shape(256, 2, ks);
		double		prev = 0;
		bool		ok = true;
		int			n;
		BloomCostClause cl[BLOOM_MODEL_MAX_CLAUSES];
		BloomCostResult r;

		for (n = 1; n <= 64; n *= 2)
		{
			cl[0] = AnyUnknown(0, n);
			r = Estimate(&shape, 0.3, cl, 1, NULL);
			ok &= r.falsePositiveRate >= prev && r.falsePositiveRate <= 1;
			prev = r.falsePositiveRate;
		}
		Check(ok, "", "= ANY of 1, 2, 4 .. 64 unknown values: the rate grows");

		for (n = 0; n < BLOOM_MODEL_MAX_CLAUSES; n++)
			cl[n] = Unknown(n % 2, 0.5);
		r = Estimate(&shape, 0.3, cl, BLOOM_MODEL_MAX_CLAUSES, NULL);
		Check(r.falsePositives >= 0 && r.falsePositives <= 1 &&
			  r.falsePositiveRate >= 0 && r.falsePositiveRate <= 1, "",
			  "%d clauses (BLOOM_MODEL_MAX_CLAUSES), all split-worthy: rates in [0, 1]",
			  BLOOM_MODEL_MAX_CLAUSES);
	}
}

int
main(int argc, char **argv)
{
	TestOccupancy();
	TestOccupancyLimits();
	TestKnownEqualities();
	TestFrequentValues();
	TestUnknownValues();
	TestSaturatedProbes();
	TestAny();
	TestNoMatchAndSlices();
	TestMonteCarlo();
	TestInvariants();

	printf("model: %d checks, %d passed, %d failed\n",
		   nchecks, nchecks - nfailed, nfailed);
	return nfailed == 0 ? 0 : 1;
}
