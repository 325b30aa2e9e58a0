/*-------------------------------------------------------------------------
 *
 * signature.h
 *	  Hashing and bit math shared by the bloomidx index and the
 *	  bloomfilter SQL type.
 *
 * A value is hashed once with its type's 64-bit extended hash support
 * function (so equal values under the type's "=" hash equally), then the
 * k bit positions are derived from that one hash, salted with the column
 * number, by a multiplicative sequence (see BloomProbe).  Bit p of a bit array lives in byte p / 8
 * at bit p % 8, on every platform: bit arrays are portable byte strings.
 *
 * The hash scheme below is frozen: on-disk indexes and stored filters
 * depend on it.  A change needs a new BLOOM_HASH_SCHEME number.
 *
 * Copyright (c) 2026, bloomidx contributors
 *
 * IDENTIFICATION
 *	  src/core/signature.h
 *
 *-------------------------------------------------------------------------
 */
#ifndef BLOOMIDX_SIGNATURE_H
#define BLOOMIDX_SIGNATURE_H

#include "fmgr.h"
#include "port/pg_bswap.h"

/* Identifies the scheme implemented here; stored in metapages and filters */
#define BLOOM_HASH_SCHEME		1

/* Seed passed to the types' extended hash functions */
#define BLOOM_HASH_SEED			UINT64CONST(0)

/* Stand-in hash of a NULL; salted per column like any value */
#define BLOOM_NULL_HASH			UINT64CONST(0x4e554c4c4e554c4c)

/* Odd constant spreading the column salt over the hash */
#define BLOOM_SALT_MULTIPLIER	UINT64CONST(0x9e3779b97f4a7c15)

/*
 * Final mixer of splitmix64: a bijection with full avalanche, used to turn
 * the salted type hash into two independent-looking 64-bit values.
 */
static inline uint64
BloomMix64(uint64 x)
{
	x ^= x >> 30;
	x *= UINT64CONST(0xbf58476d1ce4e5b9);
	x ^= x >> 27;
	x *= UINT64CONST(0x94d049bb133111eb);
	x ^= x >> 31;
	return x;
}

/*
 * High 64 bits of a 64x64-bit product: maps a uniform 64-bit value onto
 * [0, n) without a division.  The portable branch gives the same result.
 */
static inline uint64
BloomMulHigh64(uint64 a, uint64 b)
{
#ifdef HAVE_INT128
	return (uint64) (((uint128) a * b) >> 64);
#else
	uint64		alo = a & 0xffffffff,
				ahi = a >> 32,
				blo = b & 0xffffffff,
				bhi = b >> 32;
	uint64		lo = alo * blo,
				mid1 = ahi * blo,
				mid2 = alo * bhi,
				hi = ahi * bhi;
	uint64		carry = ((lo >> 32) + (mid1 & 0xffffffff) + (mid2 & 0xffffffff)) >> 32;

	return hi + (mid1 >> 32) + (mid2 >> 32) + carry;
#endif
}

/*
 * Iterator over the k bit positions of one (hash, salt) pair in an array of
 * nbits bits.  Usage:
 *
 *		BloomProbe	probe;
 *		BloomProbeInit(&probe, hash, salt, nbits);
 *		for (i = 0; i < k; i++)
 *			pos = BloomProbeNext(&probe);
 *
 * The salted hash is mixed into an odd 64-bit x; the positions are the top
 * bits (multiply-shift onto [0, nbits)) of x, x * C, x * C^2, ...  Classic
 * double hashing (x + i * y) is no good with multiply-shift on short arrays:
 * its positions form an arithmetic progression that often folds onto a few
 * bits, which measured 1.1% false positives on one column of a six-column
 * 64-bit signature where independent positions give 0.7% (and 0.12% against
 * 0.006% at 128 bits).  A multiplicative sequence costs one multiply per
 * position too and is within a few percent of independent positions.
 */
typedef struct BloomProbe
{
	uint64		x;				/* current multiplicative value, odd */
	uint64		nbits;			/* size of the bit array */
} BloomProbe;

/* Odd multiplier of the probe sequence (an LCG multiplier of good spectrum) */
#define BLOOM_PROBE_MULTIPLIER	UINT64CONST(0xd1342543de82ef95)

