/*-------------------------------------------------------------------------
 *
 * filter_format.c
 *	  Encoding and strict validation of the bloomfilter byte format.
 *
 * Nothing here allocates memory, reports errors or depends on the server:
 * the decoder returns what is wrong and its callers report it, so that the
 * same code runs in the server and in the fuzz harness (fuzz/).  The layout
 * is described in filter_format.h.
 *
 * Copyright (c) 2026, bloomidx contributors
 *
 * IDENTIFICATION
 *	  src/filter/filter_format.c
 *
 *-------------------------------------------------------------------------
 */
#ifndef FRONTEND
#include "postgres.h"
#else
#include "postgres_fe.h"
#endif

#include <stddef.h>
#include <string.h>

#include "filter_format.h"

/*
 * Read a little-endian 16-bit integer.
 */
static inline uint16
ReadLE16(const uint8 *p)
{
	return (uint16) (p[0] | (p[1] << 8));
}

/*
 * Read a little-endian 32-bit integer.
 */
static inline uint32
ReadLE32(const uint8 *p)
{
	return (uint32) p[0] | ((uint32) p[1] << 8) |
		((uint32) p[2] << 16) | ((uint32) p[3] << 24);
}

/*
 * Read a little-endian 64-bit integer.
 */
static inline uint64
ReadLE64(const uint8 *p)
{
	return (uint64) ReadLE32(p) | ((uint64) ReadLE32(p + 4) << 32);
}

/*
 * Write a little-endian 16-bit integer.
 */
static inline void
WriteLE16(uint8 *p, uint16 v)
{
	p[0] = (uint8) v;
	p[1] = (uint8) (v >> 8);
}

/*
 * Write a little-endian 32-bit integer.
 */
static inline void
WriteLE32(uint8 *p, uint32 v)
{
	WriteLE16(p, (uint16) v);
	WriteLE16(p + 2, (uint16) (v >> 16));
}

/*
 * Write a little-endian 64-bit integer.
 */
static inline void
WriteLE64(uint8 *p, uint64 v)
{
	WriteLE32(p, (uint32) v);
	WriteLE32(p + 4, (uint32) (v >> 32));
}

/*
 * Size of the header (fixed part and type names) described by hdr.
 */
size_t
BloomFilterHeaderSize(const BloomFilterHeader *hdr)
{
	size_t		size = BLOOM_FILTER_FIXED_HEADER_SIZE + hdr->nspname_len +
		hdr->typname_len;

	if (hdr->version == BLOOM_FILTER_FORMAT_VARIANT)
		size += BLOOM_FILTER_VARIANT_FIXED_SIZE +
			(size_t) hdr->nlayers * BLOOM_FILTER_LAYER_SIZE;
	return size;
}

/*
 * Set bits_offset, nbytes and each layer's offset and nbytes from the
 * header's shape (the layers' nbits, the names and the flags).
 */
void
BloomFilterLayoutLayers(BloomFilterHeader *hdr)
{
	size_t		off;
	uint32		i;

	hdr->bits_offset = off = BloomFilterHeaderSize(hdr);
	for (i = 0; i < hdr->nlayers; i++)
	{
		hdr->layers[i].offset = off;
		hdr->layers[i].nbytes = BLOOM_LAYER_NBYTES(hdr->flags,
												   hdr->layers[i].nbits);
		off += hdr->layers[i].nbytes;
	}
	hdr->nbytes = off - hdr->bits_offset;
}

/*
 * Decode and validate the variant part of a format-3 filter, which starts
 * at data + off; len is the whole length.
 */
