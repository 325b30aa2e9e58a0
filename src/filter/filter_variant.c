/*-------------------------------------------------------------------------
 *
 * filter_variant.c
 *	  The table of bloomfilter variants, and adding, testing, removing,
 *	  combining and describing values in a filter of any variant through
 *	  it.
 *
 * A filter is a list of layers (filter_format.h); all but growing filters
 * have one.  A value is in a filter if all its positions are set in some
 * layer.  The hash given here is the value's 64-bit hash (keyed already, for
 * a keyed filter).  What a layer's cells are, and how a value is added, is
 * the variants' (filter_variant.h); BloomGetVariant is the one place that
 * finds a filter's routines.
 *
 * Copyright (c) 2026, bloomidx contributors
 *
 * IDENTIFICATION
 *	  src/filter/filter_variant.c
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include <math.h>

#include "miscadmin.h"
#include "utils/float.h"

#include "filter_variant.h"

/*
 * The variants, plain first.  A filter's routines are composed from those
 * of its flags in this order (filter_variant.h); a new variant is a flag
 * in filter_format.h, a file defining its routines, and an entry here.
 */
static const BloomVariantRoutine *const BloomVariants[] = {
	&BloomPlainVariant,
	&BloomGrowingVariant,
	&BloomCountingVariant,
	&BloomBlockedVariant,
	&BloomKeyedVariant,
};

/* Longest composed name: every variant's, and the spaces between */
#define BLOOM_COMPOSED_NAME_LEN	64

/* The composed routines of each set of flags, built on first use */
typedef struct BloomComposedVariant
{
	bool		valid;
	BloomVariantRoutine routine;
	char		name[BLOOM_COMPOSED_NAME_LEN];
} BloomComposedVariant;

static BloomComposedVariant BloomComposed[BLOOM_VARIANT_ALL + 1];

/*
 * Is variant v one of those of flags?  The plain variant is of every set:
 * the others take from it what they do not change.
 */
static inline bool
BloomVariantOf(const BloomVariantRoutine *v, uint16 flags)
{
	return v->flag == 0 || (flags & v->flag) != 0;
}

/* Take entry field of variant v in the composed routine r, if v has it */
#define BLOOM_COMPOSE(r, v, field) \
	do { if ((v)->field) (r)->field = (v)->field; } while (0)

/*
 * Compose the routines of flags into c (filter_variant.h).
 */
static pg_noinline void
BloomComposeVariant(uint16 flags, BloomComposedVariant *c)
{
	BloomVariantRoutine *r = &c->routine;
	bool		named = false;
	int			pass;
	int			i;

	memset(r, 0, sizeof(*r));
	r->flag = flags;
	c->name[0] = '\0';
	for (i = 0; i < lengthof(BloomVariants); i++)
	{
		const BloomVariantRoutine *v = BloomVariants[i];

		if (!BloomVariantOf(v, flags))
			continue;
		BLOOM_COMPOSE(r, v, layerrate);
		BLOOM_COMPOSE(r, v, cellbits);
		BLOOM_COMPOSE(r, v, blockbits);
		BLOOM_COMPOSE(r, v, bitspervalue);
		BLOOM_COMPOSE(r, v, set);
		BLOOM_COMPOSE(r, v, add);
		BLOOM_COMPOSE(r, v, test);
		BLOOM_COMPOSE(r, v, testbatch);
		BLOOM_COMPOSE(r, v, combine);
		BLOOM_COMPOSE(r, v, countset);
		BLOOM_COMPOSE(r, v, rate);
		BLOOM_COMPOSE(r, v, checksecret);
		BLOOM_COMPOSE(r, v, secrethashes);
		if (v->flag == flags)
		{
			BLOOM_COMPOSE(r, v, remove);
			BLOOM_COMPOSE(r, v, toplain);
		}
	}

	/* the modifiers' names, then the others', else "plain" */
	for (pass = 0; pass < 2; pass++)
	{
		for (i = 0; i < lengthof(BloomVariants); i++)
		{
			const BloomVariantRoutine *v = BloomVariants[i];

			if (v->flag == 0 || (flags & v->flag) == 0 ||
				v->modifier != (pass == 0))
				continue;
			if (c->name[0] != '\0')
				strlcat(c->name, " ", sizeof(c->name));
			strlcat(c->name, v->name, sizeof(c->name));
			named |= !v->modifier;
		}
	}
	if (!named)
	{
		if (c->name[0] != '\0')
			strlcat(c->name, " ", sizeof(c->name));
		strlcat(c->name, BloomVariants[0]->name, sizeof(c->name));
	}
	r->name = c->name;
	c->valid = true;
}

