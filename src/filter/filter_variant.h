/*-------------------------------------------------------------------------
 *
 * filter_variant.h
 *	  The routine table between the bloomfilter functions and the variants
 *	  a filter can be of.
 *
 * A filter's variant is the set of BLOOM_VARIANT_* flags in its header
 * (filter_format.h): none for a plain filter, else any of growing,
 * counting, blocked and keyed that the format allows together.  Each
 * variant is one file defining a BloomVariantRoutine (filter_plain.c,
 * filter_growing.c, filter_counting.c, filter_blocked.c, filter_keyed.c),
 * and one entry in the table of filter_variant.c.  BloomGetVariant there is
 * the one place that maps a filter's flags to its routines; the shared SQL
 * functions (filter_probe.c, filter_ops.c, filter_agg.c) go through it and
 * the functions of filter_variant.c, and never test the flags themselves
 * nor call a variant's file.  The SQL functions that exist for one variant
 * only are in that variant's file: the keyed forms of bloom_empty,
 * bloom_add and bloom_contains (filter_keyed.c), bloom_remove and
 * bloom_plain (filter_counting.c), bloom_fold (filter_plain.c), and the
 * transition of bloom_agg into a growing filter (filter_growing.c).
 *
 * A variant's routines call only what lies below the table (filter_core.c,
 * signature.h); what they need of the other variants of a filter (a
 * growing filter's cells are plain or blocked) comes as the filter's
 * composed routines, passed in.  A variant's SQL functions may call the
 * shared ones (filter_probe.c, filter_agg.c) and the table's.
 *
 * Copyright (c) 2026, bloomidx contributors
 *
 * IDENTIFICATION
 *	  src/filter/filter_variant.h
 *
 *-------------------------------------------------------------------------
 */
#ifndef BLOOMIDX_FILTER_VARIANT_H
#define BLOOMIDX_FILTER_VARIANT_H

#include "filter.h"

/* What the options of bloom_empty and bloom_agg ask of a new filter */
typedef struct BloomVariantOptions
{
	int32		growth;			/* growth factor of a growing filter, or 0 */
	bool		counting;		/* 4-bit counters */
	bool		blocked;		/* one 512-bit block a value */
	const BloomSecret *secret;	/* the secret of a keyed filter, or NULL */
} BloomVariantOptions;

/*
 * The routines of a variant.  Entries a variant does not change are NULL
 * (or 0), as the comments say; the plain variant has every entry of the
 * cells.
 *
 * BloomGetVariant composes the routines of a filter's flags into one
 * BloomVariantRoutine: its name is theirs, modifiers (keyed) first, and
 * each other entry is that of the last variant of the flags in the table
 * that has it, else the plain variant's; remove and toplain are taken only
 * from a variant that is the filter's only one.  The entries that check
 * and set up headers (chosen, checkflags, initheader, checkcombine) are
 * called for every variant of the flags by filter_variant.c, and are NULL
 * in a composed routine.
 */
typedef struct BloomVariantRoutine
{
	const char *name;			/* for messages and bloom_info */
	uint16		flag;			/* its BLOOM_VARIANT_* flag, 0 for plain */
	bool		modifier;		/* named before the others (keyed) */

	/*
	 * Header encode, for a new filter: whether the options ask for the
	 * variant (erroring out on an option out of range); a check of the
	 * flags chosen with it; its part of the header, once the fixed header
	 * and the flags are set.
	 */
	bool		(*chosen) (const BloomVariantOptions *opts);
	void		(*checkflags) (uint16 flags);
	void		(*initheader) (BloomFilterHeader *hdr,
							   const BloomVariantOptions *opts);

	/*
	 * Header decode: the target rate of layer i of a filter (the plain
	 * variant: its target rate); a check that the headers of two filters of
	 * the same flags agree on the variant's part, so that they combine.
	 */
	double		(*layerrate) (const BloomFilterHeader *hdr, int i);
	void		(*checkcombine) (const BloomFilterHeader *a,
								 const BloomFilterHeader *b, bool intersect);

	/*
	 * Sizing of a layer: bits a cell, the multiple its number of cells is
	 * of, and the bits per value and positions a value for rate fpr
	 * (erroring out on a rate the variant cannot reach).
	 */
	int			cellbits;
	uint64		blockbits;
	void		(*bitspervalue) (double fpr, double *per_value, int *nhashes);

	/*
	 * Add: set a value's positions in a layer; or (growing) add a value to
	 * the filter in f by the variant's own rule, v being the filter's
	 * composed routines, and return the filter (see BloomFilterAddHash).
	 * remove (counting only) takes a value out of a layer.
	 */
	void		(*set) (uint8 *cells, const BloomFilterLayer *layer, uint64 hash);
	bytea	   *(*add) (MemoryContext cxt, BloomFilterData *f,
						const struct BloomVariantRoutine *v, uint64 hash);
	void		(*remove) (uint8 *cells, const BloomFilterLayer *layer,
						   uint64 hash);

	/*
	 * Test: is a value in a layer; and for a batch, the values todo[0 ..
	 * ntodo - 1] of hashes, setting found[] of those in the layer and
	 * returning how many are left in todo.
	 */
	bool		(*test) (const uint8 *cells, const BloomFilterLayer *layer,
						 uint64 hash);
	int			(*testbatch) (const uint8 *cells, const BloomFilterLayer *layer,
							  const uint64 *hashes, int *todo, int ntodo,
							  bool *found);

	/*
	 * Combine: the cells of src into dst, of nbytes each, by union or
	 * intersection; toplain sets in bits (all clear) the bits of a plain
	 * filter with the same answers as a layer.
	 */
	void		(*combine) (uint8 *dst, const uint8 *src, size_t nbytes,
							bool intersect);
	void		(*toplain) (const uint8 *cells, const BloomFilterLayer *layer,
							uint8 *bits);

	/*
	 * Stats: cells set in a layer; expected false-positive rate of a layer
	 * with nset cells set that holds about nvalues values.
	 */
	uint64		(*countset) (const uint8 *cells, size_t nbytes);
	double		(*rate) (const BloomFilterLayer *layer, uint64 nset,
						 double nvalues);

	/*
	 * Secrets (keyed only): derive a secret from its 16 bytes; error out
	 * unless the secret given (NULL: none) is the filter's; key the
	 * hashes[0 .. n - 1] of values in place, a batch at a time.
	 */
	void		(*makesecret) (bytea *bytes, BloomSecret *secret);
	void		(*checksecret) (const BloomFilterHeader *hdr, const BloomSecret *secret);
	void		(*secrethashes) (const BloomSecret *secret, uint64 *hashes, int n);
} BloomVariantRoutine;

