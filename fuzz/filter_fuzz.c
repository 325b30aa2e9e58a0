/*-------------------------------------------------------------------------
 *
 * filter_fuzz.c
 *	  Fuzz harness of the bloomfilter decoder (src/filter/filter_format.c), built
 *	  outside the server.
 *
 * Every input is either accepted as a valid filter or rejected with an
 * error code; an accepted input must also re-encode to the same header,
 * read back the same from its text form, and probing and setting cells in
 * each of its layers (plain, blocked or counting) must stay inside the
 * layer (the sanitizers catch a stray access).  Inputs cover format 2 and
 * every variant of format 3, and both hash schemes: 1, with or without a
 * home database, and 2 (enums hashed by label), which has none and a type
 * that is not built in.  Inputs are tried both as raw bytes and, when they
 * start with "\x", as the text form.
 *
 * Built with -DBLOOM_FUZZ_LIBFUZZER it is a libFuzzer target.  Otherwise
 * main() is a deterministic driver: "filter_fuzz N" runs N inputs made
 * from a fixed seed (random bytes, valid filters, and valid filters
 * mutated), and "filter_fuzz --corpus DIR" writes valid seed inputs.
 *
 *-------------------------------------------------------------------------
 */
/* postgres.h for the Datum that signature.h needs; nothing is linked */
#include "postgres.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "filter_format.h"
#include "signature.h"

/* use the C library's printf family, not libpgport's, which is not linked */
#undef printf
#undef fprintf
#undef snprintf

static unsigned long long ninputs;
static unsigned long long naccepted;
static unsigned long long nrejected;
static unsigned long long naccepted_labels;	/* of hash scheme 2 */
static unsigned long long nrejected_scheme;	/* BLOOM_FORMAT_BAD_SCHEME */

/*
 * Abort loudly: an accepted input broke an invariant.
 */
static void
FuzzFail(const char *what)
{
	fprintf(stderr, "filter_fuzz: invariant violated: %s\n", what);
	abort();
}

/*
 * Decode one byte string; check the invariants of an accepted one.
 */