/*
 * The routines of a filter of the variant flags; inlined in this file's
 * probes, which run for every value.
 */
static inline const BloomVariantRoutine *
BloomLookupVariant(uint16 flags)
{
	BloomComposedVariant *c;

	if (unlikely(flags > BLOOM_VARIANT_ALL))
		elog(ERROR, "unrecognized bloom filter variant flags 0x%x", flags);
	c = &BloomComposed[flags];
	if (unlikely(!c->valid))
		BloomComposeVariant(flags, c);
	return &c->routine;
}

/*
 * The routines of a filter of the variant flags.
 */
const BloomVariantRoutine *
BloomGetVariant(uint16 flags)
{
	return BloomLookupVariant(flags);
}

/*
 * Short name of a filter's variant, for messages and bloom_info.
 */
const char *
BloomVariantName(uint16 flags)
{
	return BloomLookupVariant(flags)->name;
}

/*
 * BloomChooseSizeFor for a plain filter, the table's first entry.
 */
void
BloomChooseSize(int64 capacity, double fpr, uint64 *nbits, int *nhashes)
{
	BloomChooseSizeFor(capacity, fpr, BloomLookupVariant(0), nbits, nhashes);
}

/*
 * Derive a secret from its 16 bytes, by the variant that takes secrets.
 */
void
BloomSecretFromBytea(bytea *bytes, BloomSecret *secret)
{
	int			i;

	for (i = 0; i < lengthof(BloomVariants); i++)
	{
		if (BloomVariants[i]->makesecret != NULL)
		{
			BloomVariants[i]->makesecret(bytes, secret);
			return;
		}
	}
	elog(ERROR, "no bloom filter variant takes a key");
}

/*
 * Error out unless a filter takes exactly the secret given (NULL: none): a
 * filter of a variant without secrets takes none.
 */
void
BloomCheckSecret(const BloomFilterHeader *hdr, const BloomSecret *secret)
{
	const BloomVariantRoutine *v = BloomLookupVariant(hdr->flags);

	if (v->checksecret != NULL)
		v->checksecret(hdr, secret);
	else if (secret != NULL)
		ereport(ERROR,
				(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
				 errmsg("bloom filter is not keyed"),
				 errhint("Omit the key for a filter created without one.")));
}

/*
 * Key the hashes[0 .. n - 1] of values in place for the filter of header
 * hdr, which BloomCheckSecret found to take the secret.
 */
void
BloomFilterSecretHashes(const BloomFilterHeader *hdr, const BloomSecret *secret,
						uint64 *hashes, int n)
{
	const BloomVariantRoutine *v = BloomLookupVariant(hdr->flags);

	Assert(v->secrethashes != NULL);
	v->secrethashes(secret, hashes, n);
}

/*
 * Fill in the header of an empty filter for capacity values at rate fpr,
 * of the variant the options ask for.
 */
void
BloomHeaderInitVariant(BloomFilterHeader *hdr, int64 capacity, double fpr,
					   const BloomVariantOptions *opts)
{
	const BloomVariantRoutine *v;
	uint16		flags = 0;
	double		layer_fpr = fpr;
	uint64		nbits;
	int			nhashes;
	int			i;

	for (i = 0; i < lengthof(BloomVariants); i++)
	{
		if (BloomVariants[i]->chosen != NULL && BloomVariants[i]->chosen(opts))
			flags |= BloomVariants[i]->flag;
	}
	for (i = 0; i < lengthof(BloomVariants); i++)
	{
		if ((flags & BloomVariants[i]->flag) && BloomVariants[i]->checkflags)
			BloomVariants[i]->checkflags(flags);
	}
	v = BloomLookupVariant(flags);

	BloomHeaderInit(hdr, 0, 0, capacity, fpr);
	if (flags != 0)
	{
		hdr->version = BLOOM_FILTER_FORMAT_VARIANT;
		hdr->flags = flags;
	}
	for (i = 0; i < lengthof(BloomVariants); i++)
	{
		if ((flags & BloomVariants[i]->flag) && BloomVariants[i]->initheader)
			BloomVariants[i]->initheader(hdr, opts);
	}

	/* the first layer's rate (that of a growing filter is below the target) */
	if (fpr > 0.0 && fpr < 1.0)
		layer_fpr = v->layerrate(hdr, 0);
	BloomChooseSizeFor(capacity, layer_fpr, v, &nbits, &nhashes);
	hdr->nbits = hdr->layers[0].nbits = nbits;
	hdr->nhashes = hdr->layers[0].nhashes = nhashes;
}

