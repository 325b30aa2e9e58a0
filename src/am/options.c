/*-------------------------------------------------------------------------
 *
 * options.c
 *	  The index options of bloomidx: their registration, parsing and checks,
 *	  and the signature shape they give an index.
 *
 * Copyright (c) 2026, bloomidx contributors
 *
 * IDENTIFICATION
 *	  src/am/options.c
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include <math.h>

#include "access/genam.h"
#include "access/reloptions.h"
#include "utils/memutils.h"
#include "utils/rel.h"

#include "bloomidx.h"
#include "layout.h"
#include "page.h"

/* Kind of relation options for bloomidx indexes */
static relopt_kind bloomidx_relopt_kind;

/* Parse table for the options, filled in by BloomInitOptions */
static relopt_parse_elt bloomidx_relopt_tab[BLOOMIDX_MAX_COLUMNS + 4];

/* Values of the summaries option */
static relopt_enum_elt_def bloomidx_summaries_values[] = {
	{"on", BLOOMIDX_SUMMARIES_ON},
	{"true", BLOOMIDX_SUMMARIES_ON},
	{"yes", BLOOMIDX_SUMMARIES_ON},
	{"1", BLOOMIDX_SUMMARIES_ON},
	{"off", BLOOMIDX_SUMMARIES_OFF},
	{"false", BLOOMIDX_SUMMARIES_OFF},
	{"no", BLOOMIDX_SUMMARIES_OFF},
	{"0", BLOOMIDX_SUMMARIES_OFF},
	{(const char *) NULL}
};

/*
 * Register the index options (at module load).
 *
 * length and col1 ... col32 have contrib/bloom's bounds, so the core refuses
 * what contrib/bloom refuses, with the same message.  Their defaults, like
 * that of false_positive_rate and layout, lie outside the bounds or the
 * values: a user cannot give them, so they mean "not given" (see
 * BloomResolveOptions).
 */
void
BloomInitOptions(void)
{
	int			i;
	char		buf[16];

	bloomidx_relopt_kind = add_reloption_kind();

	add_int_reloption(bloomidx_relopt_kind, "length",
					  "Signature length in bits, rounded up to a multiple of 16",
					  0, 1, BLOOMIDX_MAX_LENGTH, AccessExclusiveLock);
	bloomidx_relopt_tab[0].optname = "length";
	bloomidx_relopt_tab[0].opttype = RELOPT_TYPE_INT;
	bloomidx_relopt_tab[0].offset = offsetof(BloomOptions, length);

	add_real_reloption(bloomidx_relopt_kind, "false_positive_rate",
					   "Target false-positive rate of an equality on one column",
					   0, BLOOMIDX_MIN_FPR, BLOOMIDX_MAX_FPR, AccessExclusiveLock);
	bloomidx_relopt_tab[1].optname = "false_positive_rate";
	bloomidx_relopt_tab[1].opttype = RELOPT_TYPE_REAL;
	bloomidx_relopt_tab[1].offset = offsetof(BloomOptions, falsePositiveRate);

	add_enum_reloption(bloomidx_relopt_kind, "layout",
					   "Page layout: one signature per row, or bit-sliced",
					   BloomLayoutOptionValues(), 0,
					   BloomLayoutValuesMessage(),
					   AccessExclusiveLock);
	bloomidx_relopt_tab[BLOOMIDX_MAX_COLUMNS + 2].optname = "layout";
	bloomidx_relopt_tab[BLOOMIDX_MAX_COLUMNS + 2].opttype = RELOPT_TYPE_ENUM;
	bloomidx_relopt_tab[BLOOMIDX_MAX_COLUMNS + 2].offset = offsetof(BloomOptions, layout);

	add_enum_reloption(bloomidx_relopt_kind, "summaries",
					   "Stripe summaries of the sliced layout: on or off",
					   bloomidx_summaries_values, 0,
					   "Valid values are \"on\" and \"off\".",
					   AccessExclusiveLock);
	bloomidx_relopt_tab[BLOOMIDX_MAX_COLUMNS + 3].optname = "summaries";
	bloomidx_relopt_tab[BLOOMIDX_MAX_COLUMNS + 3].opttype = RELOPT_TYPE_ENUM;
	bloomidx_relopt_tab[BLOOMIDX_MAX_COLUMNS + 3].offset = offsetof(BloomOptions, summaries);

	for (i = 0; i < BLOOMIDX_MAX_COLUMNS; i++)
	{
		snprintf(buf, sizeof(buf), "col%d", i + 1);
		bloomidx_relopt_tab[i + 2].optname = MemoryContextStrdup(TopMemoryContext, buf);
		bloomidx_relopt_tab[i + 2].opttype = RELOPT_TYPE_INT;
		bloomidx_relopt_tab[i + 2].offset =
			offsetof(BloomOptions, bitsPerColumn) + sizeof(int) * i;
		add_int_reloption(bloomidx_relopt_kind,
						  bloomidx_relopt_tab[i + 2].optname,
						  "Bits set in the signature for this column",
						  0, 1, BLOOMIDX_MAX_COLUMN_BITS, AccessExclusiveLock);
	}
}

