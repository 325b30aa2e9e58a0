/*-------------------------------------------------------------------------
 *
 * validate.c
 *	  Operator class validator of bloomidx (amvalidate).
 *
 * A bloomidx operator family holds equality operators (strategy 1) and,
 * for every type they take, a 64-bit extended hash function (support
 * function 1) that hashes equal values equally.  Like a hash operator
 * family, it may hold cross-type equalities (int4 = int8) as long as every
 * type involved has its hash function in the family.
 *
 * A family whose values are sets of elements (elements.c) adds, for its
 * type, the extract functions (support functions 2 and 3, both or
 * neither) and an options function (4), and may hold the operators of
 * strategies 2 to 5 (@>, &&, ~~, ~~*), whose keys its extract-query
 * function turns into elements.
 *
 * Copyright (c) 2026, bloomidx contributors
 *
 * IDENTIFICATION
 *	  src/opclass/validate.c
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include "access/amvalidate.h"
#include "access/htup_details.h"
#include "catalog/pg_amop.h"
#include "catalog/pg_amproc.h"
#include "catalog/pg_opclass.h"
#include "catalog/pg_opfamily.h"
#include "catalog/pg_proc.h"
#include "catalog/pg_type.h"
#include "parser/parse_coerce.h"
#include "utils/builtins.h"
#include "utils/fmgroids.h"
#include "utils/lsyscache.h"
#include "utils/regproc.h"
#include "utils/syscache.h"
#include "utils/typcache.h"

#include "bloomidx.h"

/*
 * Is funcid a hash function that PostgreSQL 15 to 17 declared for a
 * physically compatible type and used as type's own?  PostgreSQL 18 gave
 * these types dedicated functions (hashboolextended, ...) that return the
 * same values; the operator classes keep the older ones on every major, so
 * that an index built on 15 reads the same after pg_upgrade to 18 or 19.
 * The list is core's hashvalidate exception list before 18.
 */
static bool
BloomIsCompatibleHashFunction(Oid funcid, Oid type)
{
	switch (funcid)
	{
		case F_HASHINT4EXTENDED:
			return type == DATEOID || type == XIDOID || type == CIDOID;
		case F_HASHINT8EXTENDED:
			return type == XID8OID;
		case F_TIMESTAMP_HASH_EXTENDED:
			return type == TIMESTAMPTZOID;
		case F_HASHCHAREXTENDED:
			return type == BOOLOID;
		case F_HASHVARLENAEXTENDED:
			return type == BYTEAOID;
		default:
			return false;
	}
}

/*
 * Is funcid usable as the hash function of type: int8 f(type, int8)?
 *
 * Its first argument must take the type, or it must be the function of
 * the type's default hash operator class, or one of the functions older
 * majors used for types that now have their own.
 */
static bool
BloomCheckHashFunction(Oid funcid, Oid type)
{
	HeapTuple	tp;
	Form_pg_proc procform;
	bool		result = true;

	tp = SearchSysCache1(PROCOID, ObjectIdGetDatum(funcid));
	if (!HeapTupleIsValid(tp))
		elog(ERROR, "cache lookup failed for function %u", funcid);
	procform = (Form_pg_proc) GETSTRUCT(tp);

	if (procform->prorettype != INT8OID || procform->proretset ||
		procform->pronargs != 2 ||
		procform->proargtypes.values[1] != INT8OID)
		result = false;
	else if (!IsBinaryCoercible(type, procform->proargtypes.values[0]) &&
			 !BloomIsCompatibleHashFunction(funcid, type))
	{
		TypeCacheEntry *typentry = lookup_type_cache(type,
													 TYPECACHE_HASH_EXTENDED_PROC);

		if (typentry->hash_extended_proc != funcid)
			result = false;
	}

	ReleaseSysCache(tp);
	return result;
}

/*
 * Does the family have a hash function for type?
 */
static bool
BloomFamilyHasHash(CatCList *proclist, Oid type)
{
	int			i;

	for (i = 0; i < proclist->n_members; i++)
	{
		Form_pg_amproc procform =
			(Form_pg_amproc) GETSTRUCT(&proclist->members[i]->tuple);

		if (procform->amprocnum == BLOOMIDX_HASH_PROC &&
			procform->amproclefttype == type &&
			procform->amprocrighttype == type)
			return true;
	}
	return false;
}

/*
 * Does the family have support function procnum for type?
 */
static bool
BloomFamilyHasProc(CatCList *proclist, int procnum, Oid type)
{
	int			i;

	for (i = 0; i < proclist->n_members; i++)
	{
		Form_pg_amproc procform =
			(Form_pg_amproc) GETSTRUCT(&proclist->members[i]->tuple);

		if (procform->amprocnum == procnum &&
			procform->amproclefttype == type &&
			procform->amprocrighttype == type)
			return true;
	}
	return false;
}

