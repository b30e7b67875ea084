/* test_text.c - the escape of text from outside (lib/base/text.h): valid
 * UTF-8 kept, invalid bytes and controls as "\xHH", backslashes doubled
 * where an escape could be misread, cuts only between characters, and
 * the way back to the original bytes. */
#include "config.h"

#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/text.h"
#include "../tap.h"

static const char *
escaped(const char *src, size_t size)
{
	static char out[1024];

	ceems_text_escape(out, size, src, strlen(src), NULL);
	return out;
}

/* Unescaping what was escaped gives the original back. */
static bool
round_trips(const char *src, size_t len)
{
	char out[4096], back[1024];
	bool cut;
	long n;

	ceems_text_escape(out, sizeof(out), src, len, &cut);
	n = ceems_text_unescape(back, sizeof(back), out);
	return !cut && ceems_text_is_clean(out) && n == (long)strnlen(src, len) &&
	       memcmp(back, src, (size_t)n) == 0;
}

static void
test_kept(void)
{
	is_str(escaped("plain-job_1.sh", 64), "plain-job_1.sh", "ASCII is kept");
	is_str(escaped("\xc3\xa9t\xc3\xa9 \xe2\x82\xac \xf0\x9f\x94\xa5", 64),
	       "\xc3\xa9t\xc3\xa9 \xe2\x82\xac \xf0\x9f\x94\xa5",
	       "two-, three- and four-byte characters are kept");
	is_str(escaped("C:\\dir\\file", 64), "C:\\dir\\file",
	       "a backslash before anything but x or a backslash is kept");
	is_str(escaped("end\\", 64), "end\\", "a final backslash is kept");
	ok(ceems_text_is_clean("\xc3\xa9t\xc3\xa9"), "valid UTF-8 is clean");
}

static void
test_escaped(void)
{
	is_str(escaped("bad\xffname", 64), "bad\\xffname",
	       "an invalid byte is \\xHH");
	is_str(escaped("\x80", 64), "\\x80", "a stray continuation byte");
	is_str(escaped("\xc3(", 64), "\\xc3(", "a lead byte without its continuation");
	is_str(escaped("\xc0\xaf", 64), "\\xc0\\xaf", "an overlong '/'");
	is_str(escaped("\xe0\x80\xaf", 64), "\\xe0\\x80\\xaf", "an overlong three-byte form");
	is_str(escaped("\xed\xa0\x80", 64), "\\xed\\xa0\\x80", "a surrogate");
	is_str(escaped("\xf4\x90\x80\x80", 64), "\\xf4\\x90\\x80\\x80",
	       "beyond U+10FFFF");
	is_str(escaped("\xe2\x82", 64), "\\xe2\\x82", "a character cut short");
	is_str(escaped("a\tb\x1b[31m\x7f", 64), "a\\x09b\\x1b[31m\\x7f",
	       "C0 controls and DEL are escaped");
	is_str(escaped("\xc2\x9b" "1m", 64), "\\xc2\\x9b1m",
	       "a C1 control is escaped, both its bytes");
	is_str(escaped("\xc2\xa0", 64), "\xc2\xa0", "U+00A0, above C1, is kept");
	is_str(escaped("\\x41", 64), "\\\\x41",
	       "a backslash before x is doubled: typed \\x41 is not the byte A");
	is_str(escaped("a\\\\b", 64), "a\\\\\\b",
	       "of two backslashes the first is doubled");
	is_str(escaped("\\\xff", 64), "\\\\\\xff",
	       "a backslash before an escaped byte is doubled");
	ok(!ceems_text_is_clean("bad\xffname"), "invalid UTF-8 is not clean");
	ok(!ceems_text_is_clean("a\nb"), "a newline is not clean");
}

static void
test_cut(void)
{
	char name[256], many[512];
	bool cut;
	size_t n;

	/* 200 two-byte characters, 400 bytes, into a 256-byte field. */
	for (int i = 0; i < 200; i++)
		memcpy(many + 2 * i, "\xc3\xa9", 2);
	many[400] = '\0';
	n = ceems_text_escape(name, sizeof(name), many, strlen(many), &cut);
	ok(cut, "a name longer than its field is cut, and says so");
	is_int(n, 254, "cut before the character that would not fit whole");
	ok(ceems_text_is_clean(name), "the cut name is valid UTF-8");
	is_str(escaped("ab\xff", 6), "ab", "an escape is never cut (\\xff needs 4)");
	is_str(escaped("ab\\x", 4), "ab", "a doubled backslash is never cut");
	is_str(escaped("\xe2\x82\xac\xe2\x82\xac", 6), "\xe2\x82\xac",
	       "a three-byte character is never cut");
	is_str(escaped("\xc2\x85z", 8), "", "a C1 control's two escapes go together");
	n = ceems_text_escape(name, 1, "abc", 3, &cut);
	ok(n == 0 && name[0] == '\0' && cut, "a field of one byte holds \"\"");
}

static void
test_safe(void)
{
	char out[64];

	ceems_text_safe(out, sizeof(out), "\\\\x41 \xc3\xa9");
	is_str(out, "\\\\x41 \xc3\xa9", "escaped text is not escaped twice");
	ceems_text_safe(out, sizeof(out), "bad\xffname");
	is_str(out, "bad\\xffname", "text that is not clean is escaped");
	ceems_text_safe(out, 7, "abc\\xffz");
	is_str(out, "abc", "clean text is cut before a whole escape");
	ceems_text_safe(out, 5, "a\xc3\xa9\xc3\xa9");
	is_str(out, "a\xc3\xa9", "clean text is cut between characters");
}

static void
test_unescape(void)
{
	static const char *const originals[] = {
		"", "plain", "bad\xffname", "\\x41", "\\\\", "\\", "\\\xff",
		"x\\", "\\\\\\x", "\x01\x02\x7f\xc2\x80\xc2\x9f", "\xc3\xa9\\xzz",
		"\xed\xbf\xbf\xf0\x8f\xbf\xbf", "a\\\x80\\x",
	};
	char back[16];

	for (size_t i = 0; i < sizeof(originals) / sizeof(originals[0]); i++)
		ok(round_trips(originals[i], strlen(originals[i])),
		   "escape then unescape gives the bytes back (%zu)", i);
	is_int(ceems_text_unescape(back, sizeof(back), "\\xzz\\x4"), 7,
	       "\\x without two hex digits is itself");
	is_int(ceems_text_unescape(back, 3, "abc"), -1,
	       "a result that does not fit is refused");
}

/* Every string of up to three bytes from a small alphabet that holds
 * each kind of byte the escape treats apart. */
static void
test_exhaustive(void)
{
	static const char alphabet[] = { 'a', 'x', '\\', '\x01', '\x7f',
		'\x80', '\x9f', '\xc2', '\xc3', '\xa9', '\xe2', '\x82', '\xff' };
	const size_t na = sizeof(alphabet);
	size_t bad = 0, total = 0;

	for (size_t len = 1; len <= 3; len++) {
		size_t count = 1;

		for (size_t k = 0; k < len; k++)
			count *= na;
		for (size_t v = 0; v < count; v++) {
			char s[4];
			size_t w = v;

			for (size_t k = 0; k < len; k++, w /= na)
				s[k] = alphabet[w % na];
			s[len] = '\0';
			total++;
			if (!round_trips(s, len))
				bad++;
		}
	}
	ok(bad == 0, "all %zu short strings round-trip (%zu did not)", total, bad);
}

int
main(void)
{
	test_kept();
	test_escaped();
	test_cut();
	test_safe();
	test_unescape();
	test_exhaustive();
	return done_testing();
}