static BloomFilterFormatError
DecodeVariant(const uint8 *data, size_t len, size_t off, BloomFilterHeader *hdr)
{
	uint64		rbits;
	uint64		total = 0;
	uint32		i;

	if (len < off + BLOOM_FILTER_VARIANT_FIXED_SIZE)
		return BLOOM_FORMAT_TRUNCATED;
	hdr->flags = ReadLE16(data + off);
	hdr->growth = ReadLE16(data + off + 2);
	hdr->nlayers = ReadLE32(data + off + 4);
	rbits = ReadLE64(data + off + 8);
	memcpy(&hdr->tightening, &rbits, sizeof(double));
	hdr->secret_fingerprint = ReadLE64(data + off + 16);

	/* a plain filter is written in format 2, so that it has one encoding */
	if (hdr->flags == 0 || (hdr->flags & ~BLOOM_VARIANT_ALL) != 0)
		return BLOOM_FORMAT_BAD_VARIANT;
	if ((hdr->flags & BLOOM_VARIANT_COUNTING) &&
		(hdr->flags & (BLOOM_VARIANT_GROWING | BLOOM_VARIANT_BLOCKED)))
		return BLOOM_FORMAT_BAD_VARIANT;
	if (hdr->flags & BLOOM_VARIANT_GROWING)
	{
		if (hdr->growth < 1 || hdr->growth > BLOOM_FILTER_MAX_GROWTH ||
			!(hdr->tightening > 0.0 && hdr->tightening < 1.0) ||
			hdr->capacity == 0 ||
			hdr->nlayers < 1 || hdr->nlayers > BLOOM_FILTER_MAX_LAYERS)
			return BLOOM_FORMAT_BAD_VARIANT;
	}
	else if (hdr->growth != 0 || rbits != 0 || hdr->nlayers != 1)
		return BLOOM_FORMAT_BAD_VARIANT;
	if (((hdr->flags & BLOOM_VARIANT_KEYED) != 0) != (hdr->secret_fingerprint != 0))
		return BLOOM_FORMAT_BAD_VARIANT;
	/* a filter gets its type, and later layers, with its first value */
	if (hdr->elemtype == 0 && hdr->nlayers != 1)
		return BLOOM_FORMAT_BAD_LAYERS;

	off += BLOOM_FILTER_VARIANT_FIXED_SIZE;
	if (len < off + (size_t) hdr->nlayers * BLOOM_FILTER_LAYER_SIZE)
		return BLOOM_FORMAT_TRUNCATED;
	for (i = 0; i < hdr->nlayers; i++)
	{
		const uint8 *p = data + off + (size_t) i * BLOOM_FILTER_LAYER_SIZE;
		BloomFilterLayer *layer = &hdr->layers[i];

		layer->nbits = ReadLE64(p);
		layer->nhashes = ReadLE32(p + 8);
		layer->count = ReadLE64(p + 16);
		if (ReadLE32(p + 12) != 0 ||
			layer->nbits < 1 || layer->nbits > BLOOM_FILTER_MAX_NBITS ||
			layer->nhashes < 1 || layer->nhashes > BLOOM_FILTER_MAX_NHASHES)
			return BLOOM_FORMAT_BAD_LAYERS;
		if ((hdr->flags & BLOOM_VARIANT_BLOCKED) &&
			layer->nbits % BLOOM_BLOCK_BITS != 0)
			return BLOOM_FORMAT_BAD_LAYERS;
		if ((hdr->flags & BLOOM_VARIANT_GROWING) ?
			(layer->count > (UINT64CONST(1) << 40) ||
			 (hdr->elemtype == 0 && layer->count != 0)) :
			layer->count != 0)
			return BLOOM_FORMAT_BAD_LAYERS;
		total += BLOOM_LAYER_NBYTES(hdr->flags, layer->nbits);
	}
	if (hdr->layers[0].nbits != hdr->nbits ||
		hdr->layers[0].nhashes != hdr->nhashes ||
		total > BLOOM_FILTER_NBYTES(BLOOM_FILTER_MAX_NBITS))
		return BLOOM_FORMAT_BAD_LAYERS;
	return BLOOM_FORMAT_OK;
}

/*
 * Decode and validate the header of a filter of len bytes, and check that
 * the length matches it.  With check_bits, also check the bits themselves
 * (a linear scan); without, only what can be checked in constant time.
 * On success hdr describes the filter.
 */