/*
 * Check the rules that tie options together.
 *
 * The range of each option is checked by the core (build_reloptions).  The
 * rules left depend on the options alone, never on the index's columns,
 * so that ALTER INDEX ... SET, which checks the options without the index,
 * refuses everything a rebuild would refuse.
 */
static void
BloomCheckOptions(const BloomOptions *opts)
{
	bool		anyColumn = false;
	int			i;

	for (i = 0; i < BLOOMIDX_MAX_COLUMNS; i++)
		if (opts->bitsPerColumn[i] != 0)
			anyColumn = true;

	if (opts->summaries == BLOOMIDX_SUMMARIES_ON && opts->layout != 0 &&
		!BloomLayoutById(opts->layout)->summaries)
		ereport(ERROR,
				(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
				 errmsg("summaries are not supported by the %s layout",
						BloomLayoutById(opts->layout)->name),
				 errhint("Remove summaries, or give a layout that keeps them, such as layout = 'sliced'.")));

	if (opts->falsePositiveRate != 0 && (opts->length != 0 || anyColumn))
		ereport(ERROR,
				(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
				 errmsg("false_positive_rate cannot be combined with length or colN"),
				 errhint("Give either false_positive_rate, or length and col1 ... col%d.",
						 BLOOMIDX_MAX_COLUMNS)));
}

/*
 * Parse and check the options of a bloomidx index (amoptions).
 */
bytea *
bloomidx_options(Datum reloptions, bool validate)
{
	BloomOptions *opts;

	opts = (BloomOptions *) build_reloptions(reloptions, validate,
											 bloomidx_relopt_kind,
											 sizeof(BloomOptions),
											 bloomidx_relopt_tab,
											 lengthof(bloomidx_relopt_tab));
	if (validate && opts != NULL)
		BloomCheckOptions(opts);
	return (bytea *) opts;
}

static void BloomResolveShape(const BloomOptions *opts, int n, int layout,
							  const BloomColumnElements *ce, bool approximate,
							  BloomShape *shape);

/*
 * The index's options, or all of them left out (zeros, in *defaults) for
 * an index created without a WITH clause
 */
static BloomOptions *
BloomIndexOptions(Relation index, BloomOptions *defaults)
{
	if (index->rd_options != NULL)
		return (BloomOptions *) index->rd_options;
	memset(defaults, 0, sizeof(BloomOptions));
	return defaults;
}

/*
 * Turn an index's options into the shape of its signatures.
 *
 * A given length and colN mean what they mean to contrib/bloom: length is
 * the signature's length in bits, rounded up to a multiple of 16, and colN
 * the number of bits column N sets, even if that is as many as the
 * signature has; colN past the index's last column is ignored.
 *
 * Whatever is not given is derived so that an equality on one column has
 * the target false-positive rate, by default the layout's (1% for the row
 * layout, 0.035% for the sliced one): each column sets the bits the
 * layout's columnbits gives for the rate (row: round(log2(1 / p)); sliced:
 * round(ln(1 / p) / ln(2.5)), 40% of the bits set), in a signature whose
 * length the layout's derivedlength makes of m = n * ln(1 / p) / ln(2)^2
 * bits (row: rounded up to whole 64-bit words; sliced: the shortest length
 * from m up whose modelled rate is p).  With colN but no length, the
 * signature is sized so that about half of its bits are set, at most
 * BLOOMIDX_MAX_LENGTH bits.  With length but no colN, each
 * column gets the k that is optimal for that length, up to 16 (beyond
 * which the false-positive rate is negligible and hashing just costs more).
 *
 * The layout is the one given, else unsetLayout: BLOOMIDX_DEFAULT_LAYOUT
 * for an index being built, the layout frozen in the metapage when an
 * existing index's options are compared with its shape (an index built
 * before the default changed must not seem to ask for another layout).
 * A layout takes signatures of at most its maxSigBits bits (the sliced
 * layout 1024); if it falls back, a longer one gets the first layout of
 * the table that takes it (the row layout), shaped by that layout's rules,
 * whether the layout was given or is the default (BloomReportOptions says
 * so).
 *
 * The elements of each column are ce's: those of the operator classes'
 * options (BloomGetColumnElements), some measured by the build.
 *
 * No option set that passed bloomidx_options is refused here.
 */
