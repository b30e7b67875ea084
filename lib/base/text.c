/* text.c - text from outside made safe for JSON, PostgreSQL and
 * terminals, once, where it enters: valid UTF-8 kept, anything else
 * escaped as "\xHH", cut only between characters (rules in text.h). */
#include "config.h"

#include <stdbool.h>
#include <stddef.h>
#include <string.h>

#include "base/text.h"

/* Length of the valid UTF-8 character at S (N bytes left), or 0 when
 * the bytes there begin none: a stray continuation byte, a lead byte
 * without its continuations, an overlong form (C0, C1, E0 80..9F,
 * F0 80..8F), a surrogate (ED A0..BF) or beyond U+10FFFF. */
static size_t
utf8_char_len(const unsigned char *s, size_t n)
{
	unsigned char c = s[0], lo = 0x80, hi = 0xbf;
	size_t need;

	if (c < 0x80)
		return 1;
	if (c >= 0xc2 && c <= 0xdf)
		need = 1;
	else if (c >= 0xe0 && c <= 0xef)
		need = 2;
	else if (c >= 0xf0 && c <= 0xf4)
		need = 3;
	else
		return 0;
	if (c == 0xe0)
		lo = 0xa0;
	else if (c == 0xed)
		hi = 0x9f;
	else if (c == 0xf0)
		lo = 0x90;
	else if (c == 0xf4)
		hi = 0x8f;
	if (n < need + 1 || s[1] < lo || s[1] > hi)
		return 0;
	for (size_t i = 2; i <= need; i++)
		if ((s[i] & 0xc0) != 0x80)
			return 0;
	return need + 1;
}

/* C0 controls, DEL, and the C1 controls U+0080..U+009F (C2 80..9F). */
static bool
is_control(const unsigned char *s, size_t clen)
{
	if (clen == 1)
		return s[0] < 0x20 || s[0] == 0x7f;
	return clen == 2 && s[0] == 0xc2 && s[1] <= 0x9f;
}

/* How many bytes at S (N left) are one unit of the escape: a character
 * kept as it is (*KEEP true), or bytes written as "\xHH" each (*KEEP
 * false): the bytes of a control character, or one invalid byte. */
static size_t
next_unit(const unsigned char *s, size_t n, bool *keep)
{
	size_t clen = utf8_char_len(s, n);

	if (clen == 0) {
		*keep = false;
		return 1;
	}
	*keep = !is_control(s, clen);
	return clen;
}

static void
put_hex(char *dst, unsigned char c)
{
	static const char digits[] = "0123456789abcdef";

	dst[0] = '\\';
	dst[1] = 'x';
	dst[2] = digits[c >> 4];
	dst[3] = digits[c & 0x0f];
}

size_t
ceems_text_escape(char *dst, size_t size, const char *src, size_t len,
		  bool *cut)
{
	const unsigned char *s = (const unsigned char *)src;
	size_t i = 0, o = 0;

	if (cut != NULL)
		*cut = false;
	if (size == 0)
		return 0;
	if (src == NULL)
		len = 0;
	else
		len = strnlen(src, len);
	while (i < len) {
		char unit[8];
		size_t ulen = 0, n;
		bool keep;

		n = next_unit(s + i, len - i, &keep);
		if (!keep) {
			for (size_t k = 0; k < n; k++, ulen += 4)
				put_hex(unit + ulen, s[i + k]);
		} else if (s[i] == '\\') {
			/* Doubled when the escaped text goes on with 'x' or
			 * a backslash: an escape or a backslash of its own. */
			bool next_keep = true;

			unit[ulen++] = '\\';
			if (i + 1 < len)
				(void)next_unit(s + i + 1, len - i - 1, &next_keep);
			if (i + 1 < len && (s[i + 1] == 'x' || s[i + 1] == '\\' ||
					    !next_keep))
				unit[ulen++] = '\\';
		} else {
			memcpy(unit, s + i, n);
			ulen = n;
		}
		if (o + ulen >= size) {
			if (cut != NULL)
				*cut = true;
			break;
		}
		memcpy(dst + o, unit, ulen);
		o += ulen;
		i += n;
	}
	dst[o] = '\0';
	return o;
}

size_t
ceems_text_set(char *dst, size_t size, const char *src)
{
	return ceems_text_escape(dst, size, src, src != NULL ? strlen(src) : 0,
				 NULL);
}

bool
ceems_text_is_clean(const char *s)
{
	const unsigned char *p = (const unsigned char *)s;
	size_t len = strlen(s), i = 0;

	while (i < len) {
		bool keep;
		size_t n = next_unit(p + i, len - i, &keep);

		if (!keep)
			return false;
		i += n;
	}
	return true;
}

bool
ceems_text_is_utf8(const char *s, size_t len)
{
	const unsigned char *p = (const unsigned char *)s;
	size_t i = 0;

	while (i < len) {
		size_t n = utf8_char_len(p + i, len - i);

		if (n == 0)
			return false;
		i += n;
	}
	return true;
}

static bool
is_hex(char c)
{
	return (c >= '0' && c <= '9') || (c >= 'a' && c <= 'f') ||
	       (c >= 'A' && c <= 'F');
}

/* Bytes of the unit of clean text at S (N left) that a cut must keep
 * whole: "\\", "\xHH", or one UTF-8 character. */
static size_t
clean_unit(const char *s, size_t n)
{
	bool keep;

	if (s[0] == '\\' && n >= 2 && s[1] == '\\')
		return 2;
	if (s[0] == '\\' && n >= 4 && s[1] == 'x' && is_hex(s[2]) &&
	    is_hex(s[3]))
		return 4;
	return next_unit((const unsigned char *)s, n, &keep);
}

size_t
ceems_text_safe(char *dst, size_t size, const char *s)
{
	size_t len, o = 0;

	if (size == 0)
		return 0;
	if (s == NULL)
		s = "";
	if (!ceems_text_is_clean(s))
		return ceems_text_set(dst, size, s);
	len = strlen(s);
	while (o < len) {
		size_t n = clean_unit(s + o, len - o);

		if (o + n >= size)
			break;
		o += n;
	}
	memmove(dst, s, o);
	dst[o] = '\0';
	return o;
}

static unsigned
hex_value(char c)
{
	if (c >= '0' && c <= '9')
		return (unsigned)(c - '0');
	if (c >= 'a' && c <= 'f')
		return (unsigned)(c - 'a' + 10);
	return (unsigned)(c - 'A' + 10);
}

long
ceems_text_unescape(char *dst, size_t size, const char *s)
{
	size_t o = 0;

	while (*s != '\0') {
		char c = *s++;

		if (c == '\\' && s[0] == '\\') {
			s++;
		} else if (c == '\\' && s[0] == 'x' && is_hex(s[1]) &&
			   is_hex(s[2])) {
			c = (char)(hex_value(s[1]) << 4 | hex_value(s[2]));
			s += 3;
		}
		if (o + 1 >= size)
			return -1;
		dst[o++] = c;
	}
	if (size == 0)
		return -1;
	dst[o] = '\0';
	return (long)o;
}