/* What bloom_info and bloom_cardinality report of a filter */
typedef struct BloomFilterStatsData
{
	uint64		ncells;			/* bits (counters) of all layers */
	uint64		nset;			/* those set (nonzero) */
	double		cardinality;	/* estimated distinct values added */
	double		fpr;			/* expected false-positive rate */
} BloomFilterStatsData;

/* filter_variant.c */
extern const BloomVariantRoutine *BloomGetVariant(uint16 flags);
extern const char *BloomVariantName(uint16 flags);
extern void BloomHeaderInitVariant(BloomFilterHeader *hdr, int64 capacity,
								   double fpr, const BloomVariantOptions *opts);
extern bool BloomFilterTestHash(const BloomFilterData *f, uint64 hash);
extern void BloomFilterTestHashes(const BloomFilterData *f,
								  const uint64 *hashes, int n, bool *found);
extern bytea *BloomFilterAddHash(MemoryContext cxt, BloomFilterData *f, uint64 hash);
extern bool BloomVariantCanRemove(uint16 flags);
extern void BloomFilterRemoveHash(BloomFilterData *f, uint64 hash);
extern void BloomFilterStats(const BloomFilterData *f, BloomFilterStatsData *st);
extern bytea *BloomCombineInto(MemoryContext cxt, bytea *a, bytea *b, bool intersect);
extern void BloomChooseSize(int64 capacity, double fpr, uint64 *nbits, int *nhashes);
extern void BloomSecretFromBytea(bytea *bytes, BloomSecret *secret);
extern void BloomCheckSecret(const BloomFilterHeader *hdr, const BloomSecret *secret);
extern void BloomFilterSecretHashes(const BloomFilterHeader *hdr, const BloomSecret *secret,
									uint64 *hashes, int n);

/* Shared SQL helpers that the variants' SQL functions call */

/* filter_agg.c */
extern Datum BloomAggAddValue(FunctionCallInfo fcinfo,
							  bytea *(*make) (FunctionCallInfo, BloomFnCache *),
							  bool keyed);

/* filter_probe.c: what the array forms of bloom_contains compute */
typedef enum BloomArrayProbe
{
	BLOOM_PROBE_EACH,
	BLOOM_PROBE_ANY,
	BLOOM_PROBE_ALL
} BloomArrayProbe;

extern Datum BloomContainsArray(FunctionCallInfo fcinfo, BloomArrayProbe mode,
								const BloomSecret *secret);

/* filter_plain.c, filter_growing.c, filter_counting.c, filter_blocked.c, filter_keyed.c */
extern const BloomVariantRoutine BloomPlainVariant;
extern const BloomVariantRoutine BloomGrowingVariant;
extern const BloomVariantRoutine BloomCountingVariant;
extern const BloomVariantRoutine BloomBlockedVariant;
extern const BloomVariantRoutine BloomKeyedVariant;

/* filter_plain.c */
extern void BloomPlainBitsPerValue(double fpr, double *per_value, int *nhashes);

#endif							/* BLOOMIDX_FILTER_VARIANT_H */
