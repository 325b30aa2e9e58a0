/*-------------------------------------------------------------------------
 *
 * filter_detoast.c
 *	  Reading the bloomfilter arguments of a call: detoasting a stored
 *	  filter once per call site, large filters and arrays onto huge pages,
 *	  and decoding a filter's header once while it stays the same.
 *
 * Copyright (c) 2026, bloomidx contributors
 *
 * IDENTIFICATION
 *	  src/filter/filter_detoast.c
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#ifndef WIN32
#include <sys/mman.h>
#endif

#include "access/detoast.h"
#include "access/table.h"
#include "access/tableam.h"
#include "fmgr.h"
#include "utils/memutils.h"

#include "filter.h"

/*
 * Where a large filter goes, in the current memory context, so that probes
 * are cheapest: its cells starting on a 64-byte boundary (within the 4-byte
 * alignment a varlena needs), so that a blocked filter's block is one cache
 * line, and on transparent huge pages where the system offers them
 * (madvise), so that a probe of a filter larger than the TLB's reach does
 * not also walk the page tables.  size is the filter's size with its
 * varlena header, lead the offset of its cells from the start of the
 * varlena.  Returns where the varlena is to start and sets *alloc to the
 * chunk to pfree.
 */
static char *
BloomRehomeSpace(Size size, Size lead, void **alloc)
{
	Size		pad = (64 - lead % 64) % 64;
	char	   *buf;
	char	   *start;

	buf = palloc(size + 128);
	/* the cells start at start + lead; put that on a line, rounded to 4 */
	start = (char *) TYPEALIGN(64, buf) + (pad & ~(Size) 3);
#ifdef MADV_HUGEPAGE
	{
		char	   *lo = (char *) TYPEALIGN(BLOOM_HUGE_PAGE_SIZE, start);
		char	   *hi = (char *) TYPEALIGN_DOWN(BLOOM_HUGE_PAGE_SIZE, start + size);

		/* advice only; the pages are not touched yet */
		if (hi > lo)
			(void) madvise(lo, hi - lo, MADV_HUGEPAGE);
	}
#endif
	*alloc = buf;
	return start;
}

/*
 * Move a large detoasted filter to where probes are cheapest
 * (BloomRehomeSpace).  Returns the filter and sets *alloc to the chunk to
 * pfree; a small or undecodable filter stays where it is.
 */
static bytea *
BloomRehome(bytea *datum, void **alloc)
{
	BloomFilterHeader hdr;
	Size		size = VARSIZE(datum);
	char	   *start;

	*alloc = datum;
	if (size < BLOOM_REHOME_MIN_SIZE ||
		BloomFilterDecodeHeader((const uint8 *) VARDATA(datum),
								size - VARHDRSZ, &hdr, false) != BLOOM_FORMAT_OK)
		return datum;

	start = BloomRehomeSpace(size, VARHDRSZ + hdr.bits_offset, alloc);
	memcpy(start, datum, size);
	pfree(datum);
	return (bytea *) start;
}

/*
 * The size of raw's value if it is stored out of line, uncompressed and
 * large (at least BLOOM_REHOME_MIN_SIZE), its TOAST pointer in *tp; else
 * -1, for detoast_attr to read.
 */
static int32
BloomLargeToastSize(struct varlena *raw, struct varatt_external *tp)
{
	int32		attrsize;

	if (!VARATT_IS_EXTERNAL_ONDISK(raw))
		return -1;
	VARATT_EXTERNAL_GET_POINTER(*tp, raw);
	attrsize = VARATT_EXTERNAL_GET_EXTSIZE(*tp);
	if (VARATT_EXTERNAL_IS_COMPRESSED(*tp) ||
		(Size) attrsize + VARHDRSZ < BLOOM_REHOME_MIN_SIZE)
		return -1;
	return attrsize;
}

/*
 * Read the whole value of TOAST pointer tp (attrsize bytes) from toastrel
 * straight into the place BloomRehomeSpace gives for lead bytes before the
 * part to align, as detoasting reads it; sets *alloc to the chunk to pfree.
 */
static struct varlena *
BloomFetchToastInPlace(Relation toastrel, const struct varatt_external *tp,
					   int32 attrsize, Size lead, void **alloc)
{
	char	   *start = BloomRehomeSpace(VARHDRSZ + attrsize, lead, alloc);

	SET_VARSIZE(start, VARHDRSZ + attrsize);
	table_relation_fetch_toast_slice(toastrel, tp->va_valueid, attrsize,
									 0, attrsize, (struct varlena *) start);
	return (struct varlena *) start;
}

/*
 * Detoast a filter stored out of line to where probes are cheapest.  A
 * large one stored uncompressed is read from its TOAST table straight into
 * the place BloomRehomeSpace gives, its header first to learn where its
 * cells start: this spares a copy of the whole filter and the memory for
 * it (on a 128 MB filter, most of the time the first probe takes).  Any
 * other goes through detoast_attr and BloomRehome.  Returns the filter and
 * sets *alloc to the chunk to pfree.
 */
