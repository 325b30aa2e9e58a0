/*-------------------------------------------------------------------------
 *
 * filter_keyed.c
 *	  Keyed bloom filters: bit positions that depend on a secret.
 *
 * Anyone who knows the hash of an unkeyed filter can search for values that
 * all land on a few bits, and make the filter answer "maybe" to anything.
 * A keyed filter places a value by SipHash-2-4, under the user's 16-byte
 * secret (the SQL functions' argument "key"), of the value's 64-bit hash,
 * so that positions cannot be predicted without the secret.  The filter
 * stores only a fingerprint of the secret (the SipHash of a constant under
 * it), never the secret: a probe, addition or combination under another
 * secret, or none, is refused.  The secret never appears in a message.
 * Keyed is a modifier: a keyed filter's cells are those of a plain one, its
 * values' hashes keyed (BloomKeyedHash).  The SQL functions that take a
 * secret are here; the shared functions reach secrets through the variant
 * table (BloomSecretFromBytea, BloomCheckSecret and BloomFilterSecretHashes
 * of filter_variant.c), keying a batch of hashes at a time.
 *
 * Copyright (c) 2026, bloomidx contributors
 *
 * IDENTIFICATION
 *	  src/filter/variant/filter_keyed.c
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include "fmgr.h"

#include "filter_variant.h"
#include "signature.h"

PG_FUNCTION_INFO_V1(bloom_empty_keyed);
PG_FUNCTION_INFO_V1(bloom_add_keyed);
PG_FUNCTION_INFO_V1(bloom_contains_keyed);
PG_FUNCTION_INFO_V1(bloom_contains_array_keyed);
PG_FUNCTION_INFO_V1(bloom_contains_any_keyed);
PG_FUNCTION_INFO_V1(bloom_contains_all_keyed);

/* Message whose SipHash under the secret is its fingerprint: "bloomkey" */
#define BLOOM_SECRET_FINGERPRINT_MESSAGE	UINT64CONST(0x79656b6d6f6f6c62)

/*
 * Derive the SipHash words (k0, k1) and fingerprint of a secret given as
 * 16 bytes.
 */
static void
BloomKeyedMakeSecret(bytea *bytes, BloomSecret *out)
{
	const uint8 *p = (const uint8 *) VARDATA_ANY(bytes);
	int			i;

	if (VARSIZE_ANY_EXHDR(bytes) != BLOOM_SECRET_LEN)
		ereport(ERROR,
				(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
				 errmsg("bloom filter key must be %d bytes", BLOOM_SECRET_LEN),
				 errhint("Use %d random bytes kept secret, such as gen_random_bytes(%d) of pgcrypto.",
						 BLOOM_SECRET_LEN, BLOOM_SECRET_LEN)));
	out->k0 = out->k1 = 0;
	for (i = 7; i >= 0; i--)
	{
		out->k0 = (out->k0 << 8) | p[i];
		out->k1 = (out->k1 << 8) | p[8 + i];
	}
	out->fingerprint = BloomSipHash64(out->k0, out->k1,
									  BLOOM_SECRET_FINGERPRINT_MESSAGE);
	/* zero means "not keyed" in the format */
	if (out->fingerprint == 0)
		out->fingerprint = 1;
}

/*
 * Error out unless the secret given (NULL: none) is that of a keyed filter.
 */
static void
BloomKeyedCheckSecret(const BloomFilterHeader *hdr, const BloomSecret *secret)
{
	if (secret == NULL)
		ereport(ERROR,
				(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
				 errmsg("bloom filter is keyed"),
				 errhint("Pass the filter's key, as in bloom_contains(filter, value, key).")));
	if (hdr->secret_fingerprint != secret->fingerprint)
		ereport(ERROR,
				(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
				 errmsg("key does not match the bloom filter's key"),
				 errhint("Use the key the filter was created with.")));
}

/*
 * The keyed hash of a value's 64-bit hash.
 */
static inline uint64
BloomKeyedHash(const BloomSecret *secret, uint64 hash)
{
	return BloomSipHash64(secret->k0, secret->k1, hash);
}

/*
 * Key the hashes[0 .. n - 1] of values in place, under the secret.
 */
static void
BloomKeyedHashes(const BloomSecret *secret, uint64 *hashes, int n)
{
	int			i;

	for (i = 0; i < n; i++)
		hashes[i] = BloomKeyedHash(secret, hashes[i]);
}

/*
 * Was a keyed filter asked for?
 */
static bool
BloomKeyedChosen(const BloomVariantOptions *opts)
{
	return opts->secret != NULL;
}

/*
 * The secret's fingerprint in the header of a new keyed filter.
 */
