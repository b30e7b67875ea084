-- 004_views.sql - usage reports for admins (and Grafana).  The views are
-- defined in sql/views/usage.sql (applied after the migrations,
-- doc/storage.md); this version holds no table change of its own.

CALL ceems.adopt_objects();