/* The salted mix of (hash, salt) that starts its probe sequence */
static inline uint64
BloomColumnMix(uint64 hash, uint32 salt)
{
	return BloomMix64(hash + ((uint64) salt + 1) * BLOOM_SALT_MULTIPLIER);
}

/* Start the probe sequence from BloomColumnMix(hash, salt) */
static inline void
BloomProbeInitMixed(BloomProbe *probe, uint64 mixed, uint64 nbits)
{
	probe->x = mixed | 1;
	probe->nbits = nbits;
}

static inline void
BloomProbeInit(BloomProbe *probe, uint64 hash, uint32 salt, uint64 nbits)
{
	BloomProbeInitMixed(probe, BloomColumnMix(hash, salt), nbits);
}

static inline uint64
BloomProbeNext(BloomProbe *probe)
{
	uint64		pos = BloomMulHigh64(probe->x, probe->nbits);

	probe->x *= BLOOM_PROBE_MULTIPLIER;
	return pos;
}

/* Set bit pos of a byte-addressed bit array */
static inline void
BloomSetBit(uint8 *bits, uint64 pos)
{
	bits[pos >> 3] |= (uint8) (1 << (pos & 7));
}

/* Test bit pos of a byte-addressed bit array */
static inline bool
BloomTestBit(const uint8 *bits, uint64 pos)
{
	return (bits[pos >> 3] >> (pos & 7)) & 1;
}

/*
 * Load 64 bits of a bit array starting at byte offset p as a word whose bit
 * i is bit array bit (8 * p + i), on any byte order.
 */
static inline uint64
BloomLoadWord(const uint8 *p)
{
	uint64		w;

	memcpy(&w, p, sizeof(w));
#ifdef WORDS_BIGENDIAN
	w = pg_bswap64(w);
#endif
	return w;
}

/* The inverse of BloomLoadWord: store w as bits 8 * p .. 8 * p + 63 */
static inline void
BloomStoreWord(uint8 *p, uint64 w)
{
#ifdef WORDS_BIGENDIAN
	w = pg_bswap64(w);
#endif
	memcpy(p, &w, sizeof(w));
}

/*
 * Store 64-bit words (bit i of word w is bit 64 * w + i) into the first
 * nbytes bytes of a bit array, on any byte order.
 */
static inline void
BloomStoreWords(uint8 *bits, const uint64 *words, Size nbytes)
{
	Size		off;

	for (off = 0; off + sizeof(uint64) <= nbytes; off += sizeof(uint64))
	{
		uint64		w = words[off / sizeof(uint64)];

#ifdef WORDS_BIGENDIAN
		w = pg_bswap64(w);
#endif
		memcpy(bits + off, &w, sizeof(w));
	}
	if (off < nbytes)
	{
		uint64		w = words[off / sizeof(uint64)];
		Size		i;

		for (i = 0; off + i < nbytes; i++)
			bits[off + i] = (uint8) (w >> (8 * i));
	}
}

/* Set the k bits of (hash, salt) in a byte-addressed bit array */
static inline void
BloomSetBits(uint8 *bits, uint64 nbits, uint64 hash, uint32 salt, int k)
{
	BloomProbe	probe;

	BloomProbeInit(&probe, hash, salt, nbits);
	while (k-- > 0)
		BloomSetBit(bits, BloomProbeNext(&probe));
}

/* Are all k bits of (hash, salt) set in a byte-addressed bit array? */
static inline bool
BloomTestBits(const uint8 *bits, uint64 nbits, uint64 hash, uint32 salt, int k)
{
	BloomProbe	probe;

	BloomProbeInit(&probe, hash, salt, nbits);
	while (k-- > 0)
	{
		if (!BloomTestBit(bits, BloomProbeNext(&probe)))
			return false;
	}
	return true;
}

/* Set the k bits of (hash, salt) in a mask of 64-bit words */
static inline void
BloomSetMaskBits(uint64 *mask, uint64 nbits, uint64 hash, uint32 salt, int k)
{
	BloomProbe	probe;

	BloomProbeInit(&probe, hash, salt, nbits);
	while (k-- > 0)
	{
		uint64		pos = BloomProbeNext(&probe);

		mask[pos >> 6] |= UINT64CONST(1) << (pos & 63);
	}
}