/*
 * Might the filter contain the value of hash?  Tests every layer.
 */
bool
BloomFilterTestHash(const BloomFilterData *f, uint64 hash)
{
	const BloomVariantRoutine *v;
	uint32		i;

	if (f->hdr.elemtype == 0)
		return false;
	v = BloomLookupVariant(f->hdr.flags);
	for (i = 0; i < f->hdr.nlayers; i++)
	{
		if (v->test(f->data + f->hdr.layers[i].offset, &f->hdr.layers[i], hash))
			return true;
	}
	return false;
}

/*
 * Might the filter contain the values of n hashes (at most
 * BLOOM_PROBE_BATCH)?  Sets found[j] for hashes[j], exactly as
 * BloomFilterTestHash would, but layer by layer for the whole batch: the
 * variant's testbatch asks for every line the probes of the values not yet
 * found will read before it probes, so that their cache misses overlap
 * rather than follow one another (as RocksDB's MultiGet probes its
 * filters).
 */
void
BloomFilterTestHashes(const BloomFilterData *f, const uint64 *hashes, int n,
					  bool *found)
{
	const BloomVariantRoutine *v;
	int			todo[BLOOM_PROBE_BATCH];
	int			ntodo;
	int			j;
	uint32		i;

	Assert(n >= 0 && n <= BLOOM_PROBE_BATCH);
	for (j = 0; j < n; j++)
	{
		found[j] = false;
		todo[j] = j;
	}
	if (f->hdr.elemtype == 0)
		return;
	v = BloomLookupVariant(f->hdr.flags);
	ntodo = n;
	for (i = 0; i < f->hdr.nlayers && ntodo > 0; i++)
		ntodo = v->testbatch(f->data + f->hdr.layers[i].offset,
							 &f->hdr.layers[i], hashes, todo, ntodo, found);
}

/*
 * Add the value of hash to the filter in f, whose datum is writable; f is
 * reopened on the result.  Returns the filter, f's datum or, if a growing
 * filter needed a new layer, a new one in cxt.
 */
bytea *
BloomFilterAddHash(MemoryContext cxt, BloomFilterData *f, uint64 hash)
{
	const BloomVariantRoutine *v = BloomLookupVariant(f->hdr.flags);

	if (v->add != NULL)
		return v->add(cxt, f, v, hash);
	v->set(f->data + f->hdr.layers[0].offset, &f->hdr.layers[0], hash);
	return f->datum;
}

/*
 * Can values be removed from a filter of the variant flags?
 */
bool
BloomVariantCanRemove(uint16 flags)
{
	return BloomLookupVariant(flags)->remove != NULL;
}

/*
 * Remove the value of hash from the filter in f, whose datum is writable
 * and of a variant that can remove values.  Errors out, changing nothing,
 * unless the filter holds the value.
 */
void
BloomFilterRemoveHash(BloomFilterData *f, uint64 hash)
{
	const BloomVariantRoutine *v = BloomLookupVariant(f->hdr.flags);

	Assert(v->remove != NULL);
	v->remove(f->data + f->hdr.layers[0].offset, &f->hdr.layers[0], hash);
}

/*
 * Estimated number of distinct values added to a layer of m cells, nset of
 * them set, k a value; infinite once every cell is set.
 */
