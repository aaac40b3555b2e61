/*
 * cudaenv-fastshim: the shims' fast path, for Linux.
 *
 * A shim call spends most of its time starting a process; a Go program
 * costs about 1 ms more to start than a C one (runtime set-up, threads,
 * page faults), which is more than the whole rest of a shim call. So the
 * shims may point at this small C program instead of cudaenv-shim. It
 * handles the common call completely, and only that:
 *
 *   a command NVIDIA ships (commands.txt), no prompt hook or cudaenv exec
 *   in the environment, the selection from CUDAENV_VERSION, the nearest
 *   .cuda-version (with no lock beside it), a .tool-versions' cuda line or
 *   the global default holding one CUDA version spec (12.4, cuda@12.4,
 *   latest), no settings file, no system store, a toolkit installed by
 *   cudaenv or adopted with cudaenv link (a receipt as link writes it,
 *   naming a directory).
 *
 * It then does exactly what cudaenv-shim does (shims.Resolve): the same
 * toolkit, the same environment, the same loop mark. For anything else,
 * and whenever anything is unusual (a file that is a link, is large, is
 * on a network file system, a value that JSON or the state encoding would
 * escape, a duplicate variable...), it runs cudaenv-shim, installed
 * beside it, with the same arguments and environment, and that decides,
 * warns and reports errors. This program therefore never prints anything
 * but the one error of not finding cudaenv-shim, and never decides
 * anything cudaenv-shim would decide differently: the test suite runs
 * both on the same cases and compares what they run and in which
 * environment (cmd/cudaenv-shim/fastshim_test.go).
 *
 * Everything read here comes from the user's environment or from
 * untrusted repositories (.cuda-version): every buffer is bounded, every
 * parse is strict and gives up (to cudaenv-shim) rather than guess, no
 * file is opened that is not a regular file, and files are opened without
 * blocking and read only on file systems that cannot hang (see local_fs).
 */
#define _GNU_SOURCE
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <sys/types.h>
#include <unistd.h>

#include "known.h"

static char **g_argv;
static char **g_envp;

/* ---- falling back to cudaenv-shim ---- */

static void put_escaped(const char *s)
{
	/* Control characters in a path must not reach the terminal; bytes
	 * past ASCII (C1 controls, invalid UTF-8) are escaped too, simply. */
	char buf[4096];
	size_t n = 0;
	for (; *s && n < sizeof buf - 8; s++) {
		unsigned char c = (unsigned char)*s;
		if (c < 0x20 || c >= 0x7f) {
			n += (size_t)snprintf(buf + n, sizeof buf - n, "\\x%02x", c);
		} else {
			buf[n++] = (char)c;
		}
	}
	if (write(2, buf, n) < 0) {
		/* nothing left to report to */
	}
}

/* go_shim is the cudaenv-shim beside this binary's real file; NULL, with
 * why and err set, when its path cannot be had. */
static const char *go_shim(const char **why, int *err)
{
	static char path[PATH_MAX];
	ssize_t n = readlink("/proc/self/exe", path, sizeof path - 1);
	if (n <= 0 || (size_t)n >= sizeof path - 1) {
		*why = "cannot find its own folder";
		*err = errno;
		return NULL;
	}
	path[n] = 0;
	char *slash = strrchr(path, '/');
	const char *name = "/cudaenv-shim";
	if (!slash || (size_t)(slash - path) + strlen(name) + 1 > sizeof path) {
		*why = "its path is too long";
		*err = 0;
		return NULL;
	}
	strcpy(slash, name);
	return path;
}

/* fallback runs cudaenv-shim from this binary's folder with the call's
 * own arguments and environment; it returns only to exit. */
static void fallback(void)
{
	const char *why = NULL;
	int err = 0;
	const char *path = go_shim(&why, &err);
	if (path) {
		execve(path, g_argv, g_envp);
		err = errno;
		why = path;
	}
	const char *msg = "cudaenv: cudaenv-fastshim cannot run cudaenv-shim, which must be installed beside it (";
	if (write(2, msg, strlen(msg)) < 0) {
		/* ignore */
	}
	put_escaped(why);
	if (err) {
		put_escaped(": ");
		put_escaped(strerror(err));
	}
	put_escaped("); reinstall both with: make install");
	if (write(2, "\n", 1) < 0) {
		/* ignore */
	}
	_exit(126);
}

/* Built with -DFASTSHIM_DEBUG, it says which check sent a call on. */
#ifdef FASTSHIM_DEBUG
#define FALLBACK() (fprintf(stderr, "fastshim: falls back at line %d\n", __LINE__), fallback())
#else
#define FALLBACK() fallback()
#endif

/* ---- strings ---- */

struct buf {
	char *p;
	size_t len, cap;
};

static void b_add(struct buf *b, const char *s, size_t n)
{
	if (b->len + n + 1 > b->cap) {
		size_t cap = b->cap ? b->cap : 256;
		while (b->len + n + 1 > cap) {
			cap *= 2;
		}
		char *p = realloc(b->p, cap);
		if (!p) {
			FALLBACK();
		}
		b->p = p;
		b->cap = cap;
	}
	memcpy(b->p + b->len, s, n);
	b->len += n;
	b->p[b->len] = 0;
}

static void b_str(struct buf *b, const char *s) { b_add(b, s, strlen(s)); }

static char *xstrdup(const char *s)
{
	char *p = strdup(s);
	if (!p) {
		FALLBACK();
	}
	return p;
}

/* clean is Go's path/filepath.Clean for Unix paths: the shortest
 * equivalent path by purely lexical processing. */