static bool
FuzzDecode(const uint8 *data, size_t size)
{
	BloomFilterHeader hdr;
	BloomFilterFormatError err;
	uint8		buf[BLOOM_FILTER_MAX_HEADER_SIZE];
	uint8	   *bits;
	uint64		h;
	int			i;
	uint32		l;

	err = BloomFilterDecodeHeader(data, size, &hdr, true);
	if (err != BLOOM_FORMAT_OK)
	{
		if (BloomFilterFormatErrorMessage(err) == NULL)
			FuzzFail("error without a message");
		if (err == BLOOM_FORMAT_BAD_SCHEME)
			nrejected_scheme++;
		return false;
	}

	if (hdr.bits_offset + hdr.nbytes != size)
		FuzzFail("length");
	if (hdr.nbits < 1 || hdr.nbits > BLOOM_FILTER_MAX_NBITS ||
		hdr.nhashes < 1 || hdr.nhashes > BLOOM_FILTER_MAX_NHASHES)
		FuzzFail("shape");
	if (BloomFilterHeaderSize(&hdr) != hdr.bits_offset)
		FuzzFail("header size");
	if ((hdr.home_sysid != 0 || hdr.home_dbid != 0 || hdr.home_typid != 0) &&
		(hdr.home_sysid == 0 || hdr.home_dbid == 0 || hdr.home_typid == 0 ||
		 hdr.elemtype == 0))
		FuzzFail("partial home database");
	if (hdr.hash_scheme != BLOOM_FILTER_HASH_SCHEME &&
		hdr.hash_scheme != BLOOM_FILTER_HASH_SCHEME_LABELS)
		FuzzFail("unknown hash scheme");
	if (hdr.hash_scheme == BLOOM_FILTER_HASH_SCHEME_LABELS)
	{
		if (hdr.elemtype < BLOOM_FILTER_FIRST_UNFIXED_OID ||
			hdr.nspname_len == 0 || hdr.typname_len == 0)
			FuzzFail("hash scheme 2 without a named type");
		if (hdr.home_sysid != 0 || hdr.home_dbid != 0 || hdr.home_typid != 0)
			FuzzFail("hash scheme 2 with a home database");
		naccepted_labels++;
	}
	BloomFilterEncodeHeader(buf, &hdr);
	if (memcmp(buf, data, hdr.bits_offset) != 0)
		FuzzFail("header does not re-encode to the same bytes");

	if (hdr.nlayers < 1 || hdr.nlayers > BLOOM_FILTER_MAX_LAYERS ||
		hdr.layers[0].nbits != hdr.nbits || hdr.layers[0].nhashes != hdr.nhashes)
		FuzzFail("layers");
	if (hdr.version == BLOOM_FILTER_FORMAT_VERSION && hdr.flags != 0)
		FuzzFail("format 2 with a variant");
	if (hdr.version == BLOOM_FILTER_FORMAT_VARIANT && hdr.flags == 0)
		FuzzFail("format 3 without a variant: two encodings of a plain filter");

	/* the text form decodes to the same bytes, which decode the same */
	{
		uint8	   *text = malloc(2 * size + 2);
		uint8	   *back = malloc(size + 1);
		BloomFilterHeader hdr2;
		size_t		j;
		static const char hex[] = "0123456789abcdef";

		if (text == NULL || back == NULL)
			FuzzFail("out of memory");
		for (j = 0; j < size; j++)
		{
			text[2 * j] = hex[data[j] >> 4];
			text[2 * j + 1] = hex[data[j] & 15];
		}
		if (!BloomFilterHexDecode((const char *) text, 2 * size, back) ||
			memcmp(back, data, size) != 0)
			FuzzFail("text form does not read back");
		if (BloomFilterDecodeHeader(back, size, &hdr2, true) != BLOOM_FORMAT_OK ||
			hdr2.bits_offset != hdr.bits_offset || hdr2.nbytes != hdr.nbytes ||
			hdr2.nlayers != hdr.nlayers || hdr2.flags != hdr.flags)
			FuzzFail("text form decodes differently");
		free(text);
		free(back);
	}

	/* probe and set cells in a private copy of each layer, as the server does */
	for (l = 0; l < hdr.nlayers; l++)
	{
		const BloomFilterLayer *layer = &hdr.layers[l];
		bool		counting = (hdr.flags & BLOOM_VARIANT_COUNTING) != 0;
		bool		blocked = (hdr.flags & BLOOM_VARIANT_BLOCKED) != 0;

		if (layer->offset + layer->nbytes > size ||
			layer->nbytes != BLOOM_LAYER_NBYTES(hdr.flags, layer->nbits))
			FuzzFail("layer outside the data");
		if (blocked && layer->nbits % BLOOM_BLOCK_BITS != 0)
			FuzzFail("partial block");
		bits = malloc(layer->nbytes);
		if (bits == NULL)
			FuzzFail("out of memory");
		memcpy(bits, data + layer->offset, layer->nbytes);
		h = layer->nbits * UINT64CONST(0x9e3779b97f4a7c15);
		for (i = 0; i < 4; i++)
		{
			if (blocked)
			{
				(void) BloomTestBitsBlocked(bits, layer->nbits, h + i, 0, layer->nhashes);
				BloomSetBitsBlocked(bits, layer->nbits, h + i, 0, layer->nhashes);
				if (!BloomTestBitsBlocked(bits, layer->nbits, h + i, 0, layer->nhashes))
					FuzzFail("a value just added is not contained");
			}
			else if (counting)
			{
				BloomProbe	probe;
				int			k;

				BloomProbeInit(&probe, h + i, 0, layer->nbits);
				for (k = 0; k < (int) layer->nhashes; k++)
				{
					uint64		pos = BloomProbeNext(&probe);

					if (pos >= layer->nbits || pos / 2 >= layer->nbytes)
						FuzzFail("counter outside the layer");
					bits[pos / 2] |= (uint8) (1 << ((pos & 1) * 4));
				}
			}
			else
			{
				(void) BloomTestBits(bits, layer->nbits, h + i, 0, layer->nhashes);
				BloomSetBits(bits, layer->nbits, h + i, 0, layer->nhashes);
				if (!BloomTestBits(bits, layer->nbits, h + i, 0, layer->nhashes))
					FuzzFail("a value just added is not contained");
			}
		}
		if (counting ? (layer->nbits % 2 != 0 && (bits[layer->nbytes - 1] >> 4) != 0) :
			(layer->nbits % 8 != 0 && (bits[layer->nbytes - 1] >> (layer->nbits % 8)) != 0))
			FuzzFail("a bit beyond nbits was set");
		free(bits);
	}
	return true;
}

