/*-------------------------------------------------------------------------
 *
 * fpmodel.h
 *	  The false-positive model of bloomidx's cost estimates: which rows of
 *	  an index pass the signature test of a query without matching it.
 *
 * The model knows nothing of relations, catalogs or the planner: cost.c
 * describes an index (BloomModelShape, its fill) and a query (its clauses'
 * bits, the frequent values of the columns) and asks fpmodel.c.  It is
 * built and tested outside the server as well (model/run.sh).
 *
 * Copyright (c) 2026, bloomidx contributors
 *
 * IDENTIFICATION
 *	  src/core/fpmodel.h
 *
 *-------------------------------------------------------------------------
 */
#ifndef BLOOMIDX_FPMODEL_H
#define BLOOMIDX_FPMODEL_H

/*
 * Clauses of one query the model considers: sets of clauses are bitmasks
 * of a uint32.  The planner's further clauses on the index are costed as
 * evaluated but left out of the false positives.
 */
#define BLOOM_MODEL_MAX_CLAUSES		32

/*
 * A column's values (or NULL) held by at least this fraction of the rows
 * have their bits modelled exactly, up to BLOOM_MODEL_MAX_FREQUENT per
 * column.
 */
#define BLOOM_MODEL_FREQUENT_MIN	0.01
#define BLOOM_MODEL_MAX_FREQUENT	16

/*
 * Bits a query value tests, at most: more probes set no new bit of any
 * signature (BLOOMIDX_MAX_LENGTH, 4096 bits: 2^24 uniform probes leave
 * one unset with probability below 4096 e^-4096), so a larger count is
 * modelled as this one.  32 columns of it still fit an int.
 */
#define BLOOM_MODEL_MAX_QUERY_BITS	(1 << 24)

/* Occupancy distributions a signature model keeps (see BloomGetOccupancy) */
#define BLOOM_MODEL_OCCUPANCY_CACHE	32

/*
 * What the model needs of an index's shape: m bits in sigWords 64-bit
 * words, and the number of bits k each column sets.
 */
typedef struct BloomModelShape
{
	int			sigBits;		/* m */
	int			sigWords;
	int			nColumns;
	const int  *bitsPerColumn;	/* k of each column, nColumns entries */
} BloomModelShape;

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
typedef struct BloomSignatureModel
{
	int			sigBits;		/* m */
	int			sigWords;
	double		fill;			/* measured fraction of bits set */
	double		throwsPerBit;	/* random settings reproducing the fill */
	int			nocc;
	BloomOccupancy occ[BLOOM_MODEL_OCCUPANCY_CACHE];
} BloomSignatureModel;

/*
 * The frequent values of one index column: their bits and how many rows
 * hold them.
 */
typedef struct BloomFrequentValues
{
	int			nvalues;		/* at most BLOOM_MODEL_MAX_FREQUENT */
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
	double		correlation;	/* of the column's values with the rows'
								 * physical order (pg_stats), 0 if unknown */
} BloomCostClause;

/*
 * A query: its clauses, the frequent values of the index's columns, and
 * whether it can match anything at all.
 */
typedef struct BloomCostQuery
{
	int			nclauses;		/* at most BLOOM_MODEL_MAX_CLAUSES */
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

extern void BloomSignatureModelInit(BloomSignatureModel *model,
									const BloomModelShape *shape,
									double fill);
extern void BloomEstimateQuery(const BloomModelShape *shape,
							   BloomSignatureModel *model,
							   const BloomCostQuery *query,
							   BloomCostResult *result);
extern double BloomModelEqualityFpr(const BloomModelShape *shape, double fill,
									int ncols, const int *cols);
extern double BloomQuerySlices(const BloomModelShape *shape,
							   const BloomCostQuery *query);

/* The model's parts, for its tests */
extern BloomOccupancy *BloomGetOccupancy(BloomSignatureModel *model,
										 double throws);
extern double BloomCoverProbability(BloomSignatureModel *model,
									BloomOccupancy *occ, int q);
extern const double *BloomProbeDistinct(int m, int k);

#endif							/* BLOOMIDX_FPMODEL_H */