static char *clean(const char *path)
{
	size_t n = strlen(path);
	if (n == 0) {
		return xstrdup(".");
	}
	int rooted = path[0] == '/';
	char *out = malloc(n + 2);
	if (!out) {
		FALLBACK();
	}
	size_t w = 0, r = 0, dotdot = 0;
	if (rooted) {
		out[w++] = '/';
		r = 1;
		dotdot = 1;
	}
	while (r < n) {
		if (path[r] == '/') {
			r++;
		} else if (path[r] == '.' && (r + 1 == n || path[r + 1] == '/')) {
			r++;
		} else if (path[r] == '.' && path[r + 1] == '.' && (r + 2 == n || path[r + 2] == '/')) {
			r += 2;
			if (w > dotdot) {
				w--;
				while (w > dotdot && out[w] != '/') {
					w--;
				}
			} else if (!rooted) {
				if (w > 0) {
					out[w++] = '/';
				}
				out[w++] = '.';
				out[w++] = '.';
				dotdot = w;
			}
		} else {
			if ((rooted && w != 1) || (!rooted && w != 0)) {
				out[w++] = '/';
			}
			for (; r < n && path[r] != '/'; r++) {
				out[w++] = path[r];
			}
		}
	}
	if (w == 0) {
		out[w++] = '.';
	}
	out[w] = 0;
	return out;
}

/* join is filepath.Join for two elements. */
static char *join(const char *a, const char *b)
{
	if (!*a && !*b) {
		return xstrdup("");
	}
	if (!*a) {
		return clean(b);
	}
	if (!*b) {
		return clean(a);
	}
	struct buf t = {0};
	b_str(&t, a);
	b_str(&t, "/");
	b_str(&t, b);
	char *c = clean(t.p);
	free(t.p);
	return c;
}

/* ---- the environment ---- */

static size_t key_len(const char *kv)
{
	const char *eq = strchr(kv, '=');
	return eq ? (size_t)(eq - kv) : 0;
}

/* by_key orders KEY=VALUE entries by KEY. */
static int by_key(const void *a, const void *b)
{
	const char *x = *(const char *const *)a, *y = *(const char *const *)b;
	size_t kx = key_len(x), ky = key_len(y);
	int c = memcmp(x, y, kx < ky ? kx : ky);
	return c ? c : (kx > ky) - (kx < ky);
}

/* check_environ falls back on what cudaenv-shim reads differently from a
 * plain list: entries without a name, and names given twice (it keeps the
 * last). Sorted, a repeat is a neighbour: a pod's thousands of variables
 * cost n log n. */
static void check_environ(void)
{
	size_t n = 0;
	while (g_envp[n]) {
		if (key_len(g_envp[n]) == 0) {
			FALLBACK();
		}
		n++;
	}
	const char **keys = malloc((n + 1) * sizeof *keys);
	if (!keys) {
		FALLBACK();
	}
	memcpy(keys, g_envp, n * sizeof *keys);
	qsort(keys, n, sizeof *keys, by_key);
	for (size_t i = 1; i < n; i++) {
		if (by_key(&keys[i - 1], &keys[i]) == 0) {
			FALLBACK();
		}
	}
	free(keys);
}

static const char *env_get(const char *key)
{
	size_t k = strlen(key);
	for (size_t i = 0; g_envp[i]; i++) {
		if (strncmp(g_envp[i], key, k) == 0 && g_envp[i][k] == '=') {
			return g_envp[i] + k + 1;
		}
	}
	return NULL;
}

/* ---- folders (internal/dirs) ---- */

static char *g_home;

static char *expand_home(const char *p)
{
	if (p[0] == '~') {
		return join(g_home, p + 1);
	}
	if (strncmp(p, "$HOME", 5) == 0) {
		return join(g_home, p + 5);
	}
	return xstrdup(p);
}

/* pick is an XDG home: the variable when absolute, else the default. */
static char *pick(const char *var, const char *def)
{
	const char *v = env_get(var);
	const char *cands[2] = {v ? v : "", def};
	for (int i = 0; i < 2; i++) {
		char *p = expand_home(cands[i]);
		if (p[0] == '/') {
			return p;
		}
		free(p);
	}
	return xstrdup("");
}

/* utf8_len is the length of the valid UTF-8 sequence at s that encodes one
 * character past ASCII, as Go decodes it (no overlong forms, surrogates or
 * values past U+10FFFF); 0 when the bytes there are not one. */
static size_t utf8_len(const unsigned char *s)
{
	unsigned char c = s[0];
	if (c >= 0xc2 && c <= 0xdf) {
		return (s[1] & 0xc0) == 0x80 ? 2 : 0;
	}
	if (c >= 0xe0 && c <= 0xef) {
		unsigned char lo = c == 0xe0 ? 0xa0 : 0x80, hi = c == 0xed ? 0x9f : 0xbf;
		return s[1] >= lo && s[1] <= hi && (s[2] & 0xc0) == 0x80 ? 3 : 0;
	}
	if (c >= 0xf0 && c <= 0xf4) {
		unsigned char lo = c == 0xf0 ? 0x90 : 0x80, hi = c == 0xf4 ? 0x8f : 0xbf;
		return s[1] >= lo && s[1] <= hi && (s[2] & 0xc0) == 0x80 && (s[3] & 0xc0) == 0x80 ? 4 : 0;
	}
	return 0;
}

/* store_dir is one of cudaenv's folders: the variable when set, else the
 * default; one cudaenv would refuse sends the call to cudaenv-shim, which
 * says why. Text that is not UTF-8 is handed on too, for simplicity. */
static char *store_dir(const char *var, const char *base, int on_path)
{
	const char *v = env_get(var);
	char *p = (v && *v) ? xstrdup(v) : join(base, "cudaenv");
	for (const unsigned char *s = (const unsigned char *)p; *s; s++) {
		if (*s >= 0x80) {
			size_t n = utf8_len(s);
			if (n == 0) {
				FALLBACK();
			}
			s += n - 1;
		} else if (*s < 0x20 || *s == 0x7f || (on_path && *s == ':')) {
			FALLBACK();
		}
	}
	if (p[0] != '/') {
		FALLBACK();
	}
	char *c = clean(p);
	free(p);
	return c;
}

/* ---- reading files ---- */

/* read_fd reads fd to its end into buf (of size max + 1), and falls back
 * on an error or more than max bytes; the text is NUL-terminated. */