void
BloomResolveOptions(Relation index, int unsetLayout,
					const BloomColumnElements *ce, BloomShape *shape)
{
	BloomOptions defaults;
	BloomOptions *opts = BloomIndexOptions(index, &defaults);
	int			n = RelationGetNumberOfAttributes(index);
	const BloomLayoutRoutine *layout;

	if (n > BLOOMIDX_MAX_COLUMNS)
		ereport(ERROR,
				(errcode(ERRCODE_TOO_MANY_COLUMNS),
				 errmsg("bloomidx indexes support at most %d columns, not %d",
						BLOOMIDX_MAX_COLUMNS, n),
				 errhint("Split the columns over several indexes.")));

	BloomCheckOptions(opts);

	BloomResolveSignature(index, unsetLayout, ce, false, shape);

	/* Summaries, on by default where the layout keeps them */
	layout = BloomGetLayout(shape);
	if (opts->summaries == BLOOMIDX_SUMMARIES_ON && !layout->summaries)
		ereport(ERROR,
				(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
				 errmsg("summaries are not supported by the %s layout of index \"%s\"",
						layout->name, RelationGetRelationName(index)),
				 errhint("Remove summaries, or give a shorter signature so that the index gets a layout that keeps them.")));
	shape->summaries = layout->summaries &&
		opts->summaries != BLOOMIDX_SUMMARIES_OFF;
}

/*
 * The signature's shape and layout that the options and ce give, as
 * BloomResolveOptions resolves them, without the summaries (which it then
 * decides, refusing summaries = on where the layout has none): for trying
 * shapes (BloomSizeMeasuredElements) without that error.  approximate:
 * a derived length is the textbook one, m, rather than the layout's
 * (which evaluates the false-positive model at length after length), for
 * trying many shapes cheaply.
 */
void
BloomResolveSignature(Relation index, int unsetLayout,
					  const BloomColumnElements *ce, bool approximate,
					  BloomShape *shape)
{
	BloomOptions defaults;
	BloomOptions *opts = BloomIndexOptions(index, &defaults);
	int			n = RelationGetNumberOfAttributes(index);
	const BloomLayoutRoutine *layout;

	BloomResolveShape(opts, n, opts->layout != 0 ? opts->layout : unsetLayout,
					  ce, approximate, shape);
	layout = BloomGetLayout(shape);
	if (shape->sigBits > layout->maxSigBits && layout->fallback &&
		(layout = BloomLayoutForLength(shape->sigBits)) != NULL)
		BloomResolveShape(opts, n, layout->id, ce, approximate, shape);
}

/*
 * The shape that the options give an index of n columns in the given
 * layout (see BloomResolveOptions).
 *
 * A column of a set operator class counts as elements / queryElements
 * columns of equality (n is their sum, neff below), and each of its
 * elements sets 1 / queryElements of the bits an equality column's value
 * sets: a query that tests queryElements elements then sets as many bits
 * as an equality, and the row as many as elements / queryElements equality
 * columns.  With equality columns only, neff is the number of columns.
 */