static double
BloomLayerCardinality(double m, uint64 nset, int k)
{
	if (nset == 0)
		return 0.0;
	if ((double) nset >= m)
		return get_float8_infinity();
	return -(m / k) * log1p(-(double) nset / m);
}

/*
 * Cells set, estimated values and expected false-positive rate of a filter:
 * a value is a false positive if it is one in any layer.
 */
void
BloomFilterStats(const BloomFilterData *f, BloomFilterStatsData *st)
{
	const BloomVariantRoutine *v = BloomLookupVariant(f->hdr.flags);
	double		pass = 1.0;		/* probability no layer answers yes */
	uint32		i;

	memset(st, 0, sizeof(*st));
	for (i = 0; i < f->hdr.nlayers; i++)
	{
		const BloomFilterLayer *layer = &f->hdr.layers[i];
		uint64		nset;
		double		n;
		double		rate;
		size_t		off;

		/* Cells are counted byte by byte: any chunking gives the same */
		nset = 0;
		for (off = 0; off < layer->nbytes; off += BLOOM_CHUNK_BYTES)
		{
			CHECK_FOR_INTERRUPTS();
			nset += v->countset(f->data + layer->offset + off,
								Min(layer->nbytes - off, BLOOM_CHUNK_BYTES));
		}
		n = BloomLayerCardinality((double) layer->nbits, nset, layer->nhashes);
		if (nset == 0)
			rate = 0.0;
		else if (nset >= layer->nbits)
			rate = 1.0;
		else
			rate = v->rate(layer, nset, n);
		st->ncells += layer->nbits;
		st->nset += nset;
		st->cardinality += n;
		pass *= 1.0 - Min(rate, 1.0);
	}
	st->fpr = 1.0 - pass;
}

/*
 * Error out unless filters a and b are of the same variant and shape, so
 * that they can be combined layer by layer (a growing filter may have more
 * layers than the other; the layers both have must agree).
 */
static void
BloomCheckSameVariant(const BloomFilterHeader *a, const BloomFilterHeader *b,
					  bool intersect)
{
	uint32		n = Min(a->nlayers, b->nlayers);
	uint32		i;

	if (a->flags != b->flags)
		ereport(ERROR,
				(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
				 errmsg("cannot combine a %s bloom filter with a %s bloom filter",
						BloomVariantName(a->flags), BloomVariantName(b->flags)),
				 errhint("Combine filters created with the same options.")));
	for (i = 0; i < lengthof(BloomVariants); i++)
	{
		if ((a->flags & BloomVariants[i]->flag) && BloomVariants[i]->checkcombine)
			BloomVariants[i]->checkcombine(a, b, intersect);
	}
	for (i = 0; i < n; i++)
	{
		if (a->layers[i].nbits != b->layers[i].nbits ||
			a->layers[i].nhashes != b->layers[i].nhashes)
			ereport(ERROR,
					(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
					 errmsg("cannot combine a bloom filter of " UINT64_FORMAT " bits and %u hash functions with a bloom filter of " UINT64_FORMAT " bits and %u hash functions",
							a->layers[i].nbits, a->layers[i].nhashes,
							b->layers[i].nbits, b->layers[i].nhashes),
					 errhint("Combine filters created with the same capacity and false-positive rate, or the same nbits and nhashes.")));
	}
}

/*
 * Error out unless two filters have the same element type (or one has
 * none yet), size, number of hash functions, hash scheme and home
 * database, and may be used in this database.
 */
