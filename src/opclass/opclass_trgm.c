/*-------------------------------------------------------------------------
 *
 * opclass_trgm.c
 *	  text_trgm_ops: strings as sets of trigrams, answering LIKE and ILIKE
 *	  (~~, ~~*) with a pattern that has a trigram, and = on the column.
 *
 * The trigrams are those pg_trgm extracts: the string is split into words
 * (runs of word characters: ASCII letters and digits, and every non-ASCII
 * character), each word is case-folded under the column's collation and
 * padded with two blanks before and one after, and every three
 * consecutive characters of a padded word are a trigram.  Each trigram's
 * bytes are hashed into one element of the signature.
 *
 * A LIKE pattern's trigrams are those every string it matches contains:
 * the pattern is split into words at wildcards ('%' and '_'), non-word
 * characters and its ends, a backslash takes the next character
 * literally, and a word is padded only on a side where the string it
 * matches must have a word boundary (a non-word character or the
 * pattern's end, not a wildcard).  Case is folded on both sides, so LIKE
 * and ILIKE test the same trigrams and the recheck decides case.  A pattern
 * with no trigram ('%', '%ab%') tests no bit; the cost model then sees a
 * scan of every row, and the planner prefers another plan.  = tests the
 * trigrams of the value, as stored.
 *
 * Memory: the trigrams go to the sink as they are found, so a value takes
 * no more than its longest word, case-folded, beside the value itself.
 *
 * Copyright (c) 2026, bloomidx contributors
 *
 * IDENTIFICATION
 *	  src/opclass_trgm.c
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include "catalog/pg_collation.h"
#include "common/hashfn.h"
#include "mb/pg_wchar.h"
#include "miscadmin.h"
#include "utils/builtins.h"
#include "utils/formatting.h"

#include "bloomidx.h"

PG_FUNCTION_INFO_V1(bloomidx_trgm_extract);
PG_FUNCTION_INFO_V1(bloomidx_trgm_extract_query);
PG_FUNCTION_INFO_V1(bloomidx_trgm_options);

/* Seed of the trigrams' hashes: a trigram is not the value of a column */
#define BLOOM_TRGM_SEED		UINT64CONST(0x7472676d)

/*
 * Is the character at p (of clen bytes) a word character?  Every non-ASCII
 * character is, whatever the locale, so that the same characters split
 * words in values and patterns.
 */
static inline bool
BloomTrgmIsWordChar(const char *p, int clen)
{
	unsigned char c = (unsigned char) *p;

	if (clen > 1 || IS_HIGHBIT_SET(c))
		return true;
	return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') ||
		(c >= '0' && c <= '9');
}

/*
 * Give sink the trigrams of word (bytes, not padded), case-folded under
 * collation, with two blanks before it if padLeft and one after it if
 * padRight.
 */
static void
BloomTrgmAddWord(BloomElementSink *sink, const char *word, int len,
				 bool padLeft, bool padRight, Oid collation)
{
	char	   *lowered = str_tolower(word, len, collation);
	int			lowlen = strlen(lowered);
	char	   *buf = palloc(lowlen + 3);
	int			n = 0;
	const char *start[3] = {NULL, NULL, NULL};
	int			have = 0;
	char	   *p;
	char	   *end;

	if (padLeft)
	{
		buf[n++] = ' ';
		buf[n++] = ' ';
	}
	memcpy(buf + n, lowered, lowlen);
	n += lowlen;
	if (padRight)
		buf[n++] = ' ';
	end = buf + n;

	/* Slide a window of three characters over the padded word */
	for (p = buf; p < end; p += pg_mblen(p))
	{
		start[0] = start[1];
		start[1] = start[2];
		start[2] = p;
		if (++have >= 3)
		{
			const char *tend = p + pg_mblen(p);

			BloomAddElement(sink,
							hash_bytes_extended((const unsigned char *) start[0],
												tend - start[0],
												BLOOM_TRGM_SEED));
		}
	}
	pfree(buf);
	pfree(lowered);
}

/*
 * Give sink the trigrams of a string as stored: every word padded on both
 * sides.
 */
static void
BloomTrgmAddString(BloomElementSink *sink, const char *str, int len,
				   Oid collation)
{
	const char *end = str + len;
	const char *p = str;

	while (p < end)
	{
		const char *word;

		CHECK_FOR_INTERRUPTS();
		while (p < end && !BloomTrgmIsWordChar(p, pg_mblen(p)))
			p += pg_mblen(p);
		if (p >= end)
			break;
		word = p;
		while (p < end && BloomTrgmIsWordChar(p, pg_mblen(p)))
			p += pg_mblen(p);
		BloomTrgmAddWord(sink, word, p - word, true, true, collation);
	}
}

