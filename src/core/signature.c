/*-------------------------------------------------------------------------
 *
 * signature.c
 *	  Hashing and bit counting shared by the index and the filter type.
 *
 * Copyright (c) 2026, bloomidx contributors
 *
 * IDENTIFICATION
 *	  src/core/signature.c
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include <math.h>

#include "port/pg_bitutils.h"
#include "signature.h"

/*
 * Hash a non-NULL value with its type's extended hash support function,
 * under the given collation, so that values equal under the type's "="
 * operator hash equally.
 */
uint64
BloomHashDatum(FmgrInfo *hashproc, Oid collation, Datum value)
{
	return DatumGetUInt64(FunctionCall2Coll(hashproc, collation, value,
											UInt64GetDatum(BLOOM_HASH_SEED)));
}

/*
 * Count the bits set in a byte array.
 */
uint64
BloomCountBits(const uint8 *bits, Size nbytes)
{
	return pg_popcount((const char *) bits, nbytes);
}

/*
 * Probability that k probes all land on set bits when a fraction fill of the
 * bits is set: the false-positive rate of a test for one absent value.
 */
double
BloomFalsePositiveRate(double fill, double k)
{
	if (fill <= 0.0)
		return 0.0;
	if (fill >= 1.0)
		return 1.0;
	return pow(fill, k);
}

/*
 * Expected fraction of m bits set after nkeys keys of k bits each were
 * added: 1 - (1 - 1/m)^(k * nkeys).
 */
double
BloomExpectedFill(double m, double nkeys, double k)
{
	if (m <= 0.0 || nkeys <= 0.0 || k <= 0.0)
		return 0.0;
	return -expm1(k * nkeys * log1p(-1.0 / m));
}

/*
 * SipHash-2-4 (Aumasson and Bernstein) of one 64-bit word m (as its 8
 * little-endian bytes) under the 128-bit key k0, k1: a keyed hash whose
 * output cannot be predicted without the key.  Keyed bloom filters place a
 * value by the SipHash of its 64-bit hash, so that crafted values cannot
 * be chosen to land on the same bits.
 */
#define SIPROUND \
	do { \
		v0 += v1; v1 = pg_rotate_left64(v1, 13); v1 ^= v0; v0 = pg_rotate_left64(v0, 32); \
		v2 += v3; v3 = pg_rotate_left64(v3, 16); v3 ^= v2; \
		v0 += v3; v3 = pg_rotate_left64(v3, 21); v3 ^= v0; \
		v2 += v1; v1 = pg_rotate_left64(v1, 17); v1 ^= v2; v2 = pg_rotate_left64(v2, 32); \
	} while (0)

static inline uint64
pg_rotate_left64(uint64 x, int n)
{
	return (x << n) | (x >> (64 - n));
}

uint64
BloomSipHash64(uint64 k0, uint64 k1, uint64 m)
{
	uint64		v0 = k0 ^ UINT64CONST(0x736f6d6570736575);
	uint64		v1 = k1 ^ UINT64CONST(0x646f72616e646f6d);
	uint64		v2 = k0 ^ UINT64CONST(0x6c7967656e657261);
	uint64		v3 = k1 ^ UINT64CONST(0x7465646279746573);
	uint64		b = ((uint64) 8) << 56;	/* message length 8, no tail */

	v3 ^= m;
	SIPROUND;
	SIPROUND;
	v0 ^= m;
	v3 ^= b;
	SIPROUND;
	SIPROUND;
	v0 ^= b;
	v2 ^= 0xff;
	SIPROUND;
	SIPROUND;
	SIPROUND;
	SIPROUND;
	return v0 ^ v1 ^ v2 ^ v3;
}
