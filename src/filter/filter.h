/*-------------------------------------------------------------------------
 *
 * filter.h
 *	  Declarations shared by the files of the bloomfilter SQL type.
 *
 * The files, from the SQL functions down (each calls only files below it):
 * filter_io.c, filter_probe.c, filter_ops.c, filter_agg.c,
 * filter_agg_combine.c and filter_compare.c hold the SQL-callable
 * functions of every variant; filter_variant.c the table of variants, and
 * adding, testing, combining and secrets through it (filter_variant.h);
 * filter_plain.c, filter_growing.c, filter_counting.c, filter_blocked.c
 * and filter_keyed.c the variants, reached through the table, and the SQL
 * functions of one variant each, which call the shared ones;
 * filter_detoast.c how filter arguments are read; filter_core.c the
 * datum, header, sizing and checks; filter_hash.c how values are hashed.
 * The byte format is in filter_format.h.
 *
 * Copyright (c) 2026, bloomidx contributors
 *
 * IDENTIFICATION
 *	  src/filter/filter.h
 *
 *-------------------------------------------------------------------------
 */
#ifndef BLOOMIDX_FILTER_H
#define BLOOMIDX_FILTER_H

#include "fmgr.h"
#include "utils/builtins.h"
#include "utils/typcache.h"

#include "filter_format.h"
#include "compat.h"

/* Target rate of bloom_agg without a capacity */
#define BLOOM_DEFAULT_FPR		0.01

/*
 * Detoasted filters at least this large are moved so that their cells are
 * line-aligned and on huge pages (BloomRehome in filter_detoast.c)
 */
#define BLOOM_REHOME_MIN_SIZE	(4 * 1024 * 1024)
#define BLOOM_HUGE_PAGE_SIZE	(2 * 1024 * 1024)

/*
 * Bytes of a filter's cells that one pass (zeroing, copying, combining)
 * covers between interrupt checks: a 256 MB filter is 32 of them
 */
#define BLOOM_CHUNK_BYTES		(8 * 1024 * 1024)

/* Values the array forms of bloom_contains probe at once */
#define BLOOM_PROBE_BATCH		16

/* Salt of the filter type's bit positions (the index salts by column) */
#define BLOOM_FILTER_SALT		0

/* A keyed filter's secret, as SipHash-2-4 takes it, and its fingerprint */
typedef struct BloomSecret
{
	uint64		k0;
	uint64		k1;
	uint64		fingerprint;
} BloomSecret;

/* A filter datum and its decoded header */
typedef struct BloomFilterData
{
	bytea	   *datum;
	BloomFilterHeader hdr;
	uint8	   *data;			/* the byte format */
	uint8	   *bits;			/* the cells of the first layer */
} BloomFilterData;

/*
 * How values of a type hash, as far as databases differ: the same in every
 * database; by OIDs local to one, with a portable form by enum label
 * (enums, domains over them and arrays of those: hash scheme 2); or by
 * such OIDs with none (reg* types, aclitem, and any composite, range or
 * multirange containing those or an enum)
 */
typedef enum BloomTypeHashing
{
	BLOOM_HASH_PORTABLE,
	BLOOM_HASH_LABELS,
	BLOOM_HASH_OIDS
} BloomTypeHashing;

/* Hash scheme of a new filter of a type that hashes so */
#define BloomSchemeFor(hashing) \
	((hashing) == BLOOM_HASH_LABELS ? BLOOM_FILTER_HASH_SCHEME_LABELS : \
	 BLOOM_FILTER_HASH_SCHEME)

/* Per-call-site cache of how to hash a value argument (fn_extra) */
typedef struct BloomFnCache
{
	Oid			argtype;		/* type of the value argument, as passed */
	Oid			inputcollation; /* collation the call site passed */
	Oid			elemtype;		/* base type of the values probed */
	Oid			collation;		/* collation to hash with */
	TypeCacheEntry *typentry;	/* hash function of elemtype */
	BloomTypeHashing hashing;	/* whether elemtype hashes by local OIDs */
	/* for the array forms: the array itself as one value */
	Oid			arraytype;		/* base type of the array argument */
	TypeCacheEntry *arrayentry; /* its hash function, looked up on demand */
	int16		elmlen;
	bool		elmbyval;
	char		elmalign;
	/* the last out-of-line or compressed filter argument, detoasted */
	void	   *toast_alloc;	/* the chunk toast_filter lies in */
	char	   *toast_key;
	Size		toast_keylen;
	bytea	   *toast_filter;
	bool		toast_open_valid;	/* toast_open describes toast_filter */
	BloomFilterData toast_open;
	/* the last filter argument held in memory: its header, decoded */
	bool		mem_valid;
	Size		mem_len;		/* its length without the varlena header */
	BloomFilterData mem;
	uint8		mem_hdr[BLOOM_FILTER_MAX_HEADER_SIZE];
	/* the secret (argument key) of a keyed function, once derived */
	BloomSecret	secret;
} BloomFnCache;

/* Bytes of a keyed filter's secret */
#define BLOOM_SECRET_LEN		16

/*
 * Name of a type for messages, even if it no longer exists.
 */
static inline char *
BloomTypeName(Oid typid)
{
	return format_type_extended(typid, -1, FORMAT_TYPE_ALLOW_INVALID);
}

/* filter_hash.c */
extern BloomTypeHashing BloomTypeHashingOf(Oid typid);
extern void BloomCheckNewType(Oid typid, BloomTypeHashing hashing);
extern uint64 BloomValueHash(BloomFnCache *cache, uint16 scheme, Datum value);
extern uint64 BloomLabelHash(Oid typid, Datum value);
extern TypeCacheEntry *BloomLookupHash(Oid typid);
extern BloomFnCache *BloomGetFnCache(FunctionCallInfo fcinfo, int argno, bool is_array);

/* filter_core.c */
struct BloomVariantRoutine;
extern void BloomFilterOpen(bytea *datum, BloomFilterData *f);
extern bytea *BloomFilterAllocate(MemoryContext cxt, const BloomFilterHeader *hdr);
extern bytea *BloomFilterCopy(MemoryContext cxt, const bytea *datum);
extern void BloomHeaderInit(BloomFilterHeader *hdr, uint64 nbits, int nhashes,
							uint64 capacity, double fpr);
extern bool BloomTypeNames(Oid typid, char **nspname, char **typname);
extern void BloomHeaderSetType(BloomFilterHeader *hdr, Oid typid,
							   BloomTypeHashing hashing);
extern void BloomChooseSizeFor(int64 capacity, double fpr,
							   const struct BloomVariantRoutine *v,
							   uint64 *nbits, int *nhashes);
extern void BloomCheckValueType(Oid elemtype, Oid valuetype, bool adding);
extern void BloomCheckHome(const BloomFilterHeader *hdr, BloomTypeHashing hashing);
extern bytea *BloomFilterTyped(MemoryContext cxt, const BloomFilterData *f,
							   BloomFnCache *cache);

/* filter_detoast.c */
extern bytea *BloomGetFilterArg(FunctionCallInfo fcinfo, int argno,
								BloomFnCache *cache);
extern const BloomFilterData *BloomOpenFilterArg(FunctionCallInfo fcinfo, int argno,
												BloomFnCache *cache,
												BloomFilterData *local);
extern struct varlena *BloomDetoastLarge(struct varlena *raw, void **alloc);

#endif							/* BLOOMIDX_FILTER_H */