/*
 * Give sink the trigrams every string matching a LIKE pattern contains.
 * A word ends at a wildcard (no padding on that side), at a non-word
 * character, literal or escaped, or at the pattern's end (padding).
 */
static void
BloomTrgmAddPattern(BloomElementSink *sink, const char *pat, int len,
					Oid collation)
{
	const char *end = pat + len;
	const char *p = pat;
	char	   *word = palloc(len + 1);
	bool		escaped = false;	/* the character at p is escaped */

	while (p < end)
	{
		bool		afterWildcard = false;
		bool		beforeWildcard = false;
		int			wlen = 0;

		CHECK_FOR_INTERRUPTS();

		/* Find the first word character, literal or escaped */
		while (p < end)
		{
			int			clen = pg_mblen(p);

			if (escaped)
			{
				if (BloomTrgmIsWordChar(p, clen))
					break;
				escaped = false;
				afterWildcard = false;
			}
			else if (*p == '\\')
				escaped = true;
			else if (*p == '%' || *p == '_')
				afterWildcard = true;
			else if (BloomTrgmIsWordChar(p, clen))
				break;
			else
				afterWildcard = false;
			p += clen;
		}
		if (p >= end)
			break;

		/* Gather the word's characters up to where it ends */
		while (p < end)
		{
			int			clen = pg_mblen(p);

			if (escaped)
			{
				if (!BloomTrgmIsWordChar(p, clen))
					break;		/* an escaped non-word character */
				escaped = false;
			}
			else if (*p == '\\')
			{
				escaped = true;
				p += clen;
				continue;
			}
			else if (*p == '%' || *p == '_')
			{
				beforeWildcard = true;
				break;
			}
			else if (!BloomTrgmIsWordChar(p, clen))
				break;
			memcpy(word + wlen, p, clen);
			wlen += clen;
			p += clen;
		}

		/*
		 * A word that ends at an escaped character ends at a boundary (an
		 * escaped word character would have continued it); the escaped
		 * character is read as a literal by the next round.  A pattern
		 * that ends in a lone backslash is not a valid pattern: its end is
		 * no boundary, so that the operator is reached and complains.
		 */
		if (escaped && p >= end)
			beforeWildcard = true;
		BloomTrgmAddWord(sink, word, wlen, !afterWildcard, !beforeWildcard,
						 collation);
	}
	pfree(word);
}

/* The collation the trigrams are case-folded under */
static inline Oid
BloomTrgmCollation(FunctionCallInfo fcinfo)
{
	Oid			collation = PG_GET_COLLATION();

	return OidIsValid(collation) ? collation : DEFAULT_COLLATION_OID;
}

/*
 * bloomidx_trgm_extract(text, internal): the trigrams of a stored string
 * (support function 2).
 */
Datum
bloomidx_trgm_extract(PG_FUNCTION_ARGS)
{
	text	   *value = PG_GETARG_TEXT_PP(0);
	BloomElementSink *sink = (BloomElementSink *) PG_GETARG_POINTER(1);

	BloomTrgmAddString(sink, VARDATA_ANY(value), VARSIZE_ANY_EXHDR(value),
					   BloomTrgmCollation(fcinfo));
	PG_RETURN_VOID();
}

/*
 * bloomidx_trgm_extract_query(text, int2, internal): the trigrams a query
 * tests, all of which a match has (support function 3).
 */
Datum
bloomidx_trgm_extract_query(PG_FUNCTION_ARGS)
{
	text	   *query = PG_GETARG_TEXT_PP(0);
	int16		strategy = PG_GETARG_INT16(1);
	BloomElementSink *sink = (BloomElementSink *) PG_GETARG_POINTER(2);

	sink->mode = BLOOM_ELEMENTS_ALL;
	switch (strategy)
	{
		case BLOOMIDX_EQUAL_STRATEGY:
			BloomTrgmAddString(sink, VARDATA_ANY(query),
							   VARSIZE_ANY_EXHDR(query),
							   BloomTrgmCollation(fcinfo));
			break;
		case BLOOMIDX_LIKE_STRATEGY:
		case BLOOMIDX_ILIKE_STRATEGY:
			BloomTrgmAddPattern(sink, VARDATA_ANY(query),
								VARSIZE_ANY_EXHDR(query),
								BloomTrgmCollation(fcinfo));
			break;
		default:
			elog(ERROR, "text_trgm_ops has no strategy %d", strategy);
	}
	PG_RETURN_VOID();
}

/*
 * bloomidx_trgm_options(internal): elements (default 32 trigrams a value)
 * and query_elements (default 3, the trigrams of a five-character
 * pattern) (support function 4).
 */
Datum
bloomidx_trgm_options(PG_FUNCTION_ARGS)
{
	local_relopts *relopts = (local_relopts *) PG_GETARG_POINTER(0);

	BloomSetOptionsInit(relopts, 32, 3);
	PG_RETURN_VOID();
}