/*
 * The fuzz target: raw bytes, and the text form if it looks like one.
 */
int			LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	bool		ok = FuzzDecode(data, size);

	if (size >= 2 && data[0] == '\\' && data[1] == 'x')
	{
		uint8	   *bytes = malloc(size / 2 + 1);

		if (bytes == NULL)
			FuzzFail("out of memory");
		if (BloomFilterHexDecode((const char *) data + 2, size - 2, bytes))
			ok = FuzzDecode(bytes, (size - 2) / 2) || ok;
		free(bytes);
	}
	ninputs++;
	if (ok)
		naccepted++;
	else
		nrejected++;
	return 0;
}

/*
 * Print the counts, at exit in libFuzzer mode.
 */
static void
FuzzReport(void)
{
	printf("fuzz: %llu inputs, %llu accepted, %llu rejected\n",
		   ninputs, naccepted, nrejected);
	fflush(stdout);
}

#ifdef BLOOM_FUZZ_LIBFUZZER

int			LLVMFuzzerInitialize(int *argc, char ***argv);

int
LLVMFuzzerInitialize(int *argc, char ***argv)
{
	atexit(FuzzReport);
	return 0;
}

#else

/* xorshift64* state of the deterministic driver */
static uint64 rng = UINT64CONST(0x2545f4914f6cdd1d);

/*
 * Next pseudo-random 64-bit number.
 */
static uint64
Rand64(void)
{
	rng ^= rng >> 12;
	rng ^= rng << 25;
	rng ^= rng >> 27;
	return rng * UINT64CONST(0x2545f4914f6cdd1d);
}

/*
 * Pseudo-random number in [0, n).
 */
static uint64
RandBelow(uint64 n)
{
	return n == 0 ? 0 : Rand64() % n;
}

/*
 * Write a valid filter with random shape, type and bits into buf (of
 * bufsize bytes); returns its length.
 */
