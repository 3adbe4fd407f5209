/* strutil.h — small string helpers: trimming, strict number parsing, exact number printing,
 * sizes, reading a file, shell quoting, control characters made visible. */
#ifndef CARMA_UTIL_STRUTIL_H
#define CARMA_UTIL_STRUTIL_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "util/err.h"

/* Trims ASCII whitespace at both ends in place; returns s. */
char *str_trim(char *s);

/* Strict parsers: the whole string (after trimming) must be the number. Return 0 or -1;
 * parse_i64's -1 leaves errno ERANGE for a whole number past int64's range, else EINVAL, so
 * that a message can say "out of range" rather than "not a number". */
int parse_i64(const char *s, int64_t *out);
int parse_u64(const char *s, uint64_t *out);
int parse_double(const char *s, double *out); /* decimal only: no hex, inf or nan */
/* A yes/no word: on/off, yes/no, true/false, 1/0. */
int parse_bool(const char *s, bool *out);

/* A memory size in MiB: "512" (MiB), "512M", "512MiB", "20G", "20GiB", "1.5G". */
int parse_size_mib(const char *s, uint64_t *out);

/* v as the shortest of %.15g, %.16g and %.17g that reads back as the same double, into buf
 * (at least 32 bytes): a number a person typed (15 digits or fewer) comes back as typed, and
 * every double round-trips exactly. Traces and configs print their numbers with it. */
void fmt_double(char *buf, size_t size, double v);

/* strdup that returns NULL only on allocation failure (NULL in -> NULL out). */
char *str_dup(const char *s);

/* Opens path for reading ("rb") when it is a regular file, without ever waiting: a FIFO's
 * open would block until a writer came, and a device such as /dev/zero would be read for
 * ever. The descriptor opened is the one checked (fstat), so a name swapped in between is
 * no way around it. Every file carma reads for a user (config, task files, traces, catalogs,
 * summaries) comes through here. NULL with err "PATH: why" ("Is a directory", "not a regular
 * file", ...). */
FILE *fopen_regular(const char *path, carma_err *err);

/* Before dlopen of a library a user named (--library, $CARMA_NVML_LIBRARY, $CARMA_DCGM_LIBRARY):
 * dlopen would wait for ever on a FIFO and says little of a directory. -1 with err "NAME: why"
 * (as fopen_regular's) when NAME is a path (it has a slash) to something that is not a regular
 * file; else 0: a bare name is the loader's to search for, and a path that cannot be reached
 * is dlopen's to report. Checked, then opened, by name: the user names their own library. */
int library_path_check(const char *name, carma_err *err);

/* Reads a whole regular file (fopen_regular) into a NUL-terminated heap buffer. NULL with err
 * "PATH: why" on failure. */
char *read_file(const char *path, size_t *len_out, carma_err *err);

/* 0 when text[0..len) holds no NUL byte, else the 1-based line of the first one: a parser
 * that reads read_file's text as a C string would silently stop there, so it refuses such a
 * file naming that line. */
size_t text_nul_line(const char *text, size_t len);

/* read_file for a parser that reads the text as a C string: NULL with err "PATH: why" when it
 * cannot be read, or "PATH:LINE: contains a NUL byte" (text_nul_line). */
char *read_text_file(const char *path, size_t *len_out, carma_err *err);

/* True when s ends with suffix. */
bool str_ends_with(const char *s, const char *suffix);

/* Appends arg to the command line *line (*len bytes; NULL and 0 to start one) as one /bin/sh
 * word: a space first unless the line is empty, and arg single-quoted (each ' as '\'') when
 * it holds anything but ASCII letters, digits and -_./=:,+@% (an empty arg gives '').
 * Returns 0, or -1 when out of memory (*line is then unchanged and still the caller's). */
int str_append_shell_word(char **line, size_t *len, const char *arg);

/* s with its control characters made visible, for a terminal: C0 controls and DEL as \n,
 * \t, \r or \xHH, and the C1 controls (U+0080..U+009F, which some terminals obey as escape
 * sequences) as \u0080..\u009f, a byte that starts no UTF-8 character (a lone 0x9b is CSI to
 * a terminal reading 8-bit controls) as \xHH, the bidirectional formatting controls (U+202E
 * and its kin, which reorder what a terminal shows) as \uXXXX; everything else, backslashes
 * included, is kept.
 * What other users named (task names, commands) goes through it before a human sees it. A new
 * heap string (NULL in -> NULL out, and NULL when out of memory). */
char *str_escape_controls(const char *s);

/* As str_escape_controls, but newlines and tabs are kept as they are: for text of many lines
 * that another user wrote, such as a task's output shown to root (`carma logs`). */
char *str_escape_controls_text(const char *s);

/* Whether s[0..n) is a portable environment variable name (POSIX: letters, digits and
 * underscores, not starting with a digit), as a task file and --env take them. */
bool str_env_name_valid(const char *s, size_t n);

/* The length (1..4) of the valid UTF-8 character at s, within `left` bytes; 0 when none
 * starts there (a NUL, a stray byte, an overlong form, a surrogate, past U+10FFFF). */
size_t str_utf8_seq(const char *s, size_t left);

/* Whether s is valid UTF-8 (RFC 3629: no overlong forms, surrogates or code points past
 * U+10FFFF), as JSON text must be. */
bool str_utf8_valid(const char *s);

/* What a text reader says of a carriage return not before a newline (old Mac line ends), after
 * "FILE:LINE: " (csv.c, rad.c): a file so written is text, not binary, and one row. */
#define STR_LONE_CR_MSG                                                                       \
    "a carriage return with no newline after it (old Mac line ends?): lines must end in LF " \
    "or CR LF"

/* The longest prefix of s of at most max_bytes bytes that ends between characters, so that a
 * cut never splits a UTF-8 sequence (bytes that start none count as one character each). */
size_t str_utf8_fit(const char *s, size_t max_bytes);

/* s cut to `width` characters and padded with spaces to them, for a column of text output
 * (a character taken as one column). A new heap string; NULL in -> NULL out. */
char *str_column(const char *s, size_t width);

#endif