static size_t read_fd(int fd, char *buf, size_t max)
{
	size_t n = 0;
	for (;;) {
		ssize_t r = read(fd, buf + n, max + 1 - n);
		if (r < 0 && errno == EINTR) {
			continue;
		}
		if (r < 0) {
			FALLBACK();
		}
		if (r == 0) {
			break;
		}
		n += (size_t)r;
		if (n > max) {
			FALLBACK();
		}
	}
	buf[n] = 0;
	return n;
}

/* local_fs reports whether the file at path, on device dev, is on a file
 * system whose reads cannot hang: one on a block device, or one of the
 * local kinds that have none, as the kernel's mount table says (read
 * once; it never hangs, and the file system itself is not asked). The
 * mount is found by its id where the kernel gives one (statx, Linux 5.8),
 * else by device number, which a btrfs subvolume does not share with its
 * mount. A network or FUSE mount goes to cudaenv-shim, which reads with a
 * deadline. */
static int local_fs(const char *path, dev_t dev)
{
	if (major(dev) != 0) {
		return 1;
	}
	static const char *const kinds[] = {"tmpfs", "overlay", "btrfs", "zfs", "ramfs", "ext4", "ext3",
					    "ext2", "xfs", "f2fs", "bcachefs", "squashfs", "erofs", NULL};
	long long id = -1;
#ifdef STATX_MNT_ID
	struct statx sx;
	if (statx(AT_FDCWD, path, AT_SYMLINK_NOFOLLOW, STATX_MNT_ID, &sx) == 0 && (sx.stx_mask & STATX_MNT_ID)) {
		id = (long long)sx.stx_mnt_id;
	}
#else
	(void)path;
#endif
	static char mi[1 << 20];
	static int have;
	if (!have) {
		int fd = open("/proc/self/mountinfo", O_RDONLY | O_CLOEXEC);
		if (fd < 0) {
			return 0;
		}
		read_fd(fd, mi, sizeof mi - 1);
		close(fd);
		have = 1;
	}
	/* "ID PARENT MAJ:MIN ROOT MOUNT OPTS [TAGS...] - FSTYPE SOURCE OPTS" */
	for (const char *line = mi; *line;) {
		const char *end = strchr(line, '\n');
		if (!end) {
			end = line + strlen(line);
		}
		long long lid;
		unsigned maj, min;
		int used = 0;
		const char *dash = strstr(line, " - ");
		if (dash && dash < end && sscanf(line, "%lld %*d %u:%u %n", &lid, &maj, &min, &used) == 3 && used > 0 &&
		    (id >= 0 ? lid == id : (maj == major(dev) && min == minor(dev)))) {
			const char *fs = dash + 3;
			size_t fl = strcspn(fs, " \n");
			for (int i = 0; kinds[i]; i++) {
				if (strlen(kinds[i]) == fl && strncmp(fs, kinds[i], fl) == 0) {
					return 1;
				}
			}
			return 0;
		}
		line = *end ? end + 1 : end;
	}
	return 0;
}

enum probe { ABSENT, PRESENT };

/* probe says whether path is there, as cudaenv-shim's stat would: missing
 * (or under a non-folder) is ABSENT; there is PRESENT; anything else
 * (no permission, a loop) falls back. */
static enum probe probe(const char *path, struct stat *st)
{
	if (lstat(path, st) == 0) {
		return PRESENT;
	}
	if (errno == ENOENT || errno == ENOTDIR) {
		return ABSENT;
	}
	FALLBACK();
	return ABSENT;
}

/* read_small reads a regular file of at most max bytes into a fresh
 * NUL-terminated buffer; anything else falls back. The file is opened
 * without blocking (a pipe swapped in after the lstat) and must still be
 * the file lstat saw. */
static char *read_small(const char *path, const struct stat *seen, size_t max, size_t *len)
{
	if (!S_ISREG(seen->st_mode) || (size_t)seen->st_size > max || !local_fs(path, seen->st_dev)) {
		FALLBACK();
	}
	int fd = open(path, O_RDONLY | O_NONBLOCK | O_NOCTTY | O_CLOEXEC);
	if (fd < 0) {
		FALLBACK();
	}
	struct stat now;
	if (fstat(fd, &now) != 0 || !S_ISREG(now.st_mode) || now.st_dev != seen->st_dev || now.st_ino != seen->st_ino) {
		FALLBACK();
	}
	char *data = malloc(max + 2);
	if (!data) {
		FALLBACK();
	}
	*len = read_fd(fd, data, max);
	close(fd);
	return data;
}

/* ---- version specs (internal/version, internal/resolve) ---- */

struct version {
	int n;
	long part[4];
};

/* parse_version is version.Parse: one to max parts of one to nine digits. */
static int parse_version(const char *s, size_t len, int max, struct version *v)
{
	v->n = 0;
	size_t i = 0;
	for (;;) {
		size_t start = i;
		long x = 0;
		while (i < len && s[i] >= '0' && s[i] <= '9') {
			if (i - start == 9) {
				return 0; /* a tenth digit: too long, and no overflow */
			}
			x = x * 10 + (s[i] - '0');
			i++;
		}
		if (i == start || i - start > 9 || v->n == max) {
			return 0;
		}
		v->part[v->n++] = x;
		if (i == len) {
			return 1;
		}
		if (s[i] != '.') {
			return 0;
		}
		i++;
	}
}

static int compare(const struct version *a, const struct version *b)
{
	for (int i = 0; i < a->n && i < b->n; i++) {
		if (a->part[i] != b->part[i]) {
			return a->part[i] < b->part[i] ? -1 : 1;
		}
	}
	return a->n < b->n ? -1 : a->n > b->n ? 1 : 0;
}

struct spec {
	int latest;
	struct version prefix;
};

static int spec_match(const struct spec *sp, const struct version *v)
{
	if (sp->latest) {
		return 1;
	}
	if (sp->prefix.n > v->n) {
		return 0;
	}
	for (int i = 0; i < sp->prefix.n; i++) {
		if (sp->prefix.part[i] != v->part[i]) {
			return 0;
		}
	}
	return 1;
}

static int is_space(char c) { return c == ' ' || c == '\t' || c == '\n' || c == '\v' || c == '\f' || c == '\r'; }

