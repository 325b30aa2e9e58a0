/*-------------------------------------------------------------------------
 *
 * filter_keyed.c
 *	  Keyed bloom filters: bit positions that depend on a secret key.
 *
 * Anyone who knows the hash of an unkeyed filter can search for values that
 * all land on a few bits, and make the filter answer "maybe" to anything.
 * A keyed filter places a value by SipHash-2-4, under the user's 16-byte
 * key, of the value's 64-bit hash, so that positions cannot be predicted
 * without the key.  The filter stores only a fingerprint of the key (the
 * SipHash of a constant under it), never the key: a probe, addition or
 * combination under another key, or none, is refused.  The key never
 * appears in a message.  Keyed is a modifier: a keyed filter's cells are
 * those of a plain one, its values' hashes keyed (BloomKeyedHash) by the
 * functions that take the key.
 *
 * Copyright (c) 2026, bloomidx contributors
 *
 * IDENTIFICATION
 *	  src/filter/variant/filter_keyed.c
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include "filter_variant.h"
#include "signature.h"

/* Message whose SipHash under the key is the key's fingerprint: "bloomkey" */
#define BLOOM_KEY_FINGERPRINT_MESSAGE	UINT64CONST(0x79656b6d6f6f6c62)

/*
 * Derive the SipHash key and fingerprint of a key given as 16 bytes.
 */
void
BloomKeyFromBytea(bytea *key, BloomKey *out)
{
	const uint8 *p = (const uint8 *) VARDATA_ANY(key);
	int			i;

	if (VARSIZE_ANY_EXHDR(key) != BLOOM_KEY_LEN)
		ereport(ERROR,
				(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
				 errmsg("bloom filter key must be %d bytes", BLOOM_KEY_LEN),
				 errhint("Use %d random bytes kept secret, such as gen_random_bytes(%d) of pgcrypto.",
						 BLOOM_KEY_LEN, BLOOM_KEY_LEN)));
	out->k0 = out->k1 = 0;
	for (i = 7; i >= 0; i--)
	{
		out->k0 = (out->k0 << 8) | p[i];
		out->k1 = (out->k1 << 8) | p[8 + i];
	}
	out->fingerprint = BloomSipHash64(out->k0, out->k1,
									  BLOOM_KEY_FINGERPRINT_MESSAGE);
	/* zero means "not keyed" in the format */
	if (out->fingerprint == 0)
		out->fingerprint = 1;
}

/*
 * Error out unless a filter is keyed exactly when a key is given (NULL:
 * none), and with that key.
 */
void
BloomCheckKey(const BloomFilterHeader *hdr, const BloomKey *key)
{
	if ((hdr->flags & BLOOM_VARIANT_KEYED) && key == NULL)
		ereport(ERROR,
				(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
				 errmsg("bloom filter is keyed"),
				 errhint("Pass the filter's key, as in bloom_contains(filter, value, key).")));
	if (!(hdr->flags & BLOOM_VARIANT_KEYED) && key != NULL)
		ereport(ERROR,
				(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
				 errmsg("bloom filter is not keyed"),
				 errhint("Omit the key for a filter created without one.")));
	if (key != NULL && hdr->key_fingerprint != key->fingerprint)
		ereport(ERROR,
				(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
				 errmsg("key does not match the bloom filter's key"),
				 errhint("Use the key the filter was created with.")));
}

/*
 * The keyed hash of a value's 64-bit hash.
 */
uint64
BloomKeyedHash(const BloomKey *key, uint64 hash)
{
	return BloomSipHash64(key->k0, key->k1, hash);
}

/*
 * Was a keyed filter asked for?
 */
static bool
BloomKeyedChosen(const BloomVariantOptions *opts)
{
	return opts->key != NULL;
}

/*
 * The key's fingerprint in the header of a new keyed filter.
 */
static void
BloomKeyedInitHeader(BloomFilterHeader *hdr, const BloomVariantOptions *opts)
{
	hdr->key_fingerprint = opts->key->fingerprint;
}

const BloomVariantRoutine BloomKeyedVariant = {
	.name = "keyed",
	.flag = BLOOM_VARIANT_KEYED,
	.modifier = true,
	.chosen = BloomKeyedChosen,
	.initheader = BloomKeyedInitHeader,
};