BloomFilterFormatError
BloomFilterDecodeHeader(const uint8 *data, size_t len, BloomFilterHeader *hdr,
						bool check_bits)
{
	uint64		fprbits;
	size_t		names_end;
	size_t		expected;
	size_t		i;
	BloomFilterFormatError err;

	memset(hdr, 0, offsetof(BloomFilterHeader, layers));
	hdr->bits_offset = hdr->nbytes = 0;

	if (len < BLOOM_FILTER_FIXED_HEADER_SIZE)
	{
		/* say "wrong magic" rather than "truncated" for short garbage */
		if (len >= 4 && memcmp(data, BLOOM_FILTER_MAGIC, 4) != 0)
			return BLOOM_FORMAT_BAD_MAGIC;
		return BLOOM_FORMAT_TRUNCATED;
	}
	if (memcmp(data, BLOOM_FILTER_MAGIC, 4) != 0)
		return BLOOM_FORMAT_BAD_MAGIC;

	hdr->version = ReadLE16(data + 4);
	if (hdr->version != BLOOM_FILTER_FORMAT_VERSION &&
		hdr->version != BLOOM_FILTER_FORMAT_VARIANT)
		return BLOOM_FORMAT_UNKNOWN_VERSION;

	hdr->hash_scheme = ReadLE16(data + 6);
	if (hdr->hash_scheme != BLOOM_FILTER_HASH_SCHEME &&
		hdr->hash_scheme != BLOOM_FILTER_HASH_SCHEME_LABELS)
		return BLOOM_FORMAT_UNKNOWN_HASH_SCHEME;

	hdr->elemtype = ReadLE32(data + 8);
	hdr->nhashes = ReadLE32(data + 12);
	hdr->nbits = ReadLE64(data + 16);
	hdr->capacity = ReadLE64(data + 24);
	fprbits = ReadLE64(data + 32);
	memcpy(&hdr->target_fpr, &fprbits, sizeof(double));
	hdr->home_sysid = ReadLE64(data + 40);
	hdr->home_dbid = ReadLE32(data + 48);
	hdr->home_typid = ReadLE32(data + 52);
	hdr->nspname_len = data[56];
	hdr->typname_len = data[57];

	if (hdr->nhashes < 1 || hdr->nhashes > BLOOM_FILTER_MAX_NHASHES)
		return BLOOM_FORMAT_BAD_NHASHES;
	if (hdr->nbits < 1 || hdr->nbits > BLOOM_FILTER_MAX_NBITS)
		return BLOOM_FORMAT_BAD_NBITS;

	/* capacity and rate are both unknown, or both valid */
	if (hdr->capacity == 0)
	{
		if (fprbits != 0)
			return BLOOM_FORMAT_BAD_SIZING;
	}
	else if (!(hdr->target_fpr > 0.0 && hdr->target_fpr < 1.0) ||
			 hdr->capacity > (UINT64CONST(1) << 40))
		return BLOOM_FORMAT_BAD_SIZING;

	/*
	 * A home database is recorded in full or not at all, and only for a
	 * filter with an element type; a built-in type's OID is never rewritten
	 * on reading, so it still is the OID it had at home.
	 */
	if (hdr->home_sysid != 0 || hdr->home_dbid != 0 || hdr->home_typid != 0)
	{
		if (hdr->home_sysid == 0 || hdr->home_dbid == 0 ||
			hdr->home_typid == 0 || hdr->elemtype == 0)
			return BLOOM_FORMAT_BAD_HOME;
		if (hdr->elemtype < BLOOM_FILTER_FIRST_UNFIXED_OID &&
			hdr->home_typid != hdr->elemtype)
			return BLOOM_FORMAT_BAD_HOME;
	}

	/*
	 * Hashing by label is given with a type, never a built-in one (no enum
	 * is), and makes the filter the same in every database: no home.
	 */
	if (hdr->hash_scheme == BLOOM_FILTER_HASH_SCHEME_LABELS &&
		(hdr->elemtype < BLOOM_FILTER_FIRST_UNFIXED_OID ||
		 hdr->home_sysid != 0 || hdr->home_dbid != 0 || hdr->home_typid != 0))
		return BLOOM_FORMAT_BAD_SCHEME;

	/* built-in and unset types go by OID alone, others also by name */
	if (hdr->elemtype < BLOOM_FILTER_FIRST_UNFIXED_OID)
	{
		if (hdr->nspname_len != 0 || hdr->typname_len != 0)
			return BLOOM_FORMAT_BAD_TYPE_NAME;
	}
	else
	{
		if (hdr->nspname_len < 1 || hdr->nspname_len > BLOOM_FILTER_MAX_NAME_LEN ||
			hdr->typname_len < 1 || hdr->typname_len > BLOOM_FILTER_MAX_NAME_LEN)
			return BLOOM_FORMAT_BAD_TYPE_NAME;
	}

	names_end = BLOOM_FILTER_FIXED_HEADER_SIZE + hdr->nspname_len +
		hdr->typname_len;
	if (len < names_end)
		return BLOOM_FORMAT_TRUNCATED;

	hdr->nspname = (const char *) data + BLOOM_FILTER_FIXED_HEADER_SIZE;
	hdr->typname = hdr->nspname + hdr->nspname_len;
	for (i = 0; i < (size_t) hdr->nspname_len + hdr->typname_len; i++)
	{
		if (hdr->nspname[i] == '\0')
			return BLOOM_FORMAT_BAD_TYPE_NAME;
	}

	if (hdr->version == BLOOM_FILTER_FORMAT_VARIANT)
	{
		err = DecodeVariant(data, len, names_end, hdr);
		if (err != BLOOM_FORMAT_OK)
			return err;
	}
	else
	{
		hdr->nlayers = 1;
		hdr->layers[0].nbits = hdr->nbits;
		hdr->layers[0].nhashes = hdr->nhashes;
		hdr->layers[0].count = 0;
	}
	BloomFilterLayoutLayers(hdr);
	expected = hdr->bits_offset + hdr->nbytes;

	if (len < expected)
		return BLOOM_FORMAT_TRUNCATED;
	if (len > expected)
		return BLOOM_FORMAT_LENGTH_MISMATCH;

	/* the padding bits (or counter) at the end of each layer are never set */
	for (i = 0; i < hdr->nlayers; i++)
	{
		const BloomFilterLayer *layer = &hdr->layers[i];
		uint8		last = data[layer->offset + layer->nbytes - 1];

		if (hdr->flags & BLOOM_VARIANT_COUNTING)
		{
			if (layer->nbits % 2 != 0 && (last >> 4) != 0)
				return BLOOM_FORMAT_BITS_BEYOND_NBITS;
		}
		else if (layer->nbits % 8 != 0 && (last >> (layer->nbits % 8)) != 0)
			return BLOOM_FORMAT_BITS_BEYOND_NBITS;
	}

	/* a filter gets its type with its first value */
	if (check_bits && hdr->elemtype == 0)
	{
		for (i = hdr->bits_offset; i < expected; i++)
		{
			if (data[i] != 0)
				return BLOOM_FORMAT_UNTYPED_WITH_BITS;
		}
	}

	return BLOOM_FORMAT_OK;
}