enum parsed { NONE, ONE };

/* parse_word is version.ParseSpec for a CUDA spec: 12.4, cuda@12.4,
 * latest; any other word (cudnn@, system, a syntax error) falls back. */
static void parse_word(const char *w, size_t wl, struct spec *out)
{
	if (wl > 5 && strncasecmp(w, "cuda@", 5) == 0) {
		w += 5;
		wl -= 5;
	}
	memset(out, 0, sizeof *out);
	if (wl == 6 && strncasecmp(w, "latest", 6) == 0) {
		out->latest = 1;
	} else if (!parse_version(w, wl, 3, &out->prefix)) {
		FALLBACK();
	}
}

/* parse_specs reads the .cuda-version grammar (resolve.Parse) when the
 * text holds no spec or exactly one CUDA spec; any other text (two specs,
 * cuDNN, system, a setting such as libraries=off, a syntax error, bytes
 * past ASCII) falls back. */
static enum parsed parse_specs(const char *data, size_t len, struct spec *out)
{
	if (len >= 3 && memcmp(data, "\xef\xbb\xbf", 3) == 0) {
		data += 3;
		len -= 3;
	}
	int words = 0;
	int comment = 0;
	for (size_t i = 0; i < len;) {
		unsigned char c = (unsigned char)data[i];
		if (c == 0 || c >= 0x80) {
			FALLBACK();
		}
		if (c == '\n') {
			comment = 0;
			i++;
			continue;
		}
		if (comment || is_space((char)c)) {
			i++;
			continue;
		}
		if (c == '#') {
			comment = 1;
			i++;
			continue;
		}
		size_t start = i;
		while (i < len && !is_space(data[i]) && data[i] != '#') {
			if ((unsigned char)data[i] >= 0x80 || data[i] == 0) {
				FALLBACK();
			}
			i++;
		}
		if (++words > 1) {
			FALLBACK();
		}
		parse_word(data + start, i - start, out);
	}
	return words ? ONE : NONE;
}

/* is_library reports whether a .tool-versions tool is one of the libraries
 * resolve.ParseToolVersions reads beside cuda (version.Libraries): their
 * lines fall back. */
static int is_library(const char *w, size_t wl)
{
	static const char *const names[] = {"cudnn", "nccl", "cusparselt", "cutensor", "cudss", "nvshmem"};
	for (size_t i = 0; i < sizeof names / sizeof names[0]; i++) {
		if (wl == strlen(names[i]) && memcmp(w, names[i], wl) == 0) {
			return 1;
		}
	}
	return 0;
}

/* parse_tool_versions reads a .tool-versions file as
 * resolve.ParseToolVersions does, when its only line for cuda or a library
 * is one cuda line whose version is a CUDA spec; NONE when it has neither.
 * Anything else (a cudnn or nccl line, two cuda lines, bytes past ASCII) falls
 * back. */
static enum parsed parse_tool_versions(const char *data, size_t len, struct spec *out)
{
	if (len >= 3 && memcmp(data, "\xef\xbb\xbf", 3) == 0) {
		data += 3;
		len -= 3;
	}
	int found = 0;
	for (size_t i = 0; i < len;) {
		size_t end = i;
		while (end < len && data[end] != '\n') {
			unsigned char c = (unsigned char)data[end];
			if (c == 0 || c >= 0x80) {
				FALLBACK();
			}
			end++;
		}
		size_t stop = i;
		while (stop < end && data[stop] != '#') {
			stop++;
		}
		/* the first two fields of the line, up to its comment */
		const char *f[2] = {NULL, NULL};
		size_t fl[2] = {0, 0};
		int nf = 0;
		for (size_t j = i; j < stop && nf < 2;) {
			if (is_space(data[j])) {
				j++;
				continue;
			}
			size_t k = j;
			while (k < stop && !is_space(data[k])) {
				k++;
			}
			f[nf] = data + j;
			fl[nf] = k - j;
			nf++;
			j = k;
		}
		if (nf == 2 && is_library(f[0], fl[0])) {
			FALLBACK();
		}
		if (nf == 2 && fl[0] == 4 && memcmp(f[0], "cuda", 4) == 0) {
			if (found++) {
				FALLBACK();
			}
			parse_word(f[1], fl[1], out);
		}
		i = end + 1;
	}
	return found ? ONE : NONE;
}

/* read_pin reads a version file that is there (st from probe). */
static enum parsed read_pin(const char *path, const struct stat *st, struct spec *out)
{
	size_t len;
	char *data = read_small(path, st, 1024, &len);
	enum parsed p = parse_specs(data, len, out);
	free(data);
	return p;
}

/* ---- the store ---- */

struct cand {
	struct version v;
	char *name;
};

static int by_version_desc(const void *a, const void *b)
{
	return -compare(&((const struct cand *)a)->v, &((const struct cand *)b)->v);
}

static int is_dir(const char *p)
{
	struct stat st;
	return stat(p, &st) == 0 && S_ISDIR(st.st_mode);
}

/* ---- linked entries (store.Store.load for a link receipt) ---- */

/* json_ws skips the white space JSON allows between tokens. */
static const char *json_ws(const char *p)
{
	while (*p == ' ' || *p == '\t' || *p == '\n' || *p == '\r') {
		p++;
	}
	return p;
}

/* json_read_str reads the JSON string at p (its opening quote) into out,
 * as encoding/json decodes it, and returns what follows it; *plain says
 * it had no escape. Whatever encoding/json reads otherwise or refuses
 * falls back: a raw control character (a syntax error), text that is not
 * UTF-8 (which it turns into U+FFFD), a \u escape of a surrogate (it pairs
 * them), and, for simplicity, an escaped control character. */
