-- 033_reserved.sql - holds the place of number 033, which belongs to a
-- migration that is not in this tree yet (ceems-admin applies
-- migrations only when their numbers run 001, 002, ... without a gap).
-- It changes nothing.  When the migration numbered 033 comes, this file
-- goes: two files of one number are refused by ceems-admin, loudly.
SELECT 1;
