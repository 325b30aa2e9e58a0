/*-------------------------------------------------------------------------
 *
 * filter_variant.c
 *	  Adding, testing and combining values in every kind of bloomfilter:
 *	  plain, growing (scalable), counting and blocked, keyed or not.
 *
 * A filter is a list of layers (filter_format.h); all but growing filters
 * have one.  A value is in a filter if all its positions are set in some
 * layer.  The hash given here is the value's 64-bit hash.
 *
 * Growing filters follow Almeida et al., "Scalable Bloom Filters" (2007):
 * layer i holds capacity * growth^i values at rate p0 * r^i, where p0 =
 * p * (1 - r), so that the rates of all the layers sum to at most the
 * target p however many layers are added.  A value already in the filter
 * is not added again (as RedisBloom does), so duplicates do not fill it.
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include <math.h>

#include "miscadmin.h"
#include "utils/float.h"
#include "utils/memutils.h"

#include "filter.h"
#include "signature.h"

/*
 * Is position pos of a layer set (a nonzero counter)?
 */
static inline bool
BloomCellTest(const uint8 *cells, bool counting, uint64 pos)
{
	if (counting)
		return ((cells[pos >> 1] >> ((pos & 1) << 2)) & 0x0F) != 0;
	return BloomTestBit(cells, pos);
}

/*
 * Is the value of hash in layer i of a filter?
 */
bool
BloomLayerTest(const BloomFilterData *f, int i, uint64 hash)
{
	const BloomFilterLayer *layer = &f->hdr.layers[i];
	const uint8 *cells = f->data + layer->offset;
	BloomProbe	probe;
	int			k = layer->nhashes;

	if (f->hdr.flags & BLOOM_VARIANT_BLOCKED)
		return BloomTestBitsBlocked(cells, layer->nbits, hash,
									BLOOM_FILTER_SALT, k);
	if (!(f->hdr.flags & BLOOM_VARIANT_COUNTING))
		return BloomTestBits(cells, layer->nbits, hash, BLOOM_FILTER_SALT, k);

	BloomProbeInit(&probe, hash, BLOOM_FILTER_SALT, layer->nbits);
	while (k-- > 0)
	{
		if (!BloomCellTest(cells, true, BloomProbeNext(&probe)))
			return false;
	}
	return true;
}

/*
 * Might the filter contain the value of hash?  Tests every layer.
 */
bool
BloomFilterTestHash(const BloomFilterData *f, uint64 hash)
{
	uint32		i;

	if (f->hdr.elemtype == 0)
		return false;
	for (i = 0; i < f->hdr.nlayers; i++)
	{
		if (BloomLayerTest(f, i, hash))
			return true;
	}
	return false;
}

/*
 * Ask for every line the probe of hash in layer i may read: the block of a
 * blocked filter, the k cells of a plain or counting one.
 *
 * Always inlined: GCC finds a function that only prefetches free of side
 * effects (const) and drops every call to it, whose result is unused,
 * before it would inline them, so that no line was ever prefetched (GCC 12,
 * -O2: no prefetch instruction in the object file).
 */
static pg_attribute_always_inline void
BloomLayerPrefetch(const BloomFilterData *f, int i, uint64 hash)
{
	const BloomFilterLayer *layer = &f->hdr.layers[i];
	const uint8 *cells = f->data + layer->offset;
	BloomProbe	probe;
	int			k = layer->nhashes;
	int			shift = (f->hdr.flags & BLOOM_VARIANT_COUNTING) ? 1 : 3;

	if (f->hdr.flags & BLOOM_VARIANT_BLOCKED)
	{
		BloomPrefetch(cells + (BloomBlockStart(hash, BLOOM_FILTER_SALT,
											   layer->nbits) >> 3));
		return;
	}
	BloomProbeInit(&probe, hash, BLOOM_FILTER_SALT, layer->nbits);
	while (k-- > 0)
		BloomPrefetch(cells + (BloomProbeNext(&probe) >> shift));
}

