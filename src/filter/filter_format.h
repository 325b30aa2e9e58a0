/*-------------------------------------------------------------------------
 *
 * filter_format.h
 *	  The portable byte format of the bloomfilter type.
 *
 * A bloomfilter value is stored, sent, received and cast to bytea as the
 * same byte string, fixed little-endian on every platform:
 *
 *	offset	size	field
 *	0		4		magic "BLMF"
 *	4		2		format version (2)
 *	6		2		hash scheme: 1 (BLOOM_HASH_SCHEME of signature.h), or 2,
 *					scheme 1 with enum values hashed by their labels
 *	8		4		element type OID, 0 while no value was added
 *	12		4		number of hash functions k, 1 .. BLOOM_FILTER_MAX_NHASHES
 *	16		8		number of bits m, 1 .. BLOOM_FILTER_MAX_NBITS
 *	24		8		capacity the filter was sized for, 0 if unknown
 *	32		8		target false-positive rate (IEEE 754 binary64), 0 if
 *					unknown
 *	40		8		home database: system identifier of its cluster, or 0
 *	48		4		home database: its OID, or 0
 *	52		4		home database: the element type's OID there, or 0
 *	56		1		length of the element type's schema name
 *	57		1		length of the element type's name
 *	58		...		schema name, then type name (no terminating zeros)
 *	...		m/8		the bits: bit p in byte p / 8 at bit p % 8
 *
 * Types with OIDs below BLOOM_FILTER_FIRST_UNFIXED_OID (the built-in
 * types) have the same OID on every server, and are stored by OID alone,
 * with empty names.  Any other type is stored by OID and by schema and type
 * name; reading such a filter resolves the name to the local type.
 *
 * The stored names are those the type had when the filter got it; the
 * text and binary output write the type's current schema and name instead
 * (looked up by the OID at offset 8), so that a filter dumped after the
 * type or its schema was renamed reads back where the dump is restored.
 *
 * Hash scheme 2 is scheme 1 but for enums: a value of an enum, of a domain
 * over one, or of an array of those, is hashed by its label, as text with a
 * deterministic collation would hash the label, where scheme 1 hashes the
 * label's OID (local to a database).  A filter of scheme 2 has an element
 * type that is not built in (enums never are) and no home database.  New
 * filters of enums are of scheme 2, all others of scheme 1, as untyped
 * filters are until they get their type.
 *
 * The home database is recorded only by filters of scheme 1 built before
 * scheme 2 existed, for element types whose hash depends on OIDs local to a
 * database: enums hash their labels' OIDs, reg* types and aclitem the OIDs
 * of the objects they name, and arrays, ranges, multiranges, domains and
 * composite types containing any of these hash through them.  (No new
 * filter of such a type is built, but those of enums, of scheme 2.)  Such a
 * filter answers right only in the database that built it, and only while
 * its element type is the type it was built with (reading a filter
 * rewrites the OID at offset 8 to the local type of that name, never the
 * one at offset 52).  The server reads such a filter anywhere, but refuses
 * to probe, extend or combine it elsewhere, and to output it at all.  The
 * three fields are all zero (no home: the filter answers the same in every
 * database) or all nonzero.
 *
 * Format 3 is format 2 (version 3 at offset 4) followed, after the names,
 * by a variant part, and is used only for the filter variants; a plain
 * filter is always written in format 2.  The fixed header's nbits and
 * nhashes are those of the first layer, its capacity and rate those the
 * filter was created with (required for a growing filter).
 *
 *	offset	size	field (from the end of the names)
 *	0		2		variant flags (BLOOM_VARIANT_*), at least one
 *	2		2		growing: growth factor 1 .. BLOOM_FILTER_MAX_GROWTH, else 0
 *	4		4		number of layers: growing 1 .. BLOOM_FILTER_MAX_LAYERS,
 *					else 1
 *	8		8		growing: tightening ratio r of the layers' rates, 0 < r < 1
 *					(IEEE 754 binary64), else 0
 *	16		8		keyed: fingerprint of the secret (SipHash-2-4 of a
 *					constant under it; never the secret), nonzero;
 *					else 0
 *	24		24 * L	per layer: nbits (8), nhashes (4), zero (4), values
 *					added to it (8; growing filters only, else 0)
 *	...		...		each layer's cells in turn: m/8 bytes of bits, or for a
 *					counting filter m/2 bytes of 4-bit counters (counter c
 *					in byte c / 2, low nibble for even c)
 *
 * A blocked filter keeps all of a value's bits in one 512-bit block, so its
 * layers' nbits are multiples of 512.  A counting filter has one layer and
 * is neither growing nor blocked.
 *
 * This file has no backend dependencies, so that the decoder can be fuzzed
 * outside the server (fuzz/filter_fuzz.c).
 *
 * Copyright (c) 2026, bloomidx contributors
 *
 * IDENTIFICATION
 *	  src/filter/filter_format.h
 *
 *-------------------------------------------------------------------------
 */
#ifndef BLOOMIDX_FILTER_FORMAT_H
#define BLOOMIDX_FILTER_FORMAT_H

