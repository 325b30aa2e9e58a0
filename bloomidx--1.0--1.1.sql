/* bloomidx--1.0--1.1.sql */

-- complain if script is sourced in psql, rather than via ALTER EXTENSION
\echo Use "ALTER EXTENSION bloomidx UPDATE TO '1.1'" to load this file. \quit

-- Everything below is also in bloomidx--1.1.sql, so that a fresh 1.1 install
-- and an updated 1.0 install hold the same objects.