static const char *json_read_str(const char *p, struct buf *out, int *plain)
{
	static const char esc[] = "\"\\/bfnrt", raw[] = "\"\\/\b\f\n\r\t";
	if (*p != '"') {
		FALLBACK();
	}
	p++;
	out->len = 0;
	b_str(out, "");
	*plain = 1;
	for (;;) {
		unsigned char c = (unsigned char)*p;
		if (c == '"') {
			return p + 1;
		}
		if (c < 0x20) {
			FALLBACK(); /* the end of the text too */
		}
		if (c >= 0x80) {
			size_t n = utf8_len((const unsigned char *)p);
			if (n == 0) {
				FALLBACK();
			}
			b_add(out, p, n);
			p += n;
			continue;
		}
		if (c != '\\') {
			b_add(out, p, 1);
			p++;
			continue;
		}
		*plain = 0;
		const char *e = p[1] ? strchr(esc, p[1]) : NULL;
		if (e) {
			b_add(out, raw + (e - esc), 1);
			p += 2;
			continue;
		}
		if (p[1] != 'u') {
			FALLBACK();
		}
		unsigned cp = 0;
		for (int i = 2; i < 6; i++) {
			char h = p[i];
			int d = h >= '0' && h <= '9' ? h - '0' : h >= 'a' && h <= 'f' ? h - 'a' + 10 : h >= 'A' && h <= 'F' ? h - 'A' + 10 : -1;
			if (d < 0) {
				FALLBACK();
			}
			cp = cp * 16 + (unsigned)d;
		}
		if (cp < 0x20 || cp == 0x7f || (cp >= 0xd800 && cp <= 0xdfff)) {
			FALLBACK();
		}
		char u[3];
		size_t n;
		if (cp < 0x80) {
			u[0] = (char)cp;
			n = 1;
		} else if (cp < 0x800) {
			u[0] = (char)(0xc0 | cp >> 6);
			u[1] = (char)(0x80 | (cp & 0x3f));
			n = 2;
		} else {
			u[0] = (char)(0xe0 | cp >> 12);
			u[1] = (char)(0x80 | ((cp >> 6) & 0x3f));
			u[2] = (char)(0x80 | (cp & 0x3f));
			n = 3;
		}
		b_add(out, u, n);
		p += 6;
	}
}

static int is_digit(char c) { return c >= '0' && c <= '9'; }

/* json_read_count reads a JSON number that an int64 field takes: 0, or up
 * to 18 digits without a leading zero; anything else (a sign, a fraction,
 * an exponent, a string) falls back. What follows it is checked by the
 * caller, which wants a ',' or '}' there. */
static const char *json_read_count(const char *p)
{
	if (*p == '0') {
		return p + 1;
	}
	size_t n = 0;
	while (is_digit(p[n])) {
		n++;
	}
	if (n == 0 || n > 18) {
		FALLBACK();
	}
	return p + n;
}

static int num(const char *s, size_t n)
{
	int x = 0;
	for (size_t i = 0; i < n; i++) {
		x = x * 10 + (s[i] - '0');
	}
	return x;
}

/* rfc3339_utc reports whether s is a time time.Time's UnmarshalJSON takes
 * (RFC 3339, with the ranges it checks), of the shape the store writes:
 * 2026-01-02T15:04:05Z, with at most nine digits of a second's fraction. */
static int rfc3339_utc(const char *s, size_t n)
{
	static const char shape[] = "dddd-dd-ddTdd:dd:dd";
	static const int days[] = {31, 28, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31};
	if (n < 20) {
		return 0;
	}
	for (size_t i = 0; i < 19; i++) {
		if (shape[i] == 'd' ? !is_digit(s[i]) : s[i] != shape[i]) {
			return 0;
		}
	}
	int year = num(s, 4), month = num(s + 5, 2), day = num(s + 8, 2);
	if (month < 1 || month > 12) {
		return 0;
	}
	int leap = year % 4 == 0 && (year % 100 != 0 || year % 400 == 0);
	if (day < 1 || day > days[month - 1] + (month == 2 && leap) || num(s + 11, 2) > 23 || num(s + 14, 2) > 59 ||
	    num(s + 17, 2) > 59) {
		return 0;
	}
	size_t i = 19;
	if (s[i] == '.') {
		size_t j = i + 1;
		while (j < n && is_digit(s[j])) {
			j++;
		}
		if (j == i + 1 || j - i - 1 > 9) {
			return 0;
		}
		i = j;
	}
	return i + 1 == n && s[i] == 'Z';
}

/* link_target reads the receipt of a linked entry as store.Store.load
 * does (encoding/json into store.Receipt; then the target must pass
 * dirs.CheckOnPath and be a directory, else the entry is broken) and
 * returns the target, where the toolkit's files are. It takes the
 * receipts link writes: an object of the fields kind, version, cuda_major,
 * source, target, installed_bytes and installed, each at most once and
 * spelt as the store spells them, source "link" without escapes. Anything
 * else falls back: another field (encoding/json matches names whatever
 * their case, and skips the unknown), a field twice, a value of another
 * type or null, a time it would refuse; a target with a ':' or a control
 * character, relative, not clean (link writes filepath.Abs), or that is
 * not a directory (cudaenv-shim reports the broken entry). A target that
 * is a symbolic link to a directory is what link suggests for a path with
 * a ':'; it is used as it is, as cudaenv-shim does. */
