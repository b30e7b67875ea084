/* text.h - the one way text from outside enters ceems: job names,
 * accounts, partitions, QOS, user, node and cluster names, node lists,
 * paths.  Slurm and the system accept any bytes but NUL there; JSON (the
 * records, the agent's socket) and PostgreSQL's text and jsonb accept
 * only valid UTF-8, and a terminal obeys control characters.  So every
 * such string is escaped once, where it enters, into a fixed-size field:
 *
 *   - valid UTF-8 characters are kept as they are, except the controls
 *     below;
 *   - a byte that is not part of a valid UTF-8 character (a stray
 *     continuation byte, a cut or overlong sequence, a surrogate, above
 *     U+10FFFF) and each byte of a control character (C0, DEL, and C1,
 *     U+0080..U+009F) becomes "\xHH", two lowercase hex digits;
 *   - a backslash that would be followed by 'x' or by another backslash
 *     in the escaped text is doubled ("\\"), so that "\x41" typed by a
 *     user and the escape of a byte never read alike;
 *   - a result too long for its field is cut before a whole character,
 *     escape or doubled backslash, never inside one.
 *
 * ceems_text_unescape gives the original bytes back (a prefix of them
 * when the text was cut), so the escape loses nothing it kept. */
#ifndef CEEMS_TEXT_H
#define CEEMS_TEXT_H

#include <stdbool.h>
#include <stddef.h>

/* Escape the LEN bytes at SRC (which may hold anything; a NUL ends it)
 * into DST, SIZE bytes with its NUL (SIZE > 0).  Returns the length of
 * DST; *CUT (if not NULL) says whether the text was cut to fit. */
size_t ceems_text_escape(char *dst, size_t size, const char *src,
			 size_t len, bool *cut);

/* ceems_text_escape of the C string SRC (NULL is ""). */
size_t ceems_text_set(char *dst, size_t size, const char *src);

/* Is S already text (valid UTF-8 without control characters)?  What
 * ceems_text_escape writes always is. */
bool ceems_text_is_clean(const char *s);

/* Are the LEN bytes at S valid UTF-8 (controls allowed, NUL too)? */
bool ceems_text_is_utf8(const char *s, size_t len);

/* S as it may go into a field of SIZE bytes (with its NUL) of a JSON
 * message or a database row: clean text that fits is copied as it is (an
 * escaped string is never escaped twice); anything else, which only a
 * caller that skipped ceems_text_escape can hand over, is escaped.  Clean
 * text too long is cut as the escape cuts.  Returns the length of DST. */
size_t ceems_text_safe(char *dst, size_t size, const char *s);

/* The bytes escaped text S stood for, into DST (SIZE bytes, a NUL added
 * after them): "\\" is one backslash, "\xHH" the byte HH, anything else
 * itself.  Returns their number, or -1 when DST is too small.  (Text
 * that ceems_text_escape did not write may hold "\x00": DST then holds
 * a NUL before its end, which the returned length shows.) */
long ceems_text_unescape(char *dst, size_t size, const char *s);

#endif
