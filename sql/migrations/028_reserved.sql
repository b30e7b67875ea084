-- 028_reserved.sql - holds number 028, which another line of work's
-- migration takes (the numbers run without gaps).  It changes nothing;
-- it is removed when that migration arrives.
SELECT 1;