static char *link_target(const char *data)
{
	enum { KIND, VERSION, CUDA_MAJOR, SOURCE, TARGET, INSTALLED_BYTES, INSTALLED, FIELDS };
	static const char *const names[FIELDS] = {"kind",   "version",         "cuda_major", "source",
						  "target", "installed_bytes", "installed"};
	int seen[FIELDS] = {0};
	struct buf key = {0}, val = {0};
	char *target = NULL;
	const char *p = json_ws(data);
	if (*p != '{') {
		FALLBACK();
	}
	p = json_ws(p + 1);
	for (;;) {
		int plain;
		p = json_read_str(p, &key, &plain);
		int f = FIELDS;
		for (int i = 0; plain && i < FIELDS; i++) {
			if (strcmp(key.p, names[i]) == 0) {
				f = i;
			}
		}
		if (f == FIELDS || seen[f]++) {
			FALLBACK();
		}
		p = json_ws(p);
		if (*p != ':') {
			FALLBACK();
		}
		p = json_ws(p + 1);
		if (f == CUDA_MAJOR || f == INSTALLED_BYTES) {
			p = json_read_count(p);
		} else {
			p = json_read_str(p, &val, &plain);
			if ((f == SOURCE && (!plain || strcmp(val.p, "link") != 0)) ||
			    (f == INSTALLED && (!plain || !rfc3339_utc(val.p, val.len)))) {
				FALLBACK();
			}
			if (f == TARGET) {
				target = xstrdup(val.p);
			}
		}
		p = json_ws(p);
		if (*p == ',') {
			p = json_ws(p + 1);
			continue;
		}
		if (*p != '}') {
			FALLBACK();
		}
		break;
	}
	if (*json_ws(p + 1) || !seen[SOURCE] || !target) {
		FALLBACK();
	}
	free(key.p);
	free(val.p);
	/* dirs.CheckOnPath (the text is UTF-8: no byte past ASCII is a
	 * control character) */
	for (const unsigned char *s = (const unsigned char *)target; *s; s++) {
		if (*s < 0x20 || *s == 0x7f || *s == ':') {
			FALLBACK();
		}
	}
	char *c = clean(target);
	int same = strcmp(c, target) == 0;
	free(c);
	if (target[0] != '/' || !same || !is_dir(target)) {
		FALLBACK();
	}
	return target;
}

/* pick_toolkit is activate.ResolveFast for one CUDA spec: the newest
 * matching entry with a receipt cudaenv wrote for files it installed. */
static char *pick_toolkit(const char *cuda_dir, const struct spec *sp, struct version *picked)
{
	DIR *d = opendir(cuda_dir);
	if (!d) {
		FALLBACK();
	}
	struct cand cands[256];
	size_t n = 0;
	struct dirent *de;
	for (;;) {
		errno = 0;
		if ((de = readdir(d)) == NULL) {
			if (errno != 0) {
				FALLBACK(); /* cudaenv-shim lists nothing then */
			}
			break;
		}
		if (de->d_name[0] == '.') {
			continue; /* ".", "..", and names version.Parse refuses */
		}
		if (de->d_type != DT_DIR) {
			if (de->d_type != DT_UNKNOWN) {
				continue;
			}
			struct stat st;
			char *p = join(cuda_dir, de->d_name);
			int dir = lstat(p, &st) == 0 && S_ISDIR(st.st_mode);
			free(p);
			if (!dir) {
				continue;
			}
		}
		struct version v;
		if (!parse_version(de->d_name, strlen(de->d_name), 4, &v) || !spec_match(sp, &v)) {
			continue;
		}
		if (n == sizeof cands / sizeof cands[0]) {
			FALLBACK();
		}
		cands[n].v = v;
		cands[n].name = xstrdup(de->d_name);
		n++;
	}
	closedir(d);
	qsort(cands, n, sizeof cands[0], by_version_desc);
	for (size_t i = 0; i < n; i++) {
		if (i + 1 < n && compare(&cands[i].v, &cands[i + 1].v) == 0) {
			FALLBACK(); /* two spellings of one version: directory order decides */
		}
		char *dir = join(cuda_dir, cands[i].name);
		char *receipt = join(dir, "receipt.json");
		int fd = open(receipt, O_RDONLY | O_NONBLOCK | O_NOCTTY | O_CLOEXEC);
		if (fd < 0) {
			if (errno == ENOENT) {
				free(dir);
				free(receipt);
				continue;
			}
			FALLBACK();
		}
		struct stat st;
		/* cudaenv-shim reads receipts without a deadline: the store is
		 * cudaenv's own, on NFS on clusters. */
		if (fstat(fd, &st) != 0 || !S_ISREG(st.st_mode)) {
			FALLBACK();
		}
		/* read to the end, as os.ReadFile does, whatever the size said; a
		 * receipt is a few KiB, a larger one is handed on */
		static char data[256 << 10];
		size_t len = read_fd(fd, data, sizeof data - 1);
		close(fd);
		if (memchr(data, 0, len)) {
			FALLBACK();
		}
		free(receipt);
		*picked = cands[i].v;
		if (strstr(data, "\"link\"")) {
			/* a link to a toolkit elsewhere, whose files are used
			 * where they are */
			free(dir);
			return link_target(data);
		}
		/* activate.load (store.InstalledReceipt, which every reader
		 * shares): a receipt the store wrote whole, for files it
		 * installed. */
		size_t a = 0, z = len;
		while (a < z && is_space(data[a])) {
			a++;
		}
		while (z > a && is_space(data[z - 1])) {
			z--;
		}
		if (z - a < 2 || data[a] != '{' || data[z - 1] != '}') {
			FALLBACK();
		}
		return dir;
	}
	FALLBACK();
	return NULL;
}

/* ---- the environment cudaenv-shim builds (shims.applyFresh) ---- */

/* json_str appends s as the state has it: envdiff.EscapeString, then a
 * JSON string as encoding/json writes one (shims.appendJSONString). Text
 * that is not UTF-8 falls back, and so do U+2028 and U+2029, which JSON
 * escapes. */
static void json_str(struct buf *b, const char *s)
{
	static const char hex[] = "0123456789abcdef";
	b_str(b, "\"");
	for (const unsigned char *p = (const unsigned char *)s; *p; p++) {
		unsigned char c = *p;
		char e[8] = {0};
		if (c >= 0x80) {
			size_t n = utf8_len(p);
			if (n == 0 || (n == 3 && p[0] == 0xe2 && p[1] == 0x80 && (p[2] == 0xa8 || p[2] == 0xa9))) {
				FALLBACK();
			}
			b_add(b, (const char *)p, n);
			p += n - 1;
			continue;
		} else if (c == '%') {
			strcpy(e, "%25");
		} else if (c == '"' || c == '\\') {
			e[0] = '\\';
			e[1] = (char)c;
		} else if (c == '\n') {
			strcpy(e, "\\n");
		} else if (c == '\r') {
			strcpy(e, "\\r");
		} else if (c == '\t') {
			strcpy(e, "\\t");
		} else if (c == '\b') {
			strcpy(e, "\\b");
		} else if (c == '\f') {
			strcpy(e, "\\f");
		} else if (c < 0x20 || c == '<' || c == '>' || c == '&') {
			snprintf(e, sizeof e, "\\u00%c%c", hex[c >> 4], hex[c & 0xf]);
		} else {
			e[0] = (char)c;
		}
		b_str(b, e);
	}
	b_str(b, "\"");
}