/*
 * Might the filter contain the values of n hashes (at most
 * BLOOM_PROBE_BATCH)?  Sets found[j] for hashes[j], exactly as
 * BloomFilterTestHash would, but layer by layer for the whole batch: first
 * a prefetch of every line the probes of the values not yet found will
 * read, then the probes, so that their cache misses overlap rather than
 * follow one another (as RocksDB's MultiGet probes its filters).
 */
void
BloomFilterTestHashes(const BloomFilterData *f, const uint64 *hashes, int n,
					  bool *found)
{
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
	ntodo = n;
	for (i = 0; i < f->hdr.nlayers && ntodo > 0; i++)
	{
		int			left = 0;

		/*
		 * A blocked layer: each value's block, found once, asked for, then
		 * tested.
		 */
		if (f->hdr.flags & BLOOM_VARIANT_BLOCKED)
		{
			const BloomFilterLayer *layer = &f->hdr.layers[i];
			const uint8 *cells = f->data + layer->offset;
			const uint8 *blocks[BLOOM_PROBE_BATCH];

			for (j = 0; j < ntodo; j++)
			{
				blocks[j] = cells + (BloomBlockStart(hashes[todo[j]],
													 BLOOM_FILTER_SALT,
													 layer->nbits) >> 3);
				BloomPrefetch(blocks[j]);
			}
			for (j = 0; j < ntodo; j++)
			{
				if (BloomTestBlockBits(blocks[j], hashes[todo[j]],
									   BLOOM_FILTER_SALT, layer->nhashes))
					found[todo[j]] = true;
				else
					todo[left++] = todo[j];
			}
			ntodo = left;
			continue;
		}
		for (j = 0; j < ntodo; j++)
			BloomLayerPrefetch(f, i, hashes[todo[j]]);
		for (j = 0; j < ntodo; j++)
		{
			if (BloomLayerTest(f, i, hashes[todo[j]]))
				found[todo[j]] = true;
			else
				todo[left++] = todo[j];
		}
		ntodo = left;
	}
}

/*
 * Set the positions of hash in layer i (increment a counting filter's
 * counters, which stick at BLOOM_COUNTER_MAX).
 */
static void
BloomLayerSet(BloomFilterData *f, int i, uint64 hash)
{
	const BloomFilterLayer *layer = &f->hdr.layers[i];
	uint8	   *cells = f->data + layer->offset;
	BloomProbe	probe;
	int			k = layer->nhashes;

	if (f->hdr.flags & BLOOM_VARIANT_BLOCKED)
	{
		BloomSetBitsBlocked(cells, layer->nbits, hash, BLOOM_FILTER_SALT, k);
		return;
	}
	if (!(f->hdr.flags & BLOOM_VARIANT_COUNTING))
	{
		BloomSetBits(cells, layer->nbits, hash, BLOOM_FILTER_SALT, k);
		return;
	}
	BloomProbeInit(&probe, hash, BLOOM_FILTER_SALT, layer->nbits);
	while (k-- > 0)
	{
		uint64		pos = BloomProbeNext(&probe);
		int			shift = (pos & 1) << 2;
		int			c = (cells[pos >> 1] >> shift) & 0x0F;

		if (c < BLOOM_COUNTER_MAX)
			cells[pos >> 1] += (uint8) (1 << shift);
	}
}

/*
 * Capacity of layer i of a growing filter: capacity * growth^i, capped at
 * 2^40 (more than any filter of 256 MB holds).
 */
uint64
BloomLayerCapacity(const BloomFilterHeader *hdr, int i)
{
	uint64		cap = hdr->capacity;

	while (i-- > 0 && cap < (UINT64CONST(1) << 40))
		cap *= hdr->growth;
	return Min(cap, UINT64CONST(1) << 40);
}

/*
 * Target rate of layer i of a growing filter: p * (1 - r) * r^i.
 */
double
BloomLayerRate(const BloomFilterHeader *hdr, int i)
{
	return hdr->target_fpr * (1.0 - hdr->tightening) * pow(hdr->tightening, i);
}