static void
BloomKeyedInitHeader(BloomFilterHeader *hdr, const BloomVariantOptions *opts)
{
	hdr->secret_fingerprint = opts->secret->fingerprint;
}

const BloomVariantRoutine BloomKeyedVariant = {
	.name = "keyed",
	.flag = BLOOM_VARIANT_KEYED,
	.modifier = true,
	.chosen = BloomKeyedChosen,
	.initheader = BloomKeyedInitHeader,
	.makesecret = BloomKeyedMakeSecret,
	.checksecret = BloomKeyedCheckSecret,
	.secrethashes = BloomKeyedHashes,
};

/*
 * bloom_empty(capacity, false_positive_rate, key): an empty keyed filter.
 */
Datum
bloom_empty_keyed(PG_FUNCTION_ARGS)
{
	BloomFilterHeader hdr;
	BloomVariantOptions opts = {0};
	BloomSecret	secret;

	BloomKeyedMakeSecret(PG_GETARG_BYTEA_PP(2), &secret);
	opts.secret = &secret;
	BloomHeaderInitVariant(&hdr, PG_GETARG_INT64(0), PG_GETARG_FLOAT8(1),
						   &opts);
	PG_RETURN_BYTEA_P(BloomFilterAllocate(CurrentMemoryContext, &hdr));
}

/*
 * bloom_add(filter, value, key): a copy of a keyed filter with the value
 * added.
 */
Datum
bloom_add_keyed(PG_FUNCTION_ARGS)
{
	BloomFnCache *cache = BloomGetFnCache(fcinfo, 1, false);
	BloomFilterData f;
	BloomSecret	secret;
	bytea	   *out;

	BloomKeyedMakeSecret(PG_GETARG_BYTEA_PP(2), &secret);
	BloomFilterOpen(PG_GETARG_BYTEA_PP(0), &f);
	BloomCheckSecret(&f.hdr, &secret);
	BloomCheckValueType(f.hdr.elemtype, cache->elemtype, true);
	BloomCheckHome(&f.hdr, cache->hashing);

	out = BloomFilterTyped(CurrentMemoryContext, &f, cache);
	BloomFilterOpen(out, &f);
	PG_RETURN_BYTEA_P(BloomFilterAddHash(CurrentMemoryContext, &f,
										 BloomKeyedHash(&secret,
														BloomValueHash(cache, f.hdr.hash_scheme,
																	   PG_GETARG_DATUM(1)))));
}

/*
 * bloom_contains(filter, value, key): might a keyed filter contain the
 * value?
 */
Datum
bloom_contains_keyed(PG_FUNCTION_ARGS)
{
	BloomFnCache *cache = BloomGetFnCache(fcinfo, 1, false);
	BloomFilterData f;
	BloomSecret	secret;

	BloomKeyedMakeSecret(PG_GETARG_BYTEA_PP(2), &secret);
	BloomFilterOpen(PG_GETARG_BYTEA_PP(0), &f);
	BloomCheckSecret(&f.hdr, &secret);
	BloomCheckValueType(f.hdr.elemtype, cache->elemtype, false);
	BloomCheckHome(&f.hdr, cache->hashing);
	if (f.hdr.elemtype == 0)
		PG_RETURN_BOOL(false);
	PG_RETURN_BOOL(BloomFilterTestHash(&f,
									   BloomKeyedHash(&secret,
													  BloomValueHash(cache, f.hdr.hash_scheme,
																	 PG_GETARG_DATUM(1)))));
}

/*
 * bloom_contains(filter, array, key): for each element, might the keyed
 * filter contain it?
 */
Datum
bloom_contains_array_keyed(PG_FUNCTION_ARGS)
{
	BloomSecret	secret;

	BloomKeyedMakeSecret(PG_GETARG_BYTEA_PP(2), &secret);
	return BloomContainsArray(fcinfo, BLOOM_PROBE_EACH, &secret);
}

/*
 * bloom_contains_any(filter, array, key): might the keyed filter contain
 * any element?
 */
Datum
bloom_contains_any_keyed(PG_FUNCTION_ARGS)
{
	BloomSecret	secret;

	BloomKeyedMakeSecret(PG_GETARG_BYTEA_PP(2), &secret);
	return BloomContainsArray(fcinfo, BLOOM_PROBE_ANY, &secret);
}

/*
 * bloom_contains_all(filter, array, key): might the keyed filter contain
 * every element?
 */
Datum
bloom_contains_all_keyed(PG_FUNCTION_ARGS)
{
	BloomSecret	secret;

	BloomKeyedMakeSecret(PG_GETARG_BYTEA_PP(2), &secret);
	return BloomContainsArray(fcinfo, BLOOM_PROBE_ALL, &secret);
}