static void json_scalar(struct buf *b, const char *name, const char *value, int first)
{
	if (!first) {
		b_str(b, ",");
	}
	b_str(b, "\"");
	b_str(b, name);
	b_str(b, "\":{\"value\":");
	json_str(b, value);
	const char *prev = env_get(name);
	if (prev) {
		b_str(b, ",\"prev\":");
		json_str(b, prev);
	}
	b_str(b, "}");
}

static void json_list(struct buf *b, const char *name, const char *added, int first)
{
	if (!first) {
		b_str(b, ",");
	}
	b_str(b, "\"");
	b_str(b, name);
	b_str(b, "\":{\"added\":[");
	json_str(b, added);
	b_str(b, "]");
	if (!env_get(name)) {
		b_str(b, ",\"created\":true");
	}
	b_str(b, "}");
}

static char *prepended(const char *dir, const char *old)
{
	struct buf b = {0};
	b_str(&b, dir);
	if (old && *old) {
		b_str(&b, ":");
		b_str(&b, old);
	}
	return b.p;
}

/* without_dir drops every PATH entry that names dir (shims.withoutDir). */
static char *without_dir(const char *path, const char *dir)
{
	struct buf b = {0};
	b_str(&b, "");
	int first = 1;
	const char *s = path;
	for (;;) {
		const char *e = strchr(s, ':');
		size_t n = e ? (size_t)(e - s) : strlen(s);
		int drop = 0;
		if (n > 0) {
			char *entry = strndup(s, n);
			if (!entry) {
				FALLBACK();
			}
			char *c = clean(entry);
			drop = strcmp(c, dir) == 0;
			free(c);
			free(entry);
		}
		if (!drop) {
			if (!first) {
				b_str(&b, ":");
			}
			b_add(&b, s, n);
			first = 0;
		}
		if (!e) {
			break;
		}
		s = e + 1;
	}
	return b.p;
}

static int is_known(const char *name)
{
	for (size_t i = 0; known_exact[i]; i++) {
		if (strcmp(name, known_exact[i]) == 0) {
			return 1;
		}
	}
	for (size_t i = 0; known_prefix[i]; i++) {
		if (strncmp(name, known_prefix[i], strlen(known_prefix[i])) == 0) {
			return 1;
		}
	}
	return 0;
}

static char *kv(const char *k, const char *v)
{
	struct buf b = {0};
	b_str(&b, k);
	b_str(&b, "=");
	b_str(&b, v);
	return b.p;
}