/*
 * Has an optional support function (2, 3 or 4) the signature its number
 * asks for?
 */
static bool
BloomCheckOptionalProc(Form_pg_amproc procform)
{
	Oid			type = procform->amproclefttype;

	switch (procform->amprocnum)
	{
		case BLOOMIDX_EXTRACT_PROC:
			return check_amproc_signature(procform->amproc, VOIDOID, true,
										  2, 2, type, INTERNALOID);
		case BLOOMIDX_EXTRACT_QUERY_PROC:
			return check_amproc_signature(procform->amproc, VOIDOID, true,
										  3, 3, type, INT2OID, INTERNALOID);
		case BLOOMIDX_OPTIONS_PROC:
			return check_amoptsproc_signature(procform->amproc);
	}
	return false;
}

/*
 * Validate an operator class of bloomidx and its family.  Problems are
 * reported as INFO messages, and the result is false if there are any.
 */
bool
bloomidx_validate(Oid opclassoid)
{
	bool		result = true;
	HeapTuple	classtup;
	Form_pg_opclass classform;
	Oid			opfamilyoid;
	Oid			opcintype;
	char	   *opclassname;
	HeapTuple	familytup;
	Form_pg_opfamily familyform;
	char	   *opfamilyname;
	CatCList   *proclist,
			   *oprlist;
	bool		classHasOperator = false;
	bool		classHasHash = false;
	int			i;

	classtup = SearchSysCache1(CLAOID, ObjectIdGetDatum(opclassoid));
	if (!HeapTupleIsValid(classtup))
		elog(ERROR, "cache lookup failed for operator class %u", opclassoid);
	classform = (Form_pg_opclass) GETSTRUCT(classtup);
	opfamilyoid = classform->opcfamily;
	opcintype = classform->opcintype;
	opclassname = NameStr(classform->opcname);

	familytup = SearchSysCache1(OPFAMILYOID, ObjectIdGetDatum(opfamilyoid));
	if (!HeapTupleIsValid(familytup))
		elog(ERROR, "cache lookup failed for operator family %u", opfamilyoid);
	familyform = (Form_pg_opfamily) GETSTRUCT(familytup);
	opfamilyname = NameStr(familyform->opfname);

	oprlist = SearchSysCacheList1(AMOPSTRATEGY, ObjectIdGetDatum(opfamilyoid));
	proclist = SearchSysCacheList1(AMPROCNUM, ObjectIdGetDatum(opfamilyoid));

	/* Support functions: only the hash function, for one type at a time */
	for (i = 0; i < proclist->n_members; i++)
	{
		Form_pg_amproc procform =
			(Form_pg_amproc) GETSTRUCT(&proclist->members[i]->tuple);

		if (procform->amprocnum < BLOOMIDX_HASH_PROC ||
			procform->amprocnum > BLOOMIDX_NPROC)
		{
			ereport(INFO,
					(errcode(ERRCODE_INVALID_OBJECT_DEFINITION),
					 errmsg("bloomidx operator family \"%s\" contains function %s with invalid support number %d",
							opfamilyname,
							format_procedure(procform->amproc),
							procform->amprocnum)));
			result = false;
			continue;
		}
		if (procform->amproclefttype != procform->amprocrighttype)
		{
			ereport(INFO,
					(errcode(ERRCODE_INVALID_OBJECT_DEFINITION),
					 errmsg("bloomidx operator family \"%s\" contains cross-type support function %s",
							opfamilyname,
							format_procedure(procform->amproc))));
			result = false;
			continue;
		}
		if (procform->amprocnum != BLOOMIDX_HASH_PROC)
		{
			if (!BloomCheckOptionalProc(procform))
			{
				ereport(INFO,
						(errcode(ERRCODE_INVALID_OBJECT_DEFINITION),
						 errmsg("bloomidx operator family \"%s\" contains function %s with wrong signature for support number %d",
								opfamilyname,
								format_procedure(procform->amproc),
								procform->amprocnum)));
				result = false;
			}
			continue;
		}
		if (!BloomCheckHashFunction(procform->amproc, procform->amproclefttype))
		{
			ereport(INFO,
					(errcode(ERRCODE_INVALID_OBJECT_DEFINITION),
					 errmsg("bloomidx operator family \"%s\" contains function %s with wrong signature for support number %d",
							opfamilyname,
							format_procedure(procform->amproc),
							procform->amprocnum),
					 errdetail("The hash function of type %s must be int8 f(%s, int8).",
							   format_type_be(procform->amproclefttype),
							   format_type_be(procform->amproclefttype))));
			result = false;
		}
		if (procform->amproclefttype == opcintype)
			classHasHash = true;
	}

	/* Extract functions come in pairs */
	if (BloomFamilyHasProc(proclist, BLOOMIDX_EXTRACT_PROC, opcintype) !=
		BloomFamilyHasProc(proclist, BLOOMIDX_EXTRACT_QUERY_PROC, opcintype))
	{
		ereport(INFO,
				(errcode(ERRCODE_INVALID_OBJECT_DEFINITION),
				 errmsg("bloomidx operator class \"%s\" has only one of support functions %d and %d for type %s",
						opclassname, BLOOMIDX_EXTRACT_PROC,
						BLOOMIDX_EXTRACT_QUERY_PROC, format_type_be(opcintype))));
		result = false;
	}

	/*
	 * Operators: equalities, each with hash functions for both sides, and
	 * the operators of sets, with an extract-query function for their type
	 */
	for (i = 0; i < oprlist->n_members; i++)
	{
		Form_pg_amop oprform =
			(Form_pg_amop) GETSTRUCT(&oprlist->members[i]->tuple);

		if (oprform->amopstrategy < BLOOMIDX_EQUAL_STRATEGY ||
			oprform->amopstrategy > BLOOMIDX_NSTRATEGIES)
		{
			ereport(INFO,
					(errcode(ERRCODE_INVALID_OBJECT_DEFINITION),
					 errmsg("bloomidx operator family \"%s\" contains operator %s with invalid strategy number %d",
							opfamilyname,
							format_operator(oprform->amopopr),
							oprform->amopstrategy)));
			result = false;
		}
		if (oprform->amoppurpose != AMOP_SEARCH ||
			OidIsValid(oprform->amopsortfamily))
		{
			ereport(INFO,
					(errcode(ERRCODE_INVALID_OBJECT_DEFINITION),
					 errmsg("bloomidx operator family \"%s\" contains invalid ORDER BY specification for operator %s",
							opfamilyname,
							format_operator(oprform->amopopr))));
			result = false;
		}
		if (!check_amop_signature(oprform->amopopr, BOOLOID,
								  oprform->amoplefttype,
								  oprform->amoprighttype))
		{
			ereport(INFO,
					(errcode(ERRCODE_INVALID_OBJECT_DEFINITION),
					 errmsg("bloomidx operator family \"%s\" contains operator %s with wrong signature",
							opfamilyname,
							format_operator(oprform->amopopr))));
			result = false;
		}
		if (oprform->amopstrategy != BLOOMIDX_EQUAL_STRATEGY)
		{
			if (!BloomFamilyHasProc(proclist, BLOOMIDX_EXTRACT_QUERY_PROC,
									oprform->amoplefttype))
			{
				ereport(INFO,
						(errcode(ERRCODE_INVALID_OBJECT_DEFINITION),
						 errmsg("bloomidx operator family \"%s\" lacks support function %d for operator %s",
								opfamilyname, BLOOMIDX_EXTRACT_QUERY_PROC,
								format_operator(oprform->amopopr))));
				result = false;
			}
		}
		else if (!BloomFamilyHasHash(proclist, oprform->amoplefttype) ||
				 !BloomFamilyHasHash(proclist, oprform->amoprighttype))
		{
			ereport(INFO,
					(errcode(ERRCODE_INVALID_OBJECT_DEFINITION),
					 errmsg("bloomidx operator family \"%s\" lacks support function for operator %s",
							opfamilyname,
							format_operator(oprform->amopopr))));
			result = false;
		}
		if (oprform->amoplefttype == opcintype &&
			(oprform->amoprighttype == opcintype ||
			 oprform->amopstrategy != BLOOMIDX_EQUAL_STRATEGY))
			classHasOperator = true;
	}

	if (!classHasOperator &&
		!BloomFamilyHasProc(proclist, BLOOMIDX_EXTRACT_QUERY_PROC, opcintype))
	{
		ereport(INFO,
				(errcode(ERRCODE_INVALID_OBJECT_DEFINITION),
				 errmsg("bloomidx operator class \"%s\" has no equality operator for type %s",
						opclassname, format_type_be(opcintype))));
		result = false;
	}
	else if (!classHasOperator)
	{
		ereport(INFO,
				(errcode(ERRCODE_INVALID_OBJECT_DEFINITION),
				 errmsg("bloomidx operator class \"%s\" has no operator for type %s",
						opclassname, format_type_be(opcintype))));
		result = false;
	}
	if (!classHasHash)
	{
		ereport(INFO,
				(errcode(ERRCODE_INVALID_OBJECT_DEFINITION),
				 errmsg("bloomidx operator class \"%s\" is missing support function %d for type %s",
						opclassname, BLOOMIDX_HASH_PROC,
						format_type_be(opcintype))));
		result = false;
	}

	ReleaseCatCacheList(proclist);
	ReleaseCatCacheList(oprlist);
	ReleaseSysCache(familytup);
	ReleaseSysCache(classtup);

	return result;
}