/*
 * Write the count of layer i into the filter's layer table.
 */
static void
BloomStoreLayerCount(BloomFilterData *f, int i)
{
	uint8	   *p = f->data + f->hdr.bits_offset -
		(size_t) (f->hdr.nlayers - i) * BLOOM_FILTER_LAYER_SIZE + 16;
	uint64		v = f->hdr.layers[i].count;
	int			b;

	for (b = 0; b < 8; b++)
		p[b] = (uint8) (v >> (8 * b));
}

/*
 * A copy of a growing filter in cxt with one more, empty layer.
 */
static bytea *
BloomAddLayer(MemoryContext cxt, const BloomFilterData *f)
{
	BloomFilterHeader hdr = f->hdr;
	BloomFilterLayer *layer;
	uint64		nbits;
	int			nhashes;
	bytea	   *result;
	uint32		i;

	if (hdr.nlayers >= BLOOM_FILTER_MAX_LAYERS)
		ereport(ERROR,
				(errcode(ERRCODE_PROGRAM_LIMIT_EXCEEDED),
				 errmsg("growing bloom filter cannot have more than %d layers",
						BLOOM_FILTER_MAX_LAYERS),
				 errhint("Create the filter with a larger capacity or growth factor.")));
	BloomChooseSizeFor(BloomLayerCapacity(&hdr, hdr.nlayers),
					   BloomLayerRate(&hdr, hdr.nlayers), hdr.flags,
					   &nbits, &nhashes);
	layer = &hdr.layers[hdr.nlayers++];
	layer->nbits = nbits;
	layer->nhashes = nhashes;
	layer->count = 0;
	BloomFilterLayoutLayers(&hdr);
	if (hdr.nbytes > BLOOM_FILTER_NBYTES(BLOOM_FILTER_MAX_NBITS))
		ereport(ERROR,
				(errcode(ERRCODE_PROGRAM_LIMIT_EXCEEDED),
				 errmsg("growing bloom filter cannot grow beyond 256 MB"),
				 errdetail("It holds " UINT64_FORMAT " values in %u layers.",
						   BloomFilterValues(&f->hdr), f->hdr.nlayers),
				 errhint("Create the filter with a larger false-positive rate, or split the values over several filters.")));

	result = BloomFilterAllocate(cxt, &hdr);
	for (i = 0; i < f->hdr.nlayers; i++)
		memcpy((uint8 *) VARDATA(result) + hdr.layers[i].offset,
			   f->data + f->hdr.layers[i].offset, f->hdr.layers[i].nbytes);
	return result;
}

/*
 * Values added to a growing filter (the sum of its layers' counts).
 */
uint64
BloomFilterValues(const BloomFilterHeader *hdr)
{
	uint64		n = 0;
	uint32		i;

	for (i = 0; i < hdr->nlayers; i++)
		n += hdr->layers[i].count;
	return n;
}

/*
 * Add the value of hash to the filter in f, whose datum is writable; f is
 * reopened on the result.  Returns the filter, f's datum or, if a growing
 * filter needed a new layer, a new one in cxt.
 */
bytea *
BloomFilterAddHash(MemoryContext cxt, BloomFilterData *f, uint64 hash)
{
	uint32		last;

	if (!(f->hdr.flags & BLOOM_VARIANT_GROWING))
	{
		BloomLayerSet(f, 0, hash);
		return f->datum;
	}

	/* a value already in the filter does not take room in a layer */
	if (BloomFilterTestHash(f, hash))
		return f->datum;
	last = f->hdr.nlayers - 1;
	if (f->hdr.layers[last].count >= BloomLayerCapacity(&f->hdr, last))
	{
		BloomFilterOpen(BloomAddLayer(cxt, f), f);
		last++;
	}
	BloomLayerSet(f, last, hash);
	f->hdr.layers[last].count++;
	BloomStoreLayerCount(f, last);
	return f->datum;
}

/*
 * Remove the value of hash from a counting filter in f, whose datum is
 * writable: decrement its counters, except those stuck at the maximum.
 * Errors out, changing nothing, unless every counter of the value is set.
 */