static bytea *
BloomDetoastRehomed(struct varlena *raw, void **alloc)
{
	struct varatt_external toast_pointer;
	BloomFilterHeader hdr;
	Relation	toastrel;
	struct varlena *head;
	struct varlena *value;
	int32		attrsize;
	int32		headsize;
	Size		lead = VARHDRSZ;

	attrsize = BloomLargeToastSize(raw, &toast_pointer);
	if (attrsize < 0)
		return BloomRehome((bytea *) detoast_attr(raw), alloc);

	toastrel = table_open(toast_pointer.va_toastrelid, AccessShareLock);

	/*
	 * The header alone: it decodes, up to where the cells start, as long as
	 * it is whole (the check of the filter's length fails, as it must).  A
	 * header that does not decode leaves the cells where they fall; the
	 * whole filter is checked when it is opened.
	 */
	headsize = Min(attrsize, BLOOM_FILTER_MAX_HEADER_SIZE);
	head = (struct varlena *) palloc(VARHDRSZ + headsize);
	SET_VARSIZE(head, VARHDRSZ + headsize);
	table_relation_fetch_toast_slice(toastrel, toast_pointer.va_valueid,
									 attrsize, 0, headsize, head);
	switch (BloomFilterDecodeHeader((const uint8 *) VARDATA(head), headsize,
									&hdr, false))
	{
		case BLOOM_FORMAT_OK:
		case BLOOM_FORMAT_TRUNCATED:
			if (hdr.bits_offset > 0 && hdr.bits_offset <= (Size) attrsize)
				lead += hdr.bits_offset;
			break;
		default:
			break;
	}
	pfree(head);

	value = BloomFetchToastInPlace(toastrel, &toast_pointer, attrsize, lead,
								   alloc);
	table_close(toastrel, AccessShareLock);
	return (bytea *) value;
}

/*
 * Detoast a large value stored out of line and uncompressed (see
 * BloomLargeToastSize) into memory on transparent huge pages
 * (BloomRehomeSpace), as detoast_attr would read it but with a page fault
 * per 2 MB rather than per 4 kB: on a 40 MB array, most of what reading
 * it cost besides the copy.  Returns NULL, leaving it to the caller, for
 * any other value; else sets *alloc to the chunk to pfree.
 */
struct varlena *
BloomDetoastLarge(struct varlena *raw, void **alloc)
{
	struct varatt_external toast_pointer;
	Relation	toastrel;
	struct varlena *value;
	int32		attrsize;

	attrsize = BloomLargeToastSize(raw, &toast_pointer);
	if (attrsize < 0)
		return NULL;
	toastrel = table_open(toast_pointer.va_toastrelid, AccessShareLock);
	value = BloomFetchToastInPlace(toastrel, &toast_pointer, attrsize, 0, alloc);
	table_close(toastrel, AccessShareLock);
	return value;
}

/*
 * The filter argument argno, detoasted.  A filter stored out of line or
 * compressed is detoasted once per call site and kept while the same
 * stored value comes back, as when a filter from a subquery is probed for
 * every row of a scan.
 */
bytea *
BloomGetFilterArg(FunctionCallInfo fcinfo, int argno, BloomFnCache *cache)
{
	struct varlena *raw = (struct varlena *) PG_GETARG_POINTER(argno);
	Size		keylen;
	MemoryContext oldcxt;

	if (!VARATT_IS_EXTERNAL_ONDISK(raw) && !VARATT_IS_COMPRESSED(raw))
		return (bytea *) PG_DETOAST_DATUM_PACKED(PG_GETARG_DATUM(argno));

	/* toasted values never change, so equal pointers mean equal values */
	keylen = VARSIZE_ANY(raw);
	if (cache->toast_filter != NULL && cache->toast_keylen == keylen &&
		memcmp(cache->toast_key, raw, keylen) == 0)
		return cache->toast_filter;

	if (cache->toast_filter != NULL)
	{
		pfree(cache->toast_alloc);
		pfree(cache->toast_key);
		cache->toast_filter = NULL;
	}
	cache->toast_open_valid = false;
	oldcxt = MemoryContextSwitchTo(fcinfo->flinfo->fn_mcxt);
	cache->toast_filter = BloomDetoastRehomed(raw, &cache->toast_alloc);
	cache->toast_key = palloc(keylen);
	memcpy(cache->toast_key, raw, keylen);
	cache->toast_keylen = keylen;
	MemoryContextSwitchTo(oldcxt);
	return cache->toast_filter;
}

/*
 * The filter argument argno, opened: a stored filter that BloomGetFilterArg
 * keeps detoasted is decoded once, not for every probe, and so is one held
 * in memory while its header stays the same; any other is decoded into
 * local.  The result is valid until the next call at this call site.
 */
const BloomFilterData *
BloomOpenFilterArg(FunctionCallInfo fcinfo, int argno, BloomFnCache *cache,
				   BloomFilterData *local)
{
	bytea	   *datum = BloomGetFilterArg(fcinfo, argno, cache);

	if (datum != cache->toast_filter)
	{
		const uint8 *data = (const uint8 *) VARDATA_ANY(datum);
		Size		len = VARSIZE_ANY_EXHDR(datum);

		/*
		 * A filter held in memory (a query's own result, or stored inline)
		 * comes back for every row as well.  The decoded header depends
		 * only on the header's bytes and the length, so a filter with the
		 * same ones reuses it, whatever its cells.
		 */
		if (cache->mem_valid && len == cache->mem_len &&
			memcmp(data, cache->mem_hdr, cache->mem.hdr.bits_offset) == 0)
		{
			BloomFilterData *f = &cache->mem;

			f->datum = datum;
			f->data = (uint8 *) data;
			f->bits = f->data + f->hdr.bits_offset;
			f->hdr.nspname = (const char *) data + BLOOM_FILTER_FIXED_HEADER_SIZE;
			f->hdr.typname = f->hdr.nspname + f->hdr.nspname_len;
			return f;
		}
		BloomFilterOpen(datum, local);
		if (local->hdr.bits_offset > sizeof(cache->mem_hdr))
			return local;
		memcpy(cache->mem_hdr, data, local->hdr.bits_offset);
		cache->mem = *local;
		cache->mem_len = len;
		cache->mem_valid = true;
		return &cache->mem;
	}
	if (!cache->toast_open_valid)
	{
		BloomFilterOpen(datum, &cache->toast_open);
		cache->toast_open_valid = true;
	}
	return &cache->toast_open;
}
