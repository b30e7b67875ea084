
CALL ceems.adopt_objects();