/*
 * Blocked filters (the bloomfilter type's blocked variant): all k positions
 * of a value lie in one 512-bit block (a 64-byte cache line), so that a
 * probe touches one line.  The block is chosen by multiply-shift of the
 * mixed hash onto [0, nblocks); the positions within it are the top 9 bits
 * of a second mixed value, x, x * C, x * C^2, ... as in BloomProbeNext.
 */
#define BLOOM_BLOCK_SHIFT		9	/* log2 of the block's bits */

/* First bit of the block of (hash, salt) in an array of nbits bits */
static inline uint64
BloomBlockStart(uint64 hash, uint32 salt, uint64 nbits)
{
	uint64		x = BloomMix64(hash + ((uint64) salt + 1) * BLOOM_SALT_MULTIPLIER);

	return BloomMulHigh64(x, nbits >> BLOOM_BLOCK_SHIFT) << BLOOM_BLOCK_SHIFT;
}

/* Odd start of the position sequence within the block of (hash, salt) */
static inline uint64
BloomBlockProbeInit(uint64 hash, uint32 salt)
{
	return BloomMix64(hash ^ (((uint64) salt + 1) * BLOOM_PROBE_MULTIPLIER)) | 1;
}

/* Set the k bits of (hash, salt) in a blocked bit array */
static inline void
BloomSetBitsBlocked(uint8 *bits, uint64 nbits, uint64 hash, uint32 salt, int k)
{
	uint64		start = BloomBlockStart(hash, salt, nbits);
	uint64		x = BloomBlockProbeInit(hash, salt);

	while (k-- > 0)
	{
		BloomSetBit(bits, start + (x >> (64 - BLOOM_BLOCK_SHIFT)));
		x *= BLOOM_PROBE_MULTIPLIER;
	}
}

/*
 * Are all k bits of (hash, salt) set in its block, which starts at byte
 * block (bits + BloomBlockStart(...) / 8)?
 */
static inline bool
BloomTestBlockBits(const uint8 *block, uint64 hash, uint32 salt, int k)
{
	uint64		x = BloomBlockProbeInit(hash, salt);

	while (k-- > 0)
	{
		uint64		pos = x >> (64 - BLOOM_BLOCK_SHIFT);

		if (!((block[pos >> 3] >> (pos & 7)) & 1))
			return false;
		x *= BLOOM_PROBE_MULTIPLIER;
	}
	return true;
}

/* Are all k bits of (hash, salt) set in a blocked bit array? */
static inline bool
BloomTestBitsBlocked(const uint8 *bits, uint64 nbits, uint64 hash, uint32 salt,
					 int k)
{
	uint64		start = BloomBlockStart(hash, salt, nbits);

	return BloomTestBlockBits(bits + (start >> 3), hash, salt, k);
}

/* 64-bit hash of a non-NULL datum with a type's extended hash function */
extern uint64 BloomHashDatum(FmgrInfo *hashproc, Oid collation, Datum value);

/* SipHash-2-4 of one 64-bit word under a 128-bit key (keyed filters) */
extern uint64 BloomSipHash64(uint64 k0, uint64 k1, uint64 m);

/* Number of bits set in a byte array */
extern uint64 BloomCountBits(const uint8 *bits, Size nbytes);

/* Expected false-positive rate of k probes into an array with fill f */
extern double BloomFalsePositiveRate(double fill, double k);

/* Expected fill of m bits after inserting nkeys keys of k bits each */
extern double BloomExpectedFill(double m, double nkeys, double k);

/*
 * Hints that the line holding p will soon be read, or written.  Only
 * hints: a compiler without the builtin reads nothing ahead, and answers
 * do not change.
 */
#if defined(__GNUC__) || defined(__clang__)
#define BloomPrefetch(p)		__builtin_prefetch((p), 0, 3)
#define BloomPrefetchWrite(p)	__builtin_prefetch((p), 1)
#else
#define BloomPrefetch(p)		((void) (p))
#define BloomPrefetchWrite(p)	((void) (p))
#endif

#endif							/* BLOOMIDX_SIGNATURE_H */