static size_t
MakeValid(uint8 *buf, size_t bufsize)
{
	BloomFilterHeader hdr;
	static const char *names[] = {"public", "citext", "my schema", "t"};
	size_t		len;
	size_t		i;

	memset(&hdr, 0, sizeof(hdr));
	hdr.version = BLOOM_FILTER_FORMAT_VERSION;
	hdr.hash_scheme = BLOOM_FILTER_HASH_SCHEME;
	hdr.nhashes = 1 + RandBelow(BLOOM_FILTER_MAX_NHASHES);
	switch (RandBelow(4))
	{
		case 0:
			hdr.nbits = 1 + RandBelow(16);
			break;
		case 1:
			hdr.nbits = 1 + RandBelow(256);
			break;
		default:
			hdr.nbits = 1 + RandBelow(4096);
			break;
	}
	if (RandBelow(3) != 0)
	{
		hdr.capacity = 1 + RandBelow(100000);
		hdr.target_fpr = (double) (1 + RandBelow(999)) / 1000.0;
	}
	switch (RandBelow(3))
	{
		case 0:
			hdr.elemtype = 0;
			break;
		case 1:
			hdr.elemtype = 16 + RandBelow(4000);
			break;
		default:
			hdr.elemtype = 10000 + RandBelow(100000);
			hdr.nspname = names[RandBelow(4)];
			hdr.nspname_len = strlen(hdr.nspname);
			hdr.typname = names[RandBelow(4)];
			hdr.typname_len = strlen(hdr.typname);
			break;
	}
	/*
	 * A type that is not built in may be an enum hashed by label (scheme 2),
	 * else any typed filter may have a home database, as an enum had; the
	 * type's OID there is its OID
	 */
	if (hdr.elemtype >= BLOOM_FILTER_FIRST_UNFIXED_OID && RandBelow(3) == 0)
		hdr.hash_scheme = BLOOM_FILTER_HASH_SCHEME_LABELS;
	else if (hdr.elemtype != 0 && RandBelow(2) == 0)
	{
		hdr.home_sysid = Rand64() | 1;
		hdr.home_dbid = 1 + RandBelow(100000);
		hdr.home_typid = hdr.elemtype;
		if (hdr.elemtype >= BLOOM_FILTER_FIRST_UNFIXED_OID && RandBelow(2) == 0)
			hdr.home_typid = 1 + RandBelow(200000);
	}
	hdr.nlayers = 1;
	hdr.layers[0].nbits = hdr.nbits;
	hdr.layers[0].nhashes = hdr.nhashes;
	hdr.layers[0].count = 0;
	/* half of them a variant: growing, counting, blocked or growing blocked */
	if (RandBelow(2) == 0)
	{
		static const uint16 kinds[] = {
			BLOOM_VARIANT_GROWING, BLOOM_VARIANT_COUNTING, BLOOM_VARIANT_BLOCKED,
			BLOOM_VARIANT_GROWING | BLOOM_VARIANT_BLOCKED
		};

		hdr.version = BLOOM_FILTER_FORMAT_VARIANT;
		hdr.flags = kinds[RandBelow(lengthof(kinds))];
		if (hdr.flags & BLOOM_VARIANT_BLOCKED)
		{
			hdr.nbits = BLOOM_BLOCK_BITS * (1 + RandBelow(6));
			hdr.layers[0].nbits = hdr.nbits;
		}
		if (hdr.flags & BLOOM_VARIANT_GROWING)
		{
			hdr.growth = 1 + RandBelow(BLOOM_FILTER_MAX_GROWTH);
			hdr.tightening = 0.8;
			if (hdr.capacity == 0)
			{
				hdr.capacity = 1 + RandBelow(1000);
				hdr.target_fpr = 0.01;
			}
			if (hdr.elemtype != 0)
			{
				uint32		l;

				hdr.nlayers = 1 + RandBelow(4);
				for (l = 0; l < hdr.nlayers; l++)
				{
					if (l > 0)
					{
						hdr.layers[l].nbits = (hdr.flags & BLOOM_VARIANT_BLOCKED) ?
							BLOOM_BLOCK_BITS * (1 + RandBelow(4)) : 1 + RandBelow(2048);
						hdr.layers[l].nhashes = 1 + RandBelow(BLOOM_FILTER_MAX_NHASHES);
					}
					hdr.layers[l].count = RandBelow(5000);
				}
			}
		}
	}
	BloomFilterLayoutLayers(&hdr);
	len = hdr.bits_offset + hdr.nbytes;
	if (len > bufsize)
		FuzzFail("seed too large");
	BloomFilterEncodeHeader(buf, &hdr);
	for (i = 0; i < hdr.nbytes; i++)
		buf[hdr.bits_offset + i] = hdr.elemtype == 0 ? 0 : (uint8) Rand64();
	for (i = 0; i < hdr.nlayers; i++)
	{
		const BloomFilterLayer *layer = &hdr.layers[i];
		uint8	   *last = &buf[layer->offset + layer->nbytes - 1];

		if (hdr.flags & BLOOM_VARIANT_COUNTING)
		{
			if (layer->nbits % 2 != 0)
				*last &= 0x0F;
		}
		else if (layer->nbits % 8 != 0)
			*last &= (uint8) ((1 << (layer->nbits % 8)) - 1);
	}
	return len;
}

/*
 * Mutate an input in place (it has room for bufsize bytes); returns its
 * new length.
 */
static size_t
Mutate(uint8 *buf, size_t len, size_t bufsize)
{
	static const uint64 interesting[] = {
		0, 1, 2, 7, 8, 63, 64, 65, 127, 128, 255, 256, 9999, 10000, 65535,
		65536, UINT64CONST(0x7fffffff), UINT64CONST(0x80000000),
		UINT64CONST(0xffffffff), BLOOM_FILTER_MAX_NBITS,
		BLOOM_FILTER_MAX_NBITS + 1, UINT64CONST(1) << 40,
		(UINT64CONST(1) << 40) + 1, PG_UINT64_MAX
	};
	int			n = 1 + RandBelow(4);

	while (n-- > 0)
	{
		switch (RandBelow(7))
		{
			case 0:				/* flip a bit */
				if (len > 0)
					buf[RandBelow(len)] ^= (uint8) (1 << RandBelow(8));
				break;
			case 1:				/* set a random byte */
				if (len > 0)
					buf[RandBelow(len)] = (uint8) Rand64();
				break;
			case 2:				/* truncate */
				len = RandBelow(len + 1);
				break;
			case 3:				/* append random bytes */
				{
					size_t		extra = 1 + RandBelow(16);

					while (extra-- > 0 && len < bufsize)
						buf[len++] = (uint8) Rand64();
				}
				break;
			case 4:				/* an interesting value in a header field */
				{
					static const int offsets[] = {4, 6, 8, 12, 16, 24, 32, 40, 48, 52, 56, 57,
					58, 60, 62, 66, 74, 82, 90, 94, 98};
					static const int widths[] = {2, 2, 4, 4, 8, 8, 8, 8, 4, 4, 1, 1,
					2, 2, 4, 8, 8, 8, 4, 4, 8};
					int			f = RandBelow(lengthof(offsets));
					uint64		v = interesting[RandBelow(lengthof(interesting))];
					int			b;

					for (b = 0; b < widths[f] && offsets[f] + b < (int) len; b++)
						buf[offsets[f] + b] = (uint8) (v >> (8 * b));
				}
				break;
			case 5:				/* set the padding bits of the last byte */
				if (len > 0)
					buf[len - 1] |= 0x80;
				break;
			default:			/* a zero byte in the names */
				if (len > BLOOM_FILTER_FIXED_HEADER_SIZE)
					buf[BLOOM_FILTER_FIXED_HEADER_SIZE +
						RandBelow(len - BLOOM_FILTER_FIXED_HEADER_SIZE)] = 0;
				break;
		}
	}
	return len;
}