/*
 * Write the header described by hdr (fixed part and names) at dst, which
 * has room for BloomFilterHeaderSize(hdr) bytes.
 */
void
BloomFilterEncodeHeader(uint8 *dst, const BloomFilterHeader *hdr)
{
	uint64		fprbits;

	memcpy(dst, BLOOM_FILTER_MAGIC, 4);
	WriteLE16(dst + 4, hdr->version);
	WriteLE16(dst + 6, hdr->hash_scheme);
	WriteLE32(dst + 8, hdr->elemtype);
	WriteLE32(dst + 12, hdr->nhashes);
	WriteLE64(dst + 16, hdr->nbits);
	WriteLE64(dst + 24, hdr->capacity);
	memcpy(&fprbits, &hdr->target_fpr, sizeof(double));
	WriteLE64(dst + 32, fprbits);
	WriteLE64(dst + 40, hdr->home_sysid);
	WriteLE32(dst + 48, hdr->home_dbid);
	WriteLE32(dst + 52, hdr->home_typid);
	dst[56] = hdr->nspname_len;
	dst[57] = hdr->typname_len;
	if (hdr->nspname_len > 0)
		memcpy(dst + BLOOM_FILTER_FIXED_HEADER_SIZE, hdr->nspname,
			   hdr->nspname_len);
	if (hdr->typname_len > 0)
		memcpy(dst + BLOOM_FILTER_FIXED_HEADER_SIZE + hdr->nspname_len,
			   hdr->typname, hdr->typname_len);
	if (hdr->version == BLOOM_FILTER_FORMAT_VARIANT)
	{
		uint8	   *p = dst + BLOOM_FILTER_FIXED_HEADER_SIZE +
			hdr->nspname_len + hdr->typname_len;
		uint64		rbits;
		uint32		i;

		WriteLE16(p, hdr->flags);
		WriteLE16(p + 2, hdr->growth);
		WriteLE32(p + 4, hdr->nlayers);
		memcpy(&rbits, &hdr->tightening, sizeof(double));
		WriteLE64(p + 8, rbits);
		WriteLE64(p + 16, hdr->secret_fingerprint);
		p += BLOOM_FILTER_VARIANT_FIXED_SIZE;
		for (i = 0; i < hdr->nlayers; i++, p += BLOOM_FILTER_LAYER_SIZE)
		{
			WriteLE64(p, hdr->layers[i].nbits);
			WriteLE32(p + 8, hdr->layers[i].nhashes);
			WriteLE32(p + 12, 0);
			WriteLE64(p + 16, hdr->layers[i].count);
		}
	}
}