void
BloomFilterRemoveHash(BloomFilterData *f, uint64 hash)
{
	const BloomFilterLayer *layer = &f->hdr.layers[0];
	uint8	   *cells = f->data + layer->offset;
	uint64		pos[BLOOM_FILTER_MAX_NHASHES];
	BloomProbe	probe;
	int			k = layer->nhashes;
	int			nshort;
	int			i;
	int			j;

	Assert(f->hdr.flags & BLOOM_VARIANT_COUNTING);
	BloomProbeInit(&probe, hash, BLOOM_FILTER_SALT, layer->nbits);
	for (i = 0; i < k; i++)
		pos[i] = BloomProbeNext(&probe);

	/* a position probed n times was incremented n times */
	nshort = 0;
	for (i = 0; i < k; i++)
	{
		int			c = (cells[pos[i] >> 1] >> ((pos[i] & 1) << 2)) & 0x0F;
		int			times = 0;

		for (j = 0; j < k; j++)
			times += (pos[j] == pos[i]);
		if (c < BLOOM_COUNTER_MAX && c < times)
			nshort++;
	}
	if (nshort > 0)
		ereport(ERROR,
				(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
				 errmsg("cannot remove a value that is not in the counting bloom filter"),
				 errdetail_plural("%d of its %d counters is too low.",
								  "%d of its %d counters are too low.",
								  nshort, nshort, k),
				 errhint("Remove only values that were added, once for each time they were added.")));
	for (i = 0; i < k; i++)
	{
		int			shift = (pos[i] & 1) << 2;
		int			c = (cells[pos[i] >> 1] >> shift) & 0x0F;

		if (c < BLOOM_COUNTER_MAX)
			cells[pos[i] >> 1] -= (uint8) (1 << shift);
	}
}

/*
 * Error out unless filters a and b are of the same variant and shape, so
 * that they can be combined layer by layer (a growing filter may have more
 * layers than the other; the layers both have must agree).
 */
void
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
	if ((a->flags & BLOOM_VARIANT_GROWING) &&
		(a->growth != b->growth || a->tightening != b->tightening ||
		 a->capacity != b->capacity || a->target_fpr != b->target_fpr))
		ereport(ERROR,
				(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
				 errmsg("cannot combine growing bloom filters created with different parameters"),
				 errhint("Combine growing filters created with the same capacity, false-positive rate and growth.")));
	if ((a->flags & BLOOM_VARIANT_GROWING) && intersect)
		ereport(ERROR,
				(errcode(ERRCODE_FEATURE_NOT_SUPPORTED),
				 errmsg("cannot intersect growing bloom filters"),
				 errdetail("A value may be in different layers of the two filters."),
				 errhint("Intersect filters of a fixed size.")));
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
 * Combine the cells of src into dst, which have the same length: OR or AND
 * of bits; for counting filters saturating addition or minimum of counters.
 */
void
BloomCombineCells(uint8 *dst, const uint8 *src, size_t nbytes, bool counting,
				  bool intersect)
{
	size_t		i;

	if (!counting)
	{
		if (intersect)
			for (i = 0; i < nbytes; i++)
				dst[i] &= src[i];
		else
			for (i = 0; i < nbytes; i++)
				dst[i] |= src[i];
		return;
	}
	for (i = 0; i < nbytes; i++)
	{
		int			lo1 = dst[i] & 0x0F,
					hi1 = dst[i] >> 4,
					lo2 = src[i] & 0x0F,
					hi2 = src[i] >> 4;
		int			lo,
					hi;

		if ((i & 65535) == 0)
			CHECK_FOR_INTERRUPTS();
		if (intersect)
		{
			lo = Min(lo1, lo2);
			hi = Min(hi1, hi2);
		}
		else
		{
			lo = Min(lo1 + lo2, BLOOM_COUNTER_MAX);
			hi = Min(hi1 + hi2, BLOOM_COUNTER_MAX);
		}
		dst[i] = (uint8) (lo | (hi << 4));
	}
}

