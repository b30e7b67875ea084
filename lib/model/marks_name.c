/* marks_name.c - what a work counter's name or unit may be (marks.h):
 * apart from the rest of the marks, which need json-c, because the
 * dependency-free library of job processes (lib/mark, ceems_mark.h)
 * checks names with the same rule before it sends them. */
#include "config.h"

#include "model/marks.h"

bool
ceems_marks_name_ok(const char *s)
{
	size_t n = 0;

	if (s == NULL)
		return false;
	for (const char *p = s; *p != '\0'; p++, n++) {
		char ch = *p;

		if (n >= CEEMS_MARKS_NAME_MAX - 1)
			return false;
		if (!((ch >= 'a' && ch <= 'z') || (ch >= 'A' && ch <= 'Z') ||
		      (ch >= '0' && ch <= '9') || ch == '_' || ch == '.' ||
		      ch == '-'))
			return false;
	}
	return n > 0;
}