static void
BloomResolveShape(const BloomOptions *opts, int n, int layout,
				  const BloomColumnElements *ce, bool approximate,
				  BloomShape *shape)
{
	const BloomLayoutRoutine *routine = BloomLayoutById(layout);
	double		fpr;
	double		neff = 0;
	int			defaultBits;
	double		totalBits = 0;
	double		defaultTotal = 0;
	bool		anyColumn;
	int			i;

	for (i = 0; i < n; i++)
		neff += ce->elements[i] / ce->queryElements[i];

	memset(shape, 0, sizeof(BloomShape));
	shape->nColumns = n;
	shape->layout = layout;
	shape->setColumns = ce->setColumns;
	shape->measuredColumns = ce->measuredColumns & ce->setColumns;
	for (i = 0; i < n; i++)
		if (ce->setColumns & (1U << i))
		{
			shape->elements[i] = (int) ce->elements[i];
			shape->queryElements[i] = (int) ce->queryElements[i];
		}

	fpr = opts->falsePositiveRate;
	if (fpr == 0 && opts->length == 0)
		fpr = routine->defaultFpr;

	if (fpr != 0)
		defaultBits = routine->columnbits(fpr);
	else
		defaultBits = Min(Max(1, (int) rint(M_LN2 * opts->length / neff)),
						  BLOOMIDX_MAX_DERIVED_BITS);

	for (i = 0; i < n; i++)
	{
		int			derived = Max(1, (int) rint(defaultBits /
												ce->queryElements[i]));

		shape->bitsPerColumn[i] = opts->bitsPerColumn[i] != 0 ?
			opts->bitsPerColumn[i] : derived;
		totalBits += shape->bitsPerColumn[i] * ce->elements[i];
		defaultTotal += derived * ce->elements[i];
	}
	BloomShapeSetQueryBits(shape);
	/* colN that add up to the derived bits shape the index as without them */
	anyColumn = totalBits != defaultTotal;
	shape->rowBits = shape->setColumns != 0 ? totalBits : 0;

	if (opts->length != 0)
		shape->sigBits = TYPEALIGN(16, opts->length);
	else
	{
		double		m;

		if (opts->falsePositiveRate != 0 || !anyColumn)
			m = neff * log(1.0 / fpr) / (M_LN2 * M_LN2);
		else
			m = totalBits / M_LN2;
		m = Min(m, BLOOMIDX_MAX_LENGTH);
		if (approximate)
			shape->sigBits = Max(BLOOMIDX_MIN_LENGTH, (int) ceil(m));
		else
			shape->sigBits = routine->derivedlength(m,
												opts->falsePositiveRate != 0 ||
												!anyColumn ? fpr : 0,
												shape);
	}
	shape->sigBits = Min(shape->sigBits, BLOOMIDX_MAX_LENGTH);
	shape->sigBytes = (shape->sigBits + 7) / 8;
	shape->sigWords = (shape->sigBits + 63) / 64;
	shape->targetFpr = opts->length == 0 && !anyColumn ? fpr : 0;
}

/*
 * Say which of an index's options, legal as they are, build an index other
 * than the one they seem to ask for: colN past the last column, a column
 * that sets as many bits as the signature has, the sliced layout with a
 * signature too long for it.  Called when the index is built, with the
 * shape BloomResolveOptions made.
 */
void
BloomReportOptions(Relation index, const BloomShape *shape)
{
	BloomOptions defaults;
	BloomOptions *opts = (BloomOptions *) index->rd_options;
	int			n = RelationGetNumberOfAttributes(index);
	const BloomLayoutRoutine *asked;
	const BloomLayoutRoutine *got = BloomGetLayout(shape);
	int			i;

	if (opts == NULL)
	{
		/*
		 * Without options, only elements measured from the table can make
		 * a signature too long for the default layout
		 */
		memset(&defaults, 0, sizeof(defaults));
		opts = &defaults;
	}

	for (i = n; i < BLOOMIDX_MAX_COLUMNS; i++)
		if (opts->bitsPerColumn[i] != 0)
			ereport(NOTICE,
					(errmsg_plural("col%d of index \"%s\" is ignored because the index has only %d column",
								   "col%d of index \"%s\" is ignored because the index has only %d columns",
								   n, i + 1, RelationGetRelationName(index), n)));

	for (i = 0; i < n; i++)
		if (shape->bitsPerColumn[i] >= shape->sigBits)
			ereport(NOTICE,
					(errmsg("col%d of index \"%s\" sets %d bits in a signature of %d bits",
							i + 1, RelationGetRelationName(index),
							shape->bitsPerColumn[i], shape->sigBits),
					 errdetail("Most bits of every signature are set, so the index filters out few rows."),
					 errhint("Give col%d a value below %d, or a longer length.",
							 i + 1, shape->sigBits)));

	/*
	 * A layout, given or the default, falls back to another for a long
	 * signature.  Without a layout given, the hint says how to ask for the
	 * layout it got and be quiet.
	 */
	asked = BloomLayoutById(opts->layout != 0 ? opts->layout :
							BLOOMIDX_DEFAULT_LAYOUT);
	if (got == asked)
		return;
	if (opts->layout != 0)
		ereport(NOTICE,
				(errmsg("index \"%s\" gets the %s layout because its signature of %d bits is longer than the %s layout's maximum of %d",
						RelationGetRelationName(index), got->name,
						shape->sigBits, asked->name, asked->maxSigBits),
				 errhint("For the %s layout, give length = %d or less, or fewer bits per column.",
						 asked->name, asked->maxSigBits)));
	else
		ereport(NOTICE,
				(errmsg("index \"%s\" gets the %s layout because its signature of %d bits is longer than the %s layout's maximum of %d",
						RelationGetRelationName(index), got->name,
						shape->sigBits, asked->name, asked->maxSigBits),
				 errdetail("The %s layout is the default, and signatures it cannot take get the %s layout.",
						   asked->name, got->name),
				 errhint("Give layout = '%s' to ask for the %s layout, or length = %d or less, or fewer bits per column, for the %s layout.",
						 got->name, got->name, asked->maxSigBits, asked->name)));
}
