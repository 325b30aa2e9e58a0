/*-------------------------------------------------------------------------
 *
 * signature.c
 *	  Hashing and bit counting shared by the index and the filter type.
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