int main(int argc, char **argv, char **envp)
{
	g_argv = argv;
	g_envp = envp;
	if (argc < 1 || !argv[0]) {
		FALLBACK();
	}
	const char *name = strrchr(argv[0], '/');
	name = name ? name + 1 : argv[0];
	if (!is_known(name)) {
		FALLBACK();
	}
	check_environ();
	if (env_get("__CUDAENV_SHIM") || env_get("__CUDAENV_STATE")) {
		FALLBACK(); /* a shim inside a shim, a prompt hook, cudaenv exec */
	}
	/* A cudaenv-shim newer than this binary was installed without it (go
	 * install after make install, which builds this one last): this copy
	 * may not decide as that one does, so it decides nothing. */
	const char *why;
	int err;
	const char *gs = go_shim(&why, &err);
	struct stat own, go;
	int have_own = stat("/proc/self/exe", &own) == 0;
	int have_go = gs && stat(gs, &go) == 0;
	if (have_own && have_go &&
	    (go.st_mtim.tv_sec > own.st_mtim.tv_sec ||
	     (go.st_mtim.tv_sec == own.st_mtim.tv_sec && go.st_mtim.tv_nsec > own.st_mtim.tv_nsec))) {
		FALLBACK();
	}

	/* folders */
	const char *home = env_get("HOME");
	g_home = xstrdup(home && *home ? home : "/");
	char *def_data = join(g_home, ".local/share");
	char *def_config = join(g_home, ".config");
	char *def_cache = join(g_home, ".cache");
	char *data = pick("XDG_DATA_HOME", def_data);
	char *config = pick("XDG_CONFIG_HOME", def_config);
	char *cache = pick("XDG_CACHE_HOME", def_cache);
	char *root = store_dir("CUDAENV_ROOT", data, 1);
	char *config_dir = store_dir("CUDAENV_CONFIG_DIR", config, 0);
	free(store_dir("CUDAENV_CACHE_DIR", cache, 0));
	const char *sys = env_get("CUDAENV_SYSTEM_ROOT");
	struct stat st;
	char *settings = join(config_dir, "config");
	if ((sys && *sys) || stat(settings, &st) == 0 || (errno != ENOENT && errno != ENOTDIR)) {
		FALLBACK(); /* a system store, or settings to read */
	}

	/* os.Getwd, which cudaenv-shim needs whatever selects: $PWD when it
	 * names ".", else the kernel's answer */
	char *cwd = NULL;
	struct stat dot, pwd_st;
	if (stat(".", &dot) != 0) {
		FALLBACK();
	}
	const char *pwd = env_get("PWD");
	if (pwd && pwd[0] == '/' && stat(pwd, &pwd_st) == 0 && pwd_st.st_dev == dot.st_dev &&
	    pwd_st.st_ino == dot.st_ino) {
		cwd = clean(pwd);
	} else {
		char buf[PATH_MAX];
		if (!getcwd(buf, sizeof buf) || buf[0] != '/') {
			FALLBACK();
		}
		cwd = clean(buf);
	}

	/* the selection (resolve.Find) */
	struct spec sp;
	int selected = 0;
	const char *ev = env_get("CUDAENV_VERSION");
	if (ev) {
		int blank = 1;
		for (const char *p = ev; *p; p++) {
			if ((unsigned char)*p >= 0x80) {
				FALLBACK();
			}
			if (!is_space(*p)) {
				blank = 0;
			}
		}
		if (!blank) {
			if (parse_specs(ev, strlen(ev), &sp) != ONE) {
				FALLBACK();
			}
			selected = 1;
		}
	}
	if (!selected) {
		for (char *d = cwd;;) {
			char *pin = join(d, ".cuda-version");
			if (probe(pin, &st) == PRESENT && read_pin(pin, &st, &sp) == ONE) {
				char *lock = join(d, ".cuda-version.lock");
				if (probe(lock, &st) == PRESENT) {
					FALLBACK();
				}
				selected = 1;
				break;
			}
			char *tv = join(d, ".tool-versions");
			if (probe(tv, &st) == PRESENT) {
				size_t len;
				char *data = read_small(tv, &st, 64 << 10, &len);
				enum parsed p = parse_tool_versions(data, len, &sp);
				free(data);
				if (p == ONE) {
					selected = 1;
					break;
				}
			}
			free(pin);
			free(tv);
			if (strcmp(d, "/") == 0) {
				break;
			}
			char *slash = strrchr(d, '/');
			if (slash == d) {
				d[1] = 0;
			} else {
				*slash = 0;
			}
		}
		if (!selected) {
			char *global = join(config_dir, "version");
			if (probe(global, &st) != PRESENT || read_pin(global, &st, &sp) != ONE) {
				FALLBACK(); /* nothing selected: cudaenv-shim steps aside or says so */
			}
		}
	}

	/* the toolkit and the command (activate.ResolveFast, activate.Which) */
	char *cuda_dir = join(root, "cuda");
	struct version v;
	char *tk = pick_toolkit(cuda_dir, &sp, &v);
	char *bin = join(tk, "bin");
	char *cmd = join(bin, name);
	struct stat cmd_st, other;
	if (stat(cmd, &cmd_st) != 0 || S_ISDIR(cmd_st.st_mode) || !(cmd_st.st_mode & 0111)) {
		FALLBACK(); /* cudaenv-shim says where the command is */
	}
	char *shims = join(root, "shims");
	char *shim = join(shims, name);
#define SAME(a, b) ((a).st_dev == (b).st_dev && (a).st_ino == (b).st_ino)
	if ((have_own && SAME(own, cmd_st)) || (have_go && SAME(go, cmd_st)) ||
	    (stat(shim, &other) == 0 && SAME(other, cmd_st))) {
		FALLBACK(); /* the toolkit's command is a shim: cudaenv-shim refuses it */
	}

	/* the environment (activate.Want, shims.applyFresh) */
	char *lib = join(tk, "lib64");
	if (!is_dir(lib)) {
		free(lib);
		lib = join(tk, "lib");
	}
	char *nvcc = join(bin, "nvcc");
	int has_nvcc = strcmp(name, "nvcc") == 0 || (stat(nvcc, &st) == 0 && !S_ISDIR(st.st_mode));
	char active[64];
	size_t al = 0;
	for (int i = 0; i < v.n; i++) {
		al += (size_t)snprintf(active + al, sizeof active - al, i ? ".%ld" : "%ld", v.part[i]);
	}

	struct buf state = {0};
	b_str(&state, "{\"v\":2,\"lists\":{");
	json_list(&state, "LD_LIBRARY_PATH", lib, 1);
	/* bin/NAME is there, so bin is a folder: PATH gains it */
	json_list(&state, "PATH", bin, 0);
	b_str(&state, "},\"scalars\":{");
	int first = 1;
	if (has_nvcc) {
		json_scalar(&state, "CUDACXX", nvcc, first);
		first = 0;
	}
	json_scalar(&state, "CUDAToolkit_ROOT", tk, first);
	json_scalar(&state, "CUDA_HOME", tk, 0);
	json_scalar(&state, "CUDA_PATH", tk, 0);
	b_str(&state, "},\"active\":\"");
	b_str(&state, active);
	b_str(&state, "\"}");

	const char *old_path = env_get("PATH");
	char *path = prepended(bin, old_path);
	path = without_dir(path, shims);
	char mark[PATH_MAX + 64];
	snprintf(mark, sizeof mark, "%ld:1:%s", (long)getpid(), cmd);

	static const char *const replaced[] = {"PATH", "LD_LIBRARY_PATH", "CUDACXX", "CUDA_PATH", "CUDA_HOME",
					       "CUDAToolkit_ROOT", NULL};
	size_t n = 0;
	while (envp[n]) {
		n++;
	}
	char **env = calloc(n + 16, sizeof *env);
	if (!env) {
		FALLBACK();
	}
	size_t w = 0;
	for (size_t i = 0; i < n; i++) {
		int keep = 1;
		for (int r = 0; replaced[r]; r++) {
			size_t k = strlen(replaced[r]);
			if (strncmp(envp[i], replaced[r], k) == 0 && envp[i][k] == '=' &&
			    (has_nvcc || strcmp(replaced[r], "CUDACXX") != 0)) {
				keep = 0;
			}
		}
		if (keep) {
			env[w++] = envp[i];
		}
	}
	env[w++] = kv("PATH", path);
	env[w++] = kv("LD_LIBRARY_PATH", prepended(lib, env_get("LD_LIBRARY_PATH")));
	if (has_nvcc) {
		env[w++] = kv("CUDACXX", nvcc);
	}
	env[w++] = kv("CUDA_PATH", tk);
	env[w++] = kv("CUDA_HOME", tk);
	env[w++] = kv("CUDAToolkit_ROOT", tk);
	env[w++] = kv("__CUDAENV_STATE", state.p);
	env[w++] = kv("__CUDAENV_SHIM", mark);
	env[w] = NULL;

	char **args = calloc((size_t)argc + 1, sizeof *args);
	if (!args) {
		FALLBACK();
	}
	args[0] = cmd;
	for (int i = 1; i < argc; i++) {
		args[i] = argv[i];
	}
	execve(cmd, args, env);
	FALLBACK(); /* cudaenv-shim reports why it cannot start */
	return 126;
}