/*
 * Short name of a filter's variant, for messages and bloom_info.
 */
const char *
BloomVariantName(uint16 flags)
{
	const char *name = "unknown";

	switch (flags & ~BLOOM_VARIANT_KEYED)
	{
		case 0:
			name = "plain";
			break;
		case BLOOM_VARIANT_GROWING:
			name = "growing";
			break;
		case BLOOM_VARIANT_COUNTING:
			name = "counting";
			break;
		case BLOOM_VARIANT_BLOCKED:
			name = "blocked";
			break;
		case BLOOM_VARIANT_GROWING | BLOOM_VARIANT_BLOCKED:
			name = "growing blocked";
			break;
	}
	if (flags & BLOOM_VARIANT_KEYED)
		return psprintf("keyed %s", name);
	return name;
}

/*
 * Expected false-positive rate of a blocked filter of bits_per_value bits
 * per value and k positions a value: the blocks' loads are Poisson with
 * mean 512 / bits_per_value, and a block of j values answers a false
 * positive with probability (1 - (1 - 1/512)^(k j))^k.
 */
double
BloomBlockedRate(double bits_per_value, int k)
{
	double		lambda = (double) BLOOM_BLOCK_BITS / bits_per_value;
	double		logp = -lambda;		/* log of Poisson(0) */
	double		rate = 0.0;
	double		q = log1p(-1.0 / BLOOM_BLOCK_BITS);
	int			jmax = (int) (lambda + 12.0 * sqrt(lambda) + 30.0);
	int			j;

	for (j = 0; j <= jmax; j++)
	{
		if (j > 0)
			logp += log(lambda) - log((double) j);
		rate += exp(logp) * pow(-expm1(k * j * q), k);
	}
	return rate;
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
	double		pass = 1.0;		/* probability no layer answers yes */
	uint32		i;

	memset(st, 0, sizeof(*st));
	for (i = 0; i < f->hdr.nlayers; i++)
	{
		const BloomFilterLayer *layer = &f->hdr.layers[i];
		const uint8 *cells = f->data + layer->offset;
		uint64		nset = 0;
		double		n;
		double		rate;

		if (f->hdr.flags & BLOOM_VARIANT_COUNTING)
		{
			size_t		b;

			for (b = 0; b < layer->nbytes; b++)
			{
				if ((b & 65535) == 0)
					CHECK_FOR_INTERRUPTS();
				nset += ((cells[b] & 0x0F) != 0) + ((cells[b] >> 4) != 0);
			}
		}
		else
			nset = BloomCountBits(cells, layer->nbytes);

		n = BloomLayerCardinality((double) layer->nbits, nset, layer->nhashes);
		if (nset == 0)
			rate = 0.0;
		else if (nset >= layer->nbits)
			rate = 1.0;
		else if (f->hdr.flags & BLOOM_VARIANT_BLOCKED)
			rate = BloomBlockedRate((double) layer->nbits / n, layer->nhashes);
		else
			rate = BloomFalsePositiveRate((double) nset / layer->nbits,
										  layer->nhashes);
		st->ncells += layer->nbits;
		st->nset += nset;
		st->cardinality += n;
		pass *= 1.0 - Min(rate, 1.0);
	}
	st->fpr = 1.0 - pass;
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
	if (a->key_fingerprint != b->key_fingerprint)
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
	BloomFilterData fa;
	BloomFilterData fb;
	bool		counting;
	uint32		i;

	BloomFilterOpen(a, &fa);
	BloomFilterOpen(b, &fb);
	BloomCheckCompatible(&fa.hdr, &fb.hdr, intersect);
	counting = (fa.hdr.flags & BLOOM_VARIANT_COUNTING) != 0;

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
		CHECK_FOR_INTERRUPTS();
		BloomCombineCells(fa.data + fa.hdr.layers[i].offset,
						  fb.data + fb.hdr.layers[i].offset,
						  fa.hdr.layers[i].nbytes, counting, intersect);
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