/*
 * One-line description of a format error, for error details.
 */
const char *
BloomFilterFormatErrorMessage(BloomFilterFormatError err)
{
	switch (err)
	{
		case BLOOM_FORMAT_OK:
			return "valid";
		case BLOOM_FORMAT_TRUNCATED:
			return "the data is truncated";
		case BLOOM_FORMAT_BAD_MAGIC:
			return "the data does not start with the bloom filter magic number";
		case BLOOM_FORMAT_UNKNOWN_VERSION:
			return "the format version is unknown";
		case BLOOM_FORMAT_UNKNOWN_HASH_SCHEME:
			return "the hash scheme is unknown";
		case BLOOM_FORMAT_BAD_NHASHES:
			return "the number of hash functions is out of range";
		case BLOOM_FORMAT_BAD_NBITS:
			return "the number of bits is out of range";
		case BLOOM_FORMAT_BAD_SIZING:
			return "the capacity and target false-positive rate are inconsistent";
		case BLOOM_FORMAT_BAD_TYPE_NAME:
			return "the element type name is invalid";
		case BLOOM_FORMAT_BAD_HOME:
			return "the home database is inconsistent";
		case BLOOM_FORMAT_LENGTH_MISMATCH:
			return "the data is longer than its number of bits requires";
		case BLOOM_FORMAT_BITS_BEYOND_NBITS:
			return "bits beyond the number of bits are set";
		case BLOOM_FORMAT_UNTYPED_WITH_BITS:
			return "bits are set but no element type is recorded";
		case BLOOM_FORMAT_BAD_VARIANT:
			return "the variant part is inconsistent";
		case BLOOM_FORMAT_BAD_LAYERS:
			return "the layers are inconsistent";
		case BLOOM_FORMAT_BAD_SCHEME:
			return "the hash scheme does not fit the element type or the home database";
	}
	return "unknown error";
}

/*
 * Value of one hex digit, or -1.
 */
static inline int
HexValue(char c)
{
	if (c >= '0' && c <= '9')
		return c - '0';
	if (c >= 'a' && c <= 'f')
		return c - 'a' + 10;
	if (c >= 'A' && c <= 'F')
		return c - 'A' + 10;
	return -1;
}

/*
 * Decode len hex digits (len even) into len / 2 bytes at dst; false if a
 * character is not a hex digit or len is odd.
 */
bool
BloomFilterHexDecode(const char *src, size_t len, uint8 *dst)
{
	size_t		i;

	if (len % 2 != 0)
		return false;
	for (i = 0; i < len; i += 2)
	{
		int			hi = HexValue(src[i]);
		int			lo = HexValue(src[i + 1]);

		if (hi < 0 || lo < 0)
			return false;
		*dst++ = (uint8) ((hi << 4) | lo);
	}
	return true;
}