/*
 * Write hex text of data into out (room for 2 * len + 2); returns its
 * length.
 */
static size_t
ToText(const uint8 *data, size_t len, uint8 *out)
{
	static const char hex[] = "0123456789abcdef";
	size_t		i;

	out[0] = '\\';
	out[1] = 'x';
	for (i = 0; i < len; i++)
	{
		out[2 + 2 * i] = hex[data[i] >> 4];
		out[3 + 2 * i] = hex[data[i] & 15];
	}
	return 2 + 2 * len;
}

#define FUZZ_BUFSIZE	(BLOOM_FILTER_MAX_HEADER_SIZE + 4 * 4096 / 8 + 4 * 6 * 64 + 64)

int
main(int argc, char **argv)
{
	static uint8 buf[FUZZ_BUFSIZE];
	static uint8 text[2 * FUZZ_BUFSIZE + 2];
	unsigned long long n = 1000000;
	unsigned long long i;

	if (argc == 3 && strcmp(argv[1], "--corpus") == 0)
	{
		for (i = 0; i < 64; i++)
		{
			char		path[1024];
			size_t		len = MakeValid(buf, sizeof(buf));
			FILE	   *f;

			snprintf(path, sizeof(path), "%s/seed%02llu", argv[2], i);
			f = fopen(path, "wb");
			if (f == NULL || fwrite(buf, 1, len, f) != len || fclose(f) != 0)
			{
				perror(path);
				return 1;
			}
		}
		return 0;
	}
	if (argc == 2)
		n = strtoull(argv[1], NULL, 10);

	for (i = 0; i < n; i++)
	{
		size_t		len;

		switch (RandBelow(10))
		{
			case 0:				/* random bytes, sometimes with the magic */
				len = RandBelow(BLOOM_FILTER_MAX_HEADER_SIZE + 64);
				for (size_t j = 0; j < len; j++)
					buf[j] = (uint8) Rand64();
				if (len >= 4 && RandBelow(2) == 0)
					memcpy(buf, BLOOM_FILTER_MAGIC, 4);
				LLVMFuzzerTestOneInput(buf, len);
				break;
			case 1:				/* valid */
				len = MakeValid(buf, sizeof(buf));
				LLVMFuzzerTestOneInput(buf, len);
				break;
			case 2:				/* text form, valid or mutated */
				len = MakeValid(buf, sizeof(buf));
				if (RandBelow(2) == 0)
					len = Mutate(buf, len, sizeof(buf));
				len = ToText(buf, len, text);
				if (RandBelow(4) == 0 && len > 2)
					text[2 + RandBelow(len - 2)] = (uint8) Rand64();
				LLVMFuzzerTestOneInput(text, len);
				break;
			default:			/* valid, then mutated */
				len = MakeValid(buf, sizeof(buf));
				len = Mutate(buf, len, sizeof(buf));
				LLVMFuzzerTestOneInput(buf, len);
				break;
		}
	}
	FuzzReport();
	/* both hash schemes were decoded, and the rule tying scheme 2 enforced */
	if (n >= 1000 && (naccepted_labels == 0 || nrejected_scheme == 0))
		FuzzFail("hash scheme 2 was never accepted, or never rejected as such");
	return 0;
}

#endif							/* BLOOM_FUZZ_LIBFUZZER */