#define BLOOM_FILTER_MAGIC				"BLMF"
#define BLOOM_FILTER_FORMAT_VERSION		2
#define BLOOM_FILTER_HASH_SCHEME		1	/* must equal BLOOM_HASH_SCHEME */
#define BLOOM_FILTER_HASH_SCHEME_LABELS	2	/* scheme 1, enums by label */
#define BLOOM_FILTER_FIXED_HEADER_SIZE	58
#define BLOOM_FILTER_MAX_NAME_LEN		63	/* NAMEDATALEN - 1 */
#define BLOOM_FILTER_FORMAT_VARIANT		3	/* format 2 and a variant part */
#define BLOOM_FILTER_VARIANT_FIXED_SIZE	24
#define BLOOM_FILTER_LAYER_SIZE			24
#define BLOOM_FILTER_MAX_LAYERS			32
#define BLOOM_FILTER_MAX_GROWTH			16
#define BLOOM_FILTER_MAX_HEADER_SIZE \
	(BLOOM_FILTER_FIXED_HEADER_SIZE + 2 * BLOOM_FILTER_MAX_NAME_LEN + \
	 BLOOM_FILTER_VARIANT_FIXED_SIZE + \
	 BLOOM_FILTER_MAX_LAYERS * BLOOM_FILTER_LAYER_SIZE)

/* Variant flags of format 3 */
#define BLOOM_VARIANT_GROWING			0x0001	/* scalable: layers added */
#define BLOOM_VARIANT_COUNTING			0x0002	/* 4-bit counters */
#define BLOOM_VARIANT_BLOCKED			0x0004	/* one 512-bit block a value */
#define BLOOM_VARIANT_KEYED				0x0008	/* positions depend on a secret */
#define BLOOM_VARIANT_ALL				0x000F

/* Bits of one block of a blocked filter: a 64-byte cache line */
#define BLOOM_BLOCK_BITS				512
/* Largest value of a counting filter's 4-bit counter; it then sticks */
#define BLOOM_COUNTER_MAX				15

/* 256 MB of bits */
#define BLOOM_FILTER_MAX_NBITS			(UINT64CONST(256) * 1024 * 1024 * 8)
#define BLOOM_FILTER_MAX_NHASHES		64
/* must equal FirstGenbkiObjectId */
#define BLOOM_FILTER_FIRST_UNFIXED_OID	10000

/* One layer of a filter: all of a plain filter, one of a growing filter */
typedef struct BloomFilterLayer
{
	uint64		nbits;			/* bits, or counters of a counting filter */
	uint32		nhashes;
	uint64		count;			/* values added (growing filters), or 0 */
	size_t		offset;			/* where its cells start in the bytes */
	size_t		nbytes;			/* length of its cells */
} BloomFilterLayer;

/* Decoded header of a filter; the names point into the decoded bytes */
typedef struct BloomFilterHeader
{
	uint16		version;
	uint16		hash_scheme;
	uint32		elemtype;		/* element type OID, 0 if none yet */
	uint32		nhashes;
	uint64		nbits;
	uint64		capacity;		/* 0 if unknown */
	double		target_fpr;		/* 0 if unknown */
	uint64		home_sysid;		/* home database's system identifier, or 0 */
	uint32		home_dbid;		/* home database's OID, or 0 */
	uint32		home_typid;		/* element type's OID there, or 0 */
	uint8		nspname_len;
	uint8		typname_len;
	const char *nspname;		/* not zero-terminated */
	const char *typname;		/* not zero-terminated */
	/* format 3 only; a format-2 filter has flags 0 and one layer */
	uint16		flags;			/* BLOOM_VARIANT_* */
	uint16		growth;
	double		tightening;
	uint64		secret_fingerprint;
	uint32		nlayers;
	BloomFilterLayer layers[BLOOM_FILTER_MAX_LAYERS];
	size_t		bits_offset;	/* where the cells (of all layers) start */
	size_t		nbytes;			/* length of the cells of all layers */
} BloomFilterHeader;

/* What is wrong with a byte string that is not a valid filter */
typedef enum BloomFilterFormatError
{
	BLOOM_FORMAT_OK = 0,
	BLOOM_FORMAT_TRUNCATED,
	BLOOM_FORMAT_BAD_MAGIC,
	BLOOM_FORMAT_UNKNOWN_VERSION,
	BLOOM_FORMAT_UNKNOWN_HASH_SCHEME,
	BLOOM_FORMAT_BAD_NHASHES,
	BLOOM_FORMAT_BAD_NBITS,
	BLOOM_FORMAT_BAD_SIZING,
	BLOOM_FORMAT_BAD_TYPE_NAME,
	BLOOM_FORMAT_BAD_HOME,
	BLOOM_FORMAT_LENGTH_MISMATCH,
	BLOOM_FORMAT_BITS_BEYOND_NBITS,
	BLOOM_FORMAT_UNTYPED_WITH_BITS,
	BLOOM_FORMAT_BAD_VARIANT,
	BLOOM_FORMAT_BAD_LAYERS,
	BLOOM_FORMAT_BAD_SCHEME
} BloomFilterFormatError;

/* Byte length of the bit array of a filter of nbits bits */
#define BLOOM_FILTER_NBYTES(nbits)	((size_t) (((nbits) + 7) / 8))
/* Byte length of the cells of one layer of nbits positions */
#define BLOOM_LAYER_NBYTES(flags, nbits) \
	(((flags) & BLOOM_VARIANT_COUNTING) ? (size_t) (((nbits) + 1) / 2) : \
	 BLOOM_FILTER_NBYTES(nbits))

extern BloomFilterFormatError BloomFilterDecodeHeader(const uint8 *data,
													  size_t len,
													  BloomFilterHeader *hdr,
													  bool check_bits);
extern size_t BloomFilterHeaderSize(const BloomFilterHeader *hdr);
extern void BloomFilterEncodeHeader(uint8 *dst, const BloomFilterHeader *hdr);
extern void BloomFilterLayoutLayers(BloomFilterHeader *hdr);
extern const char *BloomFilterFormatErrorMessage(BloomFilterFormatError err);
extern bool BloomFilterHexDecode(const char *src, size_t len, uint8 *dst);

#endif							/* BLOOMIDX_FILTER_FORMAT_H */