static void
BloomCheckCompatible(const BloomFilterHeader *a, const BloomFilterHeader *b,
					 bool intersect)
{
	if (a->elemtype != 0 && b->elemtype != 0 && a->elemtype != b->elemtype)
		ereport(ERROR,
				(errcode(ERRCODE_DATATYPE_MISMATCH),
				 errmsg("cannot combine a bloom filter of type %s with a bloom filter of type %s",
						BloomTypeName(a->elemtype), BloomTypeName(b->elemtype))));
	BloomCheckSameVariant(a, b, intersect);
	if (a->secret_fingerprint != b->secret_fingerprint)
		ereport(ERROR,
				(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
				 errmsg("cannot combine keyed bloom filters built with different keys"),
				 errhint("Combine filters built with the same key.")));
	/* an untyped filter has scheme 1 until it gets its type */
	if (a->elemtype != 0 && b->elemtype != 0 && a->hash_scheme != b->hash_scheme)
		ereport(ERROR,
				(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
				 errmsg("cannot combine a bloom filter of hash scheme %u with a bloom filter of hash scheme %u",
						a->hash_scheme, b->hash_scheme),
				 errdetail("A filter of hash scheme %u hashes enum values by their labels, one of hash scheme %u by their OIDs.",
						   BLOOM_FILTER_HASH_SCHEME_LABELS, BLOOM_FILTER_HASH_SCHEME),
				 errhint("Build the filter of hash scheme %u again: a new filter of type %s hashes enum values by their labels.",
						 BLOOM_FILTER_HASH_SCHEME, BloomTypeName(a->elemtype))));
	BloomCheckHome(a, BLOOM_HASH_PORTABLE);
	BloomCheckHome(b, BLOOM_HASH_PORTABLE);
	/* both usable here, so a difference is one with a home and one without */
	if (a->elemtype != 0 && b->elemtype != 0 &&
		(a->home_sysid != b->home_sysid || a->home_dbid != b->home_dbid ||
		 a->home_typid != b->home_typid))
		ereport(ERROR,
				(errcode(ERRCODE_FEATURE_NOT_SUPPORTED),
				 errmsg("cannot combine bloom filters of type %s built in different databases",
						BloomTypeName(a->elemtype)),
				 errdetail("Values of type %s hash by object identifiers (OIDs), which differ from one database to another, and only one of the filters records the database that built it.",
						   BloomTypeName(a->elemtype)),
				 errhint("Build the filters from the values cast to text, for example bloom_agg(col::text), or build them again in this database.")));
}

/*
 * Combine filter b into filter a, which is writable, by OR (union) or AND
 * (intersection); returns the result, a itself or a new filter in cxt.
 * The result has the element type of whichever has one, and keeps the
 * capacity and target rate only if both agree on them.
 */
bytea *
BloomCombineInto(MemoryContext cxt, bytea *a, bytea *b, bool intersect)
{
	const BloomVariantRoutine *v;
	BloomFilterData fa;
	BloomFilterData fb;
	uint32		i;

	BloomFilterOpen(a, &fa);
	BloomFilterOpen(b, &fb);
	BloomCheckCompatible(&fa.hdr, &fb.hdr, intersect);
	v = BloomLookupVariant(fa.hdr.flags);

	/*
	 * The result is a copy of b when a has no type yet (b's header has the
	 * type and names) or when b has more layers; a is left alone, as it may
	 * be an aggregate's state, which the executor frees.  Union and
	 * intersection are commutative, so b's cells take a's.
	 */
	if ((fa.hdr.elemtype == 0 && fb.hdr.elemtype != 0) ||
		fb.hdr.nlayers > fa.hdr.nlayers)
	{
		BloomFilterData tmp;

		a = BloomFilterCopy(cxt, b);
		tmp = fa;
		BloomFilterOpen(a, &fa);
		fb = tmp;
	}
	for (i = 0; i < fb.hdr.nlayers; i++)
	{
		size_t		nbytes = fa.hdr.layers[i].nbytes;
		size_t		off;

		/* Cells are combined byte by byte: any chunking gives the same */
		for (off = 0; off < nbytes; off += BLOOM_CHUNK_BYTES)
		{
			CHECK_FOR_INTERRUPTS();
			v->combine(fa.data + fa.hdr.layers[i].offset + off,
					   fb.data + fb.hdr.layers[i].offset + off,
					   Min(nbytes - off, BLOOM_CHUNK_BYTES), intersect);
		}
		fa.hdr.layers[i].count += fb.hdr.layers[i].count;
	}

	if (fa.hdr.capacity != fb.hdr.capacity ||
		fa.hdr.target_fpr != fb.hdr.target_fpr)
	{
		/* never for growing filters, which must agree on them */
		fa.hdr.capacity = 0;
		fa.hdr.target_fpr = 0;
	}
	/* the header keeps its size: only sizing and counts change */
	BloomFilterEncodeHeader(fa.data, &fa.hdr);
	return a;
}
